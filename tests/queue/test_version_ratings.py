"""A rating per version in the store: one suite, run against both backends.

A result whose bot played as one of its versions (the record says which, seat by seat) counts, in
the same atomic step that writes it, in the pool's version tables as well as in its bot counts:
exactly once, however many nodes write it; a mirror pair or a quartet for the version that played
all of it; a pool keeping the games of at most 16 versions of a bot, the oldest folded into the
bot's name. Both stores follow the pure rule of :func:`arena.ratings.versions.add_game`.
"""

from __future__ import annotations

import dataclasses
import random
import threading
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Literal

from arena.engine import Ruleset
from arena.queue.broker import Broker
from arena.ratings import PairCount, add_game, tournament_pool
from arena.ratings.versions import MAX_POOL_VERSIONS, player_of
from arena.ratings.versions import add_game as add_version_game
from arena.tournament import MatchJob, MatchResult, Tournament, TournamentSpec
from tests.factories import result_of_job

POOL = tournament_pool("t1")


def job(n: int, team0: str = "alpha", team1: str = "beta", tournament: str = "t1") -> MatchJob:
    return MatchJob(match_id=f"{tournament}-m{n}", tournament_id=tournament, team0=team0, team1=team1,
                    ruleset="classic", seed=f"seed-{n}")


def played(result: MatchResult, versions: Mapping[str, str]) -> MatchResult:
    """``result`` with each seat's bot at its version in ``versions`` (a bot left out says none)."""
    record = result.record
    bots = tuple(dataclasses.replace(b, version=versions.get(b.name, "")) for b in record.bots)
    return dataclasses.replace(result, record=dataclasses.replace(record, bots=bots))


def won(j: MatchJob, winner: int | None, versions: Mapping[str, str]) -> MatchResult:
    totals = (1001, 640) if winner == 0 else (640, 1001) if winner == 1 else (820, 820)
    return played(result_of_job(j, totals, winner), versions)


def test_a_game_of_a_version_counts_for_that_version_once_and_for_its_bot(broker: Broker) -> None:
    first = won(job(0), 0, {"alpha": "1"})
    assert broker.write_result(first)
    assert not broker.write_result(won(job(0), 1, {"alpha": "2"}))  # a replay that went otherwise
    assert broker.write_result(won(job(1, "beta", "alpha"), None, {"alpha": "1", "beta": "7"}))
    assert broker.pair_counts(POOL) == {("alpha", "beta"): PairCount(1, 1, 0)}  # the bots', as ever
    counts = broker.version_counts(POOL)
    assert counts.games == {"alpha@1": {"beta": PairCount(1, 0, 0), "beta@7": PairCount(0, 1, 0)},
                            "beta@7": {"alpha@1": PairCount(0, 1, 0)}}
    assert counts.order == {"alpha": ("1",), "beta": ("7",)}
    # no version said: nothing in the version tables
    assert broker.write_result(won(job(2, "gamma", "delta"), 0, {}))
    assert "gamma" not in broker.version_counts(POOL).order


def test_racing_writers_count_a_versioned_game_once(broker: Broker) -> None:
    start = threading.Barrier(8)

    def write(i: int) -> bool:
        start.wait()
        return broker.write_result(won(job(0), i % 2, {"alpha": "3"}))

    with ThreadPoolExecutor(8) as pool:
        assert list(pool.map(write, range(8))).count(True) == 1
    assert sum(c.games for c in broker.version_counts(POOL).games["alpha@3"].values()) == 1


def test_the_stores_count_as_the_pure_rule_folding_past_sixteen_versions(broker: Broker) -> None:
    rng = random.Random(7)
    bots: dict[tuple[str, str], PairCount] = {}
    games: dict[str, dict[str, PairCount]] = {}
    order: dict[str, tuple[str, ...]] = {}
    version = {"alpha": 0, "beta": 0, "gamma": 0}
    for n in range(200):
        a, b = rng.sample(sorted(version), 2)
        if rng.random() < 0.1:  # a new version promoted now and then
            version[a] += 1
        if n % 8 == 7:  # alpha's often: past 16 of them
            version["alpha"] += 1
        said = {bot: str(v) for bot, v in version.items() if v or bot != "gamma"}  # gamma says none at first
        winner = rng.choice([0, 1, None])
        broker.write_result(won(job(n, a, b), winner, said))
        score = 1.0 if winner == 0 else 0.0 if winner == 1 else 0.5
        add_game(bots, a, b, score)
        players = (player_of(a, said.get(a, "")), player_of(b, said.get(b, "")))
        add_version_game(games, order, a, b, score, players)
    assert len(order["alpha"]) == MAX_POOL_VERSIONS  # folded
    counts = broker.version_counts(POOL)
    assert broker.pair_counts(POOL) == bots
    assert {p: dict(row) for p, row in counts.games.items()} == {p: row for p, row in games.items() if row}
    assert counts.order == order


def spec(tid: str, duplicate: Literal["mirror", "field"], bots: tuple[str, ...]) -> TournamentSpec:
    return TournamentSpec(tid, "round-robin", bots, ruleset=Ruleset.from_spec("coinche"), deals=2,
                          duplicate=duplicate)


def test_a_mirror_pair_counts_for_the_versions_that_played_both_legs(broker: Broker) -> None:
    s = spec("mirror", "mirror", ("alpha", "beta"))
    assert broker.put_tournament(s)
    legs = [j for p in Tournament(s).stages([])[0].pairings for j in p.jobs]
    assert len(legs) == 2
    broker.write_result(won(legs[0], 0, {"alpha": "1", "beta": "2"}))
    assert not broker.version_counts("coinche")  # one leg: nothing yet
    broker.write_result(won(legs[1], None, {"alpha": "1", "beta": "3"}))  # beta promoted between the legs
    counts = broker.version_counts("coinche")
    # alpha's version played both legs; beta's did not: the pair's game is beta's name's
    assert counts.games == {"alpha@1": {"beta": PairCount(1, 0, 0)}}
    assert broker.pair_counts("coinche") == {("alpha", "beta"): PairCount(1, 0, 0)}


def test_a_quartet_counts_for_the_versions_that_played_both_their_tables(broker: Broker) -> None:
    s = spec("field", "field", ("ann", "bob", "cat", "dan"))
    assert broker.put_tournament(s)
    [quartet] = [p.jobs for p in Tournament(s).stages([])[0].pairings][:1]
    for k, j in enumerate(quartet):
        # ann and bob said the same version at both their tables; cat changed between its two
        said = {"ann": "1", "bob": "4", "cat": "5" if k < 2 else "6"}
        broker.write_result(won(j, 0, said))
    counts = broker.version_counts("coinche")
    players = {p for p in counts.games} | {q for row in counts.games.values() for q in row}
    assert {"ann@1", "bob@4"} <= players
    assert not any(p.startswith("cat@") for p in players)
