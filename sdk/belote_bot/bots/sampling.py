"""Determinization: deal the cards a seat cannot see, consistent with everything public.

:func:`knowledge_of` reads one seat's engine observation into a :class:`Knowledge`:
which cards are unseen, how many each other seat holds, which cards a seat
cannot hold (a suit it showed void in, trumps above one it could not beat, a
card that would lengthen a sequence it showed) and which it must hold (the
unplayed cards of its shown melds, the queen or king after it said "belote",
the retourne with the classic taker).
:func:`sample_hands` deals the unseen cards once under those constraints,
weighted by what the bidding implies (rejection sampling); a seat that announced
declarations it has not shown is first given melds of those kinds (see
:func:`_with_announced_melds`), so rare kinds are sampled as surely as common ones; and
:func:`deal_of` rebuilds the engine :class:`~arena.engine.Deal` of that
sample at the current state, ready for ``copy()`` and ``apply_unchecked()``.

Classic bidding deals 5 cards each before the retourne and 3 more after the
taking (2 to the taker, who also gets the retourne): during it the sample is
a whole deck, so the rest of the bidding and the play can be simulated.
"""

from __future__ import annotations

import random
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import lru_cache
from math import comb

from arena.engine import actions as A
from arena.engine.cards import JACK, KING, NINE, PLAIN_STRENGTH, QUEEN, SUIT_MASKS, TRUMP_ABOVE, beats
from arena.engine.deal import Deal
from arena.engine.declarations import (
    CARRE_POINTS,
    RANK_MASKS,
    Meld,
    compare_declarations,
    declaration_choices,
    shown_melds,
)
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
    #: cards a seat cannot hold now (voids, trumps it could not beat, cards next to its shown
    #: sequences)
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
        if trump >= 0:  # a shown sequence is a whole run: the cards next to it were never held
            forbidden[s] |= _around_shown(mask, trump)
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


def _around_shown(mask: int, trump: int) -> int:
    """The cards next to the shown sequences of one seat, outside its shown carrés."""
    carres = 0
    around = 0
    for m in shown_melds(mask, trump):
        if m.kind == A.CARRE:
            carres |= m.mask
        else:
            around |= _around(m.mask)
    return around & ~carres & ~mask


def _around(seq: int) -> int:
    """The cards just below and just above a sequence, in its suit."""
    suit = SUIT_MASKS[(seq.bit_length() - 1) >> 3]
    return ((seq << 1) | (seq >> 1)) & suit & ~seq


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


# ------------------------------------------------------------------------ announced melds
#: a meld's comparison key (see :class:`~arena.engine.declarations.Meld`)
_Key = tuple[int, int, int, int]
#: a meld a seat may have announced: (cards, the cards next to a sequence, is a carré, comparison key)
_Candidate = tuple[int, int, bool, _Key]
#: a set of disjoint melds of the announced kinds: (cards, cards the seat must not hold, the key
#: of its best meld)
_MeldSet = tuple[int, int, _Key]
#: the cards still to deal to the three other seats: (free cards, what each may not hold, room
#: of each), the other seats in playing order after the sampling seat
_Table = tuple[int, tuple[int, int, int], tuple[int, int, int]]
#: an other seat (0..2 after the sampling seat) whose announced melds are hidden: (index, its
#: team, code, cards it holds, a key its melds are below)
_Pending = tuple[int, int, int, int, _Key | None]
#: when the declarations tied (nobody scored): the best key of each team so far
_Tie = tuple[_Key | None, _Key | None]


@lru_cache(maxsize=8)
def _candidates(trump: int) -> tuple[tuple[_Candidate, ...], ...]:
    """Every meld of each kind (tierce, cinquante, cent, carré) with its key under ``trump``.

    A sequence stands for a whole run: the cards next to it are not in the hand (a carré
    breaking a run aside), so a cent is any run of five to eight cards.
    """
    by_kind: list[list[_Candidate]] = [[], [], [], []]
    for suit in range(4):
        for length in range(3, 9):
            kind = A.TIERCE if length == 3 else A.CINQUANTE if length == 4 else A.CENT
            for low in range(9 - length):
                seq = ((1 << length) - 1) << (8 * suit + low)
                key = ((20, 50, 100)[kind], 0, low + length - 1, int(suit == trump))
                by_kind[kind].append((seq, _around(seq), False, key))
    for r in range(NINE, 8):
        by_kind[A.CARRE].append((RANK_MASKS[r], 0, True, (CARRE_POINTS[r], 1, PLAIN_STRENGTH[r], 0)))
    return tuple(tuple(c) for c in by_kind)


