"""Lab 05's fault cells, one scenario each, built on :class:`eoslab.grading._lab05.Cell`.

These are the scenarios the fault matrix (:data:`eoslab.demos.FAULTS`) has no cell for: a crash right
after a commit, an abortable error the cluster really returns (an output the topic refuses until its
limit is raised), and a processor paused in the middle of a transaction while a successor with its
transactional.id, or another member of its group, takes its partitions over. Every count, crash point
and pause point is drawn at run time.
"""

from __future__ import annotations

import random
import time
from pathlib import Path

from eoslab._wait import wait_until
from eoslab.cluster import Cluster
from eoslab.demos.pipeline import BATCH, EXIT_WAIT, PipelineProcess
from eoslab.grading._lab05 import (
    GROUP_ABORTS,
    RAISED_MESSAGE_BYTES,
    SMALL_MESSAGE_BYTES,
    Cell,
    CellFailed,
    Outcome,
    cell,
    fenced_at,
    fenced_then_committed,
    tail,
    wait_paused,
)
from eoslab.history import Aborted, Assigned, Committed, Polled, Sent, read_history

FIRST_ABORT = 30.0
"""The poison is among the first inputs: a processor polls it within seconds and must abort."""


def crash_draws(rng: random.Random) -> tuple[int, int, int]:
    """(inputs, the batch whose commit the first crash follows, the restart's batch the second crash follows).
    Enough inputs that the restart still has that many batches to send after the first run committed full
    ones: 60 inputs, two committed batches of 20 and the second crash at the restart's batch 2 leave ONE
    batch of 20, so the restart could never get there and a right loop failed (a CI run failed this cell;
    this draw is one way, :func:`progress` in the message now tells any other)."""
    first, second = rng.randint(1, 2), rng.randint(1, 2)
    return rng.randint(max(60, BATCH * (first + second) + 1), 100), first, second


def progress(p: PipelineProcess) -> str:
    """How far the current incarnation got, from its own history: what a stuck processor waited for
    (an assignment, input, an acknowledgement, a commit) is named by the first count that is 0."""
    path = p.history()
    events = read_history(path).events if path.exists() else []

    def count(kind: type) -> int:
        return sum(isinstance(e, kind) for e in events)

    return (
        f"its history: assigned {count(Assigned)}x, {count(Polled)} inputs polled, {count(Sent)} outputs "
        f"acknowledged, {count(Committed)} commits"
    )


def quiet(cluster: Cluster, loop: str, folder: Path) -> Outcome:
    """No fault: the loop on a few dozen inputs, to its end. A try-out, not a graded cell."""
    with cell(cluster, "try", loop, folder) as c:
        c.topics()
        c.seed(random.randint(30, 60))
        p = c.process("p").start()
        c.settle(p)
        return c.judge()


