"""The feature levels the cluster finalized: which transaction protocol a client may speak.

A Kafka 4.x cluster formatted with its release's default features finalizes
``transaction.version=2`` (KIP-890 part 2, "TV2"). A broker advertises the finalized levels in its
ApiVersions response, in TAGGED fields (``SupportedFeatures``,
``FinalizedFeaturesEpoch``, ``FinalizedFeatures``, KIP-584): the Java 4.x
client reads them there and switches to TV2 by itself. librdkafka 2.x
ignores them and keeps the original protocol. A feature finalized at level 0
is left out of that response (``kraft.version`` here; ``share.version`` too on
4.1.2, where it was still at 0 — 4.4.0 finalizes it at 2, and ``streams.version``
at 1); FeatureCommand lists it.

Two ways to ask, compared in the tests:

- :func:`finalized_features`: ONE ApiVersions request, in-process (no JVM);
- :func:`describe_features`: Kafka's FeatureCommand (``kafka-features.sh describe``).

confluent-kafka has no features API.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from eoslab.inspect._table import Rows

if TYPE_CHECKING:
    from eoslab.cluster import Cluster

_FEATURE_LINE = re.compile(r"(\w+): (\S+)")


@dataclass(frozen=True)
class Feature:
    """One feature: the level the cluster finalized and the range this broker supports.

    ``finalized`` is an int for ApiVersions; FeatureCommand prints
    ``metadata.version`` as a release name (``4.4-IV2``), kept as text.
    """

    name: str
    finalized: int | str
    supported_min: int | str
    supported_max: int | str
    epoch: int
    source: str  # "ApiVersions" or "FeatureCommand"


def features_from_api_versions(body: dict, source: str = "ApiVersions") -> list[Feature]:  # type: ignore[type-arg]
    """Features from a decoded ApiVersions (v3+) response body."""
    supported = {f["Name"]: (f["MinVersion"], f["MaxVersion"]) for f in body.get("SupportedFeatures") or []}
    epoch = int(body.get("FinalizedFeaturesEpoch", -1))
    out = []
    for f in body.get("FinalizedFeatures") or []:
        lo, hi = supported.get(f["Name"], (-1, -1))
        out.append(Feature(f["Name"], int(f["MaxVersionLevel"]), lo, hi, epoch, source))
    return sorted(out, key=lambda f: f.name)


def finalized_features(cluster: Cluster, broker: int = 1, timeout: float = 5.0) -> Rows[Feature]:
    """The finalized features as ``broker`` advertises them in ApiVersions (one request, no JVM)."""
    from eoslab.protocol import KafkaConnection

    node = cluster.topology.broker(broker)
    with KafkaConnection(*node.direct_address(), client_id="eoslab-inspect", timeout=timeout) as conn:
        version = conn.negotiated_version("ApiVersions")
        body = conn.request("ApiVersions", version, {"ClientSoftwareName": "eoslab", "ClientSoftwareVersion": "0"})
    return Rows(features_from_api_versions(body), Feature)


def _level(text: str) -> int | str:
    return int(text) if text.lstrip("-").isdigit() else text


def parse_feature_describe(text: str) -> list[Feature]:
    """``kafka-features.sh describe``: one ``Feature: ... SupportedMinVersion: ...`` line per feature."""
    out = []
    for line in text.splitlines():
        if not line.startswith("Feature: "):
            continue
        t = dict(_FEATURE_LINE.findall(line))
        out.append(
            Feature(
                name=t["Feature"],
                finalized=_level(t["FinalizedVersionLevel"]),
                supported_min=_level(t["SupportedMinVersion"]),
                supported_max=_level(t["SupportedMaxVersion"]),
                epoch=int(t.get("Epoch", -1)),
                source="FeatureCommand",
            )
        )
    return sorted(out, key=lambda f: f.name)


def describe_features(cluster: Cluster) -> Rows[Feature]:
    """Every feature, finalized levels included at 0, as Kafka's FeatureCommand prints them (one JVM call)."""
    out = cluster.tool("features", "--bootstrap-server", "{bootstrap}", "describe")
    return Rows(parse_feature_describe(out), Feature)


def transaction_version(cluster: Cluster, broker: int = 1) -> int:
    """The finalized ``transaction.version`` (0 when the broker does not advertise it)."""
    for f in finalized_features(cluster, broker):
        if f.name == "transaction.version":
            return int(f.finalized)
    return 0
