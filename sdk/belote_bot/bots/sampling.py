"""Determinization: deal the cards a seat cannot see, consistent with everything public.

:func:`knowledge_of` reads one seat's engine observation into a :class:`Knowledge`:
which cards are unseen, how many each other seat holds, which cards a seat
cannot hold (a suit it showed void in, trumps above one it could not beat)
and which it must hold (the unplayed cards of its shown melds, the queen or
king after it said "belote", the retourne with the classic taker).
:func:`sample_hands` deals the unseen cards once under those constraints,
weighted by what the bidding implies (rejection sampling), and
:func:`deal_of` rebuilds the engine :class:`~arena.engine.Deal` of that
sample at the current state, ready for ``copy()`` and ``apply_unchecked()``.

Classic bidding deals 5 cards each before the retourne and 3 more after the
taking (2 to the taker, who also gets the retourne): during it the sample is
a whole deck, so the rest of the bidding and the play can be simulated.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from arena.engine import actions as A
from arena.engine.cards import JACK, KING, NINE, QUEEN, SUIT_MASKS, TRUMP_ABOVE, beats
from arena.engine.deal import Deal
from arena.engine.declarations import Meld, compare_declarations, declaration_choices, shown_melds
from arena.engine.observation import Observation
from arena.engine.rules import Ruleset

__all__ = ["Knowledge", "Likelihood", "bid_likelihood", "deal_of", "knowledge_of", "sample_hands"]

ALL = (1 << 32) - 1
_DECL_FIELD = 0xFF << A.DECL_SHIFT


@dataclass(frozen=True, slots=True)
class Knowledge:
    """What one seat knows of the hidden cards, from its observation and the ruleset."""

    rules: Ruleset
    seat: int
    dealer: int
    retourne: int
    bids: tuple[int, ...]
    plays: tuple[int, ...]
    #: the seat's own cards now
    own: int
    #: the cards nobody has shown: neither in the own hand nor played nor the retourne (classic
    #: bidding) -- in the classic bidding, also the 11 cards still in the deck
    unseen: int
    #: cards each seat holds now (the seat's own count at its index)
    sizes: tuple[int, int, int, int]
    #: cards each seat has played this deal
    played: tuple[int, int, int, int]
    #: cards a seat cannot hold now (voids, trumps it could not beat)
    forbidden: tuple[int, int, int, int]
    #: unseen cards a seat must hold now (shown melds, belote, the retourne with the taker)
    forced: tuple[int, int, int, int]
    #: the declaration kinds each seat announced with its first card (0: none or not yet)
    announced: tuple[int, int, int, int]
    #: the cards of the melds each seat showed (after the first card of trick 2)
    shown: tuple[int, int, int, int]
    #: once compared (the first card of trick 2 is played): the team whose declarations score
    #: (None: nobody) and their points; None before
    declarations: tuple[int | None, int] | None
    #: classic bidding: hands of 5, the rest of the deck still to deal
    classic_bidding: bool


def knowledge_of(obs: Observation, rules: Ruleset) -> Knowledge:
    """Read the hidden-card constraints of ``obs.seat`` from its observation."""
    seat = obs.seat
    trump = obs.trump
    played = [0, 0, 0, 0]
    forbidden = [0, 0, 0, 0]
    forced = [0, 0, 0, 0]
    announced = [0, 0, 0, 0]
    belote_word = [False] * 4
    must_undertrump = rules.must_undertrump
    # every trick, complete or in progress, with its leader
    tricks = [(leader, cards) for leader, cards, _ in obs.tricks]
    if obs.trick:
        tricks.append((obs.trick_leader, obs.trick))
    i = 0
    for t_index, (leader, cards) in enumerate(tricks):
        best = -1
        winner = -1
        for pos, card in enumerate(cards):
            p = (leader + pos) & 3
            action = obs.plays[i]
            i += 1
            played[p] |= 1 << card
            if t_index == 0 and action >> A.DECL_SHIFT:
                announced[p] = action >> A.DECL_SHIFT
            if action & A.BELOTE_WORD:
                belote_word[p] = True
            suit = card >> 3
            if pos:
                led = cards[0] >> 3
                tshift = 8 * trump
                above = TRUMP_ABOVE[best & 7] << tshift if best >> 3 == trump else SUIT_MASKS[trump]
                if led == trump:
                    if suit != trump:
                        forbidden[p] |= SUIT_MASKS[trump]
                    elif not (1 << card) & above:
                        forbidden[p] |= above
                elif suit != led:
                    forbidden[p] |= SUIT_MASKS[led]
                    if winner != p ^ 2:
                        if suit != trump:
                            if best >> 3 != trump or must_undertrump:
                                forbidden[p] |= SUIT_MASKS[trump]
                            else:
                                forbidden[p] |= above
                        elif not (1 << card) & above:
                            forbidden[p] |= above
            if best < 0 or beats(card, best, trump):
                best, winner = card, p
    played_all = played[0] | played[1] | played[2] | played[3]
    own = obs.hand
    retourne = obs.retourne
    classic_bidding = not rules.is_coinche and obs.taker < 0
    # shown melds: their unplayed cards are still in the hand
    shown = [0, 0, 0, 0]
    for s, mask in obs.shown_declarations:
        forced[s] |= mask & ~played_all
        shown[s] |= mask
    # "belote" said with the first card: the other one is still held, unless played since
    if trump >= 0:
        k, q = 1 << (8 * trump + KING), 1 << (8 * trump + QUEEN)
        for s in range(4):
            if belote_word[s]:
                forced[s] |= (k | q) & ~played_all
    if not rules.is_coinche and obs.taker >= 0 and not played_all >> retourne & 1:
        forced[obs.taker] |= 1 << retourne
    declarations: tuple[int | None, int] | None = None
    if rules.annonces and len(obs.plays) > 4:
        points = sum(m.points for s, mask in obs.shown_declarations for m in shown_melds(mask, trump))
        declarations = (obs.declarations_team, points)
    forced[seat] = 0
    forbidden[seat] = 0
    unseen = ALL & ~own & ~played_all
    if classic_bidding:
        unseen &= ~(1 << retourne)
        sizes = [5, 5, 5, 5]
    else:
        sizes = [8 - played[s].bit_count() for s in range(4)]
    sizes[seat] = own.bit_count()
    for s in range(4):
        forbidden[s] &= ~forced[s]
    return Knowledge(
        rules=rules, seat=seat, dealer=obs.dealer, retourne=retourne, bids=obs.bids, plays=obs.plays,
        own=own, unseen=unseen, sizes=_four(sizes), played=_four(played), forbidden=_four(forbidden),
        forced=_four(forced), announced=_four(announced), shown=_four(shown), declarations=declarations,
        classic_bidding=classic_bidding,
    )


def _four(v: list[int]) -> tuple[int, int, int, int]:
    return (v[0], v[1], v[2], v[3])


# ------------------------------------------------------------------------ dealing
def _bits(mask: int) -> list[int]:
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def _deal_once(k: Knowledge, rng: random.Random, strict: bool) -> list[int] | None:
    """One random assignment of the unseen cards to the other seats, or None on a dead end.

    The cards some seat may not hold go first, those fewer seats may hold before the others,
    each to an eligible seat with room, chosen with odds proportional to its room; the free
    cards then fill the room left in a random order. Without ``strict`` the voids are ignored
    (a last resort for a history the constraints cannot explain).
    """
    seat = k.seat
    others = ((seat + 1) & 3, (seat + 2) & 3, (seat + 3) & 3)
    hands = [0, 0, 0, 0]
    hands[seat] = k.own
    room = list(k.sizes)
    room[seat] = 0
    pool = k.unseen
    for s in others:
        hands[s] = k.forced[s] & pool
        pool &= ~hands[s]
        room[s] -= hands[s].bit_count()
        if room[s] < 0:
            return None
    forbidden = k.forbidden if strict else (0, 0, 0, 0)
    fa, fb, fc = forbidden[others[0]], forbidden[others[1]], forbidden[others[2]]
    hard = pool & (fa | fb | fc)
    if hard:
        cards = _bits(hard)
        rng.shuffle(cards)
        # the cards with fewer eligible seats first (a stable sort keeps the shuffle among equals)
        cards.sort(key=lambda c: (fa >> c & 1) + (fb >> c & 1) + (fc >> c & 1), reverse=True)
        for c in cards:
            total = 0
            for s in others:
                if room[s] > 0 and not forbidden[s] >> c & 1:
                    total += room[s]
            if total == 0:
                if k.classic_bidding:
                    continue  # stays in the deck
                return None
            r = int(rng.random() * total)
            for s in others:
                if room[s] > 0 and not forbidden[s] >> c & 1:
                    r -= room[s]
                    if r < 0:
                        hands[s] |= 1 << c
                        room[s] -= 1
                        break
    free = _bits(pool & ~hard)
    rng.shuffle(free)
    pos = 0
    for s in others:
        n = room[s]
        for c in free[pos:pos + n]:
            hands[s] |= 1 << c
        pos += n
    if pos > len(free) or (pos < len(free) and not k.classic_bidding):
        return None
    return hands


def bid_likelihood(k: Knowledge, hands: list[int]) -> float:
    """How likely the others' bids were with these hands, up to a constant, in (0, 1].

    A seat that named a trump (a take, a suit in round two, a value bid) most likely holds its
    jack or nine and enough trumps for the level: a simple, bounded model, kept so that the
    samples lean toward what the bidding says without ever excluding a deal.
    """
    w = 1.0
    first = k.dealer + 1
    for i, b in enumerate(k.bids):
        s = (first + i) & 3
        if s == k.seat:
            continue
        if b == A.TAKE:
            suit, need = k.retourne >> 3, 3
        elif A.CHOOSE <= b < A.CHOOSE + 4:
            suit, need = b - A.CHOOSE, 3
        elif A.is_value_bid(b):
            suit = A.bid_suit(b)
            need = min(5, 3 + (A.bid_value(b) - 80) // 30)
        else:
            continue
        hand = hands[s] | k.played[s]
        if b == A.TAKE or (k.classic_bidding and A.CHOOSE <= b < A.CHOOSE + 4):
            hand |= 1 << k.retourne
        byte = (hand >> (8 * suit)) & 0xFF
        w *= 1.0 if byte >> JACK & 1 else 0.5 if byte >> NINE & 1 else 0.2
        short = need - byte.bit_count()
        if short > 0:
            w *= 0.5 ** short
    return w


def _announcements_hold(k: Knowledge, hands: list[int]) -> bool:
    """Whether the seats could have announced what they did, and, once the declarations are
    compared, whether the sample's comparison gives the public result."""
    if not k.rules.annonces:
        return True
    trump = _trump_of(k)
    declared: list[tuple[Meld, ...]] = [(), (), (), ()]
    for s in range(4):
        code = k.announced[s]
        if code:
            choices = declaration_choices(hands[s] | k.played[s], trump)
            if code not in choices:
                return False
            declared[s] = choices[code]
            if k.shown[s] and sum(m.mask for m in declared[s]) != k.shown[s]:
                return False  # the same kinds, but not the melds it showed
    return k.declarations is None or compare_declarations(declared) == k.declarations


