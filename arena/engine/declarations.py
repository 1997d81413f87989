"""Declarations (*annonces*): the melds of a hand, the sets a player may declare,
and the comparison that decides which side scores.

A meld is a sequence of three or more cards of one suit in sequence order
(7 8 9 T J Q K A: *tierce* 20, *cinquante* 50, *cent* 100 for five or more) or
four cards of one rank (*carré*: jacks 200, nines 150, aces, tens, kings,
queens 100; sevens and eights nothing). A card serves in one meld at most.

A player announces only the kinds of its melds with its first card; the legal
choices are the kind-multisets of the sets of disjoint melds its hand holds
(declaring nothing included). When a kind-multiset fits several sets of melds
(two tierces in the hand, one announced), the player is credited with the best
of them: our reading, since the sources say only that the kind is announced.

Sequences are maximal runs: a run of six is one *cent*, never two tierces;
a carré may break a run, leaving whatever runs remain.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from types import MappingProxyType
from typing import Final, NamedTuple

from arena.engine.actions import CARRE, CENT, CINQUANTE, TIERCE, decl_code
from arena.engine.cards import NINE, PLAIN_STRENGTH

CARRE_POINTS: Final = (0, 0, 150, 100, 200, 100, 100, 100)  # by rank 7 8 9 T J Q K A
RANK_MASKS: Final[tuple[int, ...]] = tuple(sum(1 << (8 * s + r) for s in range(4)) for r in range(8))


class Meld(NamedTuple):
    kind: int  # TIERCE, CINQUANTE, CENT or CARRE
    points: int
    mask: int
    #: comparison key: points, carré over sequence, top card, trump over plain
    key: tuple[int, int, int, int]


def _runs_of_byte(b: int) -> tuple[tuple[int, int], ...]:
    """Maximal runs of 3+ set bits in a byte, as (length, top rank)."""
    runs = []
    r = 0
    while r < 8:
        if b >> r & 1:
            start = r
            while r < 8 and b >> r & 1:
                r += 1
            if r - start >= 3:
                runs.append((r - start, r - 1))
        else:
            r += 1
    return tuple(runs)


_RUNS: Final = tuple(_runs_of_byte(b) for b in range(256))


def _sequence(length: int, top: int, suit: int, trump: int) -> Meld:
    kind = TIERCE if length == 3 else CINQUANTE if length == 4 else CENT
    points = (20, 50, 100)[kind]
    mask = ((1 << length) - 1) << (top - length + 1) << (8 * suit)
    return Meld(kind, points, mask, (points, 0, top, int(suit == trump)))


def melds_of(hand: int, trump: int) -> list[tuple[Meld, ...]]:
    """Every set of disjoint melds the hand may declare, the empty set included."""
    carres = [
        Meld(CARRE, CARRE_POINTS[r], RANK_MASKS[r], (CARRE_POINTS[r], 1, PLAIN_STRENGTH[r], 0))
        for r in range(NINE, 8)
        if hand & RANK_MASKS[r] == RANK_MASKS[r]
    ]
    out: list[tuple[Meld, ...]] = []
    for sub in range(1 << len(carres)):
        chosen = tuple(c for i, c in enumerate(carres) if sub >> i & 1)
        rest = hand
        for c in chosen:
            rest &= ~c.mask
        seqs = [
            _sequence(length, top, s, trump)
            for s in range(4)
            for length, top in _RUNS[(rest >> (8 * s)) & 0xFF]
        ]
        for pick in range(1 << len(seqs)):
            out.append(chosen + tuple(q for i, q in enumerate(seqs) if pick >> i & 1))
    return out


def shown_melds(mask: int, trump: int) -> tuple[Meld, ...]:
    """The melds of one seat's shown cards (the union of the disjoint melds it declared).

    A rank whose four cards are all shown is a carré: eight cards cannot hold four sequences
    through one rank. What is left of each suit are whole runs, and a run of six is one *cent*.
    The order is that of :func:`melds_of`: carrés by rank, then sequences by suit and rank.
    """
    carres = tuple(
        Meld(CARRE, CARRE_POINTS[r], RANK_MASKS[r], (CARRE_POINTS[r], 1, PLAIN_STRENGTH[r], 0))
        for r in range(NINE, 8)
        if mask & RANK_MASKS[r] == RANK_MASKS[r]
    )
    rest = mask
    for c in carres:
        rest &= ~c.mask
    return carres + tuple(
        _sequence(length, top, s, trump) for s in range(4) for length, top in _RUNS[(rest >> (8 * s)) & 0xFF]
    )


def has_melds(hand: int) -> bool:
    """Quick test: does the hand hold any meld at all."""
    for s in range(4):
        if _RUNS[(hand >> (8 * s)) & 0xFF]:
            return True
    return any(hand & RANK_MASKS[r] == RANK_MASKS[r] for r in range(NINE, 8))


def kinds_code(melds: tuple[Meld, ...]) -> int:
    counts = [0, 0, 0, 0]
    for m in melds:
        counts[m.kind] += 1
    return decl_code((counts[0], counts[1], counts[2], counts[3]))


def set_key(melds: tuple[Meld, ...]) -> tuple[tuple[int, int, int, int], int]:
    """How good a set is for its holder: its best meld, then its total."""
    if not melds:
        return ((0, 0, 0, 0), 0)
    return (max(m.key for m in melds), sum(m.points for m in melds))


_NOTHING: Final[Mapping[int, tuple[Meld, ...]]] = MappingProxyType({0: ()})


@lru_cache(maxsize=1 << 14)
def declaration_choices(hand: int, trump: int) -> Mapping[int, tuple[Meld, ...]]:
    """Map each announceable kind code to the best set of melds it stands for.

    Memoized (a pure function of its arguments): each seat asks twice per deal.
    """
    if not has_melds(hand):
        return _NOTHING
    best: dict[int, tuple[Meld, ...]] = {}
    for melds in melds_of(hand, trump):
        code = kinds_code(melds)
        if code not in best or set_key(melds) > set_key(best[code]):
            best[code] = melds
    return MappingProxyType(best)


def compare_declarations(
    declared: list[tuple[Meld, ...]],
) -> tuple[int | None, int]:
    """Which team scores, and how much, from the melds declared by seats 0..3.

    Only the side holding the best single meld scores, all of its melds; a
    perfect tie between the two sides' best melds scores for nobody.
    """
    best: list[tuple[int, int, int, int] | None] = [None, None]
    for seat, melds in enumerate(declared):
        for m in melds:
            t = seat & 1
            if best[t] is None or m.key > best[t]:  # type: ignore[operator]
                best[t] = m.key
    b0, b1 = best
    if b0 is None and b1 is None:
        return None, 0
    if b1 is None or (b0 is not None and b0 > b1):
        team = 0
    elif b0 is None or b1 > b0:
        team = 1
    else:
        return None, 0
    points = sum(m.points for seat, melds in enumerate(declared) if seat & 1 == team for m in melds)
    return team, points

