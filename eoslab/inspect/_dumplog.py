"""Kafka's DumpLogSegments, run once per question and parsed into objects.

Why parse instead of decoding the files ourselves: the tool of the pinned
release IS the reference reader of its own log format (batches, control
records, producer-state snapshots, the ``__transaction_state`` and
``__cluster_metadata`` decoders). We only read its text, which is stable
enough across 4.x: ``name: value`` tokens per batch and per record (``| ``
prefix), one ``Dumping <file>`` header per file.

Running the tool, one JVM call per question with a cache of each file's parse, is
:mod:`eoslab.inspect._dumptool`'s.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from typing import Any

from eoslab.errors import DataError

_TOKEN = re.compile(r"(\w+): (\S+)")
_JSON_PART = re.compile(r"^ (\w+):? (?=[{\[])")  # "LeaderChange: {..}" and "SnapshotHeader {..}"


@dataclass(frozen=True)
class Record:
    """One record of a batch (``--deep-iteration``).

    ``key``/``value`` are the tool's rendering (``--print-data-log``): text for
    plain data, JSON text for the internal-topic decoders, ``None`` when not
    asked for. DumpLogSegments prints header KEYS only, never header values.
    A control record carries ``marker`` (``COMMIT``/``ABORT``, KIP-98) and
    ``coordinator_epoch``, or ``control_type`` for KRaft control records
    (``LeaderChange``, ``SnapshotHeader`` ...) with ``control_data``.
    """

    offset: int
    timestamp: int
    key_size: int
    value_size: int
    sequence: int
    header_keys: tuple[str, ...] = ()
    key: str | None = None
    value: str | None = None
    marker: str | None = None
    coordinator_epoch: int | None = None
    control_type: str | None = None
    control_data: str | None = None

    def key_json(self) -> Any:
        return json.loads(self.key) if self.key else None

    def value_json(self) -> Any:
        """The decoded payload, or ``None`` for a tombstone (the decoders print ``<DELETE>``)."""
        if not self.value or self.value[:1] not in "{[":
            return None
        return json.loads(self.value)


@dataclass(frozen=True)
class Batch:
    """One record batch as it sits on disk (the v2 header, KIP-98).

    Without idempotence the header still carries producer id, epoch and base
    sequence, all -1: idempotence adds no bytes on disk. ``marker`` is set for
    a transaction marker (a control batch of one COMMIT or ABORT record).
    """

    file: str
    base_offset: int
    last_offset: int
    count: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    last_sequence: int
    is_transactional: bool
    is_control: bool
    marker: str | None
    coordinator_epoch: int | None
    partition_leader_epoch: int
    timestamp_type: str
    timestamp: int
    position: int
    size: int
    compression: str
    records: tuple[Record, ...] = ()


@dataclass(frozen=True)
class SnapshotEntry:
    """One producer of a producer-state ``.snapshot`` file (what a broker reloads on restart).

    ``snapshot_offset`` is the file's name: the state is as of that log offset.
    ``current_txn_first_offset`` is the first offset of the producer's open
    transaction (what holds the LSO back), ``None`` when none is open.
    """

    file: str
    snapshot_offset: int
    producer_id: int
    producer_epoch: int
    coordinator_epoch: int
    current_txn_first_offset: int | None
    last_timestamp: int
    first_sequence: int
    last_sequence: int
    last_offset: int
    offset_delta: int


@dataclass(frozen=True)
class AbortedTxn:
    """One entry of a segment's ``.txnindex``: an aborted transaction of one producer (KIP-98).

    Each replica appends one when it writes an ABORT marker: ``first_offset`` of the
    aborted transaction, ``last_offset`` = the marker's, ``last_stable_offset`` the LSO
    after it. A ``read_committed`` fetch sends these so the consumer drops those batches.
    """

    file: str
    version: int
    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int


@dataclass
class DumpedFile:
    """The parse of one ``Dumping <file>`` section."""

    path: str
    batches: list[Batch] = field(default_factory=list)
    snapshot: list[SnapshotEntry] = field(default_factory=list)
    aborted: list[AbortedTxn] = field(default_factory=list)  # a .txnindex file's entries
    notes: list[str] = field(default_factory=list)  # lines we did not recognise, kept for debugging


def _int(text: str) -> int:
    return int(text)


def _optional_long(text: str) -> int | None:
    m = re.fullmatch(r"OptionalLong\[(-?\d+)\]", text)
    return int(m.group(1)) if m else None


def _parse_record(line: str) -> Record:
    body = line[2:]
    head, sep, rest = body.partition(" headerKeys: [")
    if not sep:
        raise DataError(f"DumpLogSegments printed a record line without headerKeys: {line!r}.")
    hk_text, _, rest = rest.partition("]")
    tok = dict(_TOKEN.findall(head))
    ts_name = next((k for k in tok if k.endswith("Time")), None)
    marker = coord = control_type = control_data = key = value = None
    if rest.startswith(" endTxnMarker: "):
        t = dict(_TOKEN.findall(rest))
        marker, coord = t["endTxnMarker"], int(t["coordinatorEpoch"])
    elif rest.startswith(" key: "):
        key, value = _split_key_payload(rest[len(" key: ") :])
    elif rest.startswith(" payload: "):
        value = rest[len(" payload: ") :]
    elif (m := _JSON_PART.match(rest)) is not None:
        control_type, control_data = m.group(1), rest[m.end() :]
    elif rest.startswith(" controlType: "):
        control_type = rest[len(" controlType: ") :]
    return Record(
        offset=int(tok["offset"]),
        timestamp=int(tok[ts_name]) if ts_name else -1,
        key_size=int(tok.get("keySize", -1)),
        value_size=int(tok.get("valueSize", -1)),
        sequence=int(tok.get("sequence", -1)),
        header_keys=tuple(k for k in hk_text.split(",") if k),
        key=key,
        value=value,
        marker=marker,
        coordinator_epoch=coord,
        control_type=control_type,
        control_data=control_data,
    )


def _split_key_payload(text: str) -> tuple[str, str | None]:
    """``<key> payload: <value>``: a JSON key is read as JSON, so a ``payload:`` inside it cannot fool us."""
    if text[:1] == "{":
        try:
            _, end = json.JSONDecoder().raw_decode(text)
        except ValueError:
            end = -1
        if end > 0:
            rest = text[end:]
            return text[:end], rest[len(" payload: ") :] if rest.startswith(" payload: ") else None
    key, sep, value = text.partition(" payload: ")
    return key, (value if sep else None)


def _batch(path: str, tok: dict[str, str]) -> Batch:
    ts_name = next((k for k in tok if k.endswith("Time") and k != "deleteHorizonMs"), "NoTimestampType")
    return Batch(
        file=path,
        base_offset=_int(tok["baseOffset"]),
        last_offset=_int(tok["lastOffset"]),
        count=_int(tok["count"]),
        producer_id=_int(tok["producerId"]),
        producer_epoch=_int(tok["producerEpoch"]),
        base_sequence=_int(tok["baseSequence"]),
        last_sequence=_int(tok["lastSequence"]),
        is_transactional=tok["isTransactional"] == "true",
        is_control=tok["isControl"] == "true",
        marker=None,
        coordinator_epoch=None,
        partition_leader_epoch=_int(tok["partitionLeaderEpoch"]),
        timestamp_type=ts_name,
        timestamp=_int(tok.get(ts_name, "-1")),
        position=_int(tok["position"]),
        size=_int(tok["size"]),
        compression=tok.get("compresscodec", "none"),
    )


def _finish(batch: Batch, records: list[Record]) -> Batch:
    from dataclasses import replace

    marker = next((r.marker for r in records if r.marker), None)
    coord = next((r.coordinator_epoch for r in records if r.marker), None)
    return replace(batch, records=tuple(records), marker=marker, coordinator_epoch=coord)


def _snapshot_offset(path: str) -> int:
    stem = os.path.basename(path).split(".")[0]
    return int(stem) if stem.isdigit() else -1


def _snapshot_entry(path: str, t: dict[str, str]) -> SnapshotEntry:
    """One producer line of a ``.snapshot`` file's dump."""
    return SnapshotEntry(
        file=path,
        snapshot_offset=_snapshot_offset(path),
        producer_id=int(t["producerId"]),
        producer_epoch=int(t["producerEpoch"]),
        coordinator_epoch=int(t["coordinatorEpoch"]),
        current_txn_first_offset=_optional_long(t["currentTxnFirstOffset"]),
        last_timestamp=int(t["lastTimestamp"]),
        first_sequence=int(t["firstSequence"]),
        last_sequence=int(t["lastSequence"]),
        last_offset=int(t["lastOffset"]),
        offset_delta=int(t["offsetDelta"]),
    )


