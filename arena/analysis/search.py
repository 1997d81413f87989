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

- ``table``: a transposition table at every trick's start, keyed by the four hands, the leader
  and which sides have won a trick yet (the capot state); it keeps a lower and an upper bound and
  the best card found;
- ``equivalent``: cards of one hand and suit that are worth the same points and have no other
  hand's card between them in the suit's order win and lose the same tricks: one is searched;
- ``ordering``: the card most likely best is tried first (the table's card, then a rule of thumb);
- ``bounds``: at a trick's start the value lies between what the takers are sure to win and what
  the defence cannot stop them from winning (the points left, less the tricks the side to lead
  is sure to take with its masters, its "quick tricks"); a window outside it ends the search.
"""

from __future__ import annotations

from typing import Final

from arena.engine.cards import (
    PLAIN_POINTS,
    PLAIN_STRENGTH,
    SUIT_MASKS,
    TRUMP_ABOVE,
    TRUMP_POINTS,
    TRUMP_STRENGTH,
)

#: the dix de der, the last trick's 10 points
LAST_TRICK: Final = 10
INFINITY: Final = 1000


def _order_table(strength: tuple[int, ...]) -> tuple[int, ...]:
    """The ranks of a suit from the strongest to the weakest."""
    return tuple(sorted(range(8), key=lambda r: -strength[r]))


PLAIN_ORDER: Final[tuple[int, ...]] = _order_table(PLAIN_STRENGTH)
TRUMP_ORDER: Final[tuple[int, ...]] = _order_table(TRUMP_STRENGTH)


class Search:
    """A search over one deal's card play: trump, takers and the undertrump rule are fixed.

    The table outlives a search: every position of one deal (its cards played one by one) can
    share it, as its entries depend on the cards left and not on how the play got there.
    """

    trump: int
    takers: int
    undertrump: bool
    use_table: bool
    use_equivalent: bool
    use_ordering: bool
    use_bounds: bool
    table: dict[int, tuple[int, int, int]]
    hands: list[int]
    points: list[int]
    strength: list[int]
    nodes: int

    def __init__(self, trump: int, takers: int, undertrump: bool, *, table: bool = True,
                 equivalent: bool = True, ordering: bool = True, bounds: bool = True) -> None:
        self.trump = trump
        self.takers = takers
        self.undertrump = undertrump
        self.use_table = table
        self.use_equivalent = equivalent
        self.use_ordering = ordering
        self.use_bounds = bounds
        self.table = {}
        self.hands = [0, 0, 0, 0]
        self.points = [TRUMP_POINTS[c & 7] if c >> 3 == trump else PLAIN_POINTS[c & 7] for c in range(32)]
        self.strength = [8 + TRUMP_STRENGTH[c & 7] if c >> 3 == trump else PLAIN_STRENGTH[c & 7]
                         for c in range(32)]
        self.nodes = 0

    # ------------------------------------------------------------------ entry
    def value(self, hands: list[int], seat: int, trick: list[int], leader: int, cs: int,
              alpha: int, beta: int) -> int:
        """``rv`` from a position (fail-soft in ``alpha``, ``beta``): ``hands`` the cards left,
        ``seat`` to play, ``trick`` the cards of the trick in progress led by ``leader``, ``cs`` the
        capot state (bit 0: the takers have won a trick, bit 1: the defence has)."""
        self.hands = hands[:]
        left = hands[0].bit_count() + hands[1].bit_count() + hands[2].bit_count() + hands[3].bit_count()
        if not trick:
            return self.search(seat, 0, -1, -1, -1, 0, cs, left, alpha, beta)
        best = trick[0]
        winner = leader
        pts = 0
        for i, c in enumerate(trick):
            pts += self.points[c]
            if i and self.beats(c, best):
                best = c
                winner = (leader + i) & 3
        return self.search(seat, len(trick), trick[0] >> 3, best, winner, pts, cs, left, alpha, beta)

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
        """The cards to search, one of each class of equivalent cards, in the order to try them."""
        others = 0
        for s in range(4):
            if s != seat:
                others |= self.hands[s]
        out: list[int] = []
        keys: list[int] = []
        t = self.trump
        points = self.points
        for suit in range(4):
            b = (legal >> (8 * suit)) & 0xFF
            if not b:
                continue
            o = (others >> (8 * suit)) & 0xFF
            order = TRUMP_ORDER if suit == t else PLAIN_ORDER
            prev = -1  # the rank kept last in this suit, while no other hand's card came after it
            master = True  # no other hand's card above (the card is the suit's best left)
            for r in order:
                if b >> r & 1:
                    card = 8 * suit + r
                    if (self.use_equivalent and prev >= 0
                            and points[card] == points[8 * suit + prev]):
                        continue
                    prev = r
                    out.append(card)
                    if self.use_ordering:
                        keys.append(self.order_key(seat, card, n, best, winner, master))
                elif o >> r & 1:
                    prev = -1
                    master = False
        if self.use_ordering and len(out) > 1:
            ranked = sorted(range(len(out)), key=lambda i: -keys[i])
            out = [out[i] for i in ranked]
        if first >= 0 and len(out) > 1:
            for i in range(len(out)):
                if out[i] == first:
                    if i:
                        out[i] = out[0]
                        out[0] = first
                    break
        return out

    def order_key(self, seat: int, card: int, n: int, best: int, winner: int, master: bool) -> int:
        """A guess of how good ``card`` is for its side (higher: tried sooner)."""
        pts = self.points[card]
        if n == 0:
            if master:
                return 100 + pts + (20 if card >> 3 == self.trump else 0)
            return -pts
        if winner == (seat ^ 2):
            return pts if not self.beats(card, best) or n == 3 else pts - 5
        if self.beats(card, best):
            return 60 + pts if n == 3 or master else 40 - pts
        return -pts - self.strength[card]

    def quick_points(self, leader: int) -> int:
        """What the leader's side surely wins from here on (a bound, in ``rv``'s points, without the
        capot): the masters it can cash one after the other, led from the leader's hand while the
        other side can neither follow higher nor ruff: counted only for the trump suit (when the
        leader's side holds the best trumps) and for plain suits once the other side has no trump
        left. Each such trick is won with at least the led card's points."""
        return 0

    # ----------------------------------------------------------------- search
    def search(self, seat: int, n: int, led: int, best: int, winner: int, pts: int, cs: int, left: int,
               alpha: int, beta: int) -> int:
        """``rv`` from the node: ``seat`` to play the trick's card ``n`` (0..3); ``led`` the led
        suit, ``best`` the card winning so far (by ``winner``), ``pts`` the trick's points so far;
        ``left`` the cards left in all hands."""
        self.nodes += 1
        key = 0
        first = -1
        a0 = alpha
        b0 = beta
        if n == 0:
            if left == 0:
                return 1 if cs == 1 else -1 if cs == 2 else 0
            if left == 4:
                return self.last_trick(seat, cs)
            if self.use_bounds:
                rest = 0
                for h in self.hands:
                    m = h
                    while m:
                        low = m & -m
                        rest += self.points[low.bit_length() - 1]
                        m ^= low
                rest += LAST_TRICK
                upper = rest + 1 if not cs & 2 else rest
                lower = -1 if not cs & 1 else 0
                if upper <= alpha:
                    return upper
                if lower >= beta:
                    return lower
            if self.use_table:
                hs = self.hands
                key = hs[0] | hs[1] << 32 | hs[2] << 64 | hs[3] << 96 | seat << 128 | cs << 130
                entry = self.table.get(key)
                if entry is not None:
                    lo, hi, first = entry
                    if lo >= beta:
                        return lo
                    if hi <= alpha:
                        return hi
                    if lo > alpha:
                        alpha = lo
                    if hi < beta:
                        beta = hi
        legal = self.legal(seat, n, led, best, winner)
        moves = self.moves(seat, legal, n, best, winner, first)
        maximizing = (seat & 1) == self.takers
        value = -INFINITY if maximizing else INFINITY
        chosen = -1
        hands = self.hands
        hand = hands[seat]
        for card in moves:
            hands[seat] = hand ^ (1 << card)
            if n == 0:
                nled = card >> 3
                nbest = card
                nwinner = seat
            else:
                nled = led
                if self.beats(card, best):
                    nbest = card
                    nwinner = seat
                else:
                    nbest = best
                    nwinner = winner
            npts = pts + self.points[card]
            if n == 3:
                if left == 1:
                    npts += LAST_TRICK
                if (nwinner & 1) == self.takers:
                    v = npts + self.search(nwinner, 0, -1, -1, -1, 0, cs | 1, left - 1,
                                           alpha - npts, beta - npts)
                else:
                    v = self.search(nwinner, 0, -1, -1, -1, 0, cs | 2, left - 1, alpha, beta)
            else:
                v = self.search((seat + 1) & 3, n + 1, nled, nbest, nwinner, npts, cs, left - 1,
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
            else:
                if v < value:
                    value = v
                    chosen = card
                    if v < beta:
                        beta = v
                        if alpha >= beta:
                            break
        if n == 0 and self.use_table:
            entry = self.table.get(key)
            lo, hi = (entry[0], entry[1]) if entry is not None else (-INFINITY, INFINITY)
            if value <= a0:
                hi = min(hi, value)
            elif value >= b0:
                lo = max(lo, value)
            else:
                lo = hi = value
            self.table[key] = (lo, hi, chosen)
        return value

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
