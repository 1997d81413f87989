"""Ratings per pool, kept by the store with each result: one suite, run against both backends.

A result counts in its tournament's own pool and, when the tournament is
rated, in its preset's; the Elo, the pair counts and the history points move
in the same atomic step that writes the result, so a replay counts nothing. A
duplicate pair counts as one game, when its second leg is written, whichever
it is and whichever node writes it.
"""

from __future__ import annotations

import multiprocessing
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from arena.engine import Ruleset
from arena.queue.broker import Broker
from arena.ratings import PairCount, tournament_pool
from arena.tournament import MatchJob, MatchResult, TournamentSpec
from tests.factories import result_of_job, tournament_spec
from tests.queue import procs
from tests.queue.conftest import Store

WON = (1001, 640)


def classic(tid: str, **fields: Any) -> TournamentSpec:
    return tournament_spec(tid, **fields)


def coinche(tid: str, **fields: Any) -> TournamentSpec:
    return tournament_spec(tid, ruleset=Ruleset.from_spec("coinche"), **fields)


def games_of(broker: Broker, pool: str) -> dict[str, int]:
    return {bot: games for bot, (_, games) in broker.pool_ratings(pool).items()}


def game(tid: str, n: int, team0: str = "alpha", team1: str = "beta", winner: int | None = 0,
         ruleset: str = "classic") -> MatchResult:
    totals = WON if winner == 0 else WON[::-1] if winner == 1 else (820, 820)
    return result_of_job(MatchJob(f"{tid}-r1-{n}", tid, team0, team1, ruleset, f"s{n}"), totals, winner)


def legs(tid: str, n: int, a: str, b: str, leg0: tuple[int, int], leg1: tuple[int, int],
         reasons: tuple[str, str] = ("finished", "finished")) -> tuple[MatchResult, MatchResult]:
    """The two legs of pair ``n``: ``a`` is team 0 of leg 0 and team 1 of leg 1; the totals are
    (team 0, team 1) of each leg, its winner the higher (a forfeit's winner the team at 1000 or more)."""
    out = []
    for leg, (team0, team1), totals, reason in ((0, (a, b), leg0, reasons[0]), (1, (b, a), leg1, reasons[1])):
        winner = 0 if totals[0] > totals[1] else 1 if totals[1] > totals[0] else None
        job = MatchJob(f"{tid}-r1-{n}-leg{leg}", tid, team0, team1, "coinche", f"s{n}", deals=4)
        out.append(result_of_job(job, totals, winner, reason=reason))
    return out[0], out[1]


def snapshot(broker: Broker) -> object:
    """Everything the ratings show, to compare before and after."""
    pools = broker.pools()
    return (pools, {p: (broker.pool_ratings(p), broker.pair_counts(p),
                        {b: broker.rating_history(p, b) for b in broker.pool_ratings(p)}) for p in pools})


# ---------------------------------------------------------------- pools


def test_a_coinche_result_never_moves_a_classic_rating(broker: Broker) -> None:
    broker.put_tournament(classic("c1"))
    broker.put_tournament(coinche("k1"))
    broker.write_result(game("c1", 0, winner=0))
    before = broker.pool_ratings("classic")
    assert before == {"alpha": (1508.0, 1), "beta": (1492.0, 1)}
    broker.write_result(game("k1", 0, winner=1, ruleset="coinche"))
    assert broker.pool_ratings("classic") == before
    assert broker.pool_ratings("coinche") == {"alpha": (1492.0, 1), "beta": (1508.0, 1)}
    assert broker.pool_ratings(tournament_pool("k1")) == {"alpha": (1492.0, 1), "beta": (1508.0, 1)}
    assert broker.pools() == ["classic", "coinche", "tournament:c1", "tournament:k1"]


def test_an_unrated_tournament_counts_in_its_own_pool_only(broker: Broker) -> None:
    broker.put_tournament(classic("u1", unrated_reason="its seed was chosen by a user"))
    broker.write_result(game("u1", 0))
    assert broker.pools() == ["tournament:u1"]
    assert broker.pool_ratings("classic") == {}
    assert broker.pair_counts("classic") == {}
    assert broker.pool_ratings("tournament:u1") == {"alpha": (1508.0, 1), "beta": (1492.0, 1)}


def test_a_result_of_a_tournament_not_stored_counts_in_its_own_pool_only(broker: Broker) -> None:
    broker.write_result(game("adhoc", 0))
    assert broker.pools() == ["tournament:adhoc"]


