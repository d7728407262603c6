"""The EOS processor's abortable path on the real cluster: a proxy fault makes librdkafka fail records of
an open transaction, the processor aborts it, rewinds to its committed offsets, and ends exactly once.

The fault: from the processor's NTH Produce to the leader of output partition 0 on, every one is
dropped and its connection closed, so librdkafka reconnects and resends, and is refused again, until
the records' ``message.timeout.ms`` (3 s here) runs out: they fail with ``_MSG_TIMED_OUT``, which makes
the transaction abortable (``txn_requires_abort()``), not fatal. The transaction timeout is set far
above it (30 s) so the coordinator does not abort first (which would fence the producer instead).

Where the fault lands: the rule is armed before the processor starts and counts its requests, as the
fault matrix's cells do. Armed on a timer (after two commits were seen in the history), it raced the
processor: 200 inputs take it about a second, so on a quick run the work was done before the rule
came and nothing was ever aborted (CI, 2026-11-28). Partition 0 gets 100 inputs, at most 20 a
transaction: at least five transactions send to its leader, so the 3rd Produce comes with work left.

Timeouts: message.timeout.ms 3 s < the wait for the abort (the rule stays until an abort is in the
history) < transaction.timeout.ms 30 s; the catch-up as the supervisor's (see
eoslab/demos/pipeline/_faults.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from eoslab._wait import wait_until
from eoslab.cluster import Cluster
from eoslab.demos.pipeline import PipelineProcess, layout, origin_of, write_inputs
from eoslab.faults import Proxy
from eoslab.history import Aborted, Committed, Event, check, read_both, read_final, read_history

pytestmark = pytest.mark.cluster

MESSAGE_TIMEOUT_MS = 3000
TXN_TIMEOUT_MS = 30_000
NTH = 3  # the first two Produce requests to the leader pass: the processor is under way when the fault comes
START_WAIT = 60.0  # the processor joins its group and sends its first transactions (a commit: the usual)
ABORT_WAIT = 30.0  # the records time out after 3 s; the abort follows in the processor's next call


def test_an_abortable_error_is_aborted_rewound_and_redone_exactly_once(
    cluster: Cluster, topic_name: str, tmp_path: Path
) -> None:
    plan = layout(cluster, "drop_endtxn_response", topic_name)  # no victim: inputs and outputs on brokers 1, 2
    src, out = f"{topic_name}-in", f"{topic_name}-out"
    cluster.admin.create_topic(src, replica_assignment=plan.inputs)
    cluster.admin.create_topic(out, replica_assignment=plan.outputs)
    write_inputs(cluster, src, 200, 2)
    proxy = Proxy.connect(cluster)
    p = PipelineProcess(cluster, "eos", input=src, output=out, history_dir=tmp_path, group=plan.group,
                        transactional_id=plan.transactional_id, transaction_timeout_ms=TXN_TIMEOUT_MS,
                        message_timeout_ms=MESSAGE_TIMEOUT_MS, proxied=True)  # fmt: skip

    def events() -> list[Event]:
        return read_history(p.history()).events if p.history().exists() else []

    leader = plan.outputs[0][0]
    try:
        with proxy.drop_request(
            api="Produce", client_id=p.client_id, broker=leader, close=True, nth=NTH, times=None
        ) as fault:
            p.start()
            wait_until(
                lambda: any(isinstance(e, Aborted) for e in events()),
                timeout=START_WAIT + ABORT_WAIT,
                what=f"the processor to abort (its Produce requests to broker {leader} dropped from the {NTH}rd on)",
            )
            assert fault.fired >= 1  # the abort followed the rule's first drop
        p.wait_caught_up()
        assert p.stop() == 0, p.stderr()
    finally:
        p.kill()
        proxy.clear_rules(client_id=p.client_id)
    aborted = [e for e in events() if isinstance(e, Aborted)]
    assert aborted and all("_MSG_TIMED_OUT" in e.reason or "timed out" in e.reason.lower() for e in aborted), aborted
    last_abort = max(e.time for e in aborted)
    assert any(isinstance(e, Committed) and e.time > last_abort for e in events())  # it went on after the abort
    verdict = check(p.histories(), read_both(cluster, out), inputs=read_final(cluster, src, "read_committed"),
                    origin=origin_of)  # fmt: skip
    assert verdict.valid(), str(verdict)
    assert verdict.stats["aborted txns"] >= 1
    for t in (src, out):
        cluster.admin.delete_topic(t)
