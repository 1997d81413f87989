"""docs/records.md: the fields of deal and match records and outcomes, and replay errors.

Records come from deals played at random under a seed; the error tests spoil
one field of a good record and check that the replay stops with a
:class:`RecordError` whose message says what is wrong and where.
"""

from __future__ import annotations

import copy
import json
import random
import re
from collections.abc import Callable
from typing import Any

import pytest

from arena.engine import (
    CARDS,
    Card,
    Deal,
    EngineError,
    Match,
    RecordError,
    Ruleset,
    deal_record,
    match_record,
    replay_deal,
    replay_match,
    score_deal,
)
from arena.engine import actions as A
from arena.engine.cards import SUIT_MASKS
from arena.engine.record import match_outcome_json

CARD = re.compile(r"^[789TJQKA][SHDC]$")
CLASSIC_BID = re.compile(r"^(pass|take|[SHDC])$")
COINCHE_BID = re.compile(r"^(pass|\d{2,3}[SHDC]|capot[SHDC]|coinche|surcoinche)$")
PLAY = re.compile(r"^[789TJQKA][SHDC]( (belote|rebelote|tierce|cinquante|cent|carre))*$")
OUTCOME_FIELDS = {"takers", "trump", "made", "tricks", "card_points", "belote", "declarations", "score",
                  "held_for_next_deal"}

Record = dict[str, Any]


# ----------------------------------------------------------------- helpers
def play(spec: str | dict[str, Any], seed: int) -> Deal:
    """A deal of a one-deal match under ``spec``, played with random legal actions."""
    deal = Match(Ruleset.from_spec(spec), seed).new_deal()
    rng = random.Random(seed)
    while not deal.is_over:
        deal.apply(rng.choice(deal.legal_actions()))
    return deal


def find_deal(spec: str | dict[str, Any], wanted: Callable[[Deal], bool] = lambda d: not d.thrown_in) -> Deal:
    """The first random deal under ``spec`` that shows what a test needs."""
    return next(d for d in (play(spec, seed) for seed in range(2000)) if wanted(d))


def record(spec: str | dict[str, Any], wanted: Callable[[Deal], bool] = lambda d: not d.thrown_in) -> Record:
    """The JSON record of such a deal, as a file would hold it."""
    rec: Record = json.loads(json.dumps(deal_record(find_deal(spec, wanted))))
    return rec


def thrown_in_record(preset: str) -> Record:
    """The record of a deal in which every seat passes."""
    deal = Match(Ruleset.from_spec(preset), 0).new_deal()
    while not deal.is_over:
        deal.apply(A.PASS)
    rec: Record = json.loads(json.dumps(deal_record(deal)))
    return rec


def core(rec: Record) -> Record:
    """A record reduced to its core fields (no deck, no packets: docs/records.md#records-without-deck)."""
    return {k: v for k, v in rec.items() if k in ("ruleset", "dealer", "retourne", "hands", "bids", "plays")}


def replay_error(rec: Record) -> str:
    with pytest.raises(RecordError) as err:
        replay_deal(rec)
    assert isinstance(err.value, EngineError)
    return str(err.value)


def match_error(rec: Record) -> str:
    with pytest.raises(RecordError) as err:
        replay_match(rec)
    return str(err.value)


def played_match(spec: str | dict[str, Any], deals: int, seed: int = 0) -> Match:
    match = Match(Ruleset.from_spec(spec), seed)
    rng = random.Random(seed)
    for _ in range(deals):
        deal = match.new_deal()
        while not deal.is_over:
            deal.apply(rng.choice(deal.legal_actions()))
        match.add(deal)
    return match


def first_illegal_card(rec: Record) -> tuple[int, str, int, list[str]]:
    """(play index, a card the seat holds but may not play, the seat, its legal choices)."""
    deal = Deal.from_hands(
        Ruleset.from_spec(rec["ruleset"]), rec["dealer"],
        [sum(1 << _card(c) for c in h) for h in rec["hands"]],
        _card(rec["retourne"]) if "retourne" in rec else -1,
    )
    for bid in rec["bids"]:
        deal.apply(A.parse_action(bid))
    for i, text in enumerate(rec["plays"]):
        held_not_legal = deal.hands[deal.to_act] & ~deal.legal_cards()
        if held_not_legal:
            card = (held_not_legal & -held_not_legal).bit_length() - 1
            return i, str(CARDS[card]), deal.to_act, deal.format_legal()
        deal.apply(A.parse_action(text))
    raise AssertionError("no constrained play in this deal")


