"""A learner's processor loop, run as module 05's pipeline process (``PipelineProcess(..., loop=...)``).

The learner writes ONE function, ``def run(pipe): ...``: the transaction and its error handling. The
child process (:mod:`eoslab.demos.pipeline.child`) builds the clients and a :class:`Pipe`, then calls
it. What the checker needs is recorded by the pipe, not by the learner's code, so a loop cannot write
a history that did not happen:

- ``pipe.send(records)`` makes and sends one output per input, waits for every delivery report and
  records the polls and the sends (who, which transaction, where it landed);
- ``pipe.producer`` is the transactional producer; its transactional calls are recorded as they
  return (``commit_transaction`` -> a commit of the offsets given to ``send_offsets_to_transaction``
  in that transaction, ``abort_transaction`` -> an abort, with the error that caused it);
- ``pipe.consumer`` is the consumer; a plain ``commit()`` is recorded as an offset commit outside
  any transaction.

A fenced or fatal error raised by any producer call is also written to the process's stderr as one
``pipe-event fenced <time> <error>`` line (:data:`FENCED_EVENT`), so a grader can tell what a
process did after it was fenced.

``load_loop("path/to/file.py:run")`` or ``load_loop("package.module:run")`` imports the function;
:func:`write_loop` writes a function defined in a notebook cell to such a file (its source, after
:data:`LOOP_HEADER`'s imports).
"""

from __future__ import annotations

import builtins
import dis
import importlib
import importlib.util
import inspect
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from types import CodeType
from typing import Any, Protocol

from confluent_kafka import KafkaException, Message, Producer, TopicPartition

from eoslab.demos.pipeline._parts import FENCED, PipelineError, abort_reason
from eoslab.history import HistoryWriter


class Processor(Protocol):
    """What a :class:`Pipe` needs of the process running it (``_child.Processor``)."""

    args: Any
    consumer: Any
    producer: Producer
    h: HistoryWriter
    stopping: bool
    batch: int
    delivery_error: str

    def poll_batch(self) -> list[Message]: ...
    def produce_batch(self, msgs: list[Message], txn: int | None) -> list[TopicPartition]: ...
    def die_if(self, point: str) -> None: ...
    def rewind(self) -> None: ...


LOOP_HEADER = (
    "import time\n\nfrom confluent_kafka import KafkaError, KafkaException, TopicPartition\n",
    ("time", "KafkaError", "KafkaException", "TopicPartition"),
)
"""What a loop written from a notebook can use besides builtins and its own imports: the header of the
file :func:`write_loop` writes, and the names it binds. The loop runs in ANOTHER process, so names
defined elsewhere in the notebook do not exist there."""

CALL_TIMEOUT = 5.0
"""``send_offsets_to_transaction`` and ``commit_transaction`` give up after this many seconds (a
larger timeout is cut to it): a processor must keep serving its consumer and notice SIGTERM, and the
course's faults (a lost EndTxn response, a coordinator down) last longer, so a loop meets the
timeout and must decide what to do with it (retry the same call). librdkafka resends a request whose
response never came after socket.timeout.ms, derived from transaction.timeout.ms (20 s) here."""

FENCED_EVENT = "pipe-event fenced"
"""The start of the stderr line a pipe writes when a producer call raised a fenced or fatal error."""


def _kafka_error(exc: BaseException) -> Any:
    return exc.args[0] if isinstance(exc, KafkaException) and exc.args else None


