"""The delayed-EndTxn experiment's open transaction (eoslab/demos/kafka17754/_open.py): the two rules must act on ONE
transaction of the processor, else the late EndTxn has nothing to tear (run of 28 Nov, session 15: exit 0, no
anomaly). A fake proxy replays the trace rows the processor's requests would make."""

from __future__ import annotations

from typing import Any

import pytest

from eoslab.demos.kafka17754 import _open
from eoslab.demos.pipeline import PipelineError


def _row(i: int, api: str, broker: int = 1) -> dict[str, Any]:
    return {"id": i, "api": api, "broker": broker}


class FakeFault:
    def __init__(self, kind: str, broker: int | None) -> None:
        self.kind, self.broker = kind, broker


class FakeProxy:
    """Each transaction of ``batches`` is the brokers its Produces go to; rules act on the first matching request
    after they are added, the processor's requests numbered in order."""

    def __init__(self, batches: list[tuple[int, ...]]) -> None:
        self.rows: list[dict[str, Any]] = []
        self.rules: list[FakeFault] = []
        self.acted: dict[int, dict[str, Any]] = {}
        self.batches = iter(batches)

    def _send(self, api: str, broker: int = 1) -> None:
        row = _row(len(self.rows) + 1, api, broker)
        self.rows.append(row)
        for rule in list(self.rules):
            if rule.kind == api and rule.broker in (None, broker):
                self.acted[id(rule)] = row
                self.rules.remove(rule)

    def run_transaction(self) -> None:
        for broker in next(self.batches):
            self._send("Produce", broker)
        self._send("EndTxn")

    def delay_response(self, _s: float, *, api: str, broker: int | None = None, **_: Any) -> FakeProxy._Rule:
        return FakeProxy._Rule(self, FakeFault(api, broker))

    def drop_request(self, *, api: str, broker: int | None = None, **_: Any) -> FakeProxy._Rule:
        return FakeProxy._Rule(self, FakeFault(api, broker))

    def trace(self, *, api: str, **_: Any) -> list[dict[str, Any]]:
        return [r for r in self.rows if r["api"] == api]

    class _Rule:
        def __init__(self, proxy: FakeProxy, fault: FakeFault) -> None:
            self.proxy, self.fault = proxy, fault

        def inject(self) -> Any:
            self.proxy.rules.append(self.fault)
            return self

    def wait(self, rule: Any, _what: str) -> dict[str, Any]:
        """The processor runs transactions until the rule has acted (at most 10)."""
        for _ in range(10):
            if id(rule.fault) in self.acted:
                return self.acted[id(rule.fault)]
            self.run_transaction()
        raise AssertionError("the rule never acted")


def test_requests_between_two_endtxns_are_one_transaction() -> None:
    ends = [_row(3, "EndTxn"), _row(9, "EndTxn")]
    assert _open.same_transaction(ends, _row(4, "Produce"), _row(5, "Produce"))
    assert _open.same_transaction(ends, _row(8, "Produce"), _row(4, "Produce"))  # either order
    assert not _open.same_transaction(ends, _row(8, "Produce"), _row(10, "Produce"))


def _open_on(batches: list[tuple[int, ...]]) -> tuple[FakeProxy, _open.OpenTransaction]:
    proxy = FakeProxy(batches)
    armed = _open.arm(proxy, "p", 1, 2)  # type: ignore[arg-type]
    return proxy, _open.open_transaction(proxy, "p", (1, 2), armed, proxy.wait)  # type: ignore[arg-type]


def test_rules_added_in_a_commit_act_on_the_next_transaction_when_it_writes_both_partitions() -> None:
    proxy, opened = _open_on([(1, 2)])
    assert (opened.written["broker"], opened.lost["broker"], opened.attempts) == (1, 2, 1)


def test_a_transaction_that_wrote_one_partition_is_skipped_and_the_rules_added_again_at_a_commit() -> None:
    # transaction 1 writes partition 0 only: the held rule acts there (row 1), the lost one in transaction 2 (row 3);
    # the fake's transactions run whole, so the next EndTxn held is transaction 3's (row 8), and the rules added
    # again then act on transaction 4 (rows 9 and 10)
    proxy, opened = _open_on([(1,), (2, 1), (1, 2), (2, 1)])
    assert opened.attempts == 2
    assert (opened.written["id"], opened.lost["id"]) == (10, 9)
    assert _open.same_transaction(proxy.trace(api="EndTxn"), opened.written, opened.lost)


def test_gives_up_with_one_sentence_when_no_transaction_writes_both() -> None:
    with pytest.raises(PipelineError, match="one output partition only"):
        _open_on([(1,), (2,)] * 5)