def _card(text: str) -> int:
    return int(Card.parse(text))


# ------------------------------------------------------------ deal record
@pytest.mark.parametrize("preset", ["classic", "classic-annonces", "club", "coinche"])
def test_a_deal_record_holds_the_core_fields(preset: str) -> None:
    rec = record(preset)
    assert {"ruleset", "dealer", "hands", "bids", "plays"} <= rec.keys()
    assert rec["ruleset"] == preset
    assert rec["dealer"] in range(4)


@pytest.mark.parametrize("preset", ["classic", "coinche"])
def test_hands_are_four_lists_of_eight_card_texts_as_the_play_starts(preset: str) -> None:
    rec = record(preset)
    assert len(rec["hands"]) == 4
    assert all(len(h) == 8 and all(CARD.match(c) for c in h) for h in rec["hands"])
    assert len({c for h in rec["hands"] for c in h}) == 32


@pytest.mark.parametrize("preset", ["classic", "coinche"])
def test_plays_are_the_32_cards_in_the_order_played(preset: str) -> None:
    rec = record(preset)
    assert all(PLAY.match(p) for p in rec["plays"])
    assert len({p.split()[0] for p in rec["plays"]}) == 32


def test_a_classic_record_has_its_retourne() -> None:
    rec = record("classic")
    assert CARD.match(rec["retourne"])
    assert any(rec["retourne"] in h for h in rec["hands"])


def test_a_coinche_record_has_no_retourne() -> None:
    assert "retourne" not in record("coinche")


def test_classic_bids_are_pass_take_or_a_suit() -> None:
    rec = record("classic", lambda d: not d.thrown_in and len(d.bids) > 4)
    assert all(CLASSIC_BID.match(b) for b in rec["bids"])
    assert rec["bids"][-1] in "SHDC"


def test_coinche_bids_are_pass_a_value_and_suit_capot_coinche_or_surcoinche() -> None:
    rec = record("coinche", lambda d: A.SURCOINCHE in d.bids)
    assert all(COINCHE_BID.match(b) for b in rec["bids"])
    assert rec["bids"][-1] == "surcoinche"


def test_a_declared_belote_rides_on_the_plays_as_words() -> None:
    rec = record("club", lambda d: d.belote_team() is not None)
    words = [p.split()[1] for p in rec["plays"] if " " in p]
    assert words == ["belote", "rebelote"]


def test_an_automatic_belote_carries_no_words() -> None:
    rec = record("classic", lambda d: d.belote_team() is not None)
    assert all(" " not in p for p in rec["plays"])


def test_declarations_ride_on_the_first_card_of_a_seat() -> None:
    rec = record("classic-annonces", lambda d: d.decl_team is not None)
    announced = [i for i, p in enumerate(rec["plays"]) if set(p.split()[1:]) & set(A.DECL_KINDS)]
    assert announced and all(i < 4 for i in announced)


def test_a_ruleset_override_is_recorded_as_an_object_and_replayed() -> None:
    spec = {"preset": "coinche", "must_undertrump": True}
    rec = record(spec)
    assert rec["ruleset"] == spec
    deal, _ = replay_deal(rec)
    assert deal.rules.must_undertrump


def test_a_record_of_the_core_fields_alone_replays() -> None:
    rec = record("classic")
    deal, outcome = replay_deal(core(rec))
    assert outcome == replay_deal(rec)[1]
    assert deal.deck is None


def test_a_thrown_in_classic_deal_may_give_its_five_card_hands() -> None:
    rec = core(thrown_in_record("classic"))
    assert all(len(h) == 5 for h in rec["hands"])
    assert rec["bids"] == ["pass"] * 8 and rec["plays"] == []
    assert replay_deal(rec)[1].thrown_in