def crash(cluster: Cluster, loop: str, folder: Path) -> Outcome:
    """kill -9 right after a commit_transaction returned, again in the middle of a later transaction
    (its outputs acknowledged, not committed; a consumer that commits on its own timer has done so); a restart
    each time. Among the inputs, a transaction the cell's own writer aborted: read only with read_uncommitted."""
    with cell(cluster, "crash", loop, folder) as c:
        c.topics()
        inputs, first, second = crash_draws(random.Random())
        c.seed(inputs // 2)
        c.seed_aborted(random.randint(2, 6))
        c.seed(inputs - inputs // 2)
        p = c.process("p")
        for spec, call in (
            (f"after-commit:{first}", "commit_transaction returned"),
            (f"after-produce:{second}", "its outputs were produced"),
        ):
            p.start(die_at=spec)
            try:
                code = p.wait_exit()
            except Exception as e:  # it never got there
                raise CellFailed(
                    f"the crash was set for batch {spec.split(':')[1]} once {call}, and your processor never "
                    f"got there in {EXIT_WAIT:.0f} s ({tail(p)}; {progress(p)})"
                ) from e
            if code != -9:
                raise CellFailed(
                    f"your processor stopped by itself (exit {code}) before batch {spec.split(':')[1]} ({tail(p)})"
                )
        p.start()
        c.settle(p)
        return c.judge()


def abort(cluster: Cluster, loop: str, folder: Path) -> Outcome:
    """An output the topic refuses (MESSAGE_TOO_LARGE: the transaction must be aborted) until the
    processor has aborted; then the limit is raised, more inputs come, and every input must go
    through once. (librdkafka follows the refused batch with OUT_OF_ORDER_SEQUENCE_NUMBER on the
    next, "requires epoch bump": abortable too; abort_transaction bumps the epoch.)"""
    from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType

    with cell(cluster, "abort", loop, folder) as c:
        c.topics({"max.message.bytes": str(SMALL_MESSAGE_BYTES)})
        poison = random.randint(4, 30)
        c.seed(random.randint(50, 80), poison=frozenset({poison}))
        p = c.process("p").start()

        def aborted() -> bool:
            if not p.running:
                raise CellFailed(
                    f"the output of input {poison} was refused (MESSAGE_TOO_LARGE, abortable) and your processor "
                    f"stopped (exit {p.returncode}): {tail(p)}"
                )
            return any(isinstance(e, Aborted) for e in c.events())

        try:
            wait_until(aborted, timeout=FIRST_ABORT, what="the processor to abort", fatal=(CellFailed,))
        except CellFailed:
            raise
        except Exception as e:
            raise CellFailed(
                f"the output of input {poison} was refused (MESSAGE_TOO_LARGE) and your processor did not abort the "
                f"transaction within {FIRST_ABORT:.0f} s ({tail(p)})"
            ) from e
        entry = ConfigEntry("max.message.bytes", str(RAISED_MESSAGE_BYTES), incremental_operation=AlterConfigOpType.SET)
        res = ConfigResource(ResourceType.TOPIC, c.output, incremental_configs=[entry])
        cluster.admin.client.incremental_alter_configs([res])[res].result(30)
        c.seed(random.randint(20, 40))  # more work after the abort: its offsets are committed past the aborted batch
        c.settle(p)
        return c.judge()


def group_zombie(cluster: Cluster, loop: str, folder: Path) -> Outcome:
    """Two members of one group, two transactional ids. The first SIGSTOPs itself in the middle of a
    transaction; the second joins, and once the first's session expired it is given every partition
    and redoes that batch. Resumed, the first must not commit its transaction (KIP-447: the group
    coordinator refuses offsets sent with the metadata of a member the group has moved on from), and
    rejoins. Then more inputs, for both. The generation changes twice while the first one lives.

    The processors' consumers use the classic group protocol (librdkafka's default ``group.protocol``),
    so the metadata's generation is the classic generation, not a KIP-848 member epoch; on this
    cluster a stale one gets ILLEGAL_GENERATION (UNKNOWN_MEMBER_ID once the member was removed) on
    TxnOffsetCommit, which librdkafka makes abortable. Metadata fetched before the first poll has
    generation -1: a lone member's commits with it went through here, and once the group moved on
    they got ILLEGAL_GENERATION in every run seen (a loop that keeps it aborts forever); without a
    member id the coordinator does not check it at all, and the resumed commit would double a batch."""
    with cell(cluster, "member", loop, folder) as c:
        c.topics()
        c.seed(random.randint(60, 90))  # batches of up to 20: the pause point (batch 1 or 2) is always reached
        group, spec = f"lab05-member-{c.run}", f"after-produce:{random.randint(1, 2)}"
        # a long transaction timeout: the paused member's transaction must still be open when it wakes
        paused = c.process("a", group=group, transaction_timeout_ms=60000).start(pause_at=spec)
        wait_paused(paused, spec)
        other = c.process("b", group=group).start()
        c.settle(other)  # the paused member's session expired, `other` took every partition and caught up
        resumed = time.time()
        paused.resume()
        rejoined(c, paused, resumed)  # both members again: the second wave is shared, old metadata cannot hide
        c.seed(random.randint(30, 50))
        c.settle(other)
        return c.judge()


def txn_zombie(cluster: Cluster, loop: str, folder: Path) -> Outcome:
    """A processor SIGSTOPs itself in the middle of a transaction; a successor with the same
    transactional.id and group takes over (its init_transactions fences the paused one). Resumed,
    the zombie gets _FENCED and must stop; more inputs go to the successor."""
    with cell(cluster, "zombie", loop, folder) as c:
        c.topics()
        c.seed(random.randint(60, 90))  # batches of up to 20: the pause point (batch 1 or 2) is always reached
        spec = f"after-produce:{random.randint(1, 2)}"
        zombie = c.process("z", transaction_timeout_ms=60000).start(pause_at=spec)
        wait_paused(zombie, spec)
        successor = c.process("s", transactional_id=zombie.transactional_id, group=zombie.group).start()
        c.settle(successor)
        zombie.resume()
        zombie_stops(c, zombie)
        c.seed(random.randint(20, 40))
        c.settle(successor)
        return c.judge()


REJOIN = 30.0
"""A resumed member learns from its next heartbeat that it was removed and rejoins; the group's
rebalance then waits for the other member's next poll (half a second): seconds, with room."""


def rejoined(c: Cell, member: PipelineProcess, since: float) -> None:
    """Until ``member`` is assigned partitions again after ``since`` (it rejoined its group)."""

    def back() -> bool:
        if not member.running:
            raise CellFailed(
                f"your processor, resumed after its group moved on, stopped (exit {member.returncode}) instead of "
                f"aborting and going on: {tail(member)}"
            )
        if c.group_aborts() >= GROUP_ABORTS * len(c.procs):
            raise CellFailed(
                f"your processors aborted {c.group_aborts()} transactions on ILLEGAL_GENERATION or "
                "UNKNOWN_MEMBER_ID: the group moved on, and the group metadata sent with the offsets is stale"
            )
        return any(
            isinstance(e, Assigned) and e.time > since and e.partitions for e in read_history(member.history()).events
        )

    wait_until(back, timeout=REJOIN, what=f"{member.name} to rejoin its group", fatal=(CellFailed,))


ZOMBIE_GRACE = 8.0
"""A fenced processor that stops exits within a second or two of its _FENCED (the process ends, librdkafka
tears its clients down); the rest is room for a busy machine. One that is still running then carried on."""
ZOMBIE_FENCED = 20.0
"""A resumed zombie's next transactional call is answered _FENCED in well under a second."""


def zombie_stops(c: Cell, zombie: PipelineProcess) -> None:
    """Until the resumed zombie exits; a failure when it goes on after its _FENCED."""
    start = time.time()

    def gone() -> bool:
        if went_on := fenced_then_committed(zombie.histories()):
            raise CellFailed(f"{went_on[0]} committed a transaction after it was fenced (_FENCED)")
        fenced = fenced_at(zombie.history())
        if zombie.running and fenced is not None and time.time() - fenced > ZOMBIE_GRACE:
            raise CellFailed(
                f"the zombie got _FENCED and was still running {ZOMBIE_GRACE:.0f} s later: it carried on with the "
                "transactional.id its successor owns"
            )
        if zombie.running and fenced is None and time.time() - start > ZOMBIE_FENCED:
            raise CellFailed(f"the resumed zombie never reported _FENCED in {ZOMBIE_FENCED:.0f} s ({tail(zombie)})")
        return not zombie.running

    wait_until(gone, timeout=ZOMBIE_FENCED + ZOMBIE_GRACE + 5, what="the fenced zombie to stop", fatal=(CellFailed,))
