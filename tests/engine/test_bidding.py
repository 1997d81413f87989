"""docs/rules.md#bidding-classic, #bidding-coinche, #shuffle-cut-and-deal and #presets.

Expected hands and legal sets are written out by hand from docs/rules.md.
"""

from __future__ import annotations

from typing import Any

import pytest

from arena.engine.actions import format_action, parse_action
from arena.engine.cards import cards_of, parse_cards
from arena.engine.deal import Deal
from arena.engine.errors import IllegalActionError, RulesetError
from arena.engine.rules import PRESETS, Ruleset
from arena.engine.scoring import score_deal

#: the deck in index order: 7S 8S .. AS, 7H .. AH, 7D .. AD, 7C .. AC
ORDERED_DECK = list(range(32))

CLASSIC = Ruleset.from_spec("classic")
COINCHE = Ruleset.from_spec("coinche")


def bid(deal: Deal, *texts: str) -> None:
    for t in texts:
        deal.apply(parse_action(t))


def legal(deal: Deal) -> set[str]:
    return {format_action(a) for a in deal.legal_actions()}


def cards(text: str) -> set[str]:
    return set(text.split())


def hand(deal: Deal, seat: int) -> set[str]:
    return {str(c) for c in cards_of(deal.hands[seat])}


def classic_deal(dealer: int = 2) -> Deal:
    return Deal.from_deck(CLASSIC, dealer, ORDERED_DECK)


# The ordered deck dealt by seat 2: 3 cards then 2 to seats 3, 0, 1, 2; the 21st card turned up.
FIVE_CARDS = {
    3: cards("7S 8S 9S JH QH"),
    0: cards("TS JS QS KH AH"),
    1: cards("KS AS 7H 7D 8D"),
    2: cards("8H 9H TH 9D TD"),
}
RETOURNE = "JD"


# ------------------------------------------------------------------ classic distribution
def test_classic_deal_three_then_two_cards_and_the_retourne() -> None:
    deal = classic_deal()
    for seat, expected in FIVE_CARDS.items():
        assert hand(deal, seat) == expected
    assert str(cards_of(1 << deal.retourne)[0]) == RETOURNE
    assert deal.to_act == 3


def test_classic_taker_gets_retourne_and_two_others_three() -> None:
    # seat 3 passes, seat 0 takes the jack of diamonds; the rest of the deck QD KD AD 7C .. AC
    # goes 3 to seat 3, 2 to the taker (seat 0), 3 to seat 1, 3 to seat 2
    deal = classic_deal()
    bid(deal, "pass", "take")
    assert hand(deal, 3) == FIVE_CARDS[3] | cards("QD KD AD")
    assert hand(deal, 0) == FIVE_CARDS[0] | cards("7C 8C") | {RETOURNE}
    assert hand(deal, 1) == FIVE_CARDS[1] | cards("9C TC JC")
    assert hand(deal, 2) == FIVE_CARDS[2] | cards("QC KC AC")
    assert deal.phase == "play" and deal.to_act == 3
    assert deal.taker == 0 and deal.takers == 0
    assert deal.trump == 2  # diamonds, the retourne's suit


def test_classic_round_two_taker_gets_retourne_and_two() -> None:
    # four passes, then seat 3 (first after the dealer) names spades
    deal = classic_deal()
    bid(deal, "pass", "pass", "pass", "pass", "S")
    assert hand(deal, 3) == FIVE_CARDS[3] | cards("QD KD") | {RETOURNE}
    assert hand(deal, 0) == FIVE_CARDS[0] | cards("AD 7C 8C")
    assert hand(deal, 1) == FIVE_CARDS[1] | cards("9C TC JC")
    assert hand(deal, 2) == FIVE_CARDS[2] | cards("QC KC AC")
    assert deal.taker == 3 and deal.takers == 1
    assert deal.trump == 0  # spades


# ------------------------------------------------------------------ classic bidding
def test_classic_round_one_take_or_pass() -> None:
    deal = classic_deal()
    assert legal(deal) == {"pass", "take"}
    with pytest.raises(IllegalActionError):
        bid(deal, "S")
    with pytest.raises(IllegalActionError):
        bid(deal, "80D")


