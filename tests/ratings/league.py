"""Simulated leagues: bots of known strength (Elo scale) play random schedules drawn from Bradley-Terry.

Each game's expected score for ``a`` is the Bradley-Terry probability
``p = 1 / (1 + 10 ** ((r_b - r_a) / 400))``; a game between equals is drawn
:data:`DRAW_RATE` of the time, fewer as the gap grows (the draw probability is
``2 * DRAW_RATE * min(p, 1 - p)``, the rest are wins and losses), so that a draw
counting half a win the expected score stays exactly ``p``.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from arena.ratings.counts import PairCount
from arena.ratings.mixed import MixedGame

DRAW_RATE = 0.10


def bot_names(n: int) -> list[str]:
    return [f"bot{i:04d}" for i in range(n)]


def play_league(strengths: NDArray[np.float64], games_per_bot: int,
                rng: np.random.Generator) -> dict[tuple[str, str], PairCount]:
    """The pair counts of ``len(strengths) * games_per_bot / 2`` games between random pairs of bots."""
    n = len(strengths)
    return play_games(strengths, n * games_per_bot // 2, rng)


def play_games(strengths: NDArray[np.float64], games: int,
               rng: np.random.Generator) -> dict[tuple[str, str], PairCount]:
    n = len(strengths)
    a = rng.integers(0, n, games)
    b = rng.integers(0, n - 1, games)
    b += b >= a  # never a bot against itself
    first, second = np.minimum(a, b), np.maximum(a, b)
    p = 1.0 / (1.0 + 10.0 ** ((strengths[second] - strengths[first]) / 400.0))
    draw_p = 2.0 * DRAW_RATE * np.minimum(p, 1.0 - p)
    u = rng.random(games)
    win = u < p - draw_p / 2
    draw = ~win & (u < p + draw_p / 2)
    key = first * n + second
    wins = np.bincount(key, weights=win, minlength=n * n)
    draws = np.bincount(key, weights=draw, minlength=n * n)
    played = np.bincount(key, minlength=n * n)
    names = bot_names(n)
    counts: dict[tuple[str, str], PairCount] = {}
    for k in np.flatnonzero(played).tolist():
        i, j = divmod(k, n)
        w, d = int(wins[k]), int(draws[k])
        counts[names[i], names[j]] = PairCount(w, d, int(played[k]) - w - d)
    return counts


def centred(strengths: NDArray[np.float64]) -> NDArray[np.float64]:
    """The true strengths shifted to a mean of 1500, as the fit anchors its ratings."""
    return strengths + (1500.0 - float(strengths.mean()))


def spearman(x: NDArray[np.float64], y: NDArray[np.float64]) -> float:
    """Spearman's rank correlation (no ties: the values are continuous)."""
    rx, ry = np.argsort(np.argsort(x)), np.argsort(np.argsort(y))
    return float(np.corrcoef(rx, ry)[0, 1])


def play_mixed_games(strengths: dict[str, float], games: int, rng: np.random.Generator,
                     fixed: str | None = None) -> list[MixedGame]:
    """``games`` games of two sides of two different bots, drawn at random (``fixed``: a bot in
    every game, with a random partner); a side's strength is the mean of its two bots', and the
    outcome follows the module's Bradley-Terry with draws."""
    names = sorted(strengths)
    out = []
    for i in range(games):
        if fixed is None:
            a1, a2, b1, b2 = (names[k] for k in rng.choice(len(names), 4, replace=False))
        else:
            others = [n for n in names if n != fixed]
            a1 = fixed
            a2, b1, b2 = (others[k] for k in rng.choice(len(others), 3, replace=False))
        gap = (strengths[a1] + strengths[a2] - strengths[b1] - strengths[b2]) / 2
        p = 1.0 / (1.0 + 10.0 ** (-gap / 400.0))
        draw_p = 2.0 * DRAW_RATE * min(p, 1.0 - p)
        u = rng.random()
        score = 1.0 if u < p - draw_p / 2 else 0.5 if u < p + draw_p / 2 else 0.0
        out.append(MixedGame(f"g{i}", (a1, a2), (b1, b2), score))
    return out
