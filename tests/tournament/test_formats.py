"""Round-robin, gauntlet and knockout schedules; ids, seeds, keys and idempotency."""

from __future__ import annotations

import dataclasses
import random
from collections import Counter
from itertools import combinations
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.engine.dealing import derive_seed
from arena.tournament import MatchJob, MatchResult, Tournament, TournamentError, TournamentSpec
from arena.tournament.pairing import bracket_seeds, circle_rounds, first_round
from tests.factories import result_of_job
from tests.tournament.helpers import ids, run, synthetic


def make(fmt: str, bots: list[str], **fields: Any) -> Tournament:
    return Tournament(TournamentSpec.from_dict(
        {"tournament_id": "t", "format": fmt, "bots": bots, **fields}
    ))


def bots_of(n: int) -> list[str]:
    return [f"b{i}" for i in range(n)]


def team0_wins(job: MatchJob) -> MatchResult:
    return synthetic(job, 0)


# ------------------------------------------------------------------ round-robin
@given(n=st.integers(2, 10), rounds=st.integers(1, 3), duplicate=st.booleans())
@settings(max_examples=40, deadline=None)
def test_round_robin_plays_every_pairing_in_both_seatings(n: int, rounds: int, duplicate: bool) -> None:
    extra = {"deals": 2, "duplicate": "mirror"} if duplicate else {}
    t = make("round-robin", bots_of(n), rounds=rounds, **extra)
    key, jobs = t.jobs_for([])
    assert key == "t/all"
    assert len(jobs) == n * (n - 1) * rounds  # one match per ordered pair and round
    seatings = Counter((j.team0, j.team1) for j in jobs)
    assert set(seatings) == {(a, b) for a in bots_of(n) for b in bots_of(n) if a != b}
    assert set(seatings.values()) == {rounds}
    assert len(set(ids(jobs))) == len(jobs)
    assert sorted({j.round for j in jobs}) == list(range(1, rounds + 1))


def test_the_circle_method_lists_each_bot_once_a_round() -> None:
    for n in range(2, 12):
        rounds = circle_rounds(bots_of(n))
        assert len(rounds) == n - 1 + n % 2
        pairs = [frozenset(p) for r in rounds for p in r]
        assert sorted(map(sorted, pairs)) == sorted(map(sorted, combinations(bots_of(n), 2)))
        for r in rounds:
            seen = [b for p in r for b in p]
            assert len(seen) == len(set(seen))


def test_a_round_robin_is_all_at_once_and_finished_when_every_result_is_in() -> None:
    t = make("round-robin", bots_of(4))
    _, jobs = t.jobs_for([])
    results = [team0_wins(j) for j in jobs]
    assert not t.is_finished(results[:-1])
    assert t.jobs_for(results[:-1]) == ("t/all", jobs)
    assert t.is_finished(results)
    assert t.jobs_for(results) == ("t/finished", [])
    table = t.standings(results)
    assert all(s.played == 6 and s.wins == 3 and s.losses == 3 for s in table)  # team 0 always won
    assert [s.rank for s in table] == [1, 1, 1, 1]


# ------------------------------------------------------------------ gauntlet
@given(n=st.integers(2, 10), duplicate=st.booleans(), which=st.integers(0, 9))
@settings(max_examples=30, deadline=None)
def test_a_gauntlet_plays_the_candidate_against_each_of_the_field(
    n: int, duplicate: bool, which: int,
) -> None:
    bots = bots_of(n)
    cand = bots[which % n]
    extra = {"deals": 2, "duplicate": "mirror"} if duplicate else {}
    t = make("gauntlet", bots, candidate=cand, **extra)
    key, jobs = t.jobs_for([])
    assert key == "t/all"
    assert len(jobs) == 2 * (n - 1)
    seatings = {(j.team0, j.team1) for j in jobs}
    field = [b for b in bots if b != cand]
    assert seatings == {(cand, o) for o in field} | {(o, cand) for o in field}


def test_gauntlet_standings_rank_the_candidate_with_the_field() -> None:
    t = make("gauntlet", ["new", "x", "y"], candidate="new")
    _, jobs = t.jobs_for([])
    results = [synthetic(j, 0 if j.team0 == "new" else 1, (100, 50) if j.team0 == "new" else (40, 90))
               for j in jobs]
    table = t.standings(results)
    assert table[0].bot == "new" and table[0].wins == 4 and table[0].score == 4.0
    assert table[0].points_for == 2 * 100 + 2 * 90 and table[0].points_against == 2 * 50 + 2 * 40
    assert {s.bot: s.rank for s in table} == {"new": 1, "x": 2, "y": 2}


