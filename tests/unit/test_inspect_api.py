"""eoslab.inspect's public surface, module sizes, and the client-view plumbing (no broker needed)."""

from __future__ import annotations

import logging
from pathlib import Path

import eoslab.inspect as ins


def test_all_is_sorted_and_complete():
    assert list(ins.__all__) == sorted(ins.__all__)
    for name in ins.__all__:
        assert hasattr(ins, name), name


def test_modules_stay_small():
    for path in Path(ins.__file__).parent.glob("*.py"):
        assert len(path.read_text().splitlines()) <= 400, path.name


def test_observed_producer_keeps_stats_and_routes_debug_lines_to_logging(caplog):
    # Nothing listens on port 1: librdkafka still reports statistics, with no PID yet (-1).
    p = ins.ObservedProducer(
        {"bootstrap.servers": "127.0.0.1:1", "enable.idempotence": True, "client.id": "unit-observed"}, debug="eos"
    )
    assert p.logger_name is not None and p.logger_name.startswith("eoslab.inspect.client.unit-observed.")
    with caplog.at_level(logging.DEBUG, logger=p.logger_name):
        eos = p.eos(timeout=10)
    assert eos.producer_id == -1 and eos.producer_epoch == -1
    assert eos.idemp_state in ("Init", "RequestPID", "WaitTransport")
    assert p.last_stats is not None and p.last_stats["client_id"] == "unit-observed"
    assert any(r.name == p.logger_name for r in caplog.records)  # they reach Python logging too
    assert p.log.lines, "debug=eos lines should reach the Python logger"
    assert p.log.grep("") == list(p.log.lines)


def test_a_dropped_producer_is_freed_at_once_not_by_the_cyclic_gc():
    """A producer whose statistics callback held it lived until the cyclic GC ran, its threads reconnecting
    through the proxy into a later test's trace (run 22): the last reference must free it."""
    import gc
    import weakref

    was = gc.isenabled()
    gc.disable()
    try:
        for debug in (None, "eos"):
            p = ins.ObservedProducer({"bootstrap.servers": "127.0.0.1:1", "client.id": "unit-freed"}, debug=debug)
            p.eos(timeout=10)  # statistics served: the callback has run
            ref = weakref.ref(p)
            del p
            assert ref() is None, f"debug={debug}: the producer outlived its last reference"
    finally:
        if was:
            gc.enable()


def test_acquired_pids_from_debug_lines():
    # Lines as librdkafka 2.16.0 logged them (debug=eos,msg) against the real cluster.
    lines = [
        "GETPID [x#producer-1] [thrd:main]: 127.0.0.1:20093/3: Acquiring ProducerId",
        "GETPID [x#producer-1] [thrd:main]: Acquired PID{Id:11,Epoch:0}",
        "NEWPID [x#producer-1] [thrd:127.0.0.1:20091/1]: demo [0] changed PID{Invalid} -> PID{Id:11,Epoch:0} "
        "with base MsgId 1",
    ]
    assert ins.acquired_pids(lines) == [(11, 0)]