def test_classic_take_sets_retourne_suit_as_trump_and_ends_bidding() -> None:
    deal = classic_deal()
    bid(deal, "pass", "pass", "take")  # seat 1 takes in round one
    assert deal.phase == "play"
    assert deal.taker == 1 and deal.trump == 2
    assert deal.to_act == 3  # the seat after the dealer leads


def test_classic_round_two_a_suit_but_never_the_retourne_suit() -> None:
    deal = classic_deal()
    bid(deal, "pass", "pass", "pass", "pass")
    assert legal(deal) == {"pass", "S", "H", "C"}
    with pytest.raises(IllegalActionError):
        bid(deal, "D")
    with pytest.raises(IllegalActionError):
        bid(deal, "take")


def test_classic_round_two_first_choice_ends_bidding() -> None:
    deal = classic_deal()
    bid(deal, "pass", "pass", "pass", "pass", "pass", "pass", "C")  # seat 1 names clubs
    assert deal.phase == "play"
    assert deal.taker == 1 and deal.trump == 3


def test_classic_eight_passes_throw_in() -> None:
    deal = classic_deal()
    bid(deal, *["pass"] * 7)
    assert deal.phase == "bidding"
    bid(deal, "pass")
    assert deal.is_over and deal.thrown_in
    outcome = score_deal(deal)
    assert outcome.as_json() == {"thrown_in": True, "score": [0, 0]}


# ------------------------------------------------------------------ coinche distribution
def test_coinche_deals_all_cards_in_packets() -> None:
    # dealer 0, packets 3-2-3 from the ordered deck to seats 1, 2, 3, 0
    deal = Deal.from_deck(COINCHE, 0, ORDERED_DECK, (3, 2, 3))
    assert hand(deal, 1) == cards("7S 8S 9S JH QH JD QD KD")
    assert hand(deal, 2) == cards("TS JS QS KH AH AD 7C 8C")
    assert hand(deal, 3) == cards("KS AS 7H 7D 8D 9C TC JC")
    assert hand(deal, 0) == cards("8H 9H TH 9D TD QC KC AC")
    assert deal.retourne == -1
    assert deal.phase == "bidding" and deal.to_act == 1


# ------------------------------------------------------------------ coinche bidding
def coinche_deal(rules: Ruleset = COINCHE) -> Deal:
    """Dealer 0: seat 1 speaks first; seats 1 and 3 are one side, 0 and 2 the other."""
    return Deal.from_deck(rules, 0, ORDERED_DECK, (3, 3, 2))


def all_bids(low: int, high: int = 160) -> set[str]:
    return {f"{v}{s}" for v in range(low, high + 1, 10) for s in "SHDC"} | {f"capot{s}" for s in "SHDC"}


def test_coinche_first_bid_80_to_max_bid_by_tens_or_capot() -> None:
    deal = coinche_deal()
    assert legal(deal) == {"pass"} | all_bids(80)
    for text in ("70H", "85H", "170H", "coinche", "surcoinche"):
        with pytest.raises((IllegalActionError, ValueError)):
            bid(deal, text)


def test_coinche_bid_strictly_above_the_standing_bid() -> None:
    deal = coinche_deal()
    bid(deal, "90H")
    assert legal(deal) == {"pass", "coinche"} | all_bids(100)
    with pytest.raises(IllegalActionError):
        bid(deal, "90S")
    bid(deal, "100S")
    assert deal.contract_value == 100


def test_coinche_max_bid_option() -> None:
    deal = coinche_deal(COINCHE.with_options(max_bid=200))
    assert legal(deal) == {"pass"} | all_bids(80, 200)
    bid(deal, "200S")
    assert legal(deal) == {"pass", "coinche"} | {f"capot{s}" for s in "SHDC"}


