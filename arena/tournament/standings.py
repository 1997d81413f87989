"""Standings: what each bot has won, from the finished games alone.

A *game* is one finished pairing: a single match, or a duplicate pair (both
legs). A game won scores 1, drawn 1/2, lost 0; a Swiss bye scores 1 and is
not a game played. The ranks are competition ranks (1, 2, 2, 4) on the
format's order:

- round-robin, gauntlet, sprt: score, then point difference (the duplicate
  difference in duplicate play, else points for minus against), then wins;
- swiss: score, then Buchholz (the sum of the scores of the bots met; a bye
  adds nothing), then point difference;
- knockout: how far the bot went (the champion first, then the finalist,
  then the semifinalists together, ...); bots still in share the best rank.

Bots with equal keys keep the order of the spec.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

Order = Literal["points", "swiss", "knockout"]


@dataclass(frozen=True)
class Game:
    """One finished pairing, from the side of ``a`` (team 0 of its first leg)."""

    round: int
    index: int
    a: str
    b: str
    score_a: float  # 1 won, 0.5 drawn, 0 lost
    points_a: int  # match points over the legs
    points_b: int
    difference: int | None  # duplicate point difference for a; None when not duplicate
    legs_score_a: float  # a's mean match score over the legs (what the SPRT counts)
    #: a leg had no card played (every deal thrown in) and no forfeit: no evidence, the SPRT sets
    #: the pair aside (the standings count it as the draw its matches were)
    no_play: bool = False


@dataclass(frozen=True)
class Standing:
    bot: str
    rank: int
    played: int
    wins: int
    draws: int
    losses: int
    byes: int
    score: float
    points_for: int
    points_against: int
    duplicate_diff: int  # 0 without duplicate play
    buchholz: float | None  # Swiss only

    @property
    def point_diff(self) -> int:
        return self.points_for - self.points_against


@dataclass
class _Tally:
    played: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    byes: int = 0
    score: float = 0.0
    points_for: int = 0
    points_against: int = 0
    duplicate_diff: int = 0


def compute_standings(
    bots: Sequence[str],
    games: Iterable[Game],
    *,
    order: Order,
    duplicate: bool,
    byes: Iterable[str] = (),
    bye_scores: bool = False,
    reached: Mapping[str, int] | None = None,
) -> list[Standing]:
    """Standings of ``bots`` from ``games``; ``reached`` is knockout's progress per bot."""
    tally = {b: _Tally() for b in bots}
    opponents: dict[str, list[str]] = {b: [] for b in bots}
    for g in games:
        for me, them, s, pf, pa, diff in (
            (g.a, g.b, g.score_a, g.points_a, g.points_b, g.difference or 0),
            (g.b, g.a, 1.0 - g.score_a, g.points_b, g.points_a, -(g.difference or 0)),
        ):
            t = tally[me]
            t.played += 1
            t.wins += s == 1.0
            t.draws += s == 0.5
            t.losses += s == 0.0
            t.score += s
            t.points_for += pf
            t.points_against += pa
            t.duplicate_diff += diff
            opponents[me].append(them)
    for b in byes:
        tally[b].byes += 1
        if bye_scores:
            tally[b].score += 1.0
    swiss = order == "swiss"
    buchholz = {b: sum(tally[o].score for o in opponents[b]) for b in bots} if swiss else {}

    def diff_of(b: str) -> int:
        t = tally[b]
        return t.duplicate_diff if duplicate else t.points_for - t.points_against

    def key(b: str) -> tuple[float, ...]:
        t = tally[b]
        if order == "swiss":
            return (t.score, buchholz[b], diff_of(b))
        if order == "knockout":
            return (float((reached or {}).get(b, 0)),)
        return (t.score, diff_of(b), t.wins)

    keys = {b: key(b) for b in bots}
    ranked = sorted(bots, key=lambda b: keys[b], reverse=True)  # stable: spec order among equals
    out: list[Standing] = []
    for b in ranked:
        t = tally[b]
        out.append(Standing(
            bot=b, rank=1 + sum(1 for o in bots if keys[o] > keys[b]), played=t.played, wins=t.wins,
            draws=t.draws, losses=t.losses, byes=t.byes, score=t.score, points_for=t.points_for,
            points_against=t.points_against, duplicate_diff=t.duplicate_diff,
            buchholz=buchholz[b] if swiss else None,
        ))
    return out
