"""Module 07's flows: the mistakes practitioners make with exactly-once, run on the cluster and judged.

A module 07 program is a plain function of confluent-kafka code, ``name(bootstrap, src, out, group,
instance)``, written in a notebook cell. :func:`run_program` runs it as OS processes whose clients are
recorded (:mod:`eoslab.m07_production._recorder`), under a :class:`Scenario` (a fault point, several
instances, a supervisor that restarts what exits, a time limit), and judges the histories with the checker
and the causes it names::

    from eoslab.m07_production.lesson import Scenario, run_program
    run = run_program(cluster, processor, Scenario(inputs=20, die_at="after-offsets:1"), run_dir=tmp)
    run.verdict                 # anomalies, and the causes blamed for them
    run.notes()
"""

from eoslab.m07_production._cases import MISTAKES, RIGHT, Mistake, program
from eoslab.m07_production._expiry import SHORT_EXPIRY, shorten_expiry, wait_forgotten
from eoslab.m07_production._recorder import ProgramError, RecordingConsumer, RecordingProducer, parse_die_at
from eoslab.m07_production._run import (
    CHILD_MODULE,
    PROGRAM_HEADER,
    ProgramRun,
    Scenario,
    end_programs,
    origins,
    run_program,
    write_inputs,
    write_program,
    write_source,
)

__all__ = [
    "CHILD_MODULE",
    "MISTAKES",
    "Mistake",
    "PROGRAM_HEADER",
    "ProgramError",
    "ProgramRun",
    "RIGHT",
    "RecordingConsumer",
    "RecordingProducer",
    "SHORT_EXPIRY",
    "Scenario",
    "end_programs",
    "origins",
    "parse_die_at",
    "program",
    "run_program",
    "shorten_expiry",
    "wait_forgotten",
    "write_inputs",
    "write_program",
    "write_source",
]