def test_pair_counts_are_from_the_first_bot_by_name(broker: Broker) -> None:
    broker.put_tournament(classic("c1"))
    broker.write_result(game("c1", 0, "zeta", "alpha", winner=0))  # zeta wins, at team 0
    broker.write_result(game("c1", 1, "alpha", "zeta", winner=None))
    broker.write_result(game("c1", 2, "beta", "alpha", winner=1))  # alpha wins, at team 1
    assert broker.pair_counts("classic") == {("alpha", "zeta"): PairCount(0, 1, 1),
                                             ("alpha", "beta"): PairCount(1, 0, 0)}
    assert broker.pair_counts("nope") == {}


def test_a_result_written_twice_counts_once(broker: Broker) -> None:
    broker.put_tournament(classic("c1"))
    broker.history_every = 1
    first = game("c1", 0, winner=0)
    assert broker.write_result(first)
    before = snapshot(broker)
    assert not broker.write_result(game("c1", 0, winner=1))  # a replay that went the other way
    assert snapshot(broker) == before
    assert broker.pair_counts("classic") == {("alpha", "beta"): PairCount(1, 0, 0)}


def test_a_mirror_match_counts_a_game_and_keeps_the_rating(broker: Broker) -> None:
    broker.put_tournament(classic("c1"))
    broker.put_tournament(coinche("d1", duplicate="mirror", deals=4))
    broker.write_result(game("c1", 0, "alpha", "alpha"))
    for r in legs("d1", 0, "alpha", "alpha", (900, 700), (600, 500)):
        broker.write_result(r)
    assert broker.pool_ratings("classic") == broker.pool_ratings("coinche") == {"alpha": (1500.0, 1)}
    assert broker.pair_counts("classic") == broker.pair_counts("coinche") == {}


# ---------------------------------------------------------------- duplicate pairs


@pytest.mark.parametrize("order", ["leg0 first", "leg1 first"])
def test_a_duplicate_pair_is_one_game_won_on_the_total_of_both_legs(broker: Broker, order: str) -> None:
    broker.put_tournament(coinche("d1", duplicate="mirror", deals=4))
    # zeta (A) wins leg 0 by 200 and loses leg 1 by 50: 1700 to 1550 over the pair, zeta wins it,
    # though each side won a leg
    leg0, leg1 = legs("d1", 0, "zeta", "alpha", (900, 700), (850, 800))
    first, second = (leg0, leg1) if order == "leg0 first" else (leg1, leg0)
    assert broker.write_result(first)
    assert broker.pools() == []  # nothing counted until the other leg
    assert broker.pool_ratings("coinche") == {}
    assert broker.write_result(first) is False  # a replay of the first leg stores it once
    assert broker.write_result(second)
    assert broker.write_result(second) is False
    for pool in ("coinche", "tournament:d1"):
        assert broker.pool_ratings(pool) == {"zeta": (1508.0, 1), "alpha": (1492.0, 1)}
        assert broker.pair_counts(pool) == {("alpha", "zeta"): PairCount(0, 0, 1)}
    assert broker.pools() == ["coinche", "tournament:d1"]


def test_a_drawn_duplicate_pair_is_a_draw(broker: Broker) -> None:
    broker.put_tournament(coinche("d1", duplicate="mirror", deals=4))
    for r in legs("d1", 0, "alpha", "beta", (900, 700), (900, 700)):  # the same deals, the same points
        broker.write_result(r)
    assert broker.pair_counts("coinche") == {("alpha", "beta"): PairCount(0, 1, 0)}
    assert broker.pool_ratings("coinche") == {"alpha": (1500.0, 1), "beta": (1500.0, 1)}


def test_a_forfeited_leg_decides_the_pair_on_the_match_results(broker: Broker) -> None:
    broker.put_tournament(coinche("d1", duplicate="mirror", deals=4))
    # beta forfeits leg 1 early at 0-20 down (alpha wins it); alpha's 600-point loss of leg 0
    # would win beta the pair on points, but a forfeit's points compare nothing: one leg each, a draw
    for r in legs("d1", 0, "alpha", "beta", (300, 900), (0, 20), reasons=("finished", "forfeit")):
        broker.write_result(r)
    assert broker.pair_counts("coinche") == {("alpha", "beta"): PairCount(0, 1, 0)}


