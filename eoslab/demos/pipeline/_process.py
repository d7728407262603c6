"""Module 05's pipeline: a processor the notebook starts as its own OS process, kills, pauses, restarts.

:class:`PipelineProcess` runs :mod:`eoslab.demos.pipeline.child` (``python -m``) in ``eos`` or
``alo`` mode; every incarnation writes its own history file into ``history_dir``, and the checker
judges them together::

    p = PipelineProcess(cluster, "eos", input="in", output="out", history_dir=tmp).start()
    p.kill()                                  # SIGKILL: a crash, wherever it was
    p.restart().wait_caught_up()              # a new incarnation: fences the last (eos), reprocesses
    p.stop()
    check(p.histories(), read_both(cluster, "out"), inputs=read_final(cluster, "in", "read_committed"))

The child's pid file goes to ``eoslab._paths.clients_dir()`` and its command line holds
:data:`CHILD_MODULE`, so :func:`end_pipelines` ends one a dead notebook left behind, by pid.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

import psutil
from confluent_kafka import Consumer, TopicPartition

from eoslab import _procs
from eoslab._librdkafka import KIT
from eoslab._paths import clients_dir
from eoslab._timeouts import CLIENT_CALL, NODE_STOP, PROBE
from eoslab._wait import wait_until
from eoslab.demos.pipeline._parts import GROUP_PROTOCOLS, MODES, PipelineError, parse_die_at

if TYPE_CHECKING:
    from eoslab.cluster import Cluster

CHILD_MODULE = "eoslab.demos.pipeline.child"
"""The processor's command line holds this (``python -m ...``): :func:`end_pipelines` signals nothing else."""

CATCH_UP = 90.0
"""A restarted processor is assigned its partitions once the killed one's session expires
(session.timeout.ms = 6 s), then works through a few hundred records in batches of 20 in seconds;
90 s leaves room for a machine shared by several clusters."""

EXIT_WAIT = 30.0
"""A processor told to die at a point gets there after its first batches: seconds once it is assigned."""


def end_pipelines() -> list[int]:
    """SIGKILL every pipeline processor a demo started (a paused one too), even from a dead notebook."""
    return _procs.end_pid_files(clients_dir(), expect=CHILD_MODULE, pattern="pipeline-*.pid")


