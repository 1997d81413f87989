"""The partners format's schedule: tables of four bots, partnerships rotating each round.

Each round seats the bots at tables of four, two sides of two different bots,
so that over the rounds every bot partners and opposes every other about
equally. With ``n`` bots, ``n mod 4`` of them sit out each round: those
who have played the most so far (a bot sits out again only once every other
one has). The playing bots are grouped by a greedy search: of
:data:`CANDIDATES` seeded shuffles into tables of four, each table split into
its best two sides, the round keeps the one whose partnerships and
oppositions have been seen least (the sum of the squares of the counts, a
partnership weighing :data:`PARTNER_WEIGHT` oppositions). Everything comes
from the tournament's seed: every node builds the same schedule.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

#: shuffles tried for each round; the one whose tables repeat the least is kept
CANDIDATES = 48
#: a partnership seen before costs this many times an opposition seen before
PARTNER_WEIGHT = 3

Table = tuple[str, str, str, str]  # the bots at seats 0..3: seats 0 and 2 are one side

# the three ways to split four bots (by position) into two sides, as seats 0..3
_SPLITS = ((0, 1, 2, 3), (0, 2, 1, 3), (0, 1, 3, 2))


@dataclass(frozen=True)
class PartnerRound:
    """One round: its tables, and the bots that sit it out."""

    tables: tuple[Table, ...]
    sitting_out: tuple[str, ...]


class _Counts:
    def __init__(self) -> None:
        self.partners: Counter[frozenset[str]] = Counter()
        self.opponents: Counter[frozenset[str]] = Counter()
        self.played: Counter[str] = Counter()

    def cost(self, t: Table) -> int:
        p, o = self.partners, self.opponents
        partner = p[frozenset((t[0], t[2]))] ** 2 + p[frozenset((t[1], t[3]))] ** 2
        oppose = sum(o[frozenset((t[i], t[j]))] ** 2 for i in (0, 2) for j in (1, 3))
        return PARTNER_WEIGHT * partner + oppose

    def best_split(self, four: Sequence[str]) -> tuple[int, Table]:
        tables: list[Table] = [(four[a], four[b], four[c], four[d]) for a, b, c, d in _SPLITS]
        return min(((self.cost(t), t) for t in tables), key=lambda ct: ct[0])

    def add(self, t: Table) -> None:
        self.partners[frozenset((t[0], t[2]))] += 1
        self.partners[frozenset((t[1], t[3]))] += 1
        for i in (0, 2):
            for j in (1, 3):
                self.opponents[frozenset((t[i], t[j]))] += 1
        self.played.update(t)


def partner_rounds(bots: Sequence[str], rounds: int, seed: str) -> list[PartnerRound]:
    """The tables of each of ``rounds`` rounds of ``bots`` (at least 4, distinct)."""
    if len(bots) < 4 or len(set(bots)) != len(bots):
        raise ValueError(f"the partners format needs at least 4 distinct bots, not {list(bots)}")
    counts = _Counts()
    out: list[PartnerRound] = []
    # a shuffle's cost grows with the field: past 16 bots, fewer shuffles a round, so that the
    # largest schedule (256 bots, 100 rounds) is made in a fraction of a second, not seconds
    # (in a big field a pair meets rarely whatever the shuffles)
    candidates = max(4, CANDIDATES * 16 // max(16, len(bots)))
    for r in range(1, rounds + 1):
        rng = random.Random(f"{seed}/partners/{r}")
        order = list(bots)
        rng.shuffle(order)
        order.sort(key=lambda b: counts.played[b])  # stable: the shuffle breaks ties
        playing_count = len(bots) - len(bots) % 4
        playing, out_now = order[:playing_count], order[playing_count:]
        best: tuple[int, list[Table]] | None = None
        for _ in range(candidates):
            rng.shuffle(playing)
            split = [counts.best_split(playing[i:i + 4]) for i in range(0, playing_count, 4)]
            total = sum(c for c, _ in split)
            if best is None or total < best[0]:
                best = (total, [t for _, t in split])
        assert best is not None
        for t in best[1]:
            counts.add(t)
        out.append(PartnerRound(tuple(best[1]), tuple(sorted(out_now, key=list(bots).index))))
    return out

