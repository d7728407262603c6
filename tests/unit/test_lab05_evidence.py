"""Lab 05's evidence beyond the checker, on small hand-made histories (no cluster): a poll past the
committed offset after an abort, a commit one offset short, a commit after _FENCED. Each must be found
when it is there and not when it is not (the cluster runs are tests/integration/test_lab05.py's)."""

from __future__ import annotations

from pathlib import Path

from eoslab.demos.pipeline import FENCED_EVENT
from eoslab.grading._lab05 import (
    OFFSETLESS,
    fenced_at,
    fenced_then_committed,
    offsetless_commits,
    offsets_behind,
    skipped_after_abort,
)
from eoslab.history import Aborted, Assigned, Committed, HistoryWriter, Polled, Position

T = "in"


def _history(path: Path, *events: object) -> Path:
    with HistoryWriter(path, process=path.stem) as h:
        for e in events:
            h.write(e)  # type: ignore[arg-type]
    return path


def _polls(process: str, t: float, partition: int, offsets: range) -> list[Polled]:
    return [Polled(process, t, Position(T, partition, o), f"v{o}") for o in offsets]


def test_a_rewind_after_an_abort_is_not_a_skip_and_a_poll_past_the_committed_offset_is(tmp_path: Path) -> None:
    start = [Assigned("p", 1.0, ((T, 0),), ()), *_polls("p", 1.1, 0, range(0, 5))]
    commit = Committed("p", 1.2, 1, (Position(T, 0, 5),))
    batch = _polls("p", 1.3, 0, range(5, 9))
    abort = Aborted("p", 1.4, 2, "MSG_SIZE_TOO_LARGE")
    good = _history(tmp_path / "good.jsonl", *start, commit, *batch, abort, *_polls("p", 1.5, 0, range(5, 9)))
    bad = _history(tmp_path / "bad.jsonl", *start, commit, *batch, abort, *_polls("p", 1.5, 0, range(9, 12)))
    assert skipped_after_abort([good]) == []
    (found,) = skipped_after_abort([bad])
    assert "after aborting txn 2" in found and "inputs 5..8" in found and "skipped" in found


def test_without_any_commit_a_fresh_topic_rewinds_to_zero(tmp_path: Path) -> None:
    h = _history(
        tmp_path / "p.jsonl",
        Assigned("p", 1.0, ((T, 1),), ()),
        *_polls("p", 1.1, 1, range(0, 3)),
        Aborted("p", 1.2, 1, "x"),
        *_polls("p", 1.3, 1, range(3, 5)),
    )
    assert "inputs 0..2" in skipped_after_abort([h])[0]


def test_a_reassignment_after_an_abort_starts_from_the_committed_offsets_anyway(tmp_path: Path) -> None:
    h = _history(
        tmp_path / "p.jsonl",
        *_polls("p", 1.1, 0, range(0, 3)),
        Aborted("p", 1.2, 1, "UNKNOWN_MEMBER_ID"),
        Assigned("p", 1.3, ((T, 0),), (Position(T, 0, 7),)),
        *_polls("p", 1.4, 0, range(7, 9)),
    )
    assert skipped_after_abort([h]) == []


def test_a_commit_of_the_last_offset_read_is_one_short(tmp_path: Path) -> None:
    polls = _polls("p", 1.0, 0, range(0, 4))
    right = _history(tmp_path / "right.jsonl", *polls, Committed("p", 1.1, 1, (Position(T, 0, 4),)))
    short = _history(tmp_path / "short.jsonl", *polls, Committed("p", 1.1, 1, (Position(T, 0, 3),)))
    assert offsets_behind([right]) == []
    (found,) = offsets_behind([short])
    assert "committed offset 3" in found and "polled offset 3" in found


def test_a_commit_after_fenced_is_found_from_the_stderr_time(tmp_path: Path) -> None:
    h = _history(
        tmp_path / "z-1.jsonl",
        Committed("z", 10.0, 1, (Position(T, 0, 5),)),
        Committed("z", 30.0, 2, (Position(T, 0, 9),)),
    )
    assert fenced_at(h) is None and fenced_then_committed([h]) == []
    h.with_suffix(".stderr").write_text(
        f"%4|librdkafka noise\n{FENCED_EVENT} 20.500 _FENCED: fenced by a newer instance\n"
    )
    assert fenced_at(h) == 20.5
    assert fenced_then_committed([h]) == ["z-1"]
    h.with_suffix(".stderr").write_text(f"{FENCED_EVENT} 40.000 _FENCED: fenced\n")  # fenced after its last commit
    assert fenced_then_committed([h]) == []


def test_the_crash_cell_always_leaves_the_restart_the_batches_its_crash_is_set_at() -> None:
    """A restart's send n is reached only if the input left after the first run's commits fills n batches."""
    import random

    from eoslab.demos.pipeline import BATCH
    from eoslab.grading._lab05_cells import crash_draws

    rng = random.Random(0)
    seen = set()
    for _ in range(2000):
        inputs, first, second = crash_draws(rng)
        left = inputs - BATCH * first  # the first run committed at most `first` full batches
        assert left > BATCH * (second - 1), (
            inputs,
            first,
            second,
        )  # more than second-1 full batches: send `second` comes
        assert 60 <= inputs <= 100
        seen.add((first, second))
    assert seen == {(1, 1), (1, 2), (2, 1), (2, 2)}


def test_transactions_without_offsets_are_found_unless_the_offsets_went_outside(tmp_path: Path) -> None:
    polls = _polls("p", 1.0, 0, range(0, 4))
    bare = [Committed("p", 1.1, 1, ()), Committed("p", 1.3, 2, ())]
    plain = Committed("p", 1.2, None, (Position(T, 0, 4),))  # consumer.commit() after the transaction
    found = offsetless_commits(_history(tmp_path / "none.jsonl", *polls, *bare))
    assert found is not None and "committed 2 transactions" in found and OFFSETLESS in found
    one = _history(tmp_path / "one.jsonl", *polls, bare[0])  # killed between the commit and consumer.commit()
    outside = _history(tmp_path / "outside.jsonl", *polls, bare[0], plain, bare[1])
    inside = _history(
        tmp_path / "inside.jsonl", *polls, *(Committed("p", 1.1 + t, t, (Position(T, 0, 4),)) for t in (1, 2))
    )
    assert [offsetless_commits(h) for h in (one, outside, inside, tmp_path / "absent.jsonl")] == [None] * 4
