"""Which schemas the codec speaks by default: those inside the pinned kafka-clients jar."""

from __future__ import annotations

import os
from pathlib import Path

from eoslab._jars import kafka_clients_jar
from eoslab.protocol._errors import JarNotFoundError
from eoslab.protocol._schema import Schemas, load_schemas
from eoslab.topology import KAFKA_VERSION

JAR_ENV = "EOSLAB_KAFKA_CLIENTS_JAR"


def default_jar() -> Path:
    """The kafka-clients jar whose schemas we speak: ``$EOSLAB_KAFKA_CLIENTS_JAR``, else the pinned
    release in the Maven cache (``~/.m2``), where ``make setup`` puts it."""
    env = os.environ.get(JAR_ENV)
    if env:
        path = Path(env).expanduser()
        where = f"${JAR_ENV}"
    elif os.environ.get("KAFKA_HOME"):
        path, where = kafka_clients_jar(), "$KAFKA_HOME/libs"
    else:
        path = (
            Path.home()
            / ".m2/repository/org/apache/kafka/kafka-clients"
            / KAFKA_VERSION
            / f"kafka-clients-{KAFKA_VERSION}.jar"
        )
        where = "the Maven cache"
    if not path.is_file():
        raise JarNotFoundError(
            f"kafka-clients {KAFKA_VERSION} is not at {path} ({where}): run `make setup` "
            f"to fetch it, or set {JAR_ENV} to a kafka-clients jar."
        )
    return path


_DEFAULTS: dict[tuple[str | None, str], Schemas] = {}


def default_schemas() -> Schemas:
    """The schemas of :func:`default_jar` (parsed once; cheap to call on a hot path)."""
    key = (os.environ.get(JAR_ENV), KAFKA_VERSION)
    schemas = _DEFAULTS.get(key)
    if schemas is None:
        schemas = _DEFAULTS[key] = load_schemas(default_jar())
    return schemas
