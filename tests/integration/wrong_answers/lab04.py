"""Plausible wrong answers to lab 04 (see tests/integration/test_wrong_answers.py):
(task, what is wrong, the code a learner would type in the TODO, regex the failure must match).

The four the module's brief names — control offsets treated as records, LSO = HW, read_uncommitted where
read_committed is asked, aborting the wrong transaction — then more: ignoring the LSO (committed records after
an open transaction's start), source 001's off-by-one, the LATEST open transaction as the LSO, aborting every
open transaction, lag measured at the high watermark, "stalled" read as "lagging".
"""

_FATES = """
fate, pending = {}, {}
for b in sorted(batches, key=lambda b: b.base_offset):
    if b.is_control:
        for d in pending.pop(b.producer_id, []):
            fate[d.base_offset] = b.marker
    elif b.is_transactional:
        pending.setdefault(b.producer_id, []).append(b)
    else:
        fate[b.base_offset] = "PLAIN"
"""

MARKERS_AS_RECORDS = (
    _FATES
    + """
out = []
for b in batches:
    if isolation == "read_uncommitted" or b.is_control or fate.get(b.base_offset) in ("COMMIT", "PLAIN"):
        out += range(b.base_offset, b.last_offset + 1)  # every offset is a record, markers too
return sorted(out)
"""
)

UNCOMMITTED_FOR_COMMITTED = """
return sorted(o for b in batches if not b.is_control for o in range(b.base_offset, b.last_offset + 1))
"""

IGNORING_THE_LSO = (
    _FATES
    + """
out = []
for b in batches:
    if b.is_control:
        continue
    if isolation == "read_uncommitted" or fate.get(b.base_offset) in ("COMMIT", "PLAIN"):
        out += range(b.base_offset, b.last_offset + 1)  # committed is committed, wherever it sits
return sorted(out)
"""
)

LSO_IS_HW = """
return high_watermark
"""

_OPEN_STARTS = """
first_open = {}
for b in sorted(batches, key=lambda b: b.base_offset):
    if b.is_control:
        first_open.pop(b.producer_id, None)
    elif b.is_transactional:
        first_open.setdefault(b.producer_id, b.base_offset)
"""

_BY_PRODUCER = (
    _OPEN_STARTS
    + """lso = min(first_open.values()) if first_open else None
out = []
for b in batches:
    if b.is_control:
        continue
    readable = not b.is_transactional or fate_of.get(b.producer_id) == "COMMIT"
    if isolation == "read_uncommitted" or ((lso is None or b.base_offset < lso) and readable):
        out += range(b.base_offset, b.last_offset + 1)
return sorted(out)
"""
)

LAST_MARKER_OF_THE_PRODUCER = (
    """
fate_of = {b.producer_id: b.marker for b in batches if b.is_control}  # the producer's LAST marker wins
"""
    + _BY_PRODUCER
)

FIRST_MARKER_OF_THE_PRODUCER = (
    """
fate_of = {}
for b in sorted(batches, key=lambda b: b.base_offset):
    if b.is_control:
        fate_of.setdefault(b.producer_id, b.marker)  # the producer's FIRST marker
"""
    + _BY_PRODUCER
)

OFFSET_BEFORE_THE_OPEN_TRANSACTION = (
    _OPEN_STARTS
    + """
if not first_open:
    return high_watermark
return min(first_open.values()) - 1  # "the offset before the earliest open transaction"
"""
)

LATEST_OPEN_TRANSACTION = (
    _OPEN_STARTS
    + """
return max(first_open.values()) if first_open else high_watermark
"""
)

ABORT_THE_NEWEST = """
opened = [s for s in ins.describe_producers(cluster, topic, partition) if s.current_txn_start_offset is not None]
newest = max(opened, key=lambda s: s.current_txn_start_offset)
ins.abort_transaction(cluster, topic, partition, newest.current_txn_start_offset)
"""

ABORT_THE_FIRST_LISTED = """
opened = [s for s in ins.describe_producers(cluster, topic, partition) if s.current_txn_start_offset is not None]
ins.abort_transaction(cluster, topic, partition, opened[0].current_txn_start_offset)
"""

ABORT_THE_LOWEST_PRODUCER_ID = """
opened = [s for s in ins.describe_producers(cluster, topic, partition) if s.current_txn_start_offset is not None]
oldest = min(opened, key=lambda s: s.producer_id)  # "the lowest id is the oldest producer"
ins.abort_transaction(cluster, topic, partition, oldest.current_txn_start_offset)
"""

