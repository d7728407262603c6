"""The flows of module 02 (producer-id ranges), shared by the notebook, its lab and the checks.

librdkafka sends a non-transactional InitProducerId to a broker of its own
choosing; a lesson about which broker granted which id needs to choose. So the
requests here are the kit's own, encoded from Kafka's schemas and sent to a
CHOSEN broker through its fault-proxy front, where the trace records them
(:meth:`eoslab.faults.Proxy.request` does one; :class:`PidClient` keeps one
connection per broker for the hundreds the prefetch lesson needs).

What never passes the proxy: AllocateProducerIds (api key 67) runs broker →
controller. We count those from their result, the ``ProducerIdsRecord``s in
the controllers' metadata log (:func:`eoslab.inspect.producer_id_blocks`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from eoslab import inspect as ins
from eoslab._heal import heal
from eoslab._librdkafka import LESSONS
from eoslab._timeouts import CLIENT_CALL
from eoslab._wait import wait_until
from eoslab.errors import ClusterError
from eoslab.inspect import PRODUCER_ID_BLOCK_SIZE

# re-exported: lab 02's checks and the notebook use them (write_as: the module's opening, a second writer)
from eoslab.m02_pid_ranges._pid_client import Grant as Grant
from eoslab.m02_pid_ranges._pid_client import PidClient as PidClient
from eoslab.m02_pid_ranges._pid_client import Write as Write
from eoslab.m02_pid_ranges._pid_client import write_as as write_as

if TYPE_CHECKING:
    import pandas as pd

    from eoslab.cluster import Cluster


def grants_frame(grants: list[Grant]) -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame([g.__dict__ for g in grants])


def blocks_frame(cluster: Cluster) -> pd.DataFrame:
    """The grants in the metadata log: broker, [first, next) and when, one row per ProducerIdsRecord."""
    import pandas as pd

    rows = [
        {
            "broker": b.broker_id,
            "first_producer_id": b.first_producer_id,
            "next_producer_id (exclusive)": b.next_producer_id,
            "broker_epoch": b.broker_epoch,
            "offset": b.offset,
            "source": b.source,
            "appended": pd.to_datetime(b.append_time_ms, unit="ms"),
        }
        for b in ins.producer_id_blocks(cluster)
        if b.source == "log"
    ]
    return pd.DataFrame(rows)


def allocations(cluster: Cluster, broker: int | None = None) -> int:
    """How many AllocateProducerIds the controller granted (to ``broker``), from the metadata log."""
    return sum(
        1 for b in ins.producer_id_blocks(cluster) if b.source == "log" and (broker is None or b.broker_id == broker)
    )


PREFETCH_AT = int(PRODUCER_ID_BLOCK_SIZE * 0.9)
"""A broker asks for its next block when it hands out id ``first + 900`` of its block (90 %, Kafka 4.1's
``RPCProducerIdManager.PID_PREFETCH_THRESHOLD``) and keeps handing out the old block until it is used up."""


def _grants_to(blocks: list[ins.ProducerIdBlock], broker: int) -> list[ins.ProducerIdBlock]:
    """``broker``'s grants, oldest first, each once (a metadata snapshot repeats the newest grant)."""
    seen: dict[int, ins.ProducerIdBlock] = {}
    for b in blocks:
        if b.broker_id == broker:
            seen.setdefault(b.next_producer_id, b)
    return sorted(seen.values(), key=lambda b: b.next_producer_id)


def next_block(blocks: list[ins.ProducerIdBlock], broker: int, last_id: int) -> ins.ProducerIdBlock | None:
    """The block ``broker``'s NEXT producer id comes from, given the last id it handed out.

    Not simply the newest grant to ``broker``: from 90 % of a block on, the controller has
    already recorded the next one (the prefetch), yet ids still come from the old block until it
    is used up. None when the block of ``last_id`` is used up and no later grant is recorded
    yet (the broker then answers COORDINATOR_LOAD_IN_PROGRESS while it asks).
    """
    mine = _grants_to(blocks, broker)
    holding = [b for b in mine if last_id in b]
    if not holding:
        raise ClusterError(f"No block granted to broker {broker} holds producer id {last_id}.")
    current = holding[-1]
    if last_id + 1 < current.next_producer_id:
        return current
    return next((b for b in mine if b.first_producer_id >= current.next_producer_id), None)


