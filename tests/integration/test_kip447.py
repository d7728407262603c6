"""KIP-447's check of a transaction's group metadata on the 4.4 cluster, in a classic group and in a KIP-848 group
(``eoslab.demos.kip447``; module 05, "Rebalances and KIP-447"): member A keeps the metadata it fetched, member B
joins and takes one of A's two partitions, then A's librdkafka producer (TxnOffsetCommit v3) and a Java 4.4
producer (v6) send offsets with it. Every answer is the one the proxy relayed.

About 15 s per protocol on a quiet machine (two joins, five transactions, one JVM).
"""

from __future__ import annotations

import pytest

from eoslab.demos import kip447

pytestmark = pytest.mark.cluster


def answers(cluster, protocol):
    rows = kip447.stale_metadata(cluster, protocol)
    print(rows.to_frame().to_string())  # shown on a failure
    # the last answer for each (metadata, partition, client): a retried request (a coordinator moving) counts once
    return {(r.metadata, r.partition, r.client): (r.version, r.error) for r in rows}


def test_a_classic_group_refuses_any_stale_generation_and_checks_no_ownership(cluster):
    seen = answers(cluster, "classic")
    assert seen[("stale", "kept", "librdkafka")] == (3, "ILLEGAL_GENERATION")
    assert seen[("stale", "moved", "librdkafka")] == (3, "ILLEGAL_GENERATION")
    assert seen[("stale", "moved", "Java")] == (6, "ILLEGAL_GENERATION")  # a classic group's name at v6 too
    # the current generation is enough, even for a partition that is B's now: ownership is not asked
    assert seen[("fresh", "kept", "librdkafka")] == seen[("fresh", "moved", "librdkafka")] == (3, "NONE")


def test_a_kip848_group_accepts_a_stale_epoch_for_a_partition_still_owned_and_names_the_refusal_by_version(cluster):
    seen = answers(cluster, "consumer")
    assert seen[("stale", "kept", "librdkafka")] == (3, "NONE")  # KIP-1251: owned since that epoch
    assert seen[("stale", "moved", "librdkafka")] == (3, "ILLEGAL_GENERATION")  # v0-5 keep the old name
    assert seen[("stale", "moved", "Java")] == (6, "STALE_MEMBER_EPOCH")  # KIP-1319, TxnOffsetCommit v6
    assert seen[("fresh", "kept", "librdkafka")] == seen[("fresh", "moved", "librdkafka")] == (3, "NONE")
