"""Field duplicate: quartets in which no bot ever sees a deal from two seats, each pair compared once.

The schedule's properties hold for any number of bots, any format that plays field duplicate
(round-robin, Swiss, partners) and any number of repeats or rounds; mirror duplicate is the
counterexample (both legs seen by both bots). Scoring follows docs/ratings.md: a side's duplicate
difference against the side that held the same cards, a forfeit deciding by match scores.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Sequence
from itertools import combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.records import ResultReason
from arena.tournament import MatchJob, MatchResult, Tournament, TournamentSpec
from arena.tournament.pairing import circle_rounds
from arena.tournament.quartet import compare, round_robin_quartets
from arena.tournament.summary import ResultSummary
from arena.tournament.tables import (
    is_sealed,
    quartet_table,
    sealed_of,
    seed_label,
    shared_deals,
    tournament_of,
)
from tests.tournament.helpers import run, synthetic


def bots_of(n: int) -> tuple[str, ...]:
    return tuple(f"b{i}" for i in range(n))


def field(fmt: str, n: int, rounds: int | None = None, **extra: object) -> Tournament:
    return Tournament(TournamentSpec(tournament_id="f", format=fmt, bots=bots_of(n), deals=2,  # type: ignore[arg-type]
                                     duplicate="field", rounds=rounds, **extra))  # type: ignore[arg-type]


def played(t: Tournament, seed: int = 0) -> list[MatchJob]:
    """Every job the tournament schedules, driven to its end on random match results."""
    rng = random.Random(seed)
    jobs: list[MatchJob] = []

    def decide(job: MatchJob) -> MatchResult:
        jobs.append(job)
        return synthetic(job, rng.choice([0, 1, None]))

    run(t, decide)
    return jobs


def seen(jobs: Sequence[MatchJob]) -> Counter[tuple[str, str]]:
    """How many matches each bot played on each seed (a bot at two seats of one match counts once)."""
    return Counter((bot, job.seed) for job in jobs for bot in set(job.seat_bots))


formats = st.one_of(
    st.tuples(st.just("round-robin"), st.integers(4, 11), st.integers(1, 3)),
    st.tuples(st.just("swiss"), st.integers(4, 11), st.integers(1, 4)),
    st.tuples(st.just("partners"), st.integers(8, 14), st.integers(1, 4)),
)


# ------------------------------------------------------------------ what no bot may see
@pytest.mark.security
@given(formats, st.integers(0, 3))
@settings(max_examples=60, deadline=None)
def test_no_bot_ever_plays_two_matches_on_one_seed_in_field_duplicate(
    case: tuple[str, int, int], seed: int,
) -> None:
    fmt, n, rounds = case
    jobs = played(field(fmt, n, rounds), seed)
    assert jobs
    twice = [k for k, count in seen(jobs).items() if count > 1]
    assert twice == []
    by_seed: dict[str, set[str]] = defaultdict(set)
    for job in jobs:
        by_seed[job.seed].add(job.match_id)
    assert all(len(tables) == 2 for tables in by_seed.values())  # each deal played at two tables


@pytest.mark.security
@given(st.sampled_from(["round-robin", "swiss"]), st.integers(2, 9))
@settings(max_examples=20, deadline=None)
def test_in_mirror_duplicate_both_bots_see_both_legs(fmt: str, n: int) -> None:
    t = Tournament(TournamentSpec("m", fmt, bots_of(n), deals=2, duplicate="mirror"))  # type: ignore[arg-type]
    jobs = played(t)
    assert all(count == 2 for count in seen(jobs).values())
    assert t.spec.duplicate_note.startswith("mirror duplicate: both legs seen by both bots")


# ------------------------------------------------------------------ who is compared with whom
@given(st.integers(4, 12), st.integers(1, 3))
@settings(max_examples=30, deadline=None)
def test_a_field_round_robin_compares_every_pair_exactly_once_a_repeat(n: int, rounds: int) -> None:
    t = field("round-robin", n, rounds)
    pairings = t.stages([])[0].pairings
    for r in range(1, rounds + 1):
        compared = Counter(frozenset(pair) for p in pairings if p.round == r for pair in p.compared)
        assert compared == Counter(frozenset(pair) for pair in combinations(bots_of(n), 2))
    filled = sum(1 for p in pairings if not p.scored)
    assert filled == rounds * (n * (n - 1) // 2 % 2)  # only when the pairs are odd, one a repeat


@given(formats)
@settings(max_examples=40, deadline=None)
def test_each_compared_pair_held_the_same_cards_and_faced_the_same_opponents(
    case: tuple[str, int, int],
) -> None:
    fmt, n, rounds = case
    t = field(fmt, n, rounds)
    results, _ = run(t, lambda job: synthetic(job, 0))
    for stage in t.stages(results):
        for p in stage.pairings:
            check_quartet(p.jobs, p.side_names, p.compared)


def check_quartet(jobs: Sequence[MatchJob], names: Sequence[str], compared: Sequence[tuple[str, str]],
                  ) -> None:
    bots = {b for j in jobs for b in j.seat_bots}
    assert len(set(names)) == 4 and len(bots) == (8 if "+" in names[0] else 4)
    for x, y in compared:
        # x and y sat on the same team of the same seed, against the same two sides overall
        held = {name: {(j.seed, 0 if j.team0 == name else 1) for j in jobs if name in (j.team0, j.team1)}
                for name in (x, y)}
        assert held[x] == held[y] and len(held[x]) == 2
        faced = {name: sorted(j.team1 if j.team0 == name else j.team0
                              for j in jobs if name in (j.team0, j.team1)) for name in (x, y)}
        assert faced[x] == faced[y] and not {x, y} & set(faced[x])


def test_a_swiss_round_compares_its_pairs_and_never_repeats_one_when_avoidable() -> None:
    t = field("swiss", 8, 3)
    results, keys = run(t, lambda job: synthetic(job, 0 if job.match_id.endswith(("t0", "t2")) else 1))
    assert keys == ["f/round/1", "f/round/2", "f/round/3"]
    met = Counter(frozenset(pair) for s in t.stages(results) for p in s.pairings for pair in p.compared)
    assert set(met.values()) == {1}
    for s in t.stages(results):
        for p in s.pairings:
            check_quartet(p.jobs, p.side_names, p.compared)


def test_leftover_pairs_of_a_round_robin_meet_across_rounds_when_disjoint() -> None:
    quartets = round_robin_quartets(circle_rounds(bots_of(6)))  # 15 pairs: 7 quartets and one filled
    assert len(quartets) == 8 and [q[2] for q in quartets].count(False) == 1
    for (p, q), (r, s), _ in quartets:
        assert len({p, q, r, s}) == 4


# ------------------------------------------------------------------ ids, seeds, sealing
def test_a_quartets_tables_their_seeds_and_what_each_seals() -> None:
    t = field("round-robin", 4)
    first = t.stages([])[0].pairings[0]
    assert [j.match_id for j in first.jobs] == ["f-r1-0-t0", "f-r1-0-t1", "f-r1-0-t2", "f-r1-0-t3"]
    assert [seed_label("f", j.match_id) for j in first.jobs] == ["r1-0-s0", "r1-0-s0", "r1-0-s1", "r1-0-s1"]
    assert first.jobs[0].seed == first.jobs[1].seed != first.jobs[2].seed == first.jobs[3].seed
    assert quartet_table("f-r1-0-t3") == ("f-r1-0", 3, True)
    assert quartet_table("f-r1-7-f2") == ("f-r1-7", 2, False)
    assert shared_deals("f-r1-0-t3") == ("f-r1-0-t2", "f-r1-0-t3")
    assert shared_deals("f-r1-0-leg1") == ("f-r1-0-leg0", "f-r1-0-leg1")
    assert shared_deals("f-r1-0") == ("f-r1-0",)
    done = {"f-r1-0-t0", "f-r1-0-t2", "f-r1-0-t3"}
    assert is_sealed("f-r1-0-t0", done.__contains__)  # table 1 deals its cards and is not over
    assert not is_sealed("f-r1-0-t2", done.__contains__)
    assert not is_sealed("f-r1-0", done.__contains__)  # a single match's deals are its own
    # a whole list at once, in one question of which tables have a result
    asked: list[list[str]] = []

    def written(ids: list[str]) -> set[str]:
        asked.append(ids)
        return done & set(ids)

    listed = ["f-r1-0-t0", "f-r1-0-t1", "f-r1-0-t2", "f-r1-0-t3", "f-r1-0", "f-r2-1-leg0"]
    assert sealed_of(listed, written) == {"f-r1-0-t0", "f-r1-0-t1", "f-r2-1-leg0"}
    assert len(asked) == 1 and sorted(asked[0]) == sorted([*listed[:4], "f-r2-1-leg0", "f-r2-1-leg1"])
    assert sealed_of(["f-r1-0"], written) == set() and len(asked) == 1  # nothing to ask
    assert [tournament_of(m) for m in ("f-r1-0-t3", "x-r1-2-r3-4-leg1", "f-r1-0")] == ["f", "x-r1-2", None]


# ------------------------------------------------------------------ scoring
def summary(match_id: str, team0: str, team1: str, totals: tuple[int, int], diff: int,
            reason: str = "finished", winner: int | None = None) -> ResultSummary:
    if winner is None:
        winner = 0 if totals[0] > totals[1] else 1 if totals[1] > totals[0] else None
    return ResultSummary(match_id=match_id, tournament_id="g", team0=team0, team1=team1, totals=totals,
                         winner=winner, reason=ResultReason(reason), seed="s" + match_id[-1:], deals_played=2,
                         ruleset="coinche", deal_diff=diff)


def test_a_side_is_scored_against_the_side_that_held_the_same_cards() -> None:
    # P=ann Q=bob R=cat S=dan; ann's difference 300 - 100 + 250 - 200 = 250, bob's 90 + 30 = 120
    tables = [summary("x-t0", "ann", "cat", (300, 100), 200), summary("x-t1", "bob", "dan", (200, 110), 90),
              summary("x-t2", "ann", "dan", (250, 200), 50), summary("x-t3", "bob", "cat", (180, 150), 30)]
    assert compare(tables, 0, 1) == (1.0, 130, 550, 380, 0.5)
    # cat: -200 - 30; dan: -90 - 50: dan's is better by 90
    assert compare(tables, 2, 3)[:2] == (0.0, -90)


def test_a_forfeit_at_any_table_decides_both_games_by_match_scores() -> None:
    tables = [summary("x-t0", "ann", "cat", (0, 10), -900, "forfeit", 1),
              summary("x-t1", "bob", "dan", (200, 110), 90), summary("x-t2", "ann", "dan", (250, 200), 50),
              summary("x-t3", "bob", "cat", (100, 150), -50)]
    # ann won 1 of 2, bob 1 of 2: a draw, whatever the points; cat won 2, dan 0
    assert compare(tables, 0, 1)[0] == 0.5
    assert compare(tables, 2, 3)[0] == 1.0


def test_the_standings_of_a_small_field_round_robin() -> None:
    """Golden: four bots, one repeat, every table's deal difference made by hand (the stronger
    bot earlier in the alphabet), so each bot's wins and differences are known."""
    spec = TournamentSpec("g", "round-robin", ("ann", "bob", "cat", "dan"), deals=2, duplicate="field",
                          seed="g")
    t = Tournament(spec)
    strength = {"ann": 40, "bob": 30, "cat": 20, "dan": 10}
    results = []
    for job in t.stages([])[0].jobs:
        diff = strength[job.team0] - strength[job.team1]
        results.append(ResultSummary(
            match_id=job.match_id, tournament_id="g", team0=job.team0, team1=job.team1,
            totals=(100 + diff, 100), winner=0 if diff > 0 else 1, reason=ResultReason.FINISHED,
            seed=job.seed, deals_played=2, ruleset="classic", deal_diff=diff))
    assert t.is_finished(results)
    table = [(s.bot, s.rank, s.played, s.wins, s.draws, s.losses, s.score, s.duplicate_diff)
             for s in t.standings(results)]
    # each pair once: a bot's difference against the other is twice their strengths apart
    assert table == [
        ("ann", 1, 3, 3, 0, 0, 3.0, 120),
        ("bob", 2, 3, 2, 0, 1, 2.0, 40),
        ("cat", 3, 3, 1, 0, 2, 1.0, -40),
        ("dan", 4, 3, 0, 0, 3, 0.0, -120),
    ]
    assert len(t.games(results)) == 6


