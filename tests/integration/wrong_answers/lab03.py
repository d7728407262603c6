"""Plausible wrong answers to lab 03 (see tests/integration/test_wrong_answers.py):
(task, what is wrong, the code a learner would type in the TODO, regex the failure must match).

The five the module's brief names, then more: Python's hash() instead of Java's; a commit without
begin_transaction(); verifying with read_uncommitted; on _FENCED, a new producer with the same
transactional.id that carries on; aborting, rewinding and reprocessing after a commit timeout.
"""

PYTHON_HASH = """
topic = "__transaction_state" if kind == "transaction" else "__consumer_offsets"
return leaders[topic][abs(hash(key)) % 50]
"""

_JAVA_HASH = """
h = 0
data = key.encode("utf-16-le")
for i in range(0, len(data), 2):
    h = (31 * h + int.from_bytes(data[i : i + 2], "little")) & 0xFFFFFFFF
if h >= 2**31:
    h -= 2**32
topic = "__transaction_state" if kind == "transaction" else "__consumer_offsets"
"""

MATH_ABS = (
    _JAVA_HASH
    + """return leaders[topic][abs(h) % 50]  # Python's abs: Integer.MIN_VALUE stays 2**31
"""
)

TO_POSITIVE = (
    _JAVA_HASH
    + """
return leaders[topic][(h & 0x7FFFFFFF) % 50]  # Utils.toPositive, the producer's partitioner's helper
"""
)

MODULO_WITHOUT_ABS = (
    _JAVA_HASH
    + """
return leaders[topic][h % 50]  # Python's % is never negative: "no abs needed"
"""
)

COMMIT_WITHOUT_BEGIN = """
for r in records:
    for partition in (0, 1):
        producer.produce(out_topic, r.value(), partition=partition)
producer.commit_transaction(30)
"""

OFFSETS_BY_THE_CONSUMER = """
producer.begin_transaction()
for r in records:
    for partition in (0, 1):
        producer.produce(out_topic, r.value(), partition=partition)
producer.commit_transaction(30)
last = records[-1]
consumer.commit(offsets=[TopicPartition(last.topic(), last.partition(), last.offset() + 1)], asynchronous=False)
"""

ONLY_PARTITION_A = """
producer.begin_transaction()
for r in records:
    producer.produce(out_topic, r.value(), partition=0)
last = records[-1]
offsets = [TopicPartition(last.topic(), last.partition(), last.offset() + 1)]
producer.send_offsets_to_transaction(offsets, consumer.consumer_group_metadata(), 30)
producer.commit_transaction(30)
"""

_READER = """
c = Consumer(
    {{
        "bootstrap.servers": bootstrap,
        "group.id": f"reader-{{uuid.uuid4().hex[:6]}}",
        "isolation.level": "{isolation}",
        "auto.offset.reset": "earliest",
    }}
)
c.assign([TopicPartition(topic, p, 0) for p in {partitions}])
values, quiet = [], 0
while quiet < 3:
    batch = [m for m in c.consume(100, 1.0) if m.error() is None]
    quiet = 0 if batch else quiet + 1
    values += [m.value().decode() for m in batch]
c.close()
return values
"""
READ_UNCOMMITTED = _READER.format(isolation="read_uncommitted", partitions="(0, 1)")
ONE_PARTITION = _READER.format(isolation="read_committed", partitions="(0,)")

NEW_PRODUCER_AND_CARRY_ON = """
producer = make_producer()
producer.init_transactions(30)
for batch in batches:
    for attempt in range(2):
        try:
            producer.begin_transaction()
            for value in batch:
                producer.produce(topic, value.encode(), partition=0)
            producer.commit_transaction(30)
            break
        except KafkaException as exc:
            if not exc.args[0].fatal():
                raise
            producer = make_producer()  # "recover": the same transactional.id fences the new owner
            producer.init_transactions(60)
"""

CATCH_ALL_AND_GO_ON = """
producer = make_producer()
producer.init_transactions(30)
for batch in batches:
    try:
        producer.begin_transaction()
        for value in batch:
            producer.produce(topic, value.encode(), partition=0)
        producer.commit_transaction(30)
    except KafkaException:
        try:
            producer.abort_transaction(5)
        except KafkaException:
            pass
"""

ABORT_REWIND_REPROCESS = """
for attempt in range(5):
    producer.begin_transaction()
    for value in values:
        producer.produce(topic, value.encode(), partition=0)
    try:
        producer.commit_transaction(commit_timeout)
        return
    except KafkaException:
        try:  # "something went wrong: roll back and process the input again"
            producer.abort_transaction(30)
        except KafkaException:
            pass
raise RuntimeError("gave up after 5 attempts")
"""

NO_ERROR_HANDLING = """
producer.begin_transaction()
for value in values:
    producer.produce(topic, value.encode(), partition=0)
producer.commit_transaction(commit_timeout)
"""