# ------------------------------------------------------------------ ids, seeds, duplicate legs
SPECS: list[dict[str, Any]] = [
    {"format": "round-robin", "bots": bots_of(5), "rounds": 2},
    {"format": "gauntlet", "bots": bots_of(4), "candidate": "b2", "deals": 3, "duplicate": True},
    {"format": "swiss", "bots": bots_of(7), "deals": 3, "duplicate": True},
    {"format": "knockout", "bots": bots_of(6)},
    {"format": "sprt", "bots": ["new", "old"], "deals": 3, "sprt": {"batch_pairs": 5, "max_pairs": 40}},
]


@pytest.mark.parametrize("fields", SPECS, ids=[f["format"] for f in SPECS])
def test_same_spec_same_jobs_ids_and_seeds(fields: dict[str, Any]) -> None:
    def schedule(seed_rng: int) -> tuple[list[str], list[MatchJob]]:
        t = Tournament(TournamentSpec.from_dict({"tournament_id": "t", "seed": "s", **fields}))
        rng = random.Random(seed_rng)
        results, keys = run(t, lambda j: synthetic(j, rng.choice([0, 1, None])))
        return keys, [j for s in t.stages(results) for j in s.jobs]

    keys, jobs = schedule(1)
    keys2, jobs2 = schedule(1)
    assert keys == keys2 and jobs == jobs2
    for job in jobs:
        stem = job.match_id.removesuffix("-leg0").removesuffix("-leg1")
        assert stem.startswith("t-r")
        assert stem == f"t-r{job.round}-{job.tags['index']}"
        # the HMAC of the pairing's place under the tournament's secret (its spec's seed, "s")
        assert job.seed == derive_seed("s", f"r{job.round}-{job.tags['index']}")
        assert job.tournament_id == "t"
    assert len(set(ids(jobs))) == len(jobs)


@pytest.mark.parametrize("fields", SPECS, ids=[f["format"] for f in SPECS])
def test_keys_name_the_stage(fields: dict[str, Any]) -> None:
    t = Tournament(TournamentSpec.from_dict({"tournament_id": "t", **fields}))
    _, keys = run(t, team0_wins)
    expected = {"round-robin": "t/all", "gauntlet": "t/all", "swiss": "t/round/1",
                "knockout": "t/round/1", "sprt": "t/batch/1"}[fields["format"]]
    assert keys[0] == expected
    if fields["format"] in ("swiss", "knockout"):
        assert keys == [f"t/round/{r}" for r in range(1, len(keys) + 1)]


def test_duplicate_legs_share_the_seed_and_swap_the_bots() -> None:
    t = make("round-robin", bots_of(4), deals=6, duplicate="mirror", seed="x")
    _, jobs = t.jobs_for([])
    legs: dict[str, list[MatchJob]] = {}
    for j in jobs:
        legs.setdefault(j.tags["pair"], []).append(j)
    assert len(legs) == 6
    for pair, (leg0, leg1) in legs.items():
        assert (leg0.match_id, leg1.match_id) == (f"{pair}-leg0", f"{pair}-leg1")
        assert (leg0.tags["leg"], leg1.tags["leg"]) == (0, 1)
        assert leg0.seed == leg1.seed
        assert (leg1.team0, leg1.team1) == (leg0.team1, leg0.team0)
        assert leg0.deals == leg1.deals == 6 and leg0.target is None


def test_jobs_carry_the_ruleset_and_match_length() -> None:
    t = make("round-robin", ["a", "b"], ruleset={"preset": "coinche", "max_bid": 200}, target=2000)
    _, (job, _) = t.jobs_for([])
    assert job.ruleset == {"preset": "coinche", "max_bid": 200}
    assert job.target == 2000 and job.deals is None
    _, (job, _) = make("round-robin", ["a", "b"]).jobs_for([])
    assert job.ruleset == "classic" and job.target == 501


def test_a_result_counts_once_and_foreign_results_are_ignored() -> None:
    t = make("round-robin", bots_of(3))
    _, jobs = t.jobs_for([])
    results = [team0_wins(j) for j in jobs]
    again = [*results, *results, synthetic(jobs[0], 1)]  # the later copy of a written result is ignored
    other = result_of_job(MatchJob("u-r1-0", "u", "b0", "b1", "classic", "s"), (0, 9), 1)
    unknown = result_of_job(MatchJob("t-r9-0", "t", "b0", "b1", "classic", "s"), (0, 9), 1)
    assert t.standings([*again, other, unknown]) == t.standings(results)


