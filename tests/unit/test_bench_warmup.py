"""The brokers' warm-up before the measured rounds (eoslab.bench._warmup): when it stops, what it records, what it
says; and the trims that no longer hold the run up (eoslab.bench._rounds.Trims)."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd
import pytest

from eoslab.bench import _warmup
from eoslab.bench._rounds import Trims
from eoslab.bench._warmup import NO_WARMUP, Warmup, compiler_cores, compilers, geo_mean, warmed
from eoslab.runs import warmup_sentence

# Measured on the reference machine, 28 Nov, a cluster started just before (docs/benchmarks-producers.md): each
# warm-up round's geometric mean of the six modes' records/s and the brokers' compiler threads (cores).
COLD_RATES = [5502, 14277, 18618, 23981, 24850, 31619, 31450, 37325, 38138, 37391, 43933, 43819, 51037, 63497]
COLD_JIT = [0.52, 0.38, 0.40, 0.42, 0.36, 0.45, 0.41, 0.34, 0.42, 0.23, 0.22, 0.17, 0.11, 0.08]


def test_a_new_cluster_warms_until_its_compilers_are_idle() -> None:
    stops = [k for k in range(1, len(COLD_RATES) + 1) if warmed(COLD_RATES[:k], COLD_JIT[:k])]
    assert stops == [14]  # not at round 3 or 5, where the rate paused while the compilers were still busy
    assert warmed(COLD_RATES[:14], COLD_JIT[:14]) == "jit idle"


def test_a_warm_cluster_needs_one_round() -> None:
    assert warmed([60844], [0.04]) == "jit idle"
    assert warmed([55786], [0.11]) is None  # compiling still: one more round


def test_without_the_compilers_the_rate_must_level_off_twice() -> None:
    nan = [math.nan] * 14
    # The cold profile's rate paused at rounds 5-6 (+3.6 %, -0.6 %): two rounds in a row not above 1.1x the best.
    first = next(k for k in range(1, 15) if warmed(COLD_RATES[:k], nan[:k]))
    assert first > 3 and warmed(COLD_RATES[:first], nan[:first]) == "rate plateau"
    assert warmed([50000, 52000], [math.nan] * 2) is None  # two rounds are not a plateau
    assert warmed([50000, 52000, 80000], [math.nan] * 3) is None  # still rising


def test_compiler_threads_are_summed_over_the_brokers() -> None:
    before = {
        1: {10: ("C2 CompilerThre", 4.0), 11: ("C1 CompilerThre", 1.0), 12: ("data-plane-kafk", 9.0)},
        2: {20: ("C2 CompilerThre", 2.5)},
    }
    after = {
        1: {10: ("C2 CompilerThre", 5.0), 11: ("C1 CompilerThre", 1.5), 12: ("data-plane-kafk", 19.0)},
        2: {20: ("C2 CompilerThre", 2.5), 21: ("C2 CompilerThre", 0.5)},  # 21 born in between: from 0
    }
    c0, c1 = compilers([1, 2], read=lambda pid: before[pid]), compilers([1, 2], read=lambda pid: after[pid])
    assert c0 == {(1, 10): 4.0, (1, 11): 1.0, (2, 20): 2.5}
    assert compiler_cores(c0, c1, 2.0) == pytest.approx((1.0 + 0.5 + 0.0 + 0.5) / 2)
    assert math.isnan(compiler_cores({}, compilers([], read=lambda pid: {}), 1.0))  # docker: no broker visible
    assert math.isnan(compiler_cores({}, compilers([1], read=lambda pid: {12: ("java", 3.0)}), 1.0))


def test_a_compiler_thread_that_ends_between_two_readings_does_not_make_the_share_negative() -> None:
    """Run 85: HotSpot ended an idle compiler thread inside a warm-up round, and the round's compilers came out at
    -0.024 of a core (the sum over the threads alive at each end, differenced)."""
    before = {1: {10: ("C2 CompilerThre", 30.0), 11: ("C2 CompilerThre", 12.0), 13: ("C1 CompilerThre", 8.0)}}
    after = {1: {10: ("C2 CompilerThre", 30.2), 13: ("C1 CompilerThre", 8.1)}}  # 11 ended: idle
    cores = compiler_cores(compilers([1], read=lambda p: before[p]), compilers([1], read=lambda p: after[p]), 3.0)
    assert cores == pytest.approx(0.1) and cores >= 0


def test_geo_mean_weighs_each_mode_alike() -> None:
    assert geo_mean([10_000, 160_000]) == pytest.approx(40_000)
    assert math.isnan(geo_mean([])) and math.isnan(geo_mean([0.0, 5.0]))


def _env(w: Warmup) -> pd.Series:
    return pd.Series({"run_id": "r", **w.env()})


def test_what_a_run_records_and_says() -> None:
    warm = Warmup((3.2,), (60844.0,), (0.04,), "jit idle")
    env = warm.env()
    assert env["warmup_rounds"] == 1 and env["warmup_beyond_first_s"] == 0.0 and env["warmup_reason"] == "jit idle"
    said = warmup_sentence(_env(warm))
    assert "1 round of every mode, 3 s" in said and "4% → 4% of a core" in said and "met warm brokers" in said
    cold = Warmup((6.0,) * 20, tuple(COLD_RATES[:14]) + (60000.0,) * 6, (0.5,) * 20, "cap")
    assert cold.env()["warmup_beyond_first_s"] == 114.0
    said = warmup_sentence(_env(cold))
    assert "20 rounds" in said and "compilers were still busy" in said and "may be slower" in said
    docker = warmup_sentence(_env(Warmup((3.0, 3.0, 3.0), (5e4, 5.1e4, 5.0e4), (math.nan,) * 3, "rate plateau")))
    assert "compilers" not in docker and "stopped rising" in docker
    capped = warmup_sentence(_env(Warmup((3.0, 3.0), (5e4, 6e4), (math.nan,) * 2, "cap")))
    assert "before the rate had levelled off" in capped and "compilers" not in capped


def test_a_run_without_a_warm_up_says_nothing() -> None:
    assert warmup_sentence(_env(NO_WARMUP)) == ""
    assert warmup_sentence(pd.Series({"run_id": "old"})) == ""  # a run recorded before the warm-up existed
    assert warmup_sentence(pd.Series({"run_id": "merged", "warmup_reason": None})) == ""


def test_every_env_column_keeps_its_type() -> None:
    """Runs are read together with Spark's mergeSchema: a column int in one run and double in another fails."""
    kinds = {k: type(v) for k, v in NO_WARMUP.env().items()}
    assert kinds == {k: type(v) for k, v in Warmup((1.0,), (2.0,), (0.1,), "cap").env().items()}


