"""examples/ as a learner meets them before any cluster: each program is plain confluent-kafka (no `eoslab`
import, so it can be copied out of the course), answers `--help` with one command, and defaults its
`--bootstrap-servers` to the course cluster's address as eoslab.topology defines it. Their runs on the cluster:
tests/integration/test_examples.py."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from eoslab._ports import LOOPBACK
from eoslab.topology import Topology

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
PROGRAMS = ["idempotent_producer.py", "transactional_producer.py", "read_committed_consumer.py", "eos_loop.py"]


def test_the_four_programs_are_there():
    assert sorted(p.name for p in EXAMPLES.glob("*.py")) == sorted(PROGRAMS)


@pytest.mark.parametrize("name", PROGRAMS)
def test_a_program_imports_no_eoslab(name):
    tree = ast.parse((EXAMPLES / name).read_text())
    imported = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {(n.module or "").split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert "eoslab" not in imported
    assert "confluent_kafka" in imported


@pytest.mark.parametrize("name", PROGRAMS)
def test_a_program_says_how_to_run_it_and_defaults_to_the_course_cluster(name):
    out = subprocess.run([sys.executable, str(EXAMPLES / name), "--help"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "--bootstrap-servers" in out.stdout
    course = Topology(port_offset=0).bootstrap_servers(proxied=False, host=LOOPBACK)
    assert f'COURSE_CLUSTER = "{course}"' in (EXAMPLES / name).read_text()


def test_a_notebook_shows_the_real_lines_of_a_definition():
    """eoslab.code_of / show_code: what notebooks 03 and 05 show of examples/eos_loop.py is the file's own text."""
    from eoslab import code_of
    from eoslab.errors import SetupError

    path = EXAMPLES / "eos_loop.py"
    source, [(first, last)] = code_of(path, "next_offsets")
    lines = path.read_text().splitlines()
    assert source == "\n".join(lines[first - 1 : last]) and source.startswith("def next_offsets(")
    assert "r.offset() + 1" in source
    with pytest.raises(SetupError, match="defines no nothing_here"):
        code_of(path, "nothing_here")


def test_the_java_loop_is_plain_kafka_clients_and_defaults_to_the_course_cluster():
    """examples/java/EosLoop.java: Kafka's own client only, and the course cluster's address. Its run on the
    cluster (compiled by `java` itself, killed mid-transaction, restarted): tests/integration/test_examples.py."""
    source = (EXAMPLES / "java" / "EosLoop.java").read_text()
    imports = {line.split()[1].rstrip(";") for line in source.splitlines() if line.startswith("import ")}
    assert all(i.startswith(("java.", "org.apache.kafka.")) for i in imports), imports
    assert "org.apache.kafka.clients.producer.KafkaProducer" in imports
    course = Topology(port_offset=0).bootstrap_servers(proxied=False, host=LOOPBACK)
    assert f'COURSE_CLUSTER = "{course}"' in source
    assert '"isolation.level", "read_committed"' in source and '"enable.auto.commit", "false"' in source
