"""Pair counts: the games between each pair of bots in a pool, as the store keeps them.

The store updates them in the same atomic step that writes a result, and the
leaderboard is computed from them alone: a pool of 1,000 bots and 1,000,000
results is at most 499,500 pairs, whatever the number of results.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, MutableMapping
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class PairCount:
    """The games between bots ``a`` and ``b`` (``a < b`` by name), from ``a``'s side."""

    wins: int = 0
    draws: int = 0
    losses: int = 0

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    def score(self) -> float:
        """``a``'s points: 1 a win, 1/2 a draw."""
        return self.wins + 0.5 * self.draws


#: (a, b) with a < b -> what a did against b
PairCounts = Mapping[tuple[str, str], PairCount]


def pair_key(a: str, b: str) -> tuple[tuple[str, str], bool]:
    """The key of the pair, and whether ``a`` is its first bot."""
    return ((a, b), True) if a < b else ((b, a), False)


def add_game(counts: MutableMapping[tuple[str, str], PairCount], a: str, b: str, score_a: float) -> None:
    """Count one game that ``a`` scored ``score_a`` (1, 1/2 or 0) against ``b``; a bot against
    itself (a mirror match) counts nothing."""
    if a == b:
        return
    key, first = pair_key(a, b)
    score = score_a if first else 1.0 - score_a
    old = counts.get(key, PairCount())
    if score > 0.5:
        counts[key] = PairCount(old.wins + 1, old.draws, old.losses)
    elif score < 0.5:
        counts[key] = PairCount(old.wins, old.draws, old.losses + 1)
    else:
        counts[key] = PairCount(old.wins, old.draws + 1, old.losses)


def counts_from_rows(rows: Iterable[tuple[str, str, int, int, int]]) -> dict[tuple[str, str], PairCount]:
    """Counts from stored rows ``(a, b, wins, draws, losses)``, whichever order each names its bots."""
    out: dict[tuple[str, str], PairCount] = {}
    for a, b, wins, draws, losses in rows:
        if a == b:
            continue
        key, first = pair_key(a, b)
        w, l_ = (wins, losses) if first else (losses, wins)
        old = out.get(key, PairCount())
        out[key] = PairCount(old.wins + w, old.draws + draws, old.losses + l_)
    return out