def _aborted_txn(path: str, t: dict[str, str]) -> AbortedTxn:
    """One entry line of a ``.txnindex`` file's dump."""
    return AbortedTxn(
        file=path,
        version=int(t["version"]),
        producer_id=int(t["producerId"]),
        first_offset=int(t["firstOffset"]),
        last_offset=int(t["lastOffset"]),
        last_stable_offset=int(t["lastStableOffset"]),
    )


def parse_dump(text: str) -> list[DumpedFile]:
    """Parse the whole stdout of one DumpLogSegments call, one :class:`DumpedFile` per file."""
    files: list[DumpedFile] = []
    cur: DumpedFile | None = None
    pending: Batch | None = None
    records: list[Record] = []

    def flush() -> None:
        nonlocal pending, records
        if cur is not None and pending is not None:
            cur.batches.append(_finish(pending, records))
        pending, records = None, []

    for line in text.splitlines():
        if line.startswith("Dumping "):
            flush()
            cur = DumpedFile(line[len("Dumping ") :].strip())
            files.append(cur)
        elif cur is None:
            continue
        elif line.startswith("| "):
            if pending is None:
                cur.notes.append(line)
            else:
                records.append(_parse_record(line))
        elif line.startswith("baseOffset: "):
            flush()
            pending = _batch(cur.path, dict(_TOKEN.findall(line)))
        elif line.startswith("producerId: "):
            cur.snapshot.append(_snapshot_entry(cur.path, dict(_TOKEN.findall(line))))
        elif line.startswith("version: ") and "producerId: " in line:
            cur.aborted.append(_aborted_txn(cur.path, dict(_TOKEN.findall(line))))
        elif line.strip() and not line.startswith("Log starting offset"):
            cur.notes.append(line)
    flush()
    return files
