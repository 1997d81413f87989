"""Field duplicate quartets in the ratings: one suite, run against both backends.

A quartet's four tables count nothing until the last is written; the writer of the fourth counts
the quartet's two games (one when its last two sides only fill the tables), exactly once, in the
same atomic step that writes the result: whichever order the tables come in, however many threads
or processes write them at once, and however often a table is written again.
"""

from __future__ import annotations

import itertools
import multiprocessing
import random
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import pytest

from arena.engine import Ruleset
from arena.queue.broker import Broker
from arena.ratings import PairCount
from arena.records import ResultReason
from arena.tournament import MatchJob, MatchResult, Tournament, TournamentSpec
from tests.factories import result_of_job
from tests.queue import procs
from tests.queue.conftest import Store

BOTS = ("ann", "bob", "cat", "dan")
#: how strong each bot is: a table's team 0 makes 100 + 10 x (its strength - the other's)
STRENGTH = {"ann": 4, "bob": 3, "cat": 2, "dan": 1}


def field_spec(tid: str, bots: Sequence[str] = BOTS, fmt: str = "round-robin",
               rounds: int = 1) -> TournamentSpec:
    return TournamentSpec(tid, fmt, tuple(bots), ruleset=Ruleset.from_spec("coinche"), deals=2,  # type: ignore[arg-type]
                          duplicate="field", rounds=rounds)


def jobs_of(spec: TournamentSpec) -> list[tuple[MatchJob, ...]]:
    """Each quartet's four jobs, in schedule order."""
    return [p.jobs for p in Tournament(spec).stages([])[0].pairings]


def result(job: MatchJob, forfeit: bool = False) -> MatchResult:
    strength = {b: STRENGTH.get(b, 0) for b in job.seat_bots}
    diff = 10 * (strength[job.seat_bots[0]] - strength[job.seat_bots[1]])
    totals = (100 + diff, 100)
    winner = 0 if diff > 0 else 1 if diff < 0 else None
    if forfeit:  # team 0 forfeits at once: no points, team 1 wins
        totals, winner = (0, 0), 1
    return result_of_job(job, totals, winner, reason=ResultReason.FORFEIT if forfeit else "finished")


def games_of(broker: Broker, pool: str) -> dict[str, int]:
    return {bot: games for bot, (_, games) in broker.pool_ratings(pool).items()}


def every_pair_won_by_the_stronger(times: int) -> dict[tuple[str, str], PairCount]:
    return {(a, b): PairCount(times, 0, 0) if STRENGTH[a] > STRENGTH[b] else PairCount(0, 0, times)
            for a, b in itertools.combinations(sorted(BOTS), 2)}


@pytest.mark.parametrize("order", list(itertools.permutations(range(4)))[::5])
def test_a_quartet_counts_its_two_games_when_its_fourth_table_is_written(broker: Broker,
                                                                         order: tuple[int, ...]) -> None:
    broker.put_tournament(field_spec("q1"))
    tables = jobs_of(field_spec("q1"))[0]  # ann, bob (team 0) and dan, cat (team 1)
    for k in order[:3]:
        assert broker.write_result(result(tables[k]))
        assert broker.pair_counts("coinche") == {} and games_of(broker, "coinche") == {}
    assert broker.write_result(result(tables[order[3]]))
    compared = {frozenset(pair) for pair in Tournament(field_spec("q1")).stages([])[0].pairings[0].compared}
    expected = {k: v for k, v in every_pair_won_by_the_stronger(1).items() if frozenset(k) in compared}
    for pool in ("coinche", "tournament:q1"):
        assert broker.pair_counts(pool) == expected
        assert games_of(broker, pool) == dict.fromkeys(BOTS, 1)
    for job in tables:  # written again (a replayed job): nothing more
        assert broker.write_result(result(job)) is False
    assert broker.pair_counts("coinche") == expected


def test_a_whole_field_round_robin_counts_each_pair_once(broker: Broker) -> None:
    broker.put_tournament(field_spec("q2"))
    jobs = [j for q in jobs_of(field_spec("q2")) for j in q]
    random.Random(3).shuffle(jobs)
    assert all(broker.write_result(result(j)) for j in jobs)
    assert broker.pair_counts("coinche") == every_pair_won_by_the_stronger(1)
    assert games_of(broker, "coinche") == dict.fromkeys(BOTS, 3)


