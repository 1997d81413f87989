"""A version test past those the arena keeps is forgotten whole (issue 24), on both backends: its spec,
results, summaries, own pool and legs left waiting go in one step, nothing of another tournament does,
and an open one, or one with a job left, is never forgotten (a match of it could still be written)."""

from __future__ import annotations

import pytest

from arena.engine import Ruleset
from arena.queue.broker import Broker
from arena.queue.redis_broker import RedisBroker
from arena.ratings import tournament_pool
from arena.tournament import TournamentState
from tests.factories import tournament_spec
from tests.queue.test_broker_contract import job
from tests.queue.test_pool_ratings import legs, snapshot

TEST = "vt:alpha:2:1000"


def played(broker: Broker, tid: str, pairs: int) -> None:
    """An sprt between alpha@2 and alpha@1 (mirror pairs), ``pairs`` whole pairs and one first leg written."""
    spec = tournament_spec(tid, "sprt", ruleset=Ruleset.from_spec("coinche"), duplicate="mirror", deals=4,
                           unrated_reason="a test")
    assert broker.put_tournament(spec)
    for n in range(pairs):
        for leg in legs(tid, n, "alpha@2", "alpha@1", (900, 700), (800, 750)):
            broker.write_result(leg)
    broker.write_result(legs(tid, pairs, "alpha@2", "alpha@1", (900, 700), (800, 750))[0])  # its pair waits


def test_an_ended_test_is_forgotten_whole_and_nothing_else_is(broker: Broker) -> None:
    played(broker, "league", 2)  # another tournament, which stays as it is
    broker.set_tournament_state("league", TournamentState.FINISHED)
    kept = (snapshot(broker), broker.results("league"), broker.summaries("league"))
    played(broker, TEST, 3)
    broker.enqueue_once(f"{TEST}/batch/1", [])
    assert tournament_pool(TEST) in broker.pools() and len(broker.results(TEST)) == 7
    broker.set_tournament_state(TEST, TournamentState.FINISHED)
    assert broker.forget_tournament(TEST)
    assert broker.get_tournament(TEST) is None and TEST not in broker.list_tournaments()
    assert broker.results(TEST) == [] and broker.summaries(TEST) == []
    assert broker.results_written([f"{TEST}-r1-0-leg0", f"{TEST}-r1-3-leg0"]) == set()
    assert tournament_pool(TEST) not in broker.pools() and broker.pair_counts(tournament_pool(TEST)) == {}
    assert (snapshot(broker), broker.results("league"), broker.summaries("league")) == kept
    if isinstance(broker, RedisBroker):  # not one key left that names it
        assert list(broker._redis.scan_iter(match=f"{broker.keys.prefix}:*{TEST}*", count=1000)) == []
    assert not broker.forget_tournament(TEST)  # once
    # made again under its id (never by the arena: a candidacy's id is its own), it starts from nothing:
    # no marker of its first stage, no first leg waiting for its second
    played(broker, TEST, 0)
    assert broker.enqueue_once(f"{TEST}/batch/1", [])
    assert broker.pair_counts(tournament_pool(TEST)) == {}


@pytest.mark.parametrize("state", [TournamentState.CREATED, TournamentState.RUNNING])
def test_an_open_tournament_is_never_forgotten(broker: Broker, state: TournamentState) -> None:
    played(broker, TEST, 1)
    if state is TournamentState.RUNNING:
        broker.set_tournament_state(TEST, state)
    assert not broker.forget_tournament(TEST)
    assert len(broker.results(TEST)) == 3 and broker.get_tournament(TEST) is not None


def test_an_ended_tournament_with_a_job_left_is_not_forgotten_until_it_is_gone(broker: Broker) -> None:
    """An sprt decides in the middle of a batch: its other matches still run, and their results come."""
    played(broker, TEST, 1)
    broker.enqueue([job(9, tournament=TEST, team0="alpha@2", team1="alpha@1")])
    [held] = broker.claim("n1", 1, 30.0)
    broker.set_tournament_state(TEST, TournamentState.FINISHED)
    assert not broker.forget_tournament(TEST)
    broker.ack(held)
    assert broker.forget_tournament(TEST) and broker.get_tournament(TEST) is None
    assert not broker.forget_tournament("nobody")
