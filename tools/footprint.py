"""One learner's footprint: memory and CPU over a whole course run, on one backend, sampled every second.

usage: .venv/bin/python tools/footprint.py [--backend local|docker] [--labs] [--out FILE] [NOTEBOOK ...]

It starts the learner's cluster (offset 0 unless ``EOSLAB_PORT_OFFSET`` says otherwise; a fresh data folder of its
own, deleted at the end), runs the course as a learner does — every module notebook in order, each in a fresh
kernel (``eoslab course time --measure``, which also measures what notebooks 05 and 06 need when it is missing),
with ``--labs`` each module's solution after it — and samples, every second, the resident memory (RSS) and CPU
time of every process of the course, grouped: the six Kafka nodes (JVMs or containers), the notebook kernel and
what it starts (librdkafka's threads live in it; the pipeline's processors, the Java client), Spark's JVM, the
fault proxy. A JupyterLab server and a browser tab come on top (measured apart: see the summary's note).

It prints the peak of the total and of each group, the CPU-seconds and the mean and 95th-percentile cores used,
and writes every sample to ``--out`` (JSON) for docs/. The machine's other load is part of what it sees: run it
on a quiet machine, and say what else ran.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
GROUPS = ("kafka", "kernel", "spark", "proxy", "other")


def group_of(cmdline: list[str], name: str) -> str:
    """The course part a process belongs to, from its command line."""
    cmd = " ".join(cmdline)
    if "kafka.Kafka" in cmd or "kafka.docker.KafkaDockerWrapper" in cmd:
        return "kafka"
    if "org.apache.spark" in cmd or "pyspark" in cmd and name == "java":
        return "spark"
    if "eoslab.faults" in cmd:
        return "proxy"
    if "ipykernel" in cmd or "eoslab.demos" in cmd or "txnclient" in cmd:
        return "kernel"
    return "other"


def container_ids(project: str) -> list[str]:
    """The full ids of the compose project's containers (their processes' cgroups name them)."""
    out = subprocess.run(
        ["docker", "ps", "-q", "--no-trunc", "--filter", f"label=com.docker.compose.project={project}"],
        capture_output=True,
        text=True,
    ).stdout
    return out.split()


def _in_containers(pid: int, ids: list[str]) -> bool:
    try:
        cgroup = Path(f"/proc/{pid}/cgroup").read_text()
    except OSError:
        return False
    return any(i in cgroup for i in ids)


class Sampler(threading.Thread):
    """Every ``interval`` s: RSS (MiB) and CPU-seconds by group, over ``roots``' descendants and this course's Kafka
    nodes (JVMs whose command line names ``data``, or processes of the compose project ``project``'s containers)."""

    def __init__(self, roots: list[int], data: Path, project: str | None, interval: float = 1.0) -> None:
        super().__init__(daemon=True)
        self.roots, self.interval, self.data, self.project = roots, interval, str(data), project
        self._ids: list[str] = []
        self.samples: list[dict[str, float]] = []
        self.stop = threading.Event()
        self._cpu: dict[int, float] = {}

    def _processes(self) -> list[psutil.Process]:
        found: dict[int, psutil.Process] = {}
        for pid in self.roots:
            try:
                root = psutil.Process(pid)
                found.update({p.pid: p for p in [root, *root.children(recursive=True)]})
            except psutil.Error:
                continue
        if self.project and len(self._ids) < 6:
            self._ids = container_ids(self.project)
        for p in psutil.process_iter(["cmdline"]):  # the nodes: local JVMs, or the containers' (the same kernel)
            cmd = " ".join(p.info["cmdline"] or [])
            if "kafka.Kafka" in cmd and (self.data in cmd or _in_containers(p.pid, self._ids)):
                found[p.pid] = p
        return list(found.values())

    def sample(self) -> dict[str, float]:
        row = {f"{g}_mb": 0.0 for g in GROUPS} | {f"{g}_cpu_s": 0.0 for g in GROUPS}
        for p in self._processes():
            try:
                with p.oneshot():
                    group = group_of(p.cmdline(), p.name())
                    rss, cpu = p.memory_info().rss / 2**20, sum(p.cpu_times()[:2])
            except psutil.Error:
                continue
            row[f"{group}_mb"] += rss
            row[f"{group}_cpu_s"] += cpu - self._cpu.get(p.pid, cpu if not self.samples else 0.0)
            self._cpu[p.pid] = cpu
        row["t"] = time.monotonic()
        return row

    def run(self) -> None:
        while not self.stop.is_set():
            self.samples.append(self.sample())
            self.stop.wait(self.interval)


def summary(samples: list[dict[str, float]]) -> dict[str, float]:
    """Peaks (MiB), CPU-seconds, and mean / p95 cores over the run."""
    total_mb = sorted(sum(s[f"{g}_mb"] for g in GROUPS) for s in samples)
    out = {"samples": len(samples), "wall_s": samples[-1]["t"] - samples[0]["t"], "peak_total_mb": total_mb[-1]}
    for g in GROUPS:
        out[f"peak_{g}_mb"] = max(s[f"{g}_mb"] for s in samples)
        out[f"{g}_cpu_s"] = sum(s[f"{g}_cpu_s"] for s in samples[1:])
    cores = sorted(
        sum(b[f"{g}_cpu_s"] for g in GROUPS) / max(1e-9, b["t"] - a["t"]) for a, b in itertools.pairwise(samples)
    )
    out["cpu_s"] = sum(out[f"{g}_cpu_s"] for g in GROUPS)
    out["mean_cores"] = out["cpu_s"] / max(1e-9, out["wall_s"])
    out["p95_cores"] = cores[int(0.95 * (len(cores) - 1))] if cores else 0.0
    return out


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--backend", choices=["local", "docker"], default="local")
    ap.add_argument("--labs", action="store_true", help="each module's solution after its notebook")
    ap.add_argument("--out", type=Path, default=None, help="write the samples and the summary here (JSON)")
    ap.add_argument("notebooks", nargs="*", help="module notebooks (default: all)")
    args = ap.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="eoslab-footprint."))
    env = {**os.environ, "EOSLAB_BACKEND": args.backend, "EOSLAB_DATA": str(work / "kafka-data")}
    env["EOSLAB_RUNS"] = str(work / "runs")
    eoslab = [sys.executable, "-m", "eoslab.cli"]
    project = None
    if args.backend == "docker":
        from eoslab._compose import compose_project
        from eoslab.topology import TOPOLOGY

        project = compose_project(TOPOLOGY)
    sampler = Sampler([os.getpid()], work / "kafka-data", project)
    sampler.start()
    try:
        subprocess.run([*eoslab, "up"], env=env, check=True, cwd=ROOT)
        measure = [*eoslab, "course", "time", "--measure", "--times", str(work / "times.json"), *args.notebooks]
        rc = subprocess.run(measure + (["--labs"] if args.labs else []), env=env, cwd=ROOT).returncode
    finally:
        sampler.stop.set()
        sampler.join()
        subprocess.run([*eoslab, "reset"], env=env, cwd=ROOT)
        times = (work / "times.json").read_text() if (work / "times.json").is_file() else "{}"
        shutil.rmtree(work, ignore_errors=True)
    result = summary(sampler.samples)
    print(json.dumps(result, indent=2))
    if args.out:
        record = {"backend": args.backend, "labs": args.labs, "summary": result, "samples": sampler.samples}
        args.out.write_text(json.dumps({**record, "times": json.loads(times)}) + "\n")
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
