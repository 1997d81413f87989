"""Duplicate play: every deck played twice, the bots swapped between the teams.

A duplicate pair between bots A and B is two legs with the same seed and the
same fixed number of deals: leg 0 seats A as team 0 (seats 0 and 2), leg 1 as
team 1. Deal ``i`` of both legs is dealt from ``deal_rng(seed, i)`` by the same
dealer, so each bot holds in one leg the hands the other held in the other
leg, and the luck of the cards cancels out of the point difference.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from arena.engine import EngineError
from arena.records import ResultReason
from arena.tournament.jobs import MatchResult
from arena.tournament.spec import TournamentError

DealScores = tuple[tuple[int, int], ...]


def deal_scores(result: MatchResult) -> DealScores:
    """What each team wrote down for each deal of the result's record, in order.

    The record's deals are replayed (every action checked); a deal's score
    includes any *litige* points it received. A record with no finished deal
    (a forfeit before the first one ended) has no scores. The replay ends
    after exactly the recorded deals, whatever the record's end rule.
    """
    record = result.record
    if not record.deals:
        return ()
    try:
        _, outcomes = record.replay(deals=record.deals_played)
    except EngineError as e:
        raise TournamentError(f"match {result.match_id}: its record does not replay: {e}") from None
    return tuple(o.score for o in outcomes)


class Leg(Protocol):
    """What checking and scoring a pair reads of a leg: a :class:`MatchResult` or its summary."""

    @property
    def match_id(self) -> str: ...

    @property
    def team0(self) -> str: ...

    @property
    def team1(self) -> str: ...

    @property
    def reason(self) -> ResultReason: ...

    def score0(self) -> float: ...


def _seed(leg: Leg) -> object:
    record = getattr(leg, "record", None)
    return record.seed if record is not None else getattr(leg, "seed", "")


def check_legs(leg0: Leg, leg1: Leg) -> None:
    """Raise unless ``leg1`` is ``leg0`` with the bots swapped and the same seed."""
    if (leg1.team0, leg1.team1) != (leg0.team1, leg0.team0):
        raise TournamentError(
            f"{leg0.match_id} and {leg1.match_id} are not the two legs of a duplicate pair: "
            f"teams {leg0.team0}/{leg0.team1} then {leg1.team0}/{leg1.team1}"
        )
    seeds = [_seed(leg0), _seed(leg1)]
    if str(seeds[0]) != str(seeds[1]):
        raise TournamentError(
            f"{leg0.match_id} and {leg1.match_id} are not the two legs of a duplicate pair: "
            f"seeds {seeds[0]!r} and {seeds[1]!r} differ"
        )


def score_difference(leg0: Sequence[tuple[int, int]], leg1: Sequence[tuple[int, int]]) -> int:
    """A's points minus B's over both legs' deals; A is team 0 of leg 0, team 1 of leg 1."""
    return sum(a - b for a, b in leg0) + sum(a - b for b, a in leg1)


def duplicate_score(leg0: MatchResult, leg1: MatchResult) -> int:
    """The duplicate point difference of a pair, for leg 0's team 0 (bot A).

    The sum over deal indexes of (A's deal score - B's deal score) in both
    legs, from the records' deals. Positive: A wins the pair; negative: B
    does; zero: the pair is drawn.
    """
    check_legs(leg0, leg1)
    return score_difference(deal_scores(leg0), deal_scores(leg1))


def is_forfeit(result: Leg) -> bool:
    return result.reason is ResultReason.FORFEIT


def pair_score(leg0: Leg, leg1: Leg, difference: int) -> float:
    """A's result for the pair: 1 won, 0.5 drawn, 0 lost.

    Decided by the point difference, unless a leg ended by forfeit (its deal
    points stop early and compare nothing): then by the legs' match results,
    A's mean match score above, at or below one half.
    """
    if is_forfeit(leg0) or is_forfeit(leg1):
        mean = (leg0.score0() + 1.0 - leg1.score0()) / 2
        return 1.0 if mean > 0.5 else 0.0 if mean < 0.5 else 0.5
    return 1.0 if difference > 0 else 0.0 if difference < 0 else 0.5
