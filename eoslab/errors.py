"""The kit's exceptions: every message is one sentence that says what to do.

Errors from subprocesses (the JVM, Maven, docker) and from Kafka clients are
translated into these at the boundary, so a learner sees a sentence, never a
Java stack trace. Nothing in the package raises the root itself, nor a builtin
exception that reaches the caller (tests/unit/test_raises.py scans for both):
each error belongs to one of a few families, named for what a notebook or a
script would catch and do about it::

    except SetupError      fix the machine or the kit's settings, then run again
    except ClusterError    the cluster is down, or not in the state asked for: start it, `eoslab.heal` it
    except ClientError     a client the kit drives (a producer, a processor, a benchmark phase) failed
    except ProtocolError   the wire: bytes that do not decode, a broker that cannot be reached
    except FaultError      the fault proxy or a zombie producer could not do what was asked
    except DataError       a file or table the kit reads (runs, histories, workloads) is not as written
    except GradingError    a lab's check or cell failed, or a notebook cannot be graded

``WaitTimeout`` stands on its own: the one wait helper raises it for the
cluster, the proxy and the processors alike (it is also a ``TimeoutError``).

The whole tree, with where each class is imported from (the families live
here; tests/unit/test_public_api.py checks this drawing against the classes)::

    EoslabError
    ├── SetupError              the machine lacks something (Java 17+, Maven, Docker) or a setting is wrong
    │   ├── PortInUseError      a port the topology needs is taken
    │   └── DataDirError        the data folder belongs to another cluster or is half-written
    ├── ClusterError            the cluster is not in the state a command needs, or Kafka refused it
    │   ├── ClusterNotRunning   a command needs the cluster (or a node) and it is down
    │   ├── ClusterStartError   a node died or the cluster did not become ready in time
    │   ├── UnknownNodeError    a node name that the topology does not have (also a KeyError)
    │   ├── KafkaToolError      eoslab.cluster: a Kafka CLI tool of the pinned release failed
    │   ├── PartitionFolderMissing  eoslab.inspect: no folder of that partition on that broker
    │   └── TransactionNotFound     eoslab.inspect: the coordinator does not know that transactional id
    ├── ClientError             a client the kit drives on the cluster failed or did not answer
    │   ├── JavaClientError     eoslab.java_client: the Java producer's child JVM failed or did not answer
    │   ├── BenchError          eoslab.bench.producers: a benchmark phase failed
    │   ├── PipelineError       eoslab.demos.pipeline: a processor that cannot start, stopped, or a bad crash point
    │   └── ProgramError        eoslab.m07_production.lesson: a module 07 program that cannot run as written
    ├── ProtocolError           eoslab.protocol: bytes that do not decode, a value that does not encode
    │   ├── SchemaError         eoslab.protocol: the message schemas in the kafka-clients jar are unreadable
    │   │   └── JarNotFoundError   eoslab.protocol: the jar is missing (also a SetupError, a FileNotFoundError)
    │   ├── UnsupportedApiError     eoslab.protocol: an api or version the schemas or the broker lack
    │   └── KafkaConnectionError    eoslab.protocol: a socket failed or timed out (also a ConnectionError)
    ├── FaultError              eoslab.faults: the fault proxy could not do what was asked
    │   ├── ProxyNotRunning     eoslab.faults: its control API does not answer
    │   ├── ProxyStartError     eoslab.faults: the daemon did not come up (its log says why)
    │   └── FaultRuleError      eoslab.faults: a rule, query or replay the proxy cannot honour
    ├── DataError               a file, table or argument of the recorded data that the kit cannot use
    │   ├── RunsFormatError     eoslab.runs: a run that lacks a table or a column of the runs format
    │   ├── NoRunsError         eoslab.runs: no complete run under a runs folder (also a FileNotFoundError)
    │   ├── WorkloadError       eoslab.runs: a workload or matrix that cannot be run as given
    │   └── HistoryFormatError  eoslab.history: a history or final-read file the recorder did not write
    ├── GradingError            a lab cannot be graded, or its grading failed
    │   ├── CheckFailed         eoslab.labcheck: a lab check failed (its message is the verdict)
    │   └── CellFailed          eoslab.grading.lab05: the learner's loop did not get through a fault cell
    └── WaitTimeout             a wait ran out: what it waited for, what it last saw (also a TimeoutError)
"""

from __future__ import annotations


class EoslabError(Exception):
    """Root of every error the kit raises on purpose. Raise one of its families, never the root."""


# -- setup: the machine and the kit's settings ----------------------------------------------------------
class SetupError(EoslabError):
    """Something the machine needs is missing (Java, Maven, Docker), or a setting of the kit is wrong."""


class PortInUseError(SetupError):
    """A port of the topology is already bound by another process."""


class DataDirError(SetupError):
    """The data folder cannot be used as it is."""


# -- cluster: its nodes and what Kafka says -------------------------------------------------------------
class ClusterError(EoslabError):
    """The cluster is not in the state a command needs, or Kafka refused what was asked."""


class ClusterNotRunning(ClusterError):
    """The command needs a running cluster (or a running node)."""


class UnknownNodeError(ClusterError, KeyError):
    """A node name that the topology does not define."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class ClusterStartError(ClusterError):
    """A node exited during start-up or the cluster never became ready."""


class KafkaToolError(ClusterError):
    """A Kafka CLI tool of the pinned release (``cluster.tool``) exited with an error; the message holds
    its first error line."""


class PartitionFolderMissing(ClusterError):
    """The partition has no folder on that broker (no such partition, or not a replica there)."""


# -- the other families ---------------------------------------------------------------------------------
class ClientError(EoslabError):
    """A client the kit drives on the cluster (a producer, a processor, a benchmark phase) failed."""


class DataError(EoslabError):
    """A file, table or argument of the recorded data (runs, histories, workloads) the kit cannot use."""


class GradingError(EoslabError):
    """A lab cannot be graded as given, or its grading failed."""


class WaitTimeout(EoslabError, TimeoutError):
    """A wait_until ran out of time."""
