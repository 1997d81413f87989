"""Simulated pools: bots of known strength (Elo scale) whose games are drawn from Bradley-Terry.

What the rating tests (``tests/ratings/``) and the benches (``bench/ratings.py``, ``bench/ladder.py``)
measure the ratings and the matchmaking against: the truth is known, so the fitted order and
intervals can be compared with it. Pure: the randomness is a ``numpy`` Generator passed in.

Each game's expected score for ``a`` is the Bradley-Terry probability
``p = 1 / (1 + 10 ** ((r_b - r_a) / 400))``; a game between equals is drawn
:data:`DRAW_RATE` of the time, fewer as the gap grows (the draw probability is
``2 * DRAW_RATE * min(p, 1 - p)``, the rest are wins and losses), so that a draw
counting half a win the expected score stays exactly ``p``.
"""

from __future__ import annotations

from collections.abc import MutableMapping, Sequence

import numpy as np
from numpy.typing import NDArray

from arena.ratings.counts import PairCount

DRAW_RATE = 0.10

Floats = NDArray[np.float64]


def bot_names(n: int) -> list[str]:
    return [f"bot{i:04d}" for i in range(n)]


def play_league(strengths: Floats, games_per_bot: int,
                rng: np.random.Generator) -> dict[tuple[str, str], PairCount]:
    """The pair counts of ``len(strengths) * games_per_bot / 2`` games between random pairs of bots."""
    n = len(strengths)
    return play_games(strengths, n * games_per_bot // 2, rng)


def play_games(strengths: Floats, games: int, rng: np.random.Generator) -> dict[tuple[str, str], PairCount]:
    """The pair counts of ``games`` games between pairs drawn uniformly (never a bot against itself)."""
    n = len(strengths)
    a = rng.integers(0, n, games)
    b = rng.integers(0, n - 1, games)
    b += b >= a  # never a bot against itself
    counts: dict[tuple[str, str], PairCount] = {}
    play_pairs(strengths, a, b, rng, counts)
    return counts


def play_pairs(strengths: Floats, a: NDArray[np.int64] | Sequence[int], b: NDArray[np.int64] | Sequence[int],
               rng: np.random.Generator, counts: MutableMapping[tuple[str, str], PairCount]) -> None:
    """Play one game for each pair ``(a[k], b[k])`` (indices into ``strengths``, bot ``k`` named
    ``bot_names(n)[k]``) and add the results to ``counts``."""
    n = len(strengths)
    first = np.minimum(np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64))
    second = np.maximum(np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64))
    games = len(first)
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
    for k in np.flatnonzero(played).tolist():
        i, j = divmod(k, n)
        w, d = int(wins[k]), int(draws[k])
        old = counts.get((names[i], names[j]), PairCount())
        losses = int(played[k]) - w - d
        counts[names[i], names[j]] = PairCount(old.wins + w, old.draws + d, old.losses + losses)


def centred(strengths: Floats) -> Floats:
    """The true strengths shifted to a mean of 1500, as the fit anchors its ratings."""
    return strengths + (1500.0 - float(strengths.mean()))


def spearman(x: Floats, y: Floats) -> float:
    """Spearman's rank correlation (no ties: the values are continuous)."""
    rx, ry = np.argsort(np.argsort(x)), np.argsort(np.argsort(y))
    return float(np.corrcoef(rx, ry)[0, 1])