def test_coinche_capot_above_every_number() -> None:
    deal = coinche_deal()
    bid(deal, "160S")
    assert {f"capot{s}" for s in "SHDC"} <= legal(deal)
    bid(deal, "capotH")  # seat 2 outbids 160 with a capot
    assert deal.contract_value == 250
    # seat 3 (opponent): no number, no other capot; pass or coinche
    assert legal(deal) == {"pass", "coinche"}
    bid(deal, "pass")
    # seat 0 (partner of the capot bidder): pass only
    assert legal(deal) == {"pass"}


def test_coinche_only_on_an_opponents_bid() -> None:
    deal = coinche_deal()
    bid(deal, "80H")  # seat 1
    assert "coinche" in legal(deal)  # seat 2, opponent
    bid(deal, "pass")
    assert "coinche" not in legal(deal)  # seat 3, partner
    with pytest.raises(IllegalActionError):
        bid(deal, "coinche")
    bid(deal, "pass")
    assert "coinche" in legal(deal)  # seat 0, opponent


def test_coinche_freezes_the_bidding() -> None:
    deal = coinche_deal()
    bid(deal, "80H", "coinche")  # seat 2 coinches seat 1's bid
    assert deal.multiplier == 2
    assert legal(deal) == {"pass", "surcoinche"}  # seat 3, the coinched side
    with pytest.raises(IllegalActionError):
        bid(deal, "90S")
    bid(deal, "pass")
    assert legal(deal) == {"pass"}  # seat 0, the coinching side: no surcoinche, no bid


def test_only_coinched_side_may_surcoinche_and_it_ends_the_bidding() -> None:
    deal = coinche_deal()
    bid(deal, "80H", "coinche", "pass", "pass")
    assert legal(deal) == {"pass", "surcoinche"}  # seat 1, the bidder
    bid(deal, "surcoinche")
    assert deal.phase == "play"
    assert deal.multiplier == 4
    assert deal.taker == 1 and deal.trump == 1 and deal.contract_value == 80
    assert deal.to_act == 1


def test_coinche_surcoinche_by_bidders_partner_ends_the_bidding_at_once() -> None:
    deal = coinche_deal()
    bid(deal, "80H", "coinche", "surcoinche")
    assert deal.phase == "play" and deal.multiplier == 4 and deal.taker == 1


def test_coinche_three_passes_after_a_bid_end_it() -> None:
    deal = coinche_deal()
    bid(deal, "pass", "80S", "pass", "pass")
    assert deal.phase == "bidding"
    bid(deal, "pass")
    assert deal.phase == "play"
    assert deal.taker == 2 and deal.takers == 0
    assert deal.trump == 0 and deal.contract_value == 80 and deal.multiplier == 1
    assert deal.to_act == 1  # the seat after the dealer leads


def test_coinche_three_passes_after_a_coinche_end_it() -> None:
    deal = coinche_deal()
    bid(deal, "80H", "coinche", "pass", "pass")
    assert deal.phase == "bidding"
    bid(deal, "pass")
    assert deal.phase == "play"
    assert deal.multiplier == 2 and deal.taker == 1 and deal.contract_value == 80


def test_coinche_a_new_bid_restarts_the_three_passes() -> None:
    deal = coinche_deal()
    bid(deal, "80H", "pass", "pass", "90S", "pass", "pass")
    assert deal.phase == "bidding"
    bid(deal, "pass")
    assert deal.phase == "play" and deal.taker == 0 and deal.trump == 0


def test_coinche_four_passes_throw_in() -> None:
    deal = coinche_deal()
    bid(deal, "pass", "pass", "pass")
    assert deal.phase == "bidding"
    bid(deal, "pass")
    assert deal.is_over and deal.thrown_in
    assert score_deal(deal).as_json() == {"thrown_in": True, "score": [0, 0]}


def test_coinche_a_passed_player_may_bid_again() -> None:
    deal = coinche_deal()
    bid(deal, "pass", "80S", "pass", "pass")
    assert "90H" in legal(deal)  # seat 1 passed before
    bid(deal, "90H", "pass", "pass", "pass")
    assert deal.phase == "play" and deal.taker == 1 and deal.contract_value == 90