# ---------------------------------------------------------------- outcome
@pytest.mark.parametrize("preset", ["classic", "coinche"])
def test_the_outcome_has_record_md_fields(preset: str) -> None:
    _, outcome = replay_deal(record(preset))
    out = json.loads(json.dumps(outcome.as_json()))
    assert out.keys() >= OUTCOME_FIELDS
    assert out["takers"] in (0, 1) and out["trump"] in "SHDC" and out["made"] in (True, False, None)
    assert len(out["tricks"]) == 8
    assert all(t.keys() == {"leader", "cards", "winner"} and len(t["cards"]) == 4 for t in out["tricks"])
    assert out["belote"] in (0, 1, None)
    assert len(out["card_points"]) == len(out["declarations"]) == len(out["score"]) == 2


def test_the_outcome_of_a_thrown_in_deal_is_just_that() -> None:
    _, outcome = replay_deal(thrown_in_record("classic"))
    assert outcome.as_json() == {"thrown_in": True, "score": [0, 0]}


# ----------------------------------------------------------- match record
def test_a_match_record_holds_the_ruleset_once_and_the_deals_in_order() -> None:
    match = played_match({"preset": "classic", "deals": 5}, 5)
    rec = json.loads(json.dumps(match_record(match)))
    assert rec["ruleset"] == {"preset": "classic", "deals": 5}
    assert all("ruleset" not in d for d in rec["deals"])
    assert [d["dealer"] for d in rec["deals"]] == [(match.first_dealer + i) % 4 for i in range(5)]


def test_a_match_outcome_has_deals_totals_and_winner() -> None:
    match = played_match({"preset": "coinche", "deals": 3}, 3)
    replayed, _ = replay_match(json.loads(json.dumps(match_record(match))))
    out = match_outcome_json(replayed)
    assert out.keys() == {"deals", "totals", "winner", "over"}
    assert len(out["deals"]) == 3 and out["totals"] == match.totals and out["winner"] == match.winner


def test_a_match_record_may_override_the_target() -> None:
    match = played_match("coinche", 1)
    rec = {**match_record(match), "target": 1}
    replayed, _ = replay_match(rec)
    assert replayed.target == 1 and replayed.is_over


def test_deal_records_inside_a_match_may_repeat_its_ruleset() -> None:
    rec = match_record(played_match("club", 1))
    totals = replay_match(rec)[0].totals
    rec["deals"][0]["ruleset"] = "club"
    assert replay_match(rec)[0].totals == totals


# ----------------------------------------------------- illegal actions
@pytest.mark.parametrize("preset", ["classic", "coinche"])
def test_an_illegal_play_names_its_index_the_action_the_seat_and_the_legal_choices(preset: str) -> None:
    rec = core(record(preset))
    index, card, seat, legal = first_illegal_card(rec)
    rec["plays"][index] = card
    message = replay_error(rec)
    assert f"plays[{index}]" in message
    assert f"action {len(rec['bids']) + index}" in message
    assert repr(card) in message
    assert f"seat {seat}" in message
    assert "legal: " + ", ".join(legal) in message


def test_a_card_the_seat_does_not_hold_is_illegal() -> None:
    rec = core(record("coinche"))
    rec["plays"][0] = rec["plays"][1].split()[0]
    assert "does not hold" in replay_error(rec)


def test_a_coinche_by_the_bidders_partner_is_a_bid_out_of_turn() -> None:
    rec = core(record("coinche"))
    rec["bids"] = ["80H", "pass", "coinche"]
    message = replay_error(rec)
    assert "bids[2] (action 2)" in message and "'coinche'" in message
    assert "legal: pass, 90S" in message


def test_a_surcoinche_by_the_coinching_side_is_illegal() -> None:
    rec = core(record("coinche"))
    rec["bids"] = ["80H", "coinche", "pass", "surcoinche"]
    assert "bids[3] (action 3): illegal action 'surcoinche'" in replay_error(rec)


def test_a_round_two_suit_in_round_one_is_illegal() -> None:
    rec = core(record("classic"))
    rec["bids"] = ["S"]
    assert "bids[0] (action 0): illegal action 'S'" in replay_error(rec)


def test_take_in_round_two_is_illegal() -> None:
    rec = core(record("classic"))
    rec["bids"] = ["pass"] * 4 + ["take"]
    assert "bids[4] (action 4): illegal action 'take'" in replay_error(rec)


