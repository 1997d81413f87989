"""Rollout policies: how a sampled deal is played to its end during a search.

A policy is a function ``(deal, rng) -> action`` for the seat to act in an
engine :class:`~arena.engine.Deal` in its card play. It must be fast (a
search plays tens of thousands of cards a second) and return a legal action:
the ones here read the legal cards as a mask (``deal.legal_cards()``) and add
the words (belote, declarations) only where they may apply.

- :func:`random_policy`: any legal card, uniformly;
- :func:`greedy_policy`: the cheap rules of the heuristic bot on masks: lead an
  ace (the taker's side leads its jack of trump first), load points on a
  trick the partner holds, else win it as cheaply as possible or throw the
  cheapest card.
"""

from __future__ import annotations

import random
from collections.abc import Callable

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
from arena.engine.deal import Deal, Phase
from arena.engine.scoring import score_deal

__all__ = ["POLICIES", "RolloutPolicy", "greedy_policy", "play_out", "random_policy", "team_value"]

#: a rollout policy: the action of the seat to act, in the card play
RolloutPolicy = Callable[[Deal, random.Random], int]

_PLAY = Phase.PLAY

#: _VALUE[trump][card], _STRENGTH[trump][card]: points and trick strength with that trump
_VALUE: tuple[tuple[int, ...], ...] = tuple(
    tuple(TRUMP_POINTS[c & 7] if c >> 3 == t else PLAIN_POINTS[c & 7] for c in range(32)) for t in range(4)
)
_STRENGTH: tuple[tuple[int, ...], ...] = tuple(
    tuple(8 + TRUMP_STRENGTH[c & 7] if c >> 3 == t else PLAIN_STRENGTH[c & 7] for c in range(32))
    for t in range(4)
)
_ACES = sum(1 << (8 * s + ACE) for s in range(4))


def with_words(deal: Deal, card: int) -> int:
    """The action playing ``card`` with the most words it may carry (belote, declarations)."""
    rules = deal.rules
    if (rules.annonces and not deal.tricks) or (
        rules.belote == "declared" and deal.to_act == deal.belote_seat and card >> 3 == deal.trump
        and card & 7 in (KING, QUEEN)
    ):
        best = card
        for a in deal.legal_actions():
            if a & A.CARD_FIELD == card and a >> 5 > best >> 5:
                best = a
        return best
    return card


def random_policy(deal: Deal, rng: random.Random) -> int:
    """Any legal card, uniformly (with its words)."""
    mask = deal.legal_cards()
    n = rng.randrange(mask.bit_count())
    while n:
        mask &= mask - 1
        n -= 1
    return with_words(deal, (mask & -mask).bit_length() - 1)


def greedy_policy(deal: Deal, rng: random.Random) -> int:
    """The heuristic bot's card play on masks (see the module docstring); ``rng`` is not used."""
    mask = deal.legal_cards()
    if not mask & (mask - 1):
        return with_words(deal, mask.bit_length() - 1)
    t = deal.trump
    value = _VALUE[t]
    strength = _STRENGTH[t]
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
        # load the partner's trick: the most points that are not trumps
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
        best = deal.trick_best
        bs = strength[best]
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


def epsilon_greedy(epsilon: float) -> RolloutPolicy:
    """:func:`greedy_policy`, but a uniformly random card with probability ``epsilon``."""

    def policy(deal: Deal, rng: random.Random) -> int:
        if rng.random() < epsilon:
            return random_policy(deal, rng)
        return greedy_policy(deal, rng)

    return policy


POLICIES: dict[str, RolloutPolicy] = {
    "greedy": greedy_policy,
    "random": random_policy,
    "epsilon": epsilon_greedy(0.1),
}


def play_out(deal: Deal, policy: RolloutPolicy, rng: random.Random) -> int:
    """Play the card play of ``deal`` to its end with ``policy``; the number of cards played."""
    n = 0
    apply = deal.apply_unchecked
    while deal.phase == _PLAY:
        apply(policy(deal, rng))
        n += 1
    return n


def team_value(deal: Deal, team: int) -> int:
    """The deal's score for ``team`` minus the other team's (a thrown-in deal: 0)."""
    score = score_deal(deal).score
    return score[team] - score[1 - team]
