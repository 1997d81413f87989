"""Openskill for mixed partnerships, through the store: one suite, run against both backends.

The atomic result write queues a mixed game in each of its pools; a rating
step (``apply_mixed``) rates the queued games in order, exactly once, however
many threads or processes run it at once, and a write repeated queues nothing.
"""

from __future__ import annotations

import multiprocessing
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from arena.engine import Ruleset
from arena.node.rankings import Rankings
from arena.queue.broker import Broker
from arena.ratings import tournament_pool
from arena.ratings.leaderboard import mixed_leaderboard
from arena.ratings.mixed import MixedGame, MixedRatings
from arena.tournament import MatchJob, MatchResult, TournamentSpec
from tests.factories import result_of_job
from tests.queue import procs
from tests.queue.conftest import Store
from tests.ratings.league import play_mixed_games

BOTS = ("ann", "bob", "cat", "dan", "eve", "fay")


def spec(tid: str, **fields: object) -> TournamentSpec:
    return TournamentSpec(tid, "partners", BOTS, ruleset=Ruleset.from_spec("coinche"), **fields)  # type: ignore[arg-type]


def mixed(tid: str, n: int, seats: tuple[str, str, str, str], winner: int | None,
          leg: int | None = None) -> MatchResult:
    match_id = f"{tid}-r1-{n}" + ("" if leg is None else f"-leg{leg}")
    job = MatchJob.seated(match_id, tid, seats, ruleset="coinche", seed=f"s{n}")
    totals = (500, 200) if winner == 0 else (200, 500) if winner == 1 else (300, 300)
    return result_of_job(job, totals, winner)


def results_of(games: list[MixedGame], tid: str) -> list[MatchResult]:
    return [mixed(tid, i, (g.side_a[0], g.side_b[0], g.side_a[1], g.side_b[1]),
                  0 if g.score_a == 1.0 else 1 if g.score_a == 0.0 else None) for i, g in enumerate(games)]


def sequential(games: list[MixedGame]) -> MixedRatings:
    ratings = MixedRatings()
    for g in games:
        ratings.apply(g)
    return ratings


def test_a_mixed_result_waits_in_both_its_pools_and_is_rated_once(broker: Broker) -> None:
    broker.put_tournament(spec("m1"))  # rated: its own pool and coinche's
    result = mixed("m1", 0, ("ann", "bob", "cat", "dan"), winner=0)
    assert broker.write_result(result)
    assert not broker.write_result(result)  # a repeated write queues nothing
    pools = (tournament_pool("m1"), "coinche")
    assert [broker.mixed_pending(p) for p in pools] == [1, 1]
    assert broker.pair_counts("coinche") == {} and broker.pool_ratings("coinche") == {}
    assert broker.rate_mixed(result) == 2
    assert broker.rate_mixed(result) == 0
    assert [broker.mixed_pending(p) for p in pools] == [0, 0]
    assert set(broker.pools()) == set(pools)
    for pool in pools:
        states = broker.mixed_ratings(pool)
        assert set(states) == {"ann", "bob", "cat", "dan"}
        assert states["ann"].mu == states["cat"].mu > 25.0 > states["bob"].mu == states["dan"].mu
        assert (states["ann"].games, states["ann"].wins, states["bob"].losses) == (1, 1, 1)


def test_an_unrated_tournament_rates_its_mixed_games_in_its_own_pool_only(broker: Broker) -> None:
    broker.put_tournament(spec("u1", unrated_reason="a seed given by a person"))
    broker.write_result(mixed("u1", 0, ("ann", "bob", "cat", "dan"), winner=1))
    broker.apply_mixed("coinche")
    assert broker.mixed_ratings("coinche") == {}
    assert broker.apply_mixed(tournament_pool("u1")) == 1


def test_a_mixed_duplicate_pair_is_one_game_queued_with_its_second_leg(broker: Broker) -> None:
    broker.put_tournament(spec("d1", deals=2, duplicate="mirror"))
    pool = tournament_pool("d1")
    broker.write_result(mixed("d1", 0, ("ann", "bob", "cat", "dan"), winner=0, leg=0))  # ann+cat 500-200
    assert broker.mixed_pending(pool) == 0
    broker.write_result(mixed("d1", 0, ("bob", "ann", "dan", "cat"), winner=0, leg=1))  # bob+dan 500-200
    assert broker.mixed_pending(pool) == 1
    broker.apply_mixed(pool)
    states = broker.mixed_ratings(pool)
    assert states["ann"].draws == 1 and states["ann"].mu == pytest.approx(states["bob"].mu)  # 700 each


