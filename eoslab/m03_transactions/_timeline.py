"""Pictures of what happened: one transaction on a timeline, markers against EndTxn, the coordinator's states.

All three are drawn from evidence, never from memory: the proxy's trace (the
client's requests and the answers, timed by the proxy), the coordinator's
records in ``__transaction_state`` (timed by its clock when it wrote them) and
the markers in the partitions (timed by each partition leader's clock). All
brokers of this cluster run on one machine, so their clocks are one clock; the
markers' timestamps have a resolution of 1 ms.
"""

from __future__ import annotations

import time
from collections import Counter
from typing import TYPE_CHECKING, Any

from eoslab import inspect as ins
from eoslab._wait import wait_until

if TYPE_CHECKING:
    import pandas as pd

    from eoslab.demos import TxnProducer
    from eoslab.m03_transactions._lesson import TransactionLesson

LANES = ["client", "txn coordinator", "partition A", "partition B", "__consumer_offsets", "read_committed"]


def _ms(t: float) -> float:
    return t * 1000.0


_Row = tuple[str, str, float, str]


def _proxy_rows(trace: list[dict[str, Any]]) -> list[_Row]:
    """Each EOS request (FindCoordinator aside) sent, and answered, as the proxy timed them."""
    rows: list[_Row] = []
    for r in trace:
        if r["api"] == "FindCoordinator":
            continue
        label = r["api"] + (f" to {'AB'[r['request']['items'][0]['partition']]}" if r["api"] == "Produce" else "")
        rows.append(("client", f"{label} sent", r["time"], "proxy"))
        if r.get("response_time"):
            rows.append(("client", f"{label} answered", r["response_time"], "proxy"))
    return rows


def _marker_rows(disk: pd.DataFrame) -> list[_Row]:
    """Each marker as its partition leader wrote it."""
    rows: list[_Row] = []
    for _, d in disk.iterrows():
        if not d["is_control"]:
            continue  # a data batch's timestamp is the client's CreateTime; its write shows as "Produce answered"
        lane = {"A": "partition A", "B": "partition B"}.get(d["partition"], "__consumer_offsets")
        rows.append((lane, f"{d['marker']} marker written", d["timestamp"] / 1000.0, "partition leader"))
    return rows


def timed_transaction(
    lesson: TransactionLesson, producer: TxnProducer, input_consumer: Any, offset: int, commit: bool = True
) -> pd.DataFrame:
    """Run ONE transaction (a record to A and to B, the input offset, commit or abort) and time every event.

    Returns one row per event: ``lane``, ``event``, ``t_ms`` (milliseconds after
    ``begin_transaction()``), ``source`` (client clock, proxy, coordinator log,
    partition leader, ListOffsets poll).
    """
    import pandas as pd
    from confluent_kafka import TopicPartition

    topic = lesson.topic
    with lesson.step("timed transaction", clients=[producer.client_id]) as step:
        t0 = time.time()
        producer.begin_transaction()
        producer.produce(topic, b"timed-A", partition=0)
        producer.produce(topic, b"timed-B", partition=1)
        meta = input_consumer.consumer_group_metadata()
        producer.send_offsets_to_transaction([TopicPartition(lesson.input_topic, 0, offset)], meta, 30)
        t_end_call = time.time()
        (producer.commit_transaction if commit else producer.abort_transaction)(30)
        t_end_return = time.time()
        hw = {p: ins.partition_offsets(lesson.cluster, topic, p).high_watermark for p in (0, 1)}

        def lso_caught_up() -> float | None:
            o = ins.offsets(lesson.cluster, topic, [0, 1])
            return time.time() if all(x.last_stable >= hw[x.partition] for x in o) else None

        t_lso = wait_until(lso_caught_up, timeout=30, interval=0.005, what=f"the LSO of {topic} to pass the markers")
    rows = [
        ("client", "begin_transaction() (sends nothing)", t0, "client clock"),
        ("client", f"{'commit' if commit else 'abort'}_transaction() called", t_end_call, "client clock"),
        ("client", f"{'commit' if commit else 'abort'}_transaction() returned", t_end_return, "client clock"),
        ("read_committed", "LSO past the markers (first poll that saw it)", t_lso, "ListOffsets poll"),
    ]
    rows += _proxy_rows(step.eos_trace())
    for _, s in step.states().iterrows():
        rows.append(("txn coordinator", f"{s['state']} written", s["append_time_ms"] / 1000.0, "coordinator log"))
    rows += _marker_rows(step.disk())
    df = pd.DataFrame(rows, columns=["lane", "event", "t", "source"])
    df["t_ms"] = ((df["t"] - t0) * 1000.0).round(1)
    return df.drop(columns="t").sort_values("t_ms", kind="stable").reset_index(drop=True)


