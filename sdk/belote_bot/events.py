"""What happens around a bot's decisions, as small readable dataclasses.

- :class:`MatchInfo` goes to ``Bot.on_match_start``, :class:`MatchResult` to
  ``Bot.on_match_end`` and :class:`Strike` to ``Bot.on_strike``; each is sent
  per seat (a bot holding two seats of a match hears each twice).
- The public events of a deal go to ``Bot.on_event``, once per match even
  when the bot holds two seats of it, in order: :class:`DealStarted`,
  :class:`BidMade`, :class:`CardPlayed`, :class:`TrickCompleted`,
  :class:`DeclarationsShown`, :class:`DealEnded`, :class:`StrikeGiven`. They
  all derive from :class:`Event`, so ``match`` statements read well::

      match event:
          case CardPlayed(seat=seat, card=card): ...
          case DealEnded(score=score): ...

Each keeps the message it came from as ``raw``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from belote.arena.v1 import bot_service_pb2, game_pb2

from arena.engine.cards import CARDS, Card
from arena.engine.errors import EngineError
from arena.engine.rules import OPTION_NAMES, Ruleset
from belote_bot.observation import shown_melds
from belote_bot.types import Action, ShownMeld

__all__ = [
    "BidMade",
    "CardPlayed",
    "DealEnded",
    "DealStarted",
    "DeclarationsShown",
    "Event",
    "MatchInfo",
    "MatchResult",
    "Strike",
    "StrikeGiven",
    "StrikeKind",
    "TrickCompleted",
    "event_from_proto",
    "ruleset_from_proto",
]


def _action(code: int) -> Action | None:
    try:
        return Action.of(code)
    except EngineError:
        return None


#: why a seat got a strike: no answer in time, an answer not among the legal actions, the
#: no-action code (what the SDK answers when ``act`` raises or returns something illegal),
#: or a reason this SDK does not know
StrikeKind: TypeAlias = Literal["late", "illegal", "no_action", "unspecified"]

_STRIKE_KINDS: dict[int, StrikeKind] = {
    game_pb2.STRIKE_REASON_LATE: "late",
    game_pb2.STRIKE_REASON_ILLEGAL: "illegal",
    game_pb2.STRIKE_REASON_NO_ACTION: "no_action",
}


def _strike_kind(value: int) -> StrikeKind:
    return _STRIKE_KINDS.get(value, "unspecified")


def ruleset_from_proto(msg: game_pb2.Ruleset) -> Ruleset | None:
    """The engine's ruleset of a ``Ruleset`` message; None if this SDK does not know it."""
    fields: dict[str, Any] = {
        "target": msg.target, "annonces": msg.annonces, "belote": msg.belote,
        "belote_counts_against_takers": msg.belote_counts_against_takers,
        "must_undertrump": msg.must_undertrump, "cut_min": msg.cut_min, "rounding": msg.rounding,
        "max_bid": msg.max_bid, "deals": msg.deals or None, "redeal_low_hand": msg.redeal_low_hand,
        "redeal_four_sevens": msg.redeal_four_sevens,
    }
    try:
        rules = Ruleset.from_spec(msg.preset)
        rules = rules.with_options(**{k: v for k, v in fields.items() if k in OPTION_NAMES})
    except (EngineError, TypeError, ValueError):
        return None
    return rules if not msg.game or msg.game == rules.game else None