def test_duplicate_legs_from_racing_threads_count_each_pair_once(broker: Broker) -> None:
    broker.put_tournament(coinche("d1", duplicate="mirror", deals=4))
    pairs = [legs("d1", n, "alpha", "beta", (900, 700), (800, 750)) for n in range(20)]  # alpha wins each
    start = threading.Barrier(2)

    def write(leg: int) -> int:
        start.wait()
        return sum(broker.write_result(p[leg]) for p in pairs)

    with ThreadPoolExecutor(2) as pool:
        assert sum(pool.map(write, [0, 1])) == 40
    for name in ("coinche", "tournament:d1"):
        assert broker.pair_counts(name) == {("alpha", "beta"): PairCount(20, 0, 0)}
        assert games_of(broker, name) == {"alpha": 20, "beta": 20}


@pytest.mark.slow
def test_duplicate_legs_from_racing_processes_count_each_pair_once(store: Store) -> None:
    broker = store.open()  # creates the database or the consumer group before the race
    broker.put_tournament(coinche("d1", duplicate="mirror", deals=4))
    n = 200
    pairs = [legs("d1", i, "alpha", "beta", (900, 700), (800, 750)) for i in range(n)]  # alpha wins each
    ctx = multiprocessing.get_context("spawn")
    start, out = ctx.Barrier(4), ctx.Queue()
    # two processes write every leg 0, two every leg 1 (one of each pair in reverse order), all at once
    batches = [[p[0] for p in pairs], [p[0] for p in reversed(pairs)],
               [p[1] for p in pairs], [p[1] for p in reversed(pairs)]]
    workers = [ctx.Process(target=procs.write_all, args=(store.spec(), b, start, out)) for b in batches]
    for w in workers:
        w.start()
    try:
        written = [out.get(timeout=120) for _ in workers]
    finally:
        for w in workers:
            w.join(30)
    assert [w.exitcode for w in workers] == [0] * 4
    assert sum(written) == 2 * n
    for name in ("coinche", "tournament:d1"):
        assert broker.pair_counts(name) == {("alpha", "beta"): PairCount(n, 0, 0)}
        assert games_of(broker, name) == {"alpha": n, "beta": n}


# ---------------------------------------------------------------- history


def test_history_has_a_point_every_n_games_and_the_latest(broker: Broker) -> None:
    assert broker.history_every == 10
    broker.put_tournament(classic("c1"))
    seen: dict[int, float] = {}
    for n in range(25):
        broker.write_result(game("c1", n, winner=(n % 3 and 0) or 1))
        seen[n + 1] = broker.pool_ratings("classic")["alpha"][0]
    assert broker.rating_history("classic", "alpha") == [(10, seen[10]), (20, seen[20]), (25, seen[25])]
    assert broker.rating_history("classic", "nobody") == []
    assert broker.rating_history("nowhere", "alpha") == []


def test_history_keeps_the_latest_points_only(broker: Broker) -> None:
    broker.history_every, broker.history_max = 2, 3
    broker.put_tournament(classic("c1"))
    seen: dict[int, float] = {}
    for n in range(10):
        broker.write_result(game("c1", n, winner=n % 2))
        seen[n + 1] = broker.pool_ratings("classic")["beta"][0]
    assert broker.rating_history("classic", "beta") == [(g, seen[g]) for g in (6, 8, 10)]
    broker.write_result(game("c1", 10))
    assert broker.rating_history("classic", "beta")[-1][0] == 11


# ---------------------------------------------------------------- restarts


def test_ratings_survive_a_restart_and_a_pair_straddles_it(store: Store) -> None:
    broker = store.open()
    broker.history_every = 1
    broker.put_tournament(classic("c1"))
    broker.put_tournament(coinche("d1", duplicate="mirror", deals=4))
    broker.write_result(game("c1", 0))
    leg0, leg1 = legs("d1", 0, "alpha", "beta", (900, 700), (800, 750))
    broker.write_result(leg0)
    before = snapshot(broker)
    broker.close()

    again = store.open()
    assert snapshot(again) == before
    assert again.write_result(game("c1", 0)) is False
    assert again.write_result(leg0) is False
    assert again.write_result(leg1)  # the first leg was kept across the restart
    assert again.pair_counts("coinche") == {("alpha", "beta"): PairCount(1, 0, 0)}
    assert again.rating_history("classic", "alpha") == [(1, 1508.0)]
