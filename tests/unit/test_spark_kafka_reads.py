"""Spark reads transactional topics one way everywhere in the kit (issue: Spark past an open transaction):
every Spark Kafka read of ``eoslab/`` goes through ``eoslab.analysis.kafka_source``, which ends at ``latest``
(the LSO under read_committed) with ``failOnDataLoss`` true; nothing reads with ``failOnDataLoss=false`` or
with ending offsets of its own. Notebook 07's mistake 8 shows on the cluster what the other ways do."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _kafka_reads(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, enclosing function) of every ``.format("kafka")`` call."""
    out = []
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(fn):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "format"
                    and [a.value for a in node.args if isinstance(a, ast.Constant)] == ["kafka"]
                ):
                    out.append((node.lineno, fn.name))
    return out


def test_every_spark_kafka_read_is_the_one_that_ends_at_the_lso() -> None:
    found = {}
    for path in sorted((ROOT / "eoslab").rglob("*.py")):
        reads = _kafka_reads(ast.parse(path.read_text()))
        if reads:
            found[str(path.relative_to(ROOT))] = {f for _, f in reads}
    assert found == {"eoslab/analysis/_audit.py": {"kafka_source"}}, found


def _options(tree: ast.AST) -> list[tuple[object, object]]:
    """(name, value) of every ``.option("name", <constant>)`` call."""
    out: list[tuple[object, object]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "option":
            args = [a.value for a in node.args if isinstance(a, ast.Constant)]
            if len(args) == len(node.args) == 2:
                out.append((args[0], args[1]))
    return out


def test_nothing_in_the_kit_skips_an_open_transaction() -> None:
    options = [o for path in sorted((ROOT / "eoslab").rglob("*.py")) for o in _options(ast.parse(path.read_text()))]
    assert ("endingOffsets", "latest") in options and ("failOnDataLoss", "true") in options
    assert [v for k, v in options if k == "failOnDataLoss"] == ["true"]
    assert [v for k, v in options if k == "endingOffsets"] == ["latest"]


def test_the_checks_find_a_read_of_their_own() -> None:
    tree = ast.parse(
        'def audit(spark):\n    return spark.read.format("kafka").option("failOnDataLoss", "false").load()\n'
    )
    assert _kafka_reads(tree) == [(2, "audit")]
    assert _options(tree) == [("failOnDataLoss", "false")]