_REQUEST_LANES = {
    "AddPartitionsToTxn": "to the txn coordinator",
    "AddOffsetsToTxn": "to the txn coordinator",
    "EndTxn": "to the txn coordinator",
    "Produce": "to the partition leaders",
    "TxnOffsetCommit": "to the group coordinator",
}
PLOT_LANES = [
    "application",
    "to the txn coordinator",
    "to the partition leaders",
    "to the group coordinator",
    "txn coordinator",
    "partition A",
    "partition B",
    "__consumer_offsets",
    "read_committed",
]


def _request_spans(events: pd.DataFrame) -> dict[str, dict[str, float]]:
    """Request label -> its ``sent`` and ``answered`` times (ms), from the proxy's rows."""
    spans: dict[str, dict[str, float]] = {}
    for _, e in events[events["source"] == "proxy"].iterrows():
        text = str(e["event"])
        for end in (" sent", " answered"):
            if text.endswith(end):
                spans.setdefault(text[: -len(end)], {})[end.strip()] = e["t_ms"]
    return spans


def _plot_requests(ax: Any, spans: dict[str, dict[str, float]], y: dict[str, int]) -> None:
    """Each request as a bar on its lane, from sent to answered; neighbours alternate up and down."""
    for i, (label, t) in enumerate(sorted(spans.items(), key=lambda kv: kv[1].get("sent", 0.0))):
        lane = _REQUEST_LANES.get(label.split()[0], "to the txn coordinator")
        start, stop = t.get("sent", 0.0), t.get("answered", t.get("sent", 0.0))
        yy = y[lane] + 0.22 * (i % 2) - 0.11
        ax.plot([start, stop], [yy, yy], lw=5, solid_capstyle="butt", color="tab:blue", alpha=0.7)
        ax.annotate(label, (start, yy), xytext=(0, 4), textcoords="offset points", fontsize=7)


def _colour(lane: str, text: str) -> str:
    if "marker written" in text:
        return "tab:red"
    return "tab:green" if lane == "read_committed" else "black"


def _plot_points(ax: Any, events: pd.DataFrame, y: dict[str, int]) -> None:
    """Every event not timed by the proxy as a dot on its lane, at its writer's clock."""
    seen_on: dict[str, int] = {}
    for _, e in events[events["source"] != "proxy"].iterrows():
        lane = "application" if e["lane"] == "client" else e["lane"]
        text = str(e["event"])
        ax.plot([e["t_ms"]], [y[lane]], "o", color=_colour(lane, text), ms=5)
        short = text.replace(" (first poll that saw it)", "").replace(" (sends nothing)", "")
        k = seen_on[lane] = seen_on.get(lane, -1) + 1  # alternate below/above, so neighbours do not overlap
        ax.annotate(
            short, (e["t_ms"], y[lane]), xytext=(3, -11 if k % 2 == 0 else 5), textcoords="offset points", fontsize=7
        )


