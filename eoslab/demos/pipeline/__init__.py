"""Module 05's exactly-once pipeline: its processor as an OS process, the fault matrix, a learner's loop.

One package, shared by notebook 05, lab 05's checks, ``eoslab bench faults`` and the tests::

    from eoslab.demos import pipeline
    p = pipeline.PipelineProcess(cluster, "eos", input="in", output="out", history_dir=tmp).start()
    p.kill(); p.restart().wait_caught_up(); p.stop()
    cell = pipeline.run_cell(cluster, "kill_txn_coordinator", "eos", records=300)   # one fault-matrix cell

The processor itself runs as ``python -m eoslab.demos.pipeline.child`` (:data:`CHILD_MODULE`); the
modules behind this face are private: the process handle (``_process``), the program (``_child``),
the learner's loop and its recorded clients (``_loop``), the pure pieces (``_parts``), where and when
a fault strikes (``_plan``), and the fault matrix's cells (``_faults``, their harness ``_cell``).
"""

from eoslab.demos.pipeline._cell import last_line
from eoslab.demos.pipeline._child import BATCH, EXIT_FATAL, EXIT_UNKNOWN, parse_args
from eoslab.demos.pipeline._faults import FAULTS, KINDS, MIN_RECORDS, CellResult, resent, run_cell
from eoslab.demos.pipeline._loop import CALL_TIMEOUT, FENCED_EVENT, LOOP_HEADER, Pipe, load_loop, write_loop
from eoslab.demos.pipeline._parts import (
    DIE_POINTS,
    FENCED,
    GROUP_PROTOCOLS,
    MODES,
    SEPARATOR,
    Action,
    Output,
    PipelineError,
    classify,
    origin_of,
    output_value,
    parse_die_at,
    parse_output,
    transform,
)
from eoslab.demos.pipeline._plan import (
    HOLD_S,
    TRIGGERS,
    VICTIM,
    VICTIM_ROLE,
    Layout,
    Trigger,
    key_led_by,
    layout,
    write_inputs,
)
from eoslab.demos.pipeline._process import CATCH_UP, CHILD_MODULE, EXIT_WAIT, PipelineProcess, end_pipelines

__all__ = [
    "Action",
    "BATCH",
    "CALL_TIMEOUT",
    "CATCH_UP",
    "CHILD_MODULE",
    "CellResult",
    "DIE_POINTS",
    "EXIT_FATAL",
    "EXIT_UNKNOWN",
    "EXIT_WAIT",
    "FAULTS",
    "FENCED",
    "FENCED_EVENT",
    "GROUP_PROTOCOLS",
    "HOLD_S",
    "KINDS",
    "LOOP_HEADER",
    "Layout",
    "MIN_RECORDS",
    "MODES",
    "Output",
    "Pipe",
    "PipelineError",
    "PipelineProcess",
    "SEPARATOR",
    "TRIGGERS",
    "Trigger",
    "VICTIM",
    "VICTIM_ROLE",
    "classify",
    "end_pipelines",
    "key_led_by",
    "last_line",
    "layout",
    "load_loop",
    "origin_of",
    "output_value",
    "parse_args",
    "parse_die_at",
    "parse_output",
    "resent",
    "run_cell",
    "transform",
    "write_inputs",
    "write_loop",
]
