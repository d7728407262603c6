"""Plausible wrong answers to lab 07 (see tests/integration/test_wrong_answers.py):
(task, what is wrong, the code a learner would type in the task's answer cell, regex the failure must match).

Each row sets ``LEARNER`` to a name whose case 1 is the mistake the row is about (the draw is a function of the
name: ``eoslab.m07_production.lab.draw``), so that every mistake of the set is met. For every mistake, a plausible
wrong diagnosis — the mistake whose evidence looks most like it — given with the right program, fails on the
name, at once, with what the named mistake would have shown. Then right diagnoses with fixes that do not fix:
the program handed out unchanged, and a batch made "safe" by a longer transaction timeout instead of a shorter
batch; these run on the cluster and fail on what the checker saw.
"""

from eoslab.m07_production.lab import draw
from eoslab.m07_production.lesson import program

NAMES = {"auto_commit": "learner-4", "commit_outside": "learner-0", "shared_id": "learner-1",
         "slow_batch": "learner-7", "read_uncommitted": "learner-5"}  # fmt: skip
"""A learner whose case 1 is each mistake."""
assert all(draw(name)[0] == mistake for mistake, name in NAMES.items()), "the draw changed: pick the names again"


def _answer(mistake_of_case: str, named: str, source: str) -> str:
    return f'LEARNER = "{NAMES[mistake_of_case]}"\nMISTAKE_1 = "{named}"\n\n{source}'


RIGHT = program(None, name="case_1")

KIT = r"compute this yourself: do not (call|use) {}"
"""A kit function that computes the answer, refused from the answer cell's source before any work."""

WRONG_NAME = r"'{}' would show this: .*Read the evidence of case 1 again"
NOT_FIXED = r"the diagnosis is right .*the fix does not remove it yet"

ROWS = [
    ("t1", "auto commit called commit outside", _answer("auto_commit", "commit_outside", RIGHT),
     WRONG_NAME.format("commit_outside")),
    ("t1", "commit outside called auto commit", _answer("commit_outside", "auto_commit", RIGHT),
     WRONG_NAME.format("auto_commit")),
    ("t1", "shared id called slow batch", _answer("shared_id", "slow_batch", RIGHT), WRONG_NAME.format("slow_batch")),
    ("t1", "slow batch called shared id", _answer("slow_batch", "shared_id", RIGHT), WRONG_NAME.format("shared_id")),
    ("t1", "read uncommitted called auto commit", _answer("read_uncommitted", "auto_commit", RIGHT),
     WRONG_NAME.format("auto_commit")),
    ("t1", "a name that is no mistake", _answer("auto_commit", "exactly_once", RIGHT), r"one of \['auto_commit'"),
    ("t1", "auto commit named, the program unchanged",
     _answer("auto_commit", "auto_commit", program("auto_commit", name="case_1")), NOT_FIXED),
    ("t1", "slow batch named, a longer transaction timeout instead",
     _answer("slow_batch", "slow_batch", program("slow_batch", name="case_1").replace(
         '"transaction.timeout.ms": 20000', '"transaction.timeout.ms": 120000')), NOT_FIXED),
    ("t1", "the diagnosis read off the kit's draw",
     _answer("auto_commit", "auto_commit", RIGHT).replace('MISTAKE_1 = "auto_commit"',
                                                          "MISTAKE_1 = lab07.draw(LEARNER)[0]"),
     KIT.format(r"eoslab\.m07_production\.lab\.draw")),
]  # fmt: skip
