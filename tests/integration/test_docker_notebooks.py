"""Notebooks 00 and 01 under nbval on the docker backend, against the session's docker cluster.

Each notebook runs in its own pytest process whose environment selects the backend, the ports and
the image (EOSLAB_BACKEND=docker, EOSLAB_PORT_OFFSET, EOSLAB_KAFKA_IMAGE), exactly as a learner's
`EOSLAB_BACKEND=docker make lab` kernel would: the notebooks do not know which backend runs.

Why these two (~3 min together), and neither fewer nor others: the backend conformance test proves each
operation of the interface on containers; these prove that the lessons' own calls work there. Notebook
00 lists partition folders and segments inside a container's volume, runs a Kafka tool in a container
(`docker compose exec`), kills a broker container and restarts it into the ISR. Notebook 01 puts the
fault proxy in front of the containers (a dropped acknowledgement, a replayed request), dumps the log
of every replica, stops a broker with SIGTERM besides SIGKILL and reads its producer-state recovery
from the container's log. Each makes calls the other does not. Pausing a node is left to the conformance
test; notebooks 02-06 (several minutes each) run on the local backend only.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from eoslab.cluster import Cluster

pytestmark = [pytest.mark.docker, pytest.mark.destructive]

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ["00_cluster_tour", "01_idempotent_producer"]


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_runs_on_the_docker_backend(docker_cluster: Cluster, docker_image: str, name: str) -> None:
    env = {
        **os.environ,
        "EOSLAB_BACKEND": "docker",
        "EOSLAB_PORT_OFFSET": str(docker_cluster.topology.port_offset),
        "EOSLAB_KAFKA_IMAGE": docker_image,
    }
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            f"notebooks/{name}.ipynb",
            "--nbval-lax",
            "--nbval-current-env",
            "--nbval-cell-timeout=120",
            "-p",
            "no:cacheprovider",
            "-q",
            "--color=no",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    tail = "\n".join(proc.stdout.splitlines()[-60:])
    assert proc.returncode == 0, f"{name} failed on the docker backend:\n{tail}\n{proc.stderr[-2000:]}"
    assert " passed" in proc.stdout.splitlines()[-1] and "failed" not in proc.stdout.splitlines()[-1], tail