def granted(blocks: list[ins.ProducerIdBlock], broker: int, ids: list[int]) -> bool:
    """True when the metadata log holds every grant that handing out ``ids`` caused at ``broker``: a block holding
    each id, and, when the last id is at 90 % of its block or past it, the next block the broker prefetched."""
    mine = _grants_to(blocks, broker)
    if not all(any(i in b for b in mine) for i in ids):
        return False
    last = max(ids)
    holding = [b for b in mine if last in b][-1]
    if last - holding.first_producer_id < PREFETCH_AT:
        return True
    return any(b.first_producer_id >= holding.next_producer_id for b in mine)


def wait_until_granted(cluster: Cluster, broker: int, grants: list[Grant]) -> None:
    """Until the metadata log holds the grants that ``grants`` caused (:func:`granted`).

    A block that served an id is in the log before the broker hands the id out (the controller answers
    AllocateProducerIds once its record is committed); the prefetched next block is asked for at 90 % and may be
    granted after the last id was: this waits for it instead of sleeping. Raises WaitTimeout after CLIENT_CALL."""
    ids = [g.producer_id for g in grants]
    wait_until(
        lambda: granted(list(ins.producer_id_blocks(cluster)), broker, ids),
        timeout=CLIENT_CALL,
        interval=0.5,
        what=f"the metadata log to hold broker {broker}'s grants for ids {min(ids)}-{max(ids)}",
    )


@dataclass(frozen=True)
class Position:
    """Where a broker stands in its blocks, learnt by asking it for one producer id."""

    broker: int
    last_id: int  # the id it just handed out
    block: ins.ProducerIdBlock  # the block that id came from
    prefetched: ins.ProducerIdBlock | None  # a block granted to it after ``block``, not in use yet

    @property
    def used(self) -> int:
        """Ids of ``block`` handed out so far (``last_id`` included)."""
        return self.last_id - self.block.first_producer_id + 1


def position(
    cluster: Cluster, client: PidClient, broker: int, blocks: list[ins.ProducerIdBlock] | None = None
) -> Position:
    """Ask ``broker`` for one producer id and find its block, and a prefetched one if any.

    ``blocks`` saves reading the metadata log again (one JVM start) when the caller has just read
    it and no grant happened since.
    """
    last = client.init(broker).producer_id
    mine = _grants_to(list(ins.producer_id_blocks(cluster)) if blocks is None else blocks, broker)
    holding = [b for b in mine if last in b]
    if not holding:
        raise ClusterError(f"Broker {broker} handed out {last}, but no ProducerIdsRecord grants it a block holding it.")
    block = holding[-1]
    later = [b for b in mine if b.first_producer_id >= block.next_producer_id]
    return Position(broker, last, block, later[0] if later else None)


def current_block(cluster: Cluster, broker: int, client: PidClient | None = None) -> ins.ProducerIdBlock:
    """The block ``broker`` hands out ids from now (asks it for one id to know where it stands).

    Before its 90 % mark that is its newest grant; between 90 % and 100 % the newest grant is the
    prefetched next block and the ids still come from the one before it.
    """
    if client is None:
        with PidClient(cluster, client_id="eoslab-current-block") as own:
            return current_block(cluster, broker, own)
    pos = position(cluster, client, broker)
    if pos.last_id + 1 < pos.block.next_producer_id or pos.prefetched is None:
        return pos.block
    return pos.prefetched


