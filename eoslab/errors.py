"""The kit's exceptions: every message is one sentence that says what to do.

Errors from subprocesses (the JVM, Maven, docker) and from Kafka clients are
translated into these at the boundary, so a learner sees a sentence, never a
Java stack trace. The whole tree, with where each class is imported from (the
root's own children live here; tests/unit/test_public_api.py checks this
drawing against the classes)::

    EoslabError
    ├── SetupError              the machine lacks something (Java 17+, Maven, Docker)
    ├── PortInUseError          a port the topology needs is taken
    ├── DataDirError            the data folder belongs to another cluster or is half-written
    ├── ClusterNotRunning       a command needs the cluster and it is down
    ├── UnknownNodeError        a node name that the topology does not have (also a KeyError)
    ├── ClusterStartError       a node died or the cluster did not become ready in time
    ├── WaitTimeout             a wait ran out: what it waited for, what it last saw (also a TimeoutError)
    ├── ProtocolError           eoslab.protocol: bytes that do not decode, a value that does not encode
    │   ├── SchemaError         eoslab.protocol: the message schemas in the kafka-clients jar are unreadable
    │   │   └── JarNotFoundError   eoslab.protocol: the jar is missing (also a SetupError, a FileNotFoundError)
    │   ├── UnsupportedApiError     eoslab.protocol: an api or version the schemas or the broker lack
    │   └── KafkaConnectionError    eoslab.protocol: a socket failed or timed out (also a ConnectionError)
    ├── FaultError              eoslab.faults: the fault proxy could not do what was asked
    │   ├── ProxyNotRunning     eoslab.faults: its control API does not answer
    │   ├── ProxyStartError     eoslab.faults: the daemon did not come up (its log says why)
    │   └── FaultRuleError      eoslab.faults: a rule, query or replay the proxy cannot honour
    ├── JavaClientError         eoslab.java_client: the Java producer's child JVM failed or did not answer
    ├── PartitionFolderMissing  eoslab.inspect: no folder of that partition on that broker
    ├── TransactionNotFound     eoslab.inspect: the coordinator does not know that transactional id
    ├── RunsFormatError         eoslab.runs: a run that lacks a table or a column of the runs format
    ├── WorkloadError           eoslab.runs: a workload or matrix that cannot be run as given
    ├── HistoryFormatError      eoslab.history: a history or final-read file the recorder did not write
    ├── PipelineError           eoslab.demos.pipeline: a processor that cannot start, a bad crash point or output value
    ├── BenchError              eoslab.bench.producers: a benchmark phase failed
    ├── NoRunsError             eoslab.analysis: a runs folder without one complete run
    ├── CheckFailed             eoslab.grading: a lab check failed (its message is the verdict)
    └── CellFailed              eoslab.grading.lab05: the learner's loop did not get through a fault cell
"""

from __future__ import annotations


class EoslabError(Exception):
    """Root of every error the kit raises on purpose."""


class SetupError(EoslabError):
    """Something the machine needs is missing (Java, Maven, Docker)."""


class PortInUseError(EoslabError):
    """A port of the topology is already bound by another process."""


class DataDirError(EoslabError):
    """The data folder cannot be used as it is."""


class ClusterNotRunning(EoslabError):
    """The command needs a running cluster."""


class UnknownNodeError(EoslabError, KeyError):
    """A node name that the topology does not define."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class ClusterStartError(EoslabError):
    """A node exited during start-up or the cluster never became ready."""


class WaitTimeout(EoslabError, TimeoutError):
    """A wait_until ran out of time."""
