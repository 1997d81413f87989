"""The Broker contract: one suite, run against the embedded and the Redis backend.

Leases are short (a fraction of a second) so that expiry is real time, not a mock:
a node "dies" by simply not renewing. ``pytest -k "crash or reclaim or
exactly_once"`` picks the tests about dead nodes and results written once.
"""

from __future__ import annotations

import multiprocessing
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from arena.engine import Ruleset
from arena.queue.broker import Broker, Claim, LeaseLost
from arena.ratings import tournament_pool
from arena.tournament import MatchJob, MatchResult, TournamentState
from tests.factories import result_of_job, synthetic_record, tournament_spec
from tests.queue import procs
from tests.queue.conftest import Store

LEASE = 0.2  # seconds
EXPIRE = 0.35  # comfortably past one LEASE


def job(n: int, tournament: str = "t1", team0: str = "alpha", team1: str = "beta") -> MatchJob:
    return MatchJob(
        match_id=f"{tournament}-m{n}",
        tournament_id=tournament,
        team0=team0,
        team1=team1,
        ruleset="classic",
        seed=f"seed-{n}",
        round=1,
        tags={"pair": n // 2},
    )


def result(j: MatchJob, winner: int | None = 0, node: str = "n1") -> MatchResult:
    totals = (1001, 640) if winner == 0 else (640, 1001) if winner == 1 else (820, 820)
    record = synthetic_record(j.match_id, j.team0, j.team1, totals, winner, seed=j.seed)
    return MatchResult.of_record(j, record, node)


def elo(broker: Broker, tournament: str = "t1") -> dict[str, tuple[float, int]]:
    """The online Elo in the tournament's own pool (where a result of a tournament the store does
    not hold counts, and only there)."""
    return broker.pool_ratings(tournament_pool(tournament))


def ids(claims: list[Claim]) -> list[str]:
    return [c.job.match_id for c in claims]


# ---------------------------------------------------------------- jobs


def test_enqueue_claim_ack(broker: Broker) -> None:
    jobs = [job(0), job(1)]
    broker.enqueue(jobs)
    assert broker.pending_count() == 2
    claims = broker.claim("n1", 5, LEASE)
    assert [c.job for c in claims] == jobs  # the same jobs, in the order they were enqueued
    assert all(c.node_id == "n1" and c.delivery == 1 for c in claims)
    assert all(c.lease_until > time.time() for c in claims)
    assert broker.pending_count() == 2  # claimed is still pending until acked
    for c in claims:
        broker.ack(c)
    assert broker.pending_count() == 0
    assert broker.claim("n1", 5, LEASE) == []


def test_claim_respects_count(broker: Broker) -> None:
    broker.enqueue([job(n) for n in range(5)])
    assert ids(broker.claim("n1", 2, 30.0)) == ["t1-m0", "t1-m1"]
    assert broker.claim("n1", 0, 30.0) == []
    assert ids(broker.claim("n2", 10, 30.0)) == ["t1-m2", "t1-m3", "t1-m4"]
    assert broker.claim("n3", 10, 30.0) == []


def test_claimed_job_is_not_claimed_again_before_its_lease_expires(broker: Broker) -> None:
    broker.enqueue([job(0)])
    assert len(broker.claim("n1", 1, 5.0)) == 1
    time.sleep(EXPIRE)
    assert broker.claim("n2", 1, 5.0) == []


def test_crash_reclaim_after_lease_expires_with_delivery_2(broker: Broker) -> None:
    broker.enqueue([job(0)])
    [first] = broker.claim("n1", 1, LEASE)
    time.sleep(EXPIRE)  # n1 "died": it never renews (before that, see the test above)
    [second] = broker.claim("n2", 1, LEASE)
    assert second.job == first.job
    assert (second.node_id, second.delivery) == ("n2", 2)
    assert broker.pending_count() == 1


def test_reclaimed_jobs_come_before_new_ones(broker: Broker) -> None:
    broker.enqueue([job(0)])
    broker.claim("n1", 1, LEASE)
    broker.enqueue([job(1)])
    time.sleep(EXPIRE)
    claims = broker.claim("n2", 1, LEASE)
    assert [(c.job.match_id, c.delivery) for c in claims] == [("t1-m0", 2)]
    broker.ack(claims[0])
    assert [(c.job.match_id, c.delivery) for c in broker.claim("n2", 5, LEASE)] == [("t1-m1", 1)]


def test_renew_keeps_the_claim_past_its_first_lease_no_reclaim(broker: Broker) -> None:
    lease = 1.0
    broker.enqueue([job(0)])
    [c] = broker.claim("n1", 1, lease)
    time.sleep(0.7)
    renewed = broker.renew(c, lease)
    assert renewed.lease_until > c.lease_until
    assert (renewed.handle, renewed.delivery, renewed.node_id) == (c.handle, c.delivery, c.node_id)
    time.sleep(0.5)  # past the first lease, well inside the renewed one
    assert broker.claim("n2", 1, lease) == []
    broker.ack(broker.renew(renewed, lease))
    assert broker.pending_count() == 0


def test_renew_after_reclaim_raises_lease_lost(broker: Broker) -> None:
    broker.enqueue([job(0)])
    [mine] = broker.claim("n1", 1, LEASE)
    time.sleep(EXPIRE)
    [theirs] = broker.claim("n2", 1, LEASE)
    with pytest.raises(LeaseLost):
        broker.renew(mine, LEASE)
    assert broker.renew(theirs, LEASE).node_id == "n2"  # the new holder is untouched


def test_renew_after_ack_raises_lease_lost(broker: Broker) -> None:
    broker.enqueue([job(0)])
    [c] = broker.claim("n1", 1, LEASE)
    broker.ack(c)
    with pytest.raises(LeaseLost):
        broker.renew(c, LEASE)


def test_same_node_reclaiming_its_own_job_fences_the_old_claim(broker: Broker) -> None:
    # a node restarted under the same id: the claim of its previous life is dead
    broker.enqueue([job(0)])
    [old] = broker.claim("n1", 1, LEASE)
    time.sleep(EXPIRE)
    [new] = broker.claim("n1", 1, LEASE)
    assert new.delivery == 2
    with pytest.raises(LeaseLost):
        broker.renew(old, LEASE)
    broker.renew(new, LEASE)


def test_release_makes_the_job_claimable_at_once(broker: Broker) -> None:
    broker.enqueue([job(0), job(1)])
    [c] = broker.claim("n1", 1, 30.0)
    broker.release(c)
    assert broker.pending_count() == 2
    # given back at its place in the queue (first come, first served); a release is not a failed delivery
    claims = broker.claim("n2", 5, 30.0)
    assert [(x.job.match_id, x.delivery) for x in claims] == [("t1-m0", 1), ("t1-m1", 1)]
    with pytest.raises(LeaseLost):
        broker.renew(c, 30.0)


def test_release_keeps_the_delivery_count_of_a_reclaimed_job(broker: Broker) -> None:
    broker.enqueue([job(0)])
    broker.claim("n1", 1, LEASE)
    time.sleep(EXPIRE)
    [c] = broker.claim("n2", 1, LEASE)
    assert c.delivery == 2
    broker.release(c)
    [again] = broker.claim("n3", 1, LEASE)
    assert again.delivery == 2
    time.sleep(EXPIRE)
    assert broker.claim("n4", 1, LEASE)[0].delivery == 3


def test_release_by_a_node_that_lost_the_lease_does_nothing(broker: Broker) -> None:
    broker.enqueue([job(0)])
    [mine] = broker.claim("n1", 1, LEASE)
    time.sleep(EXPIRE)
    [theirs] = broker.claim("n2", 1, LEASE)
    theirs = broker.renew(theirs, 30.0)
    broker.release(mine)
    assert broker.claim("n3", 1, 30.0) == []  # not given back: n2 is playing it
    assert broker.pending_count() == 1
    broker.renew(theirs, 30.0)


def test_dead_letter_after_max_deliveries_of_crash_reclaims(store: Store) -> None:
    broker = store.open(max_deliveries=2)
    broker.enqueue([job(0), job(1)])
    assert [c.delivery for c in broker.claim("n1", 1, LEASE)] == [1]
    time.sleep(EXPIRE)
    assert [c.delivery for c in broker.claim("n2", 1, LEASE)] == [2]
    time.sleep(EXPIRE)
    # the third delivery would pass max_deliveries: dead-lettered, and the next job comes instead
    claims = broker.claim("n3", 1, LEASE)
    assert [(c.job.match_id, c.delivery) for c in claims] == [("t1-m1", 1)]
    assert broker.dead_letters() == [job(0)]
    assert broker.pending_count() == 1
    assert broker.pending_count("t1") == 1


def test_stream_trimmed_after_ack(store: Store) -> None:
    broker = store.open()
    broker.enqueue([job(n) for n in range(3)])
    assert store.stored_jobs() == 3
    claims = broker.claim("n1", 3, 30.0)
    broker.release(claims[0])
    assert store.stored_jobs() == 3
    for c in [*claims[1:], *broker.claim("n1", 3, 30.0)]:
        broker.ack(c)
    assert store.stored_jobs() == 0
    assert broker.pending_count() == 0


def test_ack_twice_is_harmless(broker: Broker) -> None:
    broker.enqueue([job(0), job(1)])
    [c] = broker.claim("n1", 1, LEASE)
    broker.ack(c)
    broker.ack(c)
    assert broker.pending_count() == 1
    assert broker.pending_count("t1") == 1


def test_pending_count_per_tournament(broker: Broker) -> None:
    broker.enqueue([job(0, "t1"), job(1, "t1"), job(0, "t2")])
    assert (broker.pending_count(), broker.pending_count("t1"), broker.pending_count("t2")) == (3, 2, 1)
    assert broker.pending_count("nope") == 0
    claims = {c.job.match_id: c for c in broker.claim("n1", 3, LEASE)}
    broker.release(claims["t1-m0"])
    broker.ack(claims["t1-m1"])
    assert (broker.pending_count(), broker.pending_count("t1"), broker.pending_count("t2")) == (2, 1, 1)
    broker.ack(claims["t2-m0"])
    assert (broker.pending_count(), broker.pending_count("t1"), broker.pending_count("t2")) == (1, 1, 0)


def test_concurrent_claims_never_hand_one_job_to_two_nodes(broker: Broker) -> None:
    broker.enqueue([job(n) for n in range(60)])
    start = threading.Barrier(6)

    def node(i: int) -> list[str]:
        start.wait()
        got: list[str] = []
        while batch := broker.claim(f"n{i}", 3, 30.0):
            got += ids(batch)
        return got

    with ThreadPoolExecutor(6) as pool:
        taken = [m for got in pool.map(node, range(6)) for m in got]
    assert sorted(taken) == sorted(f"t1-m{n}" for n in range(60))


def test_enqueue_once_twice_enqueues_once(broker: Broker) -> None:
    jobs = [job(0), job(1)]
    assert broker.enqueue_once("t1/round/1", jobs) is True
    assert broker.enqueue_once("t1/round/1", jobs) is False
    assert broker.pending_count() == 2
    assert broker.enqueue_once("t1/round/2", [job(2)]) is True
    assert broker.pending_count("t1") == 3
    assert broker.enqueue_once("t1/round/3", []) is True
    assert broker.enqueue_once("t1/round/3", [job(3)]) is False


def test_enqueue_once_from_racing_nodes_exactly_once(broker: Broker) -> None:
    start = threading.Barrier(8)

    def advance(_: int) -> bool:
        start.wait()
        return broker.enqueue_once("t1/round/2", [job(n) for n in range(10)])

    with ThreadPoolExecutor(8) as pool:
        won = list(pool.map(advance, range(8)))
    assert won.count(True) == 1
    assert broker.pending_count() == 10


# ---------------------------------------------------------------- results and ratings


def test_write_result_exactly_once(broker: Broker) -> None:
    j = job(0)
    first = result(j, winner=0, node="n1")
    assert broker.write_result(first) is True
    assert broker.write_result(result(j, winner=1, node="n2")) is False  # a replay that went otherwise
    assert broker.get_result(j.match_id) == first
    assert elo(broker) == {"alpha": (1508.0, 1), "beta": (1492.0, 1)}
    assert broker.get_result("t1-unknown") is None


def test_which_of_many_matches_have_a_result_is_read_at_once(broker: Broker) -> None:
    broker.write_result(result(job(0)))
    broker.write_result(result(job(2)))
    assert broker.results_written(["t1-m0", "t1-m1", "t1-m2", "ghost", "t1-m0"]) == {"t1-m0", "t1-m2"}
    assert broker.results_written([]) == set()
    many = [f"t1-m{n}" for n in range(1200)]  # more than one statement's parameters (embedded)
    assert broker.results_written(many) == {"t1-m0", "t1-m2"}


def test_result_round_trips_every_field(broker: Broker) -> None:
    job = MatchJob("m-é", "t-ü", "bot:one", "bot two", {"preset": "coinche", "max_bid": 200}, "belote ♥")
    record = synthetic_record("m-é", "bot:one", "bot two", (0, 1620), None, reason="forfeit", seed="belote ♥",
                              ruleset=job.ruleset)
    r = MatchResult.of_record(job, record, "node-7")
    assert broker.write_result(r)
    assert broker.get_result("m-é") == r
    assert broker.results("t-ü") == [r]
    assert elo(broker, "t-ü") == {"bot:one": (1500.0, 1), "bot two": (1500.0, 1)}


def test_concurrent_write_result_threads_exactly_once(broker: Broker) -> None:
    j = job(0)
    start = threading.Barrier(8)

    def write(i: int) -> bool:
        start.wait()
        return broker.write_result(result(j, winner=i % 2, node=f"n{i}"))

    with ThreadPoolExecutor(8) as pool:
        written = list(pool.map(write, range(8)))
    assert written.count(True) == 1
    assert {games for _, games in elo(broker).values()} == {1}
    assert len(broker.results("t1")) == 1


def test_concurrent_write_result_processes_exactly_once(store: Store) -> None:
    store.open()  # creates the database or the consumer group before the race
    ctx = multiprocessing.get_context("spawn")
    n = 4
    start, out = ctx.Barrier(n), ctx.Queue()
    r = result(job(0))
    workers = [ctx.Process(target=procs.write_once, args=(store.spec(), r, start, out)) for _ in range(n)]
    for w in workers:
        w.start()
    try:
        written = [out.get(timeout=60) for _ in range(n)]
    finally:
        for w in workers:
            w.join(30)
    assert [w.exitcode for w in workers] == [0] * n
    assert written.count(True) == 1
    broker = store.open()
    assert elo(broker) == {"alpha": (1508.0, 1), "beta": (1492.0, 1)}
    assert broker.results("t1") == [r]


def test_crash_after_write_before_ack_replay_is_skipped_exactly_once(broker: Broker) -> None:
    j = job(0)
    broker.enqueue([j, job(1)])
    [c] = broker.claim("n1", 1, LEASE)
    assert broker.write_result(result(c.job))
    # n1 dies before acking; once its lease expires the job is not replayed:
    time.sleep(EXPIRE)
    assert ids(broker.claim("n2", 5, LEASE)) == ["t1-m1"]
    assert broker.pending_count() == 1
    assert elo(broker)["alpha"] == (1508.0, 1)


def test_results_lists_the_tournaments_results(broker: Broker) -> None:
    written = [result(job(n, "t1"), winner=n % 2) for n in (2, 0, 1)]
    for r in written:
        broker.write_result(r)
    other = result(job(0, "t2"))
    broker.write_result(other)
    assert broker.results("t1") == sorted(written, key=lambda r: r.match_id)
    assert broker.results("t2") == [other]
    assert broker.results("t3") == []


def test_elo_by_hand(broker: Broker) -> None:
    # both start at 1500, so alpha expects 0.5 and wins: +-K*(1 - 0.5) = 8
    broker.write_result(result(job(0, team0="alpha", team1="beta"), winner=0))
    assert elo(broker) == {"alpha": (1508.0, 1), "beta": (1492.0, 1)}
    # beta (1492, team 0) draws alpha (1508): beta expects 1/(1 + 10**(16/400)) = 0.476990412702...
    # so beta gains 16*(0.5 - 0.476990412702) = 0.368153396761 and alpha loses as much
    broker.write_result(result(job(1, team0="beta", team1="alpha"), winner=None))
    ratings = elo(broker)
    assert ratings["beta"][0] == pytest.approx(1492.368153396761, abs=1e-9)
    assert ratings["alpha"][0] == pytest.approx(1507.631846603239, abs=1e-9)
    assert ratings["beta"][1] == ratings["alpha"][1] == 2
    assert ratings["alpha"][0] + ratings["beta"][0] == pytest.approx(3000.0, abs=1e-9)  # Elo is zero-sum


def test_elo_uses_the_configured_k(store: Store) -> None:
    broker = store.open(elo_k=32.0)
    broker.write_result(result(job(0), winner=1))
    assert elo(broker) == {"alpha": (1484.0, 1), "beta": (1516.0, 1)}


def test_mirror_match_counts_a_game_and_keeps_the_rating(broker: Broker) -> None:
    broker.write_result(result(job(0, team0="alpha", team1="alpha"), winner=0))
    assert elo(broker) == {"alpha": (1500.0, 1)}


# ---------------------------------------------------------------- tournaments


def test_tournament_create_get_state_cas_list(broker: Broker) -> None:
    spec = tournament_spec("t1", ruleset=Ruleset.from_spec({"preset": "classic", "max_bid": 200}))
    assert broker.get_tournament("t1") is None
    assert broker.put_tournament(spec) is True
    assert broker.put_tournament(tournament_spec("t1", "gauntlet")) is False
    assert broker.get_tournament("t1") == (spec, "created")
    created, running = TournamentState.CREATED, TournamentState.RUNNING
    assert broker.set_tournament_state("t1", running, expect=created) is True
    assert broker.set_tournament_state("t1", TournamentState.FINISHED, expect=created) is False
    assert broker.get_tournament("t1") == (spec, "running")
    assert broker.set_tournament_state("t1", TournamentState.CANCELLED) is True
    assert broker.get_tournament("t1") == (spec, "cancelled")
    assert broker.set_tournament_state("nope", TournamentState.RUNNING) is False
    assert broker.put_tournament(tournament_spec("t0")) is True
    assert broker.list_tournaments() == ["t1", "t0"]  # creation order
    with pytest.raises(ValueError):
        broker.set_tournament_state("t1", "paused")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        broker.set_tournament_state("t1", TournamentState.RUNNING, expect="paused")  # type: ignore[arg-type]


def test_a_page_of_tournaments_is_read_at_once(broker: Broker) -> None:
    specs = {f"t{i}": tournament_spec(f"t{i}") for i in range(600)}  # past SQLite's 999 parameters too
    for spec in specs.values():
        broker.put_tournament(spec)
    broker.set_tournament_state("t3", TournamentState.RUNNING)
    got = broker.get_tournaments(["t3", "ghost", "t3", *specs])
    assert set(got) == set(specs)  # the unknown id left out, the repeated one once
    assert got["t3"] == (specs["t3"], "running") and got["t599"] == (specs["t599"], "created")
    assert broker.get_tournaments([]) == {}


def test_result_counts_count_without_reading_the_results(broker: Broker) -> None:
    for tid in ("t1", "t2"):
        broker.put_tournament(tournament_spec(tid))
    jobs = [MatchJob(f"t1-m{n}", "t1", "alpha", "beta", "classic", "s") for n in range(3)]
    for job in [*jobs, jobs[0]]:  # the first written twice: counted once
        broker.write_result(result_of_job(job, (1001, 640), 0))
    assert broker.result_counts(["t1", "t2", "ghost", "t1"]) == {"t1": 3, "t2": 0, "ghost": 0}
    assert broker.result_counts([]) == {}


def test_tournament_state_cas_race_has_one_winner(broker: Broker) -> None:
    broker.put_tournament(tournament_spec("t1"))
    start = threading.Barrier(8)

    def start_it(_: int) -> bool:
        start.wait()
        return broker.set_tournament_state("t1", TournamentState.RUNNING, expect=TournamentState.CREATED)

    with ThreadPoolExecutor(8) as pool:
        assert list(pool.map(start_it, range(8))).count(True) == 1


def test_cancelled_tournaments_jobs_are_not_claimed(broker: Broker) -> None:
    broker.put_tournament(tournament_spec("t1"))
    broker.put_tournament(tournament_spec("t2"))
    broker.enqueue([job(0, "t1"), job(0, "t2"), job(1, "t1")])
    [held] = broker.claim("n1", 1, LEASE)
    assert held.job.tournament_id == "t1"
    broker.set_tournament_state("t1", TournamentState.CANCELLED)
    [other] = broker.claim("n2", 5, LEASE)
    assert other.job.match_id == "t2-m0"
    broker.ack(other)
    time.sleep(EXPIRE)  # nor is the one claimed before the cancel reclaimed
    assert broker.claim("n2", 5, LEASE) == []
    assert broker.pending_count("t1") == 0
    assert broker.pending_count() == 0


# ---------------------------------------------------------------- restarts


def test_results_survive_a_restart(store: Store) -> None:
    broker = store.open()
    broker.put_tournament(tournament_spec("t1", "gauntlet"))
    broker.set_tournament_state("t1", TournamentState.RUNNING)
    broker.write_result(result(job(0)))
    broker.enqueue_once("t1/round/1", [job(1)])
    broker.close()

    again = store.open()
    assert again.get_result("t1-m0") == result(job(0))
    assert again.results("t1") == [result(job(0))]
    assert elo(again) == {"alpha": (1508.0, 1), "beta": (1492.0, 1)}
    assert again.get_tournament("t1") == (tournament_spec("t1", "gauntlet"), "running")
    assert again.list_tournaments() == ["t1"]
    assert again.enqueue_once("t1/round/1", [job(1)]) is False
    assert again.write_result(result(job(0))) is False
    assert again.pending_count() == 1


def test_crash_and_restart_reclaim_the_unfinished_job(store: Store) -> None:
    lease = 0.8
    broker = store.open()
    broker.enqueue([job(0)])
    [c] = broker.claim("n1", 1, lease)
    broker.close()  # the whole node goes away mid-match

    again = store.open()
    assert again.claim("n2", 1, lease) == []  # still leased
    time.sleep(lease + 0.15)
    [replay] = again.claim("n2", 1, lease)
    assert (replay.job, replay.delivery) == (c.job, 2)


def test_closed_broker_refuses_work(broker: Broker) -> None:
    from arena.queue.broker import BrokerError

    broker.close()
    broker.close()  # twice is fine
    with pytest.raises(BrokerError, match="closed"):
        broker.enqueue([job(0)])
