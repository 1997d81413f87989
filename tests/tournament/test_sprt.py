"""The SPRT: the test by betting by hand, its error rates on degenerate laws, the pairs it sets aside,
its Elo and interval, and whole sprt tournaments."""

from __future__ import annotations

import math
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.tournament import (
    MatchJob,
    MatchResult,
    SprtOptions,
    Tournament,
    TournamentError,
    TournamentSpec,
    bounds,
    elo_to_score,
    pentanomial,
    run_sprt,
    score_interval,
)
from arena.tournament.sprt import CAP, PRIOR, SequentialTest, gsprt_llr_fishtest, smoothed, stakes
from tests.tournament.helpers import play_job, run, scheduled, synthetic

SCORES = (0.0, 0.25, 0.5, 0.75, 1.0)


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
def test_the_first_pair_by_hand() -> None:
    """Before any pair the stakes come from the prior alone (half a pair in each cell: mean 1/2,
    variance 1/8); a pair won moves the gambler against H0 up and the one against H1 down."""
    assert smoothed((0, 0, 0, 0, 0)) == pytest.approx((0.5, 0.125))
    s0, s1 = 0.5, elo_to_score(30)
    d = s1 - s0
    lam = gam = d / (0.125 + d * d)
    assert stakes((0, 0, 0, 0, 0), s0, s1) == pytest.approx((lam, gam))
    test = SequentialTest(SprtOptions(elo0=0, elo1=30))
    test.add(1.0)
    assert test.log_w0 == pytest.approx(math.log(1 + lam * 0.5))
    assert test.log_w1 == pytest.approx(math.log(1 - gam * (1 - s1)))
    assert test.llr == pytest.approx(test.log_w0)  # log+ W0 - log+ W1, W1 below 1
    # the second pair's stakes come from the first: mean and variance of (1/2, 1/2, 1/2, 1/2, 3/2)
    mu, var = smoothed((0, 0, 0, 0, 1))
    assert mu == pytest.approx((0.125 + 0.25 + 0.375 + 1.5) / 3.5)
    cells = (0.5, 0.5, 0.5, 0.5, 1.5)
    assert var == pytest.approx(sum(c * (x - mu) ** 2 for c, x in zip(cells, SCORES, strict=True)) / 3.5)
    d0 = mu - s0
    assert stakes((0, 0, 0, 0, 1), s0, s1)[0] == pytest.approx(min(d0 / (var + d0 * d0), CAP / s0))
    assert PRIOR == 0.5


def test_bounds_and_the_logistic_conversion() -> None:
    lower, upper = bounds(0.05, 0.05)
    assert lower == pytest.approx(math.log(0.05)) == pytest.approx(-2.995732)
    assert upper == pytest.approx(math.log(20))
    low, high = bounds(0.05, 0.1)
    assert low == pytest.approx(math.log(0.1)) and high == pytest.approx(math.log(20))
    assert elo_to_score(0) == 0.5
    assert elo_to_score(400) == pytest.approx(10 / 11)
    assert elo_to_score(-100) == pytest.approx(1 - elo_to_score(100))


def test_pair_scores_make_a_pentanomial() -> None:
    assert pentanomial([0, 0.25, 0.5, 0.5, 1, 0.75]) == (1, 1, 2, 1, 1)
    with pytest.raises(ValueError, match="one of 0, 1/4"):
        pentanomial([0.3])


@settings(max_examples=60, deadline=None)
@given(score=st.sampled_from(SCORES), n=st.integers(1, 300), elo1=st.sampled_from([5.0, 30.0, 100.0]))
def test_a_degenerate_pentanomial_gives_a_bounded_llr(score: float, n: int, elo1: float) -> None:
    """All pairs alike (all won, all drawn, all lost...): no variance, and yet every step of the LLR
    is bounded by what a gambler risks on one pair; it never explodes as the GSPRT's did."""
    state = run_sprt([score] * n, SprtOptions(elo0=0, elo1=elo1, max_pairs=1000))
    s0 = 0.5
    step = max(math.log1p(CAP * (1 - s0) / s0), -math.log(1 - CAP), math.log1p(CAP * s0 / (1 - s0)))
    assert math.isfinite(state.llr) and abs(state.llr) <= state.pairs * step + 1e-9
    assert abs(state.llr) < state.upper + step  # it stops at the first crossing
    assert math.isfinite(state.elo)
    low, high = state.elo_interval
    assert low <= state.elo <= high
    assert (high == math.inf) == (score == 1.0) and (low == -math.inf) == (score == 0.0)