ABORT_EVERY_OPEN_ONE = """
for s in ins.describe_producers(cluster, topic, partition):
    if s.current_txn_start_offset is not None:
        ins.abort_transaction(cluster, topic, partition, s.current_txn_start_offset)
"""

LAG_AT_THE_HIGH_WATERMARK = """
from eoslab.demos import committed_offsets

parts = [p.partition for p in cluster.partitions(topic)]
committed = committed_offsets(cluster, group, topic, parts)
return {
    o.partition: (o.high_watermark - committed[o.partition], o.last_stable < o.high_watermark)
    for o in ins.offsets(cluster, topic, parts)
}
"""

STALLED_MEANS_LAGGING = """
from eoslab.demos import committed_offsets

parts = [p.partition for p in cluster.partitions(topic)]
committed = committed_offsets(cluster, group, topic, parts)
out = {}
for o in ins.offsets(cluster, topic, parts):
    lag = o.last_stable - committed[o.partition]
    out[o.partition] = (lag, lag > 0)
return out
"""

KIT = r"compute this yourself: do not (call|use) {}"
"""A kit function that computes the answer, refused from the answer cell's source before any work."""

THE_CHECKS_SCENARIO = """
s = lab04.setup.scenario(cluster)
part = next(p for p, bs in s.batches.items() if [b.base_offset for b in bs] == [b.base_offset for b in batches])
return s.returned[(part, isolation)]
"""

LSO_FROM_LIST_OFFSETS = """
return next(o.last_stable for o in ins.offsets(cluster, topic) if o.high_watermark == high_watermark)
"""

THE_CHECKS_GROUP = """
s = lab04.setup.scenario(cluster)
return {p: (s.offsets[p].last_stable - s.committed[p], s.offsets[p].last_stable < s.offsets[p].high_watermark)
        for p in s.committed}
"""

ROWS = [
    ("t1", "control offsets treated as records", MARKERS_AS_RECORDS, r"marker .* never returned"),
    (
        "t1",
        "read_uncommitted where read_committed is asked",
        UNCOMMITTED_FOR_COMMITTED,
        r"read_committed (stops|drops)",
    ),
    ("t1", "committed records after an open transaction", IGNORING_THE_LSO, r"stops at the last stable offset"),
    (
        "t1",
        "a batch's fate read from its producer's last marker",
        LAST_MARKER_OF_THE_PRODUCER,
        r"read_committed drops|producer's NEXT marker",
    ),
    (
        "t1",
        "a batch's fate read from its producer's first marker",
        FIRST_MARKER_OF_THE_PRODUCER,
        r"read_committed drops|producer's NEXT marker",
    ),
    ("t2", "LSO = HW", LSO_IS_HW, r"equals the HW only while no transaction is open"),
    ("t2", "source 001's offset before the open transaction", OFFSET_BEFORE_THE_OPEN_TRANSACTION, r"off by one"),
    ("t2", "the latest open transaction", LATEST_OPEN_TRANSACTION, r"the EARLIEST one holds the LSO"),
    ("t3", "aborting the wrong transaction", ABORT_THE_NEWEST, r"you ended another transaction"),
    ("t3", "aborting the first open transaction listed", ABORT_THE_FIRST_LISTED, r"you ended another transaction"),
    ("t3", "aborting the lowest producer id", ABORT_THE_LOWEST_PRODUCER_ID, r"you ended another transaction"),
    ("t3", "aborting every open transaction", ABORT_EVERY_OPEN_ONE, r"end only the transaction holding the LSO"),
    ("t4", "lag at the high watermark", LAG_AT_THE_HIGH_WATERMARK, r"measured at the LSO"),
    ("t4", "stalled read as lagging", STALLED_MEANS_LAGGING, r"merely behind"),
    ("t1", "the check's own scenario", THE_CHECKS_SCENARIO, KIT.format(r"eoslab\.grading\._lab04\.scenario")),
    ("t2", "the LSO asked of the cluster", LSO_FROM_LIST_OFFSETS, KIT.format(r"eoslab\.inspect\.offsets")),
    ("t4", "the check's own scenario", THE_CHECKS_GROUP, KIT.format(r"eoslab\.grading\._lab04\.scenario")),
]
