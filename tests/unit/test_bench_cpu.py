"""CPU per record per process kind (issue 26): the accounting over fake counters, the Java tool's window
read at its own report lines (a fake tool that burns CPU before, in and after its window), the table."""

from __future__ import annotations

import math
import os
import sys
import types
from collections import namedtuple
from typing import Any

import pandas as pd
import psutil
import pytest

from eoslab.analysis._cpu import NOT_MEASURED, cpu_lines
from eoslab.bench._cpu import CpuMeter, read_kinds, spent
from eoslab.bench._peer import _stream, _Window
from eoslab.bench._rounds import sat_row
from eoslab.cluster import NodeStatus
from eoslab.runs import CPU_COLUMNS, CPU_TABLE, Workload, cpu_table, summary_row

Times = namedtuple("Times", "user system children_user children_system")


def test_a_reading_sums_each_kinds_processes_user_and_system():
    counters = {"c": Times(1.0, 0.5, 9.0, 9.0), "b1": Times(2.0, 1.0, 0, 0), "b2": Times(3.0, 0.25, 0, 0)}
    r = read_kinds({"client": ["c"], "brokers": ["b1", "b2"], "controllers": []}, counters.__getitem__)
    assert r["client"] == 1.5  # the children's CPU (a tool the process ran) is not the process's
    assert r["brokers"] == 6.25 and math.isnan(r["controllers"])  # no process: not measured, not zero

    def gone(p: str) -> Any:
        raise psutil.NoSuchProcess(1)

    assert all(math.isnan(v) for v in read_kinds({"client": ["c"], "brokers": ["b1"]}, gone).values())


def test_what_a_window_spent_is_the_difference_of_its_ends():
    before = {"client": 1.0, "brokers": 10.0, "controllers": 0.5}
    after = {"client": 1.25, "brokers": 12.5, "controllers": 0.25}  # controllers went backwards: a reused pid
    d = spent(before, after)
    assert d["client"] == 0.25 and d["brokers"] == 2.5 and math.isnan(d["controllers"])
    assert math.isnan(spent({"client": math.nan}, after)["client"])


def test_the_meter_reads_the_clusters_nodes_by_role_and_none_on_docker():
    me = os.getpid()
    rows = [NodeStatus(f"broker-{i}", "broker", i, "running", me, ()) for i in (1, 2, 3)]
    rows += [NodeStatus(f"controller-{i}", "controller", 100 + i, "running", me, ()) for i in (1, 2, 3)]
    local: Any = types.SimpleNamespace(backend=types.SimpleNamespace(name="local"), status=lambda: rows)
    r = CpuMeter.of(local, me).read()
    assert r["brokers"] == pytest.approx(3 * r["client"], rel=0.05) and r["controllers"] > 0  # 3 × this process
    docker: Any = types.SimpleNamespace(backend=types.SimpleNamespace(name="docker"), status=lambda: rows)
    r = CpuMeter.of(docker, me).read()
    assert r["client"] > 0 and math.isnan(r["brokers"]) and math.isnan(r["controllers"])


REPORT = "{n} records sent, 1000.0 records/sec (0.98 MB/sec), 1.0 ms avg latency, 2.0 ms max latency."
SUMMARY = (
    "9000 records sent, 1000.0 records/sec (0.98 MB/sec), 1.0 ms avg latency, 2.0 ms max latency, "
    "1 ms 50th, 1 ms 95th, 1 ms 99th, 1 ms 99.9th."
)
FAKE_TOOL = f"""
import time
def burn(s):
    end = time.process_time() + s
    while time.process_time() < end:
        pass
burn(0.6)  # start-up and JIT: outside the window
print({REPORT.format(n=5000)!r}, flush=True)
burn(0.3)
print({REPORT.format(n=4000)!r}, flush=True)
burn(0.3)
print({SUMMARY!r}, flush=True)
burn(0.6)  # after the summary: outside the window
"""


def test_the_tools_cpu_is_read_over_its_measured_window_only():
    """From its first report (its warm-up over) to its summary line: not its start-up, not its exit."""
    me = os.getpid()
    nodes = {"brokers": [psutil.Process(me)], "controllers": []}
    rc, out, err, window = _stream([sys.executable, "-c", FAKE_TOOL], CpuMeter(nodes, None))
    assert rc == 0 and out.count("records sent") == 3, err
    assert 0.55 <= window["client"] < 0.9, window  # the 0.6 s burnt in the window, not the 1.2 s outside it
    assert window["brokers"] >= 0 and math.isnan(window["controllers"])


