"""Deal and match records (docs/records.md): export, and replay with every action checked.

A deal record holds the ruleset, the dealer, the hands as the play starts, the
retourne (classic), the bids and the plays as text. Records written here add
``deck`` (the 32 cards after the cut) and ``packets`` (coinche) so a deal can
be rebuilt card for card; a record without them replays from its hands.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypedDict

from arena.engine.actions import format_action, parse_action
from arena.engine.cards import CARD_TEXTS, Card, format_cards, mask_of, parse_cards, python_class
from arena.engine.deal import PACKETS, Deal
from arena.engine.errors import EngineError, IllegalActionError, RecordError, shown
from arena.engine.match import Match
from arena.engine.rules import Ruleset
from arena.engine.scoring import DealOutcome, score_deal


@python_class  # an exception class as in the pure build
class IllegalRecordedAction(RecordError):
    """An action of a record is illegal; names its index, action, seat and choices."""

    def __init__(self, where: str, err: IllegalActionError) -> None:
        self.where = where
        self.cause = err
        super().__init__(f"{where}: {err}")


class DealRecord(TypedDict, total=False):
    """A deal record's JSON object (docs/records.md#deal-record)."""

    #: a preset name or an object of options; left out inside a match record
    ruleset: str | dict[str, Any]
    dealer: int
    #: classic: the turned-up card
    retourne: str
    #: the cards of seats 0..3 as the play starts (as dealt, before it)
    hands: list[list[str]]
    bids: list[str]
    plays: list[str]
    #: the 32 cards after the cut, and the coinche packets: the deal rebuilt card for card
    deck: list[str]
    packets: list[int]


# ------------------------------------------------------------------ export
def deal_record(deal: Deal, *, with_ruleset: bool = True) -> DealRecord:
    """The record of a deal (finished or not)."""
    rec: DealRecord = {}
    if with_ruleset:
        rec["ruleset"] = deal.rules.to_spec()
    rec["dealer"] = deal.dealer
    if deal.retourne >= 0:
        rec["retourne"] = CARD_TEXTS[deal.retourne]
    # the hands as the play starts; before it (or thrown in) the hands as dealt
    hands = deal.initial_hands if any(deal.initial_hands) else deal.hands
    rec["hands"] = [format_cards(h).split() for h in hands]
    rec["bids"] = [format_action(a) for a in deal.bids]
    rec["plays"] = [format_action(a) for a in deal.plays]
    if deal.deck is not None:
        rec["deck"] = [CARD_TEXTS[c] for c in deal.deck]
    if deal.packets is not None:
        rec["packets"] = list(deal.packets)
    return rec


# ------------------------------------------------------------------ replay
def _as_list(rec: Mapping[str, Any], key: str) -> list[Any]:
    v = rec.get(key, [])
    if not isinstance(v, list):
        raise RecordError(f"'{key}' must be a list, not {type(v).__name__}")
    return v


def deal_from_record(rec: Mapping[str, Any], rules: Ruleset | None = None) -> Deal:
    """Rebuild a deal from its record and replay every action, checking each."""
    if not isinstance(rec, Mapping):
        raise RecordError(f"a deal record is a JSON object, not {type(rec).__name__}")
    try:
        if "ruleset" in rec:
            rules = Ruleset.from_spec(rec["ruleset"])
        if rules is None:
            raise RecordError("the record names no ruleset")
        dealer = rec.get("dealer")
        if not isinstance(dealer, int) or isinstance(dealer, bool) or not 0 <= dealer < 4:
            raise RecordError(f"'dealer' must be a seat 0..3, not {shown(dealer)}")
        deal = _initial_deal(rec, rules, dealer)
    except RecordError:
        raise
    except EngineError as e:
        raise RecordError(str(e)) from None
    bids = _as_list(rec, "bids")
    plays = _as_list(rec, "plays")
    for i, text in enumerate(bids):
        _replay_one(deal, text, f"bids[{i}] (action {i})", bidding=True)
    if deal.phase == "bidding" and (bids or plays) and plays:
        raise RecordError(f"the bidding is not over after {len(bids)} bids but plays follow")
    for i, text in enumerate(plays):
        _replay_one(deal, text, f"plays[{i}] (action {len(bids) + i})", bidding=False)
    return deal


def _replay_one(deal: Deal, text: Any, where: str, *, bidding: bool) -> None:
    if not isinstance(text, str):
        raise RecordError(f"{where}: an action is a string, not {shown(text)}")
    if deal.is_over:
        raise RecordError(f"{where}: {shown(text)} comes after the end of the deal")
    if bidding and deal.phase != "bidding":
        raise RecordError(f"{where}: {shown(text)} is recorded as a bid but the bidding is over")
    try:
        action = parse_action(text)
    except EngineError as e:
        raise RecordError(f"{where}: {e}") from None
    try:
        deal.apply(action)
    except IllegalActionError as e:
        raise IllegalRecordedAction(where, e) from None