class _Future:
    def __init__(self, log: list[str], name: str) -> None:
        self.log, self.name = log, name

    def result(self, timeout: float) -> None:
        self.log.append(f"waited {self.name}")


class _Admin:
    def __init__(self, log: list[str]) -> None:
        self.log = log
        self.client = self

    def delete_records(self, parts: list[Any], request_timeout: float) -> dict[Any, _Future]:
        topic = parts[0].topic
        self.log.append(f"trim {topic} x{len(parts)}")
        return {p: _Future(self.log, f"{topic}/{p.partition}") for p in parts}


class _Cluster:
    def __init__(self, log: list[str]) -> None:
        self.admin = _Admin(log)


def test_a_trim_is_awaited_only_before_its_topics_next_slice() -> None:
    log: list[str] = []
    trims = Trims(_Cluster(log))  # type: ignore[arg-type]
    trims.start("a", 2)
    trims.start("b", 1)
    assert log == ["trim a x2", "trim b x1"]  # nothing awaited yet: the next slice runs meanwhile
    trims.wait("a")
    assert log[2:] == ["waited a/0", "waited a/1"]
    trims.start("b", 1)  # b's earlier trim is awaited before a new one is sent
    assert log[4:] == ["waited b/0", "trim b x1"]
    trims.wait_all()
    assert log[6:] == ["waited b/0"] and not trims.pending


def test_the_module_states_its_thresholds() -> None:
    assert 0 < _warmup.JIT_IDLE < 0.5 and _warmup.PLATEAU > 1 and _warmup.WARMUP_SLICE_S <= 1
