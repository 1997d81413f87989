"""The card-play search of the double-dummy solver: alpha-beta on the takers' card points.

What is searched is the takers' *outcome* ``u`` of the card play, on one scale that orders every
end of a deal: their card points with the dix de der, 0..162, below them -1 for a capot taken by
the defence and above them 163 for a capot of their own. Everything the deal's score depends on
besides ``u`` (the contract, the belote, the declarations) is fixed once the card play is under
way, and :mod:`arena.analysis.position` proves that the deal's score margin is a nondecreasing
function of ``u``; so the minimax of the margin is the margin of the minimax of ``u``, and this
module never needs to know the contract.

The search returns ``rv``, what the rest of the deal adds to ``u`` from the node on: the points
of the tricks still to be won by the takers, plus 1 if the takers take every trick of the deal
(a capot: their 162 becomes 163), minus 1 if the defence does (their 0 becomes -1).

Fail-soft alpha-beta: ``search(..., alpha, beta)`` returns ``v``; ``v <= alpha``: the true value
is at most ``v``; ``v >= beta``: at least ``v``; otherwise ``v`` is exact. The speed-ups, each one
an option of :class:`Search` so that the bench measures what it buys:

- ``table``: a transposition table at every trick's start, keyed by the cards left (in one deal,
  they say whose each is), the leader and which sides have won a trick yet (the capot state); it
  keeps a lower and an upper bound and the best card found;
- ``equivalent``: cards of one hand and suit that are worth the same points and have no other
  hand's card between them in the suit's order win and lose the same tricks: one is searched;
- ``ordering``: the card most likely best is tried first (the table's card, then a rule of thumb);
- ``bounds``: at a trick's start the value lies between what the takers are sure to win and what
  the defence cannot stop them from winning: the points left, and the best trumps left while one
  side holds them (each wins the trick it falls in); a window outside it ends the search;
- ``quick``: with ``bounds``, the "quick tricks" of the side to lead too: the masters it can
  cash one after the other;
- ``etc``: with ``table``, an enhanced transposition cutoff: before the trick's last card is
  searched, the table's entries of the tricks' ends it leads to are read, and one that ends the
  search here does so at once.
"""

from __future__ import annotations

from typing import Final

from arena.engine.cards import (
    PLAIN_BYTE_POINTS,
    PLAIN_POINTS,
    PLAIN_STRENGTH,
    SUIT_MASKS,
    TRUMP_ABOVE,
    TRUMP_BYTE_POINTS,
    TRUMP_POINTS,
    TRUMP_STRENGTH,
)

#: the dix de der, the last trick's 10 points
LAST_TRICK: Final = 10
INFINITY: Final = 1000
#: the table packs an entry in one int (no object for the collector to follow): the lower and
#: upper bounds plus BIAS in 11 bits each, then the best card plus one
BIAS: Final = 1023


def _order_table(strength: tuple[int, ...]) -> tuple[int, ...]:
    """The ranks of a suit from the strongest to the weakest."""
    return tuple(sorted(range(8), key=lambda r: -strength[r]))


PLAIN_ORDER: Final[tuple[int, ...]] = _order_table(PLAIN_STRENGTH)
TRUMP_ORDER: Final[tuple[int, ...]] = _order_table(TRUMP_STRENGTH)
#: the ranks of a byte of one suit (a mask's 8 bits) from the strongest to the weakest
PLAIN_BYTE_ORDER: Final[tuple[tuple[int, ...], ...]] = tuple(
    tuple(r for r in PLAIN_ORDER if b >> r & 1) for b in range(256))
TRUMP_BYTE_ORDER: Final[tuple[tuple[int, ...], ...]] = tuple(
    tuple(r for r in TRUMP_ORDER if b >> r & 1) for b in range(256))


