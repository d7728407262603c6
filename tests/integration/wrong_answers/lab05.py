"""Plausible wrong answers to lab 05 (see tests/integration/test_wrong_answers.py):
(task, what is wrong, the body a learner would type in ``run(pipe)``, regex the failure must match).

The five the issue names — offsets committed outside the transaction; abort, rewind and reprocess after a
commit timeout; no rewind after an abort; on _FENCED a new producer with the same transactional.id that
carries on; group metadata fetched once — and more: abortable errors treated as fatal, abortable errors
retried like retriable ones, metadata fetched once after the first poll (a real generation, stale after
the next rebalance), a loop that returns, the last record's offset committed instead of the next one's.
Each body starts after ``producer, consumer = pipe.producer, pipe.consumer``.
"""


def _retried(give_up: str = "not e.args[0].retriable()", before: str = "", meanwhile: str = "") -> str:
    """A learner's retry helper (raises when ``give_up``, else calls again), then init_transactions with it."""
    return f"""
{before}def retried(call):
    while True:
        try:
            return call()
        except KafkaException as e:
            if {give_up}:
                raise
{meanwhile}
retried(producer.init_transactions)
"""


_RETRIED = _retried()

OFFSETS_OUTSIDE = """
producer.init_transactions()
while not pipe.stopping:
    records = pipe.poll()
    if not records:
        continue
    producer.begin_transaction()
    offsets = pipe.send(records)
    producer.commit_transaction()
    consumer.commit(offsets=offsets, asynchronous=False)  # after the outputs are committed: outside the txn
"""

OFFSETS_OF_THE_LAST_RECORD = """
producer.init_transactions()
while not pipe.stopping:
    records = pipe.poll()
    if not records:
        continue
    producer.begin_transaction()
    pipe.send(records)
    last = {(r.topic(), r.partition()): r.offset() for r in records}  # the offset of the last record read
    offsets = [TopicPartition(t, p, o) for (t, p), o in last.items()]
    producer.send_offsets_to_transaction(offsets, consumer.consumer_group_metadata())
    producer.commit_transaction()
"""

ONE_BATCH = """
producer.init_transactions()
records = []
while not records:
    records = pipe.poll()
producer.begin_transaction()
offsets = pipe.send(records)
producer.send_offsets_to_transaction(offsets, consumer.consumer_group_metadata())
producer.commit_transaction()
"""

_LOOP = (
    _RETRIED
    + """
{before}while not pipe.stopping:
    records = pipe.poll()
    if not records:
        continue
    try:
        producer.begin_transaction()
        offsets = pipe.send(records)
        {first}retried(lambda: producer.send_offsets_to_transaction(offsets, {metadata}))
        {commit}
    except KafkaException as e:
        err = e.args[0]
{handler}
"""
)

_HANDLER = """        if err.fatal() or not err.txn_requires_abort():
            raise
        retried(producer.abort_transaction)
        pipe.rewind()"""


def _loop(
    *,
    handler: str = _HANDLER,
    commit: str = "retried(producer.commit_transaction)",
    metadata: str = "consumer.consumer_group_metadata()",
    before: str = "",
    first: str = "",
) -> str:
    return _LOOP.format(handler=handler, commit=commit, metadata=metadata, before=before, first=first)


NO_REWIND = _loop(
    handler="""        if err.fatal() or not err.txn_requires_abort():
            raise
        retried(producer.abort_transaction)  # ... and on with the next poll, from where the consumer is"""
)

ABORT_AFTER_COMMIT_TIMEOUT = _loop(
    commit="producer.commit_transaction()",
    handler="""        if err.fatal():
            raise
        producer.abort_transaction()  # a commit that timed out: abort, rewind, redo the batch
        pipe.rewind()""",
)

ABORTABLE_AS_RETRIABLE = (
    _retried(
        "e.args[0].fatal()",
        before="import time\n\n",
        meanwhile="            time.sleep(0.2)  # not fatal, so it will pass: the same call again\n",
    )
    + """while not pipe.stopping:
    records = pipe.poll()
    if not records:
        continue
    retried(producer.begin_transaction)
    offsets = pipe.send(records)
    retried(lambda: producer.send_offsets_to_transaction(offsets, consumer.consumer_group_metadata()))
    retried(producer.commit_transaction)
"""
)

ABORTABLE_AS_FATAL = _loop(handler="""        raise  # any error: stop, let a restart sort it out""")

NEW_PRODUCER_ON_FENCED = _loop(
    handler="""        if err.code() == KafkaError._FENCED or err.fatal():
            producer = pipe.new_producer()  # same transactional.id: start over and carry on
            retried(producer.init_transactions)
            pipe.rewind()
            continue
        if not err.txn_requires_abort():
            raise
        retried(producer.abort_transaction)
        pipe.rewind()"""
)

METADATA_ONCE_AT_START = _loop(before="metadata = consumer.consumer_group_metadata()\n", metadata="metadata")

METADATA_ONCE_AFTER_FIRST_POLL = _loop(
    before="metadata = None\n",
    first="metadata = metadata or consumer.consumer_group_metadata()\n        ",
    metadata="metadata",
)

OFFSETS = r"consumer\.commit\(\) are outside the transaction"
RUN = r"must loop until pipe\.stopping"
REWIND = r"pipe\.rewind\(\) seeks back"
ABORT = r"abortable error .* means: producer\.abort_transaction\(\)"
RETRY = r"call the SAME function again"
FENCED = r"_FENCED \(fatal\) means a newer producer"
NEXT = r"the NEXT one to read"
METADATA = r"consumer_group_metadata\(\) right before EVERY"

KIT = r"compute this yourself: do not (call|use) {}"
"""A kit function that computes the answer, refused from the answer cell's source before any work."""

KIT_CLASSIFIER = _loop(
    before="from eoslab.demos.pipeline import Action, classify\n\n",
    handler="""        if classify(err) is not Action.ABORT:
            raise
        retried(producer.abort_transaction)
        pipe.rewind()""",
)

THE_KITS_OWN_BATCH = """
producer.init_transactions()
while not pipe.stopping:
    records = pipe.poll()
    if records:
        pipe._proc.batch += 1
        pipe._proc.eos_batch(records)
"""

ROWS = [
    ("t1", "offsets committed by the consumer after the transaction", OFFSETS_OUTSIDE, OFFSETS),
    ("t1", "one batch then return", ONE_BATCH, RUN),
    ("t1", "the offset of the last record committed not the next", OFFSETS_OF_THE_LAST_RECORD, NEXT),
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
