"""The demo producer profile: librdkafka settings under which a lost ack shows its retry quickly.

librdkafka resends a request whose answer never came only when the request
times out (``socket.timeout.ms``, default 60 s) or when its connection
closes; if ``message.timeout.ms`` runs out first the message fails instead
and the idempotent producer bumps its epoch. Hence a small socket timeout, a
larger message timeout, and a single batch followed by ``flush()``.

Observed on the real cluster (Kafka 4.1.2, confluent-kafka 2.16.1 / librdkafka
2.16.0; tests/integration/test_faults_profile.py and test_faults_replay.py):

- Ack dropped, connection kept, this profile: librdkafka logs "Timed out
  ProduceRequest in flight (after ~3.6 s)", closes that connection, and resends
  the batch with the SAME producer id, epoch and sequence on a new connection
  3-4.5 s after the first send (its timeout scan runs once a second); the
  broker answers with the ORIGINAL offset; one batch on disk. With
  ``close=True`` on the rule the resend follows within ~50 ms.
- ``message.timeout.ms`` (2 s) below ``socket.timeout.ms`` (60 s): the message
  fails with ``_MSG_TIMED_OUT`` although it IS on disk, and the next batch goes
  out with the same producer id, epoch + 1, sequence 0 (KIP-360 bump).
- A later batch of the same partition acked first does NOT complete the earlier
  one in librdkafka 2.16: batch 2 (seq 1) is reported delivered at once, batch 1
  (seq 0) stays in flight until its own timeout, is resent, deduplicated, and
  reported afterwards (delivery reports out of order). The claim we started
  from ("the earlier counts as delivered") did not hold here.
"""

from __future__ import annotations

from typing import Any

DEMO_PRODUCER: dict[str, Any] = {
    # The lesson's guarantee: PID + epoch + per-partition sequence numbers (acks=all, in-flight <= 5).
    "enable.idempotence": True,
    "acks": "all",  # the write is acknowledged once min.insync.replicas=2 copies have it
    # A Produce without an answer times out after 3 s (default 60 s) and is resent on the same
    # sequence: the deduplicated retry shows in seconds instead of a minute.
    "socket.timeout.ms": 3000,
    # Well above socket.timeout.ms, so the request timeout (and its retry) comes first; when this
    # expires first the message fails and librdkafka bumps the epoch (KIP-360) - another lesson.
    "message.timeout.ms": 30000,
    # One message is one batch: send at once, do not wait to fill a batch.
    "linger.ms": 0,
    # Reconnect at once after the proxy cuts a connection (default backoff 100 ms, up to 10 s).
    "reconnect.backoff.ms": 50,
    "reconnect.backoff.max.ms": 500,
    # Retry backoff short too, so the retry follows the timeout closely (default 100 ms).
    "retry.backoff.ms": 50,
}


def demo_producer_config(bootstrap_servers: str, client_id: str, **overrides: Any) -> dict[str, Any]:
    """``DEMO_PRODUCER`` plus where to connect and who we are (``client.id`` scopes the proxy's rules)."""
    return {"bootstrap.servers": bootstrap_servers, "client.id": client_id, **DEMO_PRODUCER, **overrides}
