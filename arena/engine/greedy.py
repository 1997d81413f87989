"""The heuristic bot's card rules on masks, cheap enough to play a deal out thousands of times.

The taker's side leads its jack of trump, else an ace; a seat loads points on a trick its partner
holds; else it wins as cheaply as it can or throws its cheapest card. Words (belote, declarations)
go with the card whenever it may carry them.

Two callers play deals out with it: the search bot's rollouts (``belote_bot.bots.rollout``) and
the analysis's second opinion (``arena.analysis.second``). It is one rule, here, so that what the
second opinion calls "the heuristic's play" is what the search bot plays.
"""

from __future__ import annotations

from arena.engine import actions as A
from arena.engine.cards import (
    ACE,
    JACK,
    KING,
    PLAIN_POINTS,
    PLAIN_STRENGTH,
    QUEEN,
    SUIT_MASKS,
    TRUMP_POINTS,
    TRUMP_STRENGTH,
)
from arena.engine.deal import Deal

__all__ = ["greedy_card", "with_words"]

#: _VALUE[trump][card], _STRENGTH[trump][card]: points and trick strength with that trump
_VALUE: tuple[tuple[int, ...], ...] = tuple(
    tuple(TRUMP_POINTS[c & 7] if c >> 3 == t else PLAIN_POINTS[c & 7] for c in range(32)) for t in range(4))
_STRENGTH: tuple[tuple[int, ...], ...] = tuple(
    tuple(8 + TRUMP_STRENGTH[c & 7] if c >> 3 == t else PLAIN_STRENGTH[c & 7] for c in range(32))
    for t in range(4))
_ACES = sum(1 << (8 * s + ACE) for s in range(4))


def with_words(deal: Deal, card: int) -> int:
    """The action playing ``card`` with the most words it may carry (belote, declarations)."""
    rules = deal.rules
    if (rules.annonces and not deal.tricks) or (
            rules.belote == "declared" and deal.to_act == deal.belote_seat and card >> 3 == deal.trump
            and card & 7 in (KING, QUEEN)):
        best = card
        for a in deal.legal_actions():
            if a & A.CARD_FIELD == card and a >> 5 > best >> 5:
                best = a
        return best
    return card


def greedy_card(deal: Deal) -> int:
    """The heuristic bot's card rules on masks: the taker's side leads its jack of trump, else an
    ace; it loads points on a trick its partner holds; else it wins as cheaply as it can or throws
    its cheapest card. The action, with its words."""
    mask = deal.legal_cards()
    if not mask & (mask - 1):
        return with_words(deal, mask.bit_length() - 1)
    t = deal.trump
    value, strength = _VALUE[t], _STRENGTH[t]
    seat = deal.to_act
    card = -1
    if not deal.trick:
        trumps = mask & SUIT_MASKS[t]
        if deal.taker & 1 == seat & 1 and trumps >> (8 * t + JACK) & 1:
            card = 8 * t + JACK
        else:
            aces = mask & _ACES & ~SUIT_MASKS[t]
            if aces:
                card = (aces & -aces).bit_length() - 1
    elif deal.trick_winner == seat ^ 2:
        best_key = -99
        m = mask
        while m:
            low = m & -m
            c = low.bit_length() - 1
            m ^= low
            key = (value[c] if c >> 3 != t else -1) * 16 - strength[c]
            if key > best_key:
                best_key, card = key, c
        return with_words(deal, card)
    else:
        bs = strength[deal.trick_best]
        led = deal.trick[0] >> 3
        best_key = 999
        m = mask
        while m:
            low = m & -m
            c = low.bit_length() - 1
            m ^= low
            cs = strength[c]
            if cs > bs and (c >> 3 == t or c >> 3 == led):
                key = cs * 32 + value[c]
                if key < best_key:
                    best_key, card = key, c
    if card < 0:
        best_key = 999
        m = mask
        while m:
            low = m & -m
            c = low.bit_length() - 1
            m ^= low
            key = value[c] * 32 + strength[c]
            if key < best_key:
                best_key, card = key, c
    return with_words(deal, card)
