"""The exceptions of :mod:`eoslab.protocol` (all rooted at :class:`ProtocolError`)."""

from __future__ import annotations

from eoslab.errors import EoslabError, SetupError


class ProtocolError(EoslabError):
    """Bytes that do not decode, or a value that does not encode, under Kafka's schemas."""


class SchemaError(ProtocolError):
    """The message definitions in the kafka-clients jar could not be read or understood."""


class JarNotFoundError(SchemaError, SetupError, FileNotFoundError):
    """The pinned kafka-clients jar (which holds the message definitions) is not on disk."""

    def __str__(self) -> str:  # OSError would prefix an errno
        return str(self.args[0]) if self.args else ""


class UnsupportedApiError(ProtocolError):
    """An api key, api name or api version that the pinned schemas (or the broker) do not have."""


class KafkaConnectionError(ProtocolError, ConnectionError):
    """The socket to the broker failed, timed out or was closed mid-exchange."""

    def __str__(self) -> str:  # OSError would prefix an errno
        return str(self.args[0]) if self.args else ""
