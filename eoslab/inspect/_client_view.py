"""The producer's own view: its producer id, epoch and EOS states, from librdkafka itself.

librdkafka publishes them in its statistics JSON (section ``eos``:
``producer_id``, ``producer_epoch``, ``idemp_state``, ``txn_state``) and logs
``Acquired PID{Id:..,Epoch:..}`` with ``debug=eos``. Two facts shape this module:

- confluent-kafka delivers statistics (``stats_cb``) and log lines (``logger``)
  only from inside ``poll()`` / ``flush()`` of the producer. A notebook that
  just calls ``init_transactions()`` would never see them, so
  :meth:`ObservedProducer.eos` polls for the caller until statistics newer
  than the call arrive (serving any pending delivery reports on the way,
  exactly as the application's own ``poll()`` would);
- the epoch of a librdkafka producer changes only when it is fenced or bumps
  it itself after a timeout or an abortable error (KIP-360): it speaks the
  original transaction protocol, not KIP-890's epoch-per-transaction.
"""

from __future__ import annotations

import collections
import itertools
import json
import logging
import time
import weakref
from dataclasses import dataclass
from typing import Any

from confluent_kafka import Producer

from eoslab._wait import wait_until

_SERIAL = itertools.count(1)

STATS_INTERVAL_MS = 100
"""Fresh enough to watch a PID arrive in a notebook cell, cheap enough on 2 cores."""
STATS_WAIT = 5.0
"""A fresh statistics report comes within one interval (STATS_INTERVAL_MS) of asking; 5 s covers a busy laptop."""


@dataclass(frozen=True)
class ClientEos:
    """The ``eos`` section of one librdkafka statistics report.

    ``producer_id`` is -1 until a PID is acquired; ``idemp_state`` goes
    ``Init`` -> ``RequestPID`` -> ``WaitPID`` -> ``Assigned``; ``txn_state`` is
    ``Init``, ``Ready``, ``InTransaction``, ``CommittingTransaction``,
    ``AbortableError``, ``FatalError`` ... (librdkafka's names).
    """

    producer_id: int
    producer_epoch: int
    idemp_state: str
    txn_state: str
    epoch_count: int
    stats_time_ms: int  # wall clock of the report, second resolution

    @classmethod
    def from_stats(cls, stats: dict[str, Any]) -> ClientEos:
        eos = stats.get("eos") or {}
        return cls(
            producer_id=int(eos.get("producer_id", -1)),
            producer_epoch=int(eos.get("producer_epoch", -1)),
            idemp_state=str(eos.get("idemp_state", "")),
            txn_state=str(eos.get("txn_state", "")),
            epoch_count=int(eos.get("epoch_cnt", 0)),
            stats_time_ms=int(stats.get("time", 0)) * 1000,  # "time" is wall-clock seconds ("ts" is monotonic)
        )

    def __str__(self) -> str:
        """``producer id 3002, epoch 0 (idemp_state Assigned, txn_state Init)``: librdkafka's names for the states."""
        pid = "no producer id yet" if self.producer_id < 0 else f"producer id {self.producer_id}"
        return f"{pid}, epoch {self.producer_epoch} (idemp_state {self.idemp_state}, txn_state {self.txn_state})"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(str(self))  # a cell's result reads as the sentence, repr() keeps the fields


class ClientLog(logging.Handler):
    """Keeps the last librdkafka log lines of one client, so a cell can show or grep them."""

    def __init__(self, maxlen: int = 5000) -> None:
        super().__init__(logging.DEBUG)
        self.lines: collections.deque[str] = collections.deque(maxlen=maxlen)

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())

    def grep(self, text: str) -> list[str]:
        return [ln for ln in self.lines if text in ln]


class ObservedProducer(Producer):
    """A confluent-kafka ``Producer`` that keeps its last statistics and, on request, its debug log.

    Use it as any Producer; ``conf`` keys are librdkafka's. ``debug`` (e.g.
    ``"eos,msg"``) routes librdkafka's debug lines to the Python logger
    ``eoslab.inspect.client.<client.id>.<n>`` (or the ``logger`` given in
    ``conf``) and into :attr:`log`; like statistics, they arrive from ``poll()``.
    """

    def __init__(
        self, conf: dict[str, Any], *, debug: str | None = None, stats_interval_ms: int = STATS_INTERVAL_MS
    ) -> None:
        self.last_stats: dict[str, Any] | None = None
        self._stats_seen = 0
        self.log = ClientLog()
        conf = dict(conf)
        conf.setdefault("statistics.interval.ms", stats_interval_ms)
        user_cb = conf.pop("stats_cb", None)
        # librdkafka holds the callback and the callback would hold the producer: a cycle only the
        # cyclic GC frees, so a dropped producer would keep its threads, connections and transactional
        # id alive for a while (reconnecting through the proxy into a later test's trace). A weak
        # reference lets the last reference free it at once.
        me = weakref.ref(self)

        def on_stats(raw: str) -> None:
            producer = me()
            if producer is not None:
                producer.last_stats = json.loads(raw)
                producer._stats_seen += 1
            if user_cb is not None:
                user_cb(raw)

        conf["stats_cb"] = on_stats
        if debug:
            conf["debug"] = debug
            if "logger" not in conf:
                # One logger per producer (two producers may share a client.id); the parent
                # "eoslab.inspect.client" is where a notebook attaches a handler to see them all.
                name = f"eoslab.inspect.client.{conf.get('client.id', 'rdkafka')}.{next(_SERIAL)}"
                conf["logger"] = logging.getLogger(name)
                conf["logger"].setLevel(logging.DEBUG)  # librdkafka debug lines arrive at DEBUG
            conf["logger"].addHandler(self.log)
        self.logger_name: str | None = conf["logger"].name if "logger" in conf else None
        super().__init__(conf)

    def stats(self, fresh: bool = True, timeout: float = STATS_WAIT) -> dict[str, Any]:
        """The last statistics; ``fresh`` waits (polling) for one emitted after this call."""
        if fresh or self.last_stats is None:
            self.poll(0)  # serve reports queued BEFORE this call first, so "fresh" means after it
            seen = self._stats_seen
            deadline = time.monotonic() + timeout

            def newer() -> bool:
                self.poll(0.05)  # stats_cb is served from poll(): see the module docstring
                return self._stats_seen > seen

            wait_until(
                newer,
                timeout=max(0.1, deadline - time.monotonic()),
                interval=0.0,
                what="a librdkafka statistics report (statistics.interval.ms)",
            )
        assert self.last_stats is not None
        return self.last_stats

    def eos(self, fresh: bool = True, timeout: float = STATS_WAIT) -> ClientEos:
        """Producer id, epoch and EOS states as librdkafka reports them now."""
        return ClientEos.from_stats(self.stats(fresh, timeout))


def observed_producer(
    conf: dict[str, Any], *, debug: str | None = None, stats_interval_ms: int = STATS_INTERVAL_MS
) -> ObservedProducer:
    """Factory spelling of :class:`ObservedProducer`."""
    return ObservedProducer(conf, debug=debug, stats_interval_ms=stats_interval_ms)


def acquired_pids(lines: list[str] | collections.deque[str]) -> list[tuple[int, int]]:
    """(producer id, epoch) pairs from librdkafka's ``Acquired PID{Id:..,Epoch:..}`` debug lines."""
    import re

    out = []
    for ln in lines:
        m = re.search(r"Acquired PID\{Id:(-?\d+),Epoch:(-?\d+)", ln)
        if m:
            out.append((int(m.group(1)), int(m.group(2))))
    return out