def _swiss_round_one(totals: dict[int, tuple[int, int]]) -> tuple[Tournament, list[ResultSummary]]:
    """A Swiss of eight bots in field duplicate, in the middle of round 1: the first quartet's four
    tables over (``totals`` by table, each table's deal difference its totals' difference), the
    second quartet's not begun."""
    spec = TournamentSpec("sw", "swiss", tuple(f"b{i}" for i in range(8)), deals=4, duplicate="field",
                          seed="sw", rounds=3)
    t = Tournament(spec)
    jobs = t.stages([])[0].jobs
    assert len(jobs) == 8  # two quartets
    results = [ResultSummary(
        match_id=job.match_id, tournament_id="sw", team0=job.team0, team1=job.team1, totals=totals[k],
        winner=0 if totals[k][0] > totals[k][1] else 1, reason=ResultReason.FINISHED, seed=job.seed,
        deals_played=4, ruleset="coinche", deal_diff=totals[k][0] - totals[k][1])
        for k, job in enumerate(jobs[:4])]
    return t, results


def test_a_side_that_lost_both_its_matches_wins_its_game_when_its_twin_lost_the_same_cards_by_more() -> None:
    """The case reported in the middle of a Swiss round 1: P lost its two tables 510-720 and 430-700
    (a difference of -480); Q, holding the same cards against the same two opponents, lost them 0-1720
    twice (-3440). Duplicate scoring compares P with Q, not with its opponents: P wins its game by
    2,960, which the standings show as its one win and +2960; Q has the loss and -2960. The four bots
    of the quartet still in play have no game yet."""
    t, results = _swiss_round_one({0: (510, 720), 2: (430, 700), 1: (0, 1720), 3: (0, 1720)})
    p, q, r, s = (results[0].team0, results[1].team0, results[0].team1, results[1].team1)
    rows = {st.bot: st for st in t.standings(results)}
    assert (rows[p].played, rows[p].wins, rows[p].losses, rows[p].duplicate_diff) == (1, 1, 0, 2960)
    assert (rows[q].played, rows[q].wins, rows[q].losses, rows[q].duplicate_diff) == (1, 0, 1, -2960)
    # R and S are compared the same way: R won 720-510 and 1720-0 (+1930), S 1720-0 and 700-430 (+1990)
    assert (rows[r].losses, rows[r].duplicate_diff, rows[s].wins, rows[s].duplicate_diff) == (1, -60, 1, 60)
    unplayed = set(rows) - {p, q, r, s}
    assert len(unplayed) == 4 and all(rows[b].played == 0 and rows[b].score == 0 for b in unplayed)
    # had Q lost the same cards by less (-200), P's -480 would have lost the game by 280
    t, results = _swiss_round_one({0: (510, 720), 2: (430, 700), 1: (600, 700), 3: (600, 700)})
    rows = {st.bot: st for st in t.standings(results)}
    assert (rows[p].wins, rows[p].losses, rows[p].duplicate_diff) == (0, 1, -280)