def _keep(z: int, o: int) -> int:
    """Of a hand's cards worth no point in one suit (``z``: ranks 7, 8, and 9 out of trump, whose
    order is their rank's), the ones to search: the strongest, and each one under it that another
    hand's card (``o``) separates from the one kept last."""
    kept = 0
    prev = -1
    for r in (2, 1, 0):
        if z >> r & 1:
            if prev >= 0 and not o & ((1 << prev) - (1 << (r + 1))):
                continue
            kept |= 1 << r
            prev = r
    return kept


#: PLAIN_ABOVE[rank]: byte of the ranks that beat ``rank`` in a plain suit
PLAIN_ABOVE: Final[tuple[int, ...]] = tuple(
    sum(1 << r for r in range(8) if PLAIN_STRENGTH[r] > PLAIN_STRENGTH[q]) for q in range(8))
#: KEEP[z * 8 + o]: :func:`_keep`
KEEP: Final[tuple[int, ...]] = tuple(_keep(z, o) for z in range(8) for o in range(8))


def _sort(cards: list[int], key: list[int]) -> None:
    """Sort a few cards by ``key[card]``, ascending and stable (an insertion sort: no call)."""
    for i in range(1, len(cards)):
        card = cards[i]
        k = key[card]
        j = i - 1
        while j >= 0 and key[cards[j]] > k:
            cards[j + 1] = cards[j]
            j -= 1
        cards[j + 1] = card