def test_eight_pairs_all_won_decide_with_a_finite_elo_and_its_interval() -> None:
    """The issue's case: 8 pairs all won gave LLR +703 and "+1000 Elo"."""
    state = run_sprt([1.0] * 8, SprtOptions(elo0=0, elo1=30))
    assert gsprt_llr_fishtest((0, 0, 0, 0, 8), 0, 30) == pytest.approx(703.53, abs=0.01)  # before
    assert state.decision == "H1" and state.pairs == 8 and 3.0 < state.llr < 3.5
    assert 300 < state.elo < 400  # the mean of 8 pairs won and half a pair in each cell: +348
    low, high = state.elo_interval
    assert high == math.inf and -60 < low < 0  # 8 pairs cannot bound how much stronger it is
    # no fewer pairs could do it: a gambler risking CAP of its wealth gains at most 1.6x a pair
    assert run_sprt([1.0] * 7, SprtOptions(elo0=0, elo1=30)).decision is None


def test_pairs_all_drawn_accept_h0_no_sooner_than_the_evidence_allows() -> None:
    """All draws gave LLR -95 after 8 pairs. A candidate 30 Elo better may draw every pair with a
    chance of (1 - 2 (s1 - 1/2)) ** n (it wins the rest of its pairs 3/4): a test that keeps beta
    cannot accept H0 before that chance falls under beta, 34 pairs."""
    options = SprtOptions(elo0=0, elo1=30)
    assert gsprt_llr_fishtest((0, 0, 8, 0, 0), 0, 30) == pytest.approx(-95.01, abs=0.01)  # before
    s1 = elo_to_score(30)
    least = math.ceil(math.log(options.beta) / math.log(1 - 2 * (s1 - 0.5)))
    state = run_sprt([0.5] * 1000, options)
    assert state.decision == "H0" and least <= state.pairs <= 2 * least
    assert run_sprt([0.5] * 8, options).decision is None


def test_pairs_set_aside_carry_no_evidence() -> None:
    options = SprtOptions(elo0=0, elo1=30)
    none = run_sprt([None] * 64, options)
    assert (none.decision, none.pairs, none.set_aside, none.llr) == (None, 0, 64, 0.0)
    assert none.elo == 0.0 and none.elo_interval == (-math.inf, math.inf)
    rng = random.Random(7)
    scores = [rng.choice(SCORES) for _ in range(40)]
    mixed = [s for x in scores for s in ([None] * rng.randrange(3) + [x])]
    plain, with_aside = run_sprt(scores, options), run_sprt(mixed, options)
    assert (with_aside.llr, with_aside.pairs, with_aside.pentanomial) == (plain.llr, plain.pairs,
                                                                         plain.pentanomial)
    counted = aside = 0  # the pairs set aside before the test stopped
    for s in mixed:
        if counted == with_aside.pairs and with_aside.decision is not None:
            break
        counted, aside = (counted, aside + 1) if s is None else (counted + 1, aside)
    assert with_aside.set_aside == aside > 0


@pytest.mark.security
@settings(max_examples=40, deadline=None)
@given(scores=st.lists(st.sampled_from(SCORES), max_size=60), aside=st.lists(st.integers(0, 20), max_size=60))
def test_deals_thrown_in_never_move_the_test(scores: list[float], aside: list[int]) -> None:
    """An owner whose versions throw in deals at will (every seat passing) cannot move the test with
    them: pairs set aside, anywhere, leave its LLR, decision and pentanomial as they were (before,
    they were draws that shrank the variance: 60 of them and 12 pairs won 3/4 gave LLR +7)."""
    assert gsprt_llr_fishtest((0, 0, 60, 12, 0), 0, 30) > 7
    options = SprtOptions(elo0=0, elo1=30)
    fed: list[float | None] = []
    for i, s in enumerate(scores):
        fed += [None] * (aside[i] if i < len(aside) else 0) + [s]
    plain, with_aside = run_sprt(scores, options), run_sprt(fed, options)
    assert (with_aside.llr, with_aside.decision, with_aside.pentanomial) == (
        plain.llr, plain.decision, plain.pentanomial)


