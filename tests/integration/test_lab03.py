"""Lab 03 both ways (the solution passes every graded cell; the untouched lab fails at each and nowhere else),
and plausible wrong answers, each failing its own task with its hint, on the live cluster."""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path

import pytest
from confluent_kafka import Consumer, KafkaException, TopicPartition

from eoslab import inspect as ins
from eoslab.grading import CheckFailed, grade_notebook, lab03

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.cluster, pytest.mark.destructive]


def test_solution_scores_full_marks(healed, tmp_path):
    nb = tmp_path / "lab03_transactions.ipynb"
    shutil.copy(ROOT / "solutions" / nb.name, nb)
    report = grade_notebook(nb)
    assert [(t.task, t.passed) for t in report.tasks] == [(f"t{i}", True) for i in range(1, 7)], report.table()
    assert report.score == report.max_score == 10
    assert report.other_errors == []


def test_untouched_lab_fails_at_every_graded_cell_and_nowhere_else(healed, tmp_path):
    nb = tmp_path / "lab03_transactions.ipynb"
    shutil.copy(ROOT / "labs" / nb.name, nb)
    report = grade_notebook(nb)
    assert [(t.task, t.passed) for t in report.tasks] == [(f"t{i}", False) for i in range(1, 7)], report.table()
    assert report.other_errors == []  # TODO cells never raise
    for t in report.tasks:
        assert t.message and "Traceback" not in t.message


# -- plausible wrong answers ------------------------------------------------------------------------


def _topic(kind: str) -> str:
    return "__transaction_state" if kind == "transaction" else "__consumer_offsets"


def python_hash(leaders, key, kind):
    return leaders[_topic(kind)][abs(hash(key)) % 50]  # Python's salted hash(), not String.hashCode


def math_abs(leaders, key, kind):
    return leaders[_topic(kind)][abs(ins.java_string_hash(key)) % 50]  # Java's hash, but Math.abs semantics


def commit_without_begin(producer, consumer, records, out_topic):
    for r in records:
        for p in (0, 1):
            producer.produce(out_topic, r.value(), partition=p)
    producer.commit_transaction(30)


def offsets_committed_by_the_consumer(producer, consumer, records, out_topic):
    producer.begin_transaction()
    for r in records:
        for p in (0, 1):
            producer.produce(out_topic, r.value(), partition=p)
    producer.commit_transaction(30)
    last = records[-1]
    consumer.commit(offsets=[TopicPartition(last.topic(), 0, last.offset() + 1)], asynchronous=False)


def only_partition_a(producer, consumer, records, out_topic):
    producer.begin_transaction()
    for r in records:
        producer.produce(out_topic, r.value(), partition=0)
    last = records[-1]
    offsets = [TopicPartition(last.topic(), 0, last.offset() + 1)]
    producer.send_offsets_to_transaction(offsets, consumer.consumer_group_metadata(), 30)
    producer.commit_transaction(30)


def _read(bootstrap, topic, isolation, partitions):
    c = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"wrong-{uuid.uuid4().hex[:6]}",
            "isolation.level": isolation,
            "auto.offset.reset": "earliest",
        }
    )
    c.assign([TopicPartition(topic, p, 0) for p in partitions])
    values, quiet = [], 0
    while quiet < 3:
        batch = [m for m in c.consume(100, 1.0) if m.error() is None]
        quiet = 0 if batch else quiet + 1
        values += [m.value().decode() for m in batch]
    c.close()
    return values


def read_uncommitted(bootstrap, topic):
    return _read(bootstrap, topic, "read_uncommitted", [0, 1])


def only_partition_0(bootstrap, topic):
    return _read(bootstrap, topic, "read_committed", [0])


def new_producer_and_carry_on(make_producer, batches, topic):
    producer = make_producer()
    producer.init_transactions(30)
    for batch in batches:
        for _attempt in range(2):
            try:
                producer.begin_transaction()
                for v in batch:
                    producer.produce(topic, v.encode(), partition=0)
                producer.commit_transaction(30)
                break
            except KafkaException as exc:
                if not exc.args[0].fatal():
                    raise
                producer = make_producer()  # "recover" with the same transactional.id: fences the successor
                producer.init_transactions(60)


