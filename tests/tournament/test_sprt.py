"""The SPRT: the pentanomial GSPRT by hand, its stopping rule, and whole sprt tournaments."""

from __future__ import annotations

import math
import random
from typing import Any

import pytest

from arena.tournament import (
    MatchJob,
    MatchResult,
    SprtOptions,
    Tournament,
    TournamentError,
    TournamentSpec,
    bounds,
    elo_to_score,
    llr,
    pentanomial,
    run_sprt,
)
from tests.tournament.helpers import run, scheduled, synthetic


def sprt(**options: Any) -> Tournament:
    return Tournament(TournamentSpec.from_dict({
        "tournament_id": "s", "format": "sprt", "bots": ["new", "old"], "deals": 4, "sprt": options,
    }))


def leg_decider(p_win: float, p_draw: float, seed: int) -> Any:
    """Each leg independently: the candidate wins with p_win, draws with p_draw."""
    rng = random.Random(seed)

    def decide(job: MatchJob) -> MatchResult:
        x = rng.random()
        outcome = "win" if x < p_win else "draw" if x < p_win + p_draw else "loss"
        new_team = 0 if job.team0 == "new" else 1
        winner = None if outcome == "draw" else new_team if outcome == "win" else 1 - new_team
        return synthetic(job, winner)

    return decide


# ------------------------------------------------------------------ the statistic
def test_the_llr_of_a_small_pentanomial_by_hand() -> None:
    # pairs scoring 0, 1/4, 1/2, 3/4, 1: 1, 2, 4, 2 and 3 times (N = 12)
    counts = (1, 2, 4, 2, 3)
    mu = (0 * 1 + 0.25 * 2 + 0.5 * 4 + 0.75 * 2 + 1 * 3) / 12  # 7/12
    var = (1 * 0.0625 * 2 + 0.25 * 4 + 0.5625 * 2 + 1 * 3) / 12 - mu**2  # 63/144 - 49/144 = 7/72
    assert mu == pytest.approx(7 / 12) and var == pytest.approx(7 / 72)
    s0 = 0.5  # L(0)
    s1 = 1 / (1 + 10 ** (-5 / 400))  # L(5) = 0.507195...
    expected = 12 * (s1 - s0) * (2 * mu - s0 - s1) / (2 * var)  # = 432/7 (s1 - 1/2)(2/3 - s1)
    assert expected == pytest.approx(0.0708116554723, abs=1e-12)
    assert llr(counts, 0, 5) == pytest.approx(expected, abs=1e-12)
    # a wider hypothesis on the same counts: elo0 = -10, elo1 = 40
    a, b = elo_to_score(-10), elo_to_score(40)
    assert llr(counts, -10, 40) == pytest.approx(12 * (b - a) * (2 * mu - a - b) / (2 * var))


def test_bounds_and_the_logistic_conversion() -> None:
    lower, upper = bounds(0.05, 0.05)
    assert lower == pytest.approx(math.log(0.05 / 0.95)) == pytest.approx(-2.944438979)
    assert upper == pytest.approx(math.log(0.95 / 0.05)) == pytest.approx(2.944438979)
    low, high = bounds(0.05, 0.1)
    assert low == pytest.approx(math.log(0.1 / 0.95)) and high == pytest.approx(math.log(0.9 / 0.05))
    assert elo_to_score(0) == 0.5
    assert elo_to_score(400) == pytest.approx(10 / 11)
    assert elo_to_score(-100) == pytest.approx(1 - elo_to_score(100))


def test_pair_scores_make_a_pentanomial() -> None:
    assert pentanomial([0, 0.25, 0.5, 0.5, 1, 0.75]) == (1, 1, 2, 1, 1)
    with pytest.raises(ValueError, match="one of 0, 1/4"):
        pentanomial([0.3])


def test_no_decision_with_fewer_than_two_pairs() -> None:
    options = SprtOptions(elo0=0, elo1=400)
    assert llr((0, 0, 0, 0, 1), 0, 400) == 0.0
    one = run_sprt([1.0], options)
    assert one.decision is None and one.llr == 0.0 and one.pairs == 1
    assert run_sprt([], options).pairs == 0


def test_one_bot_winning_every_pair_still_decides() -> None:
    """No variance at all: empty cells count 1e-3 pairs (as fishtest does), so H1 is accepted."""
    same = run_sprt([1.0] * 200, SprtOptions(elo0=0, elo1=5))
    assert same.decision == "H1" and same.pairs < 200
    drawn = run_sprt([0.5] * 200, SprtOptions(elo0=0, elo1=5))
    assert drawn.decision == "H0"


def test_no_decision_before_min_pairs_however_far_the_llr_goes() -> None:
    """Two pairs all won estimate the variance near 0: the LLR is far past the bound, and a chance
    of 1 in 16 between equals; the test waits for min_pairs."""
    two = run_sprt([1.0, 1.0], SprtOptions(elo0=0, elo1=30))
    assert two.decision == "H1" and two.pairs == 2  # the default: as before
    waits = run_sprt([1.0] * 7, SprtOptions(elo0=0, elo1=30, min_pairs=8))
    assert waits.decision is None and waits.llr > waits.upper and waits.pairs == 7
    assert run_sprt([1.0] * 8, SprtOptions(elo0=0, elo1=30, min_pairs=8)).decision == "H1"
    with pytest.raises(TournamentError, match="min_pairs"):
        SprtOptions(max_pairs=10, batch_pairs=5, min_pairs=11)
    assert "min_pairs" not in SprtOptions().to_dict()  # a spec as older nodes read it
    assert SprtOptions.from_dict(SprtOptions(min_pairs=8).to_dict()).min_pairs == 8


