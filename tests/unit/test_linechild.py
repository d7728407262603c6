"""The line-protocol child the zombie producer and the Java producer share, with a tiny Python child."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from eoslab._linechild import LineChild
from eoslab.errors import EoslabError

ECHO = """
import json, sys
print("child log line", file=sys.stderr, flush=True)
for line in sys.stdin:
    cmd = line.strip()
    if cmd == "exit":
        sys.exit(3)
    if cmd == "hang":
        continue
    print(json.dumps({"ok": True, "echo": cmd}), flush=True)
"""


class EchoError(EoslabError):
    pass


class Echo(LineChild):
    what = "The echo child"
    error = EchoError

    def __init__(self, folder: Path) -> None:
        super().__init__("echo")
        self.folder = folder

    def _pid_file(self) -> Path:
        return self.folder / f"{self.name}-{self.pid}.pid"

    def start(self) -> Echo:
        self._spawn([sys.executable, "-c", ECHO])
        return self

    def call(self, text: str, timeout: float = 10.0) -> dict:
        self._write(text)
        return self._answer(timeout)


def test_a_child_answers_keeps_its_log_and_leaves_no_pid_file(tmp_path):
    child = Echo(tmp_path).start()
    try:
        assert child.call("hello") == {"ok": True, "echo": "hello"}
        assert list(tmp_path.glob("echo-*.pid"))
        for _ in range(50):
            if child.log:
                break
            time.sleep(0.05)
        assert list(child.log) == ["child log line"]
    finally:
        child._end()
    assert not list(tmp_path.glob("*.pid")) and child.proc is None


def test_silence_and_exit_are_one_sentence_each(tmp_path):
    child = Echo(tmp_path).start()
    try:
        with pytest.raises(EchoError, match=r"The echo child 'echo' \(running\) did not answer within 0.3 s"):
            child.call("hang", timeout=0.3)
        with pytest.raises(EchoError, match=r"exited \(code 3\): child log line\."):
            child.call("exit", timeout=10)
    finally:
        child._end()


def test_a_frozen_child_answers_once_thawed(tmp_path):
    child = Echo(tmp_path).start()
    try:
        assert child.freeze() is child and child.frozen
        child._write("late")
        with pytest.raises(EchoError, match=r"frozen \(SIGSTOP\).*thaw\(\) it first"):
            child._answer(0.5)
        child.thaw()
        assert child._answer(10.0) == {"ok": True, "echo": "late"}
        child.freeze()
    finally:
        child._end()  # a frozen child dies too
    assert child.proc is None and not child.frozen


def test_a_command_before_start_says_to_start(tmp_path):
    with pytest.raises(EchoError, match=r"not running: call start\(\) first"):
        Echo(tmp_path).call("x")
