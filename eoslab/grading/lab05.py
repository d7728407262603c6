"""Checks of lab 05 (an exactly-once pipeline): the learner's processor loop, run as the pipeline's own OS
process under real faults, judged by the history checker.

The learner writes the program of ``examples/eos_loop.py`` — the consumer's and the producer's settings, the
offsets to commit (``next_offsets``), the transaction and its error handling — ending in ``run(pipe)``
(:class:`eoslab.demos.pipeline.Pipe` says what ``pipe`` offers: names, clients made from the learner's settings,
the transform); each check writes it to a file the processor imports (:func:`eoslab.demos.pipeline.write_loop`),
then runs fault cells (:mod:`eoslab.grading._lab05`, and the fault matrix's ``drop_endtxn_response``)
with fresh topics and random input counts, crash points and pause points, and asks the checker over the
processes' histories and a final read of the output: no lost write, no duplicate, no aborted read,
every input's output exactly once — and no process going on after it was fenced.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

from eoslab.cluster import Cluster
from eoslab.demos.pipeline import PipelineError, write_loop
from eoslab.grading import _lab05 as cells
from eoslab.grading import _lab05_cells as scenarios
from eoslab.grading._lab05 import CellFailed
from eoslab.history import Committed, read_history
from eoslab.labcheck import Verdict, guarded, verdict

EXPECTED = "every input's output read once under read_committed, none lost, no aborted read, no anomaly"

HINT_RUN = (
    "run(pipe) must loop until pipe.stopping turns true: poll, then one transaction per batch; a return ends the "
    "processor."
)
HINT_TRANSACTIONAL_ID = (
    "the producer has no transactional.id, so it cannot use transactions (init_transactions refuses): "
    'producer_settings must give "transactional.id": transactional_id, the same id across restarts.'
)
HINT_AUTO_COMMIT = (
    "enable.auto.commit is on (librdkafka's default): the consumer commits what it polled every 5 s, outside the "
    "transaction, so a crash before commit_transaction() leaves the group past inputs whose outputs were aborted: "
    'they are never processed. consumer_settings must say "enable.auto.commit": False.'
)
HINT_ISOLATION = (
    "isolation.level=read_uncommitted: the processor read inputs of a transaction its writer aborted, and wrote "
    'outputs for them. consumer_settings must say "isolation.level": "read_committed" (librdkafka\'s default, not '
    "the Java client's: set it)."
)
HINT_OFFSETS = (
    "offsets committed with consumer.commit() are outside the transaction: a crash between commit_transaction() "
    "and consumer.commit() redoes a batch whose outputs are committed. Give the offsets to "
    "producer.send_offsets_to_transaction(offsets, consumer.consumer_group_metadata()) before commit_transaction()."
)
HINT_NO_OFFSETS = (
    "commit_transaction() committed the outputs but not the inputs' offsets: a restart or a new owner of the "
    "partition reads those inputs again. Give next_offsets(records) to "
    "producer.send_offsets_to_transaction(offsets, consumer.consumer_group_metadata()) before commit_transaction()."
)
HINT_NEXT = (
    "the offset committed for a partition is the NEXT one to read, the last record's offset + 1 (next_offsets must "
    "return that): an offset one short makes every restart and rebalance redo the batch's last record."
)
HINT_ABORT = (
    "an abortable error (err.txn_requires_abort()) means: producer.abort_transaction(), then rewind(consumer) to the "
    "committed offsets, then go on with the next poll; the batch is redone in a new transaction."
)
HINT_REWIND = (
    "after abort_transaction() the consumer's position is still past the aborted batch: rewind(consumer) seeks back "
    "to the committed offsets, or the next commit carries offsets past inputs whose outputs were aborted."
)
HINT_RETRY = (
    "a retriable error (err.retriable(), e.g. commit_transaction() timing out because EndTxn's answer was lost) "
    "means: call the SAME function again. The commit may already be durable; aborting and reprocessing then "
    "duplicates, or the abort is refused while the commit is in progress."
)
HINT_FENCED = (
    "_FENCED (fatal) means a newer producer with your transactional.id took over: stop (raise or return). A new "
    "producer with the same id fences the successor in turn and both go on."
)
HINT_METADATA = (
    "fetch consumer.consumer_group_metadata() right before EVERY send_offsets_to_transaction(): it carries the "
    "member id and generation, and the group coordinator refuses offsets from a member the group has moved on "
    "from (KIP-447, ILLEGAL_GENERATION): metadata fetched once is stale after the next rebalance, and metadata "
    "fetched before the first poll names no member at all."
)

CELL_HINTS = {"crash": HINT_RUN, "abort": HINT_ABORT, "commit timeout": HINT_RETRY, "zombie": HINT_FENCED}


def _delete_quietly(cluster: Cluster, topic: str) -> None:
    try:
        cluster.admin.delete_topic(topic)
    except Exception:  # noqa: BLE001 - a topic left behind costs nothing; the verdict matters
        pass


def _plain_commits(histories: list[Path]) -> int:
    """Offset commits outside any transaction, over the histories."""
    return sum(1 for h in histories for e in read_history(h).events if isinstance(e, Committed) and e.txn is None)


def commit_timeout(cluster: Cluster, loop: str, folder: Path) -> cells.Outcome:
    """The fault matrix's ``drop_endtxn_response`` cell with the learner's loop: EndTxn's answer is lost,
    commit_transaction times out, and only retrying it is right."""
    from eoslab.demos.pipeline import run_cell

    try:
        res = run_cell(cluster, "drop_endtxn_response", records=random.randint(80, 110), run_dir=folder, loop=loop)
    except PipelineError as e:
        raise CellFailed(str(e)) from None
    # the cell restarts a processor that exits, as a supervisor would; a right loop never exits here
    exits = [n.strip() for n in res.notes.split(";") if " exited " in n and "on SIGTERM" not in n]
    if exits:
        raise CellFailed(f"your processor stopped when EndTxn's answer was lost: {exits[0]}")
    for topic in (res.input, res.output):  # the matrix keeps a cell's topics for its audit; a check does not
        _delete_quietly(cluster, topic)
    hist = [Path(h) for h in res.histories]
    return cells.Outcome(
        "commit timeout",
        res.verdict,
        res.records,
        _plain_commits(hist),
        cells.fenced_then_committed(hist),
        0,
        cells.offsets_behind(hist),
    )


Scenario = Callable[[Cluster, str, Path], cells.Outcome]
TASKS: dict[str, tuple[tuple[str, Scenario], ...]] = {
    "t1": (("crash", scenarios.crash),),
    "t2": (("abort", scenarios.abort), ("commit timeout", commit_timeout)),
    "t3": (("zombie", scenarios.txn_zombie), ("member", scenarios.group_zombie)),
}
"""Each task's cells, cheapest and most telling first: a wrong answer stops at its first failing cell."""


