"""The flows of module 02 (producer-id ranges, KIP-730), shared by the notebook, its lab and the checks.

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

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from eoslab import inspect as ins
from eoslab._heal import heal
from eoslab._ports import LOOPBACK
from eoslab._timeouts import CLIENT_CALL
from eoslab._wait import wait_until
from eoslab.errors import EoslabError
from eoslab.inspect import PRODUCER_ID_BLOCK_SIZE
from eoslab.protocol import KafkaConnection

if TYPE_CHECKING:
    import pandas as pd

    from eoslab.cluster import Cluster

COORDINATOR_LOAD_IN_PROGRESS = 14
"""What a broker without a block answers while it fetches one from the controller (the client retries)."""
RETRY_FOR = 15.0
"""A restarted broker accepts connections after its start (~3 s) and gets a block from the controller
in one round trip; 15 s covers both on a busy laptop."""
RETRY_INTERVAL = 0.05
"""Between retries: the controller's grant takes milliseconds; librdkafka retries about as fast."""
CONNECTION_TIMEOUT = 15.0
"""One InitProducerId through the proxy: milliseconds; a broker being restarted can hold it for seconds."""


@dataclass(frozen=True)
class Grant:
    """One InitProducerId answered: by which broker, which id, after which refusals."""

    broker: int
    producer_id: int
    producer_epoch: int
    refusals: tuple[str, ...] = ()
    elapsed_ms: float = 0.0
    at_ms: int = 0  # wall clock of the answer, to line grants up with the metadata log's records


@dataclass
class PidClient:
    """Raw InitProducerId requests to chosen brokers, through the fault proxy, one connection each."""

    cluster: Cluster
    client_id: str = "eoslab-pid-ranges"
    _conns: dict[int, KafkaConnection] = field(default_factory=dict)

    def _conn(self, broker: int) -> KafkaConnection:
        if broker not in self._conns:
            node = self.cluster.topology.broker(broker)
            self._conns[broker] = KafkaConnection(
                LOOPBACK, node.proxy_front_port, client_id=self.client_id, timeout=CONNECTION_TIMEOUT
            ).connect()
        return self._conns[broker]

    def init(self, broker: int, transactional_id: str | None = None, retry_for: float = RETRY_FOR) -> Grant:
        """InitProducerId to ``broker``; retries COORDINATOR_LOAD_IN_PROGRESS (as a client would)."""
        body: dict[str, Any] = {
            "TransactionalId": transactional_id,
            "TransactionTimeoutMs": 60000,
            "ProducerId": -1,
            "ProducerEpoch": -1,
        }
        refusals: list[str] = []
        t0 = time.monotonic()

        def attempt() -> Grant | int | None:
            """A grant; an error code that no retry cures; or None to try again."""
            try:
                resp = self._conn(broker).request("InitProducerId", None, body)
            except ConnectionError:
                self._conns.pop(broker, None)  # the broker restarted: a new connection next time
                raise
            err: int = resp["ErrorCode"]
            if err == 0:
                return Grant(
                    broker,
                    resp["ProducerId"],
                    resp["ProducerEpoch"],
                    tuple(refusals),
                    round((time.monotonic() - t0) * 1000, 1),
                    int(time.time() * 1000),
                )
            refusals.append(_error_name(err))
            return None if err == COORDINATOR_LOAD_IN_PROGRESS else err

        answer = wait_until(
            attempt,
            timeout=retry_for,
            interval=RETRY_INTERVAL,
            what=f"broker {broker} to grant a producer id (InitProducerId)",
            hint="A broker answers COORDINATOR_LOAD_IN_PROGRESS until the controller granted it a block.",
        )
        if isinstance(answer, Grant):
            return answer
        assert answer is not None  # wait_until returns only a truthy answer
        raise EoslabError(f"Broker {broker} refused InitProducerId with {_error_name(answer)} ({answer}).")

    def burn(self, broker: int, n: int) -> list[Grant]:
        """``n`` producer ids from ``broker``, as fast as one connection allows (ids are never reused)."""
        return [self.init(broker) for _ in range(n)]

    def close(self) -> None:
        for conn in self._conns.values():
            conn.close()
        self._conns.clear()

    def __enter__(self) -> PidClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _error_name(code: int) -> str:
    from confluent_kafka import KafkaError

    try:
        return str(KafkaError(code).name())
    except Exception:  # noqa: BLE001 - an unknown code keeps its number
        return f"ERROR_{code}"


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


def current_block(cluster: Cluster, broker: int) -> ins.ProducerIdBlock:
    """The newest block the controller granted to ``broker``."""
    mine = [b for b in ins.producer_id_blocks(cluster) if b.broker_id == broker and b.source == "log"]
    if not mine:
        raise EoslabError(f"Broker {broker} has never been granted a block: ask it for a producer id first.")
    return mine[-1]


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
    refusals: int  # COORDINATOR_LOAD_IN_PROGRESS answers while crossing the boundary


def measure_prefetch(cluster: Cluster, client: PidClient, broker: int, overshoot: int = 20) -> Prefetch:
    """Burn through the rest of ``broker``'s block (and ``overshoot`` more), then line the grants up
    with the append time of the controller's next ProducerIdsRecord for that broker.

    Approximate by design: the record's time is the controller's append time, a grant's the
    client's receive time.
    """
    current = current_block(cluster, broker)
    issued = client.init(broker).producer_id - current.first_producer_id + 1
    burst = client.burn(broker, PRODUCER_ID_BLOCK_SIZE - issued + overshoot)
    time.sleep(1.0)  # the controller records the grant asynchronously
    nxt = current_block(cluster, broker)
    before = sum(1 for g in burst if g.at_ms <= nxt.append_time_ms and g.producer_id < current.next_producer_id)
    return Prefetch(broker, current, nxt, issued + before, sum(len(g.refusals) for g in burst))


def transactional_grants(cluster: Cluster, prefix: str, brokers: tuple[int, ...] = (1, 3)) -> pd.DataFrame:
    """For each broker, a transactional id it coordinates, a real librdkafka producer initialised with
    it, and the block its producer id came from (it should be the coordinator's)."""
    import pandas as pd

    candidates = [f"{prefix}-txn-{i}" for i in range(200)]
    predicted = ins.predict_coordinators(cluster, candidates)  # abs(hash) % 50 -> that partition's leader
    chosen = {b: next(c.key for c in predicted if c.predicted == b) for b in brokers}
    confirmed = {c.key: c.reported for c in ins.coordinators(cluster, list(chosen.values()))}  # FindCoordinator
    rows = []
    for tid in chosen.values():
        p = ins.ObservedProducer({"bootstrap.servers": cluster.bootstrap_servers(), "transactional.id": tid})
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
