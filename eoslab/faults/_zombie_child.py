"""The child side of :class:`eoslab.faults.ZombieProducer`: one confluent-kafka producer, JSON lines in and out."""

from __future__ import annotations

import json
import sys
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


def main() -> int:
    producer: Producer | None = None
    delivered: list[dict[str, Any]] = []

    def on_delivery(err: KafkaError | None, msg: Any) -> None:
        delivered.append({"error": err.name() if err else None, "partition": msg.partition(), "offset": msg.offset()})

    for line in sys.stdin:
        cmd = json.loads(line)
        op = cmd.pop("op")
        try:
            if op == "config":
                producer = Producer(cmd["config"])
                answer: dict[str, Any] = {"ok": True}
            elif op == "exit":
                break
            else:
                assert producer is not None, "config first"
                if op == "init_transactions":
                    producer.init_transactions(cmd.get("timeout", CLIENT_CALL))
                elif op == "begin":
                    producer.begin_transaction()
                elif op == "produce":
                    producer.produce(
                        cmd["topic"],
                        value=cmd.get("value", "x"),
                        key=cmd.get("key"),
                        partition=cmd.get("partition", -1),
                        on_delivery=on_delivery,
                    )
                elif op == "flush":
                    producer.flush(cmd.get("timeout", CLIENT_CALL))
                elif op == "commit":
                    producer.commit_transaction(cmd.get("timeout", CLIENT_CALL))
                elif op == "abort":
                    producer.abort_transaction(cmd.get("timeout", CLIENT_CALL))
                else:
                    raise ValueError(f"unknown op {op!r}")
                producer.poll(0)
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