class Search:
    """A search over one deal's card play: trump, takers and the undertrump rule are fixed.

    The table outlives a search: every position of one deal (its cards played one by one) can
    share it, as its entries depend on the cards left and not on how the play got there; only
    positions of one deal (the same hands as dealt) may share it.
    """

    trump: int
    takers: int
    undertrump: bool
    use_table: bool
    use_equivalent: bool
    use_ordering: bool
    use_bounds: bool
    use_quick: bool
    use_etc: bool
    table: dict[int, int]
    hands: list[int]
    points: list[int]
    strength: list[int]
    negative_points: list[int]
    nodes: int

    def __init__(self, trump: int, takers: int, undertrump: bool, *, table: bool = True,
                 equivalent: bool = True, ordering: bool = True, bounds: bool = True,
                 quick: bool = True, etc: bool = True) -> None:
        self.trump = trump
        self.takers = takers
        self.undertrump = undertrump
        self.use_table = table
        self.use_equivalent = equivalent
        self.use_ordering = ordering
        self.use_bounds = bounds
        self.use_quick = quick
        self.use_etc = etc
        self.table = {}
        self.hands = [0, 0, 0, 0]
        self.points = [TRUMP_POINTS[c & 7] if c >> 3 == trump else PLAIN_POINTS[c & 7] for c in range(32)]
        self.strength = [8 + TRUMP_STRENGTH[c & 7] if c >> 3 == trump else PLAIN_STRENGTH[c & 7]
                         for c in range(32)]
        self.negative_points = [-p for p in self.points]
        self.nodes = 0

    # ------------------------------------------------------------------ entry
    def value(self, hands: list[int], seat: int, trick: list[int], leader: int, cs: int,
              alpha: int, beta: int) -> int:
        """``rv`` from a position (fail-soft in ``alpha``, ``beta``): ``hands`` the cards left,
        ``seat`` to play, ``trick`` the cards of the trick in progress led by ``leader``, ``cs`` the
        capot state (bit 0: the takers have won a trick, bit 1: the defence has)."""
        self.hands = hands[:]
        left = hands[0].bit_count() + hands[1].bit_count() + hands[2].bit_count() + hands[3].bit_count()
        rest = 0
        for h in hands:
            m = h
            while m:
                low = m & -m
                rest += self.points[low.bit_length() - 1]
                m ^= low
        if not trick:
            return self.search(seat, 0, -1, -1, -1, 0, cs, left, rest, alpha, beta)
        best = trick[0]
        winner = leader
        pts = 0
        for i, c in enumerate(trick):
            pts += self.points[c]
            if i and self.beats(c, best):
                best = c
                winner = (leader + i) & 3
        return self.search(seat, len(trick), trick[0] >> 3, best, winner, pts, cs, left, rest + pts, alpha,
                           beta)

    def beats(self, card: int, best: int) -> bool:
        t = self.trump
        if card >> 3 == t:
            return best >> 3 != t or TRUMP_STRENGTH[card & 7] > TRUMP_STRENGTH[best & 7]
        return card >> 3 == best >> 3 and PLAIN_STRENGTH[card & 7] > PLAIN_STRENGTH[best & 7]

    def legal(self, seat: int, n: int, led: int, best: int, winner: int) -> int:
        """The mask of the cards ``seat`` may play (the engine's rule, docs/rules.md)."""
        hand = self.hands[seat]
        if n == 0:
            return hand
        t = self.trump
        trumps = hand & SUIT_MASKS[t]
        if led == t:
            if not trumps:
                return hand
            higher = trumps & (TRUMP_ABOVE[best & 7] << (8 * t))
            return higher if higher else trumps
        following = hand & SUIT_MASKS[led]
        if following:
            return following
        if winner == (seat ^ 2) or not trumps:
            return hand
        if best >> 3 == t:
            higher = trumps & (TRUMP_ABOVE[best & 7] << (8 * t))
            if higher:
                return higher
            return trumps if self.undertrump else hand
        return trumps

    def moves(self, seat: int, legal: int, n: int, best: int, winner: int, first: int) -> list[int]:
        """The cards to search, one of each class of equivalent cards, in the order to try them
        (measured: bench/analysis.py): the table's card first; then, to lead, the masters (no other
        hand's card above them in their suit) by points, then the others weakest first; when the
        partner holds the trick, the most points first; when the other side does, the cards that
        take it (strongest first), then the others weakest first."""
        hands = self.hands
        others = (hands[0] | hands[1] | hands[2] | hands[3]) ^ hands[seat]
        t = self.trump
        out: list[int] = []
        for suit in range(4):
            b = (legal >> (8 * suit)) & 0xFF
            if not b:
                continue
            if self.use_equivalent:
                low = 3 if suit == t else 7
                z = b & low
                if z & (z - 1):
                    b = (b & ~low) | KEEP[z * 8 + ((others >> (8 * suit)) & low)]
            for r in (TRUMP_BYTE_ORDER[b] if suit == t else PLAIN_BYTE_ORDER[b]):
                out.append(8 * suit + r)
        if len(out) < 2:
            return out
        if self.use_ordering:
            strength = self.strength
            if n == 0:
                masters: list[int] = []
                rest: list[int] = []
                for card in out:
                    suit = card >> 3
                    above = (TRUMP_ABOVE[card & 7] if suit == t else PLAIN_ABOVE[card & 7]) << (8 * suit)
                    if others & above:
                        rest.append(card)
                    else:
                        masters.append(card)
                _sort(masters, self.negative_points)
                _sort(rest, strength)
                masters.extend(rest)
                out = masters
            elif (winner ^ seat) & 1:
                taking: list[int] = []
                losing: list[int] = []
                bsuit = best >> 3
                bstrength = strength[best]
                for card in out:
                    if (card >> 3 == bsuit or card >> 3 == t) and strength[card] > bstrength:
                        taking.append(card)
                    else:
                        losing.append(card)
                _sort(losing, strength)
                taking.extend(losing)
                out = taking
            else:
                _sort(out, self.negative_points)
        if first >= 0 and out[0] != first:
            for i in range(1, len(out)):
                if out[i] == first:
                    out[i] = out[0]
                    out[0] = first
                    break
        return out

    # ----------------------------------------------------------------- search
    def search(self, seat: int, n: int, led: int, best: int, winner: int, pts: int, cs: int, left: int,
               rest: int, alpha: int, beta: int) -> int:
        """``rv`` from the node: ``seat`` to play the trick's card ``n`` (0..3); ``led`` the led
        suit, ``best`` the card winning so far (by ``winner``), ``pts`` the trick's points so far;
        ``left`` the cards left in all hands, ``rest`` the card points left as the trick began."""
        self.nodes += 1
        key = 0
        first = -1
        a0 = alpha
        b0 = beta
        hands = self.hands
        if n == 0:
            if left == 0:
                return 1 if cs == 1 else -1 if cs == 2 else 0
            if left == 4:
                return self.last_trick(seat, cs)
            if self.use_bounds:
                upper = rest + LAST_TRICK + (1 if not cs & 2 else 0)
                lower = -1 if not cs & 1 else 0
                # the best trumps left, while one side holds them: each wins the trick it falls in
                t = self.trump
                tb = ((hands[0] | hands[1] | hands[2] | hands[3]) >> (8 * t)) & 0xFF
                if tb:
                    ours = hands[0] | hands[2]
                    side = -1
                    sure = 0
                    for r in TRUMP_BYTE_ORDER[tb]:
                        team = 0 if ours >> (8 * t + r) & 1 else 1
                        if side < 0:
                            side = team
                        elif team != side:
                            break
                        sure += self.points[8 * t + r]
                    if side == self.takers:
                        lower = sure
                    else:
                        upper = rest + LAST_TRICK - sure
                if upper <= alpha:
                    return upper
                if lower >= beta:
                    return lower
                if self.use_quick:
                    # what the side to lead surely wins, if it might end the search
                    hand = hands[seat]
                    most = LAST_TRICK
                    for suit in range(4):
                        b = (hand >> (8 * suit)) & 0xFF
                        if b:
                            most += TRUMP_BYTE_POINTS[b] if suit == self.trump else PLAIN_BYTE_POINTS[b]
                    if (seat & 1) == self.takers:
                        if most >= beta:
                            sure = self.quick_points(seat, left >> 2)
                            if sure >= beta:
                                return sure
                    elif most >= rest + LAST_TRICK - alpha:
                        sure = self.quick_points(seat, left >> 2)
                        if sure and rest + LAST_TRICK - sure <= alpha:
                            return rest + LAST_TRICK - sure
            if self.use_table:
                # the cards left say whose they are (no card changes hands in a deal)
                key = (hands[0] | hands[1] | hands[2] | hands[3]) | seat << 32 | cs << 34
                entry = self.table.get(key, -1)
                if entry >= 0:
                    lo = (entry & 0x7FF) - BIAS
                    hi = (entry >> 11 & 0x7FF) - BIAS
                    first = (entry >> 22) - 1
                    if lo >= beta:
                        return lo
                    if hi <= alpha:
                        return hi
                    if lo > alpha:
                        alpha = lo
                    if hi < beta:
                        beta = hi
        moves = self.moves(seat, self.legal(seat, n, led, best, winner), n, best, winner, first)
        maximizing = (seat & 1) == self.takers
        value = -INFINITY if maximizing else INFINITY
        chosen = -1
        hand = hands[seat]
        points = self.points
        strength = self.strength
        t = self.trump
        if n == 3 and self.use_etc and self.use_table and left > 5 and len(moves) > 1:
            # enhanced transposition cutoff: a trick's end whose table entry ends the search here
            remaining = hands[0] | hands[1] | hands[2] | hands[3]
            for card in moves:
                if (card >> 3 == best >> 3 or card >> 3 == t) and strength[card] > strength[best]:
                    nwinner = seat
                else:
                    nwinner = winner
                takers = (nwinner & 1) == self.takers
                entry = self.table.get((remaining ^ (1 << card)) | nwinner << 32
                                       | (cs | (1 if takers else 2)) << 34, -1)
                if entry >= 0:
                    gain = pts + points[card] if takers else 0
                    if maximizing:
                        lo = (entry & 0x7FF) - BIAS + gain
                        if lo >= beta:
                            return lo
                    else:
                        hi = (entry >> 11 & 0x7FF) - BIAS + gain
                        if hi <= alpha:
                            return hi
        for card in moves:
            hands[seat] = hand ^ (1 << card)
            if n == 0:
                nled = card >> 3
                nbest = card
                nwinner = seat
            else:
                nled = led
                if (card >> 3 == best >> 3 or card >> 3 == t) and strength[card] > strength[best]:
                    nbest = card
                    nwinner = seat
                else:
                    nbest = best
                    nwinner = winner
            npts = pts + points[card]
            if n == 3:
                nrest = rest - npts
                if left == 1:
                    npts += LAST_TRICK
                if (nwinner & 1) == self.takers:
                    v = npts + self.search(nwinner, 0, -1, -1, -1, 0, cs | 1, left - 1, nrest,
                                           alpha - npts, beta - npts)
                else:
                    v = self.search(nwinner, 0, -1, -1, -1, 0, cs | 2, left - 1, nrest, alpha, beta)
            else:
                v = self.search((seat + 1) & 3, n + 1, nled, nbest, nwinner, npts, cs, left - 1, rest,
                                alpha, beta)
            hands[seat] = hand
            if maximizing:
                if v > value:
                    value = v
                    chosen = card
                    if v > alpha:
                        alpha = v
                        if alpha >= beta:
                            break
            elif v < value:
                value = v
                chosen = card
                if v < beta:
                    beta = v
                    if alpha >= beta:
                        break
        if key:
            entry = self.table.get(key, -1)
            lo, hi = ((entry & 0x7FF) - BIAS, (entry >> 11 & 0x7FF) - BIAS) if entry >= 0 else (-BIAS, BIAS)
            if value <= a0:
                hi = min(hi, value)
            elif value >= b0:
                lo = max(lo, value)
            else:
                lo = hi = value
            self.table[key] = (lo + BIAS) | (hi + BIAS) << 11 | (chosen + 1) << 22
        return value

    def quick_points(self, leader: int, tricks: int) -> int:
        """What the leader's side surely wins from here (``tricks`` left): the points of the masters
        the leader can cash one after the other. Its top trumps (the opponents must follow with
        theirs); then, once the opponents have no trump left, the top cards of its plain suits
        (nobody can ruff them, its partner need not). The dix de der too if that is every trick."""
        hands = self.hands
        t = self.trump
        points = self.points
        hand = hands[leader]
        left = hands[0] | hands[1] | hands[2] | hands[3]
        sure = 0
        cashed = 0
        b = (left >> (8 * t)) & 0xFF
        mine = (hand >> (8 * t)) & 0xFF
        for r in TRUMP_BYTE_ORDER[b]:
            if not mine >> r & 1:
                break
            sure += points[8 * t + r]
            cashed += 1
        trumps = SUIT_MASKS[t]
        if ((hands[(leader + 1) & 3] & trumps).bit_count() <= cashed
                and (hands[(leader + 3) & 3] & trumps).bit_count() <= cashed):
            for suit in range(4):
                if suit == t:
                    continue
                b = (left >> (8 * suit)) & 0xFF
                mine = (hand >> (8 * suit)) & 0xFF
                for r in PLAIN_BYTE_ORDER[b]:
                    if not mine >> r & 1:
                        break
                    sure += points[8 * suit + r]
                    cashed += 1
        return sure + LAST_TRICK if cashed >= tricks else sure

    def last_trick(self, leader: int, cs: int) -> int:
        """``rv`` of the last trick: one card a hand, each forced."""
        hands = self.hands
        best = hands[leader].bit_length() - 1
        winner = leader
        pts = self.points[best] + LAST_TRICK
        for i in range(1, 4):
            seat = (leader + i) & 3
            card = hands[seat].bit_length() - 1
            pts += self.points[card]
            if self.beats(card, best):
                best = card
                winner = seat
        if (winner & 1) == self.takers:
            return pts + 1 if cs == 1 else pts
        return -1 if cs == 2 else 0
