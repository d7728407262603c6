"""The site test's check of the executed notebooks' outputs (tests/browser/test_site.py): it fails on the kit's red
text and raw reprs, and leaves a learner's own client's librdkafka lines alone."""

from __future__ import annotations

from typing import Any

from tests.browser.test_site import _untidy


def _stream(name: str, text: str) -> dict[str, Any]:
    return {"output_type": "stream", "name": name, "text": text}


def test_the_kits_librdkafka_line_on_stderr_is_red_text() -> None:
    # eoslab's logger printed through Python's last resort (run 95, notebook 06's audit writer)
    line = "GETPID [rdkafka#producer-2] [thrd:main]: Failed to acquire transactional PID from broker TxnCoordinator/1"
    found = _untidy("06 b58d3130", _stream("stderr", line + "\n"))
    assert found is not None and found.startswith("06 b58d3130: red text (stderr): GETPID")


def test_a_learners_client_speaking_for_itself_is_left_alone() -> None:
    own = "%4|1795964825.215|REQTMOUT|plain-1#producer-1| [thrd:127.0.0.1:7391/1]: Timed out ProduceRequest\n"
    assert _untidy("01 c1ea70bb", _stream("stderr", own)) is None
    assert _untidy("01 c1ea70bb", _stream("stderr", own + "Traceback (most recent call last):\n")) is not None


def test_a_raw_repr_printed_or_as_the_result_is_found_and_a_sentence_is_not() -> None:
    printed = _stream("stdout", "delivered: Delivery(topic='demo', partition=0, offset=2, error=None)\n")
    assert "a raw repr printed: Delivery(" in (_untidy("01", printed) or "")
    result = {"output_type": "execute_result", "data": {"text/plain": "ClientEos(producer_id=3, producer_epoch=0)"}}
    assert "a raw repr as the cell's result" in (_untidy("01", result) or "")
    assert _untidy("01", _stream("stdout", "delivered: demo[0]@2\n")) is None
    table = {"output_type": "execute_result", "data": {"text/plain": "Grant(a=1, b=2)", "text/html": "<table/>"}}
    assert _untidy("02", table) is None  # a rich output shows its HTML, not the repr
