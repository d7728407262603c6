"""The package's prose says what holds, not when it was written: no comment, docstring or other string of
eoslab/ dates itself. The record of what happened when is git's and docs/ (docs/reliability.md,
docs/benchmarks*.md); the code says what it does and why, in the present tense.

What is read: every comment and every string literal of the package's ``.py`` files (docstrings, help texts,
messages), and every line of its text resources (XML, shell, Dockerfiles, YAML, properties, Java). What fails:

* the project's own issue numbers: ``issue 14``, ``issues 3 and 4``, ``#14``;
* run and session numbers of the project's own record: ``run 83``, ``runs 77``, ``session 15``, ``session-14``;
* dates of past runs: ``2026-11-28``, ``28 Nov``, ``Nov 28``, a run folder's stamp ``20261128T150640``;
* sentences that tell a change rather than the code: ``the old way``, ``before the fix``, ``used to be``,
  ``previously``, ``formerly``, ``was changed``.

What stays, since it names a fact outside the project:

* an upstream reference: ``KIP-890``, ``KAFKA-17754``, ``SPARK-12345`` (never caught: no pattern above takes
  them), and an issue or pull request of an upstream project written with the project's name right before it:
  ``librdkafka issue #4849``, ``librdkafka issues #5511, #5456``, ``confluent-kafka-python #1234``,
  ``Spark PR #42``, ``jepsen #7`` — the project (librdkafka, confluent-kafka, confluent-kafka-python,
  confluent-kafka-go, Spark, PySpark, Jepsen, JDK, OpenJDK), then optionally ``issue``/``issues``/``PR``/
  ``pull request``/``bug``, then the numbers;
* a date on a line that holds a URL (the publication date of the source it cites);
* a string literal that is a date or a colour and nothing else (data: a synthetic run's start, ``"#777"``).
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

import pytest

import eoslab

PACKAGE = Path(eoslab.__file__).parent
ROOT = PACKAGE.parent
RESOURCE_SUFFIXES = {".xml", ".sh", ".yml", ".yaml", ".properties", ".java", ".json", ".txt", ".md", ".cfg", ""}

_MONTH = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sept?(?:ember)?|Oct(?:ober)?"
    r"|Nov(?:ember)?|Dec(?:ember)?)\b"
)
"""A month as a date writes it, capitalised (``28 Nov``, ``November 28``): "may" and "10 markers" are not dates."""

OWN: dict[str, re.Pattern[str]] = {
    "an issue number of the project's own": re.compile(r"\bissues? #?\d+|(?:^|(?<=[\s(\[,;]))#\d+\b", re.I),
    "a run or session number of the project's record": re.compile(r"\bruns? \d+\b|\bsessions? ?-?\d+\b", re.I),
    "a date": re.compile(rf"\b20\d\d-\d\d-\d\d\b|\b20\d{{6}}T\d{{4,6}}\b|\b\d{{1,2}} {_MONTH}|\b{_MONTH} \d{{1,2}}\b"),
    "a change told rather than the code": re.compile(
        r"\bthe old way\b|\b(?:before|after|since) the (?:fix|change)e?s?\b|\bused to be\b|\bpreviously\b"
        r"|\bformerly\b|\b(?:was|were) changed\b",
        re.I,
    ),
}
"""What dates a line: pattern name -> pattern."""

UPSTREAM = re.compile(
    r"\b(?:librdkafka|confluent-kafka(?:-python|-go)?|pyspark|spark|jepsen|openjdk|jdk)(?:'s)?"
    r"(?: (?:issues?|prs?|pull requests?|bugs?))? ?#\d+(?:(?:,| and| or) #\d+)*",
    re.I,
)
"""An upstream project's issue or pull request, the project named right before the numbers."""
URL = re.compile(r"https?://")
DATA = re.compile(r"\d{4}-\d\d-\d\d|#[0-9a-fA-F]{3}(?:[0-9a-fA-F]{3})?")
"""A string literal that is data, not prose: a date alone, a colour alone."""


