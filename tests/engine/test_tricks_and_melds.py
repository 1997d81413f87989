"""Who wins a trick, and which melds a seat's shown cards hold: the engine's one place for each.

The deal keeps its own trick winner as cards are played (inlined for speed);
:func:`arena.engine.cards.trick_winner` must agree with it after every card of
random deals under every preset, and so must each seat's observation. A
scoring side's shown cards must split back into exactly the melds declared.
"""

from __future__ import annotations

import random

import pytest

from arena.engine import PRESETS, Match, Ruleset, observe
from arena.engine.bots import RandomPlayer
from arena.engine.cards import CARDS, Card, beats, trick_winner
from arena.engine.declarations import RANK_MASKS, declaration_choices, shown_melds


def test_the_highest_trump_wins_the_trick() -> None:
    hearts = 1
    cards = [Card.parse(t) for t in ("AS", "7H", "KS", "9H")]
    assert trick_winner(2, cards, hearts) == (2 + 3) & 3


def test_without_trump_the_highest_card_of_the_led_suit_wins() -> None:
    cards = [Card.parse(t) for t in ("KS", "AD", "TS", "AC")]
    assert trick_winner(1, cards, 1) == (1 + 2) & 3  # the ten beats the king; other aces discard


def test_an_empty_trick_has_no_winner() -> None:
    assert trick_winner(0, [], 0) == -1


def test_a_card_of_another_plain_suit_never_beats() -> None:
    assert not beats(Card.parse("AD"), Card.parse("7S"), 1)
    assert beats(Card.parse("7H"), Card.parse("AS"), 1)
    assert not beats(Card.parse("AH"), Card.parse("9H"), 1)  # nine over ace in trump
    assert beats(Card.parse("JH"), Card.parse("9H"), 1)


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_trick_winner_agrees_with_the_deal_after_every_card(preset: str) -> None:
    rng = random.Random(preset)
    player = RandomPlayer()
    match = Match(Ruleset.from_spec(preset).with_options(deals=40), preset)
    checked = 0
    while not match.is_over:
        deal = match.new_deal()
        while not deal.is_over:
            deal.apply(player.act(observe(deal, deal.to_act), rng))
            if deal.trick:
                expected = trick_winner(deal.trick_leader, deal.trick, deal.trump)
                assert deal.trick_winner == expected
                for seat in range(4):
                    assert observe(deal, seat).trick_winner == expected
                checked += 1
            else:
                assert all(observe(deal, seat).trick_winner == -1 for seat in range(4))
            for leader, cards, winner in deal.tricks[-1:]:
                assert trick_winner(leader, cards, deal.trump) == winner
        match.add(deal)
    assert checked > 500


def random_hand(rng: random.Random) -> int:
    """Eight cards, often holding carrés and long runs so that melds are plenty."""
    kind = rng.randrange(3)
    if kind == 0:
        cards = rng.sample(range(32), 8)
    elif kind == 1:
        rank = rng.randrange(2, 8)
        rest = [c for c in range(32) if c & 7 != rank]
        cards = [8 * s + rank for s in range(4)] + rng.sample(rest, 4)
    else:
        suit = rng.randrange(4)
        start = rng.randrange(0, 3)
        run = [8 * suit + r for r in range(start, start + rng.randrange(3, 9 - start))]
        rest = [c for c in range(32) if c not in run]
        cards = run + rng.sample(rest, 8 - len(run))
    mask = 0
    for c in cards:
        mask |= 1 << c
    return mask


def test_shown_cards_split_back_into_the_melds_declared() -> None:
    rng = random.Random(3)
    checked = 0
    for _ in range(4000):
        hand, trump = random_hand(rng), rng.randrange(4)
        for melds in declaration_choices(hand, trump).values():
            union = 0
            for m in melds:
                union |= m.mask
            assert shown_melds(union, trump) == melds
            checked += len(melds)
    assert checked > 2000


def test_four_jacks_shown_are_a_carre_of_200() -> None:
    (meld,) = shown_melds(RANK_MASKS[4], 0)
    assert (meld.points, meld.mask) == (200, RANK_MASKS[4])
    assert str(CARDS[4]) == "JS"