class TxnProducer:
    """The processor's transactional producer (confluent-kafka's ``Producer``), its calls recorded.

    Every other attribute (``poll``, ``flush``, ``len()``) is the producer's own."""

    def __init__(self, pipe: Pipe, producer: Producer) -> None:
        self._pipe, self._producer = pipe, producer

    def __getattr__(self, name: str) -> Any:
        return getattr(self._producer, name)

    def __len__(self) -> int:
        return len(self._producer)

    def _call(self, fn: Callable[[], Any]) -> Any:
        try:
            return fn()
        except KafkaException as e:
            self._pipe._failed(_kafka_error(e))
            raise

    def init_transactions(self, timeout: float | None = None) -> None:
        args = () if timeout is None else (timeout,)
        self._call(lambda: self._producer.init_transactions(*args))

    def begin_transaction(self) -> None:
        self._call(self._producer.begin_transaction)
        self._pipe._begun()

    def send_offsets_to_transaction(
        self, positions: list[TopicPartition], group_metadata: Any, timeout: float | None = None
    ) -> None:
        t = CALL_TIMEOUT if timeout is None or timeout < 0 else min(timeout, CALL_TIMEOUT)
        self._call(lambda: self._producer.send_offsets_to_transaction(positions, group_metadata, t))
        self._pipe._offsets_sent(positions)

    def commit_transaction(self, timeout: float | None = None) -> None:
        t = CALL_TIMEOUT if timeout is None or timeout < 0 else min(timeout, CALL_TIMEOUT)
        self._call(lambda: self._producer.commit_transaction(t))
        self._pipe._committed()

    def abort_transaction(self, timeout: float | None = None) -> None:
        args = () if timeout is None else (timeout,)
        self._call(lambda: self._producer.abort_transaction(*args))
        self._pipe._aborted()


class RecordingConsumer:
    """The processor's consumer (confluent-kafka's ``Consumer``); a plain ``commit()`` is recorded."""

    def __init__(self, pipe: Pipe, consumer: Any) -> None:
        self._pipe, self._consumer = pipe, consumer

    def __getattr__(self, name: str) -> Any:
        return getattr(self._consumer, name)

    def commit(self, *args: Any, **kwargs: Any) -> Any:
        out = self._consumer.commit(*args, **kwargs)
        offsets = kwargs.get("offsets") or (args[1] if len(args) > 1 else None)
        message = kwargs.get("message") or (args[0] if args else None)
        if offsets is None and message is not None:
            offsets = [TopicPartition(message.topic(), message.partition(), message.offset() + 1)]
        if offsets is None:  # the consumer's positions: what it committed
            offsets = self._consumer.position(self._consumer.assignment())
        self._pipe._plain_commit(offsets)
        return out


class Pipe:
    """What a learner's loop gets: the clients, the batch helpers, and whether to stop.

    ``poll()`` -> up to 20 input records (``[]`` when none came within half a second);
    ``send(records)`` -> the offsets to commit for them (a ``TopicPartition`` per input partition, at
    the next offset to read) once every output is acknowledged, or failed: a failed delivery makes
    the transaction's next call raise an abortable error; ``rewind()`` seeks every assigned partition
    back to its committed offset; ``new_producer()`` replaces ``producer`` with a fresh one of the same
    ``transactional.id`` (not yet initialised); ``stopping`` turns true on SIGTERM."""

    def __init__(self, processor: Processor, make_producer: Callable[[], Producer]) -> None:
        self._proc = processor
        self._make_producer = make_producer
        self.consumer = RecordingConsumer(self, processor.consumer)
        self.producer = TxnProducer(self, processor.producer)
        self.transactional_id: str = processor.args.transactional_id
        self.txn = 0
        """Transactions begun so far by this process (the current one's number)."""
        self._in_txn = False
        self._txn_offsets: dict[tuple[str, int], int] = {}
        self._last_error = ""
        self._cause = ""  # the transaction's first failed delivery: what made it abortable

    @property
    def stopping(self) -> bool:
        return self._proc.stopping

    def poll(self) -> list[Message]:
        return self._proc.poll_batch()

    def send(self, records: list[Message]) -> list[TopicPartition]:
        if not records:
            return []
        self._proc.batch += 1  # the hooks count batches sent (``after-produce:2``: the second send)
        offsets = self._proc.produce_batch(list(records), self.txn if self._in_txn else None)
        self._cause = self._cause or self._proc.delivery_error
        self._proc.die_if("after-produce")
        return offsets

    def rewind(self) -> None:
        self._proc.rewind()

    def new_producer(self) -> TxnProducer:
        self.producer = TxnProducer(self, self._make_producer())
        self._proc.producer = self.producer._producer
        self._in_txn = False
        return self.producer

    # -- what the wrappers record -----------------------------------------------------------
    def _failed(self, err: Any) -> None:
        if err is None:
            return
        self._last_error = f"{err.name()}: {err.str()}"
        if err.fatal() or err.name() in FENCED:
            print(f"{FENCED_EVENT} {time.time():.3f} {self._last_error}", file=sys.stderr, flush=True)

    def _begun(self) -> None:
        self.txn += 1
        self._in_txn = True
        self._txn_offsets = {}
        self._last_error = self._cause = ""

    def _offsets_sent(self, positions: list[TopicPartition]) -> None:
        self._txn_offsets.update({(tp.topic, tp.partition): tp.offset for tp in positions})
        self._proc.die_if("after-offsets")

    def _offsets(self, table: dict[tuple[str, int], int]) -> list[TopicPartition]:
        return [TopicPartition(t, p, o) for (t, p), o in sorted(table.items())]

    def _committed(self) -> None:
        if self._in_txn:
            self._proc.h.committed(self.txn, self._offsets(self._txn_offsets), transactional_id=self.transactional_id)
        self._in_txn = False
        self._proc.die_if("after-commit")

    def _aborted(self) -> None:
        if self._in_txn:
            reason = abort_reason(self._last_error or "aborted by the processor", self._cause)
            self._proc.h.aborted(self.txn, reason, transactional_id=self.transactional_id)
        self._in_txn = False

    def _plain_commit(self, offsets: list[TopicPartition]) -> None:
        self._proc.h.committed(None, [tp for tp in offsets if tp.offset >= 0])


