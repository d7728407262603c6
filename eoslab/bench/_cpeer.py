"""The peer without Python: librdkafka's own ``rdkafka_performance`` (:mod:`eoslab.bench._cbuild`), doing the
harness's work on the same cluster.

Like for like with the harness's saturation slices:

* the same settings: every librdkafka property of the workload (``acks``, ``enable.idempotence``,
  ``linger.ms``, ``batch.size``, ``batch.num.messages``, ``max.in.flight.requests.per.connection``,
  ``queue.buffering.max.kbytes``/``messages``, ``compression.type``) passed as ``-X name=value``; records of
  ``record_size`` bytes, no key, the default partitioner (``RD_KAFKA_PARTITION_UA``), as the harness sends;
* the same bytes and the same copy: the harness's constant ``a…a`` (``-m a``), copied per record (``-D``,
  ``RD_KAFKA_MSG_F_FREE`` after a ``memcpy``) as confluent-kafka's ``produce()`` copies it;
* the same window: the tool prints a line a second (``-i 1000 -u``: elapsed ms, records produced, records
  delivered ``dr``, …) and its statistics every :data:`STATS_MS` (``-T``). Its figure is the records delivered
  between the first line at or after :data:`CPEER_WARMUP_S` (connections made, producer id held) and the first line
  ``seconds`` later, over the tool's own elapsed time between them; the CPU of the tool and of the nodes is
  read as those two lines arrive (``stdbuf -oL`` makes the tool's stdout line-buffered), then the tool is
  stopped with SIGINT (its own ``stop()``).

Not like for like, and said beside the figure: the tool counts its records with a delivery report per
record (``dr_msg_cb``, in C), where the harness asks for error reports only; it has no transactional mode;
and it runs librdkafka 2.15.1 (the nearest source the registries serve) where the harness runs the wheel's.
"""

from __future__ import annotations

import re
import shutil
import signal
import subprocess
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eoslab.bench import _stats, _threads
from eoslab.bench._cpu import CpuMeter, Reading, spent
from eoslab.bench._harness import BenchError
from eoslab.errors import SetupError
from eoslab.runs import CPEER_WARMUP_S, Workload

STATS_MS = 500
"""The tool's statistics interval: twice per progress line, so that a window of two progress lines (2 s) holds at
least three documents. At 1000 ms, the same as the lines, it holds one or two, by which of a tick's two outputs
comes first, and the cluster test can find a window without statistics."""
_LINE = re.compile(
    r"^\|\s*(?P<elapsed>\d+) \|\s*(?P<msgs>\d+) \|\s*(?P<bytes>\d+) \|\s*(?P<rtt>\d+) \|\s*(?P<dr>\d+) \|"
)


@dataclass
class CPeerResult:
    """The tool's records delivered over its measured window, and what that window cost."""

    records: int
    seconds: float
    version: str
    cpu: Reading = field(default_factory=dict)  # per process kind (client, brokers, controllers)
    threads: dict[str, float] = field(default_factory=dict)  # the tool's CPU per thread kind (_threads.KINDS)
    stats: _stats.Window | None = None
    lines: int = 0

    @property
    def records_per_s(self) -> float:
        return self.records / self.seconds if self.seconds > 0 else float("nan")


def _value(v: Any) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)


def argv(program: Path, w: Workload, topic: str, bootstrap: str) -> list[str]:
    """The tool's command line for workload ``w`` (without transactions: the tool has none)."""
    if w.transactional:
        raise BenchError(f"{w.label}: rdkafka_performance has no transactional mode.")
    args = [str(program), "-P", "-t", topic, "-b", bootstrap, "-s", str(w.record_size), "-D", "-m", "a"]
    args += ["-i", "1000", "-u", "-T", str(STATS_MS)]
    for k, v in w.librdkafka_conf().items():
        args += ["-X", f"{k}={_value(v)}"]
    return args


@dataclass
class Tracker:
    """Follows the tool's lines; reads the CPU (``read``) at the window's first and last line; ``done`` once
    the window is over. The readers are injected so the window logic is tested without a tool."""

    warm_ms: float
    seconds: float
    read: Callable[[], tuple[Reading, _threads.Threads]]
    start: tuple[int, int, Reading, _threads.Threads] | None = None  # elapsed ms, delivered, cpu, threads
    end: tuple[int, int, Reading, _threads.Threads] | None = None
    snaps: list[_stats.Snapshot] = field(default_factory=list)
    lines: int = 0

    @property
    def done(self) -> bool:
        return self.end is not None

    def see(self, line: str) -> None:
        if self.done:
            return
        if line.startswith("{"):
            if self.start is not None:
                try:
                    self.snaps.append(_stats.snapshot(line))
                except (ValueError, KeyError, TypeError):  # a document cut short: the window has fewer
                    pass
            return
        m = _LINE.match(line)
        if m is None:
            return
        self.lines += 1
        elapsed, dr = int(m["elapsed"]), int(m["dr"])
        if self.start is None and elapsed >= self.warm_ms:
            self.start = (elapsed, dr, *self.read())
        elif self.start is not None and elapsed >= self.start[0] + self.seconds * 1000:
            self.end = (elapsed, dr, *self.read())

    def result(self, version: str) -> CPeerResult | None:
        if self.start is None or self.end is None:
            return None
        (e0, d0, c0, t0), (e1, d1, c1, t1) = self.start, self.end
        return CPeerResult(
            d1 - d0,
            (e1 - e0) / 1000,
            version,
            spent(c0, c1),
            _threads.group(t0, t1),
            _stats.over(self.snaps),
            self.lines,
        )


def run_cpeer(
    program: Path, version: str, w: Workload, topic: str, bootstrap: str, seconds: float, meter: CpuMeter | None
) -> CPeerResult:
    """Run the tool for its warm-up plus ``seconds``; its figures over the measured window."""
    stdbuf = shutil.which("stdbuf")
    if stdbuf is None:
        raise SetupError("The C peer needs stdbuf (GNU coreutils) to read rdkafka_performance's lines as they come.")
    cmd = [stdbuf, "-oL", *argv(program, w, topic, bootstrap)]
    with tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, stdin=subprocess.DEVNULL, text=True)
        client = meter.for_client(proc.pid) if meter is not None else None

        def read() -> tuple[Reading, _threads.Threads]:
            return (client.read() if client is not None else {}), _threads.read(proc.pid)

        track = Tracker(CPEER_WARMUP_S * 1000, seconds, read)
        watchdog = threading.Timer(CPEER_WARMUP_S + seconds + 60.0, proc.kill)
        watchdog.start()
        try:
            assert proc.stdout is not None
            for line in proc.stdout:
                track.see(line)
                if track.done and proc.poll() is None:
                    proc.send_signal(signal.SIGINT)  # its stop(): it ends its loop and destroys the handle
            rc = proc.wait()
        finally:
            watchdog.cancel()
        err.seek(0)
        stderr = err.read()
    result = track.result(version)
    if result is None:
        tail = stderr.strip().splitlines()[-1:] or [f"exit {rc}"]
        raise BenchError(f"{w.label}: rdkafka_performance ended before its measured window did: {tail[0]}")
    return result
