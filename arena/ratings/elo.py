"""The online Elo update applied with each result, per pool (the Redis backend does the same in Lua).

Logistic Elo: team 0's expected score against team 1 is
``1 / (1 + 10 ** ((r1 - r0) / 400))``; each side moves by ``k * (score - expected)``.
Every bot starts at :data:`INITIAL_RATING`. A bot playing itself (a mirror
match) only counts one game and keeps its rating.
"""

from __future__ import annotations

INITIAL_RATING = 1500.0


def expected_score(rating: float, opponent: float) -> float:
    """The score (1 win, 0.5 draw, 0 loss) ``rating`` is expected to make against ``opponent``."""
    return 1.0 / (1.0 + float(10.0 ** ((opponent - rating) / 400.0)))


def elo_update(rating0: float, rating1: float, score0: float, k: float) -> tuple[float, float]:
    """The two new ratings after team 0 scored ``score0`` against team 1."""
    delta = k * (score0 - expected_score(rating0, rating1))
    return rating0 + delta, rating1 - delta