# -- getting the learner's function into the child -------------------------------------------------


def load_loop(spec: str) -> Callable[[Pipe], Any]:
    """The function ``spec`` names: ``"path/to/file.py:function"`` or ``"package.module:function"``."""
    where, sep, name = spec.rpartition(":")
    if not sep or not where or not name.isidentifier():
        raise PipelineError(f"loop={spec!r}: give 'path/to/file.py:function' or 'package.module:function'.")
    try:
        if where.endswith(".py"):
            path = Path(where)
            if not path.is_file():
                raise PipelineError(f"loop={spec!r}: there is no file {path}; write it first (write_loop does).")
            module_spec = importlib.util.spec_from_file_location(f"eoslab_loop_{path.stem}", path)
            if module_spec is None or module_spec.loader is None:
                raise PipelineError(f"loop={spec!r}: {path} cannot be imported as Python.")
            module = importlib.util.module_from_spec(module_spec)
            module_spec.loader.exec_module(module)
        else:
            module = importlib.import_module(where)
    except SyntaxError as e:
        raise PipelineError(
            f"loop={spec!r}: line {e.lineno}: {e.msg}: fix the function and run its cell again."
        ) from None
    fn = getattr(module, name, None)
    if not callable(fn):
        raise PipelineError(f"loop={spec!r}: {where} has no function {name!r}.")
    return fn  # type: ignore[no-any-return]


def _globals_loaded(code: CodeType) -> set[str]:
    """The global names a function's code (and the functions nested in it) reads: what another
    process must also have. Attributes (``pipe.producer``) and the function's own locals are not."""
    names = {i.argval for i in dis.get_instructions(code) if i.opname in ("LOAD_GLOBAL", "LOAD_NAME")}
    for const in code.co_consts:
        if isinstance(const, CodeType):
            names |= _globals_loaded(const)
    return {str(n) for n in names}


def write_loop(fn: Callable[..., Any], folder: str | Path) -> str:
    """Write ``fn``'s source (a function defined in a notebook cell or a file) to ``folder`` after
    :data:`LOOP_HEADER`; the ``loop=`` spec naming it. Fails, saying which, when the function uses a
    global name the other process will not have (a notebook variable, a helper from another cell)."""
    if not inspect.isfunction(fn):
        raise PipelineError(f"{fn!r} is not a function: pass the function itself, e.g. loop=run (no parentheses).")
    try:
        source = textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError):
        raise PipelineError(
            f"The source of {fn.__name__} cannot be found: define it with 'def' in a cell and run that cell."
        ) from None
    header, bound = LOOP_HEADER
    unknown = sorted(n for n in _globals_loaded(fn.__code__) - set(bound) - {fn.__name__} if not hasattr(builtins, n))
    if unknown:
        raise PipelineError(
            f"{fn.__name__} uses {', '.join(unknown)} from the notebook, but it runs in another process: "
            f"define or import them inside the function (available there: {', '.join(bound)})."
        )
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"loop_{fn.__name__}.py"
    path.write_text(f'"""{fn.__name__}, written by eoslab from where it was defined."""\n\n{header}\n\n{source}')
    return f"{path}:{fn.__name__}"
