"""Plausible wrong answers to lab 05 (see tests/integration/test_wrong_answers.py):
(task, what is wrong, the code a learner would type in the answer cell, regex the failure must match).

The answer cell is examples/eos_loop.py's shape: ``consumer_settings``, ``producer_settings``, ``next_offsets``,
``retried``, ``rewind``, ``process`` and ``run(pipe)``. Each row is the solution with one piece wrong (:func:`answer`
puts the pieces together). The learner's own choices of settings and offsets: auto commit left on, input read with
read_uncommitted, no transactional.id, the last record's offset committed instead of the next one's, no offsets
sent at all. The loop's: offsets committed outside the transaction; abort, rewind and reprocess after a commit
timeout; no rewind after an abort; on _FENCED a new producer with the same transactional.id that carries on; group
metadata fetched once (at the start, or after the first poll); abortable errors treated as fatal, or retried like
retriable ones; a loop that returns after one batch; and answers that call the kit's own loop or classifier.
"""

CONSUMER = """
def consumer_settings(bootstrap_servers, group):
    return {
        "bootstrap.servers": bootstrap_servers,
        "group.id": group,
        "enable.auto.commit": False,
        "isolation.level": "read_committed",
        "auto.offset.reset": "earliest",
    }
"""

PRODUCER = """
def producer_settings(bootstrap_servers, transactional_id):
    return {"bootstrap.servers": bootstrap_servers, "transactional.id": transactional_id}
"""

NEXT_OFFSETS = """
def next_offsets(records):
    nxt = {}
    for r in records:
        key = (r.topic(), r.partition())
        nxt[key] = max(nxt.get(key, 0), r.offset() + 1)
    return [TopicPartition(t, p, o) for (t, p), o in sorted(nxt.items())]
"""

RETRIED = """
def retried(call):
    while True:
        try:
            return call()
        except KafkaException as e:
            err = e.args[0]
            if err.fatal() or err.txn_requires_abort() or not err.retriable():
                raise
"""

REWIND_FN = """
def rewind(consumer):
    assigned = consumer.assignment()
    if assigned:
        for tp in consumer.committed(assigned, 10):
            consumer.seek(TopicPartition(tp.topic, tp.partition, tp.offset if tp.offset >= 0 else OFFSET_BEGINNING))
"""

_PROCESS = """
def process(consumer, producer, records, pipe):
    try:
        retried(producer.begin_transaction)
        for r in records:
            producer.produce(pipe.output, pipe.output_value(r), r.key())
        {offsets}
        {commit}
    except KafkaException as e:
        err = e.args[0]
{handler}
"""

_OFFSETS = "retried(lambda: producer.send_offsets_to_transaction(next_offsets(records), {metadata}))"
_HANDLER = """        if err.fatal() or not err.txn_requires_abort():
            raise
        retried(producer.abort_transaction)
        rewind(consumer)"""

_RUN = """
def run(pipe):
    consumer = pipe.consumer(consumer_settings(pipe.bootstrap_servers, pipe.group))
    producer = pipe.producer(producer_settings(pipe.bootstrap_servers, pipe.transactional_id))
    consumer.subscribe([pipe.input])
    retried(producer.init_transactions)
{before}    while not pipe.stopping:
        records = [m for m in consumer.consume(20, 0.5) if m.error() is None]
        if records:
{first}            {call}
"""


def process(
    *,
    offsets: str = _OFFSETS.format(metadata="consumer.consumer_group_metadata()"),
    commit: str = "retried(producer.commit_transaction)",
    handler: str = _HANDLER,
) -> str:
    return _PROCESS.format(offsets=offsets, commit=commit, handler=handler)


def run(*, before: str = "", first: str = "", call: str = "process(consumer, producer, records, pipe)") -> str:
    return _RUN.format(before=before, first=first, call=call)


def answer(
    *,
    consumer: str = CONSUMER,
    producer: str = PRODUCER,
    next_offsets: str = NEXT_OFFSETS,
    retried: str = RETRIED,
    process_: str | None = None,
    run_: str | None = None,
    extra: str = "",
) -> str:
    """The solution's pieces, one or more of them replaced by a wrong one."""
    pieces = [consumer, producer, next_offsets, retried, REWIND_FN, process_ or process(), run_ or run(), extra]
    return "\n".join(p.strip("\n") + "\n" for p in pieces if p)


