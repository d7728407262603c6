"""eoslab.protocol: loading Kafka's message definitions from the jar."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from eoslab import protocol
from eoslab.protocol import (
    JarNotFoundError,
    SchemaError,
    Schemas,
    UnsupportedApiError,
    Versions,
    load_schemas,
    parse_spec,
)
from eoslab.protocol._schema import strip_comments


@pytest.mark.parametrize(
    ("text", "lo", "hi", "shown"),
    [
        ("0+", 0, 0x7FFF, "0+"),
        ("3-7", 3, 7, "3-7"),
        ("5", 5, 5, "5"),
        ("none", 0, -1, "none"),
        (" 2+ ", 2, 0x7FFF, "2+"),
    ],
)
def test_versions_parse(text: str, lo: int, hi: int, shown: str) -> None:
    v = Versions.parse(text)
    assert (v.lowest, v.highest, str(v)) == (lo, hi, shown)
    assert (lo in v) == (lo <= hi)


def test_versions_bad_and_intersect() -> None:
    with pytest.raises(SchemaError):
        Versions.parse("x-y")
    assert Versions.parse("2+").intersect(Versions.parse("0-3")) == Versions(2, 3)
    assert Versions.parse("4+").intersect(Versions.parse("0-3")).empty


def test_comments_are_stripped_but_not_inside_strings() -> None:
    text = '// head\n{ "a": "http://x.org // not a comment", // trailing\n  "b": "q\\"//" }\n'
    assert strip_comments(text) == '\n{ "a": "http://x.org // not a comment", \n  "b": "q\\"//" }\n'


def test_parse_spec_with_common_structs_tags_and_defaults() -> None:
    spec = parse_spec("""
    // comment
    { "apiKey": 500, "type": "request", "name": "FooRequest",
      "validVersions": "0-2", "flexibleVersions": "1+",
      "fields": [
        { "name": "Things", "type": "[]Thing", "versions": "0+", "about": "see https://kafka.apache.org" },
        { "name": "Extra", "type": "Thing", "versions": "1+", "nullableVersions": "1+", "default": "null",
          "taggedVersions": "1+", "tag": 0 },
        { "name": "Mode", "type": "int8", "versions": "2+", "default": "0x10", "ignorable": true }
      ],
      "commonStructs": [
        { "name": "Thing", "versions": "0+", "fields": [
          { "name": "Id", "type": "uuid", "versions": "0+" } ]} ] }
    """)
    assert (spec.api_key, spec.api_name, spec.type) == (500, "Foo", "request")
    things, extra, mode = spec.fields
    assert things.is_array and things.is_struct and things.fields[0].name == "Id"
    assert extra.fields == things.fields and extra.is_tagged(1) and not extra.is_tagged(0)
    assert mode.default == "0x10" and mode.ignorable
    assert protocol.default_message(spec, 2) == {"Things": [], "Extra": None, "Mode": 16}
    data = protocol.encode(spec, 2, {"Extra": {"Id": "00000000-0000-0000-0000-000000000001"}})
    assert protocol.decode(spec, 2, data)[0]["Extra"]["Id"].int == 1
    with pytest.raises(SchemaError, match="Missing"):
        parse_spec(
            '{"name": "X", "type": "data", "validVersions": "0", '
            '"fields": [{"name": "A", "type": "Missing", "versions": "0+"}]}'
        )


def test_the_pinned_jar(schemas: Schemas) -> None:
    assert schemas.api_key("Produce") == schemas.api_key("produce") == schemas.api_key("ProduceResponse") == 0
    assert schemas.api_key(26) == 26 and schemas.api_name(22) == "InitProducerId"
    with pytest.raises(UnsupportedApiError):
        schemas.api_key(10_000)
    with pytest.raises(UnsupportedApiError):
        schemas.api_key("Nope")
    assert schemas.request("EndTxn").name == "EndTxnRequest" and schemas.response(26).name == "EndTxnResponse"
    assert schemas.data("EndTxnMarker").type == "data"
    client_id = schemas.request_header.fields[-1]
    assert client_id.name == "ClientId" and client_id.flexible_versions is not None
    assert client_id.flexible_versions.empty  # "flexibleVersions": "none": int16 length even in header v2
    assert str(schemas.request_header.valid_versions) == "1-2"
    assert len(set(schemas.api_names.values())) == len(schemas.api_names)
    assert load_schemas(schemas.source) is schemas  # cached per jar path


def test_default_jar_env_and_missing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    fake = tmp_path / "clients.jar"
    with zipfile.ZipFile(fake, "w") as z:
        z.writestr(
            "common/message/RequestHeader.json",
            '{"type": "header", "name": "RequestHeader", '
            '"validVersions": "1-2", "flexibleVersions": "2+", "fields": []}',
        )
        z.writestr(
            "common/message/ResponseHeader.json",
            '{"type": "header", "name": "ResponseHeader", '
            '"validVersions": "0-1", "flexibleVersions": "1+", "fields": []}',
        )
    monkeypatch.setenv(protocol.JAR_ENV, str(fake))
    assert protocol.default_jar() == fake
    assert protocol.default_schemas().requests == {}
    monkeypatch.setenv(protocol.JAR_ENV, str(tmp_path / "absent.jar"))
    with pytest.raises(JarNotFoundError, match="make setup") as info:
        protocol.default_jar()
    assert isinstance(info.value, FileNotFoundError) and str(info.value).count(".") >= 1
    monkeypatch.delenv(protocol.JAR_ENV)
    monkeypatch.setattr("eoslab.protocol._defaults.KAFKA_VERSION", "0.0.0-absent")  # where default_jar reads it
    with pytest.raises(JarNotFoundError, match="kafka-clients-0.0.0-absent.jar"):
        protocol.default_jar()


def test_not_a_jar(tmp_path: Path) -> None:
    bogus = tmp_path / "bogus.jar"
    bogus.write_bytes(b"not a zip")
    with pytest.raises(SchemaError):
        load_schemas(bogus)
    empty = tmp_path / "empty.jar"
    zipfile.ZipFile(empty, "w").close()
    with pytest.raises(SchemaError, match="no common/message"):
        load_schemas(empty)


def test_public_surface() -> None:
    assert protocol.__all__ == sorted(protocol.__all__)
    assert all(hasattr(protocol, name) for name in protocol.__all__)
    assert protocol.KAFKA_VERSION == "4.4.0"
