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

from arena.engine.deal import Deal, Phase
from arena.engine.greedy import greedy_card, with_words
from arena.engine.scoring import score_deal

__all__ = ["POLICIES", "RolloutPolicy", "greedy_policy", "play_out", "random_policy", "team_value"]

#: a rollout policy: the action of the seat to act, in the card play
RolloutPolicy = Callable[[Deal, random.Random], int]

_PLAY = Phase.PLAY


def random_policy(deal: Deal, rng: random.Random) -> int:
    """Any legal card, uniformly (with its words)."""
    mask = deal.legal_cards()
    n = rng.randrange(mask.bit_count())
    while n:
        mask &= mask - 1
        n -= 1
    return with_words(deal, (mask & -mask).bit_length() - 1)


def greedy_policy(deal: Deal, rng: random.Random) -> int:
    """The heuristic bot's card play on masks (:func:`arena.engine.greedy.greedy_card`, see the module
    docstring); ``rng`` is not used."""
    return greedy_card(deal)


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
