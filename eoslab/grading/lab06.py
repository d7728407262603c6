"""Checks of lab 06 (the cost of exactly-once).

Tasks 1-4 ask for a FUNCTION of the runs' DataFrames, not a value: the check calls it on the
learner's own runs and on held-out runs it makes up at that moment (:mod:`eoslab.grading._heldout`:
several runs of uneven length, the peers' rows (Java's and rdkafka_performance's), fixed-load rows, a
drifting machine), and recomputes the expected figures from the raw Parquet with pandas and numpy — an implementation
independent of the learner's Spark code. Each task leaves a decision to the learner (which rows,
which baseline, how to combine runs); when an answer matches a known wrong decision, the hint names it.
A decision is named only where it alone gives the answer's figures. The learner's runs are what they
measured: two decisions may give the same figures there (under load, read_uncommitted's p50 and every
kind's). The held-out runs give every known decision figures of its own (no two coincide), so such an
answer is named by its figures on them: the decision named is the learner's, never another that happens
to give the same numbers.
Each check stands alone: it reads the runs itself, whatever ran before it.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from eoslab.grading import _heldout
from eoslab.grading._lab06_figures import PCT_ABS_TOL_MS as PCT_ABS_TOL_MS
from eoslab.grading._lab06_figures import PCT_REL_TOL as PCT_REL_TOL
from eoslab.grading._lab06_figures import RIGHT
from eoslab.grading._lab06_figures import TXN_BASELINE as TXN_BASELINE
from eoslab.grading._lab06_figures import close as _close
from eoslab.grading._lab06_figures import cost_answers as cost_answers
from eoslab.grading._lab06_figures import e2e_answers as e2e_answers
from eoslab.grading._lab06_figures import spread_answers as spread_answers
from eoslab.grading._lab06_figures import tail_answers as tail_answers
from eoslab.labcheck import Verdict, guarded, verdict
from eoslab.runs import read_table, runs_dir

# The reference figures (pandas) and the wrong decisions they are told apart from live in _lab06_figures: the
# held-out runs use them too, to be drawn so that no two decisions give the same figures. The names lab06 had
# before they moved are re-exported above ("x as x"), so lab06.cost_answers & co. still read as they did.


# -- reading an answer --------------------------------------------------------------------------------------


def _frame(answer: Any, needed: tuple[str, ...], what: str) -> pd.DataFrame:
    if answer is None:
        raise ValueError("the function returned None")
    if hasattr(answer, "toPandas"):
        answer = answer.toPandas()
    if not isinstance(answer, pd.DataFrame):
        raise TypeError(f"expected a DataFrame with columns {', '.join(needed)}, got {type(answer).__name__}")
    missing = [c for c in needed if c not in answer.columns]
    if missing:
        raise _Wrong(
            f"columns {list(answer.columns)}",
            f"columns {', '.join(needed)} ({what})",
            f"name the result's columns {', '.join(needed)}.",
        )
    return answer


class _Wrong(Exception):
    """A wrong answer: what the check saw, what it expected, the hint. ``named``: the hint names the one wrong
    decision that gives the answer's figures; ``undecided``: two or more decisions give them, so none is named."""

    def __init__(self, saw: str, expected: str, hint: str, named: bool = False, undecided: bool = False) -> None:
        super().__init__(hint)
        self.saw, self.expected, self.hint = saw, expected, hint
        self.named, self.undecided = named, undecided


def _gives(got: Mapping[Any, float], figures: Mapping[Any, Any], want: Mapping[Any, Any]) -> bool:
    """The answer gave each of ``want``'s keys the figure ``figures`` holds for it."""
    return all(k in figures and _close(got[k], figures[k]) for k in want)


def _decisions_giving(
    got: Mapping[Any, float], answers: Mapping[str, Mapping[Any, Any]], want: Mapping[Any, Any]
) -> list[str]:
    """The wrong decisions whose figures the answer gave, every one."""
    return [why for why, alt in answers.items() if why != RIGHT and _gives(got, alt, want)]


def _judge(
    got: Mapping[Any, float],
    answers: Mapping[str, Mapping[Any, Any]],
    where: str,
    what: str,
    hint: str,
    show: bool = True,
) -> None:
    """``show``: whether a failure says the figure recomputed (t4's does not: see :func:`_judge_e2e`)."""
    want = answers[RIGHT]
    missing = [k for k in want if k not in got]
    if missing:
        raise _Wrong(f"no {what} for {missing[0]!r} in {where}", f"one per {sorted(want, key=str)}", hint)
    wrong = [k for k in want if not _close(got[k], want[k])]
    if not wrong:
        return
    # A wrong decision is named only when it alone gives every figure the answer gave; where several do, the
    # answer is undecided here and _run_both names it by its figures on the held-out runs, where no two coincide.
    whys = _decisions_giving(got, answers, want)
    saw = f"{what} {got[wrong[0]]:.4g} for {wrong[0]!r} in {where}"
    if len(whys) == 1:
        raise _Wrong(saw, "another figure", whys[0] + ".", named=True)
    w = want[wrong[0]]
    shown = f"{w[0]:.4g}…{w[1]:.4g}" if isinstance(w, tuple) else f"{w:.4g}"
    expected = f"{shown} recomputed from the raw rows" if show else f"the {what} of the raw rows"
    raise _Wrong(saw, expected, hint, undecided=len(whys) > 1)