def plot_timeline(events: pd.DataFrame, ax: Any = None, title: str = "one transaction") -> Any:
    """The events of :func:`timed_transaction` on lanes: each request as a bar from sent to answered
    (the proxy's times), every record and marker as a dot at its writer's clock."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(11, 4.8))
    y = {lane: i for i, lane in enumerate(reversed(PLOT_LANES))}
    _plot_requests(ax, _request_spans(events), y)
    _plot_points(ax, events, y)
    ax.set_yticks([y[lane] for lane in PLOT_LANES], PLOT_LANES)
    ax.set_ylim(-0.6, len(PLOT_LANES) - 0.4)
    ax.set_xlabel("ms after begin_transaction()  (bars: request sent -> answered, timed by the proxy)")
    ax.set_title(title)
    ax.grid(axis="x", alpha=0.3)
    ax.figure.tight_layout()
    return ax


def marker_delays(lesson: TransactionLesson, producer: TxnProducer, n: int = 20) -> pd.DataFrame:
    """``n`` committed transactions (a record to A and to B each), and when each marker came vs EndTxn.

    One row per transaction: the proxy's times of the EndTxn request and answer,
    the coordinator's PrepareCommit and CompleteCommit append times, and the
    COMMIT markers' timestamps in A and B; ``*_after_answer_ms`` = marker time
    minus the time the EndTxn answer passed the proxy. ``attrs["concurrent_transactions"]``
    counts the requests answered CONCURRENT_TRANSACTIONS (51) meanwhile.
    """
    import pandas as pd

    from eoslab._progress import progress_bar

    with (
        lesson.step("marker delays", clients=[producer.client_id]) as step,
        progress_bar("committed transactions", total=n, unit=" txn") as bar,
    ):
        for i in range(n):
            producer.begin_transaction()
            producer.produce(lesson.topic, f"m{i}".encode(), partition=0)
            producer.produce(lesson.topic, f"m{i}".encode(), partition=1)
            producer.commit_transaction(30)
            bar.update(1)
    trace = step.eos_trace()
    ends = [r for r in trace if r["api"] == "EndTxn" and r["client_id"] == producer.client_id]
    # A request that came while the coordinator was still writing the previous markers (state Prepare*):
    # proof that EndTxn had been answered before they were all written.
    busy = sum(1 for r in trace if (r.get("response") or {}).get("error") == "CONCURRENT_TRANSACTIONS")
    states = step.states()
    mine = states[states["transactional_id"] == producer.transactional_id]
    prepare = list(mine[mine["state"] == "PrepareCommit"]["append_time_ms"])
    complete = list(mine[mine["state"] == "CompleteCommit"]["append_time_ms"])
    disk = step.disk()
    marks = {p: list(disk[(disk["partition"] == p) & disk["is_control"]]["timestamp"]) for p in ("A", "B")}
    rows = []
    for i, r in enumerate(ends[: min(len(ends), len(prepare), len(complete), len(marks["A"]), len(marks["B"]))]):
        answered = _ms(r["response_time"])
        rows.append(
            {
                "transaction": i,
                "EndTxn sent": _ms(r["time"]),
                "EndTxn answered": answered,
                "PrepareCommit written": prepare[i],
                "marker A": marks["A"][i],
                "marker B": marks["B"][i],
                "CompleteCommit written": complete[i],
                "A_after_answer_ms": round(marks["A"][i] - answered, 1),
                "B_after_answer_ms": round(marks["B"][i] - answered, 1),
                "prepare_before_answer_ms": round(answered - prepare[i], 1),
                "complete_after_answer_ms": round(complete[i] - answered, 1),
            }
        )
    df = pd.DataFrame(rows)
    df.attrs["concurrent_transactions"] = busy
    return df


def plot_marker_delays(delays: pd.DataFrame, ax: Any = None) -> Any:
    """Where each marker fell relative to the EndTxn answer (0 = the answer passed the proxy)."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(9, 2.8))
    for y, col, colour in ((1, "A_after_answer_ms", "tab:blue"), (0, "B_after_answer_ms", "tab:orange")):
        ax.scatter(delays[col], [y] * len(delays), alpha=0.6, color=colour)
    ax.axvline(0, color="black", lw=1)
    ax.set_yticks([0, 1], ["marker in B", "marker in A"])
    ax.set_xlabel("marker timestamp − EndTxn answer (ms); right of 0 = written after the producer was answered")
    ax.figure.tight_layout()
    return ax


def states_diagram(history: pd.DataFrame) -> str:
    """A Mermaid state diagram of the transitions the coordinators logged, with counts and epoch steps."""
    edges: Counter[tuple[str, str, str]] = Counter()
    for _, group in history.sort_values(["transactional_id", "offset"]).groupby("transactional_id", sort=False):
        prev = None
        for _, r in group.iterrows():
            if prev is None:
                edges[("[*]", r["state"], "")] += 1
            else:
                step = int(r["producer_epoch"]) - int(prev["producer_epoch"])
                note = f"epoch +{step}" if step > 0 else ""
                if int(r["producer_id"]) != int(prev["producer_id"]):
                    note = "new producer id"
                edges[(prev["state"], r["state"], note)] += 1
            prev = r
    lines = ["stateDiagram-v2"]
    for (a, b, note), count in sorted(edges.items()):
        label = f"{count}×" + (f", {note}" if note else "")
        lines.append(f"    {a} --> {b} : {label}")
    return "\n".join(lines)