# -- the learner's settings and offsets (task 1) ----------------------------------------------------------------

AUTO_COMMIT_LEFT_ON = answer(
    consumer="""
def consumer_settings(bootstrap_servers, group):
    return {  # enable.auto.commit not set: librdkafka's default, true
        "bootstrap.servers": bootstrap_servers,
        "group.id": group,
        "isolation.level": "read_committed",
        "auto.offset.reset": "earliest",
    }
"""
)

READ_UNCOMMITTED_INPUT = answer(
    consumer="""
def consumer_settings(bootstrap_servers, group):
    return {
        "bootstrap.servers": bootstrap_servers,
        "group.id": group,
        "enable.auto.commit": False,
        "isolation.level": "read_uncommitted",  # as the Java client does by default
        "auto.offset.reset": "earliest",
    }
"""
)

NO_TRANSACTIONAL_ID = answer(
    producer="""
def producer_settings(bootstrap_servers, transactional_id):
    return {"bootstrap.servers": bootstrap_servers, "enable.idempotence": True, "acks": "all"}
"""
)

OFFSETS_OF_THE_LAST_RECORD = answer(
    next_offsets="""
def next_offsets(records):
    last = {(r.topic(), r.partition()): r.offset() for r in records}  # the offset of the last record read
    return [TopicPartition(t, p, o) for (t, p), o in last.items()]
"""
)

NO_OFFSETS_SENT = answer(process_=process(offsets="pass  # the outputs are enough"))

OFFSETS_OUTSIDE = answer(
    process_=process(
        offsets="pass",
        commit="retried(producer.commit_transaction)\n"
        "        consumer.commit(offsets=next_offsets(records), asynchronous=False)  # after: outside the txn",
    )
)

ONE_BATCH = answer(
    run_="""
def run(pipe):
    consumer = pipe.consumer(consumer_settings(pipe.bootstrap_servers, pipe.group))
    producer = pipe.producer(producer_settings(pipe.bootstrap_servers, pipe.transactional_id))
    consumer.subscribe([pipe.input])
    retried(producer.init_transactions)
    records = []
    while not records:
        records = [m for m in consumer.consume(20, 0.5) if m.error() is None]
    process(consumer, producer, records, pipe)
"""
)

# -- the loop's error handling (tasks 2 and 3) ------------------------------------------------------------------

NO_REWIND = answer(
    process_=process(
        handler="""        if err.fatal() or not err.txn_requires_abort():
            raise
        retried(producer.abort_transaction)  # ... and on with the next poll, from where the consumer is"""
    )
)

ABORT_AFTER_COMMIT_TIMEOUT = answer(
    process_=process(
        commit="producer.commit_transaction()",
        handler="""        if err.fatal():
            raise
        producer.abort_transaction()  # a commit that timed out: abort, rewind, redo the batch
        rewind(consumer)""",
    )
)

ABORTABLE_AS_RETRIABLE = answer(
    retried="""
import time


def retried(call):
    while True:
        try:
            return call()
        except KafkaException as e:
            if e.args[0].fatal():
                raise
            time.sleep(0.2)  # not fatal, so it will pass: the same call again
"""
)

ABORTABLE_AS_FATAL = answer(process_=process(handler="""        raise  # any error: stop, let a restart sort it out"""))

NEW_PRODUCER_ON_FENCED = answer(
    process_=process(
        handler="""        if err.code() == KafkaError._FENCED or err.fatal():
            raise  # run() makes a new producer
        retried(producer.abort_transaction)
        rewind(consumer)"""
    ),
    run_="""
def run(pipe):
    consumer = pipe.consumer(consumer_settings(pipe.bootstrap_servers, pipe.group))
    producer = pipe.producer(producer_settings(pipe.bootstrap_servers, pipe.transactional_id))
    consumer.subscribe([pipe.input])
    retried(producer.init_transactions)
    while not pipe.stopping:
        records = [m for m in consumer.consume(20, 0.5) if m.error() is None]
        if records:
            try:
                process(consumer, producer, records, pipe)
            except KafkaException:  # fenced: same transactional.id, start over and carry on
                producer = pipe.producer(producer_settings(pipe.bootstrap_servers, pipe.transactional_id))
                retried(producer.init_transactions)
                rewind(consumer)
""",
)

_STALE = _OFFSETS.format(metadata="metadata")