def test_a_bid_after_the_bidding_ended_is_an_error() -> None:
    rec = core(record("classic", lambda d: not d.thrown_in and len(d.bids) == 1))
    rec["bids"] = [*rec["bids"], "pass"]
    assert "bids[1] (action 1): 'pass' is recorded as a bid but the bidding is over" in replay_error(rec)


def test_a_card_during_the_bidding_is_illegal() -> None:
    rec = core(record("coinche"))
    rec["bids"] = ["7S"]
    assert "the bidding is not over" in replay_error(rec)


def test_plays_before_the_bidding_ends_are_an_error() -> None:
    rec = core(record("coinche"))
    rec["bids"] = rec["bids"][:-1]
    assert "the bidding is not over" in replay_error(rec)


def test_an_action_after_the_end_of_the_deal_is_an_error() -> None:
    rec = core(record("classic"))
    rec["plays"].append(rec["plays"][0])
    assert "plays[32] (action" in (message := replay_error(rec)) and "after the end of the deal" in message


def test_a_play_after_a_thrown_in_deal_is_an_error() -> None:
    rec = core(thrown_in_record("classic"))
    rec["plays"] = [rec["hands"][0][0]]
    assert "after the end of the deal" in replay_error(rec)


def test_a_record_that_stops_early_names_the_seat_to_act_and_its_choices() -> None:
    rec = core(record("coinche"))
    rec["plays"] = rec["plays"][:-1]
    message = replay_error(rec)
    assert "stops before the end" in message and "trick 8" in message and "legal: " in message


# ------------------------------------------------------- malformed records
@pytest.mark.parametrize(("spoil", "expected"), [
    (lambda r: r["hands"][0].__setitem__(0, "1X"), "malformed card '1X'"),
    (lambda r: r["hands"][0].pop(), "8 cards"),
    (lambda r: r["hands"][0].__setitem__(0, r["hands"][1][0]), "in two hands"),
    (lambda r: r["hands"][0].__setitem__(0, r["hands"][0][1]), "given twice"),
    (lambda r: r["hands"].__setitem__(0, 7), "hands[0] must be a list of cards"),
    (lambda r: r["hands"].pop(), "four hands"),
    (lambda r: r["plays"].__setitem__(0, "XX"), "plays[0] (action"),
    (lambda r: r["plays"].__setitem__(0, 17), "an action is a string"),
    (lambda r: r.__setitem__("bids", "pass"), "'bids' must be a list"),
    (lambda r: r.__setitem__("dealer", 4), "'dealer' must be a seat 0..3"),
    (lambda r: r.__setitem__("ruleset", "belote-du-dimanche"), "unknown preset 'belote-du-dimanche'"),
    (lambda r: r.__setitem__("ruleset", {"preset": "classic", "undertrump": True}),
     "unknown ruleset option 'undertrump'"),
    (lambda r: r.__setitem__("ruleset", {"preset": "classic", "must_undertrump": "yes"}),
     "must_undertrump must be true or false"),
    (lambda r: r.pop("ruleset"), "names no ruleset"),
    (lambda r: r.pop("retourne"), "needs its 'retourne'"),
    (lambda r: r.__setitem__("retourne", "ZZ"), "malformed card 'ZZ'"),
], ids=["bad card text", "seven cards", "card in two hands", "card twice in a hand", "hand not a list",
        "three hands", "bad action text", "action not a string", "bids not a list", "dealer out of range",
        "unknown preset", "unknown option", "bad option value", "no ruleset", "no retourne",
        "bad retourne"])
def test_a_malformed_classic_record_is_a_record_error(spoil: Callable[[Record], None], expected: str) -> None:
    rec = copy.deepcopy(core(record("classic")))
    spoil(rec)
    assert expected in replay_error(rec)


def test_a_coinche_deal_under_a_classic_preset_is_a_record_error() -> None:
    rec = record("coinche")
    rec["ruleset"] = "classic"
    assert "a classic deal needs its 'retourne' (ruleset classic)" in replay_error(rec)


def test_a_classic_deal_under_the_coinche_preset_is_a_record_error() -> None:
    rec = record("classic")
    rec["ruleset"] = "coinche"
    assert "a coinche deal has no retourne" in replay_error(rec)


