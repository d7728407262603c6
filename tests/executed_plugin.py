"""Keep the notebooks nbval runs, with their outputs: the course website (`make site`) is built from them.

Active only with ``$EOSLAB_EXECUTED_DIR`` set (``-p tests.executed_plugin``; the course tier, or `make site`
when it executes the course itself). nbval keeps a cell's outputs only to compare them, and drops what a
live display does to them (``update_display_data``: module 04's LSO plot redraws itself; ``clear_output``),
so this plugin listens to the kernel's messages itself while each cell runs and builds the outputs as
JupyterLab would show them at the end (``nbformat.v4.output_from_msg``, a display updated in place by its
``display_id``). After a notebook's last cell it writes the notebook, outputs included, to
``$EOSLAB_EXECUTED_DIR/<its path under the course>`` with ``metadata.eoslab_run``: when, on which Kafka, with
which clients, on what machine and backend (:func:`run_facts`). A cell that errored keeps its error: the
site's build refuses such a notebook, so a page never shows a run that failed.
"""

from __future__ import annotations

import json
import os
import platform
import time
from collections.abc import Generator
from pathlib import Path
from typing import Any, cast

import pytest

EXECUTED_ENV = "EOSLAB_EXECUTED_DIR"
ROOT = Path(__file__).resolve().parents[1]
OUTPUT_TYPES = ("stream", "display_data", "execute_result", "error")

_OUTPUTS: dict[tuple[str, int], tuple[list[dict[str, Any]], int | None]] = {}
"""(notebook path, code cell number) -> (its outputs, its execution count)."""
_NOT_PASSED: dict[str, list[str]] = {}
"""Notebook path -> the cells that did not pass (failed, timed out, or not run after a time-out): the site's build
refuses such a copy, whatever outputs it kept (a cell whose kernel could not be interrupted leaves no error)."""


def _target() -> Path | None:
    where = os.environ.get(EXECUTED_ENV)
    return Path(where) if where else None


def run_facts() -> dict[str, Any]:
    """What a page of the site says about the run it shows: date (UTC), Kafka, the clients, machine, backend."""
    import confluent_kafka
    import psutil

    from eoslab._version import __version__
    from eoslab.topology import KAFKA_VERSION

    try:
        import pyspark

        spark = pyspark.__version__
    except ImportError:  # the site can be built where PySpark is not installed
        spark = ""
    return {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "kafka": KAFKA_VERSION,
        "confluent_kafka": confluent_kafka.__version__,
        "librdkafka": confluent_kafka.libversion()[0],
        "pyspark": spark,
        "eoslab": __version__,
        "machine": f"{platform.system()} {platform.machine()}, {os.cpu_count()} cores, "
        f"{psutil.virtual_memory().total / 2**30:.0f} GB RAM",
        "python": platform.python_version(),
        "backend": os.environ.get("EOSLAB_BACKEND") or "local",
    }