@lru_cache(maxsize=1 << 14)
def _completions(classes: tuple[int, ...], r0: int, r1: int) -> int:
    """In how many ways cards can go to three seats: ``classes[p]`` cards may go to the seats of
    the bits of ``p`` (1..7); the first two seats take ``r0`` and ``r1``, the third the rest."""
    ways = {(0, 0): 1}
    for p in range(1, 8):
        m = classes[p]
        if not m:
            continue
        step: dict[tuple[int, int], int] = {}
        for (a, b), w in ways.items():
            for x in range(min(m, r0 - a) + 1) if p & 1 else (0,):
                for y in range(min(m - x, r1 - b) + 1) if p & 2 else (0,):
                    if m - x - y and not p & 4:
                        continue
                    key = (a + x, b + y)
                    step[key] = step.get(key, 0) + w * comb(m, x) * comb(m - x, y)
        ways = step
    return ways.get((r0, r1), 0)


def _deals(table: _Table) -> int:
    """How many deals of the free cards fit the rooms and what each seat may not hold."""
    pool, (f0, f1, f2), (r0, r1, r2) = table
    if r0 < 0 or r1 < 0 or r2 < 0 or r0 + r1 + r2 != pool.bit_count():
        return 0
    classes = [0] * 8
    for p in range(8):
        cards = pool & (~f0 if p & 1 else f0) & (~f1 if p & 2 else f1) & (~f2 if p & 4 else f2)
        classes[p] = cards.bit_count()
    if classes[0]:
        return 0  # a card nobody may hold
    return _completions(tuple(classes), r0, r1)


@lru_cache(maxsize=1 << 12)
def _meld_sets(
    p: _Pending, table: _Table, trump: int, later: tuple[_Pending, ...] = (), tie: _Tie | None = None,
) -> tuple[tuple[_MeldSet, ...], tuple[int, ...]]:
    """The sets of disjoint melds of the kinds announced by the pending seat ``p`` that it could
    have held, each with its weight: how many deals of the rest fit it, the ``later`` pending
    seats holding sets of their own kinds (so the sets of all the pending seats are drawn
    jointly, with odds proportional to the deals that fit them).

    The seat holds its held cards (played, or known in its hand) and gets its room's worth
    more of the free cards of ``table``; its melds compare lower than its ``below`` key (its
    side did not score); with ``tie`` (nobody scored), both teams' best melds end equal. The
    weights are cumulative (for :func:`bisect.bisect_right`); a set no deal fits is left out.
    """
    i, team, code, held, below = p
    pool, forbidden, _ = table
    counts = A.decl_counts(code)
    kinds = [kind for kind in range(4) for _ in range(counts[kind])]
    avail = (pool & ~forbidden[i]) | held
    cands = [
        [c for c in by_kind if not c[0] & ~avail and (below is None or c[3] < below)]
        for by_kind in _candidates(trump)
    ]
    sets: list[_MeldSet] = []
    weights: list[int] = []
    total = 0
    lowest = (0, 0, 0, 0)

    def pick(j: int, start: int, cards: int, seqs: int, around: int, carres: int, top: _Key) -> None:
        nonlocal total
        if j == len(kinds):
            around &= ~carres  # a carré may break a run: the other melds then stand
            if around & (seqs | held):
                return  # two sequences would merge, or a held card lengthens one
            after = _place(table, i, cards, around)
            now = _raise(tie, team, top)
            if later:
                n = (_meld_sets(later[0], after, trump, later[1:], now)[1] or (0,))[-1]
            elif now is not None and now[0] != now[1]:
                n = 0
            else:
                n = _deals(after)
            if n:
                total += n
                sets.append((cards, around, top))
                weights.append(total)
            return
        kind = kinds[j]
        group = cands[kind]
        for g in range(start if j and kinds[j - 1] == kind else 0, len(group)):
            mask, near, carre, key = group[g]
            if mask & cards:
                continue
            pick(j + 1, g + 1, cards | mask, seqs if carre else seqs | mask, around | near,
                 carres | mask if carre else carres, key if key > top else top)

    pick(0, 0, 0, 0, 0, 0, lowest)
    return tuple(sets), tuple(weights)


def _raise(tie: _Tie | None, team: int, key: _Key) -> _Tie | None:
    """``tie`` once ``team`` holds a meld of ``key``."""
    if tie is None:
        return None
    best = tie[team]
    if best is not None and best >= key:
        return tie
    return (key, tie[1]) if team == 0 else (tie[0], key)


def _place(table: _Table, i: int, cards: int, around: int) -> _Table:
    """``table`` once the other seat ``i`` is given ``cards`` and denied ``around``."""
    pool, forbidden, rooms = table
    mine = cards & pool
    f = list(forbidden)
    f[i] |= around
    r = list(rooms)
    r[i] -= mine.bit_count()
    return pool & ~mine, (f[0], f[1], f[2]), (r[0], r[1], r[2])