def test_a_result_seating_other_bots_than_its_job_is_an_error() -> None:
    t = make("round-robin", bots_of(3))
    _, jobs = t.jobs_for([])
    j = jobs[0]
    bad = result_of_job(dataclasses.replace(j, team0=j.team1, team1=j.team0), (1, 0), 0)
    with pytest.raises(TournamentError, match=f"result {j.match_id} seats"):
        t.standings([bad])


# ------------------------------------------------------------------ knockout
def test_bracket_seeds_keep_the_top_seeds_apart() -> None:
    assert bracket_seeds(2) == [1, 2]
    assert bracket_seeds(4) == [1, 4, 2, 3]
    assert bracket_seeds(8) == [1, 8, 4, 5, 2, 7, 3, 6]
    for size in (2, 4, 8, 16, 32):
        seeds = bracket_seeds(size)
        assert sorted(seeds) == list(range(1, size + 1))
        assert all(seeds[2 * i] + seeds[2 * i + 1] == size + 1 for i in range(size // 2))
        assert seeds.index(2) >= size // 2 > seeds.index(1)  # 1 and 2 meet only in the final


def test_byes_go_to_the_top_seeds() -> None:
    assert first_round(list("abcdef")) == [("a", None), ("d", "e"), ("b", None), ("c", "f")]
    for n in range(2, 33):
        slots = first_round(bots_of(n))
        byes = [x for x, y in slots if y is None and x is not None]
        assert sorted(byes, key=lambda b: int(b[1:])) == bots_of(n)[: len(byes)]
        assert all(x is not None for x, _ in slots)
        assert len(slots) * 2 - n == len(byes)


def test_knockout_advances_the_winners_until_one_is_left() -> None:
    # six bots: a and b have byes; the lower seed (team 1) wins every match
    t = make("knockout", list("abcdef"))
    key, jobs = t.jobs_for([])
    assert key == "t/round/1"
    assert [(j.match_id, j.team0, j.team1) for j in jobs] == [("t-r1-1", "d", "e"), ("t-r1-3", "c", "f")]
    assert t.stages([])[0].byes == ("a", "b")
    results = [synthetic(j, 1) for j in jobs]
    key, jobs = t.jobs_for(results)
    assert key == "t/round/2"
    assert [(j.team0, j.team1) for j in jobs] == [("a", "e"), ("b", "f")]
    results += [synthetic(j, 1) for j in jobs]
    key, jobs = t.jobs_for(results)
    assert key == "t/round/3" and [(j.team0, j.team1) for j in jobs] == [("e", "f")]
    assert not t.is_finished(results)
    results += [synthetic(j, 0) for j in jobs]
    assert t.is_finished(results)
    table = t.standings(results)
    assert [(s.bot, s.rank) for s in table] == [
        ("e", 1), ("f", 2), ("a", 3), ("b", 3), ("c", 5), ("d", 5),
    ]
    assert {s.bot: s.byes for s in table} == dict(zip("abcdef", [1, 1, 0, 0, 0, 0], strict=True))


def test_knockout_waits_for_the_whole_round() -> None:
    t = make("knockout", bots_of(8))
    _, jobs = t.jobs_for([])
    assert len(jobs) == 4
    partial = [team0_wins(j) for j in jobs[:3]]
    assert t.jobs_for(partial) == ("t/round/1", jobs)


def test_a_drawn_knockout_match_goes_to_the_points_then_to_a_seeded_coin() -> None:
    t = make("knockout", ["a", "b"])
    _, (job,) = t.jobs_for([])
    # a draw on the match result (an aborted match) with more points for b
    drawn = synthetic(job, None, (300, 420), reason="aborted")
    assert [s.bot for s in t.standings([drawn])] == ["b", "a"]
    level = synthetic(job, None, (300, 300))
    winners = set()
    for seed in map(str, range(40)):
        tt = make("knockout", ["a", "b"], seed=seed)
        _, (j,) = tt.jobs_for([])
        r = synthetic(j, None, (300, 300))
        first = tt.standings([r])[0].bot
        assert first == tt.standings([r])[0].bot  # the same coin every time
        winners.add(first)
    assert winners == {"a", "b"}
    assert t.is_finished([level])


def test_a_duplicate_knockout_pair_counts_the_recorded_deals_not_the_totals() -> None:
    t = make("knockout", ["a", "b"], deals=2, duplicate="mirror")
    _, (leg0, leg1) = t.jobs_for([])
    # the records hold no deal: the pair is level whatever the totals say, and goes to the coin
    results = [synthetic(leg0, 0, (200, 100)), synthetic(leg1, 0, (300, 100))]
    game = t.games(results)[0]
    assert game.difference == 0 and game.score_a == 0.5  # no deals recorded: level
    assert game.points_a == 200 + 100 and game.points_b == 100 + 300
    assert t.is_finished(results)