def _trump_of(k: Knowledge) -> int:
    """The trump suit once the contract is set (the plays only exist then)."""
    trump = -1
    for b in k.bids:
        if b == A.TAKE:
            trump = k.retourne >> 3
        elif A.CHOOSE <= b < A.CHOOSE + 4:
            trump = b - A.CHOOSE
        elif A.is_value_bid(b):
            trump = A.bid_suit(b)
    return trump


#: how likely the public bidding is with some hands: (knowledge, hands) -> weight in [0, 1]
Likelihood = Callable[[Knowledge, list[int]], float]


def sample_hands(
    k: Knowledge, rng: random.Random, tries: int = 24, weighted: bool = True,
    likelihood: Likelihood | None = None,
) -> list[int]:
    """The four hands now (the own one as it is), the unseen cards dealt once under the constraints.

    Each try deals the cards and is kept with probability :func:`bid_likelihood` (rejection
    sampling; ``likelihood`` replaces it); after ``tries`` the likeliest deal seen is kept.
    A deal that could not have announced the declarations the seats announced (or compares
    them otherwise than shown) is never kept while another can be found (up to ``8 * tries``).
    """
    best: list[int] | None = None
    best_w = -1.0
    fallback: list[int] | None = None
    for attempt in range(8 * tries):
        hands = _deal_once(k, rng, strict=attempt < 8 * tries - 2 or fallback is not None)
        if hands is None:
            continue
        if fallback is None:
            fallback = hands
        if not _announcements_hold(k, hands):
            continue
        w = (likelihood or bid_likelihood)(k, hands) if weighted else 1.0
        if w > best_w:
            best, best_w = hands, w
        if rng.random() < w:
            return hands
        if attempt >= tries - 1 and best is not None:
            return best
    if best is not None:
        return best
    if fallback is None:
        raise RuntimeError("no deal fits the public history")  # only on a history the rules forbid
    return fallback


