"""Coordinator hashing: Java's String.hashCode over UTF-16 code units and Kafka's Utils.abs."""

from __future__ import annotations

import pytest

from eoslab.inspect import coordinator_partition, java_string_hash, kafka_abs

# (id, String.hashCode, Utils.abs(hashCode) % 50) as printed by a JVM (Java 17, `x.hashCode()`).
JAVA_HASHES = [
    ("", 0, 0),
    ("a", 97, 47),
    ("hello", 99162322, 22),
    ("my-txn-app", 628027677, 27),
    ("polygenelubricants", -2147483648, 0),
    ("\u00e9", 233, 33),  # é: one UTF-16 unit (UTF-8 would give two bytes)
    ("\u65e5\u672c", 835047, 47),  # 日本
    ("\U0001f600", 1772899, 49),  # 😀 beyond U+FFFF: a surrogate pair, two code units
    ("a\U0001f600b", 57849694, 44),
]


@pytest.mark.parametrize("text,expected,partition", JAVA_HASHES)
def test_java_string_hash_and_partition(text, expected, partition):
    assert java_string_hash(text) == expected
    assert coordinator_partition(text) == partition


def test_polygenelubricants_is_partition_zero_not_48():
    h = java_string_hash("polygenelubricants")
    assert h == -(2**31)
    assert coordinator_partition("polygenelubricants") == 0
    assert abs(h) % 50 == 48  # what a naive Python abs() would pick


def test_kafka_abs():
    assert kafka_abs(-(2**31)) == 0
    assert kafka_abs(-5) == 5  # Math.abs, not the old `n & 0x7fffffff` (which gives 2147483643)
    assert kafka_abs(7) == 7


def test_overflow_wraps_like_java():
    long_id = "x" * 1000
    h = java_string_hash(long_id)
    assert -(2**31) <= h < 2**31
    assert 0 <= coordinator_partition(long_id) < 50


def test_lone_surrogate_still_hashes():
    assert java_string_hash("\ud83d") == 55357  # the JVM agrees


def test_partition_count_is_a_parameter():
    assert coordinator_partition("hello", 7) == 99162322 % 7