def dating(line: str) -> list[str]:
    """The names of the patterns that date ``line`` once its upstream references are taken out."""
    text = UPSTREAM.sub("", line)
    return [name for name, pat in OWN.items() if pat.search(text) and not (name == "a date" and URL.search(text))]


def _python_prose(source: str) -> Iterator[tuple[int, str]]:
    """(line number, text) of every comment and every line of every string literal of a module."""
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            yield tok.start[0], tok.string
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and not DATA.fullmatch(node.value):
            for i, line in enumerate(node.value.splitlines()):
                yield node.lineno + i, line


def _prose() -> Iterator[tuple[Path, int, str]]:
    for path in sorted(PACKAGE.rglob("*")):
        if not path.is_file() or "__pycache__" in path.parts:
            continue
        if path.suffix == ".py":
            for n, line in _python_prose(path.read_text()):
                yield path, n, line
        elif path.suffix in RESOURCE_SUFFIXES or path.name == "Dockerfile":
            try:
                text = path.read_text()
            except UnicodeDecodeError:
                continue
            for n, line in enumerate(text.splitlines(), 1):
                yield path, n, line


def test_no_comment_or_docstring_dates_itself() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{n}: {', '.join(names)}: {line.strip()[:100]}"
        for path, n, line in _prose()
        if (names := dating(line))
    ]
    assert not found, (
        "prose in eoslab/ that says when, not what: say what the code does and why, in the present tense "
        "(the history belongs to git and docs/):\n" + "\n".join(found)
    )


@pytest.mark.parametrize(
    "line",
    [
        "# the proxy after the cluster, as before issue 14",
        "(issues 3 and 4)",
        "see #14 for the measurements",
        "(course tier, run 81)",
        "the cluster test found it once (runs 77)",
        "(docs/reliability.md, session 15)",
        "the session-14 record runs",
        "measured with the report on 28 Nov",
        "measured on Nov 28, load 4",
        "(2026-11-28: t4's pooled samples)",
        "the quiet run ``spin-20261128T105514-2385``",
        "The old way: the reports counted",
        "slower than before the fix",
        "this used to be a thread",
        "previously the proxy started last",
        "the default was changed to 5 s",
        "confluent-kafka issue 14 (an upstream number is written with #)",
    ],
)
def test_a_dated_line_is_caught(line: str) -> None:
    assert dating(line), line


@pytest.mark.parametrize(
    "line",
    [
        "transaction protocol v2, KIP-890: the epoch is bumped on every commit",
        "Kafka's transaction protocol (KAFKA-17754) allows lost writes",
        "a stored timeout that nothing reads (librdkafka issue #4849)",
        "(librdkafka issues #5511, #5456)",
        "librdkafka issues #5511 and #5456: its lookup is never repeated",
        "confluent-kafka-python #1234 and Spark PR #42",
        "Jepsen's Bufstream 0.1.0 analysis (2024-11-12, https://jepsen.io/analyses/bufstream-0.1.0)",
        "the session's timeout (session.timeout.ms = 6 s) expires first",
        "a run of 3 rounds, 2 s each",
        "4 rounds of (5 modes × 1.5 s)",
        "<circle r='9' fill='#333'/>",
        "the t1#2:0 record of actor t1",
        "before its first cell ended, an earlier measurement is worth more",
        "``2 cores, 7.8 GiB, Linux 6.1.0, YYYY-MM-DD``",
        "may be used to decide the order",
        "the 10 markers of 2 transactions, 2 may fail",
    ],
)
def test_a_present_tense_line_passes(line: str) -> None:
    assert not dating(line), dating(line)


def test_a_date_or_colour_alone_is_data_and_a_dated_comment_is_not() -> None:
    source = 'STARTED = "2026-01-01"  # the synthetic run starts here\nX = 1  # measured 2026-11-28\nGREY = "#777"\n'
    assert [n for n, line in _python_prose(source) if dating(line)] == [2]
