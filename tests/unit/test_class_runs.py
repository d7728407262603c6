"""A class's module-06 runs pooled per machine, on GENERATED runs (a known model, no cluster): each machine's
overhead is the model's, with the rounds of all its runs; the class's quartiles and fences are those of the
machines' medians; the outlier machine and the noisy one are named with their reason, nobody else is; the
sentences follow the data; hand-ins without runs and empty class folders say so in one sentence."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from _class_of_runs import learner_runs, machine, write_class
from _classroom import make_course, no_jvm

from eoslab import analysis as A
from eoslab.analysis._synthetic import true_overhead
from eoslab.classroom import class_hand_ins, load_class
from eoslab.classroom._class_runs import machine_name
from eoslab.errors import DataError, GradingError
from eoslab.runs import MATRICES

TRUE = {w.label: true_overhead(w) for w in MATRICES["default"].workloads}
OUTLIER = 0.30
"""dee's machine: transactions every 100 ms cost 30 %, six times what the others measure."""
QUIET = ("ana", "bo", "cy")


@pytest.fixture(autouse=True)
def _no_jvm(monkeypatch: pytest.MonkeyPatch) -> None:
    no_jvm(monkeypatch)


@pytest.fixture(scope="module")
def spark() -> Any:
    return A.spark_session(kafka=False)


@pytest.fixture(scope="module")
def per_machine(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Any]:
    """Five machines, five rounds a run: ana (two runs), bo and cy quiet; dee's transactions at 100 ms cost
    :data:`OUTLIER`; eve's machine is noisy (15 % per slice). Only eve has noise: the others' figures are exact."""
    root = tmp_path_factory.mktemp("machines")
    folders: dict[str, list[Path]] = {}
    learners: list[tuple[str, dict[str, Any]]] = [
        ("ana", {}),
        ("bo", {}),
        ("cy", {}),
        ("dee", {"overheads": {"txn_100ms": OUTLIER}}),
        ("eve", {"noise": 0.15}),
    ]
    for i, (name, kw) in enumerate(learners):
        runs = learner_runs(root / name, [10 * i, 10 * i + 1] if name == "ana" else [10 * i], rounds=5, **kw)
        folders[name] = sorted(runs.iterdir())
    runs = A.load_learners(spark, folders)
    machines = spark.createDataFrame([(n, f"machine-{n}") for n in folders], "learner string, machine string")
    return A.machine_overhead(runs.summary, machines).cache(), runs  # the bootstrap once, as the notebook does


@pytest.fixture(scope="module")
def figures(per_machine: tuple[Any, Any]) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    pm = per_machine[0]
    dist = A.class_distribution(pm)
    return pm.toPandas(), dist.toPandas(), A.class_outliers(pm, dist).toPandas()


def test_a_machine_pools_the_rounds_of_its_runs_and_recovers_the_model(figures: Any) -> None:
    pm = figures[0]
    ana = pm[pm.learner == "ana"].set_index("label")
    assert (ana.runs == 2).all() and (ana.rounds == 10).all() and set(ana.machine) == {"machine-ana"}
    assert (pm[pm.learner != "ana"].rounds == 5).all()
    quiet = pm[pm.learner.isin(QUIET)]
    assert np.allclose(quiet["median"], quiet.label.map(TRUE), atol=1e-9)
    assert np.allclose(quiet.lo, quiet.hi, atol=1e-9)  # no noise, no drift: every round says the same
    dee = pm[pm.learner == "dee"].set_index("label")
    assert dee.loc["txn_100ms", "median"] == pytest.approx(OUTLIER)
    assert dee.loc["txn_20ms", "median"] == pytest.approx(TRUE["txn_20ms"])
    eve = pm[(pm.learner == "eve") & (pm.label == "txn_100ms")].iloc[0]
    assert eve.hi - eve.lo > 0.05 and eve.lo < eve["median"] < eve.hi  # the same bootstrap, over noisy rounds


def test_the_class_distribution_counts_each_machine_once(figures: Any) -> None:
    pm, dist = figures[0], figures[1].set_index("label")
    assert "acks_all" not in dist.index  # the baseline costs nothing by definition
    d = dist.loc["txn_100ms"]
    medians = np.sort(pm[pm.label == "txn_100ms"]["median"].to_numpy())
    assert d.machines == 5 and d["median"] == pytest.approx(TRUE["txn_100ms"])  # three of five say it exactly
    assert d["min"] == pytest.approx(medians[0]) and d["max"] == pytest.approx(
        medians[-1] if medians[-1] > OUTLIER else OUTLIER
    )
    assert (d.q25, d.q75) == (pytest.approx(medians[1]), pytest.approx(medians[3]))  # percentile_approx: ranks 2, 4
    iqr = d.q75 - d.q25
    assert d.high_fence == pytest.approx(d.q75 + 1.5 * iqr) and d.low_fence == pytest.approx(d.q25 - 1.5 * iqr)
    assert d.resolved == 4  # the four exact machines exclude 0; eve's interval (tens of points wide) holds it


def test_outliers_are_named_with_their_reason_and_nobody_else(figures: Any) -> None:
    out = figures[2]
    assert not set(out.learner) & set(QUIET)
    dee = out[out.learner == "dee"]
    assert list(dee.label) == ["txn_100ms"]
    assert re.fullmatch(
        r"its interval 30\.0% to 30\.0% lies above the class's upper fence \d+\.\d% \(q75 \+ 1\.5 × IQR\)",
        dee.iloc[0].reason,
    )
    eve = out[(out.learner == "eve") & (out.label == "txn_100ms")]
    assert len(eve) == 1 and eve.iloc[0].reason.startswith("noisy: its interval is ±")


