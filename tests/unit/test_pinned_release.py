"""What the pinned Kafka release's jars say, read without a JVM: every class the kit starts is in them, and the
protocol facts the course states about this release are in its message schemas (docs/versions.md).

The jars are the ones `make setup` resolved (``eoslab._jars.kafka_jars``); a class is looked up as a
``.class`` entry of some jar, the schemas through the kit's own codec (``eoslab.protocol``).
"""

from __future__ import annotations

import zipfile
from functools import cache

from eoslab import _image, _jars, protocol
from eoslab.cluster import TOOLS
from eoslab.protocol._schema import FieldSpec
from eoslab.topology import KAFKA_VERSION

STARTED = {
    "kafka.Kafka",  # every node (eoslab/cluster/_local.py, the image's kafka-server-start.sh)
    "kafka.docker.KafkaDockerWrapper",  # the image's entry point: KAFKA_* variables -> server.properties
    "kafka.tools.StorageTool",  # format (eoslab/_cds.py too)
}


@cache
def classes() -> frozenset[str]:
    names: set[str] = set()
    for jar in _jars.kafka_jars():
        with zipfile.ZipFile(jar) as z:
            names.update(n[: -len(".class")].replace("/", ".") for n in z.namelist() if n.endswith(".class"))
    return frozenset(names)


def test_every_class_the_kit_starts_is_in_the_pinned_jars():
    wanted = STARTED | {t.main_class for t in TOOLS.values()} | set(_image.SCRIPTS.values())
    assert sorted(wanted - classes()) == []
    # The moves that broke the 4.1 pin (KAFKA-14579: DumpLogSegments left core in 4.3; ConfigCommand in 4.4).
    assert TOOLS["dump-log"].main_class == "org.apache.kafka.tools.DumpLogSegments"
    assert "kafka.tools.DumpLogSegments" not in classes() and "kafka.admin.ConfigCommand" not in classes()


def test_the_jars_are_the_pinned_release():
    names = {j.rsplit("/", 1)[-1] for j in _jars.kafka_jars()}
    assert {f"kafka_2.13-{KAFKA_VERSION}.jar", f"kafka-clients-{KAFKA_VERSION}.jar"} <= names


def _field(fields: tuple[FieldSpec, ...], path: str) -> FieldSpec:
    head, _, rest = path.partition(".")
    (found,) = [f for f in fields if f.name == head]
    return _field(found.fields, rest) if rest else found


def test_kip_939_is_still_not_usable_its_init_producer_id_version_is_unstable():
    spec = protocol.default_schemas().request("InitProducerId")
    assert spec.latest_version_unstable and spec.valid_versions.highest == 6
    assert 6 in _field(spec.fields, "Enable2Pc").versions  # the 2PC flag lives only in the unstable version


def test_kip_1228_write_txn_markers_v2_carries_the_transaction_version():
    spec = protocol.default_schemas().request("WriteTxnMarkers")
    assert spec.valid_versions.highest == 2 and spec.listeners == ("broker",)
    tv = _field(spec.fields, "Markers.TransactionVersion")
    assert tv.versions.lowest == 2 and tv.type == "int8"


def test_kip_1319_txn_offset_commit_v6_names_topics_by_id():
    spec = protocol.default_schemas().request("TxnOffsetCommit")
    assert spec.valid_versions.highest == 6
    assert 6 in _field(spec.fields, "Topics.TopicId").versions and 6 not in _field(spec.fields, "Topics.Name").versions
    # v3+ carry the group metadata KIP-447 checks; the field's name now says what a KIP-848 group sends in it
    assert _field(spec.fields, "GenerationIdOrMemberEpoch").versions.lowest == 3