def _initial_deal(rec: Mapping[str, Any], rules: Ruleset, dealer: int) -> Deal:
    hands_text = rec.get("hands")
    if not isinstance(hands_text, list) or len(hands_text) != 4:
        raise RecordError("'hands' must be a list of four hands")
    for i, h in enumerate(hands_text):
        if not isinstance(h, list | str):
            raise RecordError(f"hands[{i}] must be a list of cards such as ['7S', 'JH'], not {shown(h)}")
    hands = [mask_of(parse_cards(h)) for h in hands_text]
    retourne = rec.get("retourne")
    if rules.is_coinche and retourne is not None:
        raise RecordError(
            f"a coinche deal has no retourne, but the record has {shown(retourne)}: "
            f"is it a classic deal? (ruleset {rules.preset})"
        )
    if not rules.is_coinche and retourne is None:
        raise RecordError(f"a classic deal needs its 'retourne' (ruleset {rules.preset})")
    r = Card.parse(retourne) if isinstance(retourne, str) else -1
    if retourne is not None and not isinstance(retourne, str):
        raise RecordError(f"'retourne' is a card such as 'JH', not {shown(retourne)}")
    if "deck" in rec:
        Deal.from_hands(rules, dealer, hands, r)  # the hands' own checks, with their messages
        deck = [int(c) for c in parse_cards(_as_list(rec, "deck"))]
        packets = tuple(_as_list(rec, "packets")) if rules.is_coinche else (3, 3, 2)
        if packets not in PACKETS:
            raise RecordError(f"'packets' must be one of {[list(p) for p in PACKETS]}")
        deal = Deal.from_deck(rules, dealer, deck, packets)
        if r >= 0 and deal.retourne != r:
            raise RecordError("the retourne is not the card the deck turns up")
        _check_hands_match(deal, rec, hands)
        return deal
    return Deal.from_hands(rules, dealer, hands, r)


def _check_hands_match(deal: Deal, rec: Mapping[str, Any], hands: list[int]) -> None:
    """With a deck, the recorded hands must be those it deals (checked after the play starts)."""
    if deal.rules.is_coinche and hands != deal.hands:
        raise RecordError("the hands are not those the deck deals")
    if not deal.rules.is_coinche:
        sizes = {h.bit_count() for h in hands}
        if sizes == {5} and hands != deal.hands:
            raise RecordError("the hands are not those the deck deals")


def replay_deal(rec: Mapping[str, Any], rules: Ruleset | None = None) -> tuple[Deal, DealOutcome]:
    """Replay a whole deal record; it must be complete."""
    deal = deal_from_record(rec, rules)
    if not deal.is_over:
        where = "bidding" if deal.phase == "bidding" else f"play, trick {deal.trick_number + 1}"
        raise RecordError(
            f"the record stops before the end of the deal ({where}; seat {deal.to_act} "
            f"to act, legal: {', '.join(deal.format_legal())})"
        )
    if deal.deck is not None and deal.initial_hands != [0, 0, 0, 0] and not deal.thrown_in:
        recorded = [mask_of(parse_cards(h)) for h in rec["hands"]]
        if recorded != deal.initial_hands:
            raise RecordError("the hands are not those the deck deals")
    return deal, score_deal(deal)


def replay_match(rec: Mapping[str, Any]) -> tuple[Match, list[DealOutcome]]:
    """Replay a match record: every deal checked, the score carried as docs/rules.md#end-of-a-match says."""
    if not isinstance(rec, Mapping):
        raise RecordError(f"a match record is a JSON object, not {type(rec).__name__}")
    try:
        rules = Ruleset.from_spec(rec.get("ruleset"))  # type: ignore[arg-type]
    except EngineError as e:
        raise RecordError(str(e)) from None
    target = rec.get("target")
    if target is not None and (not isinstance(target, int) or isinstance(target, bool) or target < 1):
        raise RecordError(f"'target' must be a positive whole number, not {shown(target)}")
    deals = _as_list(rec, "deals")
    if not deals:
        raise RecordError("a match record has at least one deal")
    first = deals[0].get("dealer") if isinstance(deals[0], Mapping) else None
    if not isinstance(first, int):
        raise RecordError("deals[0]: 'dealer' must be a seat 0..3")
    match = Match(rules, rec.get("seed", 0), dealer=first, target=target)
    for i, d in enumerate(deals):
        if not isinstance(d, Mapping):
            raise RecordError(f"deals[{i}]: a deal record is a JSON object")
        if match.is_over:
            raise RecordError(
                f"deals[{i}]: the match was decided after {i} deals "
                f"({match.totals[0]}-{match.totals[1]}); no deal may follow"
            )
        if d.get("dealer") != match.next_dealer:
            raise RecordError(
                f"deals[{i}]: the dealer is seat {match.next_dealer} (it moves one seat each deal), "
                f"not {shown(d.get('dealer'))}"
            )
        if "ruleset" in d:
            try:
                same_rules = Ruleset.from_spec(d["ruleset"]) == rules
            except EngineError as e:
                raise RecordError(f"deals[{i}]: {e}") from None
            if not same_rules:
                raise RecordError(f"deals[{i}]: its ruleset differs from the match's")
        try:
            deal, _ = replay_deal(d, rules)
        except RecordError as e:
            raise RecordError(f"deals[{i}]: {e}") from None
        match.add(deal)
    return match, match.outcomes


def match_record(match: Match, players: Sequence[str] | None = None) -> dict[str, Any]:
    rec: dict[str, Any] = {"ruleset": match.rules.to_spec()}
    if match.target != match.rules.target:
        rec["target"] = match.target
    rec["seed"] = match.seed
    if players is not None:
        rec["players"] = list(players)
    rec["deals"] = [deal_record(d, with_ruleset=False) for d in match.deals]
    return rec


def match_outcome_json(match: Match) -> dict[str, Any]:
    return {
        "deals": [o.as_json() for o in match.outcomes],
        "totals": list(match.totals),
        "winner": match.winner,
        # added: tells a draw after a fixed number of deals from a match not yet decided
        "over": match.is_over,
    }