def wait_for_grants(
    cluster: Cluster, after: dict[int, ins.ProducerIdBlock], timeout: float = 20.0
) -> list[ins.ProducerIdBlock]:
    """Until the metadata log holds, for each broker of ``after``, a grant after the block given; all grants then.

    One read of the metadata log per try (a JVM start, and a longer read the longer the cluster has been
    up: the active controller appends a NoOpRecord every 5 s, ``metadata.max.idle.interval.ms``), so
    callers ask once for all.
    """

    def granted() -> list[ins.ProducerIdBlock] | None:
        blocks = list(ins.producer_id_blocks(cluster))
        for broker, block in after.items():
            if not any(b.first_producer_id >= block.next_producer_id for b in _grants_to(blocks, broker)):
                return None
        return blocks

    # AllocateProducerIds is answered once the controllers' quorum has the record: well under a second
    # on a healthy cluster; the timeout covers a busy 2-core machine and a controller election.
    found = wait_until(
        granted,
        timeout=timeout,
        interval=0.2,
        what=f"ProducerIdsRecords granting broker(s) {sorted(after)} their next block",
    )
    assert found is not None
    return found


def wait_for_grant(
    cluster: Cluster, broker: int, after: ins.ProducerIdBlock, timeout: float = 20.0
) -> list[ins.ProducerIdBlock]:
    """Until the metadata log holds a grant to ``broker`` after the block ``after``; all grants then."""
    return wait_for_grants(cluster, {broker: after}, timeout)


def ask_for_next_block(
    cluster: Cluster, client: PidClient, broker: int, blocks: list[ins.ProducerIdBlock] | None = None
) -> ins.ProducerIdBlock:
    """Hand out ids from ``broker`` until it asks the controller for a NEW block; the block it asked after.

    If the broker already holds a prefetched block, its current block is used up first, so what it
    asks for is a fresh AllocateProducerIds. The grant is recorded asynchronously: see
    :func:`wait_for_grants`. ``blocks``: as in :func:`position`.
    """
    pos = position(cluster, client, broker, blocks)
    if pos.prefetched is not None:
        client.burn(broker, pos.block.last_producer_id - pos.last_id)  # the rest of the old block
        pos = Position(broker, pos.prefetched.first_producer_id - 1, pos.prefetched, None)
    client.burn(broker, max(0, pos.block.first_producer_id + PREFETCH_AT - pos.last_id))
    return pos.block


def grant_next_block(
    cluster: Cluster, client: PidClient, broker: int, blocks: list[ins.ProducerIdBlock] | None = None
) -> list[ins.ProducerIdBlock]:
    """:func:`ask_for_next_block`, then wait for the grant: the grants then, the new one the newest."""
    return wait_for_grant(cluster, broker, ask_for_next_block(cluster, client, broker, blocks))


def restart_broker(cluster: Cluster, broker: int) -> None:
    """Stop and start a broker (clean shutdown): it comes back without a producer-id block.

    Then heal: its partitions (those of ``__transaction_state`` too) move back to their
    preferred leaders, so the coordinators are where the lesson expects them.
    """
    cluster.stop(f"broker-{broker}")
    cluster.start(f"broker-{broker}")
    heal(cluster)


@dataclass(frozen=True)
class Prefetch:
    """When a broker asked for its next block, measured against the ids it had handed out."""

    broker: int
    block: ins.ProducerIdBlock
    next_block: ins.ProducerIdBlock
    used_when_asked: int  # ids of ``block`` handed out when the controller recorded ``next_block``
    old_after_grant: int  # ids still handed out from ``block`` AFTER ``next_block`` was recorded
    refusals: int  # COORDINATOR_LOAD_IN_PROGRESS answers while crossing the boundary
    headroom_ms: float | None  # from the id at 90 % (the request) to the block's last id
    grant_ms: float | None  # from the id at 90 % to the controller's record of the next block

    def explain(self) -> str:
        """Whether the prefetch came in time, in a sentence, from what was measured."""
        if self.headroom_ms is None or self.grant_ms is None:
            return f"{self.refusals} refusal(s) at the boundary (the 90 % id was handed out before the burst)."
        pace = (
            f"the last {PRODUCER_ID_BLOCK_SIZE - PREFETCH_AT} ids of the block went by in {self.headroom_ms:.0f} ms; "
            f"the controller recorded the next block {self.grant_ms:.0f} ms after the request"
        )
        if self.refusals == 0:
            return f"No refusal at the boundary: {pace}, so the next block was there before it was needed."
        return (
            f"{self.refusals} refusal(s) at the boundary: {pace}. This burst is far faster than real producers "
            "start, so the old block ran out first, the broker answered COORDINATOR_LOAD_IN_PROGRESS, and the "
            "client retried."
        )


