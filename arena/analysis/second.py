"""The second opinion: each legal card valued on what the bot itself knew (sampled hands).

Double-dummy analysis sees every card; a bot sees its own hand and the public
play. This is how the SDK's search bot (docs/search-bot.md) judges a card, done
here with the engine alone (the analysis may not import the SDK): perfect-
information Monte Carlo.

1. **Sample** the cards the bot could not see: every card neither in its hand
   nor played, dealt to the three other seats in the numbers they still hold,
   each seat void in a suit it did not follow, the cards a seat is known to
   hold kept with it (the classic taker's retourne, the other card of a
   belote said). The record's plays are then replayed on the sampled deal
   and a sample in which one of them would have been illegal (a trump a seat
   should have played, a declaration it could not hold) is drawn again: the
   sample agrees with everything public. After :data:`TRIES` failures the
   last sample is kept (it agrees with the voids). The bidding is not read
   for clues about the hands (the search bot weighs samples by it; here a
   bid tells nothing).
2. **Roll out** every legal card on each sample: the rest of the deal played
   by the heuristic bot's card rules (:func:`greedy_card`, the search bot's
   ``greedy`` rollout), and the deal scored for the bot's side (its deal
   score less the other's).
3. A card's value is its mean over the samples (all cards on the same
   samples); the **loss** of the card played is the best mean less its own.

Random draws come from a ``random.Random`` the caller seeds (the match's seed,
the deal and the decision), so an analysis is the same every time it is made.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from arena.engine import actions as A
from arena.engine.cards import KING, QUEEN, SUIT_MASKS
from arena.engine.deal import Deal, Phase
from arena.engine.greedy import greedy_card, with_words
from arena.engine.scoring import score_deal

__all__ = ["TRIES", "Opinion", "greedy_card", "opinion", "sample_deal"]

#: samples drawn again when a replayed play is illegal on them, at most
TRIES = 20

_PLAY = Phase.PLAY


@dataclass(frozen=True, slots=True)
class Opinion:
    """What the second opinion says of one decision."""

    #: each legal card's mean value for the bot's side (its deal score less the other's)
    values: dict[int, float]
    #: the cards of the best mean
    best: tuple[int, ...]
    #: the best mean less the card played's
    loss: float
    samples: int


def _voids(real: Deal, plays: int) -> list[int]:
    """The suits (a mask of their cards) each seat showed it lacks in the first ``plays`` plays of
    ``real`` (a deal replayed to its end, or further)."""
    voids = [0, 0, 0, 0]
    for n, (leader, cards, _winner) in enumerate(real.tricks):
        led = cards[0] >> 3
        for k, c in enumerate(cards[1:], start=1):
            if 4 * n + k >= plays:
                return voids
            if c >> 3 != led:
                voids[(leader + k) & 3] |= SUIT_MASKS[led]
    return voids


def sample_deal(start: Deal, plays: Sequence[int], seat: int, rng: random.Random, *,
                voids: Sequence[int], known: Sequence[int]) -> Deal:
    """A deal at the decision after ``plays`` (the record's plays, with their words), ``seat``'s hand
    as it was and the others' drawn as the module docstring says. ``start`` is the real deal as its
    card play starts (bids applied); ``known[s]`` the cards seat ``s`` is known to hold from its
    first card on, ``voids[s]`` the suits it showed it lacks before the decision."""
    initial = start.hands  # at the start of the play
    played_by = [0, 0, 0, 0]
    trial = start.copy()
    for a in plays:
        played_by[trial.to_act] |= 1 << (a & 31)
        trial.apply_unchecked(a)
    hidden = 0
    for s in range(4):
        if s != seat:
            hidden |= initial[s] & ~played_by[s] & ~known[s]
    cards = [c for c in range(32) if hidden >> c & 1]
    room = [0 if s == seat else (initial[s] & ~played_by[s] & ~known[s]).bit_count() for s in range(4)]
    last: Deal | None = None
    for _ in range(TRIES):
        hands = _draw(cards, room, voids, seat, rng)
        if hands is None:
            continue
        full = [initial[s] if s == seat else hands[s] | played_by[s] | (initial[s] & known[s])
                for s in range(4)]
        deal = _rebuilt(start, full)
        ok = True
        for a in plays:
            if not deal.legal_cards() >> (a & 31) & 1 or (a > A.CARD_FIELD and a not in deal.legal_actions()):
                ok = False
                break
            deal.apply_unchecked(a)
        if ok:
            return deal
        last = _rebuilt(start, full)
    if last is None:  # the voids could not be kept: the real cards' counts, dealt at random
        free = [c for c in range(32) if hidden >> c & 1]
        rng.shuffle(free)
        full = list(initial)
        at = 0
        for s in range(4):
            if s != seat:
                mine = 0
                for c in free[at:at + room[s]]:
                    mine |= 1 << c
                at += room[s]
                full[s] = mine | played_by[s] | (initial[s] & known[s])
        last = _rebuilt(start, full)
    try:
        for a in plays:
            last.apply_unchecked(a)
    except (KeyError, IndexError, ValueError):  # words the sample cannot carry: the real hands
        last = start.copy()
        for a in plays:
            last.apply_unchecked(a)
    return last


def _draw(cards: list[int], room: list[int], voids: Sequence[int], seat: int,
          rng: random.Random) -> list[int] | None:
    """The hidden ``cards`` dealt to the seats with ``room``, none to a seat void in its suit; None
    when this draw got stuck."""
    order = cards[:]
    rng.shuffle(order)
    # the most constrained cards first: those fewest seats may hold
    order.sort(key=lambda c: sum(1 for s in range(4) if s != seat and not voids[s] >> c & 1))
    left = room[:]
    hands = [0, 0, 0, 0]
    for c in order:
        can = [s for s in range(4) if s != seat and left[s] and not voids[s] >> c & 1]
        if not can:
            return None
        weights = [left[s] for s in can]
        s = rng.choices(can, weights)[0]
        hands[s] |= 1 << c
        left[s] -= 1
    return hands


def _rebuilt(start: Deal, hands: list[int]) -> Deal:
    """``start`` (a deal at its first card) with other hands: its contract, its belote seat anew."""
    deal = start.copy()
    deal.hands = list(hands)
    deal.initial_hands = list(hands)
    t = deal.trump
    k, q = 1 << (8 * t + KING), 1 << (8 * t + QUEEN)
    deal.belote_seat = -1
    for s in range(4):
        if hands[s] & k and hands[s] & q:
            deal.belote_seat = s
    return deal


def known_cards(start: Deal, real: Deal, plays: Sequence[int]) -> list[int]:
    """The cards each seat is known to hold once ``plays`` are public: the classic taker's
    retourne, the other card of a belote said (before it is played), the melds of a seat that
    announced declarations (shown at trick 2; kept from the announcement on, which tells a bot a
    little more than it knew during the first trick)."""
    known = [0, 0, 0, 0]
    first = len(plays) >= 1
    for s in range(4):
        k = (s - start.to_act) & 3  # the seat's first card is plays[k]
        if first and k < len(plays) and plays[k] >> A.DECL_SHIFT:
            for meld in real.declared[s]:
                known[s] |= meld.mask
    if start.retourne >= 0 and start.taker >= 0:
        known[start.taker] |= 1 << start.retourne
    t = start.trump
    for i, a in enumerate(plays):
        if a & A.BELOTE_WORD and t >= 0:
            seat = _seat_of(start, plays, i)
            other = 8 * t + (QUEEN if a & 7 == KING else KING)
            known[seat] |= 1 << other
    return known


def _seat_of(start: Deal, plays: Sequence[int], i: int) -> int:
    deal = start.copy()
    for a in plays[:i]:
        deal.apply_unchecked(a)
    return deal.to_act


def opinion(start: Deal, real: Deal, plays: Sequence[int], played: int, rng: random.Random,
            samples: int) -> Opinion | None:
    """The second opinion of the decision after ``plays`` (``real``: the deal replayed to its end,
    ``start``: at its first card); None when the seat had one legal card."""
    at = start.copy()
    for a in plays:
        at.apply_unchecked(a)
    seat = at.to_act
    legal = at.legal_cards()
    if not legal & (legal - 1):
        return None
    team = seat & 1
    voids = _voids(real, len(plays))
    known = known_cards(start, real, plays)
    cards = [c for c in range(32) if legal >> c & 1]
    totals = dict.fromkeys(cards, 0)
    for _ in range(samples):
        deal = sample_deal(start, plays, seat, rng, voids=voids, known=known)
        for c in cards:
            d = deal.copy()
            d.apply_unchecked(with_words(d, c))
            while d.phase == _PLAY:
                d.apply_unchecked(greedy_card(d))
            score = score_deal(d).score
            totals[c] += score[team] - score[1 - team]
    values = {c: totals[c] / samples for c in cards}
    top = max(values.values())
    best = tuple(c for c in cards if values[c] >= top - 1e-9)
    return Opinion(values, best, top - values[played & 31], samples)
