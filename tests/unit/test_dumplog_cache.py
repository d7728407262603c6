"""dump_files: one DumpLogSegments call per question, each file's parse cached by (size, mtime).

The tool's stdout is the one recorded from the real cluster (tests/data/inspect/dump_batches_data.txt),
cut into its ``Dumping`` sections and handed back for the files asked: what these tests pin down is
which files reach the tool, which come from the cache, and what a file the tool skipped becomes.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import pytest

from eoslab.inspect import _dumptool
from eoslab.inspect._dumplog import DumpedFile
from eoslab.inspect._dumptool import clear_cache, dump_files

DATA = Path(__file__).resolve().parents[1] / "data" / "inspect"
BASE = "/kafka/broker-1/data"  # log.dirs as the tool sees it
SEGMENT = "00000000000000000000.log"
A, B = ("rec-648f64-0", SEGMENT), ("rec-648f64-1", SEGMENT)


def _sections() -> dict[tuple[str, str], str]:
    """(folder, file) -> the body the real tool printed under its ``Dumping`` header."""
    parts = re.split(r"^Dumping (.*)$", (DATA / "dump_batches_data.txt").read_text(), flags=re.M)
    return {
        (Path(path).parent.name, Path(path).name): body for path, body in zip(parts[1::2], parts[2::2], strict=True)
    }


@dataclass
class _Backend:
    host: Path | None
    name: str = "local"

    def host_data_path(self, node: Any) -> Path | None:
        return self.host

    def data_path(self, node: Any) -> str:
        return BASE


@dataclass
class _Cluster:
    """The two things dump_files asks of a cluster: its backend's paths, and the dump-log tool."""

    backend: _Backend
    calls: list[list[str]] = field(default_factory=list)  # the files of each tool call

    def tool(self, tool: str, *args: str, node: str | None = None) -> str:
        assert tool == "dump-log" and node == "broker-1"
        paths = args[args.index("--files") + 1].split(",")
        self.calls.append(paths)
        known = _sections()
        return "".join(
            f"Dumping {p}{known[(Path(p).parent.name, Path(p).name)]}"
            for p in paths
            if (Path(p).parent.name, Path(p).name) in known
        )


@dataclass(frozen=True)
class _Node:
    name: str = "broker-1"


@pytest.fixture(autouse=True)
def _empty_cache() -> Iterator[None]:
    clear_cache()
    yield
    clear_cache()


def _host(tmp_path: Path, *files: tuple[str, str]) -> Path:
    for folder, name in files:
        (tmp_path / folder).mkdir(exist_ok=True)
        (tmp_path / folder / name).write_bytes(b"x")
    return tmp_path


def _dump(cluster: _Cluster, files: list[tuple[str, str]], *flags: str) -> list[DumpedFile]:
    return dump_files(cast(Any, cluster), cast(Any, _Node()), files, *flags)


def test_one_call_for_every_file_then_the_cache(tmp_path: Path) -> None:
    c = _Cluster(_Backend(_host(tmp_path, A, B)))
    first = _dump(c, [A, B], "--deep-iteration")
    assert c.calls == [[f"{BASE}/{A[0]}/{A[1]}", f"{BASE}/{B[0]}/{B[1]}"]]
    assert [Path(f.path).parent.name for f in first] == [A[0], B[0]]
    assert all(f.batches for f in first)
    again = _dump(c, [B, A], "--deep-iteration")
    assert len(c.calls) == 1, "a file unchanged since its dump is not dumped again"
    assert again[0] is first[1] and again[1] is first[0]


def test_a_changed_file_and_other_flags_are_dumped_again(tmp_path: Path) -> None:
    host = _host(tmp_path, A, B)
    c = _Cluster(_Backend(host))
    _dump(c, [A, B])
    (host / A[0] / A[1]).write_bytes(b"longer now")  # the active segment grew
    _dump(c, [A, B])
    assert c.calls[1] == [f"{BASE}/{A[0]}/{A[1]}"]
    _dump(c, [B], "--print-data-log")
    assert c.calls[2] == [f"{BASE}/{B[0]}/{B[1]}"]


def test_a_file_the_tool_skips_says_so_and_is_asked_again(tmp_path: Path) -> None:
    gone = ("rec-648f64-9", SEGMENT)
    c = _Cluster(_Backend(_host(tmp_path, A, gone)))
    out = _dump(c, [gone, A])
    assert out[0].path == f"{BASE}/{gone[0]}/{gone[1]}"
    assert out[0].notes == ["the tool printed nothing for this file"] and not out[0].batches
    assert out[1].batches
    _dump(c, [gone, A])
    assert c.calls[1] == [f"{BASE}/{gone[0]}/{gone[1]}"], "only what was parsed is cached"


def test_without_a_host_path_or_the_file_every_question_runs_the_tool(tmp_path: Path) -> None:
    in_container = _Cluster(_Backend(None, name="docker"))
    _dump(in_container, [A])
    _dump(in_container, [A])
    assert len(in_container.calls) == 2, "no (size, mtime) to key a cache entry on"
    deleted = _Cluster(_Backend(tmp_path))  # retention removed the file since the listing
    assert _dump(deleted, [A])[0].batches
    _dump(deleted, [A])
    assert len(deleted.calls) == 2


def test_the_oldest_entry_is_evicted_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_dumptool, "_CACHE_SIZE", 1)
    c = _Cluster(_Backend(_host(tmp_path, A, B)))
    _dump(c, [A])
    _dump(c, [B])  # evicts A
    _dump(c, [B])
    _dump(c, [A])
    assert c.calls == [[f"{BASE}/{p[0]}/{p[1]}"] for p in (A, B, A)]
