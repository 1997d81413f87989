"""A queue that waits (issue 18): a node claims only the jobs it can start now, and learns from the
broker when that may have changed. One suite, run against the embedded and the Redis backend.

A job names the bot of each seat; a team match seats each of its two bots twice, so it needs two free
seats of each on the node that claims it. A claim with the node's free seats takes, first come first
served, only the jobs that fit; the others wait, unclaimed, for a node where they fit. Every step that
makes jobs wait (an enqueue, a release, a lease run out) publishes a ``jobs`` notice naming their
bots, in the same step, so that the nodes that can seat them look at once instead of polling.
"""

from __future__ import annotations

import time

import pytest

from arena.queue import ANY_BOT, JOBS_NOTICE, Write
from arena.queue.broker import Broker, Claim
from arena.tournament import TournamentState
from tests.factories import tournament_spec
from tests.queue.conftest import Store
from tests.queue.test_broker_contract import EXPIRE, LEASE, ids, job, result

SEATS = {"alpha": 2, "beta": 2}


def jobs_notices(broker: Broker, cursor: str) -> list[str]:
    """The data of the ``jobs`` notices published after ``cursor``."""
    batch = broker.notices(cursor, 0.0)
    return [n.data for n in batch.notices if n.kind == JOBS_NOTICE]


def test_a_claim_with_seats_takes_only_the_jobs_whose_bots_all_sit_here(broker: Broker) -> None:
    broker.enqueue([job(0, team0="alpha", team1="gamma"), job(1), job(2, team0="gamma", team1="delta"),
                    job(3)])
    claims = broker.claim("n1", 4, 30.0, SEATS)
    assert ids(claims) == ["t1-m1"]  # m3 fits too, but alpha and beta have no seat left for it
    assert broker.pending_count() == 4 and broker.waiting_bots() == {"alpha", "beta", "gamma", "delta"}
    # seats free again: the next job that fits, first come first served; a bot with one free seat
    # cannot sit at both seats of its side
    assert ids(broker.claim("n1", 4, 30.0, {"alpha": 1, "beta": 2, "gamma": 2})) == []
    assert ids(broker.claim("n1", 4, 30.0, {"alpha": 2, "beta": 2, "gamma": 2})) == ["t1-m0"]
    assert ids(broker.claim("n1", 4, 30.0, {"alpha": 4, "beta": 4})) == ["t1-m3"]


def test_a_claim_fills_all_its_free_slots_at_once_in_queue_order(broker: Broker) -> None:
    broker.enqueue([job(n) for n in range(5)])
    claims = broker.claim("n1", 3, 30.0, {"alpha": 10, "beta": 10})
    assert ids(claims) == ["t1-m0", "t1-m1", "t1-m2"] and all(c.delivery == 1 for c in claims)


def test_a_node_with_no_free_seat_claims_nothing_and_leaves_the_queue_as_it_was(broker: Broker) -> None:
    broker.enqueue([job(0), job(1)])
    cursor = broker.notice_cursor()
    batch = broker.claim_batch("n1", 4, 30.0, {})
    assert batch.claims == [] and batch.next_expiry_s is None and batch.requeued == 0
    assert broker.claim_batch("n1", 4, 30.0, {"gamma": 2}).claims == []
    assert broker.pending_count() == 2 and broker.held() == []
    assert jobs_notices(broker, cursor) == []  # nothing changed: nobody is woken


def test_jobs_enqueued_and_released_are_announced_with_their_bots(broker: Broker) -> None:
    cursor = broker.notice_cursor()
    broker.enqueue([job(0), job(1, team0="gamma", team1="alpha")])
    said = jobs_notices(broker, cursor)
    assert len(said) == 1 and set(said[0].split()) == {"alpha", "beta", "gamma"}
    [c] = broker.claim("n1", 1, 30.0, SEATS)
    cursor = broker.notice_cursor()
    broker.release(c)
    assert [set(d.split()) for d in jobs_notices(broker, cursor)] == [{"alpha", "beta"}]
    assert ids(broker.claim("n2", 1, 30.0, SEATS)) == ["t1-m0"]  # back at its place, first


