"""Rule matching and counting: pure logic, no sockets."""

from __future__ import annotations

import pytest

from eoslab.faults import FaultRuleError, RuleSpec
from eoslab.faults._rules import RuleBook, facts_from

PRODUCE = {
    "transactional_id": None,
    "acks": -1,
    "items": [
        {"topic": "demo", "partition": 0, "producer_id": 7, "producer_epoch": 0, "base_sequence": 0},
        {"topic": "demo", "partition": 1, "producer_id": 7, "producer_epoch": 0, "base_sequence": 5},
    ],
}


def facts(api="Produce", client_id="c1", broker=1, summary=PRODUCE):
    return facts_from(api, client_id, broker, summary)


def test_header_fields_must_all_match():
    book = RuleBook()
    book.add(RuleSpec("drop_response", api="Produce", client_id="c1", broker=2))
    assert not book.decide(facts())
    assert book.decide(facts(broker=2)).drop_response
    assert not book.decide(facts(broker=2, client_id="other"))


def test_item_fields_must_match_within_one_batch():
    book = RuleBook()
    rule = book.add(RuleSpec("drop_response", partition=1, base_sequence=0, times=None))
    assert not book.decide(facts())  # partition 1 has seq 5, partition 0 has seq 0: no single batch matches
    rule.base_sequence = 5
    assert book.decide(facts())


def test_top_level_producer_fields_match_non_produce_apis():
    book = RuleBook()
    book.add(RuleSpec("cut", api="EndTxn", producer_id=7))
    summary = {"transactional_id": "t", "producer_id": 7, "producer_epoch": 3, "committed": True}
    assert book.decide(facts("EndTxn", summary=summary)).cut
    assert not book.decide(facts("EndTxn", summary={**summary, "producer_id": 8}))


def test_nth_and_times_count_matching_requests_only():
    book = RuleBook()
    rule = book.add(RuleSpec("drop_request", api="Produce", nth=2, times=2))
    verdicts = []
    for api in ("Produce", "Metadata", "Produce", "Produce", "Produce"):
        verdicts.append(bool(book.decide(facts(api))))
    assert verdicts == [False, False, True, True, False]
    assert (rule.hits, rule.fired, rule.exhausted) == (3, 2, True)


def test_combined_decision_takes_the_strongest_action_and_longest_delay():
    book = RuleBook()
    a = book.add(RuleSpec("delay_response", delay_s=0.5, times=None))
    b = book.add(RuleSpec("delay_response", delay_s=2.0, times=None))
    c = book.add(RuleSpec("drop_response", close=True))
    d = book.decide(facts())
    assert (d.rule_ids, d.delay_s, d.drop_response, d.close) == ([a.id, b.id, c.id], 2.0, True, True)
    assert book.decide(facts()).drop_response is False  # c fired its one time


def test_clear_is_scoped_by_client_id():
    book = RuleBook()
    book.add(RuleSpec("cut", client_id="a"))
    book.add(RuleSpec("cut", client_id="b"))
    book.add(RuleSpec("cut"))
    assert book.clear("a") == 1 and [r.client_id for r in book.all()] == ["b", None]
    assert book.clear() == 2 and len(book) == 0


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"action": "explode"}, "Unknown fault action"),
        ({"action": "cut", "nth": 0}, "nth=0"),
        ({"action": "cut", "times": 0}, "times=0"),
        ({"action": "delay_response"}, "delay_s > 0"),
    ],
)
def test_bad_rules_are_refused_with_a_sentence(kwargs, message):
    with pytest.raises(FaultRuleError, match=message):
        RuleSpec(**kwargs)


def test_round_trip_through_json_fields_and_unknown_fields():
    rule = RuleSpec("drop_response", api="Produce", topic="demo", close=True)
    assert RuleSpec.from_dict(rule.to_dict()) == rule
    with pytest.raises(FaultRuleError, match="Unknown rule field"):
        RuleSpec.from_dict({"action": "cut", "partiton": 1})
    assert "drop_response where api=Produce topic=demo" in rule.describe()


def test_public_names_are_sorted_and_present():
    import eoslab.faults as faults

    assert list(faults.__all__) == sorted(faults.__all__)
    assert all(hasattr(faults, name) for name in faults.__all__)