def _pending(k: Knowledge) -> tuple[list[_Pending], _Table, _Tie | None]:
    """The other seats that announced declarations not shown (yet, or ever: their side did not
    score), the cards still to deal, and when the declarations tied, each team's best meld
    known (the sampling seat's own, any shown)."""
    if not k.rules.annonces or k.classic_bidding:
        return [], (0, (0, 0, 0), (0, 0, 0)), None
    trump = _trump_of(k)
    # once compared, a seat of the side that did not score held nothing as good as the best shown
    team = k.declarations[0] if k.declarations is not None else None
    below: _Key | None = None
    tie: _Tie | None = None
    if team is not None:
        below = max(m.key for s in range(4) if s & 1 == team for m in shown_melds(k.shown[s], trump))
    elif k.declarations is not None:
        best: list[_Key | None] = [None, None]
        own = declaration_choices(k.own | k.played[k.seat], trump).get(k.announced[k.seat], ())
        known = [m.key for m in own]
        for s in range(4):
            for key in [*(m.key for m in shown_melds(k.shown[s], trump)), *(known if s == k.seat else ())]:
                b = best[s & 1]
                if b is None or key > b:
                    best[s & 1] = key
        tie = (best[0], best[1])
    pending: list[_Pending] = []
    others = [(k.seat + j) & 3 for j in (1, 2, 3)]
    pool = k.unseen
    for s in others:
        pool &= ~k.forced[s]
    f = [k.forbidden[s] for s in others]
    r = [k.sizes[s] - (k.forced[s] & k.unseen).bit_count() for s in others]
    for i, s in enumerate(others):
        if k.announced[s] and not k.shown[s]:
            held = k.played[s] | (k.forced[s] & k.unseen)
            cap = below if team is not None and s & 1 != team else None
            pending.append((i, s & 1, k.announced[s], held, cap))
    return pending, (pool, (f[0], f[1], f[2]), (r[0], r[1], r[2])), tie


def _with_announced_melds(
    k: Knowledge, pending: list[_Pending], table: _Table, tie: _Tie | None, rng: random.Random,
) -> Knowledge | None:
    """``k`` with melds of the announced kinds forced into each pending seat's hand (and the
    cards that would lengthen its sequences forbidden to it), the sets of all the seats drawn
    jointly with odds proportional to the deals that fit them; None when no set fits."""
    forced = list(k.forced)
    forbidden = list(k.forbidden)
    trump = _trump_of(k)
    for j, p in enumerate(pending):
        sets, weights = _meld_sets(p, table, trump, tuple(pending[j + 1:]), tie)
        if not sets:
            return None
        cards, around, top = sets[bisect_right(weights, rng.random() * weights[-1])]
        i, team = p[0], p[1]
        s = (k.seat + 1 + i) & 3
        forced[s] |= cards & table[0]
        forbidden[s] |= around
        table = _place(table, i, cards, around)
        tie = _raise(tie, team, top)
    return replace(k, forced=_four(forced), forbidden=_four(forbidden))


def _ways(k: Knowledge, pending: list[_Pending], table: _Table, hands: list[int]) -> int:
    """In how many ways :func:`_with_announced_melds` could have drawn this deal: the product
    over the pending seats of the sets its hand holds whole (and not lengthened).

    A deal holding two sets of an announced kind is proposed twice as often: its weight is
    divided by this, so the samples stay uniform."""
    trump = _trump_of(k)
    ways = 1
    for p in pending:
        hand = hands[(k.seat + 1 + p[0]) & 3] | p[3]
        fits = sum(1 for cards, around, _ in _meld_sets(p, table, trump)[0]
                   if not cards & ~hand and not around & hand)
        ways *= max(1, fits)
    return ways


#: how likely the public bidding is with some hands: (knowledge, hands) -> weight in [0, 1]
Likelihood = Callable[[Knowledge, list[int]], float]


def sample_hands(
    k: Knowledge, rng: random.Random, tries: int = 24, weighted: bool = True,
    likelihood: Likelihood | None = None,
) -> list[int]:
    """The four hands now (the own one as it is), the unseen cards dealt once under the constraints.

    Each try deals the cards and is kept with probability :func:`bid_likelihood` (rejection
    sampling; ``likelihood`` replaces it); after ``tries`` the likeliest deal seen is kept.
    A seat that announced declarations not shown is first dealt melds of those kinds
    (:func:`_with_announced_melds`; the deal's weight is divided by :func:`_ways`). A deal
    that could not have announced the declarations the seats announced (or compares them
    otherwise than shown) is never kept while another can be found (up to ``8 * tries``).
    """
    best: list[int] | None = None
    best_w = -1.0
    fallback: list[int] | None = None
    pending, table, tie = _pending(k)
    for attempt in range(8 * tries):
        strict = attempt < 8 * tries - 2 or fallback is not None
        melds = _with_announced_melds(k, pending, table, tie, rng) if pending and strict else None
        hands = _deal_once(melds or k, rng, strict)
        if hands is None:
            continue
        if fallback is None:
            fallback = hands
        if not _announcements_hold(k, hands):
            continue
        w = (likelihood or bid_likelihood)(k, hands) if weighted else 1.0
        if melds is not None:
            w /= _ways(k, pending, table, hands)
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