def test_a_job_of_too_many_bots_to_name_says_any(broker: Broker) -> None:
    cursor = broker.notice_cursor()
    broker.enqueue([job(n, team0=f"a{n}", team1=f"b{n}") for n in range(40)])
    assert jobs_notices(broker, cursor) == [ANY_BOT]


def test_a_lease_run_out_puts_the_job_back_at_its_place_and_says_so(broker: Broker) -> None:
    broker.enqueue([job(0), job(1)])
    [held] = broker.claim("dead", 1, LEASE, SEATS)
    first = broker.claim_batch("n2", 0, 30.0, SEATS)
    assert first.claims == [] and first.next_expiry_s is not None and first.next_expiry_s <= LEASE
    time.sleep(EXPIRE)
    cursor = broker.notice_cursor()
    # a node with nothing free still gives the expired lease back, and learns of no lease left
    back = broker.claim_batch("n2", 0, 30.0, {})
    assert back.requeued == 1 and back.next_expiry_s is None
    assert [set(d.split()) for d in jobs_notices(broker, cursor)] == [{"alpha", "beta"}]
    again = broker.claim("n2", 2, 30.0, {"alpha": 4, "beta": 4})
    assert [(c.job.match_id, c.delivery) for c in again] == [("t1-m0", 2), ("t1-m1", 1)]
    assert held.job.match_id == "t1-m0"


def test_the_jobs_of_absent_bots_are_claimed_whatever_the_seats(broker: Broker) -> None:
    broker.enqueue([job(0), job(1, team0="gamma", team1="delta"), job(2, team0="beta", team1="gamma")])
    claims = broker.claim_batch("n1", 5, 30.0, {}, absent=["gamma"]).claims
    assert ids(claims) == ["t1-m1", "t1-m2"]
    assert broker.waiting_bots() == {"alpha", "beta"}


def test_a_node_holding_a_record_claims_its_job_whatever_the_seats(broker: Broker) -> None:
    broker.enqueue([job(0), job(1), job(2)])
    claims = broker.claim_batch("n1", 2, 30.0, {}, matches=["t1-m2", "t1-m9"]).claims
    assert ids(claims) == ["t1-m2"]


def test_a_claim_drops_the_jobs_of_a_cancelled_tournament_instead_of_taking_them(broker: Broker) -> None:
    broker.put_tournament(tournament_spec("t1"))
    broker.enqueue([job(0), job(1)])
    broker.set_tournament_state("t1", TournamentState.CANCELLED)
    assert broker.claim("n1", 2, 30.0, SEATS) == []
    assert broker.pending_count("t1") == 0 and broker.waiting_bots() == set()


# ---------------------------------------------------------------- finish: the result and the job in one step
def test_finish_writes_the_results_and_removes_their_jobs_together(broker: Broker, store: Store) -> None:
    broker.enqueue([job(n) for n in range(3)])
    claims = broker.claim("n1", 3, 30.0, {"alpha": 6, "beta": 6})
    done = broker.finish([(c, result(c.job)) for c in claims[:2]])
    assert [(d.claim, d.write, d.left) for d in done] == [(claims[0], Write.WRITTEN, 2),
                                                          (claims[1], Write.WRITTEN, 1)]
    assert store.stored_jobs() == 1 and broker.pending_count("t1") == 1
    assert {r.match_id for r in broker.results("t1")} == {"t1-m0", "t1-m1"}
    # written again (a replay of a job whose node was thought dead): counted once, its job gone too
    [again] = broker.finish([(claims[2], result(claims[2].job)), ][:1])
    assert again.write is Write.WRITTEN and again.left == 0
    [dup] = broker.finish([(claims[0], result(claims[0].job))])
    assert dup.write is Write.DUPLICATE and dup.left == -1
    assert sum(games for _, games in broker.pool_ratings("tournament:t1").values()) == 6


