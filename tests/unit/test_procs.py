"""Pid files and stopping processes (eoslab._procs), on real throw-away processes."""

from __future__ import annotations

import signal
import subprocess
import sys

import psutil

from eoslab import _procs
from eoslab._wait import wait_until


def _sleeper(*extra: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", *extra])


def test_terminate_ends_a_paused_process_cleanly(tmp_path):
    """SIGTERM reaches a SIGSTOPped process (SIGCONT follows it): a clean shutdown, not the SIGKILL fallback."""
    ready, done = tmp_path / "ready", tmp_path / "terminated"
    code = (
        "import pathlib, signal, sys, time\n"
        f"signal.signal(signal.SIGTERM, lambda *a: (pathlib.Path({str(done)!r}).write_text('1'), sys.exit(0)))\n"
        f"pathlib.Path({str(ready)!r}).write_text('1')\n"
        "time.sleep(60)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code])
    wait_until(ready.exists, timeout=30, interval=0.05, what="the child to install its SIGTERM handler")
    proc.send_signal(signal.SIGSTOP)
    _procs.terminate([psutil.Process(proc.pid)], timeout=30)
    assert done.exists()  # its own handler ran
    assert not psutil.pid_exists(proc.pid)  # gone and reaped (psutil reaps its caller's children)


def test_a_pid_file_is_trusted_only_when_the_command_line_matches(tmp_path):
    proc = _sleeper("marker-arg")
    try:
        pid_file = tmp_path / "x.pid"
        _procs.write_pid(pid_file, proc.pid)
        ours = _procs.from_pid_file(pid_file, expect="marker-arg")
        assert ours is not None and ours.pid == proc.pid
        assert _procs.from_pid_file(pid_file, expect="someone-else") is None  # a reused pid is not ours
        assert _procs.from_pid_file(tmp_path / "missing.pid") is None
    finally:
        proc.kill()
        proc.wait(5)


def test_end_pid_files_kills_ours_spares_others_and_removes_every_file(tmp_path):
    ours, theirs = _sleeper("eoslab-test-child"), _sleeper("not-ours")
    try:
        _procs.write_pid(tmp_path / "a.pid", ours.pid)
        _procs.write_pid(tmp_path / "b.pid", theirs.pid)
        (tmp_path / "stale.pid").write_text("999999999\n")
        assert _procs.end_pid_files(tmp_path, expect="eoslab-test-child") == [ours.pid]
        assert not psutil.pid_exists(ours.pid)
        assert theirs.poll() is None  # its command line did not match: left alone
        assert list(tmp_path.glob("*.pid")) == []
    finally:
        theirs.kill()
        theirs.wait(5)


def test_an_adopted_child_dies_with_the_interpreter_that_started_it():
    """A lesson or a test that ends (normally, or by an exception nobody caught) with a child of the kit still
    running kills it at exit: nothing the kit started outlives what started it (a processor left running for
    an hour after `make test` ended was seen)."""
    code = (
        "import subprocess, sys\n"
        "from eoslab import _procs\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'], start_new_session=True)\n"
        "_procs.adopt(child.pid)\n"
        "print(child.pid, flush=True)\n"
        "raise SystemExit('the lesson failed midway')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    pid = int(out.stdout.split()[0])

    def gone() -> bool:
        proc = _procs.process(pid)
        return proc is None or "time.sleep(60)" not in " ".join(proc.cmdline())

    wait_until(gone, timeout=_procs.KILL_WAIT, interval=0.05, what=f"the adopted child {pid} to be gone")


def test_a_released_child_is_left_alone(tmp_path):
    """Its owner ended and reaped it (or hands it over on purpose): the exit hook does not touch it."""
    proc = _sleeper()
    try:
        _procs.adopt(proc.pid)
        assert [p.pid for p in _procs.adopted()] == [proc.pid]
        _procs.release(proc.pid)
        assert _procs.adopted() == []
        assert _procs.end_adopted() == [] and proc.poll() is None
    finally:
        proc.kill()
        proc.wait()
