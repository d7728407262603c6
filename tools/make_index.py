"""Writes notebooks/index.ipynb, the course's table of contents (run after adding a module)."""

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

ROOT = Path(__file__).resolve().parents[1]

MODULES = [
    ("00_cluster_tour", "Cluster tour", "3 controllers + 3 brokers, the quorum, topics, leaders, log folders"),
    (
        "01_idempotent_producer",
        "The idempotent producer",
        "producer id + epoch, sequence numbers on disk, a lost ack retried without a duplicate",
    ),
    ("02_pid_ranges", "Producer-ID ranges (KIP-730)", "blocks of 1000 ids per broker, in the metadata log"),
    ("03_transactions", "Transactions", "coordinators, AddPartitionsToTxn, EndTxn, markers, fencing a zombie"),
    ("04_read_committed", "read_committed", "aborted data on disk but invisible; the last stable offset"),
    ("05_exactly_once_pipeline", "An exactly-once pipeline", "consume-transform-produce, killed and restarted"),
    ("06_cost_of_exactly_once", "The cost, with PySpark", "your own runs: throughput overhead, latency percentiles"),
]


def main() -> None:
    rows = []
    for stem, title, what in MODULES:
        nb = ROOT / "notebooks" / f"{stem}.ipynb"
        link = f"[{title}]({stem}.ipynb)" if nb.exists() else f"{title} *(not written yet)*"
        lab = ROOT / "labs" / f"lab{stem[:2]}_*.ipynb"
        labs = sorted(lab.parent.glob(lab.name))
        lab_link = f"[lab](../labs/{labs[0].name})" if labs else ""
        rows.append(f"| {stem[:2]} | {link} | {what} | {lab_link} |")
    cells = [
        new_markdown_cell(
            "# eoslab: exactly-once semantics in Apache Kafka, on a real cluster\n\n"
            "A course in notebooks. Each module makes one part of Kafka's exactly-once machinery happen on "
            "the cluster beside you (3 KRaft controllers, 3 brokers) and shows the evidence: what the client "
            "saw, what crossed the network, what reached the disk.\n\n"
            "| # | module | what you will see happen | lab |\n| --- | --- | --- | --- |\n" + "\n".join(rows)
        ),
        new_markdown_cell(
            "# Setup\n\n"
            "The cluster must be running: this cell connects to it (or starts it) and heals whatever a "
            "previous lesson left broken. Every notebook starts with the same cell."
        ),
        new_code_cell(
            "import eoslab\nfrom eoslab import inspect as ins\n\ncluster = eoslab.connect()\neoslab.heal(cluster)"
        ),
        new_markdown_cell("The cluster as it is now: six JVMs, one of the controllers leads the quorum."),
        new_code_cell("ins.status_frame(cluster)"),
        new_code_cell("eoslab.show_mermaid(ins.cluster_mermaid(cluster))"),
        new_markdown_cell(
            "Clients connect with these bootstrap servers (the second list goes through the kit's fault "
            "proxy, which later modules use to lose an acknowledgement on purpose):"
        ),
        new_code_cell("print(cluster.bootstrap_servers())\nprint(cluster.bootstrap_servers(proxied=True))"),
    ]
    nb = new_notebook(
        cells=cells,
        metadata={
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
        },
    )
    nbformat.write(nb, ROOT / "notebooks" / "index.ipynb")


if __name__ == "__main__":
    main()
