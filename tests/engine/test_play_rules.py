"""docs/rules.md#playing-a-card, one test per case, and who wins a trick (#winning-a-trick).

Every position is the first trick of a deal with hearts as trump (a coinche 80H contract
bid by seat 0; annonces off so the plays carry no words). The dealer is seat 3, so seat 0
leads; the cards already in the trick were played by seats 0, 1, 2 in turn, each of them
legally. The assertions name the exact set of cards the seat to act may play.
"""

from __future__ import annotations

import pytest

from arena.engine.actions import format_action, parse_action
from arena.engine.cards import cards_of, parse_cards
from arena.engine.deal import Deal
from arena.engine.errors import IllegalActionError
from arena.engine.rules import Ruleset

# Base B: everybody but seat 3 holds trumps; seat 3 holds the eight clubs.
B = (
    "AH QH AS KS QS AD KD QD",
    "TH 8H JS TS 9S JD TD 9D",
    "JH 9H KH 7H 8S 7S 8D 7D",
    "AC KC QC JC TC 9C 8C 7C",
)
# Base W1: seat 2 is void in clubs and holds trumps; seats 0, 1 and 3 hold clubs.
W1 = (
    "AH AC 7C 9C AS KS AD KD",
    "QH 8H KC 8C QS JS QD JD",
    "9H KH 7H TS 9S 8S TD 9D",
    "JH TH QC JC TC 7S 8D 7D",
)
# Base W2: seat 0 holds the eight clubs; seats 1, 2 and 3 are void in clubs and hold trumps.
W2 = (
    "AC KC QC JC TC 9C 8C 7C",
    "JH TH AS KS QS AD KD QD",
    "9H KH 7H JS TS 9S JD TD",
    "AH 8H QH 8S 7S 9D 8D 7D",
)


def position(hands: tuple[str, str, str, str], trick: str = "", *, must_undertrump: bool = True) -> Deal:
    """The deal after the contract 80H and the cards of ``trick`` (played with full checks)."""
    rules = Ruleset.from_spec(
        {"preset": "coinche", "annonces": False, "must_undertrump": must_undertrump}
    )
    masks = [sum(1 << c for c in parse_cards(h)) for h in hands]
    deal = Deal.from_hands(rules, 3, masks)
    for bid in ("80H", "pass", "pass", "pass"):
        deal.apply(parse_action(bid))
    assert deal.phase == "play" and deal.to_act == 0
    for card in trick.split():
        deal.apply(parse_action(card))
    return deal


def legal(deal: Deal) -> set[str]:
    """The cards the seat to act may play, from the mask and from the action list (they agree)."""
    from_mask = {str(c) for c in cards_of(deal.legal_cards())}
    from_actions = {format_action(a) for a in deal.legal_actions()}
    assert from_mask == from_actions
    return from_mask


def hand(deal: Deal, seat: int) -> set[str]:
    return {str(c) for c in cards_of(deal.hands[seat])}


# ------------------------------------------------------------------ 1. leading
def test_leading_any_card() -> None:
    deal = position(B)
    assert legal(deal) == set(B[0].split())


def test_winner_of_a_trick_leads_the_next_with_any_card() -> None:
    # AS led; seat 3, void in spades and without trump, discards; the ace wins
    deal = position(B, "AS JS 8S AC")
    assert deal.trick_number == 1 and deal.tricks[0][2] == 0
    assert deal.to_act == 0
    assert legal(deal) == set(B[0].split()) - {"AS"}


# ------------------------------------------------------------------ 2. trump led
def test_trump_led_must_overtrump_even_over_partner() -> None:
    # partner (seat 0) wins with AH; seat 2 holds J 9 K 7: only J and 9 beat the ace
    deal = position(B, "AH 8H")
    assert deal.current_winner() == 0
    assert legal(deal) == {"JH", "9H"}


def test_trump_led_cannot_overtrump_plays_any_trump() -> None:
    # seat 1 holds T and 8 of trump, both below the ace: either, but a trump
    deal = position(B, "AH")
    assert legal(deal) == {"TH", "8H"}


def test_trump_led_overtrump_over_opponent_only_higher_trumps() -> None:
    # QH led, seat 1 must beat it: TH (the 8 is lower)
    deal = position(B, "QH")
    assert legal(deal) == {"TH"}
    deal = position(B, "QH TH")
    # seat 2 must beat the ten: J or 9, never K or 7
    assert legal(deal) == {"JH", "9H"}


def test_trump_led_without_trump_any_card() -> None:
    deal = position(B, "AH 8H 9H")
    assert legal(deal) == set(B[3].split())


# ------------------------------------------------------------------ 3. following suit
def test_plain_suit_led_must_follow_with_any_card_of_it() -> None:
    # seat 1 holds J T 9 of spades: any of them (no obligation to win), no trump, no discard
    deal = position(B, "KS")
    assert legal(deal) == {"JS", "TS", "9S"}


def test_plain_suit_led_follow_even_when_a_trump_is_in_the_trick() -> None:
    deal = position(W1, "7C KC 7H")
    assert legal(deal) == {"QC", "JC", "TC"}


