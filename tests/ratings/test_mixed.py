"""Mixed partnerships: openskill rates each bot of a two-bot side from its sides' results."""

from __future__ import annotations

import math
import random

import pytest

from arena.ratings.mixed import MixedRatings

#: true strengths (Elo scale, a side's strength is its two bots' sum)
STRENGTHS = {"strong": 1700.0, "good": 1600.0, "fair": 1500.0, "weak": 1300.0, "poor": 1400.0, "mid": 1500.0}


def play_mixed(games: int, seed: int) -> MixedRatings:
    """Random sides of two different bots; the side's score is drawn from Bradley-Terry on the sums."""
    rng = random.Random(seed)
    ratings = MixedRatings()
    bots = sorted(STRENGTHS)
    for _ in range(games):
        a1, a2, b1, b2 = rng.sample(bots, 4)
        gap = STRENGTHS[a1] + STRENGTHS[a2] - STRENGTHS[b1] - STRENGTHS[b2]
        p = 1.0 / (1.0 + 10.0 ** (-gap / 400.0))
        ratings.rate((a1, a2), (b1, b2), 1.0 if rng.random() < p else 0.0)
    return ratings


def test_a_stronger_bot_in_mixed_sides_ends_above_a_weaker_one() -> None:
    ratings = play_mixed(1_500, seed=1)
    assert ratings.bots() == tuple(sorted(STRENGTHS))
    assert ratings.ordinal("strong") > ratings.ordinal("fair") > ratings.ordinal("weak")
    assert ratings.elo("strong") > ratings.elo("good") > ratings.elo("poor") > ratings.elo("weak")
    assert ratings.sigma("strong") < 25 / 3  # games made it surer


def test_the_elo_display_puts_a_new_bot_at_1500_and_one_mu_at_about_30_points() -> None:
    ratings = MixedRatings()
    assert (ratings.mu("new"), ratings.sigma("new"), ratings.elo("new")) == (25.0, 25 / 3, 1500.0)
    assert ratings.ordinal("new") == pytest.approx(0.0)
    assert ratings.elo_per_mu == pytest.approx(400 / (math.log(10) * math.sqrt(2) * 25 / 6))
    assert 29 < ratings.elo_per_mu < 30


def test_a_win_raises_both_winners_and_lowers_both_losers_and_a_draw_between_equals_moves_no_mu() -> None:
    ratings = MixedRatings()
    ratings.rate(("a", "b"), ("c", "d"), 1.0)
    assert ratings.mu("a") == ratings.mu("b") > 25.0 > ratings.mu("c") == ratings.mu("d")
    draw = MixedRatings()
    draw.rate(("a", "b"), ("c", "d"), 0.5)
    assert all(draw.mu(bot) == pytest.approx(25.0) for bot in "abcd")


def test_a_bot_on_both_seats_of_one_side_is_rated_once() -> None:
    ratings = MixedRatings()
    ratings.rate(("a", "a"), ("b", "c"), 0.0)
    assert ratings.bots() == ("a", "b", "c") and ratings.mu("a") < 25.0


def test_a_bot_on_both_sides_or_a_score_other_than_a_result_is_refused() -> None:
    ratings = MixedRatings()
    with pytest.raises(ValueError, match="both sides"):
        ratings.rate(("a", "b"), ("b", "c"), 1.0)
    with pytest.raises(ValueError, match="score_a"):
        ratings.rate(("a", "b"), ("c", "d"), 0.7)
