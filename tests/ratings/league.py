"""Simulated leagues: bots of known strength (Elo scale) play random schedules drawn from Bradley-Terry.

The pair games' model is :mod:`arena.ratings.simulation` (the benches use it too); the mixed games'
(sides of two bots, for openskill) is here.

Each game's expected score for ``a`` is the Bradley-Terry probability
``p = 1 / (1 + 10 ** ((r_b - r_a) / 400))``; a game between equals is drawn
:data:`DRAW_RATE` of the time, fewer as the gap grows (the draw probability is
``2 * DRAW_RATE * min(p, 1 - p)``, the rest are wins and losses), so that a draw
counting half a win the expected score stays exactly ``p``.
"""

from __future__ import annotations

import numpy as np

from arena.ratings.mixed import MixedGame
from arena.ratings.simulation import (
    DRAW_RATE,
    bot_names,
    centred,
    play_games,
    play_league,
    spearman,
)

__all__ = ["DRAW_RATE", "bot_names", "centred", "play_games", "play_league", "play_mixed_games", "spearman"]


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