def _settings_hint(settings: dict[str, dict[str, Any]]) -> str | None:
    """The hint for a consumer setting that makes exactly-once fail, from the settings the loop used."""
    consumer = settings.get("consumer", {})
    if str(consumer.get("isolation.level", "read_committed")).lower() == "read_uncommitted":
        return HINT_ISOLATION
    if str(consumer.get("enable.auto.commit", True)).lower() in ("true", "1"):
        return HINT_AUTO_COMMIT
    return None


def _hint(out: cells.Outcome) -> str:
    found = out.verdict.found
    if (by_settings := _settings_hint(out.settings)) is not None:
        return by_settings
    if out.fenced_then_committed:
        return HINT_FENCED
    if out.plain_commits:
        return HINT_OFFSETS
    if out.offsets_behind:
        return HINT_NEXT
    if found.get("missing_output") and out.verdict.stats.get("aborted txns"):
        return HINT_REWIND
    if out.cell == "member" and found.get("duplicate"):
        return HINT_METADATA
    if out.cell == "commit timeout":
        return HINT_RETRY
    if out.cell == "abort":
        return HINT_ABORT
    return HINT_OFFSETS if found.get("duplicate") else HINT_ABORT


def _saw(out: cells.Outcome) -> str:
    if out.fenced_then_committed:
        return (
            f"in the {out.cell} cell, {out.fenced_then_committed[0]} committed transactions after it was fenced "
            f"(found: {out.verdict.found or 'no anomaly yet'})"
        )
    parts = []
    for name, count in out.verdict.found.items():
        example = out.verdict.cases[name].examples[0] if out.verdict.cases[name].examples else ""
        parts.append(f"{count} {name} (e.g. {example})")
    return f"in the {out.cell} cell ({out.inputs} inputs): " + "; ".join(parts)


