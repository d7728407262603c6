"""Lab 07's programs: one right processor, and the same processor with one mistake, each with the scenario
that exposes it.

The right processor is module 07's (plain confluent-kafka code, a little work per record); a mistake is one
edit of its source, as a practitioner makes it. :func:`program` gives the source of a case, :data:`MISTAKES`
says what each mistake is and which scenario of :func:`eoslab.m07_production.lesson.run_program` exposes it. A
right program runs every scenario clean: no anomaly, no cause named, caught up.
"""

from __future__ import annotations

from dataclasses import dataclass

from eoslab.m07_production._recorder import ProgramError
from eoslab.m07_production._run import Scenario

RIGHT = """def {name}(bootstrap, src, out, group, instance):
    consumer = Consumer({{
        "bootstrap.servers": bootstrap,
        "group.id": group,
        "enable.auto.commit": False,
        "isolation.level": "read_committed",
        "auto.offset.reset": "earliest",
        "session.timeout.ms": 6000,
        "max.poll.interval.ms": 7000,
    }})
    producer = Producer({{
        "bootstrap.servers": bootstrap,
        "transactional.id": f"{{group}}-{{instance}}",
        "transaction.timeout.ms": 20000,
    }})
    consumer.subscribe([src])
    producer.init_transactions()
    while True:
        batch = [m for m in consumer.consume(5, timeout=1) if m.error() is None]
        if not batch:
            continue
        producer.begin_transaction()
        try:
            for m in batch:
                time.sleep(0.3)  # the work: a call to a slow service
                producer.produce(out, m.value().upper(), key=m.key(), partition=m.partition())
            producer.send_offsets_to_transaction(consumer.position(consumer.assignment()),
                                                 consumer.consumer_group_metadata())
            producer.commit_transaction()
        except KafkaException as e:
            if not e.args[0].txn_requires_abort():
                raise
            producer.abort_transaction()
            for tp in consumer.committed(consumer.assignment()):
                consumer.seek(tp if tp.offset >= 0 else TopicPartition(tp.topic, tp.partition, 0))
"""
"""The right processor (``{name}`` is the function's name)."""


@dataclass(frozen=True)
class Mistake:
    """One mistake: its name, what it is, the edit that makes it, the scenario that exposes it, and what its
    evidence looks like (the hint for a learner who named another)."""

    name: str
    what: str
    edit: tuple[tuple[str, str], ...]
    scenario: Scenario
    evidence: str


MISTAKES: dict[str, Mistake] = {
    m.name: m
    for m in (
        Mistake(
            "auto_commit",
            "enable.auto.commit left at its default (true): offsets committed on a timer, outside the transaction",
            (('        "enable.auto.commit": False,\n', ""),),
            Scenario(inputs=20, die_at="after-offsets:2", limit=60),
            "killed after send_offsets_to_transaction, its restart skips the batch: missing outputs, blamed on "
            "offsets committed outside a transaction (auto commit)",
        ),
        Mistake(
            "commit_outside",
            "offsets committed with consumer.commit() after commit_transaction(), not sent in the transaction",
            (
                (
                    "            producer.send_offsets_to_transaction(consumer.position(consumer.assignment()),\n"
                    "                                                 consumer.consumer_group_metadata())\n"
                    "            producer.commit_transaction()\n",
                    "            producer.commit_transaction()\n            consumer.commit(asynchronous=False)\n",
                ),
            ),
            Scenario(inputs=20, die_at="after-commit:2", limit=60),
            "killed between commit_transaction() and consumer.commit(), its restart redoes a committed batch: "
            "duplicates, blamed on offsets committed outside a transaction (commit())",
        ),
        Mistake(
            "shared_id",
            "one transactional.id for every instance: two live instances fence each other",
            (
                (
                    '        "transactional.id": f"{group}-{instance}",\n',
                    '        "transactional.id": "orders-processor",\n',
                ),
            ),
            Scenario(inputs=30, instances=2, limit=40),
            "two instances: producers fenced again and again (_FENCED), restarts, the work crawls or stalls",
        ),
        Mistake(
            "slow_batch",
            "a batch whose work outlasts max.poll.interval.ms: the consumer leaves its group before it commits",
            (("consumer.consume(5, timeout=1)", "consumer.consume(30, timeout=1)"),),
            Scenario(inputs=30, limit=40),
            "the consumer leaves its group (_MAX_POLL_EXCEEDED), send_offsets_to_transaction is refused "
            "(UNKNOWN_MEMBER_ID), the batch aborts and is redone, again and again: stalled",
        ),
        Mistake(
            "read_uncommitted",
            "the input read with isolation.level=read_uncommitted: records of aborted transactions are processed",
            (('        "isolation.level": "read_committed",\n', '        "isolation.level": "read_uncommitted",\n'),),
            Scenario(inputs=20, aborted_inputs=4, limit=60),
            "inputs written in an aborted transaction (cancelled orders) polled and turned into outputs: "
            "aborted reads (G1a)",
        ),
    )
}
"""Every mistake lab 07 can hand out, in a fixed order (a learner's draw is a choice among these names)."""


def program(mistake: str | None, name: str = "processor") -> str:
    """The source of the processor ``name``, right (``mistake=None``) or with ``mistake``."""
    source = RIGHT.format(name=name)
    if mistake is None:
        return source
    if mistake not in MISTAKES:
        raise ProgramError(f"{mistake!r} is not a mistake lab 07 knows; it knows {list(MISTAKES)}.")
    for old, new in MISTAKES[mistake].edit:
        if old not in source:
            raise ProgramError(f"the edit of {mistake!r} does not apply to the right processor: {old.strip()!r}")
        source = source.replace(old, new)
    return source