def test_hands_that_the_recorded_deck_does_not_deal_are_a_record_error() -> None:
    rec = record("coinche")
    rec["hands"][0][0], rec["hands"][1][0] = rec["hands"][1][0], rec["hands"][0][0]
    assert "not those the deck deals" in replay_error(rec)


def test_a_retourne_the_recorded_deck_does_not_turn_up_is_a_record_error() -> None:
    rec = record("classic")
    rec["retourne"] = next(c for c in rec["hands"][0] if c != rec["retourne"])
    assert "not the card the deck turns up" in replay_error(rec)


def same_suit_card_of_a_defender(deal: Deal) -> str | None:
    """A card of the retourne's suit held by a seat that did not take, if any."""
    suit = SUIT_MASKS[deal.retourne >> 3]
    for seat in range(4):
        cards = deal.initial_hands[seat] & suit
        if seat != deal.taker and cards:
            return str(CARDS[(cards & -cards).bit_length() - 1])
    return None


def test_a_classic_record_whose_taker_does_not_hold_the_retourne_is_a_record_error() -> None:
    deal = find_deal("classic", lambda d: not d.thrown_in and same_suit_card_of_a_defender(d) is not None)
    rec = core(json.loads(json.dumps(deal_record(deal))))
    # same suit, so every bid and play stays legal; only the seat holding the retourne is wrong
    rec["retourne"] = same_suit_card_of_a_defender(deal)
    assert "retourne" in replay_error(rec)


def test_a_record_that_is_not_an_object_is_a_record_error() -> None:
    with pytest.raises(RecordError, match="JSON object"):
        replay_deal([1, 2, 3])  # type: ignore[arg-type]


# ---------------------------------------------------------- match errors
def test_a_deal_recorded_after_the_match_was_decided_is_a_record_error() -> None:
    match = played_match({"preset": "coinche", "deals": 2}, 2)
    rec = match_record(match)
    rec["deals"].append(rec["deals"][0])
    assert "deals[2]: the match was decided after 2 deals" in match_error(rec)


def test_a_deal_after_the_target_is_reached_is_a_record_error() -> None:
    match = played_match({"preset": "coinche", "deals": 2}, 2)
    rec = {**match_record(match), "ruleset": "coinche", "target": 1}
    assert "deals[1]: the match was decided after 1 deals" in match_error(rec)


def test_a_wrong_dealer_rotation_is_a_record_error() -> None:
    rec = match_record(played_match({"preset": "classic", "deals": 2}, 2))
    rec["deals"][1]["dealer"] = rec["deals"][0]["dealer"]
    first = rec["deals"][0]["dealer"]
    assert f"deals[1]: the dealer is seat {(first + 1) % 4} (it moves one seat each deal)" in match_error(rec)


def test_a_deal_under_another_ruleset_than_its_match_is_a_record_error() -> None:
    rec = match_record(played_match("classic", 1))
    rec["deals"][0]["ruleset"] = "club"
    assert match_error(rec) == "deals[0]: its ruleset differs from the match's"


def test_an_illegal_action_inside_a_match_names_the_deal() -> None:
    rec = match_record(played_match({"preset": "coinche", "deals": 2}, 2))
    rec["deals"][1]["bids"] = ["pass", "coinche"]
    assert match_error(rec).startswith("deals[1]: bids[1] (action 1): illegal action 'coinche'")


@pytest.mark.parametrize(("field", "value", "expected"), [
    ("deals", [], "at least one deal"),
    ("deals", {}, "'deals' must be a list"),
    ("ruleset", "nope", "unknown preset 'nope'"),
    ("target", 0, "'target' must be a positive whole number"),
])
def test_a_malformed_match_record_is_a_record_error(field: str, value: object, expected: str) -> None:
    rec = {**match_record(played_match("classic", 1)), field: value}
    assert expected in match_error(rec)


def test_a_finished_deal_scores_the_same_when_replayed_from_its_record() -> None:
    deal = find_deal("classic-annonces", lambda d: d.decl_team is not None)
    assert replay_deal(deal_record(deal))[1] == score_deal(deal)
