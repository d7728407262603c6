"""``python -m tools.kitbench spin`` (issue 26): its plan, its window arithmetic, its table and the sentences its
figures decide, on made-up figures."""

from __future__ import annotations

import math
from typing import Any

import pytest

from eoslab.bench import _stats
from eoslab.bench._harness import BenchError
from tools.kitbench import _spin_report
from tools.kitbench.spin import TXN_MODE, VARIANTS, _Counter, _figures, chosen, plan, workload


def _row(variant: str, mode: str, r: int, rps: float, wakeups: float, broker_us: float) -> dict[str, Any]:
    return {
        "variant": variant,
        "mode": mode,
        "round": r,
        "records": int(rps * 4),
        "seconds": 4.0,
        "records_per_s": rps,
        "client_us": broker_us + 3.0,
        "brokers_us": 100.0,
        "broker_threads_us": broker_us,
        "rdk_main_us": 0.1,
        "app_us": 3.0,
        "wakeups_per_record": wakeups,
        "produce_per_s": 300.0,
        "waitresp_cnt": 1.0,
        "waitresp_msg_cnt": 63.0,
        "outbuf_cnt": 0.0,
        "msgs_inflight": 63.0,
        "xmit_msgq_cnt": 4.0,
        "rtt_p50_ms": 3.0,
        "rtt_p99_ms": 20.0,
        "batch_msgs": 63.0,
    }


def _rows(linger_spins: bool, p15_spins: bool, mif1_rps: float) -> list[dict[str, Any]]:
    out = []
    for r in range(2):
        out += [
            _row("course", "acks_all", r, 10000 + r, 0.05, 2.0),
            _row("course", "idempotent", r, 7000 + 200 * r, 130, 95),
        ]
        w = 120.0 if linger_spins else 0.06
        out += [_row("linger100", "acks_all", r, 10000, 0.04, 2.0), _row("linger100", "idempotent", r, 9500, w, 2.5)]
        w = 90.0 if p15_spins else 0.05
        out += [_row("p15", "acks_all", r, 11000, 0.05, 2.0), _row("p15", "idempotent", r, 10800, w, 2.2)]
        out.append(_row("mif1", "acks_all", r, mif1_rps, 0.1, 2.5))
    return out


def test_plan_alternates_modes_from_round_to_round_and_adds_transactions_to_the_course_only():
    cells = plan(VARIANTS[:1], 2, txn=True)
    assert [(r, m) for r, _, m in cells] == [
        (0, "acks_all"),
        (0, "idempotent"),
        (0, TXN_MODE),
        (1, TXN_MODE),
        (1, "idempotent"),
        (1, "acks_all"),
    ]
    assert len(plan(VARIANTS, 1, txn=False)) == 11


def test_variants_change_only_what_they_name():
    by = {v.name: v for v in VARIANTS}
    assert workload(by["linger100"], "idempotent").linger_ms == 100
    assert workload(by["p15"], "acks_all").partitions == 15
    one = workload(by["mif1"], "acks_all")
    assert one.max_in_flight == 1 and not one.idempotent and one.linger_ms == 5
    assert workload(by["course"], TXN_MODE).label == TXN_MODE
    assert (
        by["p15s0"].conf == {"sticky.partitioning.linger.ms": 0} and workload(by["p15s0"], "acks_all").partitions == 15
    )
    assert [v.name for v in chosen("p15,course")] == ["p15", "course"]
    with pytest.raises(BenchError, match="Unknown variant"):
        chosen("nope")


def test_window_counts_acked_records_as_produced_minus_the_queue_growth():
    n = _Counter()
    a = {
        "t": 10.0,
        "threads": {1: ("rdk:broker1", 1.0), 2: ("python", 1.0)},
        "cpu": {"client": 5.0},
        "n": 1000,
        "q": 400,
    }
    b = {
        "t": 14.0,
        "threads": {1: ("rdk:broker1", 1.4), 2: ("python", 1.1)},
        "cpu": {"client": 5.6},
        "n": 41400,
        "q": 1400,
    }
    n.docs = [
        (9.0, _stats.snapshot('{"ts": 1, "txmsgs": 0}')),
        (11.0, _stats.snapshot('{"ts": 2000000, "txmsgs": 10}')),
    ]
    f = _figures(a, b, {1, 2}, n)
    assert f["records"] == 39400
    assert f["records_per_s"] == pytest.approx(9850)
    assert f["broker_threads_us"] == pytest.approx(0.4 / 39400 * 1e6)
    assert f["app_us"] == pytest.approx(0.1 / 39400 * 1e6)
    assert f["client_us"] == pytest.approx(0.6 / 39400 * 1e6)
    assert math.isnan(f["wakeups_per_record"])  # one document inside the window: no statistics window


def test_table_is_the_median_per_cell_in_measured_order():
    t = _spin_report.table(_rows(False, False, 7100))
    assert list(zip(t["variant"], t["mode"], strict=True))[:3] == [
        ("course", "acks_all"),
        ("course", "idempotent"),
        ("linger100", "acks_all"),
    ]
    assert t.iloc[0]["records_per_s"] == pytest.approx(10000.5) and t.iloc[0]["rounds"] == 2
    assert (t.iloc[1]["records_per_s_lo"], t.iloc[1]["records_per_s_hi"]) == (7000, 7200)
    printed = _spin_report.lines(t)
    assert "7000–7200" in printed[3]
    assert "wakeups/rec" in printed[1] and len(printed) == 2 + 7


def test_sentences_follow_the_figures_when_the_controls_remove_the_spin():
    said = _spin_report.verdicts(_spin_report.table(_rows(False, False, 7100)))
    assert len(said) == 4
    assert said[0].startswith("course layout:") and "its broker threads spin" in said[0]
    assert "linger.ms=100" in said[1] and "the spin is gone" in said[1]
    assert "15 partitions" in said[2] and "the spin is gone" in said[2]
    assert "not distinguishable from" in said[3] and "cannot tell the one-request window's cost" in said[3]
    assert "no spin: the spin belongs to the idempotence path" in said[3]


def test_sentences_follow_the_figures_when_the_controls_do_not():
    said = _spin_report.verdicts(_spin_report.table(_rows(True, True, 10000)))
    assert "the spin remains" in said[1] and "the spin remains" in said[2]
    assert "faster than" in said[3] and "does not account" in said[3]


def test_no_spin_in_the_course_layout_is_said_so():
    rows = [r for r in _rows(False, False, 7100) if r["variant"] == "course"]
    for r in rows:
        r["wakeups_per_record"] = 0.05
    said = _spin_report.verdicts(_spin_report.table(rows))
    assert said == [said[0]] and "no spin is seen" in said[0]
