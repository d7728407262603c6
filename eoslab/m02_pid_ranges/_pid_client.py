"""The kit's own raw requests of module 02: InitProducerId to a CHOSEN broker, and a Produce under a chosen id.

librdkafka sends a non-transactional InitProducerId to a broker of its own choosing; the lesson about which
broker granted which id sends its own, through the broker's fault-proxy front (the trace records them).
The module opens on what unique ids prevent: a second writer under another producer's id and epoch, which no
client lets a learner make (:func:`write_as`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from eoslab._ports import LOOPBACK
from eoslab._wait import wait_until
from eoslab.demos import PRODUCE_VERSION as PRODUCE_VERSION  # the version write_as sends
from eoslab.demos import produce_raw, produce_request
from eoslab.errors import ClusterError
from eoslab.faults import error_name
from eoslab.protocol import KafkaConnection, encode_record_batch

if TYPE_CHECKING:
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

    def __str__(self) -> str:
        """``broker 3 granted producer id 5000, epoch 0 after 2 refusals (COORDINATOR_LOAD_IN_PROGRESS) in 95 ms``."""
        n = len(self.refusals)
        waited = f" after {n} refusal{'s' * (n != 1)} ({', '.join(sorted(set(self.refusals)))})" if n else ""
        return (
            f"broker {self.broker} granted producer id {self.producer_id}, epoch {self.producer_epoch}{waited} "
            f"in {self.elapsed_ms:.0f} ms"
        )

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(str(self))  # a cell's result reads as the sentence, repr() keeps the fields


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
            refusals.append(error_name(err))
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
        raise ClusterError(f"Broker {broker} refused InitProducerId with {error_name(answer)} ({answer}).")

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


@dataclass(frozen=True)
class Write:
    """What the leader told a raw writer: ``error`` None as in a delivery report when it answered NONE,
    else Kafka's name (``OUT_OF_ORDER_SEQUENCE_NUMBER``); ``offset`` the base offset it answered (-1 with an error)."""

    producer_id: int
    producer_epoch: int
    sequence: int
    value: str
    error: str | None
    offset: int


def produce_body(
    topic: str, partition: int, value: str, *, producer_id: int, producer_epoch: int, sequence: int
) -> dict[str, Any]:
    """A Produce v9 body (acks=all) of one idempotent, non-transactional batch holding one record ``value``."""
    batch = encode_record_batch(
        [value.encode()], producer_id=producer_id, producer_epoch=producer_epoch, base_sequence=sequence
    )
    return produce_request(topic, partition, batch)


def answered(response: dict[str, Any], value: str, *, producer_id: int, producer_epoch: int, sequence: int) -> Write:
    """The :class:`Write` of a decoded Produce response to :func:`produce_body` (one topic, one partition)."""
    part = response["Responses"][0]["PartitionResponses"][0]
    code: int = part["ErrorCode"]
    return Write(producer_id, producer_epoch, sequence, value, error_name(code) if code else None, part["BaseOffset"])


def write_as(
    cluster: Cluster,
    topic: str,
    partition: int,
    value: str,
    *,
    producer_id: int,
    producer_epoch: int,
    sequence: int,
    client_id: str = "eoslab-second-writer",
) -> Write:
    """Write one record ``value`` to the partition's leader as (``producer_id``, ``producer_epoch``, ``sequence``).

    What a second writer holding another producer's id would send; no client lets you choose the id, so the
    kit sends it raw, through the proxy (the trace records it under ``client_id``). The leader checks the
    batch against its producer state for that id (KIP-98): a batch whose epoch and sequence range equal one of
    the id's last 5 batches is taken for a retry of it and answered NONE with THAT batch's offset, without
    being written (``ProducerStateEntry.findDuplicateBatch``); a sequence that is not the next one and not in
    those 5 is refused with OUT_OF_ORDER_SEQUENCE_NUMBER (``ProducerAppendInfo.checkSequence``).

    Returns the leader's answer as a :class:`Write`; a broker error is in ``.error``, not raised. Raises
    :class:`eoslab.protocol.KafkaConnectionError` when the leader's proxy front cannot be reached.
    """
    body = produce_body(
        topic, partition, value, producer_id=producer_id, producer_epoch=producer_epoch, sequence=sequence
    )
    resp = produce_raw(cluster, topic, partition, body, client_id)
    return answered(resp, value, producer_id=producer_id, producer_epoch=producer_epoch, sequence=sequence)
