"""Bradley-Terry's rules: the anchor, the mirror, more wins a higher rating, LOS, and the prior's limits.

The invariants run on random small pools (hypothesis): up to six bots, up to 20 games a pair.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.ratings.bt import ANCHOR, PairArrays, fit
from arena.ratings.counts import PairCount

BOTS = ["a", "b", "c", "d", "e", "f"]

pair_count = st.builds(PairCount, st.integers(0, 20), st.integers(0, 20), st.integers(0, 20))


@st.composite
def pools(draw: st.DrawFn) -> dict[tuple[str, str], PairCount]:
    """Counts over 2 to 6 bots, each pair with some games (so every bot has played)."""
    n = draw(st.integers(2, len(BOTS)))
    pairs = [(a, b) for k, a in enumerate(BOTS[:n]) for b in BOTS[k + 1:n]]
    counts = {pair: draw(pair_count) for pair in pairs}
    counts[BOTS[0], BOTS[1]] = PairCount(1, 0, 0)  # at least one game
    return {pair: c for pair, c in counts.items() if c.games}


Counts = dict[tuple[str, str], PairCount]


def mirrored(counts: Counts) -> Counts:
    return {pair: PairCount(c.losses, c.draws, c.wins) for pair, c in counts.items()}


@given(pools())
@settings(max_examples=150, deadline=None)
def test_the_mean_rating_is_1500(counts: dict[tuple[str, str], PairCount]) -> None:
    assert float(np.mean(fit(counts).ratings)) == pytest.approx(ANCHOR, abs=1e-9)


@given(pools())
@settings(max_examples=150, deadline=None)
def test_swapping_each_pairs_sides_mirrors_the_ratings_around_1500(counts: Counts) -> None:
    result, mirror = fit(counts), fit(mirrored(counts))
    assert result.bots == mirror.bots
    np.testing.assert_allclose(mirror.ratings, 2 * ANCHOR - result.ratings, atol=1e-6)
    np.testing.assert_allclose(mirror.covariance, result.covariance, atol=1e-6)


@given(pools())
@settings(max_examples=100, deadline=None)
def test_a_pair_keyed_the_other_way_round_counts_the_same(counts: dict[tuple[str, str], PairCount]) -> None:
    turned = {(b, a): PairCount(c.losses, c.draws, c.wins) for (a, b), c in counts.items()}
    np.testing.assert_allclose(fit(turned).ratings, fit(counts).ratings, atol=1e-9)


@given(pools(), st.data())
@settings(max_examples=100, deadline=None)
def test_each_more_win_raises_the_winners_rating(counts: dict[tuple[str, str], PairCount],
                                                 data: st.DataObject) -> None:
    pair = data.draw(st.sampled_from(sorted(counts)))
    winner_first = data.draw(st.booleans())
    winner = pair[0] if winner_first else pair[1]
    before = fit(counts).rating(winner)
    for _ in range(5):
        c = counts[pair]
        counts = {**counts, pair: PairCount(c.wins + 1, c.draws, c.losses) if winner_first
                  else PairCount(c.wins, c.draws, c.losses + 1)}
        after = fit(counts).rating(winner)
        assert after > before - 1e-9
        before = after


@given(pools(), st.data())
@settings(max_examples=150, deadline=None)
def test_los_of_a_over_b_and_of_b_over_a_add_up_to_one(counts: dict[tuple[str, str], PairCount],
                                                        data: st.DataObject) -> None:
    result = fit(counts)
    a, b = data.draw(st.sampled_from(result.bots)), data.draw(st.sampled_from(result.bots))
    assert result.los(a, b) + result.los(b, a) == pytest.approx(1.0, abs=1e-12)
    assert 0.0 <= result.los(a, b) <= 1.0


@given(pools())
@settings(max_examples=100, deadline=None)
def test_the_interval_is_the_rating_plus_or_minus_1_96_sd(counts: dict[tuple[str, str], PairCount]) -> None:
    result = fit(counts)
    for bot in result.bots:
        low, high = result.interval(bot)
        assert low < result.rating(bot) < high
        assert (high - low) / 2 == pytest.approx(1.96 * result.sd(bot), rel=1e-3)
    # the anchored ratings sum to a constant: the covariance's rows sum to zero
    np.testing.assert_allclose(result.covariance.sum(axis=1), 0.0, atol=1e-6)


def test_the_better_score_in_an_even_schedule_is_the_higher_rating() -> None:
    result = fit({("a", "b"): PairCount(7, 2, 3), ("a", "c"): PairCount(6, 0, 6),
                  ("b", "c"): PairCount(5, 0, 7)})
    assert result.rating("a") > result.rating("c") > result.rating("b")


def test_a_near_draw_record_gives_a_small_gap_on_the_elo_scale() -> None:
    """Scoring 64% over many games is about 100 Elo points (p = 1 / (1 + 10 ** (-100 / 400)))."""
    p = 1.0 / (1.0 + 10.0 ** (-100.0 / 400.0))
    wins = round(10_000 * p)
    result = fit({("a", "b"): PairCount(wins, 0, 10_000 - wins)})
    assert result.rating("a") - result.rating("b") == pytest.approx(100.0, abs=1.0)
    assert result.rating("a") == pytest.approx(1550.0, abs=0.5)


def test_a_bot_that_won_every_game_has_a_finite_rating_and_interval() -> None:
    result = fit({("a", "b"): PairCount(30, 0, 0), ("b", "c"): PairCount(5, 2, 5)})
    assert all(math.isfinite(r) for r in result.ratings)
    assert math.isfinite(result.sd("a")) and result.sd("a") > result.sd("b")
    assert result.rating("a") > result.rating("b")
    assert result.los("a", "b") > 0.99


def test_pools_that_never_met_are_each_centred_on_1500_and_their_gap_is_uncertain() -> None:
    result = fit({("a", "b"): PairCount(10, 0, 0), ("c", "d"): PairCount(10, 0, 0)})
    assert result.rating("a") == pytest.approx(result.rating("c"))
    assert result.los("a", "c") == pytest.approx(0.5)
    assert result.los("a", "b") > result.los("a", "d")  # a beat b, a never met d


def test_games_against_itself_and_empty_pairs_are_left_out() -> None:
    pairs = PairArrays.from_counts({("a", "a"): PairCount(3, 0, 0), ("a", "b"): PairCount(),
                                    ("b", "c"): PairCount(1, 0, 0)})
    assert pairs.bots == ("b", "c")
    assert fit({}).bots == ()


def test_each_bots_record_adds_up_its_pairs_from_its_own_side() -> None:
    pairs = PairArrays.from_counts({("a", "b"): PairCount(3, 1, 2), ("b", "c"): PairCount(4, 0, 1)})
    wins, draws, losses = pairs.per_bot()
    assert pairs.bots == ("a", "b", "c")
    assert wins.tolist() == [3, 6, 1] and draws.tolist() == [1, 1, 0] and losses.tolist() == [2, 4, 4]