def test_the_sentences_read_the_data(figures: Any) -> None:
    pm, dist, out = figures
    text = A.class_sentences(pm, dist, out, "txn_100ms", learner="dee")
    d = dist.set_index("label").loc["txn_100ms"]
    assert text[0].startswith(f"5 machine(s) measured txn_100ms: the class's median overhead is {d['median']:.1%}")
    assert text[1] == (
        "4 of 5 machine(s) resolve it (their interval excludes 0); on the other 1 the data cannot tell it from no cost."
    )
    assert re.match(r"dee's machine \(machine-dee\) measured 30\.0% \[30\.0%, 30\.0%\]: number [45] of 5 ", text[2])
    assert text[2].endswith("above the class's middle half.")
    assert text[3].startswith("2 machine(s) stand out for txn_100ms: dee (machine-dee): its interval 30.0% to 30.0%")
    quiet = A.class_sentences(pm, dist, out, "txn_100ms", learner="ana")[2]
    assert "inside the class's middle half" in quiet
    with pytest.raises(DataError, match="No machine measured 'txn_7ms': choose one of acks1, acks_all"):
        A.class_sentences(pm, dist, out, "txn_7ms")


def _red(artist: Any) -> bool:
    edge = np.asarray(artist.get_edgecolor())
    return edge.size > 0 and bool(np.allclose(edge[:, :3], (1, 0, 0)))


def test_the_plot_has_a_row_per_machine_and_marks_the_learner(figures: Any) -> None:
    import matplotlib.pyplot as plt

    pm, dist, out = figures
    fig = A.plot_class(pm, dist, "txn_100ms", learner="dee", outliers=out)
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert len(labels) == 5 and labels[-1] == "dee · machine-dee"  # sorted by overhead: the costliest on top
    assert sum(1 for c in ax.collections if _red(c)) == 2  # dee and eve stand out: ringed
    plt.close(fig)


def test_the_mode_shown_is_the_one_most_machines_measured_nearest_the_published_one() -> None:
    rows = [("a", "txn_20ms", 20), ("b", "txn_20ms", 20), ("a", "txn_50ms", 50), ("c", "acks1", None)]
    pm = pd.DataFrame(rows, columns=["learner", "label", "commit_ms"]).assign(
        mode=lambda d: np.where(d.commit_ms.notna(), "transactional", "acks1")
    )
    assert A.pick_label(pm) == "txn_20ms"  # two machines beat one, though 50 ms is nearer 100 ms
    assert A.pick_label(pm[pm.label != "txn_20ms"]) == "txn_50ms"
    with pytest.raises(DataError, match="No machine of the class measured a transactional mode"):
        A.pick_label(pm[pm["mode"] != "transactional"])


# -- the class folder: archives and folders, each learner's machine -------------------------------------------


def test_each_learner_brings_their_runs_and_their_machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    klass = write_class(tmp_path, monkeypatch, {"Ana M": {"runs": 2}, "bo": {}, "cy": {"runs": 0}}, rounds=3)
    folder = klass / "dee"  # handed in by hand: no manifest, the machine is what the runs recorded
    learner_runs(make_course(folder, {"lab06_cost.ipynb": 0}), [7], rounds=3)
    hands, notes = class_hand_ins(klass)
    assert [h.learner for h in hands] == ["Ana M", "bo", "dee"]
    ana, bo, dee = hands
    assert ana.machine == machine_name(machine(0)) == "2 CPUs, 16 GiB, Linux 6.1 arm64" and ana.source == "manifest"
    assert bo.machine == "4 CPUs, 8 GiB, Linux 6.1 x86_64" and [f.name for f in ana.folders] == ["run00", "run01"]
    assert dee.machine == "2 CPUs, 8 GiB, generated (generated)" and dee.source == "runs"
    assert ana.check == "ok" and dee.check == "folder (no manifest)"
    assert notes == [
        "cy: no module-06 runs in the hand-in (archive "
        + next(klass.glob("submission-cy-*")).name
        + "): not in the class's figures"
    ]


def test_a_class_without_runs_or_submissions_says_so_in_one_sentence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(A, "spark_session", lambda **_: pytest.fail("a wrong folder must not start a JVM"))
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(GradingError, match=r"has no submissions: put each learner's submission-\*\.zip"):
        load_class(empty)  # refused before a Spark session is started
    klass = write_class(tmp_path, monkeypatch, {"ana": {"runs": 0}, "bo": {"runs": 0}})
    with pytest.raises(GradingError, match=r"^None of the 2 hand-in\(s\) in .* holds module-06 runs: ask the"):
        load_class(klass)


def test_the_class_loads_into_one_session_keyed_by_learner_and_machine(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    klass = write_class(tmp_path, monkeypatch, {"ana": {"runs": 2}, "bo": {}}, rounds=3)
    got = load_class(klass, spark)
    assert {r.learner for r in got.runs.env.collect()} == {"ana", "bo"}  # not "jovyan", not the unpacked folders
    assert got.runs.env.count() == 3 and list(got.hand_ins.runs) == [2, 1]
    pm = A.machine_overhead(got.runs.summary, got.machines).toPandas()
    assert dict(zip(pm.learner, pm.machine, strict=True)) == {
        "ana": machine_name(machine(0)),
        "bo": machine_name(machine(1)),
    }
    assert set(pm[pm.learner == "ana"].rounds) == {6}
