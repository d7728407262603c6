"""The kernel extension's sentence for an error about files: its own, even with the cluster down (the
instructor's class notebook runs with no cluster; "the cluster is down" would send them to the wrong fix).
The kernel itself, killed and restarted, is tests/integration/test_kernel_messages.py."""

from __future__ import annotations

import pytest

from eoslab.course import kernel
from eoslab.errors import ClusterNotRunning, DataError, GradingError


@pytest.fixture
def cluster_down(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    probes: list[int] = []

    def no_brokers(user_ns: object) -> int:
        probes.append(1)
        return 0

    monkeypatch.setattr(kernel, "_brokers_running", no_brokers)
    return probes


@pytest.mark.parametrize("error", [GradingError, DataError])
def test_an_error_about_files_says_its_own_sentence_with_the_cluster_down(
    error: type[Exception], cluster_down: list[int]
) -> None:
    sentence = "/x/class has no submissions: put each learner's submission-*.zip in it."
    assert kernel.explain(error, error(sentence), {}) == f"{error.__name__}: {sentence}"
    assert cluster_down == []  # the cluster was not even asked


def test_a_cluster_error_with_the_cluster_down_still_says_so(cluster_down: list[int]) -> None:
    said = kernel.explain(ClusterNotRunning, ClusterNotRunning("no broker answers."), {})
    assert said is not None and said.startswith(
        "The cluster is down (no broker runs, so this cell got ClusterNotRunning)"
    )
    assert cluster_down == [1]
