"""Where `make test` puts its clusters: a base port offset of its own, checked free, never a learner's.

Every cluster the suite starts sits at the suite's base offset plus a fixed step (:data:`PLAN`), and that base
is exported as ``EOSLAB_PORT_OFFSET`` to every tier: worker gwK's cluster is +K*5000 from it
(tests/worker_clusters.py), the course tier's docker clusters +500, the bad-input cases +750, the classroom
test's second grading cluster +2500 (eoslab/classroom/_clusters.py), the course in the lab container +4000 (its
JupyterLab on 8888 + that offset).

A learner's cluster runs at offset 0 (``make lab``, ``eoslab up``, ``docker compose --profile lab up``), or at
the ``EOSLAB_PORT_OFFSET`` of their shell. The suite never takes offset 0 or a base whose plan holds it, so a
learner who opens the course while ``make test`` runs meets no cluster of the suite on their ports; and
:func:`choose_base` takes the first candidate whose every planned port is free now and whose docker compose
projects have no container or volume here (a stopped docker cluster keeps its volumes: the suite's start from
empty volumes must never delete someone's).

The candidates are the offsets 50, 150, ... 2050, the last whose plan stays below 32768 (twenty-one: a suite
run inside a test, test_beside_a_learner.py, finds most of them held by the outer run's clusters). The cluster's
ports mod 100 are 91-93 and 0-3, so a window shifted by 50 (mod 100) shares no port with any window at a multiple
of 100 (a learner's at 0 or +1000, the unit tier's scans for a free block at multiples of 100). Every planned port
stays below 32768, where Linux starts handing out ports to outgoing connections (``ip_local_port_range``): a
broker restarted on a port the system has just lent to a client connection could not bind it.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from eoslab._ports import is_free
from eoslab.topology import Topology
from tests.worker_clusters import WORKER_OFFSET_STEP as WORKER_STEP

LEARNER_OFFSET = 0
"""Where ``make lab`` and the committed docker-compose.yml put a learner's cluster."""
CANDIDATES = tuple(range(50, 2100, 100))
DOCKER_STEP = 500
"""The course tier's docker clusters and the system tier's docker test cluster: +500 from their tier's base."""
SPARE_STEP = 750
"""Clusters that must never start (bad input)."""
GRADING_STEP = 2500
"""The classroom test's second grading cluster (eoslab/classroom/_clusters.py: SLOT_BASE + SLOT_STEP)."""
LAB_STEP = 4000
"""The course in the lab container (tests/browser/test_course_in_lab_container.py), its JupyterLab at 8888 + it."""
MAX_WORKERS = 3
EPHEMERAL_PORTS = 32768


@dataclass(frozen=True)
class Step:
    """One cluster the suite may start: ``offset`` from the suite's base; ``docker`` when it is a compose project."""

    what: str
    offset: int
    docker: bool = False


def plan(workers: int = MAX_WORKERS) -> tuple[Step, ...]:
    """Every cluster of the suite, relative to its base: the local ones of the cluster and system tiers, the
    docker ones of the course tier (whose own base is +500, so its workers' docker clusters are +500+K*5000)."""
    steps = [
        Step("the local cluster of gw0", 0),
        Step("the second grading cluster", GRADING_STEP),
        Step("the lab container's cluster", LAB_STEP, True),
    ]
    for k in range(workers):
        gw = k * WORKER_STEP
        if k:
            steps.append(Step(f"the local cluster of gw{k}", gw))
        steps += [
            Step(f"the docker cluster of gw{k}", DOCKER_STEP + gw, True),
            Step(f"the bad input of gw{k}", SPARE_STEP + gw),
        ]
    return tuple(steps)


def ports(base: int, steps: Iterable[Step] | None = None) -> dict[int, str]:
    """Every port the suite may bind at ``base``, and which of its clusters binds it."""
    from eoslab._compose_lab import jupyterlab_port

    out: dict[int, str] = {}
    for step in plan() if steps is None else steps:
        topo = Topology(port_offset=base + step.offset)
        for port, who in topo.all_ports().items():
            out[port] = f"{who} of {step.what}"
        if step.offset == LAB_STEP:
            out[jupyterlab_port(topo)] = f"JupyterLab of {step.what}"
    return out


def compose_projects() -> set[str]:
    """The docker compose projects that have a container or a volume here (none without a Docker engine)."""
    found: set[str] = set()
    for kind in (["ps", "-a"], ["volume", "ls"]):
        try:
            out = subprocess.run(
                ["docker", *kind, "--format", '{{.Label "com.docker.compose.project"}}'],
                capture_output=True,
                text=True,
                timeout=60,
            ).stdout
        except (OSError, subprocess.SubprocessError):
            return found
        found |= {line.strip() for line in out.splitlines() if line.strip()}
    return found


def why_not(base: int, projects: set[str], free: Callable[[int], bool] = is_free) -> str | None:
    """Why the suite cannot take ``base`` (a port taken, a compose project of its names present), or None."""
    from eoslab._compose import COMPOSE_PROJECT

    for port, who in sorted(ports(base).items()):
        if port >= EPHEMERAL_PORTS:
            return f"port {port} ({who}) is among the ports the system lends to outgoing connections"
        if not free(port):
            return f"port {port} ({who}) is taken"
    for step in plan():
        name = f"{COMPOSE_PROJECT}-{base + step.offset}"
        if step.docker and name in projects:
            return f"the docker compose project {name} ({step.what}) has containers or volumes here"
    return None


def choose_base(
    learner: int = LEARNER_OFFSET, free: Callable[[int], bool] = is_free, projects: set[str] | None = None
) -> int:
    """The first candidate base that is free and holds no port of a learner's cluster at ``learner``.

    Raises SystemExit with one sentence when none is (every candidate's reason is in it)."""
    held = set(Topology(port_offset=learner).all_ports())
    projects = compose_projects() if projects is None else projects
    reasons = []
    for base in CANDIDATES:
        if held & set(ports(base)):
            reasons.append(f"+{base}: shares ports with a learner's cluster at +{learner}")
            continue
        why = why_not(base, projects, free)
        if why is None:
            return base
        reasons.append(f"+{base}: {why}")
    raise SystemExit(
        "make test: no free block of ports for the suite's clusters ("
        + "; ".join(reasons)
        + "): stop what holds them (`eoslab status` names a cluster's ports), then run it again."
    )


def learner_offset(environ: Mapping[str, str]) -> int:
    """The offset of the learner's own cluster: their shell's ``EOSLAB_PORT_OFFSET``, else 0."""
    raw = environ.get("EOSLAB_PORT_OFFSET", "") or "0"
    try:
        return int(raw)
    except ValueError:
        raise SystemExit(f"EOSLAB_PORT_OFFSET={raw!r} is not a number: set it to e.g. 1000, or unset it.") from None