def test_finish_of_a_cancelled_tournament_records_nothing_and_drops_the_job(broker: Broker) -> None:
    broker.put_tournament(tournament_spec("t1"))
    broker.enqueue([job(0)])
    [c] = broker.claim("n1", 1, 30.0, SEATS)
    broker.set_tournament_state("t1", TournamentState.CANCELLED)
    [done] = broker.finish([(c, result(c.job))])
    assert done.write is Write.CANCELLED and done.left == 0
    assert broker.results("t1") == [] and broker.pending_count("t1") == 0
    assert broker.tournament_ending("t1").revealed_at  # its last job gone: the secret is out


def test_finish_of_a_job_another_node_replays_stops_the_replay(broker: Broker) -> None:
    """The first node's lease ran out and another node took the job; the first one finishes anyway:
    its result counts, the job goes, and the other node's renewal says its lease is lost."""
    broker.enqueue([job(0)])
    [slow] = broker.claim("slow", 1, LEASE, SEATS)
    time.sleep(EXPIRE)
    [fast] = broker.claim("fast", 1, 30.0, SEATS)
    assert fast.delivery == 2
    [done] = broker.finish([(slow, result(slow.job))])
    assert done.write is Write.WRITTEN
    assert broker.renew_many([fast], 30.0) == [None]
    [late] = broker.finish([(fast, result(fast.job, winner=1))])
    assert late.write is Write.DUPLICATE
    assert [r.winner for r in broker.results("t1")] == [0]


def test_renew_many_extends_the_leases_still_held_and_says_which_are_lost(broker: Broker) -> None:
    broker.enqueue([job(0), job(1)])
    a, b = broker.claim("n1", 2, LEASE, {"alpha": 4, "beta": 4})
    broker.release(b)
    renewed = broker.renew_many([a, b], 30.0)
    assert renewed[1] is None and isinstance(renewed[0], Claim)
    time.sleep(EXPIRE)  # a's lease now runs 30 s: nobody takes it back
    assert ids(broker.claim("n2", 2, 30.0, {"alpha": 4, "beta": 4})) == ["t1-m1"]


@pytest.mark.parametrize("count", [0, 3])
def test_a_claim_says_when_the_earliest_lease_runs_out(broker: Broker, count: int) -> None:
    broker.enqueue([job(0), job(1)])
    broker.claim("n1", 1, 5.0, SEATS)
    broker.claim("n2", 1, 2.0, SEATS)
    batch = broker.claim_batch("n3", count, 30.0, {})
    assert batch.next_expiry_s is not None and 1.0 < batch.next_expiry_s <= 2.0
    assert {c.node_id for c in broker.held()} == {"n1", "n2"}


def test_a_claim_takes_at_most_its_cap_of_the_capped_tournaments_jobs_and_the_others_past_them(
        broker: Broker) -> None:
    """A node's room for version tests (issue 24): before, it took every ``vt:`` job its seats fit, so a
    node of 8 slots held 8 test matches and a tournament's match waited for one to end."""
    free = {"alpha": 20, "beta": 20, "gamma": 20, "delta": 20}
    broker.enqueue([job(n, tournament="vt:alpha:2:1", team0="alpha", team1="beta") for n in range(4)])
    broker.enqueue([job(n, tournament="league", team0="gamma", team1="delta") for n in range(2)])
    claims = broker.claim_batch("n1", 8, 30.0, free, capped=("vt:", 1)).claims
    assert ids(claims) == ["vt:alpha:2:1-m0", "league-m0", "league-m1"]  # the capped ones waited
    assert ids(broker.claim_batch("n1", 8, 30.0, free, capped=("vt:", 0)).claims) == []
    assert ids(broker.claim_batch("n2", 8, 30.0, free, capped=("vt:", 2)).claims) == [
        "vt:alpha:2:1-m1", "vt:alpha:2:1-m2"]
    assert ids(broker.claim_batch("n2", 8, 30.0, free).claims) == ["vt:alpha:2:1-m3"]  # no cap: any