def test_the_test_keeps_alpha_where_the_gsprt_did_not() -> None:
    """Between equal bots whose pairs are all won or all lost (no split legs), the GSPRT of the
    format's [0, 30] accepted H1 in about a quarter of the runs (bench/sprt.py); the test by betting
    keeps its 5% (1,000 runs of 200 pairs here; the bench runs 10,000 on many laws)."""
    options = SprtOptions(elo0=0, elo1=30, max_pairs=200)
    rng = random.Random(2024)
    false_h1 = old_h1 = 0
    runs = 1000
    upper_before = math.log(0.95 / 0.05)
    for _ in range(runs):
        scores = [rng.choice((0.0, 1.0)) for _ in range(200)]
        false_h1 += run_sprt(scores, options).decision == "H1"
        counts = [0] * 5
        for s in scores:
            counts[int(s * 4)] += 1
            llr = gsprt_llr_fishtest(counts, 0, 30)
            if llr >= upper_before or llr <= -upper_before:
                old_h1 += llr > 0
                break
    se = math.sqrt(0.05 * 0.95 / runs)
    assert false_h1 / runs <= 0.05 + 3 * se
    assert old_h1 / runs > 0.15  # what the GSPRT did: the defect this test would have caught


def test_the_interval_holds_the_mean_whatever_the_law() -> None:
    assert score_interval((0, 0, 0, 0, 0)) == (0.0, 1.0)
    low, high = score_interval((0, 0, 40, 0, 0))
    assert 0.4 < low < 0.5 < high < 0.6 and low + high == pytest.approx(1.0)
    assert score_interval((3, 0, 0, 0, 0))[0] == 0.0 and score_interval((0, 0, 0, 0, 3))[1] == 1.0
    wide, narrow = score_interval((5, 5, 5, 5, 5)), score_interval((50, 50, 50, 50, 50))
    assert wide[0] < narrow[0] < 0.5 < narrow[1] < wide[1]


def test_no_decision_before_min_pairs_however_far_the_llr_goes() -> None:
    waits = run_sprt([1.0] * 11, SprtOptions(elo0=0, elo1=30, min_pairs=12))
    assert waits.decision is None and waits.llr > waits.upper and waits.pairs == 11
    assert run_sprt([1.0] * 12, SprtOptions(elo0=0, elo1=30, min_pairs=12)).decision == "H1"
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


def test_a_pair_with_a_leg_of_deals_all_thrown_in_is_set_aside() -> None:
    """Two bots that pass every bid: each leg's deals are all thrown in, 0-0. Before, every pair was
    a draw and the test accepted H0; now none is a pair result and the test ends undecided."""
    t = sprt(elo0=0, elo1=30, batch_pairs=4, max_pairs=8)
    rng = random.Random(3)
    results, _ = run(t, lambda job: play_job(job, {"new": "pass", "old": "pass"}, rng))
    assert all(r.record.deals and not any(d.get("plays") for d in r.record.deals) for r in results)
    assert all(r.winner is None and r.totals == (0, 0) for r in results)
    state = t.sprt_state(results)
    assert (state.decision, state.pairs, state.set_aside, state.pentanomial) == (None, 0, 8, (0,) * 5)
    assert t.is_finished(results)
    assert all(g.no_play for g in t.overview(results).games)
    # a side that bids has cards played: those pairs count (a leg whose every deal the heuristic
    # found no hand to take is set aside as well)
    t = sprt(elo0=0, elo1=30, batch_pairs=4, max_pairs=8)
    played, _ = run(t, lambda job: play_job(job, {"new": "heuristic", "old": "pass"}, rng))
    state = t.sprt_state(played)
    aside = [g for g in t.overview(played).games if g.no_play]
    assert state.pairs >= 1 and state.set_aside == len(aside) and state.pairs + state.set_aside == 8


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