def test_coinche_bid_over_partner_is_allowed() -> None:
    deal = coinche_deal()
    bid(deal, "80H", "pass", "100H", "pass", "pass", "pass")
    assert deal.taker == 3 and deal.takers == 1 and deal.contract_value == 100


# ------------------------------------------------------------------ presets and options
PRESETS_TABLE: dict[str, dict[str, Any]] = {
    "classic": dict(game="classic", target=501, annonces=False, belote="automatic",
                    belote_counts_against_takers=True, must_undertrump=True, cut_min=3, rounding="none"),
    "classic-annonces": dict(game="classic", target=501, annonces=True, belote="automatic",
                             belote_counts_against_takers=True, must_undertrump=True, cut_min=3,
                             rounding="none"),
    "club": dict(game="classic", target=501, annonces=False, belote="declared",
                 belote_counts_against_takers=False, must_undertrump=True, cut_min=2, rounding="none"),
    "coinche": dict(game="coinche", target=1000, annonces=True, belote="declared",
                    belote_counts_against_takers=True, must_undertrump=False, cut_min=3,
                    rounding="nearest10"),
}


@pytest.mark.parametrize("name", sorted(PRESETS_TABLE))
def test_preset_matches_rules_table(name: str) -> None:
    rules = Ruleset.from_spec(name)
    assert rules.preset == name
    for option, value in PRESETS_TABLE[name].items():
        assert getattr(rules, option) == value, option
    # defaults shared by every preset
    assert rules.max_bid == 160
    assert rules.deals is None
    assert rules.redeal_low_hand is False and rules.redeal_four_sevens is False


def test_presets_are_exactly_the_four_of_rules_md() -> None:
    assert set(PRESETS) == set(PRESETS_TABLE)


def test_preset_option_override() -> None:
    rules = Ruleset.from_spec({"preset": "coinche", "must_undertrump": True, "target": 2000})
    assert rules.must_undertrump is True and rules.target == 2000
    assert rules.rounding == "nearest10" and rules.game == "coinche"
    assert Ruleset.from_spec({"preset": "club"}) == Ruleset.from_spec("club")


def test_fixed_deals_option() -> None:
    assert Ruleset.from_spec({"preset": "classic", "deals": 12}).deals == 12


@pytest.mark.parametrize(
    "spec",
    [
        "belote",
        "Classic",
        {"preset": "tarot"},
        {"target": 501},
        {"preset": "classic", "colour": "red"},
        {"preset": "classic", "target": "501"},
        {"preset": "classic", "target": 0},
        {"preset": "classic", "belote": "maybe"},
        {"preset": "coinche", "rounding": "up"},
        {"preset": "classic", "must_undertrump": "yes"},
        {"preset": "classic", "annonces": 1},
        {"preset": "coinche", "max_bid": 165},
        {"preset": "coinche", "max_bid": 70},
        {"preset": "classic", "cut_min": 0},
        {"preset": "classic", "deals": 0},
        {"preset": "coinche", "game": "tarot"},
        42,
    ],
    ids=lambda spec: repr(spec),
)
def test_unknown_preset_option_or_bad_value_raises(spec: Any) -> None:
    with pytest.raises(RulesetError):
        Ruleset.from_spec(spec)


def test_classic_record_hands_only_the_retourne_holder_takes() -> None:
    # a classic record gives the hands as the play starts: the taker is the seat holding the
    # retourne (it received it), so the others cannot have taken
    masks = [sum(1 << c for c in parse_cards(h)) for h in
             ("TS JS QS KH AH 7C 8C JD", "KS AS 7H 7D 8D 9C TC JC",
              "8H 9H TH 9D TD QC KC AC", "7S 8S 9S JH QH QD KD AD")]
    deal = Deal.from_hands(CLASSIC, 2, masks, parse_cards("JD")[0])
    assert legal(deal) == {"pass"}  # seat 3
    bid(deal, "pass")
    assert legal(deal) == {"pass", "take"}  # seat 0 holds the jack of diamonds
    bid(deal, "take")
    assert deal.phase == "play" and deal.taker == 0 and deal.trump == 2
    assert hand(deal, 0) == cards("TS JS QS KH AH 7C 8C JD")