def measure_prefetch(cluster: Cluster, client: PidClient, broker: int, overshoot: int = 20) -> Prefetch:
    """Burn through the rest of ``broker``'s block (and ``overshoot`` more), then line the grants up
    with the append time of the controller's next ProducerIdsRecord for that broker.

    A broker already past its 90 % mark has its next block recorded: it first uses up the old one,
    and the measurement is made on the block after. Approximate by design: the record's time is the
    controller's append time, a grant's the client's receive time (one machine, one clock).
    """
    pos = position(cluster, client, broker)
    if pos.prefetched is not None:
        client.burn(broker, pos.block.last_producer_id - pos.last_id)
        pos = position(cluster, client, broker)
    current = pos.block
    burst = client.burn(broker, current.last_producer_id - pos.last_id + overshoot)
    nxt = _grants_to(wait_for_grant(cluster, broker, current), broker)[-1]
    old = [g for g in burst if g.producer_id in current]
    before = sum(1 for g in old if g.at_ms <= nxt.append_time_ms)
    at = {g.producer_id: g.at_ms for g in burst}
    asked = at.get(current.first_producer_id + PREFETCH_AT)
    used_up = at.get(current.last_producer_id)
    return Prefetch(
        broker,
        current,
        nxt,
        pos.used + before,
        len(old) - before,
        sum(len(g.refusals) for g in burst),
        None if asked is None or used_up is None else float(used_up - asked),
        None if asked is None else float(nxt.append_time_ms - asked),
    )


def transactional_grants(cluster: Cluster, prefix: str, brokers: tuple[int, ...] = (1, 3)) -> pd.DataFrame:
    """For each broker, a transactional id it coordinates, a real librdkafka producer initialised with
    it, and the block its producer id came from (it should be the coordinator's)."""
    import pandas as pd

    candidates = [f"{prefix}-txn-{i}" for i in range(200)]
    predicted = ins.predict_coordinators(cluster, candidates)  # Utils.abs(hashCode) % 50 -> its leader
    chosen = {b: next(c.key for c in predicted if c.predicted == b) for b in brokers}
    confirmed = {c.key: c.reported for c in ins.coordinators(cluster, list(chosen.values()))}  # FindCoordinator
    rows = []
    for tid in chosen.values():
        p = ins.ObservedProducer(
            {"bootstrap.servers": cluster.bootstrap_servers(), "transactional.id": tid, "logger": LESSONS}
        )
        p.init_transactions(CLIENT_CALL)
        pid = p.eos().producer_id
        owner = ins.block_of(pid, list(ins.producer_id_blocks(cluster)))  # read after init: it may be new
        rows.append(
            {
                "transactional.id": tid,
                "coordinator (FindCoordinator)": confirmed[tid],
                "producer_id": pid,
                "block granted to broker": owner.broker_id if owner else None,
            }
        )
    return pd.DataFrame(rows)


def plot_grants(grants: list[Grant], blocks: pd.DataFrame, ax: Any = None) -> Any:
    """Producer id against the broker that granted it, with each broker's blocks drawn behind."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(9, 3.4))
    colours = {1: "tab:blue", 2: "tab:orange", 3: "tab:green"}
    for _, b in blocks.iterrows():
        ax.axhspan(
            b["first_producer_id"],
            b["next_producer_id (exclusive)"],
            color=colours.get(b["broker"], "grey"),
            alpha=0.12,
        )
    for broker in sorted({g.broker for g in grants}):
        ids = [g.producer_id for g in grants if g.broker == broker]
        ax.scatter([broker] * len(ids), ids, s=12, color=colours.get(broker, "grey"), label=f"broker {broker}")
    ax.set_xticks(sorted({g.broker for g in grants}))
    ax.set_xlabel("broker that answered InitProducerId")
    ax.set_ylabel("producer id")
    ax.legend(fontsize=8, loc="upper left")
    ax.figure.tight_layout()
    return ax
