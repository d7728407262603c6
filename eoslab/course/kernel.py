"""An IPython extension: after a kernel restart or with the cluster down, a cell fails with one sentence.

Loaded into every kernel of the kit's environment by the config file :func:`install` writes
(``<venv>/etc/ipython/ipython_kernel_config.py``, which IPython reads for each kernel of that
environment, JupyterLab's and nbval's alike). What a learner then sees when a cell fails:

- the kernel died (or was restarted) and the cell uses what the ``# Setup`` cell made: one
  sentence saying the kernel is new and to run the Setup cell, instead of ``NameError``;
- the cluster went down (``eoslab down``, a laptop that slept, an out-of-memory kill): one sentence
  saying so and what to run, instead of a timeout's traceback;
- any other error the kit raises on purpose (:class:`eoslab.EoslabError`): its sentence, without the
  Python traceback above it; an error about files (``DataError``, ``GradingError``: runs, hand-ins,
  notebooks) says its own sentence even with the cluster down, since the cluster is not its cause.

Everything else keeps IPython's usual traceback. Nothing here touches the learner's notebook
or topics: a restart loses the kernel's variables only (JupyterLab keeps the cells), and
``eoslab up``/``heal`` keep every topic.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

SETUP_NAMES = ("cluster", "proxy")
"""What the Setup cells define: a NameError for one of these means the Setup cell has not run in this kernel."""

MARK = "# Written by `eoslab setup` (eoslab.course.kernel)"
CONFIG = f"""{MARK}: each kernel of this environment explains a restarted kernel or a
# stopped cluster in one sentence instead of a traceback. Delete this file to turn that off.
c.InteractiveShellApp.extensions.append("eoslab.course.kernel")
"""


def _cluster_errors() -> tuple[type[BaseException], ...]:
    """Exceptions that can mean "the cluster is not there" (only modules already imported are looked at)."""
    found: list[type[BaseException]] = [ConnectionError, TimeoutError]
    if (ck := sys.modules.get("confluent_kafka")) is not None:
        found.append(ck.KafkaException)
    if (errors := sys.modules.get("eoslab.errors")) is not None:
        found.append(errors.EoslabError)
    return tuple(found)


def _brokers_running(user_ns: dict[str, Any]) -> int | None:
    """How many brokers run (the learner's ``cluster`` if the Setup cell made one); None if unknown."""
    try:
        from eoslab.cluster import Cluster

        cluster = user_ns.get("cluster")
        if not isinstance(cluster, Cluster):
            cluster = Cluster()
        return sum(1 for s in cluster.status() if s.role == "broker" and s.state == "running")
    except Exception:  # noqa: BLE001 - no answer means: keep IPython's own traceback
        return None


def _undefined_name(value: BaseException) -> str | None:
    name = getattr(value, "name", None) or str(value).split("'")[1:2]
    if isinstance(name, list):
        return name[0] if name else None
    return name  # type: ignore[no-any-return]


def _explain_name_error(value: BaseException, user_ns: dict[str, Any]) -> str | None:
    name = _undefined_name(value)
    if name and not any(n in user_ns for n in SETUP_NAMES):
        return (
            f"`{name}` is not defined because this kernel is new (it restarted after dying, or the # Setup "
            "cell has not run yet): run the # Setup cell at the top, then this cell again — your notebook "
            "is kept as it is."
        )
    return None


def _explain_cluster_error(
    etype: type[BaseException], value: BaseException, user_ns: dict[str, Any], errors: Any
) -> str | None:
    if _brokers_running(user_ns) == 0:
        return (
            f"The cluster is down (no broker runs, so this cell got {etype.__name__}): run `eoslab up` in a "
            "terminal (or the # Setup cell), then this cell again — your notebook and your topics are kept."
        )
    if errors is not None and issubclass(etype, errors.EoslabError):
        return f"{etype.__name__}: {value}"
    return None


def explain(etype: type[BaseException], value: BaseException, user_ns: dict[str, Any]) -> str | None:
    """The one sentence to show instead of a traceback, or None to show the traceback."""
    if issubclass(etype, NameError):
        return _explain_name_error(value, user_ns)
    errors = sys.modules.get("eoslab.errors")
    if errors is not None and issubclass(etype, (errors.DataError, errors.GradingError)):
        # About files (runs, hand-ins, notebooks), never the cluster: the instructor's class notebook runs with no
        # cluster up, and "the cluster is down" would send them to the wrong fix.
        return f"{etype.__name__}: {value}"
    if issubclass(etype, _cluster_errors()):
        return _explain_cluster_error(etype, value, user_ns, errors)
    return None


def _handler(shell: Any, etype: type[BaseException], value: BaseException, tb: Any, tb_offset: Any = None) -> Any:
    sentence = explain(etype, value, shell.user_ns)
    if sentence is None:
        shell.showtraceback((etype, value, tb), tb_offset=tb_offset)
        return None
    shell._showtraceback(etype, value, [sentence])  # IPython's hook for how a traceback is shown
    return [sentence]


def load_ipython_extension(ipython: Any) -> None:
    ipython.set_custom_exc((Exception,), _handler)


def unload_ipython_extension(ipython: Any) -> None:
    ipython.set_custom_exc((), None)


def config_path(prefix: str | None = None) -> Path:
    return Path(prefix or sys.prefix) / "etc" / "ipython" / "ipython_kernel_config.py"


def install(prefix: str | None = None) -> Path | None:
    """Write the kernel config into this virtual environment (never a system Python's). None: not a venv."""
    if prefix is None and sys.prefix == sys.base_prefix:
        return None
    path = config_path(prefix)
    if path.is_file() and not path.read_text().startswith(MARK):
        return None  # someone's own config: leave it alone
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.is_file() or path.read_text() != CONFIG:
        path.write_text(CONFIG)
    return path
