import sys

import pytest

from eoslab._wait import wait_until
from eoslab.errors import WaitTimeout


def test_returns_the_first_truthy_value():
    seen = iter([0, None, 7])
    assert wait_until(lambda: next(seen), timeout=5, what="x", interval=0.01) == 7


def test_timeout_says_what_it_waited_for_and_the_last_state():
    def probe():
        raise ConnectionError("broker 2 refused")

    with pytest.raises(WaitTimeout) as err:
        wait_until(
            probe,
            timeout=0.05,
            what="broker 2",
            interval=0.01,
            hint="Try `eoslab logs broker-2`.",
            describe=lambda: "log tail here",
        )
    text = str(err.value)
    assert "waiting for broker 2" in text and "broker 2 refused" in text
    assert "log tail here" in text and "eoslab logs broker-2" in text


def test_a_fatal_exception_ends_the_wait_at_once():
    calls = []

    def probe():
        calls.append(1)
        raise PermissionError("no retry cures this")

    with pytest.raises(PermissionError):
        wait_until(probe, timeout=5, what="x", interval=0.01, fatal=(PermissionError,))
    assert calls == [1]


def test_a_wait_that_lasts_shows_a_bar_on_stdout_and_a_quick_one_does_not(monkeypatch, capsys):
    import time

    import eoslab._progress
    from eoslab._wait import wait_until

    monkeypatch.setattr(eoslab._progress, "DELAY", 0.3)
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True, raising=False)  # a terminal watches
    assert wait_until(lambda: True, timeout=5, what="something quick") is True
    assert capsys.readouterr().out == ""
    t0 = time.monotonic()
    wait_until(lambda: time.monotonic() - t0 > 1.0, timeout=5, what="the slow thing", interval=0.1)
    out = capsys.readouterr()
    assert "waiting for the slow thing" in out.out and "gives up after 5 s" in out.out
    assert out.err == ""
    monkeypatch.setenv("EOSLAB_PROGRESS", "0")
    t0 = time.monotonic()
    wait_until(lambda: time.monotonic() - t0 > 0.6, timeout=5, what="the slow thing", interval=0.1)
    assert capsys.readouterr().out == ""


def test_a_pipe_gets_no_bar(monkeypatch, capsys):
    """A CI log or `eoslab heal | tail`: no tty and no notebook kernel, so no carriage-return redraws."""
    import time

    import eoslab._progress
    from eoslab._wait import wait_until

    monkeypatch.setattr(eoslab._progress, "DELAY", 0.1)
    monkeypatch.setattr(sys.stdout, "isatty", lambda: False, raising=False)
    monkeypatch.delitem(sys.modules, "ipykernel", raising=False)
    t0 = time.monotonic()
    wait_until(lambda: time.monotonic() - t0 > 0.6, timeout=5, what="the slow thing", interval=0.1)
    assert capsys.readouterr().out == ""
    # pytest with nbval imports ipykernel (and IPython) to drive notebooks: that alone is not a kernel
    import ipykernel  # noqa: F401
    import IPython  # noqa: F401

    assert not eoslab._progress._in_kernel()
    t0 = time.monotonic()
    wait_until(lambda: time.monotonic() - t0 > 0.6, timeout=5, what="the slow thing", interval=0.1)
    assert capsys.readouterr().out == ""


def test_a_bar_that_outlasts_its_estimate_grows_instead_of_warning(monkeypatch, recwarn):
    """tqdm warns "clamping frac to range [0, 1]" when a bar passes its total: advance() grows it."""
    import eoslab._progress
    from eoslab._progress import advance, progress_bar

    monkeypatch.setattr(sys.stdout, "isatty", lambda: True, raising=False)
    with progress_bar("estimated 10 s", total=10.0, unit="s", delay=0) as bar:
        advance(bar, 6.0)
        assert bar.total == 10.0
        advance(bar, 4.2)  # 0.2 s past the estimate: within tqdm's +0.5 where it clamps and warns
        assert bar.n == bar.total == 10.2
        bar.refresh()
    assert not [w for w in recwarn if "clamping" in str(w.message)]
    assert eoslab._progress._shown()


def test_a_wait_timing_out_at_a_fractional_timeout_does_not_warn(monkeypatch, recwarn):
    import eoslab._progress
    from eoslab._wait import wait_until

    monkeypatch.setattr(eoslab._progress, "DELAY", 0.0)
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True, raising=False)
    with pytest.raises(WaitTimeout):
        wait_until(lambda: False, timeout=0.4, what="never", interval=0.05)
    assert not [w for w in recwarn if "clamping" in str(w.message)]


def test_a_cells_guard_is_four_times_its_measured_time_and_never_below_the_runners_limit():
    import json
    from pathlib import Path

    from eoslab._timeouts import CELL_GUARD_FACTOR, cell_guard

    times = json.loads((Path(__file__).resolve().parents[2] / "docs" / "course-times.json").read_text())
    measured = times["solutions/lab02_pid_ranges.ipynb"]["cells"]
    slow = max(measured, key=measured.get)
    assert measured[slow] * CELL_GUARD_FACTOR > 120  # the guard of a cell that takes a minute quietly
    expected = -(-measured[slow] * CELL_GUARD_FACTOR // 1)
    assert cell_guard("/home/ana/lab02_pid_ranges.ipynb", slow, 120) == expected  # a learner's copy: its solution's
    assert cell_guard("labs/lab02_pid_ranges.ipynb", slow, 120) == expected
    quick = min(measured, key=measured.get)
    assert cell_guard("labs/lab02_pid_ranges.ipynb", quick, 120) == 120
    assert cell_guard("notebooks/99_unknown.ipynb", "abc", 120) == 120 and cell_guard("x.ipynb", None, 30) == 30


def test_nbval_runs_a_cell_under_its_guard_and_gets_its_own_limit_back_after_it() -> None:
    import json
    from pathlib import Path
    from types import SimpleNamespace

    from eoslab._timeouts import cell_guard, nbval_cell_guard

    times = json.loads((Path(__file__).resolve().parents[2] / "docs" / "course-times.json").read_text())
    measured = times["solutions/lab02_pid_ranges.ipynb"]["cells"]
    slow = max(measured, key=measured.get)
    option = SimpleNamespace(nbval_cell_timeout=120)
    cell = SimpleNamespace(cell={"id": slow}, path="labs/lab02_pid_ranges.ipynb", config=SimpleNamespace(option=option))
    with nbval_cell_guard(cell) as guard:
        assert guard == option.nbval_cell_timeout == cell_guard(cell.path, slow, 120) > 120
    assert option.nbval_cell_timeout == 120
    with pytest.raises(RuntimeError), nbval_cell_guard(cell):  # restored when the cell's run raises too
        raise RuntimeError
    assert option.nbval_cell_timeout == 120
    not_a_cell = SimpleNamespace(path="tests/unit/test_x.py", config=SimpleNamespace(option=option))
    with nbval_cell_guard(not_a_cell) as guard:
        assert guard is None and option.nbval_cell_timeout == 120
    no_option = SimpleNamespace(cell={"id": slow}, path=cell.path, config=SimpleNamespace(option=SimpleNamespace()))
    with nbval_cell_guard(no_option) as guard:
        assert guard is None
