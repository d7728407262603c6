"""Where and when a fault-matrix cell strikes: its trigger (the request whose answer the proxy holds or
drops), the victim broker of a node fault, and the layout that puts the victim's role, and nothing
else of the cell, on it. Pure data and one metadata request; :func:`eoslab.demos.pipeline.run_cell` runs
the cells."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from eoslab._timeouts import CLIENT_CALL
from eoslab.clients import producer, write_all
from eoslab.demos.pipeline._parts import PipelineError
from eoslab.errors import ClientError
from eoslab.inspect import coordinator_partition
from eoslab.topology import OFFSETS_PARTITIONS, TXN_STATE_PARTITIONS

if TYPE_CHECKING:
    from eoslab.cluster import Cluster

HOLD_S = 5.0
"""How long the proxy holds the answer that marks the fault's moment. The harness sees the rule fire
within POLL_S and acts in milliseconds (SIGKILL, SIGSTOP, a broker killed); 5 s leaves a loaded
laptop room. It is also the one stall of a processor whose held answer no kill releases (the twin's
commit, held at a broker that is not the victim)."""


@dataclass(frozen=True)
class Trigger:
    """The proxy rule that marks a fault's moment: the answer to the ``nth`` ``api`` request."""

    action: str  # delay_response (held HOLD_S) or drop_response
    api: str
    nth: int
    at_victim: bool = False  # only requests to the victim broker count
    close: bool = False  # drop_response: also close the connection

    def describe(self) -> str:
        fate = f"held {HOLD_S:g} s" if self.action == "delay_response" else "dropped"
        if self.action == "drop_response":
            fate += " with the connection" if self.close else " (connection kept)"
        return f"{self.api} #{self.nth}{' to the victim' if self.at_victim else ''}: written, its answer {fate}"


_PRODUCE_3 = Trigger("delay_response", "Produce", 3)
TRIGGERS: dict[tuple[str, str], Trigger] = {
    # the 3rd Produce written, its answer held: a batch open, its outputs in the log, offsets not committed
    ("kill_processor", "eos"): _PRODUCE_3,
    ("kill_processor", "alo"): _PRODUCE_3,
    ("zombie", "eos"): _PRODUCE_3,
    ("zombie", "alo"): _PRODUCE_3,
    # the 2nd Produce to the output partition's leader written, its answer held
    ("kill_output_leader", "eos"): Trigger("delay_response", "Produce", 2, at_victim=True),
    ("kill_output_leader", "alo"): Trigger("delay_response", "Produce", 2, at_victim=True),
    # EOS: the 2nd EndTxn (PrepareCommit durable at the coordinator), its answer held;
    # the twin's commit is its OffsetCommit: the same moment of its batch
    ("kill_txn_coordinator", "eos"): Trigger("delay_response", "EndTxn", 2),
    ("kill_txn_coordinator", "alo"): Trigger("delay_response", "OffsetCommit", 2),
    # the offsets reaching the group coordinator: TxnOffsetCommit (EOS), OffsetCommit (the twin)
    ("kill_group_coordinator", "eos"): Trigger("delay_response", "TxnOffsetCommit", 2),
    ("kill_group_coordinator", "alo"): Trigger("delay_response", "OffsetCommit", 2),
    # the commit's answer lost on a connection kept open: EOS waits socket.timeout.ms, then resends.
    # The twin has no EndTxn; its commit is OffsetCommit, whose answer is lost with the connection
    # closed (the consumer's socket.timeout.ms is librdkafka's 60 s: the close makes it hear at once).
    ("drop_endtxn_response", "eos"): Trigger("drop_response", "EndTxn", 2),
    ("drop_endtxn_response", "alo"): Trigger("drop_response", "OffsetCommit", 2, close=True),
}
"""Each cell's moment: which request's answer the proxy holds or drops before the harness acts."""

VICTIM = {"kill_output_leader": 1, "kill_txn_coordinator": 3, "kill_group_coordinator": 1}
"""The broker each node fault kills: where the course's diagrams put that role (partition A on broker 1,
the transaction coordinator on broker 3, the group coordinator on broker 1)."""
VICTIM_ROLE = {
    "kill_output_leader": "the leader of output partition 0",
    "kill_txn_coordinator": "the transaction coordinator",
    "kill_group_coordinator": "the group coordinator",
}


@dataclass(frozen=True)
class Layout:
    """Where a cell's partitions and coordinators are: the victim broker holds only the role its fault hits."""

    victim: int | None
    inputs: list[list[int]]
    outputs: list[list[int]]
    transactional_id: str
    group: str


def _assignment(leader: int, brokers: list[int]) -> list[int]:
    return [leader, *(b for b in brokers if b != leader)]


def key_led_by(leaders: dict[int, int], partitions: int, base: str, wanted: set[int]) -> str:
    """A key ``base-k`` whose coordinator (the leader of its partition, ``leaders``) is one of ``wanted``."""
    for k in range(10 * partitions):
        key = f"{base}-{k}"
        if leaders.get(coordinator_partition(key, partitions)) in wanted:
            return key
    raise PipelineError(f"No coordinator partition is led by broker(s) {sorted(wanted)}: run eoslab.heal(cluster).")


def layout(cluster: Cluster, fault: str, name: str) -> Layout:
    """The cell's replica assignments and ids, from the cluster's current leaders of the internal topics."""
    brokers = sorted(b.node_id for b in cluster.topology.brokers)
    victim = VICTIM.get(fault)
    others = [b for b in brokers if b != victim]
    if fault == "kill_output_leader" and victim is not None:
        outputs = [_assignment(victim, brokers), _assignment(others[0], brokers)]
        inputs = [_assignment(others[0], brokers), _assignment(others[1], brokers)]
    else:  # the course's layout (A on broker 1, B on broker 2), or off the victim
        inputs = outputs = [_assignment(others[0], brokers), _assignment(others[1], brokers)]
    txn_on = {victim} if fault == "kill_txn_coordinator" and victim else set(others)
    group_on = {victim} if fault == "kill_group_coordinator" and victim else set(others)
    txn_leaders = {p.partition: p.leader for p in cluster.partitions("__transaction_state")}
    group_leaders = {p.partition: p.leader for p in cluster.partitions("__consumer_offsets")}
    return Layout(
        victim,
        inputs,
        outputs,
        key_led_by(txn_leaders, TXN_STATE_PARTITIONS, f"pipeline-{name}", txn_on),
        key_led_by(group_leaders, OFFSETS_PARTITIONS, f"pipeline-{name}", group_on),
    )


def write_inputs(cluster: Cluster, topic: str, records: int, partitions: int) -> None:
    """``records`` inputs ``v0, v1, ...`` keyed by their number, round-robin over the partitions.

    Raises :class:`PipelineError` when one is not written (:func:`eoslab.clients.write_all`)."""
    inputs = ({"value": f"v{i}".encode(), "key": str(i).encode(), "partition": i % partitions} for i in range(records))
    try:
        write_all(producer(cluster), topic, inputs, timeout=CLIENT_CALL)
    except ClientError as e:
        raise PipelineError(str(e)) from None  # the pipeline's family, the same sentence
