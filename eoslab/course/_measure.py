"""``eoslab course time --measure``: run notebooks top to bottom and keep each code cell's run time.

The times are what a learner waits for, so they come from a real run of each notebook, in a fresh
kernel of this Python, from the notebook's own folder (as nbval runs it in CI). nbclient records when
the kernel started and finished each cell (``record_timing``: ``metadata.execution``'s
``iopub.execute_input`` and ``shell.execute_reply``, the kernel's clock); the wall clock around the
cell stands in only where a reply lacks them. Each notebook's entry in the times file is replaced as
soon as that notebook ends, so an error, a timeout or Ctrl-C keeps everything measured before it.
"""

from __future__ import annotations

import json
import math
import os
import platform
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from eoslab.course._reading import (
    cell_id,
    code_cells,
    key,
    lab_of,
    module_notebooks,
    module_number,
    read_notebook,
    runs,
)
from eoslab.course._timing import TIMES_FILE, NotebookTimes, read_times

NOTEBOOK_LIMIT = 1800.0
"""Seconds for a whole notebook. A module runs in minutes on 2 cores; half an hour means something hangs
without any one cell reaching its own limit (``eoslab.labcheck.CELL_TIMEOUT``, nbval's 120 s in `make test`)."""

_THIS_PYTHON = "eoslab-this-python"

KERNEL_LOG = Path(tempfile.gettempdir()) / "eoslab-course-time.log"
"""Where the kernels' own stdout and stderr go (librdkafka's and the JVMs' lines, the kernel's warnings):
not the terminal, whose progress bar they would bury; the sentence of a dead kernel points here."""


@dataclass(frozen=True)
class Measured:
    """One notebook's run: its name in the times file and what was kept of it."""

    notebook: str
    times: NotebookTimes


def machine_facts(backend: str | None = None) -> dict[str, Any]:
    """What the figures depend on: cores, memory, OS, Python, the kit, the backend, and when."""
    import psutil

    from eoslab._version import __version__

    facts: dict[str, Any] = {
        "cores": os.cpu_count() or 0,
        "memory_gib": round(psutil.virtual_memory().total / 2**30, 1),
        "os": f"{platform.system()} {platform.release()}",
        "machine": platform.machine(),
        "python": platform.python_version(),
        "kit": __version__,
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    if backend:
        facts["backend"] = backend
    return facts


def measure_times(
    root: Path,
    notebooks: list[Path],
    *,
    times_file: Path | None = None,
    cell_timeout: int | None = None,
    notebook_limit: float = NOTEBOOK_LIMIT,
    env: Mapping[str, str] | None = None,
    backend: str | None = None,
) -> list[Measured]:
    """Run each notebook and write its cells' seconds into the times file, one notebook at a time.

    An error in a notebook ends that notebook (its entry says which cell, in one sentence) and the next
    one runs. Ctrl-C writes what the current notebook measured so far, then goes on up as KeyboardInterrupt.
    ``cell_timeout`` defaults to the grader's per-cell limit.
    """
    from eoslab._progress import advance, progress_bar
    from eoslab.labcheck import CELL_TIMEOUT

    cell_timeout = cell_timeout or CELL_TIMEOUT
    path = times_file or root / TIMES_FILE
    read_times(path)  # refuse a broken file before an hour of runs is written over it
    counts = {nb: len(code_cells(read_notebook(nb))) for nb in notebooks}
    kernel_env = {**os.environ, **(env or {})}
    done: list[Measured] = []
    with progress_bar("measuring", total=sum(counts.values()), unit="cell", delay=0) as bar:
        for nb in notebooks:
            name = key(root, nb)
            bar.set_description(name)
            cells: dict[str, float] = {}
            started = time.monotonic()
            try:
                error = _run(nb, name, cells, lambda: advance(bar, 1), cell_timeout, notebook_limit, kernel_env)
            except KeyboardInterrupt:
                if cells:  # before its first cell ended, an earlier measurement of this notebook is worth more
                    _save(path, name, _entry(cells, started, backend, f"{name}: interrupted after {len(cells)} cells"))
                raise
            except Exception as exc:  # noqa: BLE001 - one notebook that cannot run must not stop the others
                error = f"{name}: could not run ({type(exc).__name__}: {_first_line(exc)})"
            entry = _entry(cells, started, backend, error)
            _save(path, name, entry)
            done.append(Measured(name, NotebookTimes(entry["cells"], entry["total_s"], entry["measured_on"], error)))
            advance(bar, counts[nb] - len(cells))  # the cells an error left unrun
    return done


def to_measure(root: Path, notebooks: list[Path] | None = None, *, labs: bool = False) -> list[Path]:
    """The notebooks ``--measure`` runs: those given (else every module notebook), then with ``labs`` each
    one's lab (its solution: a lab's own TODO cells would stop at the first one)."""
    chosen = list(notebooks) if notebooks else module_notebooks(root)
    if labs:
        found = (lab_of(root, module_number(nb)) for nb in chosen)
        chosen += [lab for lab in found if lab is not None and lab not in chosen]
    return chosen


def _entry(cells: dict[str, float], started: float, backend: str | None, error: str | None) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "cells": {c: round(s, 3) for c, s in cells.items()},
        "total_s": round(sum(cells.values()), 3),
        "wall_s": round(time.monotonic() - started, 3),  # with the kernel's start and stop
        "measured_on": machine_facts(backend),
    }
    if error:
        entry["error"] = error
    return entry