# ------------------------------------------------------------------ 4. void in the led suit
def test_void_partner_winning_any_card() -> None:
    # seat 0 (partner) leads AC and wins; seat 2, void in clubs with trumps, may play anything
    deal = position(W1, "AC 8C")
    assert deal.current_winner() == 0
    assert legal(deal) == set(W1[2].split())


def test_void_partner_winning_with_a_trump_any_card() -> None:
    # seat 1 trumps with the jack; seat 2 cannot beat it and undertrumps; seat 3, partner of
    # the winner, may play anything although void in clubs with trumps
    deal = position(W2, "AC JH 7H")
    assert deal.current_winner() == 1
    assert legal(deal) == set(W2[3].split())


def test_void_no_trump_in_trick_must_play_any_trump() -> None:
    # 7C led, the opponent's KC wins; seat 2, void in clubs: any of its trumps, low ones included
    deal = position(W1, "7C KC")
    assert deal.current_winner() == 1
    assert legal(deal) == {"9H", "KH", "7H"}


def test_void_opponent_winning_with_plain_card_must_trump() -> None:
    # seat 1 is void in clubs: must trump the opponent's ace, with either trump
    deal = position(W2, "AC")
    assert legal(deal) == {"JH", "TH"}


def test_void_opponent_trumped_must_overtrump() -> None:
    # seat 1 trumps with the ten; seat 2 holds 9 K 7 of trump: only the nine beats the ten
    deal = position(W2, "AC TH")
    assert deal.current_winner() == 1
    assert legal(deal) == {"9H"}


def test_void_opponent_trumped_over_partner_must_overtrump() -> None:
    # partner (seat 0) led the ace, the opponent trumped: no longer partner winning
    deal = position(W2, "AC TH 9H")
    assert deal.current_winner() == 2
    # seat 3 holds A 8 Q of trump, all below the nine: cannot overtrump (next tests)
    assert legal(deal) == {"AH", "8H", "QH"}


def test_void_cannot_overtrump_must_undertrump_plays_lower_trump() -> None:
    # must_undertrump true (pisser): the jack cannot be beaten; any lower trump, no discard
    deal = position(W2, "AC JH", must_undertrump=True)
    assert legal(deal) == {"9H", "KH", "7H"}
    deal = position(W2, "AC TH 9H", must_undertrump=True)
    assert legal(deal) == {"AH", "8H", "QH"}


def test_void_cannot_overtrump_no_undertrump_any_card() -> None:
    # must_undertrump false (000): any card
    deal = position(W2, "AC JH", must_undertrump=False)
    assert legal(deal) == set(W2[2].split())
    deal = position(W2, "AC TH 9H", must_undertrump=False)
    assert legal(deal) == set(W2[3].split())


def test_void_can_overtrump_must_undertrump_false_still_overtrumps() -> None:
    # must_undertrump only decides when no trump can win
    deal = position(W2, "AC TH", must_undertrump=False)
    assert legal(deal) == {"9H"}


def test_void_without_trump_any_card() -> None:
    # seat 3 holds only clubs: spades led, no trump, any card
    deal = position(B, "KS TS 8S")
    assert legal(deal) == set(B[3].split())


def test_illegal_card_is_refused_with_the_legal_choices() -> None:
    # seat 1 holds spades but must play a trump on the trump lead
    deal = position(B, "AH")
    with pytest.raises(IllegalActionError) as err:
        deal.apply(parse_action("JS"))
    assert set(err.value.legal) == {"TH", "8H"}
    assert err.value.seat == 1
    assert deal.hands[1] >> parse_action("JS") & 1  # nothing was played
    assert len(deal.trick) == 1


# ------------------------------------------------------------------ who wins the trick
def test_trick_goes_to_the_highest_trump() -> None:
    # trump order J 9 A T K Q 8 7: the nine of trump beats the ace of trump
    deal = position(B, "AH 8H 9H AC")
    assert deal.tricks[0] == (0, tuple(parse_cards("AH 8H 9H AC")), 2)
    assert deal.to_act == 2


def test_trick_trump_beats_any_card_of_the_led_suit() -> None:
    # 7C led, the king of clubs beaten by the seven of trump, the queen of clubs after it
    deal = position(W1, "7C KC 7H QC")
    assert deal.tricks[0][2] == 2
    assert deal.to_act == 2


def test_trick_overtrump_wins_over_lower_trump() -> None:
    deal = position(W2, "AC TH 9H QH")
    assert deal.tricks[0][2] == 2
    deal = position(W2, "AC JH 7H AH")
    assert deal.tricks[0][2] == 1


def test_trick_without_trump_goes_to_highest_card_of_led_suit() -> None:
    # plain order A T K Q J 9 8 7: the ten beats the king; the discarded ace of clubs wins nothing
    deal = position(B, "KS TS 8S AC")
    assert deal.tricks[0][2] == 1
    assert deal.to_act == 1
    assert legal(deal) == hand(deal, 1)


def test_trick_points_and_last_trick_bonus() -> None:
    # K S 4 + T S 10 + 8 S 0 + A C 11 = 25 to team 1
    deal = position(B, "KS TS 8S AC")
    assert deal.trick_points == [0, 25]


def test_played_card_stays_played() -> None:
    deal = position(B, "AS JS 8S AC")
    assert not deal.hands[0] >> parse_action("AS") & 1
    with pytest.raises(IllegalActionError):
        deal.apply(parse_action("AS"))
