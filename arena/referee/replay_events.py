"""A finished match's public events, rebuilt from its record.

A node keeps no finished match in memory: a spectator who comes after the end
(``WatchMatch``) gets the events the runner published during the match,
rebuilt here from the :class:`MatchRecord`. The deals are dealt again from
the seed, the recorded actions applied one by one with the engine, and each
step gives the same :class:`PublicEvent` the runner sent
(:mod:`arena.referee.runner`): ``deal_started``, ``strike_given`` (before the
action the referee played instead), ``action_played``, ``trick_completed``,
``declarations_shown`` once trick 2 shows them, and ``deal_ended`` with the
outcome and the match score. A match that ended mid-deal (a forfeit) ends
with that deal's actions and, for a strike that forfeited it, its
``strike_given``, and no ``deal_ended``.

The events come lazily, deal after deal: a watcher costs one deal of the
engine's state, never the whole match's events at once.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

from belote.arena.v1 import game_pb2 as pb

from arena.engine import Deal, EngineError, Match, RecordError, Ruleset, format_action, parse_action
from arena.engine.record import DealRecord
from arena.records import MatchRecord, StrikeEntry
from arena.referee.convert import STRIKE_REASONS

__all__ = ["public_events"]


def public_events(record: MatchRecord) -> Iterator[pb.PublicEvent]:
    """The public events of ``record``'s match, in the order its watchers saw them.

    Raises :class:`RecordError` (while iterating) on a record that does not
    replay: its deals are not the seed's, or an action is illegal.
    """
    try:
        rules = Ruleset.from_spec(record.ruleset)
    except EngineError as e:
        raise RecordError(str(e)) from None
    match = Match(rules, record.seed, target=record.target)
    strikes = _strikes_by_decision(record.strikes)
    team_strikes = [0, 0]
    deals: list[tuple[DealRecord, bool]] = [(d, True) for d in record.deals]
    if record.unfinished_deal is not None:
        deals.append((record.unfinished_deal, False))
    for index, (rec, finished) in enumerate(deals):
        deal = match.new_deal()
        if rec.get("dealer") != deal.dealer:
            raise RecordError(f"deals[{index}]: dealt by seat {rec.get('dealer')!r}, but the seed gives "
                              f"seat {deal.dealer}")
        event = _EventMaker(record.match_id, index)
        retourne = {"retourne": deal.retourne} if deal.retourne >= 0 else {}
        yield event(deal_started=pb.DealStarted(dealer=deal.dealer, **retourne))
        actions = [*rec.get("bids", ()), *rec.get("plays", ())]
        for decision, text in enumerate(actions):
            yield from _strikes_given(strikes.get((index, decision), ()), team_strikes, event)
            yield from _play(deal, text, event, f"deals[{index}] action {decision}")
        # a strike that forfeited the match: its fallback was never played
        yield from _strikes_given(strikes.get((index, len(actions)), ()), team_strikes, event)
        if not finished:
            return
        if not deal.is_over:
            raise RecordError(f"deals[{index}]: the record stops before the end of the deal")
        outcome = match.add(deal)
        match.deals.clear()  # the outcomes carry the score; the deals are not needed again
        yield event(deal_ended=pb.DealEnded(
            outcome_json=json.dumps(outcome.as_json()), score=outcome.score, match_score=match.totals,
        ))


class _EventMaker:
    """``PublicEvent(match_id=..., deal_index=..., **kind)`` for one deal."""

    __slots__ = ("deal_index", "match_id")

    def __init__(self, match_id: str, deal_index: int) -> None:
        self.match_id = match_id
        self.deal_index = deal_index

    def __call__(self, **kind: Any) -> pb.PublicEvent:
        return pb.PublicEvent(match_id=self.match_id, deal_index=self.deal_index, **kind)


def _strikes_by_decision(strikes: Sequence[StrikeEntry]) -> dict[tuple[int, int], list[StrikeEntry]]:
    out: dict[tuple[int, int], list[StrikeEntry]] = {}
    for s in strikes:
        out.setdefault((s.deal, s.decision), []).append(s)
    return out


def _strikes_given(
    given: Sequence[StrikeEntry], team_strikes: list[int], event: _EventMaker,
) -> Iterator[pb.PublicEvent]:
    for s in given:
        team_strikes[s.seat & 1] += 1
        try:
            fallback = parse_action(s.fallback)
        except EngineError as e:
            raise RecordError(f"strike at deal {s.deal}, decision {s.decision}: {e}") from None
        yield event(strike_given=pb.StrikeGiven(
            seat=s.seat, reason=s.reason, kind=STRIKE_REASONS[s.kind], fallback_action=fallback,
            strikes=team_strikes[s.seat & 1],
        ))


def _play(deal: Deal, text: object, event: _EventMaker, where: str) -> Iterator[pb.PublicEvent]:
    """Apply one recorded action; the events the runner published for it."""
    if not isinstance(text, str):
        raise RecordError(f"{where}: an action is a string, not {text!r}")
    try:
        action = parse_action(text)
        seat = deal.to_act
        tricks_before = len(deal.tricks)
        shown_before = deal.decl_shown
        deal.apply(action)
    except EngineError as e:
        raise RecordError(f"{where}: {e}") from None
    yield event(action_played=pb.ActionPlayed(seat=seat, action=action, text=format_action(action)))
    if len(deal.tricks) > tricks_before:
        leader, cards, winner = deal.tricks[-1]
        yield event(trick_completed=pb.TrickCompleted(leader=leader, cards=cards, winner=winner))
    if deal.decl_shown and not shown_before:
        melds = deal.shown_melds()
        team = {"team": deal.decl_team} if deal.decl_team is not None else {}
        yield event(declarations_shown=pb.DeclarationsShown(points=deal.decl_points, melds=melds, **team))