def test_the_store_rates_the_games_in_the_order_they_were_written(broker: Broker) -> None:
    broker.put_tournament(spec("o1"))
    games = play_mixed_games(dict.fromkeys(BOTS, 1500.0), 40, np.random.default_rng(3))
    for r in results_of(games, "o1"):
        broker.write_result(r)
    pool = tournament_pool("o1")
    assert broker.apply_mixed(pool) == 40
    expected = sequential(games)
    for bot, state in broker.mixed_ratings(pool).items():
        assert state.mu == pytest.approx(expected.mu(bot))
        assert state.sigma == pytest.approx(expected.sigma(bot))


def test_two_threads_rating_one_pool_rate_each_game_once(store: Store) -> None:
    writer = store.open()
    writer.put_tournament(spec("t2"))
    pool = tournament_pool("t2")
    games = play_mixed_games(dict.fromkeys(BOTS, 1500.0), 450, np.random.default_rng(5))
    for r in results_of(games, "t2"):
        writer.write_result(r)
    brokers = [store.open(), store.open()]
    start = threading.Barrier(2)

    def apply(b: Broker) -> int:
        start.wait(10)
        return b.apply_mixed(pool)

    with ThreadPoolExecutor(2) as ex:
        rated = list(ex.map(apply, brokers))
    assert sum(rated) == 450 and writer.mixed_pending(pool) == 0
    states = writer.mixed_ratings(pool)
    assert sum(s.games for s in states.values()) == 450 * 4
    expected = sequential(games)
    assert all(s.mu == pytest.approx(expected.mu(b)) for b, s in states.items())


def test_two_processes_rating_one_pool_rate_each_game_once(store: Store) -> None:
    writer = store.open()
    writer.put_tournament(spec("p2"))
    pool = tournament_pool("p2")
    games = play_mixed_games(dict.fromkeys(BOTS, 1500.0), 450, np.random.default_rng(6))
    for r in results_of(games, "p2"):
        writer.write_result(r)
    ctx = multiprocessing.get_context("spawn")
    start, out = ctx.Barrier(2), ctx.Queue()
    workers = [ctx.Process(target=procs.apply_mixed, args=(store.spec(), pool, start, out)) for _ in range(2)]
    for w in workers:
        w.start()
    rated = [out.get(timeout=60) for _ in workers]
    for w in workers:
        w.join(30)
    assert sum(rated) == 450 and writer.mixed_pending(pool) == 0
    assert sum(s.games for s in writer.mixed_ratings(pool).values()) == 450 * 4
    expected = sequential(games)
    assert all(s.mu == pytest.approx(expected.mu(b)) for b, s in writer.mixed_ratings(pool).items())


def test_a_game_written_while_a_step_rates_is_rated_by_the_next_step(broker: Broker) -> None:
    broker.put_tournament(spec("w1"))
    pool = tournament_pool("w1")
    broker.write_result(mixed("w1", 0, ("ann", "bob", "cat", "dan"), winner=0))
    broker.apply_mixed(pool)
    broker.write_result(mixed("w1", 1, ("eve", "bob", "fay", "dan"), winner=0))  # the node dies here
    board = Rankings(broker, ttl=0).leaderboard(pool, "openskill")  # any reader rates it
    assert board.total == 6 and broker.mixed_pending(pool) == 0
    assert {e.bot: e.games for e in board.entries}["bob"] == 2


def test_a_strong_bot_with_random_partners_tops_the_openskill_board(broker: Broker) -> None:
    strengths = {"strong": 1800.0, "b1": 1500.0, "b2": 1500.0, "b3": 1500.0, "b4": 1500.0, "b5": 1500.0,
                 "weak": 1200.0}
    broker.put_tournament(TournamentSpec("lg", "partners", tuple(strengths), deals=1))
    rng = np.random.default_rng(11)
    games = play_mixed_games(strengths, 300, rng)
    for r in results_of(games, "lg"):
        broker.write_result(r)
    pool = tournament_pool("lg")
    broker.apply_mixed(pool)
    board = mixed_leaderboard(broker.mixed_ratings(pool), pool=pool)
    order = [e.bot for e in board.entries]
    assert order[0] == "strong" and order[-1] == "weak"
    top = board.entries[0]
    assert top.low is not None and top.high is not None and top.low < top.rating < top.high
    assert top.los_next is not None and top.los_next > 0.5
