"""The kit's exceptions: every message is one sentence that says what to do.

Errors from subprocesses (the JVM, Maven, docker) and from Kafka clients are
translated into these at the boundary, so a learner sees a sentence, never a
Java stack trace::

    EoslabError
    ├── SetupError            the machine lacks something (Java 17+, Maven, Docker)
    ├── PortInUseError        a port the topology needs is taken
    ├── DataDirError          the data folder belongs to another cluster or is half-written
    ├── ClusterNotRunning     a command needs the cluster and it is down
    ├── UnknownNodeError      a node name that the topology does not have
    ├── ClusterStartError     a node died or the cluster did not become ready in time
    └── WaitTimeout           a wait ran out (says what it waited for and what it last saw)
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
