"""Plausible wrong answers to lab 02 (see tests/integration/test_wrong_answers.py):
(task, what is wrong, the code a learner would type in the TODO, regex the failure must match)."""

NEWEST_OVERALL = """
b = max(blocks, key=lambda b: b.next_producer_id)
return (b.first_producer_id, b.next_producer_id)
"""

NEWEST_OF_THE_BROKER = """
mine = [b for b in blocks if b.broker_id == broker]
return (mine[-1].first_producer_id, mine[-1].next_producer_id)
"""

BLOCK_OF_LAST_ID = """
mine = [b for b in blocks if b.broker_id == broker and b.first_producer_id <= last_id < b.next_producer_id]
return (mine[-1].first_producer_id, mine[-1].next_producer_id)
"""

NEXT_THOUSAND = """
first = (last_id + 1) // 1000 * 1000
return (first, first + 1000)
"""

EXCLUSIVE_START = """
owners = [b.broker_id for b in blocks if b.first_producer_id < pid < b.next_producer_id]
return owners[-1] if owners else None
"""

INCLUSIVE_END_FIRST_MATCH = """
owners = [b.broker_id for b in blocks if b.first_producer_id <= pid <= b.next_producer_id]
return owners[0] if owners else None
"""

NOT_THE_COUNT = r"^(?!.*\b3\b)t4: saw you predicted {}, which is not the count"
"""Task 4's answer is the same at every run: the failure says the prediction is wrong, never the count (3)."""

KIT = r"compute this yourself: do not (call|use) {}"
"""A kit function that computes the answer, refused from the answer cell's source before any work."""

BLOCK_OF_HELPER = """
b = ins.block_of(pid, blocks)
return b.broker_id if b is not None else None
"""

NEXT_BLOCK_HELPER = """
from eoslab.m02_pid_ranges.lesson import next_block

b = next_block(blocks, broker, last_id)
return (b.first_producer_id, b.next_producer_id)
"""

ASK_THE_BROKER = """
from eoslab.m02_pid_ranges import lesson as pids

b = pids.current_block(cluster, broker)
return (b.first_producer_id, b.next_producer_id)
"""

ROWS = [
    ("t1", "an inclusive end", "first = pid // 1000 * 1000\nreturn (first, first + 999)", r"block_of\(0\)"),
    ("t1", "blocks counted from 1", "first = pid // 1000 * 1000 + 1\nreturn (first, first + 1000)", None),
    ("t2", "the broker of the newest block", "return blocks[-1].broker_id", r"granted it just now"),
    ("t2", "the first id of a block left out", EXCLUSIVE_START, r"the first id of"),
    ("t2", "an inclusive end, first match kept", INCLUSIVE_END_FIRST_MATCH, r"the first id of"),
    ("t3", "the newest block overall", NEWEST_OVERALL, r"blocks are per broker"),
    ("t3", "the newest block of the broker", NEWEST_OF_THE_BROKER, r"past 90 %.*prefetch"),
    ("t3", "the block of the last id", BLOCK_OF_LAST_ID, r"the last id of its block"),
    ("t3", "the next 1000 ids", NEXT_THOUSAND, r"the last id of its block"),
    ("t4", "no prefetch: one request per 1000 ids", "predicted_allocations = 2", NOT_THE_COUNT.format(2)),
    ("t4", "one request per producer", "predicted_allocations = 2000", NOT_THE_COUNT.format(2000)),
    ("t2", "the kit's block_of", BLOCK_OF_HELPER, KIT.format(r"eoslab\.inspect\.block_of")),
    ("t3", "the notebook's next_block", NEXT_BLOCK_HELPER, KIT.format(r"eoslab\.m02_pid_ranges\.lesson\.next_block")),
    ("t3", "asking broker 2 for an id", ASK_THE_BROKER, KIT.format(r"eoslab\.m02_pid_ranges\.lesson\.current_block")),
]
