"""The child side of :class:`eoslab.faults.ZombieProducer`: one confluent-kafka producer, JSON lines in and out."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

from confluent_kafka import KafkaError, Producer

from eoslab._timeouts import CLIENT_CALL


def _error(exc: BaseException) -> dict[str, Any]:
    err = exc.args[0] if exc.args and isinstance(exc.args[0], KafkaError) else None
    if err is None:
        return {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
    return {
        "ok": False,
        "error": err.str(),
        "code": err.name(),
        "fatal": err.fatal(),
        "abortable": err.txn_requires_abort(),
    }


def _produce(producer: Producer, cmd: dict[str, Any], on_delivery: Callable[..., None]) -> None:
    producer.produce(
        cmd["topic"],
        value=cmd.get("value", "x"),
        key=cmd.get("key"),
        partition=cmd.get("partition", -1),
        on_delivery=on_delivery,
    )


_CALLS: dict[str, Callable[[Producer, dict[str, Any], Callable[..., None]], object]] = {
    "init_transactions": lambda producer, cmd, _: producer.init_transactions(cmd.get("timeout", CLIENT_CALL)),
    "begin": lambda producer, cmd, _: producer.begin_transaction(),
    "produce": _produce,
    "flush": lambda producer, cmd, _: producer.flush(cmd.get("timeout", CLIENT_CALL)),
    "commit": lambda producer, cmd, _: producer.commit_transaction(cmd.get("timeout", CLIENT_CALL)),
    "abort": lambda producer, cmd, _: producer.abort_transaction(cmd.get("timeout", CLIENT_CALL)),
}
"""The producer calls the parent can ask for, by op."""


def _call(producer: Producer | None, op: str, cmd: dict[str, Any], on_delivery: Callable[..., None]) -> None:
    assert producer is not None, "config first"
    if op not in _CALLS:
        raise ValueError(f"unknown op {op!r}")
    _CALLS[op](producer, cmd, on_delivery)
    producer.poll(0)


def main() -> int:
    producer: Producer | None = None
    delivered: list[dict[str, Any]] = []

    def on_delivery(err: KafkaError | None, msg: Any) -> None:
        delivered.append({"error": err.name() if err else None, "partition": msg.partition(), "offset": msg.offset()})

    for line in sys.stdin:
        cmd = json.loads(line)
        op = cmd.pop("op")
        if op == "exit":
            break
        try:
            if op == "config":
                producer = Producer(cmd["config"])
                answer: dict[str, Any] = {"ok": True}
            else:
                _call(producer, op, cmd, on_delivery)
                answer = {"ok": True, "delivered": delivered[:]}
                delivered.clear()
        except Exception as exc:  # noqa: BLE001 - every failure is an answer to the parent
            answer = _error(exc)
            answer["delivered"] = delivered[:]
            delivered.clear()
        print(json.dumps(answer), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
