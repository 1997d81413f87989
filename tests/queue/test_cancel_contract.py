"""What a cancel asks of both backends: a result written after it is refused, atomically with the
write, and the tournament's secret is revealed in the very step that removes its last job."""

from __future__ import annotations

import pytest

from arena.queue.broker import Broker, TournamentCancelled
from arena.ratings import tournament_pool
from arena.tournament import Tournaments, TournamentState
from arena.tournament.jobs import CANCELLED_BY_ADMIN, REVEALED_AT_ONCE, REVEALED_ONCE_OVER, Ending
from tests.factories import tournament_spec
from tests.queue.test_broker_contract import LEASE, job, result

CANCELLED = TournamentState.CANCELLED


def running(broker: Broker, tid: str) -> None:
    broker.put_tournament(tournament_spec(tid))
    broker.set_tournament_state(tid, TournamentState.RUNNING, expect=TournamentState.CREATED)


@pytest.mark.security
def test_a_result_written_after_its_tournament_was_cancelled_is_refused_and_rates_nothing(
        broker: Broker) -> None:
    running(broker, "t1")
    assert broker.write_result(result(job(0)))
    rated = {pool: broker.pool_ratings(pool) for pool in broker.pools()}
    assert tournament_pool("t1") in rated
    broker.set_tournament_state("t1", CANCELLED, reason=CANCELLED_BY_ADMIN)

    with pytest.raises(TournamentCancelled, match="t1 was cancelled before its result was written"):
        broker.write_result(result(job(1)))  # it ended in the window before its node stopped it
    assert broker.get_result("t1-m1") is None
    assert [r.match_id for r in broker.results("t1")] == ["t1-m0"]
    assert [s.match_id for s in broker.summaries("t1")] == ["t1-m0"]
    assert {pool: broker.pool_ratings(pool) for pool in broker.pools()} == rated
    assert broker.write_result(result(job(0))) is False  # one written before the cancel stays written


@pytest.mark.security
def test_an_ended_tournament_s_secret_is_revealed_in_the_step_that_removes_its_last_job(
        broker: Broker) -> None:
    tournaments = Tournaments(broker)
    running(broker, "t1")
    broker.enqueue([job(0), job(1), job(2)])
    first, second = broker.claim("n1", 2, 30.0)  # two matches running; one job still queued
    assert broker.tournament_ending("t1") == Ending()

    tournaments.cancel("t1")
    ending = broker.tournament_ending("t1")
    assert ending.ended_at > 0 and ending.ended_reason == CANCELLED_BY_ADMIN and ending.revealed_at == 0
    # the queued job is dropped unplayed by the cancel itself (no claim need come: its bots may be
    # connected nowhere); the two running ones can still be played
    assert broker.pending_count("t1") == 2 and broker.waiting_bots() == set()
    progress = tournaments.progress("t1")
    assert not progress.secret_revealed and "withheld while 2 of its matches" in progress.ending_text
    broker.ack(first)  # a match stopped
    assert broker.claim("n2", 5, 30.0) == []
    assert broker.tournament_ending("t1").revealed_at == 0  # the other match still runs
    assert not tournaments.progress("t1").secret_revealed
    broker.ack(second)
    ending = broker.tournament_ending("t1")
    assert ending.revealed_at >= ending.ended_at and ending.revealed_reason == REVEALED_ONCE_OVER
    progress = tournaments.progress("t1")
    assert progress.secret_revealed and progress.ending_text.startswith("cancelled by an admin at ")

    running(broker, "t2")  # nothing of it in play when it ends: revealed with its end
    tournaments.cancel("t2")
    ending = broker.tournament_ending("t2")
    assert ending.revealed_at == ending.ended_at > 0 and ending.revealed_reason == REVEALED_AT_ONCE
    assert tournaments.progress("t2").secret_revealed


def test_the_states_of_many_tournaments_are_read_at_once(broker: Broker) -> None:
    running(broker, "t1")
    broker.put_tournament(tournament_spec("t2"))
    broker.set_tournament_state("t1", CANCELLED, expect=TournamentState.RUNNING)
    assert broker.tournament_states(["t1", "t2", "ghost", "t1"]) == {"t1": CANCELLED, "t2": "created"}
    assert broker.tournament_states([]) == {}
    assert broker.claim("n1", 1, LEASE) == []