def test_the_test_stops_at_the_first_crossing() -> None:
    options = SprtOptions(elo0=0, elo1=50)
    scores = [1.0, 0.75] * 20 + [0.0] * 200
    state = run_sprt(scores, options)
    assert state.decision == "H1"
    assert state.llr >= state.upper
    before = run_sprt(scores[: state.pairs - 1], options)
    assert before.decision is None and before.llr < before.upper
    assert state.pentanomial == pentanomial(scores[: state.pairs])


def test_equal_strength_accepts_h0_with_fishtest_bounds() -> None:
    rng = random.Random(2024)
    leg = [0.0, 0.5, 1.0]
    weights = (45, 10, 45)
    scores = ((rng.choices(leg, weights)[0] + rng.choices(leg, weights)[0]) / 2 for _ in range(100_000))
    state = run_sprt(scores, SprtOptions())  # elo0 = 0, elo1 = 5, alpha = beta = 0.05
    assert state.decision == "H0"
    assert state.llr <= state.lower
    assert 1000 < state.pairs < 100_000


# ------------------------------------------------------------------ sprt tournaments
def test_a_much_stronger_candidate_is_accepted() -> None:
    t = sprt(batch_pairs=8)
    results, keys = run(t, leg_decider(0.8, 0.05, seed=1))
    state = t.sprt_state(results)
    assert state.decision == "H1" and state.llr >= state.upper
    assert state.pairs <= len(results) // 2
    assert keys == [f"s/batch/{b}{half}" for b in range(1, len(keys) // 2 + 1) for half in ("", "/leg1")]
    assert t.jobs_for(results) == ("s/finished", [])
    assert t.standings(results)[0].bot == "new"


def test_equal_bots_are_rejected() -> None:
    t = sprt(elo0=0, elo1=20, batch_pairs=50, max_pairs=20_000)
    results, _ = run(t, leg_decider(0.45, 0.1, seed=2))
    state = t.sprt_state(results)
    assert state.decision == "H0" and state.llr <= state.lower
    assert state.pairs > 100


def test_batches_come_one_at_a_time_first_legs_first_and_stop_at_max_pairs() -> None:
    t = sprt(batch_pairs=4, max_pairs=10)

    def seesaw(batch: list[MatchJob]) -> list[MatchResult]:
        """Pairs won and lost in turn by "new": mean 1/2, wide variance, no decision for long."""
        out = []
        for job in batch:
            new_wins = (int(job.match_id.split("-")[2]) % 2) == 0
            new_team = 0 if job.team0 == "new" else 1
            out.append(synthetic(job, new_team if new_wins else 1 - new_team))
        return out

    draws: list[MatchResult] = []
    for batch, size in ((1, 4), (2, 4), (3, 2)):  # 10 pairs at most
        key, firsts = t.jobs_for(draws)
        assert key == f"s/batch/{batch}" and len(firsts) == size
        assert all(j.tags["leg"] == 0 and j.team0 == "new" for j in firsts)
        first_legs = seesaw(firsts)
        assert t.jobs_for(draws + first_legs[:-1]) == (key, firsts)  # a first leg is still out
        draws += first_legs
        key, seconds = t.jobs_for(draws)
        assert key == f"s/batch/{batch}/leg1" and len(seconds) == size
        assert [j.match_id for j in seconds] == [j.match_id.replace("-leg0", "-leg1") for j in firsts]
        second_legs = seesaw(seconds)
        assert t.jobs_for(draws + second_legs[1:]) == (key, seconds[:1])  # those still to play
        draws += second_legs
    assert t.is_finished(draws)
    state = t.sprt_state(draws)
    assert state.decision is None and state.pairs == 10 and state.pentanomial == (5, 0, 0, 0, 5)


def test_a_decision_in_the_middle_of_a_batch_is_final() -> None:
    t = sprt(elo0=0, elo1=100, batch_pairs=20)
    jobs = scheduled(t)
    legs = {j.match_id: j for j in jobs}

    def pair(i: int, new_wins: int) -> list[MatchResult]:
        leg0, leg1 = legs[f"s-r1-{i}-leg0"], legs[f"s-r1-{i}-leg1"]
        return [synthetic(leg0, 0 if new_wins >= 1 else 1), synthetic(leg1, 1 if new_wins >= 2 else 0)]

    results = pair(0, 1)
    for i in range(1, 20):
        results += pair(i, 2)
        if t.sprt_state(results).decision:
            break
    state = t.sprt_state(results)
    assert state.decision == "H1" and state.pairs == i + 1 < 20
    assert t.is_finished(results)
    # the rest of the batch comes in lost: the decision does not move
    later = results + [r for k in range(i + 1, 20) for r in pair(k, 0)]
    assert t.sprt_state(later) == state
    assert t.jobs_for(later) == ("s/finished", [])


def test_the_test_reads_the_pairs_in_order() -> None:
    t = sprt(elo0=0, elo1=100, batch_pairs=6)
    jobs = scheduled(t)
    wins = [synthetic(j, 0 if j.team0 == "new" else 1) for j in jobs]
    # pair 0 not finished: nothing after it counts yet
    assert t.sprt_state(wins[2:]).pairs == 0
    assert not t.is_finished(wins[2:])
    # one leg of pair 0 lost: in order, the pentanomial counts it first
    lost = synthetic(jobs[0], 1)
    state = t.sprt_state([lost, *wins[1:]])
    assert state.pentanomial[2] == 1 and state.pairs >= 2


def test_sprt_state_is_for_sprt_tournaments_only() -> None:
    spec = {"tournament_id": "r", "format": "round-robin", "bots": ["a", "b"]}
    t = Tournament(TournamentSpec.from_dict(spec))
    with pytest.raises(TournamentError, match="a round-robin tournament has no SPRT"):
        t.sprt_state([])
