"""A Kafka wire-protocol codec driven by Kafka's own message schemas.

Why: the traces, the TCP proxy and the raw requests of the course must speak
exactly the protocol of the pinned Kafka release. Rather than hand-written
layouts that drift, every request and response is decoded and encoded from the
JSON message definitions shipped inside the pinned kafka-clients jar
(``common/message/*.json``), compiled once per (message, version) into
closures. Bumping the pinned release re-points the codec; nothing else changes.

Example (``frame[4:]`` drops the size prefix)::

    from eoslab import protocol

    frame = protocol.encode_request("InitProducerId", 4, 7, "me",
                                    {"TransactionalId": "tx-1", "TransactionTimeoutMs": 60000})
    protocol.decode_request(frame[4:]).body["TransactionalId"]      # 'tx-1'
    with protocol.KafkaConnection("localhost", 9092) as conn:
        conn.request("FindCoordinator", None, {"KeyType": 1, "CoordinatorKeys": ["tx-1"]})

Raises (all subclasses of :class:`ProtocolError`, itself an ``EoslabError``):

- :class:`ProtocolError` bytes that do not decode (truncated, garbage, trailing
  bytes) or a value that does not encode (wrong type, unknown field, None for a
  non-nullable field); the message names the message, version and field.
- :class:`UnsupportedApiError` an api key, name or version the pinned schemas
  (or the broker) do not have.
- :class:`SchemaError` the jar is unreadable; :class:`JarNotFoundError` (also a
  ``SetupError`` and a ``FileNotFoundError``) it is missing: run `make setup`.
- :class:`KafkaConnectionError` (also a ``ConnectionError``) socket failures and
  timeouts of :class:`KafkaConnection`.
"""

from __future__ import annotations

from eoslab.protocol._batch_encode import crc32c, encode_record_batch
from eoslab.protocol._client import KafkaConnection
from eoslab.protocol._codec import UNKNOWN_TAGGED_FIELDS, compile_message, decode, default_message, encode
from eoslab.protocol._defaults import JAR_ENV, default_jar, default_schemas
from eoslab.protocol._errors import (
    JarNotFoundError,
    KafkaConnectionError,
    ProtocolError,
    SchemaError,
    UnsupportedApiError,
)
from eoslab.protocol._frames import (
    Request,
    RequestHeaderInfo,
    Response,
    decode_request,
    decode_response,
    encode_request,
    encode_response,
    peek_correlation_id,
    peek_request_header,
    request_header_version,
    response_header_version,
)
from eoslab.protocol._records import (
    Compression,
    ControlType,
    RecordBatchHeader,
    TimestampType,
    iter_record_batches,
    parse_record_batches,
)
from eoslab.protocol._schema import FieldSpec, MessageSpec, Schemas, Versions, load_schemas, parse_spec
from eoslab.topology import KAFKA_VERSION  # the one pinned release

__all__ = [
    "Compression",
    "ControlType",
    "FieldSpec",
    "JAR_ENV",
    "JarNotFoundError",
    "KAFKA_VERSION",
    "KafkaConnection",
    "KafkaConnectionError",
    "MessageSpec",
    "ProtocolError",
    "RecordBatchHeader",
    "Request",
    "RequestHeaderInfo",
    "Response",
    "SchemaError",
    "Schemas",
    "TimestampType",
    "UNKNOWN_TAGGED_FIELDS",
    "UnsupportedApiError",
    "Versions",
    "compile_message",
    "crc32c",
    "decode",
    "decode_request",
    "decode_response",
    "default_jar",
    "default_message",
    "default_schemas",
    "encode",
    "encode_record_batch",
    "encode_request",
    "encode_response",
    "iter_record_batches",
    "load_schemas",
    "parse_record_batches",
    "parse_spec",
    "peek_correlation_id",
    "peek_request_header",
    "request_header_version",
    "response_header_version",
]
