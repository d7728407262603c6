"""Module 03's pure pieces, no cluster: keys with a chosen Java hash, the state diagram, the package surface."""

from __future__ import annotations

import random

import pandas as pd

import eoslab.m03_transactions.lesson as txn
from eoslab import inspect as ins
from eoslab.m03_transactions._lab_setup import INT_MIN, string_with_hash


def test_keys_built_to_hash_to_integer_min_value():
    for prefix in ("lab03-min-", "x", "ünïcödé-", ""):
        key = string_with_hash(prefix, INT_MIN)
        assert key.startswith(prefix) and ins.java_string_hash(key) == INT_MIN
        assert ins.coordinator_partition(key) == 0  # Utils.abs(MIN_VALUE) = 0
        assert abs(ins.java_string_hash(key)) % 50 == 48  # where a naive abs() would look


def test_keys_built_to_any_hash():
    rng = random.Random(7)
    for _ in range(200):
        target = rng.randint(-(2**31), 2**31 - 1)
        assert ins.java_string_hash(string_with_hash(f"k{rng.random()}-", target)) == target


def test_states_diagram_counts_transitions_and_epoch_steps():
    history = pd.DataFrame(
        [
            ("t", 0, "Empty", 5, 0),
            ("t", 1, "Ongoing", 5, 0),
            ("t", 2, "PrepareAbort", 5, 1),
            ("t", 3, "CompleteAbort", 5, 1),
            ("t", 4, "Empty", 5, 2),
            ("u", 0, "Empty", 6, 0),
        ],
        columns=["transactional_id", "offset", "state", "producer_id", "producer_epoch"],
    )
    text = txn.states_diagram(history)
    assert text.startswith("stateDiagram-v2")
    assert "[*] --> Empty : 2×" in text
    assert "Ongoing --> PrepareAbort : 1×, epoch +1" in text
    assert "CompleteAbort --> Empty : 1×, epoch +1" in text


def test_all_is_sorted_and_complete():
    assert list(txn.__all__) == sorted(txn.__all__)
    for name in txn.__all__:
        assert hasattr(txn, name), name
