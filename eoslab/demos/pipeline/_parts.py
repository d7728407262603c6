"""The pure pieces of module 05's pipeline: the transform, the output value format, the error classes.

Both processors (:mod:`eoslab.demos.pipeline.child`) use them, and the unit tests pin them down
without a cluster:

- :func:`transform` is the work itself (upper-case the value): deterministic, so two outputs of
  one input differ only in who sent them;
- :func:`output_value` makes every send's value unique and traceable: it names the input record
  (topic, partition, offset), the process that sent it and that process's send counter, so a
  duplicate is two different values with the same origin, never one value counted twice;
- :func:`classify` sorts a librdkafka error into what the processor does next, in the order
  librdkafka's transactional API documents: a fatal error (the producer is fenced or broken) wins
  over everything; an abortable one (``txn_requires_abort()``) means abort and rewind; a retriable
  one means call the same function again (a timed-out ``commit_transaction`` is retried, never
  aborted: the commit may already be durable).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any

from eoslab.errors import ClientError
from eoslab.history import Position

SEPARATOR = "|"
"""Between the parts of an output value; never in a topic name (Kafka allows ``[a-zA-Z0-9._-]``)."""


class PipelineError(ClientError):
    """A processor that cannot start, ran into a fatal error, or a value that is not the pipeline's."""


class Action(str, Enum):
    """What the processor does after a failed call."""

    RETRY = "retry"
    """A retriable error: call the same function again (same transaction, same records)."""
    ABORT = "abort"
    """An abortable error: ``abort_transaction``, seek the consumer back to the committed offsets, go on."""
    STOP = "stop"
    """Fatal (fenced, broken producer) or an error the processor does not know: exit, say why."""


FENCED = frozenset({"_FENCED", "PRODUCER_FENCED", "INVALID_PRODUCER_EPOCH", "TRANSACTIONAL_ID_AUTHORIZATION_FAILED"})
"""librdkafka raises ``_FENCED`` (fatal) when a newer producer with the same ``transactional.id``
bumped the epoch; the broker's own names for it come through on some calls."""


def classify(err: Any) -> Action:
    """The action for a ``KafkaError`` (the ``args[0]`` of a ``KafkaException``), by its flags."""
    if err.fatal() or err.name() in FENCED:
        return Action.STOP
    if err.txn_requires_abort():
        return Action.ABORT
    if err.retriable():
        return Action.RETRY
    return Action.STOP


def abort_reason(raised: str, delivery: str) -> str:
    """What an abort records as its cause: the transaction's first failed delivery when it had one
    (``delivery``, "NAME: text"), else the error the call raised (``raised``).

    A failed delivery is what makes the transaction abortable, but librdkafka moves the transaction
    to its abortable state on its own thread, after the delivery report may already have reached the
    application: the next call then fails either with the delivery's own error or, when it had begun
    before the state changed, with ``_STATE`` ("Failed to commit offsets to transaction ... Erroneous
    state"). The cause is the same either way, so it is the one recorded; the raised error is kept
    beside it."""
    if not delivery or delivery == raised:
        return raised
    return f"{delivery} (raised as {raised})"


def transform(value: str | None) -> str:
    """The pipeline's work on one input value."""
    return (value or "").upper()


@dataclass(frozen=True)
class Output:
    """What an output value says: the input it was made from, the sender and its send counter, the result."""

    source: Position
    process: str
    seq: int
    result: str


def output_value(source: Position, process: str, seq: int, value: str | None) -> str:
    """The value a processor sends for input ``source`` holding ``value``: unique per send (``process``
    is unique per incarnation, ``seq`` counts its sends)."""
    if SEPARATOR in process:
        raise PipelineError(f"The process name {process!r} holds {SEPARATOR!r}: choose one without it.")
    return SEPARATOR.join(
        [source.topic, str(source.partition), str(source.offset), process, str(seq), transform(value)]
    )


def parse_output(value: str) -> Output:
    """The parts of an :func:`output_value` (the result may itself hold the separator)."""
    parts = value.split(SEPARATOR, 5)
    if len(parts) != 6:
        raise PipelineError(f"{value[:60]!r} is not a pipeline output (topic|partition|offset|process|seq|result).")
    topic, partition, offset, process, seq, result = parts
    try:
        return Output(Position(topic, int(partition), int(offset)), process, int(seq), result)
    except ValueError:
        raise PipelineError(
            f"{value[:60]!r} is not a pipeline output: partition, offset, seq must be numbers."
        ) from None


def origin_of(value: str | None) -> Position | None:
    """The input record an output value was made from (``None`` for a value that is not the pipeline's):
    the checker's ``origin=``, for outputs whose writer was killed before it heard they were written."""
    if value is None:
        return None
    try:
        return parse_output(value).source
    except PipelineError:
        return None


MODES = ("eos", "alo")
"""``eos``: outputs and input offsets in one transaction; ``alo``: at-least-once, offsets committed
after the outputs are acknowledged."""
GROUP_PROTOCOLS = ("classic", "consumer")
"""The processors' consumer group protocol (librdkafka's ``group.protocol``): the classic one (librdkafka's
default: the member's own ``session.timeout.ms``, the generation in its group metadata), or KIP-848's
(``consumer``, librdkafka >= 2.12 and Kafka 4.0+: the broker sets the session, the member epoch is in the
metadata)."""

DIE_POINTS = {
    "after-produce": "the batch's outputs are acknowledged (flushed); its input offsets are not committed "
    "(eos: the transaction is open, nothing sent to the transaction coordinator about offsets)",
    "after-offsets": "eos only: the offsets are in the transaction (send_offsets_to_transaction returned), "
    "commit_transaction not called",
    "after-commit": "the batch is committed (eos: commit_transaction returned; alo: the offset commit "
    "returned), the next batch not polled",
}
"""Where ``--die-at POINT:N`` makes a processor SIGKILL itself, at its N-th batch (and ``--stall-at``
makes it sleep past its transaction timeout): a fault at a known place, so a test cannot pass by luck
of timing."""


def parse_die_at(spec: str | None) -> tuple[str, int] | None:
    """``"after-produce:3"`` -> ``("after-produce", 3)``; ``None`` stays ``None``."""
    if spec is None:
        return None
    point, _, n = spec.partition(":")
    if point not in DIE_POINTS or not n.isdigit() or int(n) < 1:
        raise PipelineError(
            f"--die-at/--stall-at {spec!r}: use POINT:N with POINT one of {sorted(DIE_POINTS)} and N >= 1."
        )
    return point, int(n)