# ------------------------------------------------------------------------ rebuilding
def deal_of(k: Knowledge, hands: list[int], rng: random.Random) -> Deal:
    """The engine deal of a sample, at the observation's state (bids and plays replayed)."""
    rules = k.rules
    if k.classic_bidding:
        deal = Deal.from_deck(rules, k.dealer, _deck(k, hands, rng))
        for b in k.bids:
            deal.apply_unchecked(b)
        return deal
    initial = [hands[s] | k.played[s] for s in range(4)]
    deal = Deal.from_hands(rules, k.dealer, initial, k.retourne if not rules.is_coinche else -1)
    for b in k.bids:
        deal.apply_unchecked(b)
    for i, p in enumerate(k.plays):
        if i < 4 and p & _DECL_FIELD and rules.annonces:
            seat = deal.to_act
            if (p >> A.DECL_SHIFT) not in declaration_choices(deal.hands[seat], deal.trump):
                p &= ~_DECL_FIELD  # a sample that cannot hold the announced kinds declares none
        deal.apply_unchecked(p)
    return deal


def _deck(k: Knowledge, hands: list[int], rng: random.Random) -> list[int]:
    """A classic deck dealing ``hands`` (5 cards each), the retourne, then the rest shuffled."""
    first = [_bits(hands[(k.dealer + i) & 3]) for i in range(1, 5)]
    deck = [c for cards in first for c in cards[:3]] + [c for cards in first for c in cards[3:]]
    rest = _bits(ALL & ~(hands[0] | hands[1] | hands[2] | hands[3]) & ~(1 << k.retourne))
    rng.shuffle(rest)
    return [*deck, k.retourne, *rest]