class _Recorder:
    """The outputs of one cell's execution, from the kernel's iopub messages, as a front end keeps them."""

    def __init__(self) -> None:
        self.outputs: list[dict[str, Any]] = []
        self.count: int | None = None
        self.msg_id: str | None = None
        self._clear_on_next = False
        self._by_display: dict[str, list[int]] = {}

    def see(self, msg: dict[str, Any]) -> None:
        from nbformat.v4 import output_from_msg

        parent = msg.get("parent_header", {}).get("msg_id")
        kind, content = msg["msg_type"], msg.get("content", {})
        if kind == "execute_input":
            self.msg_id, self.count = parent, content.get("execution_count")
            return
        if self.msg_id is None or parent != self.msg_id:
            return
        if kind == "clear_output":
            if content.get("wait"):
                self._clear_on_next = True
            else:
                self.outputs.clear()
                self._by_display.clear()
            return
        if kind == "update_display_data":
            for i in self._by_display.get(content.get("transient", {}).get("display_id", ""), []):
                self.outputs[i] = {**self.outputs[i], "data": content["data"], "metadata": content.get("metadata", {})}
            return
        if kind in OUTPUT_TYPES:
            if self._clear_on_next:
                self.outputs.clear()
                self._by_display.clear()
                self._clear_on_next = False
            display_id = content.get("transient", {}).get("display_id")
            if display_id:
                self._by_display.setdefault(display_id, []).append(len(self.outputs))
            self.outputs.append(dict(output_from_msg(msg)))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, Any, None]:
    """Record the kernel messages nbval reads while it runs a notebook cell."""
    cell = getattr(item, "cell", None)
    parent: Any = item.parent  # nbval's IPyNbFile: its kernel, its notebook
    if _target() is None or cell is None or not hasattr(parent, "get_kernel_message"):
        yield
        return
    recorder = _Recorder()
    read = parent.get_kernel_message

    def reading(timeout: float | None = None, stream: str = "iopub") -> Any:
        msg = read(timeout=timeout, stream=stream)
        if stream == "iopub":
            recorder.see(msg)
        return msg

    parent.get_kernel_message = reading
    try:
        yield
    finally:
        del parent.get_kernel_message  # nbval's own method again
        _OUTPUTS[(str(parent.path), getattr(item, "cell_num", -1))] = (recorder.outputs, recorder.count)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, None]:
    """Note each cell that did not pass, in any phase."""
    outcome = yield
    report = outcome.get_result()
    cell = getattr(item, "cell", None)
    if _target() is not None and cell is not None and (report.failed or report.skipped):
        where = str(cast(Any, item.parent).path)
        _NOT_PASSED.setdefault(where, []).append(f"{cell.get('id')} ({report.when}: {report.outcome})")


def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """After a notebook's last cell: write it, with the outputs recorded, where the site is built from."""
    target, parent = _target(), cast(Any, item.parent)
    if target is None or getattr(item, "cell", None) is None or (nextitem is not None and nextitem.parent is parent):
        return
    nb = getattr(parent, "nb", None)
    if nb is None:
        return
    write_executed(nb, Path(str(parent.path)), target)


def _overwritten(text: str) -> str:
    """A stream's text as a terminal leaves it: what a carriage return overwrote on its line is gone."""
    return "\n".join(line.rsplit("\r", 1)[-1] for line in text.split("\n"))


def coalesce(outputs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Consecutive stream outputs of one stream merged into one, as a front end shows them."""
    merged: list[dict[str, Any]] = []
    for o in outputs:
        if o["output_type"] == "stream" and merged and merged[-1]["output_type"] == "stream":
            if merged[-1]["name"] == o["name"]:
                merged[-1] = {**merged[-1], "text": merged[-1]["text"] + o["text"]}
                continue
        merged.append(dict(o))
    for o in merged:
        if o["output_type"] == "stream":
            o["text"] = _overwritten(o["text"])
    return merged


def write_executed(nb: Any, path: Path, target: Path) -> Path:
    """``nb`` (as nbval read it) with the outputs recorded for ``path``, written under ``target``."""
    import nbformat

    out = nbformat.from_dict(json.loads(nbformat.writes(nb)))
    number = ran = 0
    for cell in out.cells:
        if cell.cell_type != "code":
            continue
        recorded = _OUTPUTS.pop((str(path), number), None)
        number += 1
        if recorded is None:  # not run (a cell nbval skipped)
            continue
        ran += 1  # nbval runs cells outside the kernel's history: its count stays 1, so the order is counted here
        cell.outputs = [nbformat.from_dict(o) for o in coalesce(recorded[0])]
        cell.execution_count = ran
    out.metadata["eoslab_run"] = {**run_facts(), "cells_not_passed": _NOT_PASSED.pop(str(path), [])}
    try:
        rel = path.resolve().relative_to(ROOT)
    except ValueError:  # a copy outside the course (a test's temporary folder)
        rel = Path(path.name)
    dest = target / rel
    dest.parent.mkdir(parents=True, exist_ok=True)
    part = dest.with_name(dest.name + ".part")
    nbformat.write(out, str(part))
    os.replace(part, dest)
    return dest
