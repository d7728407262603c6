"""The recorded runs of the course's measurements: their format, folders, writing, reading, and the
workloads they measure. ``eoslab.bench`` writes them; ``eoslab.analysis`` (PySpark), ``eoslab.grading``
and ``eoslab.classroom`` (pandas) read them, never the process that wrote them, so a class's runs can be
collected and analysed elsewhere::

    runs/<run_id>/params.parquet    one row per workload (every batching setting, explicit)
    runs/<run_id>/summary.parquet   saturation: one row per workload × round (the harness) and per workload
                                    (Kafka's Java tool), each with the CPU of the client, the brokers and
                                    the controllers over its window (:data:`CPU_COLUMNS`, :func:`cpu_table`);
                                    fixed load: one row per workload (latency)
    runs/<run_id>/samples.parquet   one row per record of the fixed-load phase × kind
                                    (ack, e2e_read_committed, e2e_read_uncommitted)
    runs/<run_id>/env.parquet       the machine, the versions, the backend, the load when it started
    runs/faults-<run_id>/faults.parquet   the fault matrix (module 05): one row per fault x processor,
                                    with the checker's anomaly counts (:data:`FAULT_COLUMNS`)

The columns every reader may rely on are :data:`COLUMNS`, in format :data:`FORMAT` (older runs are
refused with one sentence: :class:`RunsFormatError`); an instructor's class folder nests
runs one level deeper (``class/<learner>/<run_id>/``), and :func:`run_folders` finds them at any depth.
"""

from eoslab.runs._cpu import CPU_COLUMNS, CPU_KINDS, CPU_TABLE, cpu_columns, cpu_table
from eoslab.runs._env import describe_machine, fingerprint
from eoslab.runs._faults import FAULT_COLUMNS, FAULTS_TABLE, fault_run_folders, read_faults, write_faults_run
from eoslab.runs._folders import RUNS_ENV, new_run_id, run_folders, runs_dir
from eoslab.runs._labels import (
    AUDIT_ABORTED,
    CPEER_CLIENT,
    CPEER_LABELS,
    CPEER_WARMUP_S,
    IDEMPOTENT_NOTE,
    JAVA_WARMUP_S,
    TXN_NOTE,
    warmup_sentence,
)
from eoslab.runs._rows import summary_row
from eoslab.runs._schema import (
    COLUMNS,
    FORMAT,
    NOT_IN_ROUNDS,
    TABLES,
    NoRunsError,
    RunsFormatError,
    require_format,
    run_format,
)
from eoslab.runs._tables import read_table, write_run
from eoslab.runs._workloads import (
    BASELINE,
    EOS_PEERS,
    MATRICES,
    MIN_COMMITS,
    MODES,
    PEERS,
    Matrix,
    Workload,
    WorkloadError,
    matrix,
)

__all__ = [
    "AUDIT_ABORTED",
    "BASELINE",
    "COLUMNS",
    "CPEER_CLIENT",
    "CPEER_LABELS",
    "CPEER_WARMUP_S",
    "CPU_COLUMNS",
    "CPU_KINDS",
    "CPU_TABLE",
    "EOS_PEERS",
    "FAULTS_TABLE",
    "FAULT_COLUMNS",
    "FORMAT",
    "IDEMPOTENT_NOTE",
    "JAVA_WARMUP_S",
    "MATRICES",
    "MIN_COMMITS",
    "MODES",
    "Matrix",
    "NOT_IN_ROUNDS",
    "NoRunsError",
    "PEERS",
    "RUNS_ENV",
    "RunsFormatError",
    "TABLES",
    "TXN_NOTE",
    "Workload",
    "WorkloadError",
    "cpu_columns",
    "cpu_table",
    "describe_machine",
    "fault_run_folders",
    "fingerprint",
    "matrix",
    "new_run_id",
    "read_faults",
    "read_table",
    "require_format",
    "run_folders",
    "run_format",
    "runs_dir",
    "summary_row",
    "warmup_sentence",
    "write_faults_run",
    "write_run",
]