def _call(fn: Any, name: str, *args: Any) -> Any:
    if not callable(fn):
        raise _Wrong(
            f"{type(fn).__name__}", f"the function {name}", f"pass the function {name} itself, not its result."
        )
    return fn(*args)


def _run_both(
    task: str,
    runs: str | Path | None,
    judge_one: Callable[[Path, Any, str], None],
    ok: str,
) -> Verdict:
    """Judge the answer on the learner's runs, then on fresh held-out runs. A wrong answer on the learner's runs
    is told as it is there, unless several wrong decisions give its figures: then the held-out runs, where each
    decision gives figures of its own, name the decision if it is one of the known."""
    root, seed = _heldout.heldout()
    try:
        wrong = _judged(judge_one, runs_dir(runs), None, "your runs")
        if wrong is None or wrong.undecided:
            held = _judged(judge_one, root, _heldout.load(root), f"the held-out runs (seed {seed})")
            wrong = held if held is not None and (wrong is None or held.named) else wrong
    finally:
        shutil.rmtree(root, ignore_errors=True)
    if wrong is not None:
        return verdict(task, False, ok="", saw=wrong.saw, expected=wrong.expected, hint=wrong.hint)
    return verdict(task, True, ok=ok)


def _judged(judge_one: Callable[[Path, Any, str], None], base: Path, loaded: Any, where: str) -> _Wrong | None:
    try:
        judge_one(base, loaded, where)
    except _Wrong as w:
        return w
    return None


def _spark_runs(base: Path, loaded: Any) -> Any:
    if loaded is not None:
        return loaded
    return _heldout.load(base)


# -- judging an answer against the figures (the same for the learner's runs and the held-out runs) ----------

_SPREAD_HINT = "the rounds of the harness at saturation, per run and mode: (max − min) ÷ median of records_per_s."
_COST_HINT = (
    "per run and round, 1 − throughput ÷ the baseline's throughput in that round; the median over the "
    "run's rounds; then the median over runs."
)
_TAIL_HINT = "each run's p99 of the ack samples first (percentile_approx by run and label), then the median over runs."


def _judge_spread(answer: Any, figures: Mapping[str, Mapping[Any, Any]], where: str) -> None:
    """t1's verdict on ``round_spread``'s result, against :func:`spread_answers` of the same runs."""
    got_df = _frame(answer, ("run", "label", "spread"), "per run and mode")
    got = {(r.run, r.label): float(r.spread) for r in got_df.itertuples()}
    _judge(got, figures, where, "spread", _SPREAD_HINT)


def _judge_cost(answer: Any, figures: Mapping[str, Mapping[Any, Any]], where: str) -> None:
    """t2's verdict on ``transaction_cost``'s result, against :func:`cost_answers` of the same runs. What is
    wrong with the answer's shape (a row per run, modes with no transaction) is said before any figure."""
    got_df = _frame(answer, ("label", "cost"), "per mode")
    if got_df.label.duplicated().any():
        raise _Wrong(
            f"{got_df.label.duplicated().sum()} repeated labels in {where}",
            "one row per transactional mode",
            "combine the runs: each run's cost first, then the median over runs.",
        )
    got = {r.label: float(r.cost) for r in got_df.itertuples()}
    extra = sorted(set(got) - set(figures[RIGHT]))
    if extra:
        raise _Wrong(
            f"a cost for {extra[0]!r} in {where}",
            f"one row per transactional mode: {', '.join(sorted(figures[RIGHT]))}",
            "keep the transactional modes only (mode 'transactional'): the others have no transaction to cost.",
        )
    _judge(got, figures, where, "cost", _COST_HINT)


def _judge_tail(answer: Any, figures: Mapping[str, Mapping[Any, Any]], where: str) -> None:
    """t3's verdict on ``ack_tail``'s result, against :func:`tail_answers` of the same runs."""
    got_df = _frame(answer, ("label", "p99"), "per mode")
    got = {r.label: float(r.p99) for r in got_df.itertuples()}
    _judge(got, figures, where, "p99", _TAIL_HINT)


_E2E_HINT = (
    "join samples to params on (run, workload); keep transactional workloads and kind == "
    "'e2e_read_committed'; each run's p50 of latency_ms by commit_ms, then the median over runs (one vote per run)."
)


def _commit_key(k: Any) -> float | None:
    return None if k is None or pd.isna(k) else float(k)