_PREDICT = """
out, epoch, state, enrolled = [], None, None, set()
for step in steps:
    if step == "init":
        if epoch is None:
            epoch = 0
        elif state == "Ongoing":
            out += {fence}
            epoch += 2
        else:
            epoch += 1
        out.append(("Empty", epoch))
        state, enrolled = "Empty", set()
    elif step in ("send A", "send B", "offsets"):
        if step not in enrolled:
            enrolled.add(step)
            out.append(("Ongoing", epoch))
            state = "Ongoing"
    elif step in ("commit", "abort") and enrolled:
        end = "Commit" if step == "commit" else "Abort"
        epoch += {bump}
        out += [(f"Prepare{{end}}", epoch), (f"Complete{{end}}", epoch)]
        state, enrolled = f"Complete{{end}}", set()
    elif step in ("commit", "abort"):
        enrolled = set()
    elif step == "timeout" and enrolled:
        epoch += 1
        out += [("PrepareAbort", epoch), ("CompleteAbort", epoch)]
        state, enrolled = "CompleteAbort", set()
return out
"""
FENCE = '[("PrepareAbort", epoch + 1), ("CompleteAbort", epoch + 1)]'
TV2_EPOCHS = _PREDICT.format(fence=FENCE, bump=1)  # Java's TV2 bump, applied to librdkafka
PREPARE_EPOCH_FENCE = _PREDICT.format(
    fence='[("PrepareEpochFence", epoch + 1), ("PrepareAbort", epoch + 1), ("CompleteAbort", epoch + 1)]', bump=0
)

KIT = r"compute this yourself: do not (call|use) {}"
"""A kit function that computes the answer, refused from the answer cell's source before any work."""

KIT_PARTITION = """
topic = "__transaction_state" if kind == "transaction" else "__consumer_offsets"
return leaders[topic][eoslab.inspect.coordinator_partition(key)]
"""

KIT_HASH = """
from eoslab.inspect import java_string_hash, kafka_abs

topic = "__transaction_state" if kind == "transaction" else "__consumer_offsets"
return leaders[topic][kafka_abs(java_string_hash(key)) % 50]
"""

KIT_READER = """
from eoslab.m03_transactions import lesson as txn

return [value for _, _, value in txn.read_values(cluster, topic)]
"""

KIT_CLASSIFIER = """
from eoslab.demos.pipeline import Action, classify

producer = make_producer()
producer.init_transactions(30)
for batch in batches:
    producer.begin_transaction()
    for value in batch:
        producer.produce(topic, value.encode(), partition=0)
    try:
        producer.commit_transaction(30)
    except KafkaException as exc:
        if classify(exc.args[0]) is Action.STOP:
            return
        raise
"""

MEASURED_NOT_PREDICTED = """
tid, topic = f"mine-{uuid.uuid4().hex[:6]}", f"mine-{uuid.uuid4().hex[:6]}"
cluster.admin.create_topic(topic, replica_assignment=[[1, 2, 3], [2, 3, 1]])
group = Consumer({"bootstrap.servers": cluster.bootstrap_servers(), "group.id": tid})
lab03.setup.run_scenario(cluster, steps, tid, topic, group)
return lab03.setup.logged_states(cluster, [tid])[tid]
"""

ROWS = [
    ("t1", "Python's hash()", PYTHON_HASH, r"Python's hash\(\) is a different function"),
    ("t1", "Java's hash with Python's abs()", MATH_ABS, r"Integer.MIN_VALUE: Kafka's Utils.abs maps it to 0"),
    ("t1", "Java's hash with Utils.toPositive", TO_POSITIVE, r"Utils.abs\(key.hashCode\(\)\) % 50"),
    ("t1", "Java's hash with Python's modulo, no abs", MODULO_WITHOUT_ABS, r"Utils.abs\(key.hashCode\(\)\) % 50"),
    ("t2", "a commit without begin_transaction()", COMMIT_WITHOUT_BEGIN, r"begin_transaction\(\) first"),
    ("t2", "offsets committed by the consumer", OFFSETS_BY_THE_CONSUMER, r"no COMMIT marker of your producer"),
    ("t2", "records to partition A only", ONLY_PARTITION_A, r"partition B shows \[\]"),
    ("t3", "verifying with read_uncommitted", READ_UNCOMMITTED, r"were aborted: they stay on disk"),
    ("t3", "one partition only", ONE_PARTITION, r"read both partitions"),
    ("t4", "on _FENCED, a new producer with the same id", NEW_PRODUCER_AND_CARRY_ON, r"successor could not commit"),
    ("t4", "every error caught, and on to the next batch", CATCH_ALL_AND_GO_ON, r"went on to \d+ more batch"),
    ("t5", "abort, rewind, reprocess after a commit timeout", ABORT_REWIND_REPROCESS, r"late EndTxn answer: raised"),
    ("t5", "no error handling", NO_ERROR_HANDLING, r"raised _TIMED_OUT"),
    ("t6", "TV2's epoch bump at every end", TV2_EPOCHS, r"you predicted"),
    ("t6", "PrepareEpochFence written", PREPARE_EPOCH_FENCE, r"PrepareEpochFence"),
    ("t1", "the kit's coordinator_partition", KIT_PARTITION, KIT.format(r"eoslab\.inspect\.coordinator_partition")),
    ("t1", "the kit's Java hash and Utils.abs", KIT_HASH, KIT.format(r"eoslab\.inspect\.(java_string_hash|kafka_abs)")),
    ("t3", "the kit's read_committed reader", KIT_READER, KIT.format(r"eoslab\.demos\.read_values")),
    ("t4", "the pipeline's error classifier", KIT_CLASSIFIER, KIT.format(r"eoslab\.demos\.pipeline\.classify")),
    (
        "t6",
        "the scenario run and read back",
        MEASURED_NOT_PREDICTED,
        KIT.format(r"eoslab\.m03_transactions\._lab_setup\.\w+"),
    ),
]
