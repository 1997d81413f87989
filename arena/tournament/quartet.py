"""Field duplicate: quartets of four sides on two board sets, no bot ever seeing a deal twice.

Mirror duplicate (:mod:`arena.tournament.duplicate`) plays each deal twice with
the same two bots swapped between the seats, so a bot that remembers the hands
it held in one leg holds its opponent's hands in the other. Field duplicate
plays each deal at two tables by four different sides instead, and scores each
side against the one that held the same cards at the other table, as a Mitchell
movement does in duplicate bridge. Its unit is a *quartet*: four sides P, Q, R,
S (a side is one bot at both seats of a team, or in partners two bots), two
board sets with seeds ``s0`` and ``s1``, four tables::

    table 0: P (team 0) vs R (team 1) on s0      table 1: Q (team 0) vs S (team 1) on s0
    table 2: P (team 0) vs S (team 1) on s1      table 3: Q (team 0) vs R (team 1) on s1

Every side plays each board set once, from one direction, so no bot sees a
deal from two seats. P and Q held the same cards (team 0) on both sets and
each faced R and S once: the game "P vs Q" is won by the better *duplicate
difference*, a side's deal points minus its opponents' at its two tables
(:func:`compare`). R and S (team 1) give the game "R vs S" the same way. So a
quartet is four matches and two games, the two matches a game of a mirror
pair. A quartet whose R and S only fill the tables (a pair left over when a
round's pairs are odd) scores "P vs Q" alone.

A forfeit at any of the four tables stops its deal points early, and they
compare nothing: then both games go to the sides' mean match scores, higher
winning (as :func:`arena.tournament.duplicate.pair_score` does for a pair).
The ratings count the same games with the same rule from the stored results
(:func:`arena.ratings.online.quartet_scores`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from arena.records import ResultReason
from arena.tournament.standings import Game

Pair = tuple[str, str]
#: a side's bots at its first and second seat (seats 0 and 2 of team 0, 1 and 3 of team 1)
Side = tuple[str, str]

#: each table's sides as indexes into (P, Q, R, S): team 0, team 1
SEATINGS: tuple[tuple[int, int], ...] = ((0, 2), (1, 3), (0, 3), (1, 2))
#: where each side sat: (table, team) twice, P, Q, R, S in order
ROLES: tuple[tuple[tuple[int, int], tuple[int, int]], ...] = (
    ((0, 0), (2, 0)), ((1, 0), (3, 0)), ((0, 1), (3, 1)), ((1, 1), (2, 1)),
)


class TableResult(Protocol):
    """What scoring a quartet reads of a table: a :class:`ResultSummary` does."""

    @property
    def totals(self) -> tuple[int, int]: ...

    @property
    def reason(self) -> ResultReason: ...

    def score0(self) -> float: ...

    def deal_difference(self) -> int: ...


def board_set(table: int) -> int:
    """The board set (0 or 1) a quartet's table deals."""
    return table // 2


def _side(tables: Sequence[TableResult], role: int, forfeit: bool) -> tuple[int, int, float]:
    """A side's duplicate difference (0 after a forfeit: unused), points and summed match score."""
    diff, points, score = 0, 0, 0.0
    for table, team in ROLES[role]:
        r = tables[table]
        if not forfeit:
            d = r.deal_difference()
            diff += d if team == 0 else -d
        points += r.totals[team]
        s = r.score0()
        score += s if team == 0 else 1.0 - s
    return diff, points, score


def compare(tables: Sequence[TableResult], x: int, y: int) -> tuple[float, int, int, int, float]:
    """Side ``x`` against side ``y`` (indexes into P, Q, R, S; they held the same cards): x's score
    (1, 1/2, 0), the duplicate difference (x's minus y's), each side's points, and x's mean match
    score over the two sides' four matches (1/2 + the difference of their means / 2)."""
    forfeit = any(r.reason is ResultReason.FORFEIT for r in tables)
    dx, px, sx = _side(tables, x, forfeit)
    dy, py, sy = _side(tables, y, forfeit)
    decider = (sx - sy) if forfeit else float(dx - dy)
    score = 1.0 if decider > 0 else 0.0 if decider < 0 else 0.5
    return score, dx - dy, px, py, 0.5 + (sx - sy) / 4


def quartet_games(rnd: int, index: int, names: Sequence[str], tables: Sequence[TableResult],
                  scored: bool) -> list[Game]:
    """The quartet's games: "P vs Q", and "R vs S" when ``scored``; ``names`` are the sides' names
    (P, Q, R, S) and ``tables`` the four results in table order."""
    games = []
    for x, y in ((0, 1), (2, 3)) if scored else ((0, 1),):
        score, diff, px, py, legs = compare(tables, x, y)
        games.append(Game(rnd, index, names[x], names[y], score_a=score, points_a=px, points_b=py,
                          difference=diff, legs_score_a=legs))
    return games


def seatings(sides: Sequence[Side]) -> list[tuple[str, str, str, str]]:
    """The bots at seats 0..3 of each of the four tables, the sides being P, Q, R, S."""
    return [(sides[a][0], sides[b][0], sides[a][1], sides[b][1]) for a, b in SEATINGS]


# --------------------------------------------------------------- grouping pairs into quartets
Quartet = tuple[Pair, Pair, bool]  # (P, Q), (R, S), whether R vs S is scored


def group_round(pairs: Sequence[Pair]) -> tuple[list[Quartet], Pair | None]:
    """A round's disjoint pairs two by two, in order: each pair compared in its own quartet, the
    other pair its opponents. The pair left over when they are odd, or None."""
    quartets = [(pairs[i], pairs[i + 1], True) for i in range(0, len(pairs) - 1, 2)]
    return quartets, pairs[-1] if len(pairs) % 2 else None


def filled(pair: Pair, fillers: Pair) -> Quartet:
    """A quartet that compares ``pair`` alone, ``fillers`` (two other sides) only its opponents."""
    return pair, fillers, False


def round_quartets(pairs: Sequence[Pair]) -> list[Quartet]:
    """One round's quartets (Swiss): its pairs two by two; a pair left over meets the round's first
    pair as opponents only. Needs two pairs or more when they are odd."""
    quartets, left = group_round(pairs)
    if left is not None:
        if len(pairs) < 2:
            raise ValueError("field duplicate needs two pairs a round")
        quartets.append(filled(left, pairs[0]))
    return quartets


def round_robin_quartets(rounds: Sequence[Sequence[Pair]]) -> list[Quartet]:
    """Every pair of a round-robin compared once, in quartets: each round's pairs two by two, then
    the rounds' leftover pairs two by two where they are disjoint (four different sides), and any
    still left with the first pair of its own round as opponents only. With n sides that leaves at
    most a few pairs filled (one when n(n-1)/2 is odd and the leftovers pair up)."""
    out: list[Quartet] = []
    leftovers: list[tuple[Pair, Pair]] = []  # (the pair, its round's first pair)
    for pairs in rounds:
        quartets, left = group_round(pairs)
        out += quartets
        if left is not None:
            if len(pairs) < 2:
                raise ValueError("field duplicate needs two pairs a round")
            leftovers.append((left, pairs[0]))
    while leftovers:
        pair, fillers = leftovers.pop(0)
        mate = next((i for i, (other, _) in enumerate(leftovers) if not set(pair) & set(other)), None)
        if mate is None:
            out.append(filled(pair, fillers))
        else:
            out.append((pair, leftovers.pop(mate)[0], True))
    return out