_MESSAGE_HINTS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("requires transactional.id", "_NOT_CONFIGURED"), HINT_TRANSACTIONAL_ID),
    ((cells.OFFSETLESS,), HINT_NO_OFFSETS),
    (("were skipped",), HINT_REWIND),
    (("is read again",), HINT_NEXT),
    (("ILLEGAL_GENERATION", "UNKNOWN_MEMBER_ID"), HINT_METADATA),
)
"""A failed cell's hint by the words of its message, first match wins."""


def _cell_hint(name: str, message: str) -> str:
    hint = next((h for words, h in _MESSAGE_HINTS if any(w in message for w in words)), None)
    if hint is not None:
        return hint
    if "fenced" in message.lower() and name in ("zombie", "member"):
        return HINT_FENCED
    if "exit 0" in message:  # "stopped by itself (exit 0)" among others
        return HINT_RUN
    return CELL_HINTS.get(name, HINT_ABORT)


def _check(task: str, cluster: Cluster, run: Callable[[Any], Any], points: float) -> Verdict:
    with cells.workdir() as folder:
        try:
            loop = write_loop(run, folder)
        except PipelineError as e:
            return verdict(
                task, False, ok="", saw=str(e), expected="a function run(pipe)", hint=HINT_RUN, points=points
            )
        done = []
        for name, scenario in TASKS[task]:
            try:
                out = scenario(cluster, loop, folder)
            except CellFailed as e:
                return verdict(
                    task, False, ok="", saw=f"in the {name} cell, {e}", expected=EXPECTED,
                    hint=_cell_hint(name, str(e)), points=points,
                )  # fmt: skip
            if not out.clean:
                return verdict(task, False, ok="", saw=_saw(out), expected=EXPECTED, hint=_hint(out), points=points)
            done.append(f"{name} ({out.inputs} inputs, {out.verdict.stats.get('aborted txns', 0)} aborted txns)")
    return verdict(
        task, True,
        ok=f"exactly once through {', '.join(done)}: 0 lost, 0 duplicates, 0 aborted reads.",
        points=points,
    )  # fmt: skip


def try_loop(cluster: Cluster, run: Callable[[Any], Any]) -> Any:
    """Not graded: ``run`` on a few dozen inputs with no fault, then the checker's verdict (a table in a
    notebook); when the loop cannot finish, the sentence that says why."""
    with cells.workdir() as folder:
        try:
            out = scenarios.quiet(cluster, write_loop(run, folder), folder)
        except (PipelineError, CellFailed) as e:
            print(f"✘ {e}")
            return None
    print(f"{'✔' if out.clean else '✘'} {out.inputs} inputs, {out.verdict.stats.get('committed txns', 0)} transactions")
    return out.verdict


@guarded("t1", points=2)
def check_crashes(cluster: Cluster, run: Callable[[Any], Any]) -> Verdict:
    """Task 1: killed with SIGKILL right after a commit and in the middle of a transaction, restarted."""
    return _check("t1", cluster, run, 2)


@guarded("t2", points=2)
def check_errors(cluster: Cluster, run: Callable[[Any], Any]) -> Verdict:
    """Task 2: an abortable error (an output the topic refuses) and a retriable one (a commit that times out)."""
    return _check("t2", cluster, run, 2)


@guarded("t3", points=2)
def check_fencing(cluster: Cluster, run: Callable[[Any], Any]) -> Verdict:
    """Task 3: a zombie fenced by its successor, and a member paused while its group moved on."""
    return _check("t3", cluster, run, 2)