def catch_all_and_go_on(make_producer, batches, topic):
    producer = make_producer()
    producer.init_transactions(30)
    for batch in batches:
        try:
            producer.begin_transaction()
            for v in batch:
                producer.produce(topic, v.encode(), partition=0)
            producer.commit_transaction(30)
        except KafkaException:
            try:
                producer.abort_transaction(5)
            except KafkaException:
                pass


def abort_rewind_reprocess(producer, topic, values, commit_timeout):
    for _ in range(5):
        producer.begin_transaction()
        for v in values:
            producer.produce(topic, v.encode(), partition=0)
        try:
            producer.commit_transaction(commit_timeout)
            return
        except KafkaException:
            try:  # "something went wrong: roll back and process the input again"
                producer.abort_transaction(30)
            except KafkaException:
                pass
    raise RuntimeError("gave up after 5 attempts")


def no_error_handling(producer, topic, values, commit_timeout):
    producer.begin_transaction()
    for v in values:
        producer.produce(topic, v.encode(), partition=0)
    producer.commit_transaction(commit_timeout)


def _solution_predict():
    import json

    nb = json.loads((ROOT / "solutions" / "lab03_transactions.ipynb").read_text())
    src = next("".join(c["source"]) for c in nb["cells"] if "def predict(steps)" in "".join(c["source"]))
    scope: dict = {}
    exec(src, scope)  # noqa: S102 - the solution's own predict, to build wrong answers from it
    return scope["predict"]


def tv2_epochs(steps):
    """Java's TV2 behaviour applied to librdkafka: one epoch more at every end."""
    out, bump = [], 0
    for state, epoch in _solution_predict()(steps):
        if state in ("PrepareCommit", "PrepareAbort"):
            bump += 1  # TV2: the end's records (and all after) carry the bumped epoch
        out.append((state, epoch + bump))
    return out


def fence_writes_prepare_epoch_fence(steps):
    out = []
    for state, epoch in _solution_predict()(steps):
        if state == "PrepareAbort" and out and out[-1][0] == "Ongoing" and epoch > out[-1][1]:
            out.append(("PrepareEpochFence", epoch))
        out.append((state, epoch))
    return out


WRONG = [
    ("t1 python hash()", lab03.check_coordinators, python_hash, r"Python's hash\(\) is a different function"),
    ("t1 Math.abs", lab03.check_coordinators, math_abs, r"Integer.MIN_VALUE: Kafka's Utils.abs maps it to 0"),
    ("t2 commit without begin", lab03.check_atomic_transfer, commit_without_begin, r"begin_transaction\(\) first"),
    (
        "t2 offsets committed by the consumer",
        lab03.check_atomic_transfer,
        offsets_committed_by_the_consumer,
        r"no COMMIT marker of your producer in __consumer_offsets",
    ),
    ("t2 only partition A", lab03.check_atomic_transfer, only_partition_a, r"partition B shows \[\]"),
    ("t3 read_uncommitted", lab03.check_visible, read_uncommitted, r"were aborted: they stay on disk"),
    ("t3 one partition only", lab03.check_visible, only_partition_0, r"read both partitions"),
    (
        "t4 new producer with the same id",
        lab03.check_zombie_handler,
        new_producer_and_carry_on,
        r"the legitimate successor could not commit .*Hint: .*fence THAT one",
    ),
    ("t4 catch all and go on", lab03.check_zombie_handler, catch_all_and_go_on, r"went on to \d+ more batch"),
    (
        "t5 abort, rewind, reprocess after a commit timeout",
        lab03.check_commit_handling,
        abort_rewind_reprocess,
        r"late EndTxn answer: .*Hint: a commit that timed out .* call commit_transaction\(\) again",
    ),
    ("t5 no error handling", lab03.check_commit_handling, no_error_handling, r"raised _TIMED_OUT"),
    ("t6 TV2 epochs for librdkafka", lab03.check_predict_states, tv2_epochs, r"you predicted .*Hint: compare"),
    (
        "t6 PrepareEpochFence on disk",
        lab03.check_predict_states,
        fence_writes_prepare_epoch_fence,
        r"PrepareEpochFence.*Hint: compare",
    ),
]


@pytest.mark.parametrize("name, check, answer, hint", WRONG, ids=[w[0] for w in WRONG])
def test_wrong_answer_fails_its_task_with_a_hint(healed, name, check, answer, hint):
    task = name.split()[0]
    with pytest.raises(CheckFailed, match=rf"^{task}: .*{hint}") as failed:
        check(healed, answer)
    assert "Hint:" in str(failed.value)