def _save(path: Path, name: str, entry: dict[str, Any]) -> None:
    """Replace one notebook's entry, keep the others; written whole then renamed (a crash leaves the old file)."""
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    data[name] = entry
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps({n: data[n] for n in sorted(data)}, indent=1, ensure_ascii=False) + "\n", "utf-8")
    tmp.replace(path)


def _run(
    path: Path,
    name: str,
    cells: dict[str, float],
    on_cell: Callable[[], None],
    cell_timeout: int,
    notebook_limit: float,
    env: Mapping[str, str],
) -> str | None:
    """Run one notebook in a fresh kernel, filling ``cells``; the sentence of what stopped it, or None."""
    import nbformat
    from jupyter_client.manager import AsyncKernelManager
    from nbclient import NotebookClient

    from eoslab._timeouts import cell_guard

    nb = nbformat.read(path, as_version=4)  # type: ignore[no-untyped-call]
    km = AsyncKernelManager(kernel_name=_THIS_PYTHON, kernel_spec_manager=_this_python_specs())
    client = NotebookClient(nb, km=km, timeout=cell_timeout, record_timing=True)
    with (
        KERNEL_LOG.open("a", encoding="utf-8") as log,
        client.setup_kernel(cwd=str(path.parent), env=dict(env), stdout=log, stderr=log, cleanup_kc=True),
    ):
        deadline = time.monotonic() + notebook_limit  # from a started kernel: the limit is the cells'
        for index, cell in enumerate(nb.cells):
            if not runs(cell):
                continue
            left = deadline - time.monotonic()
            where = f"{name}: cell {cell_id(cell, index)} (#{index + 1})"
            if left <= 0:
                return f"{where} was not run: the notebook's limit of {notebook_limit:g} s was spent."
            guard = cell_guard(name, cell.get("id"), cell_timeout)  # a cell measured at minutes gets more
            client.timeout = max(1, math.ceil(min(guard, left)))
            wall = time.monotonic()
            if (error := _execute(client, cell, index, where, limited=client.timeout < guard)) is not None:
                return error
            cells[cell_id(cell, index)] = _seconds(cell.metadata.get("execution", {}), time.monotonic() - wall)
            on_cell()
    return None


def _execute(client: Any, cell: Any, index: int, where: str, *, limited: bool) -> str | None:
    """Run one cell; the sentence of its error, or None."""
    from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

    try:
        client.execute_cell(cell, index)
    except CellTimeoutError:
        why = "the rest of the notebook's limit" if limited else f"its limit of {client.timeout} s"
        return f"{where} did not finish within {why}."
    except CellExecutionError as exc:
        return f"{where} raised {exc.ename}: {_first_line(exc.evalue)}"
    except DeadKernelError:
        return f"{where}: the kernel died (its last words are in {KERNEL_LOG})."
    return None


def _seconds(execution: Mapping[str, Any], wall: float) -> float:
    """The kernel's own start and end of the cell, else the wall clock around it."""
    try:
        start = _instant(execution["iopub.execute_input"])
        end = _instant(execution["shell.execute_reply"])
    except (KeyError, TypeError, ValueError):
        return wall
    return max(0.0, (end - start).total_seconds())


def _instant(stamp: Any) -> datetime:
    """An ISO 8601 time of a Jupyter message (Python 3.10's ``fromisoformat`` does not read a final 'Z')."""
    text = str(stamp)
    return datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith("Z") else text)


def _first_line(value: object) -> str:
    lines = str(value).strip().splitlines()
    return lines[0] if lines else "(no message)"


def _this_python_specs() -> Any:
    """A kernel spec manager whose one extra kernel is ipykernel on THIS Python (nbval's
    ``--nbval-current-env``): the notebook's own kernelspec ``python3`` may name another Python,
    without the kit."""
    from ipykernel.kernelspec import RESOURCES, get_kernel_dict
    from jupyter_client.kernelspec import KernelSpec, KernelSpecManager

    class ThisPython(KernelSpecManager):
        def get_kernel_spec(self, kernel_name: str) -> KernelSpec:
            if kernel_name == _THIS_PYTHON:
                return KernelSpec(resource_dir=RESOURCES, **get_kernel_dict())
            return super().get_kernel_spec(kernel_name)

    return ThisPython()
