"""The course website's parts that need no cluster and no browser: the outputs kept from nbval's run as a front
end would show them (tests/executed_plugin.py), and the pages prepared from them (tools/site_build.py): deep
dives folded with their anchors kept, JupyterLab's cell anchors, the run note, nothing of this machine's names,
and no page from a stale or failed run. The site itself is tested in Chromium (tests/browser/test_site.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.executed_plugin import _Recorder, coalesce
from tools import site_build
from tools.site_build import cell_anchors, fold_deep_dives, run_note, scrub


def _msg(kind: str, content: dict[str, Any], parent: str = "m1") -> dict[str, Any]:
    return {"msg_type": kind, "content": content, "parent_header": {"msg_id": parent}, "header": {"msg_type": kind}}


def _display(data: str, display_id: str | None = None, kind: str = "display_data") -> dict[str, Any]:
    content: dict[str, Any] = {"data": {"text/plain": data}, "metadata": {}}
    if display_id:
        content["transient"] = {"display_id": display_id}
    return _msg(kind, content)


def test_a_live_display_is_kept_as_it_ended_and_other_cells_messages_are_not() -> None:
    rec = _Recorder()
    rec.see(_msg("execute_input", {"code": "x", "execution_count": 3}))
    rec.see(_msg("stream", {"name": "stdout", "text": "a\n"}))
    rec.see(_display("frame 1", "plot"))
    rec.see(_display("frame 2", "plot", "update_display_data"))  # module 04's LSO plot redrawing itself
    rec.see(_display("frame 3", "plot", "update_display_data"))
    rec.see(_msg("stream", {"name": "stdout", "text": "late\n"}, parent="another cell"))
    assert [o.get("data", {}).get("text/plain", o.get("text")) for o in rec.outputs] == ["a\n", "frame 3"]
    rec.see(_msg("clear_output", {"wait": True}))
    assert len(rec.outputs) == 2  # wait=True: cleared when the next output comes
    rec.see(_display("fresh"))
    assert [o["data"]["text/plain"] for o in rec.outputs] == ["fresh"]


def test_streams_are_merged_and_a_carriage_return_keeps_the_last_text_of_its_line() -> None:
    outs = [
        {"output_type": "stream", "name": "stdout", "text": "10%\r"},
        {"output_type": "stream", "name": "stdout", "text": "100%\ndone\n"},
        {"output_type": "stream", "name": "stderr", "text": "warn\n"},
    ]
    assert coalesce(outs) == [
        {"output_type": "stream", "name": "stdout", "text": "100%\ndone\n"},
        {"output_type": "stream", "name": "stderr", "text": "warn\n"},
    ]


def _md(text: str, cell_id: str = "c") -> dict[str, Any]:
    return {"cell_type": "markdown", "id": cell_id, "metadata": {}, "source": text}


def test_a_deep_dive_folds_whole_and_its_headings_keep_their_anchors() -> None:
    cells = [
        _md("## Step 1 — before"),
        _md("### Deep dive — the `marker` race (optional: nothing graded depends on it)\n\nWhy it races."),
        {"cell_type": "code", "id": "k", "metadata": {}, "source": "x = 1", "outputs": []},
        _md("## Step 11 — two **protocols**\n\ntext"),
        _md("*End of deep dive.*"),
        _md("## Step 2 — after"),
    ]
    out = [c["source"] for c in fold_deep_dives(cells)]
    assert out[0] == "## Step 1 — before" and out[5] == "## Step 2 — after"  # outside: untouched
    assert out[1].startswith('<details class="eoslab-deep-dive"><summary><a id="Deep-dive-—-the-marker-race-')
    assert "<code>marker</code>" in out[1] and out[1].endswith("Why it races.")
    assert not re.search(r"^#", out[3], re.MULTILINE)  # a heading inside would open a section the fold cannot close
    assert 'id="Step-11-—-two-protocols"' in out[3] and "<strong>two <strong>protocols</strong></strong>" not in out[3]
    assert out[4] == "*End of deep dive.*\n\n</details>"


def test_each_cell_gets_jupyterlabs_cell_anchor_and_a_page_says_its_run() -> None:
    cells = cell_anchors([_md("# Title", "t1"), _md("text", "t2")])
    assert [c["source"] for c in cells[::2]] == [
        '<a id="cell-id=t1" class="eoslab-anchor"></a>',
        '<a id="cell-id=t2" class="eoslab-anchor"></a>',
    ]
    facts = {"date": "2026-01-02 03:04 UTC", "kafka": "4.1.2", "confluent_kafka": "2.16.1", "librdkafka": "2.16.0"}
    facts |= {"pyspark": "4.2.0", "eoslab": "0.1.0", "machine": "Linux x86_64, 2 cores", "backend": "docker"}
    note = run_note(facts)
    for fact in ("2026-01-02 03:04 UTC", "Apache Kafka 4.1.2", "librdkafka 2.16.0", "2 cores", "backend: docker"):
        assert fact in note


def test_no_output_names_this_machine_or_carries_a_token() -> None:
    names = [("/home/ana/course", "<course>"), ("/home/ana", "~"), ("ana", "<user>"), ("ana-laptop", "<host>")]
    text = (
        "/home/ana/course/kafka-data on ana-laptop; /tmp/ana/x, ana@box; banana: http://x/lab?token=0123456789abcdef01"
    )
    want = "<course>/kafka-data on <host>; /tmp/<user>/x, <user>@box; banana: http://x/lab?token=<token>"
    assert scrub(text, names) == want


def _course(root: Path, cells: list[dict[str, Any]]) -> None:
    (root / "notebooks").mkdir(parents=True, exist_ok=True)
    (root / "notebooks" / "01_x.ipynb").write_text(json.dumps({"cells": cells, "metadata": {}}))


def test_a_module_without_a_copy_of_its_very_cells_or_with_an_error_gives_no_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(site_build, "ROOT", tmp_path / "course")
    code = {"cell_type": "code", "id": "k", "metadata": {}, "source": "x = 1", "outputs": []}
    _course(tmp_path / "course", [code])
    executed = tmp_path / "executed"
    assert site_build.check_executed(executed) == ([tmp_path / "course" / "notebooks" / "01_x.ipynb"], [])
    _course(executed, [{**code, "source": "x = 2"}])  # executed before the notebook changed
    assert len(site_build.check_executed(executed)[0]) == 1
    _course(executed, [{**code, "outputs": [{"output_type": "error", "ename": "E", "evalue": "", "traceback": []}]}])
    assert site_build.check_executed(executed) == ([], ["01_x.ipynb (cells k)"])
    shown = [{**code, "outputs": [{"output_type": "stream", "name": "stdout", "text": "1"}]}]
    _course(executed, shown)
    assert site_build.check_executed(executed) == ([], [])
    timed_out = {"cells": shown, "metadata": {"eoslab_run": {"cells_not_passed": ["k (call: failed)"]}}}
    (executed / "notebooks" / "01_x.ipynb").write_text(json.dumps(timed_out))  # no error output, yet a failed run
    assert site_build.check_executed(executed) == ([], ["01_x.ipynb (cells k (call: failed))"])


def test_the_workshop_pack_carries_the_built_site_for_reading_offline(tmp_path: Path) -> None:
    from eoslab.course._workshop import SITE, copy_site

    copies = [tmp_path / "learner", tmp_path / "instructor"]
    assert not copy_site(tmp_path / "course", copies)  # no `make site` yet: nothing copied, the summary says so
    built = tmp_path / "course" / SITE
    (built / "notebooks").mkdir(parents=True)
    (built / "index.html").write_text("<meta http-equiv=refresh>")
    (built / "notebooks" / "index.html").write_text("the course")
    assert copy_site(tmp_path / "course", copies)
    assert all((c / "site" / "notebooks" / "index.html").read_text() == "the course" for c in copies)


def test_every_program_a_page_links_is_copied_to_the_site() -> None:
    """A module or lab linking ``../examples/X`` needs X among the site's files, or the site's build refuses the
    link (MyST's xref_missing): examples/java/EosLoop.java, a subfolder and another language, was one."""
    root = Path(site_build.__file__).resolve().parents[1]
    linked = set()
    for path in [*(root / "notebooks").glob("*.ipynb"), *(root / "labs").glob("*.ipynb")]:
        for cell in json.loads(path.read_text())["cells"]:
            text = "".join(cell["source"]) if cell["cell_type"] == "markdown" else ""
            linked |= set(re.findall(r"\]\(\.\./examples/([^)#\s]+)", text))
    copied = set(site_build.example_programs())
    assert "java/EosLoop.java" in linked and "eos_loop.py" in linked  # the scan reads the links it must
    assert linked <= copied, f"linked from a page but not on the site: {sorted(linked - copied)}"