METADATA_ONCE_AT_START = answer(
    process_=process(offsets=_STALE).replace("def process(consumer, producer, records, pipe):",
                                             "def process(consumer, producer, records, pipe, metadata):"),
    run_=run(before="    metadata = consumer.consumer_group_metadata()\n",
             call="process(consumer, producer, records, pipe, metadata)"),
)  # fmt: skip

METADATA_ONCE_AFTER_FIRST_POLL = answer(
    process_=process(offsets=_STALE).replace("def process(consumer, producer, records, pipe):",
                                             "def process(consumer, producer, records, pipe, metadata):"),
    run_=run(before="    metadata = None\n",
             first="            metadata = metadata or consumer.consumer_group_metadata()\n",
             call="process(consumer, producer, records, pipe, metadata)"),
)  # fmt: skip

OFFSETS = r"consumer\.commit\(\) are outside the transaction"
NO_OFFSETS = r"committed the outputs but not the inputs' offsets"
RUN = r"must loop until pipe\.stopping"
REWIND = r"rewind\(consumer\) seeks back"
ABORT = r"abortable error .* means: producer\.abort_transaction\(\)"
RETRY = r"call the SAME function again"
FENCED = r"_FENCED \(fatal\) means a newer producer"
NEXT = r"the NEXT one to read"
METADATA = r"consumer_group_metadata\(\) right before EVERY"
AUTO_COMMIT = r"enable\.auto\.commit is on"
ISOLATION = r"isolation\.level=read_uncommitted"
TRANSACTIONAL_ID = r"the producer has no transactional\.id"

KIT = r"compute this yourself: do not (call|use) {}"
"""A kit function that computes the answer, refused from the answer cell's source before any work."""

KIT_CLASSIFIER = answer(
    process_=process(
        handler="""        if classify(err) is not Action.ABORT:
            raise
        retried(producer.abort_transaction)
        rewind(consumer)"""
    ),
    extra="from eoslab.demos.pipeline import Action, classify\n",
)

THE_KITS_OWN_BATCH = answer(
    run_="""
def run(pipe):
    consumer = pipe.consumer(consumer_settings(pipe.bootstrap_servers, pipe.group))
    consumer.subscribe([pipe.input])
    while not pipe.stopping:
        records = [m for m in consumer.consume(20, 0.5) if m.error() is None]
        if records:
            pipe._proc.batch += 1
            pipe._proc.eos_batch(records)
"""
)

ROWS = [
    ("t1", "enable.auto.commit left on", AUTO_COMMIT_LEFT_ON, AUTO_COMMIT),
    ("t1", "the input read with read_uncommitted", READ_UNCOMMITTED_INPUT, ISOLATION),
    ("t1", "a producer without a transactional.id", NO_TRANSACTIONAL_ID, TRANSACTIONAL_ID),
    ("t1", "the offset of the last record committed not the next", OFFSETS_OF_THE_LAST_RECORD, NEXT),
    ("t1", "no offsets sent in the transaction", NO_OFFSETS_SENT, NO_OFFSETS),
    ("t1", "offsets committed by the consumer after the transaction", OFFSETS_OUTSIDE, OFFSETS),
    ("t1", "one batch then return", ONE_BATCH, RUN),
    ("t2", "no rewind after an abort", NO_REWIND, REWIND),
    ("t2", "abortable errors treated as fatal", ABORTABLE_AS_FATAL, ABORT),
    ("t2", "abortable errors retried like retriable ones", ABORTABLE_AS_RETRIABLE, ABORT),
    ("t2", "abort rewind and reprocess after a commit timeout", ABORT_AFTER_COMMIT_TIMEOUT, RETRY),
    ("t3", "on fenced a new producer with the same id carries on", NEW_PRODUCER_ON_FENCED, FENCED),
    ("t3", "group metadata fetched once at start", METADATA_ONCE_AT_START, METADATA),
    ("t3", "group metadata fetched once after the first poll", METADATA_ONCE_AFTER_FIRST_POLL, METADATA),
    ("t1", "the kit's own batch behind pipe", THE_KITS_OWN_BATCH, KIT.format(r"pipe\._proc")),
    ("t2", "the pipeline's error classifier", KIT_CLASSIFIER, KIT.format(r"eoslab\.demos\.pipeline\.classify")),
    ("t3", "the pipeline's error classifier", KIT_CLASSIFIER, KIT.format(r"eoslab\.demos\.pipeline\.classify")),
]
