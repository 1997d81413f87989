"""What a node's worker counts and logs of its claims: a claim counts once it starts a match; one
given back unstarted counts apart; reclaims are logged as any problem that repeats, one line per
10 s with the count held back (one lost lease once logged 2,467 lines in 28 s for 4 jobs)."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import pytest

from arena.edge.quietlog import RateLimit
from arena.node.worker import Worker, quiet
from arena.queue import Claim, ClaimBatch, EmbeddedBroker
from arena.referee.node import Node, NodeConfig
from arena.tournament import MatchJob
from tests.referee.arena_helpers import arun


def claim_of(match_id: str, delivery: int = 1) -> Claim:
    return Claim(MatchJob(match_id, "t", "alpha", "beta", "classic", "seed"), "n1", delivery,
                 time.time() + 30, match_id)


@pytest.fixture
def worker(tmp_path: Path) -> Worker:
    return Worker(Node(NodeConfig(node_id="n1")), EmbeddedBroker(tmp_path / "queue.sqlite3"))


def test_a_claim_whose_bots_are_not_here_counts_as_given_back_not_as_claimed(
        worker: Worker, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(quiet, "limit", RateLimit())  # nothing held from earlier tests
    worker.broker.enqueue([claim_of("m1").job])
    [claim] = worker.broker.claim("n1", 1, 30.0)
    with caplog.at_level(logging.WARNING, "arena.node"):
        started = arun(worker._start(claim))  # alpha and beta are connected nowhere, and not for long
    assert [r.getMessage() for r in caplog.records if "given back" in r.getMessage()] == [
        "match m1 given back to the queue: no bot with id or name 'alpha'"]
    assert started == 0 and worker.released == 1
    assert worker.broker.claim("n1", 1, 30.0)[0].job.match_id == "m1"  # given back: claimable again
    assert worker.metrics.jobs_claimed._value.get() == 0
    assert worker.metrics.jobs_released._value.get() == 1


def test_reclaims_are_logged_once_per_ten_seconds_with_the_count_held_back(
        worker: Worker, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    now = [1000.0]
    monkeypatch.setattr(quiet, "limit", RateLimit(clock=lambda: now[0]))  # nothing held from earlier tests
    with caplog.at_level(logging.WARNING, "arena.node"):
        worker._count_claims(ClaimBatch([claim_of(f"m{i}", delivery=2) for i in range(50)]))
        now[0] += 3
        worker._count_claims(ClaimBatch([claim_of("m50", delivery=3)]))
        now[0] += 10
        worker._count_claims(ClaimBatch([claim_of("m51", delivery=2), claim_of("m52", delivery=1)]))
    lines = [r.getMessage() for r in caplog.records if "reclaimed" in r.getMessage()]
    assert lines == ["match m0 reclaimed (delivery 2): a lease was lost",
                     "match m51 reclaimed (delivery 2): a lease was lost (50 more like it in the last 10 s)"]
    assert worker.metrics.jobs_reclaimed._value.get() == 52  # every reclaim counted, logged or not