class PipelineProcess:
    """One processor, across its incarnations: ``start``, ``kill``, ``pause``/``resume``, ``restart``, ``stop``.

    ``name`` names the processor (its group and transactional.id derive from it unless given);
    incarnation ``k`` writes ``history_dir / f"{name}-{k}.jsonl"`` and calls itself
    ``f"{name}-{k}-{pid}"`` in it. ``die_at`` (``"after-produce:3"``: SIGKILL there) and ``stall_at``
    (the same points: sleep past the transaction timeout there) apply to the NEXT start only.
    ``message_timeout_ms`` (eos): how long librdkafka keeps trying to deliver a record before it fails
    it (and the transaction becomes abortable); by default the transaction timeout.
    ``proxied``: its clients reach the brokers through the fault proxy, as ``client.id`` =
    :attr:`client_id`, so a proxy rule can hit this processor's requests and no one else's.
    ``loop`` (``"path/to/file.py:function"`` or ``"module:function"``, eos only) runs that function
    as the processor's loop instead of the built-in batches (:class:`eoslab.demos.pipeline.Pipe`).
    ``group_protocol``: ``"classic"`` (librdkafka's default) or ``"consumer"`` (KIP-848), for its consumer.
    """

    def __init__(
        self,
        cluster: Cluster,
        mode: str,
        *,
        input: str,
        output: str,
        history_dir: str | Path,
        name: str | None = None,
        group: str | None = None,
        transactional_id: str | None = None,
        transaction_timeout_ms: int | None = None,
        proxied: bool = False,
        message_timeout_ms: int | None = None,
        loop: str | None = None,
        group_protocol: str = "classic",
    ) -> None:
        if mode not in MODES:
            raise PipelineError(f"mode={mode!r}: use one of {MODES}.")
        if group_protocol not in GROUP_PROTOCOLS:
            raise PipelineError(f"group_protocol={group_protocol!r}: use one of {GROUP_PROTOCOLS}.")
        if loop is not None and mode != "eos":
            raise PipelineError(f"loop={loop!r} drives a transactional producer: use it with mode='eos'.")
        self.cluster, self.mode, self.input, self.output = cluster, mode, input, output
        self.name = name or f"{mode}-{uuid.uuid4().hex[:6]}"
        self.group = group or f"pipeline-{self.name}"
        self.transactional_id = transactional_id or f"pipeline-{self.name}"
        self.history_dir = Path(history_dir)
        self.transaction_timeout_ms = transaction_timeout_ms
        self.proxied = proxied
        self.message_timeout_ms = message_timeout_ms
        self.loop = loop
        self.group_protocol = group_protocol
        self.incarnation = 0
        self.proc: subprocess.Popen[bytes] | None = None
        self.paused = False

    # -- lifecycle ------------------------------------------------------------------------------
    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    @property
    def client_id(self) -> str:
        """The ``client.id`` of every incarnation's consumer and producer (what proxy rules match)."""
        return f"pipeline-{self.name}"

    def _pid_file(self, pid: int) -> Path:
        return clients_dir() / f"pipeline-{self.name}-{pid}.pid"

    def history(self, incarnation: int | None = None) -> Path:
        """The history file of ``incarnation`` (the current one by default)."""
        return self.history_dir / f"{self.name}-{incarnation or self.incarnation}.jsonl"

    def histories(self) -> list[Path]:
        """Every incarnation's history file that exists, oldest first."""
        return [p for k in range(1, self.incarnation + 1) if (p := self.history(k)).exists()]

    def start(
        self, die_at: str | None = None, stall_at: str | None = None, *, pause_at: str | None = None
    ) -> PipelineProcess:
        """Start a new incarnation (an error if one runs: kill or stop it first). ``pause_at`` (the
        points of ``die_at``) makes it SIGSTOP itself there: :meth:`wait_paused`, then :meth:`resume`."""
        if self.running:
            raise PipelineError(f"The processor {self.name!r} runs (pid {self.pid}): kill() or stop() it first.")
        parse_die_at(die_at), parse_die_at(stall_at), parse_die_at(pause_at)  # a bad spec fails here
        self.incarnation += 1
        self.history_dir.mkdir(parents=True, exist_ok=True)
        cmd = [
            sys.executable, "-m", CHILD_MODULE, "--mode", self.mode,
            "--bootstrap", self.cluster.bootstrap_servers(proxied=self.proxied), "--client-id", self.client_id,
            "--input", self.input, "--output", self.output,
            "--group", self.group, "--history", str(self.history()), "--process", f"{self.name}-{self.incarnation}",
        ]  # fmt: skip
        if self.mode == "eos":
            cmd += ["--transactional-id", self.transactional_id]
        if die_at:
            cmd += ["--die-at", die_at]
        if stall_at:
            cmd += ["--stall-at", stall_at]
        if pause_at:
            cmd += ["--pause-at", pause_at]
        if self.transaction_timeout_ms is not None:
            cmd += ["--transaction-timeout-ms", str(self.transaction_timeout_ms)]
        if self.message_timeout_ms is not None:
            cmd += ["--message-timeout-ms", str(self.message_timeout_ms)]
        if self.loop is not None:
            cmd += ["--loop", self.loop]
        if self.group_protocol != "classic":
            cmd += ["--group-protocol", self.group_protocol]
        # stderr to a file, not a pipe: librdkafka logs there, and a pipe nobody reads stalls a long run
        with self.stderr_file().open("wb") as err:
            self.proc = subprocess.Popen(cmd, start_new_session=True, stdout=subprocess.DEVNULL, stderr=err)
        _procs.write_pid(self._pid_file(self.proc.pid), self.proc.pid)
        _procs.adopt(self.proc.pid)
        self.paused = False
        return self

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    @property
    def returncode(self) -> int | None:
        """The last incarnation's exit code (``-9``: SIGKILL), ``None`` while it runs."""
        return None if self.proc is None else self.proc.poll()

    @property
    def state(self) -> str | None:
        """The current incarnation's process state as ``ps`` says it (``"stopped"`` when paused), ``None``
        once it is gone."""
        live = self._live()
        try:
            return None if live is None else str(live.status())
        except psutil.Error:
            return None

    def _live(self) -> psutil.Process | None:
        """The current incarnation while it runs. It is this object's own child, not yet reaped, so its pid cannot
        belong to another process: no identity check by command line, which can fail on a loaded machine for a live
        processor, so that kill() would send nothing and the processor would outlive its cell."""
        return None if self.proc is None or self.proc.poll() is not None else _procs.process(self.proc.pid)

    def _reap(self) -> None:
        if self.proc is not None:
            self.proc.wait(timeout=_procs.KILL_WAIT)
            self._pid_file(self.proc.pid).unlink(missing_ok=True)
            _procs.release(self.proc.pid)

    def kill(self) -> PipelineProcess:
        """SIGKILL: a crash (no commit, no abort, no leave-group), paused or not."""
        live = self._live()
        if live is not None:
            _procs.kill([live])
        self._reap()
        self.paused = False
        return self

    def stop(self, timeout: float = NODE_STOP) -> int | None:
        """SIGTERM (the processor finishes its batch and leaves its group), SIGKILL after ``timeout``; the exit code."""
        live = self._live()
        if live is not None:
            _procs.terminate([live], timeout)
        self._reap()
        self.paused = False
        return self.returncode

    def pause(self) -> PipelineProcess:
        """SIGSTOP: alive but silent (its session and transaction time out; a successor may fence it)."""
        live = self._live()
        if live is not None:
            live.send_signal(signal.SIGSTOP)
            self.paused = True
            # the kernel stops it at its next return to user space: milliseconds, KILL_WAIT on a swapping machine
            wait_until(
                lambda: self.state in (psutil.STATUS_STOPPED, None),
                timeout=_procs.KILL_WAIT,
                what=f"processor {self.name} to stop on SIGSTOP",
                progress=False,
            )
        return self

    def wait_paused(self, timeout: float = EXIT_WAIT) -> PipelineProcess:
        """Until the incarnation started with ``pause_at`` stopped itself there (an error if it exits)."""

        def stopped() -> bool:
            if not self.running:
                raise PipelineError(
                    f"The processor {self.name!r} exited ({self.returncode}) before it paused: "
                    f"{self.stderr().strip() or 'no message'}"
                )
            return bool(self.state == psutil.STATUS_STOPPED)  # psutil's constants are untyped

        wait_until(stopped, timeout=timeout, what=f"processor {self.name} to SIGSTOP itself", fatal=(PipelineError,))
        self.paused = True
        return self

    def resume(self) -> PipelineProcess:
        live = self._live()
        if live is not None and self.paused:
            live.send_signal(signal.SIGCONT)
        self.paused = False
        return self

    def restart(self, die_at: str | None = None) -> PipelineProcess:
        """Kill the current incarnation if it runs, start the next."""
        return self.kill().start(die_at)

    def wait_exit(self, timeout: float = EXIT_WAIT) -> int:
        """The exit code of the current incarnation once it ends (``-9``: it was SIGKILLed)."""
        if self.proc is None:
            raise PipelineError(f"The processor {self.name!r} was never started: call start() first.")
        wait_until(
            lambda: self.proc is not None and self.proc.poll() is not None,
            timeout=timeout,
            what=f"processor {self.name} to exit (die_at makes it kill itself after its first batches)",
        )
        self._reap()
        return int(self.proc.returncode)

    def stderr_file(self, incarnation: int | None = None) -> Path:
        """Where ``incarnation`` (the current one by default) writes its stderr: retries, librdkafka's
        logs, its reason to stop."""
        return self.history_dir / f"{self.name}-{incarnation or self.incarnation}.stderr"

    def stderr(self) -> str:
        """What the current incarnation printed on stderr so far."""
        path = self.stderr_file()
        return path.read_text("utf-8", "replace") if self.proc is not None and path.exists() else ""

    # -- progress -------------------------------------------------------------------------------
    def lag(self, ends: dict[int, int] | None = None) -> int:
        """Input records not yet committed by the group: the end of each input partition minus its
        committed offset (read_committed: the end is the last stable offset). ``ends`` (partition -> the offset
        after its last data record) instead of the partition's end, for an input whose log may end in a
        transaction marker: a consumer commits past the last record it is given, never past a marker."""
        c = Consumer(
            {
                "bootstrap.servers": self.cluster.bootstrap_servers(),
                "group.id": self.group,
                "isolation.level": "read_committed",
                "enable.auto.commit": False,
                "logger": KIT,
            }
        )
        try:
            meta = c.list_topics(self.input, timeout=PROBE)
            tps = [TopicPartition(self.input, p) for p in sorted(meta.topics[self.input].partitions)]
            committed = {tp.partition: max(tp.offset, 0) for tp in c.committed(tps, timeout=CLIENT_CALL)}
            if ends is None:
                ends = {tp.partition: c.get_watermark_offsets(tp, timeout=PROBE, cached=False)[1] for tp in tps}
        finally:
            c.close()
        return sum(max(end - committed.get(p, 0), 0) for p, end in ends.items())

    def wait_caught_up(self, timeout: float = CATCH_UP) -> PipelineProcess:
        """Until the group has committed every input record; an error at once if the processor exits."""

        def done() -> bool:
            if not self.running:
                raise PipelineError(
                    f"The processor {self.name!r} exited ({self.returncode}) before it caught up: "
                    f"{self.stderr().strip() or 'no message'}"
                )
            return self.lag() == 0

        wait_until(
            done,
            timeout=timeout,
            what=f"processor {self.name} to commit every input of {self.input}",
            fatal=(PipelineError,),
        )
        return self

    def __enter__(self) -> PipelineProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.kill()