# ------------------------------------------------------------------ per seat
@dataclass(frozen=True, slots=True, kw_only=True)
class MatchInfo:
    """A match this bot plays: its seat and who sits where."""

    match_id: str
    seat: int
    #: the bot names at seats 0..3
    players: tuple[str, ...]
    target: int
    #: None when the referee uses options this SDK's engine does not know
    ruleset: Ruleset | None
    raw: bot_service_pb2.MatchStarted = field(repr=False, compare=False)

    @property
    def team(self) -> int:
        return self.seat & 1

    @property
    def partner(self) -> int:
        return self.seat ^ 2

    @classmethod
    def from_proto(cls, msg: bot_service_pb2.MatchStarted) -> MatchInfo:
        return cls(
            match_id=msg.match_id, seat=msg.seat, players=tuple(msg.players), target=msg.target,
            ruleset=ruleset_from_proto(msg.ruleset), raw=msg,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class MatchResult:
    """How a match ended, seen from one seat."""

    match_id: str
    seat: int
    #: points of team 0 and team 1
    totals: tuple[int, ...]
    #: the winning team, None for a draw
    winner: int | None
    #: "finished", "forfeit" or "aborted"
    reason: str
    forfeit_seat: int | None
    detail: str
    deals: int
    raw: bot_service_pb2.MatchEnded = field(repr=False, compare=False)

    @property
    def team(self) -> int:
        return self.seat & 1

    @property
    def won(self) -> bool | None:
        """True if this seat's team won, False if it lost, None for a draw."""
        return None if self.winner is None else self.winner == self.seat & 1

    @classmethod
    def from_proto(cls, msg: bot_service_pb2.MatchEnded) -> MatchResult:
        r = msg.result
        return cls(
            match_id=msg.match_id, seat=msg.seat, totals=tuple(r.totals),
            winner=r.winner if r.HasField("winner") else None, reason=r.reason,
            forfeit_seat=r.forfeit_seat if r.HasField("forfeit_seat") else None,
            detail=r.detail, deals=r.deals, raw=msg,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Strike:
    """The referee played a fallback action for this bot (late or illegal answer)."""

    match_id: str
    seat: int
    request_id: int
    #: "late", "illegal", "no_action" or "unspecified"
    kind: StrikeKind
    #: the public sentence, as in :class:`StrikeGiven`
    reason: str
    #: for this bot only: what it answered and what was legal ("answered 'AS'; legal: 7H, KH")
    detail: str
    fallback_action: Action | None
    #: the strikes of this seat's team so far, and how many forfeit the match
    strikes: int
    max_strikes: int
    raw: bot_service_pb2.Strike = field(repr=False, compare=False)

    @classmethod
    def from_proto(cls, msg: bot_service_pb2.Strike) -> Strike:
        return cls(
            match_id=msg.match_id, seat=msg.seat, request_id=msg.request_id, kind=_strike_kind(msg.kind),
            reason=msg.reason, detail=msg.detail, fallback_action=_action(msg.fallback_action),
            strikes=msg.strikes, max_strikes=msg.max_strikes, raw=msg,
        )


# -------------------------------------------------------------- public events
@dataclass(frozen=True, slots=True, kw_only=True)
class Event:
    """A public event of a match; an event kind this SDK does not know arrives as a bare Event."""

    match_id: str
    deal_index: int
    raw: game_pb2.PublicEvent = field(repr=False, compare=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class DealStarted(Event):
    dealer: int
    #: classic: the turned-up card
    retourne: Card | None


@dataclass(frozen=True, slots=True, kw_only=True)
class BidMade(Event):
    seat: int
    action: Action


@dataclass(frozen=True, slots=True, kw_only=True)
class CardPlayed(Event):
    seat: int
    #: the card with its words ("KH belote", "AS tierce")
    action: Action

    @property
    def card(self) -> Card:
        return CARDS[self.action.code & 31]


@dataclass(frozen=True, slots=True, kw_only=True)
class TrickCompleted(Event):
    leader: int
    cards: tuple[Card, ...]
    winner: int


@dataclass(frozen=True, slots=True, kw_only=True)
class DeclarationsShown(Event):
    #: the team whose declarations score, None when nobody scores
    team: int | None
    points: int
    melds: tuple[ShownMeld, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class DealEnded(Event):
    #: points of team 0 and team 1 for this deal, and the match score after it
    score: tuple[int, ...]
    match_score: tuple[int, ...]
    #: the deal's outcome (docs/records.md#deal-outcome; {} if it could not be read)
    outcome: dict[str, Any] = field(repr=False)
    outcome_json: str = field(repr=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class StrikeGiven(Event):
    seat: int
    #: "late", "illegal", "no_action" or "unspecified"
    kind: StrikeKind
    reason: str
    fallback_action: Action | None
    strikes: int


def _outcome(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text) if text else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def event_from_proto(msg: game_pb2.PublicEvent) -> Event:
    """The dataclass of one public event."""
    base: dict[str, Any] = {"match_id": msg.match_id, "deal_index": msg.deal_index, "raw": msg}
    kind = msg.WhichOneof("event")
    if kind == "deal_started":
        d = msg.deal_started
        retourne = CARDS[d.retourne] if d.HasField("retourne") and d.retourne < 32 else None
        return DealStarted(**base, dealer=d.dealer, retourne=retourne)
    if kind == "action_played":
        p = msg.action_played
        action = _action(p.action)
        if action is None:
            return Event(**base)
        if action.is_bid:
            return BidMade(**base, seat=p.seat, action=action)
        return CardPlayed(**base, seat=p.seat, action=action)
    if kind == "trick_completed":
        t = msg.trick_completed
        return TrickCompleted(**base, leader=t.leader, cards=tuple(CARDS[c & 31] for c in t.cards),
                              winner=t.winner)
    if kind == "declarations_shown":
        s = msg.declarations_shown
        team = s.team if s.HasField("team") else None
        melds = tuple(shown_melds(s.melds, team))
        return DeclarationsShown(**base, team=team, points=s.points,
                                 melds=melds)
    if kind == "deal_ended":
        e = msg.deal_ended
        return DealEnded(**base, score=tuple(e.score), match_score=tuple(e.match_score),
                         outcome=_outcome(e.outcome_json), outcome_json=e.outcome_json)
    if kind == "strike_given":
        g = msg.strike_given
        return StrikeGiven(**base, seat=g.seat, kind=_strike_kind(g.kind), reason=g.reason,
                           fallback_action=_action(g.fallback_action), strikes=g.strikes)
    return Event(**base)
