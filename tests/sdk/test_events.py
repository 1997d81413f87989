"""Public events and match messages as the bot's hooks receive them."""

from __future__ import annotations

from belote.arena.v1 import bot_service_pb2 as bs
from belote.arena.v1 import game_pb2 as pb
from belote_bot import (
    Action,
    BidMade,
    Card,
    CardPlayed,
    DealEnded,
    DealStarted,
    DeclarationsShown,
    Event,
    MatchInfo,
    MatchResult,
    Strike,
    StrikeGiven,
    TrickCompleted,
)
from belote_bot.events import event_from_proto, ruleset_from_proto

from arena.engine import Ruleset, mask_of, parse_action, parse_cards
from arena.engine.rules import PRESETS
from arena.referee.convert import ruleset_to_proto


def event(**fields: object) -> pb.PublicEvent:
    return pb.PublicEvent(match_id="m", deal_index=3, **fields)  # type: ignore[arg-type]


def test_each_public_event_becomes_its_dataclass() -> None:
    started = event_from_proto(event(deal_started=pb.DealStarted(dealer=2, retourne=12)))
    assert started == DealStarted(match_id="m", deal_index=3, dealer=2, retourne=Card.parse("JH"),
                                  raw=pb.PublicEvent())
    assert event_from_proto(event(deal_started=pb.DealStarted(dealer=1))).retourne is None  # type: ignore[attr-defined]

    ninety = parse_action("90H")
    bid = event_from_proto(event(action_played=pb.ActionPlayed(seat=1, action=ninety, text="90H")))
    assert isinstance(bid, BidMade) and (bid.seat, str(bid.action)) == (1, "90H")
    card = event_from_proto(event(action_played=pb.ActionPlayed(seat=3, action=parse_action("KH belote"))))
    assert isinstance(card, CardPlayed) and card.card == Card.parse("KH") and card.action.says_belote

    cards = [int(c) for c in parse_cards("7S AS 8S 9S")]
    trick = event_from_proto(event(trick_completed=pb.TrickCompleted(leader=0, cards=cards, winner=1)))
    assert isinstance(trick, TrickCompleted)
    assert (trick.leader, " ".join(map(str, trick.cards)), trick.winner) == (0, "7S AS 8S 9S", 1)

    melds = [mask_of(parse_cards("JS JH JD JC 7H 8H 9H")), 0, mask_of(parse_cards("QD KD AD")), 0]
    shown = event_from_proto(event(declarations_shown=pb.DeclarationsShown(team=0, points=240, melds=melds)))
    assert isinstance(shown, DeclarationsShown) and (shown.team, shown.points) == (0, 240)
    assert [(m.seat, m.kind, " ".join(map(str, m.cards)), m.points) for m in shown.melds] == [
        (0, "carre", "JS JH JD JC", 200), (0, "tierce", "7H 8H 9H", 20), (2, "tierce", "QD KD AD", 20)]
    nobody = event_from_proto(event(declarations_shown=pb.DeclarationsShown(points=0)))
    assert isinstance(nobody, DeclarationsShown) and nobody.team is None and nobody.melds == ()

    ended = event_from_proto(event(deal_ended=pb.DealEnded(outcome_json='{"made": true}', score=[162, 0],
                                                           match_score=[500, 20])))
    assert isinstance(ended, DealEnded)
    assert (ended.score, ended.match_score, ended.outcome) == ((162, 0), (500, 20), {"made": True})
    bad = event_from_proto(event(deal_ended=pb.DealEnded(outcome_json="not json")))
    assert isinstance(bad, DealEnded) and bad.outcome == {}

    strike = event_from_proto(event(strike_given=pb.StrikeGiven(
        seat=2, reason="late", fallback_action=12, strikes=2, kind=pb.STRIKE_REASON_LATE)))
    assert strike == StrikeGiven(match_id="m", deal_index=3, seat=2, kind="late", reason="late",
                                 fallback_action=Action.parse("JH"), strikes=2, raw=pb.PublicEvent())


def test_an_unknown_event_arrives_as_a_bare_event() -> None:
    bare = event_from_proto(event())
    assert type(bare) is Event and (bare.match_id, bare.deal_index) == ("m", 3)
    odd = event_from_proto(event(action_played=pb.ActionPlayed(seat=0, action=0xFFFFFFFF)))
    assert type(odd) is Event


def test_match_messages() -> None:
    for name, rules in PRESETS.items():
        assert ruleset_from_proto(ruleset_to_proto(rules)) == rules, name
    custom = Ruleset.from_spec({"preset": "coinche", "must_undertrump": True, "deals": 12})
    assert ruleset_from_proto(ruleset_to_proto(custom)) == custom
    assert ruleset_from_proto(pb.Ruleset(preset="no such preset")) is None

    info = MatchInfo.from_proto(bs.MatchStarted(match_id="m", seat=3, players=list("abcd"), target=701,
                                                ruleset=ruleset_to_proto(PRESETS["club"])))
    assert (info.seat, info.team, info.partner, info.players, info.target) == (3, 1, 1, tuple("abcd"), 701)
    assert info.ruleset == PRESETS["club"]

    won = MatchResult.from_proto(bs.MatchEnded(match_id="m", seat=1, result=pb.MatchResult(
        totals=[300, 520], winner=1, reason="finished", deals=7)))
    assert (won.team, won.winner, won.won, won.totals, won.forfeit_seat) == (1, 1, True, (300, 520), None)
    draw = MatchResult.from_proto(bs.MatchEnded(seat=0, result=pb.MatchResult(totals=[400, 400])))
    assert draw.won is None
    forfeit = MatchResult.from_proto(bs.MatchEnded(seat=0, result=pb.MatchResult(
        winner=1, reason="forfeit", forfeit_seat=2, detail="too many strikes")))
    assert (forfeit.won, forfeit.reason, forfeit.forfeit_seat) == (False, "forfeit", 2)

    strike = Strike.from_proto(bs.Strike(match_id="m", seat=0, request_id=9, reason="illegal answer",
                                         fallback_action=0xFFFFFFFF, strikes=1, max_strikes=5,
                                         kind=pb.STRIKE_REASON_ILLEGAL, detail="answered 'AS'; legal: 7H"))
    assert strike.fallback_action is None and (strike.strikes, strike.max_strikes) == (1, 5)
    assert (strike.kind, strike.detail) == ("illegal", "answered 'AS'; legal: 7H")


def test_a_strike_says_its_kind_and_an_unknown_kind_is_unspecified() -> None:
    kinds = {pb.STRIKE_REASON_UNSPECIFIED: "unspecified", pb.STRIKE_REASON_LATE: "late",
             pb.STRIKE_REASON_ILLEGAL: "illegal", pb.STRIKE_REASON_NO_ACTION: "no_action", 99: "unspecified"}
    assert set(kinds) >= set(pb.StrikeReason.values())
    for value, kind in kinds.items():
        strike = Strike.from_proto(bs.Strike(kind=value))  # type: ignore[arg-type]
        given = event_from_proto(event(strike_given=pb.StrikeGiven(kind=value)))  # type: ignore[arg-type]
        assert strike.kind == kind and isinstance(given, StrikeGiven) and given.kind == kind
        assert strike.detail == ""
