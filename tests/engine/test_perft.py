"""Perft: counts of legal card-play sequences, checked against a naive reference.

Like a chess engine's perft, this counts the leaves of the tree of legal play
from fixed positions. The reference below is written straight from docs/rules.md
("Playing a card") on lists of card texts, sharing no code with the engine, so
any difference in the count points at a legality bug in one of them.
"""

from __future__ import annotations

import random

import pytest

from arena.engine import Deal, Ruleset, deal_from_rng
from arena.engine.cards import cards_of

TRUMP_ORDER = "J9ATKQ87"
PLAIN_ORDER = "ATKQJ987"


def beats(card: str, best: str, trump: str) -> bool:
    """Does ``card`` beat the card currently winning the trick (``best``)?"""
    if card[1] == trump:
        return best[1] != trump or TRUMP_ORDER.index(card[0]) < TRUMP_ORDER.index(best[0])
    return card[1] == best[1] and PLAIN_ORDER.index(card[0]) < PLAIN_ORDER.index(best[0])


def reference_legal(hand: list[str], trick: list[tuple[int, str]], seat: int, trump: str,
                    must_undertrump: bool) -> list[str]:
    if not trick:
        return hand  # leading: any card
    led = trick[0][1][1]
    winner, best = trick[0]
    for s, c in trick[1:]:
        if beats(c, best, trump):
            winner, best = s, c
    mine_trumps = [c for c in hand if c[1] == trump]
    trumps_in_trick = [c for _, c in trick if c[1] == trump]
    if led == trump:
        if not mine_trumps:
            return hand
        top = min(TRUMP_ORDER.index(c[0]) for c in trumps_in_trick)
        higher = [c for c in mine_trumps if TRUMP_ORDER.index(c[0]) < top]
        return higher or mine_trumps
    following = [c for c in hand if c[1] == led]
    if following:
        return following
    if winner == (seat + 2) % 4:
        return hand  # partner is winning: any card
    if not mine_trumps:
        return hand
    if trumps_in_trick:
        top = min(TRUMP_ORDER.index(c[0]) for c in trumps_in_trick)
        higher = [c for c in mine_trumps if TRUMP_ORDER.index(c[0]) < top]
        if higher:
            return higher
        return mine_trumps if must_undertrump else hand
    return mine_trumps


def reference_perft(hands: list[list[str]], trick: list[tuple[int, str]], seat: int, trump: str,
                    must_undertrump: bool) -> int:
    if not any(hands):
        return 1
    total = 0
    for card in reference_legal(hands[seat], trick, seat, trump, must_undertrump):
        rest = [h[:] for h in hands]
        rest[seat].remove(card)
        played = [*trick, (seat, card)]
        if len(played) == 4:
            winner, best = played[0]
            for s, c in played[1:]:
                if beats(c, best, trump):
                    winner, best = s, c
            total += reference_perft(rest, [], winner, trump, must_undertrump)
        else:
            total += reference_perft(rest, played, (seat + 1) % 4, trump, must_undertrump)
    return total


def engine_perft(deal: Deal) -> int:
    if deal.is_over:
        return 1
    total = 0
    mask = deal.legal_cards()
    for card in cards_of(mask):
        child = deal.copy()
        child.apply_unchecked(int(card))
        total += engine_perft(child)
    return total


def position(rules: Ruleset, seed: int, cards_left: int) -> Deal:
    """A deal played at random until ``cards_left`` cards remain to be played."""
    rng = random.Random(seed)
    while True:
        deal = deal_from_rng(rules, seed % 4, rng)
        while not deal.is_over and deal.phase == "bidding":
            deal.apply_unchecked(rng.choice(deal.legal_actions()))
        if not deal.is_over:
            break
    while 32 - len(deal.plays) > cards_left:
        deal.apply_unchecked(int(rng.choice(cards_of(deal.legal_cards()))))
    return deal


def reference_args(deal: Deal) -> tuple[list[list[str]], list[tuple[int, str]], int, str]:
    hands = [[str(c) for c in cards_of(h)] for h in deal.hands]
    leader = deal.trick_leader
    trick = [((leader + i) % 4, str(cards_of(1 << c)[0])) for i, c in enumerate(deal.trick)]
    return hands, trick, deal.to_act, "SHDC"[deal.trump]


@pytest.mark.parametrize("must_undertrump", [True, False], ids=["must_undertrump", "free_discard"])
@pytest.mark.parametrize("seed", range(12))
def test_perft_matches_the_reference_over_the_last_three_tricks(seed: int, must_undertrump: bool) -> None:
    rules = Ruleset.from_spec("classic").with_options(must_undertrump=must_undertrump)
    deal = position(rules, seed, cards_left=13 + seed % 3)
    hands, trick, seat, trump = reference_args(deal)
    assert engine_perft(deal) == reference_perft(hands, trick, seat, trump, must_undertrump)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(6))
def test_perft_matches_the_reference_over_the_last_four_tricks(seed: int) -> None:
    rules = Ruleset.from_spec("coinche").with_options(must_undertrump=seed % 2 == 0)
    deal = position(rules, 100 + seed, cards_left=17)
    hands, trick, seat, trump = reference_args(deal)
    assert engine_perft(deal) == reference_perft(hands, trick, seat, trump, rules.must_undertrump)
