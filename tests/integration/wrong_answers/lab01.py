"""Plausible wrong answers to lab 01 (see tests/integration/test_wrong_answers.py):
(task, what is wrong, the code a learner would type in the TODO, regex the failure must match)."""

LUMP_MINUS_ONE = """
groups = {}
for b in batches:
    groups.setdefault((b.producer_id, b.producer_epoch, b.base_sequence, b.last_sequence), []).append(b.base_offset)
return [g for g in groups.values() if len(g) > 1]
"""

IGNORE_MINUS_ONE = """
groups = {}
for b in batches:
    if b.producer_id >= 0:
        groups.setdefault((b.producer_id, b.producer_epoch, b.base_sequence, b.last_sequence), []).append(b.base_offset)
return [g for g in groups.values() if len(g) > 1]
"""

BY_CONTENT = """
groups = {}
for b in batches:
    groups.setdefault(tuple(r.value for r in b.records), []).append(b.base_offset)
return [g for g in groups.values() if len(g) > 1]
"""

NO_EPOCH = """
groups = {}
for b in batches:
    key = (b.producer_id, b.base_sequence) if b.producer_id >= 0 else tuple(r.value for r in b.records)
    groups.setdefault(key, []).append(b.base_offset)
return [g for g in groups.values() if len(g) > 1]
"""

NOT_THE_ANSWER = r"^(?!.*(\b45\b|OUT_OF_ORDER)).*you predicted {}, which is not what the broker answered"
"""Task 5's answer is the same at every run: the failure says the prediction is wrong, never the broker's answer."""

KIT = r"compute this yourself: do not (call|use) {}"
"""A kit function that computes the answer, refused from the answer cell's source before any work."""

CASES_ELECT = """
from eoslab.m01_idempotence._lab_cases import elect

return elect(replicas, isr, killed)
"""

CHECKS_OWN_JUDGE = """
candidates = {}
for b in batches:
    key = (b.producer_id, b.producer_epoch, b.base_sequence) if b.producer_id >= 0 else [r.value for r in b.records]
    key = tuple(key)
    candidates.setdefault(key, []).append(b.base_offset)
by_offset = {b.base_offset: b for b in batches}
return [g for g in candidates.values() if len(g) > 1 and not lab01.cases.what_it_mixes(frozenset(g), by_offset)]
"""

ROWS = [
    ("t1", "idempotence left off (librdkafka's default)", "conf = {}", r"2 copies on disk"),
    ("t1", "acks=0: one copy, but no ack to lose", 'conf = {"acks": 0}', r"acks=0"),
    ("t1", "no retries: one copy, reported as lost", 'conf = {"retries": 0}', r"gave up"),
    (
        "t1",
        "idempotent, but past the fault proxy",
        'conf = {"enable.idempotence": True, "bootstrap.servers": cluster.bootstrap_servers()}',
        r"no Produce request of your producer passed the fault proxy",
    ),
    ("t2", "every producer-id -1 batch in one group", LUMP_MINUS_ONE, r"records differ"),
    ("t2", "producer-id -1 batches ignored", IGNORE_MINUS_ONE, r"you missed"),
    ("t2", "records compared for idempotent batches too", BY_CONTENT, r"a NEW id|epoch bump"),
    ("t2", "epoch left out of the identity", NO_EPOCH, r"epoch bump"),
    ("t3", "a constant", "return 3", r"you predicted 3"),
    ("t3", "the highest surviving id", "return max(r for r in isr if r != killed)", None),
    ("t3", "the lowest surviving id", "return min(r for r in isr if r != killed)", None),
    ("t3", "the next replica, ISR ignored", "return next(r for r in replicas if r != killed)", None),
    (
        "t3",
        "the next replica after the dead one, in the ISR",
        "i = list(replicas).index(killed)\nreturn next(r for r in [*replicas[i + 1:], *replicas[:i]] if r in isr)",
        None,
    ),
    (
        "t3",
        "the next replica after the dead one, ISR ignored",
        "i = list(replicas).index(killed)\nreturn [*replicas[i + 1:], *replicas[:i]][0]",
        None,
    ),
    ("t4", "the broker forgets a disconnected producer", 'answer = "a"', r"saw 'a'"),
    ("t4", "the 5-batch window", 'answer = "d"', r"saw 'd'"),
    ("t5", "the broker deduplicates anything", "predicted_error = 0", NOT_THE_ANSWER.format("0")),
    (
        "t5",
        "an epoch error",
        'predicted_error = "INVALID_PRODUCER_EPOCH"',
        NOT_THE_ANSWER.format("'INVALID_PRODUCER_EPOCH'"),
    ),
    (
        "t2",
        "the check's own judge of a group",
        CHECKS_OWN_JUDGE,
        KIT.format(r"eoslab\.m01_idempotence\._lab_cases\.what_it_mixes"),
    ),
    ("t3", "the check's own election", CASES_ELECT, KIT.format(r"eoslab\.m01_idempotence\._lab_cases\.elect")),
]
