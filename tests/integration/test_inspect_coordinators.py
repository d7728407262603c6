"""Coordinators predicted from `Utils.abs(id.hashCode()) % 50` agree with what the cluster reports."""

from __future__ import annotations

import random
import uuid

import pytest

import eoslab.cluster
from eoslab import inspect as ins
from eoslab.errors import EoslabError

pytestmark = pytest.mark.cluster

_ALPHABET = "abcXYZ019-_.é日本\U0001f600"


def _random_ids(n: int, seed: int) -> list[str]:
    rnd = random.Random(seed)
    return [
        f"eos-{uuid.UUID(int=rnd.getrandbits(128)).hex[:8]}-"
        + "".join(rnd.choice(_ALPHABET) for _ in range(rnd.randint(0, 12)))
        for _ in range(n)
    ]


@pytest.fixture
def find_calls(monkeypatch):
    """Counts FindCoordinator round trips (the real ones still go out)."""
    calls: list[int] = []
    real = eoslab.cluster.find_coordinators

    def counting(broker, key_type, keys, timeout=5.0):
        calls.append(len(keys))
        return real(broker, key_type, keys, timeout)

    monkeypatch.setattr(eoslab.cluster, "find_coordinators", counting)
    return calls


@pytest.mark.parametrize("kind", ["transaction", "group"])
def test_prediction_equals_the_clusters_answer_for_100_random_ids(cluster, find_calls, kind):
    seed = random.randrange(2**32)
    ids = [*_random_ids(100, seed), "polygenelubricants"]
    rows = ins.coordinators(cluster, ids, kind)
    assert find_calls == [101], "all keys must go out in ONE batched FindCoordinator v4 request"
    wrong = [c for c in rows if not c.agrees]
    assert not wrong, f"seed {seed}: {wrong[:3]}"
    assert {c.partition for c in rows} != {rows[0].partition}  # the ids really spread over partitions
    poly = rows[-1]
    assert poly.key == "polygenelubricants" and poly.partition == 0
    topic = "__transaction_state" if kind == "transaction" else "__consumer_offsets"
    assert poly.reported == cluster.leader(topic, 0)


def test_one_id_and_the_frame(cluster):
    c = ins.coordinator(cluster, "my-txn-app")
    assert c.partition == 27 and c.agrees
    df = ins.coordinators(cluster, ["a", "b"], "group").to_frame()
    assert list(df.columns) == ["key", "kind", "partition", "predicted", "reported", "error", "agrees"]
    assert df.agrees.all()


def test_unknown_kind_is_a_sentence(cluster):
    with pytest.raises(EoslabError, match="Unknown coordinator kind 'txn'"):
        ins.coordinators(cluster, ["x"], "txn")  # type: ignore[arg-type]