def _judge_e2e(answer: Any, figures: Mapping[str, Mapping[Any, Any]], where: str) -> None:
    """t4's verdict on ``e2e_by_commit``'s result, against :func:`e2e_answers` of the same runs: an interval
    with no commit (the non-transactional rows kept) or a row per run is said before any figure. A failure
    never shows the p50 recomputed: the learner's runs are the same at every attempt, so a figure shown on
    them would be the answer to type in."""
    got_df = _frame(answer, ("commit_ms", "p50"), "per commit interval")
    keys = [_commit_key(k) for k in got_df.commit_ms]
    extra = sorted({"null" if k is None else f"{k:g}" for k in keys if k not in figures[RIGHT]})
    if extra:
        raise _Wrong(
            f"a p50 for commit_ms {extra[0]} in {where}",
            f"one row per commit interval of a transactional workload: {', '.join(map(str, sorted(figures[RIGHT])))}",
            "the non-transactional workloads are kept: they have no commit interval (commit_ms null) and no "
            "transaction to wait for; keep the transactional workloads only (params.transactional).",
        )
    if len(set(keys)) < len(keys):
        raise _Wrong(
            f"{len(keys) - len(set(keys))} repeated commit_ms in {where}",
            "one row per commit interval",
            "one p50 per commit interval: each run's p50 first (by run and commit_ms), then the median over runs "
            "(by commit_ms).",
        )
    got = {k: float(v) for k, v in zip(keys, got_df.p50, strict=True)}
    _judge(got, figures, where, "p50", _E2E_HINT, show=False)


# -- the tasks ---------------------------------------------------------------------------------------------


@guarded("t1")
def check_round_spread(fn: Any, runs: str | Path | None = None) -> Verdict:
    """t1: ``fn(summary)`` → per run and mode, (max − min) ÷ median of the harness's throughput over rounds."""

    def one(base: Path, loaded: Any, where: str) -> None:
        answer = _call(fn, "round_spread", _spark_runs(base, loaded).summary)
        _judge_spread(answer, spread_answers(read_table("summary", base)), where)

    return _run_both("t1", runs, one, "the spread over rounds matches, on your runs and on held-out runs.")


@guarded("t2")
def check_transaction_cost(fn: Any, baseline: Any, runs: str | Path | None = None) -> Verdict:
    """t2: the baseline that isolates a transaction's cost, and ``fn(summary, baseline)`` → per transactional
    mode, the median over runs of each run's median over rounds of 1 − throughput ÷ the baseline's."""
    if baseline != TXN_BASELINE:
        why = {
            "acks_all": "acks_all has no idempotence: against it a transaction's cost includes idempotence's. Every "
            "transactional producer is idempotent; compare with the mode that differs by the transaction only.",
            "acks1": "acks1 is another durability (one replica acknowledges): it is not the same producer minus "
            "the transaction.",
        }.get(
            str(baseline), "compare with the mode that differs from a transactional producer by the transaction only."
        )
        return verdict("t2", False, ok="", saw=f"BASELINE = {baseline!r}", expected="another baseline", hint=why)

    def one(base: Path, loaded: Any, where: str) -> None:
        answer = _call(fn, "transaction_cost", _spark_runs(base, loaded).summary, baseline)
        _judge_cost(answer, cost_answers(read_table("summary", base), baseline), where)

    return _run_both(
        "t2", runs, one, "the baseline is idempotent, and the costs match on your runs and on held-out runs."
    )


@guarded("t3")
def check_ack_tail(fn: Any, runs: str | Path | None = None) -> Verdict:
    """t3: ``fn(samples)`` → per mode, the median over runs of each run's p99 ack latency (ms)."""

    def one(base: Path, loaded: Any, where: str) -> None:
        answer = _call(fn, "ack_tail", _spark_runs(base, loaded).samples)
        _judge_tail(answer, tail_answers(read_table("samples", base)), where)

    return _run_both("t3", runs, one, "the typical p99 matches on your runs and on held-out runs of uneven length.")


@guarded("t4")
def check_e2e_by_commit(fn: Any, runs: str | Path | None = None) -> Verdict:
    """t4: ``fn(samples, params)`` → per commit interval (ms), the read_committed end-to-end p50 (ms) of the
    transactional workloads, one vote per run: each run's p50, then the median over runs."""
    if not callable(fn):  # the task's old form (a DataFrame) is told at once, before any runs are loaded
        saw, expected = type(fn).__name__, "the function e2e_by_commit"
        return verdict("t4", False, ok="", saw=saw, expected=expected, hint="pass the function itself, not its result.")

    def one(base: Path, loaded: Any, where: str) -> None:
        r = _spark_runs(base, loaded)
        answer = _call(fn, "e2e_by_commit", r.samples, r.params)
        _judge_e2e(answer, e2e_answers(read_table("samples", base), read_table("params", base)), where)

    return _run_both(
        "t4", runs, one, "the read_committed p50 per commit interval matches, on your runs and on held-out runs."
    )
