"""What the store applies with each result, besides the Elo: duplicate pairs and rating history.

A duplicate pair (the same decks played twice, the bots swapped) counts as one
game, for the pair counts and the Elo, once both legs are written: the store
keeps the first leg written as a :class:`Leg` (from bot A's side, A being
team 0 of leg 0) and, with the second, counts the pair's game scored by
:func:`duplicate_score`. The Redis backend does the same in Lua.

The history of a bot's rating in a pool is a point ``(games, rating)`` after
every :data:`HISTORY_EVERY` of its games in the pool, the latest
:data:`HISTORY_MAX` points kept (a chart of its last 5,000 games).
"""

from __future__ import annotations

from dataclasses import dataclass

#: a history point after every this many games of a bot in a pool
HISTORY_EVERY = 10
#: history points kept per bot and pool (the oldest go first)
HISTORY_MAX = 500


@dataclass(frozen=True, slots=True)
class Leg:
    """One leg of a duplicate pair, from bot A's side (A is team 0 of leg 0, team 1 of leg 1)."""

    points_a: int
    points_b: int
    #: A's match score in this leg: 1 won, 1/2 drawn, 0 lost
    score_a: float
    #: the leg ended by forfeit (its points stopped early and compare nothing)
    forfeit: bool

    def to_text(self) -> str:
        """How a store keeps it until the other leg: ``points_a points_b score_a forfeit``."""
        return f"{self.points_a} {self.points_b} {self.score_a!r} {int(self.forfeit)}"

    @classmethod
    def from_text(cls, text: str) -> Leg:
        pa, pb, sa, f = text.split()
        return cls(int(pa), int(pb), float(sa), f == "1")


def duplicate_score(first: Leg, second: Leg) -> float:
    """A's score for the pair (1, 1/2 or 0), whichever leg came first: the better total over
    both legs wins; when a leg ended by forfeit, A's mean match score above, at or below one half
    decides (as :func:`arena.tournament.duplicate.pair_score` does from the deals)."""
    if first.forfeit or second.forfeit:
        mean = (first.score_a + second.score_a) / 2
        return 1.0 if mean > 0.5 else 0.0 if mean < 0.5 else 0.5
    difference = first.points_a + second.points_a - first.points_b - second.points_b
    return 1.0 if difference > 0 else 0.0 if difference < 0 else 0.5


def history_points(
    stored: list[tuple[int, float]], latest: tuple[int, float] | None,
) -> list[tuple[int, float]]:
    """The stored points, then the latest ``(games, rating)`` unless it is the last of them."""
    if latest is not None and latest[0] > 0 and (not stored or stored[-1][0] != latest[0]):
        return [*stored, latest]
    return stored