def test_a_tool_without_a_report_has_no_window():
    w = _Window(None)
    w.see(SUMMARY)
    assert w.spent() == {}
    fake: Any = types.SimpleNamespace(read=lambda: {"client": 1.0, "brokers": 1.0, "controllers": 1.0})
    w = _Window(fake)
    w.see(SUMMARY)  # a summary before any report: the tool ran shorter than one report
    assert w.spent() == {}


def _row(label: str, who: str, records: int, phase: str = "saturation", **cpu: float) -> dict[str, Any]:
    """A summary row of ``who`` (eoslab, java) with the CPU seconds its window spent per kind."""
    w = Workload("idempotent") if label == "idempotent" else Workload("acks_all")
    return summary_row("r", 0, w, client=who, phase=phase, round_=0, position=0, records=records, seconds=1, cpu=cpu)


def test_a_modes_figure_is_its_cpu_over_its_windows_records():
    rows = [
        _row("acks_all", "eoslab", 1000, client=0.005, brokers=0.020, controllers=0.001),
        _row("acks_all", "eoslab", 3000, client=0.007, brokers=0.040, controllers=0.001),
        _row("acks_all", "java", 2000, client=0.010, brokers=0.030, controllers=0.0),
        _row("acks_all", "eoslab", 500, phase="fixed_load"),  # not a saturation window: left out
        _row("idempotent", "eoslab", 2000, client=0.2),  # the nodes not measured (docker): no row for them
    ]
    t = cpu_table(pd.DataFrame(rows)).set_index(["label", "client", "kind"])
    assert list(t.reset_index().columns) == list(CPU_TABLE)
    # A ratio of sums: (5 + 7) ms over 4,000 records is 3 µs a record (the mean of 5 and 2.33 would not be).
    assert t.loc[("acks_all", "eoslab", "client"), "us_per_record"] == pytest.approx(3.0)
    assert t.loc[("acks_all", "eoslab", "brokers"), "us_per_record"] == pytest.approx(15.0)
    assert t.loc[("acks_all", "eoslab", "client"), "windows"] == 2
    assert t.loc[("acks_all", "java", "brokers"), "us_per_record"] == pytest.approx(15.0)
    assert t.loc[("acks_all", "java", "controllers"), "us_per_record"] == 0.0
    assert [k for (lbl, _, k) in t.index if lbl == "idempotent"] == ["client"]
    assert cpu_table(pd.DataFrame(rows).drop(columns=list(CPU_COLUMNS))).empty  # a run from before the columns


def test_a_saturation_row_keeps_the_clients_figure_under_its_old_names():
    row = sat_row("r", 0, Workload("acks_all"), "eoslab", 2000, 1.0, 0, 0, cpu={"client": 0.004, "brokers": 0.01})
    assert row["cpu_s"] == 0.004 and row["cpu_us_per_record"] == pytest.approx(2.0)
    assert row["cpu_brokers_s"] == 0.01 and math.isnan(row["cpu_controllers_s"])
    assert math.isnan(sat_row("r", 0, Workload("acks_all"), "java", 0, 0.0, -1, -1)["cpu_us_per_record"])


def test_the_printed_table_puts_both_clients_side_by_side():
    rows = [
        _row("acks_all", "eoslab", 1000, client=0.005, brokers=0.020, controllers=0.001),
        _row("acks_all", "java", 1000, client=0.015, brokers=0.025, controllers=0.002),
        _row("idempotent", "eoslab", 1000, client=0.1, brokers=0.03, controllers=0.001),
    ]
    lines = cpu_lines(cpu_table(pd.DataFrame(rows)))
    assert "eoslab" in lines[1] and "java" in lines[1] and lines[1].index("eoslab") < lines[1].index("java")
    assert lines[3].split() == ["acks_all", "5.0", "20.0", "1.0", "15.0", "25.0", "2.0"]
    assert lines[4].split() == ["idempotent", "100.0", "30.0", "1.0", "—", "—", "—"]
    docker = [_row("acks_all", "eoslab", 1000, client=0.005)]
    lines = cpu_lines(cpu_table(pd.DataFrame(docker)), backend="docker")
    assert lines[3].split() == ["acks_all", "5.0", "—", "—"] and lines[-1].endswith(NOT_MEASURED)
    assert cpu_lines(cpu_table(pd.DataFrame())) == []
