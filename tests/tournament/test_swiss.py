"""Swiss pairings: properties over many random result sequences, and a brute-force oracle."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from arena.tournament import MatchJob, MatchResult, Stage, Tournament, TournamentSpec
from arena.tournament.pairing import swiss_pairings
from tests.tournament.helpers import run, synthetic

Pair = tuple[str, str]


def swiss(n: int, rounds: int | None = None, seed: str = "s", **fields: object) -> Tournament:
    data: dict[str, object] = {"tournament_id": "t", "format": "swiss", "seed": seed,
                               "bots": [f"b{i}" for i in range(n)], **fields}
    if rounds is not None:
        data["rounds"] = rounds
    return Tournament(TournamentSpec.from_dict(data))


# ------------------------------------------------------------------ brute force
def matchings(players: Sequence[str]) -> Iterator[list[Pair]]:
    if not players:
        yield []
        return
    first, rest = players[0], players[1:]
    for i, other in enumerate(rest):
        for m in matchings([*rest[:i], *rest[i + 1:]]):
            yield [(first, other), *m]


def options(players: Sequence[str]) -> Iterator[tuple[str | None, list[Pair]]]:
    """Every (bye, pairing) a round could have."""
    if len(players) % 2 == 0:
        for m in matchings(players):
            yield None, m
        return
    for i, b in enumerate(players):
        for m in matchings([*players[:i], *players[i + 1:]]):
            yield b, m


def level(pairs: Sequence[Pair], met: Mapping[frozenset[str], int]) -> int:
    """The most times any pair of the round met before (0: no repeat)."""
    return max((met.get(frozenset(p), 0) for p in pairs), default=0)


def oracle(ranked: Sequence[str], met: Mapping[frozenset[str], int],
           byes: Mapping[str, int]) -> tuple[list[Pair], str | None]:
    """The Swiss rules by exhaustion: fewest repeats, then the bye, then the rank-order-first pairing."""
    pos = {b: i for i, b in enumerate(ranked)}
    every = list(options(ranked))
    best = min(level(m, met) for _, m in every)
    allowed = [(b, m) for b, m in every if level(m, met) == best]
    bye = min((b for b, _ in allowed), key=lambda b: (byes.get(b, 0), -pos[b]) if b else (0, 0))

    def greedy_key(m: list[Pair]) -> list[int]:
        partner = {x: y for p in m for x, y in (p, p[::-1])}
        order = sorted(partner, key=pos.__getitem__)
        seen: set[str] = set()
        key = []
        for x in order:
            if x not in seen:
                key.append(pos[partner[x]])
                seen |= {x, partner[x]}
        return key

    m = min((m for b, m in allowed if b == bye), key=greedy_key)
    ordered = sorted(m, key=lambda p: min(pos[p[0]], pos[p[1]]))
    return [(x, y) if pos[x] < pos[y] else (y, x) for x, y in ordered], bye


@st.composite
def situations(draw: st.DrawFn) -> tuple[list[str], dict[frozenset[str], int], dict[str, int]]:
    n = draw(st.integers(2, 9))
    ranked = draw(st.permutations([f"b{i}" for i in range(n)]))
    met = {frozenset((a, b)): draw(st.sampled_from([0, 0, 0, 1, 1, 2]))
           for i, a in enumerate(ranked) for b in ranked[i + 1:]}
    byes = {b: draw(st.sampled_from([0, 0, 1, 2])) for b in ranked}
    return list(ranked), met, byes


@given(situations())
@settings(max_examples=300, deadline=None)
def test_swiss_pairings_follow_the_rules_checked_by_exhaustion(
    case: tuple[list[str], dict[frozenset[str], int], dict[str, int]],
) -> None:
    ranked, met, byes = case
    assert swiss_pairings(ranked, met, byes) == oracle(ranked, met, byes)


# ------------------------------------------------------------------ whole tournaments
def decider(seed: int, draws: bool = True) -> tuple[random.Random, Callable[[MatchJob], MatchResult]]:
    rng = random.Random(seed)
    choices: list[int | None] = [0, 1, None] if draws else [0, 1]

    def decide(job: MatchJob) -> MatchResult:
        return synthetic(job, rng.choice(choices))

    return rng, decide


def check_round(stage: Stage, earlier: Sequence[Stage], bots: Sequence[str]) -> None:
    met = Counter(frozenset((p.a, p.b)) for s in earlier for p in s.pairings)
    byes = Counter(b for s in earlier for b in s.byes)
    pairs = [(p.a, p.b) for p in stage.pairings]
    # every bot plays exactly once, or has the bye
    seated = [b for p in pairs for b in p] + list(stage.byes)
    assert sorted(seated) == sorted(bots)
    assert len(stage.byes) == len(bots) % 2
    # no repeated pairing while avoidable (and no more repeats than needed)
    every = list(options(list(bots)))
    best = min(level(m, met) for _, m in every)
    assert level(pairs, met) == best
    # at most one bye per bot while avoidable (avoiding a repeat comes first)
    if stage.byes and byes[stage.byes[0]] > 0:
        fewer = {b for b in bots if byes[b] < byes[stage.byes[0]]}
        assert not any(b in fewer and level(m, met) == best for b, m in every)


@given(n=st.integers(2, 10), extra=st.integers(-2, 3), seed=st.integers(0, 10**6), draws=st.booleans())
@settings(max_examples=120, deadline=None)
def test_every_round_pairs_everyone_once_without_avoidable_repeats_or_second_byes(
    n: int, extra: int, seed: int, draws: bool,
) -> None:
    rounds = max(1, n - 1 + extra)  # up to past a full round robin: repeats become unavoidable
    t = swiss(n, rounds, seed=str(seed))
    _, decide = decider(seed, draws)
    results, keys = run(t, decide)
    stages = t.stages(results)
    assert keys == [f"t/round/{r}" for r in range(1, rounds + 1)] == [s.key for s in stages]
    bots = t.spec.bots
    for r, stage in enumerate(stages):
        check_round(stage, stages[:r], bots)
    # (round by round only: a Swiss paired greedily may still corner itself into a repeat
    # in a late round of a full round robin's length, which check_round allows when forced)
    table = t.standings(results)
    assert sum(s.score for s in table) == len(results) + sum(s.byes for s in table)
    assert all(s.played + s.byes == rounds for s in table)


@given(half=st.integers(1, 8), seed=st.integers(0, 10**6))
@settings(max_examples=60, deadline=None)
def test_round_two_pairs_winners_with_winners(half: int, seed: int) -> None:
    """Without draws, round 2 has two score groups of ``half`` bots: at most one pair mixes them."""
    t = swiss(2 * half, 2, seed=str(seed))
    _, decide = decider(seed, draws=False)
    _, jobs = t.jobs_for([])
    results = [decide(j) for j in jobs]
    score = {s.bot: s.score for s in t.standings(results)}
    key, jobs2 = t.jobs_for(results)
    assert key == "t/round/2"
    mixed = sum(1 for j in jobs2 if score[j.team0] != score[j.team1])
    assert mixed == half % 2


def test_the_bye_goes_to_the_lowest_ranked_without_one_and_scores_a_win() -> None:
    for seed in map(str, range(20)):
        t = swiss(5, 2, seed=seed)
        (first,) = t.stages([])
        (bye1,) = first.byes
        results = [synthetic(j, 0) for j in first.jobs]
        losers = {j.team1 for j in first.jobs}
        (bye2,) = t.stages(results)[1].byes
        assert bye2 in losers  # score 0, no bye yet; the winners and the first bye have 1
        table = {s.bot: s for s in t.standings(results)}
        assert table[bye1].score == 1.0 and table[bye1].byes == 1 and table[bye1].played == 0
        assert table[bye2].score == 1.0 and table[bye2].byes == 1 and table[bye2].wins == 0


def test_three_bots_take_turns_at_the_bye() -> None:
    t = swiss(3, 3)
    results, _ = run(t, lambda j: synthetic(j, 0))
    assert sorted(b for s in t.stages(results) for b in s.byes) == ["b0", "b1", "b2"]
    table = t.standings(results)
    assert all(s.byes == 1 and s.played == 2 for s in table)
    assert sum(s.score for s in table) == 3 + 3  # three games, three byes


def test_buchholz_is_the_sum_of_the_opponents_scores() -> None:
    t = swiss(4, 2, seed="bh")
    _, jobs = t.jobs_for([])
    results = [synthetic(j, 0) for j in jobs]  # team 0 wins round 1
    _, jobs2 = t.jobs_for(results)
    results += [synthetic(j, None) for j in jobs2]  # round 2 drawn
    table = {s.bot: s for s in t.standings(results)}
    opponents: dict[str, list[str]] = {b: [] for b in table}
    for j in [*jobs, *jobs2]:
        opponents[j.team0].append(j.team1)
        opponents[j.team1].append(j.team0)
    for b, s in table.items():
        assert s.buchholz == sum(table[o].score for o in opponents[b])
    ranked = [s.bot for s in t.standings(results)]
    keys = [(table[b].score, table[b].buchholz) for b in ranked]
    assert keys == sorted(keys, reverse=True)


def test_swiss_with_duplicate_pairs_plays_two_legs_a_board() -> None:
    t = swiss(5, 3, deals=2, duplicate="mirror")
    _, decide = decider(7)
    results, _ = run(t, decide)
    for s in t.stages(results):
        assert len(s.jobs) == 2 * len(s.pairings) == 4 and len(s.byes) == 1
    assert len(results) == 3 * 4


def test_the_next_round_waits_for_the_whole_round() -> None:
    t = swiss(6, 3)
    key, jobs = t.jobs_for([])
    partial = [synthetic(j, 0) for j in jobs[:-1]]
    assert t.jobs_for(partial) == (key, jobs)
    key2, jobs2 = t.jobs_for([*partial, synthetic(jobs[-1], 1)])
    assert key2 == "t/round/2" and len(jobs2) == 3
