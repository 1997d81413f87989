"""In-process players over a seat's :class:`Observation`: random and rule-based.

They are pure (randomness comes in as a ``random.Random``) so ``selfplay``
and tests replay exactly; the SDK's built-in bots wrap the same logic.

The rule-based player follows the advice of source 001: take with the jack or
the nine of trump, two more trumps and an ace or two; load points (a ten or an
ace) on a trick the partner holds; otherwise win as cheaply as possible or
throw the cheapest card; say belote and declare everything it may.
"""

from __future__ import annotations

import random
from typing import Protocol

from arena.engine import actions as A
from arena.engine.cards import ACE, JACK, NINE, TRUMP_POINTS, beats, card_strength, card_value
from arena.engine.observation import Observation


class Player(Protocol):
    name: str

    def act(self, obs: Observation, rng: random.Random) -> int: ...


class RandomPlayer:
    """Any legal action, uniformly."""

    name = "random"

    def act(self, obs: Observation, rng: random.Random) -> int:
        return rng.choice(obs.legal_actions)


def _suit_strength(hand: int, suit: int) -> tuple[int, int, bool]:
    """(number of trumps, trump points, holds the jack or the nine) if ``suit`` were trump."""
    b = (hand >> (8 * suit)) & 0xFF
    n = b.bit_count()
    pts = sum(TRUMP_POINTS[r] for r in range(8) if b >> r & 1)
    return n, pts, bool(b >> JACK & 1 or b >> NINE & 1)


def _aces(hand: int, trump: int) -> int:
    return sum(1 for s in range(4) if s != trump and hand >> (8 * s + ACE) & 1)


class HeuristicPlayer:
    """A simple rule-based player; see the module docstring."""

    name = "heuristic"

    def act(self, obs: Observation, rng: random.Random) -> int:
        legal = obs.legal_actions
        if legal[0] >= A.BID:
            return self._bid(obs, legal)
        return self._play(obs, legal)

    # -- bidding
    def _bid(self, obs: Observation, legal: tuple[int, ...]) -> int:
        hand = obs.hand
        if A.TAKE in legal:
            suit = obs.retourne >> 3
            return A.TAKE if self._worth_taking(hand | 1 << obs.retourne, suit) else A.PASS
        choices = [a for a in legal if A.CHOOSE <= a < A.CHOOSE + 4]
        if choices:
            good = [a for a in choices if self._worth_taking(hand, a - A.CHOOSE)]
            if good:
                return max(good, key=lambda a: _suit_strength(hand, a - A.CHOOSE)[:2])
            return A.PASS
        values = [a for a in legal if A.is_value_bid(a)]
        if not values:
            return A.PASS
        best_suit = max(range(4), key=lambda s: _suit_strength(hand, s)[:2])
        estimate = self._coinche_estimate(hand, best_suit)
        standing = max((A.bid_value(b) for b in obs.bids if A.is_value_bid(b)), default=0)
        partner_bid = any(
            A.is_value_bid(b) and (obs.dealer + 1 + i) % 4 == (obs.seat + 2) % 4
            for i, b in enumerate(obs.bids)
        )
        if partner_bid:
            estimate += 10 * _aces(hand, -1)
        value = estimate // 10 * 10
        if value >= 80 and value > standing:
            target = A.bid_action(min(value, 160), best_suit)
            if target in legal:
                return target
        return A.PASS

    @staticmethod
    def _worth_taking(hand: int, suit: int) -> bool:
        n, _, master = _suit_strength(hand, suit)
        return master and n >= 3 and _aces(hand, suit) >= 1

    @staticmethod
    def _coinche_estimate(hand: int, suit: int) -> int:
        n, pts, master = _suit_strength(hand, suit)
        if not master or n < 3:
            return 0
        return 40 + 10 * n + pts // 2 + 10 * _aces(hand, suit)

    # -- card play
    def _play(self, obs: Observation, legal: tuple[int, ...]) -> int:
        trump = obs.trump
        cards = sorted({a & A.CARD_FIELD for a in legal})
        card = self._choose_card(obs, cards, trump)
        # say belote / rebelote and declare the most we may with that card
        return max((a for a in legal if a & A.CARD_FIELD == card), key=lambda a: a >> 5)

    def _choose_card(self, obs: Observation, cards: list[int], trump: int) -> int:
        def value(c: int) -> int:
            return card_value(c, trump)

        def strength(c: int) -> int:
            return card_strength(c, trump)

        trick = obs.trick
        if not trick:
            takers_side = obs.taker >= 0 and (obs.taker ^ obs.seat) & 1 == 0
            trumps = [c for c in cards if c >> 3 == trump]
            if takers_side and trumps and any(c & 7 == JACK for c in trumps):
                return max(trumps, key=strength)
            aces = [c for c in cards if c >> 3 != trump and c & 7 == ACE]
            if aces:
                return aces[0]
            return min(cards, key=lambda c: (value(c), strength(c)))
        winner = obs.trick_winner
        best = trick[(winner - obs.trick_leader) & 3]
        if (winner ^ obs.seat) == 2:
            # partner holds the trick: load it unless it can still be overtaken cheaply
            return max(cards, key=lambda c: (value(c) if c >> 3 != trump else -1, -strength(c)))
        winning = [c for c in cards if beats(c, best, trump)]
        if winning:
            return min(winning, key=lambda c: (strength(c), value(c)))
        return min(cards, key=lambda c: (value(c), strength(c)))


PLAYERS: dict[str, type[RandomPlayer] | type[HeuristicPlayer]] = {
    "random": RandomPlayer,
    "heuristic": HeuristicPlayer,
}