def test_a_filled_quartet_counts_its_one_game(broker: Broker) -> None:
    six = ("ann", "bob", "cat", "dan", "eve", "fay")
    broker.put_tournament(field_spec("q3", six))
    filled = [q for q in jobs_of(field_spec("q3", six)) if q[0].match_id.endswith("-f0")]
    assert len(filled) == 1
    for job in filled[0]:
        broker.write_result(result(job))
    assert sum(c.games for c in broker.pair_counts("coinche").values()) == 1
    assert sum(games_of(broker, "coinche").values()) == 2


def test_a_forfeit_at_one_table_decides_both_games_by_match_results(broker: Broker) -> None:
    broker.put_tournament(field_spec("q4"))
    tables = jobs_of(field_spec("q4"))[0]
    p, q, r, s = tables[0].team0, tables[1].team0, tables[0].team1, tables[1].team1
    for k, job in enumerate(tables):
        broker.write_result(result(job, forfeit=k == 0))  # P forfeits table 0 to R
    counts = broker.pair_counts("coinche")
    # P lost table 0 and won table 2 (if stronger than S) ...: the games follow the match results
    wins = {name: 0.0 for name in (p, q, r, s)}
    for k, job in enumerate(tables):
        s0 = result(job, forfeit=k == 0).score0()
        wins[job.team0] += s0
        wins[job.team1] += 1 - s0
    for a, b in ((p, q), (r, s)):
        key = (min(a, b), max(a, b))
        first = wins[key[0]] - wins[key[1]]
        assert counts[key] == PairCount(int(first > 0), int(first == 0), int(first < 0))


def test_a_partners_quartet_queues_its_two_mixed_games_for_openskill(broker: Broker) -> None:
    eight = tuple(f"p{i}" for i in range(8))
    spec = field_spec("q5", eight, fmt="partners", rounds=1)
    broker.put_tournament(spec)
    tables = jobs_of(spec)[0]
    for job in tables[:3]:
        broker.write_result(result(job))
        assert broker.mixed_pending("coinche") == 0
    broker.write_result(result(tables[3]))
    assert broker.mixed_pending("coinche") == 2 and broker.pair_counts("coinche") == {}
    assert broker.apply_mixed("coinche") == 2
    assert set(broker.mixed_ratings("coinche")) == set(eight)


@pytest.mark.reliability
def test_quartet_tables_from_racing_threads_count_each_game_once(broker: Broker) -> None:
    spec = field_spec("q6", rounds=8)  # 8 repeats of 3 quartets: 24 quartets, 48 games
    broker.put_tournament(spec)
    quartets = jobs_of(spec)
    start = threading.Barrier(4)

    def write(k: int) -> int:  # one thread a table: the four tables of each quartet race
        start.wait()
        order = quartets if k % 2 == 0 else quartets[::-1]
        return sum(broker.write_result(result(q[k])) for q in order)

    with ThreadPoolExecutor(4) as pool:
        assert sum(pool.map(write, range(4))) == 4 * len(quartets)
    for name in ("coinche", "tournament:q6"):
        assert broker.pair_counts(name) == every_pair_won_by_the_stronger(8)
        assert games_of(broker, name) == dict.fromkeys(BOTS, 24)


@pytest.mark.slow
@pytest.mark.reliability
def test_quartet_tables_from_racing_processes_count_each_game_once(store: Store) -> None:
    broker = store.open()  # creates the database or the consumer group before the race
    spec = field_spec("q7", rounds=40)  # 120 quartets, 240 games
    broker.put_tournament(spec)
    quartets = jobs_of(spec)
    ctx = multiprocessing.get_context("spawn")
    start, out = ctx.Barrier(4), ctx.Queue()
    # each process writes one table of every quartet, two in order and two in reverse, all at once
    batches = [[result(q[k]) for q in (quartets if k % 2 == 0 else quartets[::-1])] for k in range(4)]
    workers = [ctx.Process(target=procs.write_all, args=(store.spec(), b, start, out)) for b in batches]
    for w in workers:
        w.start()
    try:
        written = [out.get(timeout=180) for _ in workers]
    finally:
        for w in workers:
            w.join(30)
    assert [w.exitcode for w in workers] == [0] * 4
    assert sum(written) == 4 * len(quartets)
    for name in ("coinche", "tournament:q7"):
        assert broker.pair_counts(name) == every_pair_won_by_the_stronger(40)
        assert games_of(broker, name) == dict.fromkeys(BOTS, 120)
