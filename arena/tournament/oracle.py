"""The perfect-information oracle: the best cards of a card decision when all four hands are known.

:func:`best_cards` values every legal card of the seat to act in an engine
:class:`~arena.engine.Deal` on the TRUE deal (every hand known, as the referee
knows it) and returns those of the best value. A card's value is what the
seat's team takes minus what the other team takes in card points from here to
the end of the deal (the tricks, the 10 of the last one, 252 against 0 for a
capot), both teams then playing their best with every card known: a
double-dummy search. Belote, declarations, the contract and the coinche
multiplier are settled before the play or beside it, and are left out: card
points are what the card play decides.

- With at most ``exact_tricks`` tricks left (the trick in progress counts),
  the answer is exact: alpha-beta over the remaining cards, with a
  transposition table keyed by the hands at the start of each trick, and, of
  zero-point cards next to each other in a suit (a 7 and an 8), one searched.
  The first card is searched with a full window, each other one only tested
  against the best so far (a null window), as principal variation search does.
- Earlier, an exact search costs too much in pure Python (``bench/detection.py``
  measures it), so each candidate is played, the engine's heuristic player then
  plays every seat, each knowing its own hand only, until ``exact_tricks``
  tricks are left, and the rest is searched exactly. That is deterministic
  (the heuristic draws nothing in the card play), so the same position always
  gets the same answer, but there it is a perfect-information *estimate*, not
  the optimum, and :attr:`OracleAnswer.exact` says so.

A search gives up after ``node_limit`` positions (the answer is then None and
the decision is not counted), so that one decision never costs more than that.

:func:`legal_mask` is the engine's rule of which cards may be played, on masks
(:meth:`Deal.legal_cards`); the tests check that the two agree.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Final

from arena.engine.bots import HeuristicPlayer
from arena.engine.cards import (
    PLAIN_POINTS,
    PLAIN_STRENGTH,
    SUIT_MASKS,
    TRUMP_ABOVE,
    TRUMP_POINTS,
    TRUMP_STRENGTH,
)
from arena.engine.deal import Deal, Phase
from arena.engine.observation import observe

__all__ = ["DEFAULT_EXACT_TRICKS", "DEFAULT_NODE_LIMIT", "OracleAnswer", "best_cards", "legal_mask"]

#: the tricks left (the one in progress included) from which the answer is exact
DEFAULT_EXACT_TRICKS: Final = 4
#: before that, the tricks searched exactly after the heuristic's (the rest of an estimate)
DEFAULT_TAIL_TRICKS: Final = 3
#: positions one decision may search before it gives up
DEFAULT_NODE_LIMIT: Final = 100_000

_CAPOT_BONUS: Final = 90  # a capot is 252 card points, not 162
_LAST_TRICK: Final = 10
_INF: Final = 1 << 20
_HEURISTIC: Final = HeuristicPlayer()
_NO_RANDOM: Final = random.Random(0)  # the heuristic's card play draws nothing from it

#: _VALUE[trump][card], _STRENGTH[trump][card]: points, and strength in a trick (trumps above all)
_VALUE: Final[tuple[tuple[int, ...], ...]] = tuple(
    tuple(TRUMP_POINTS[c & 7] if c >> 3 == t else PLAIN_POINTS[c & 7] for c in range(32)) for t in range(4)
)
_STRENGTH: Final[tuple[tuple[int, ...], ...]] = tuple(
    tuple(8 + TRUMP_STRENGTH[c & 7] if c >> 3 == t else PLAIN_STRENGTH[c & 7] for c in range(32))
    for t in range(4)
)


def _by_strength(trump: int) -> tuple[tuple[tuple[int, ...], ...], ...]:
    """[suit][byte]: the cards of that suit's byte of a mask, strongest first."""
    strength = _STRENGTH[trump]
    return tuple(
        tuple(tuple(sorted((8 * s + r for r in range(8) if b >> r & 1), key=lambda c: -strength[c]))
              for b in range(256))
        for s in range(4)
    )


_SUIT_CARDS: Final = tuple(_by_strength(t) for t in range(4))


def _between(trump: int) -> tuple[tuple[int, ...], ...]:
    """[card][other]: the mask of the cards of their suit strictly between two cards in strength."""
    strength = _STRENGTH[trump]
    out = []
    for c in range(32):
        row = []
        for d in range(32):
            m = 0
            if c >> 3 == d >> 3:
                lo, hi = sorted((strength[c], strength[d]))
                for e in range(8 * (c >> 3), 8 * (c >> 3) + 8):
                    if lo < strength[e] < hi:
                        m |= 1 << e
            row.append(m)
        out.append(tuple(row))
    return tuple(out)


_BETWEEN: Final = tuple(_between(t) for t in range(4))


@dataclass(frozen=True, slots=True)
class OracleAnswer:
    """The oracle's answer for one card decision."""

    #: the legal cards (a mask)
    legal: int
    #: the legal cards of the best value (a mask; ties all count)
    best: int
    #: the best value for the seat's team: its card points from here minus the other side's
    value: int
    #: whether the answer is exact (else the tricks before the last ``exact_tricks`` were
    #: played by the heuristic)
    exact: bool
    #: positions searched
    nodes: int

    @property
    def matters(self) -> bool:
        """Whether the choice matters on the true deal: some legal card is worth less."""
        return self.best != self.legal

    def is_best(self, card: int) -> bool:
        return bool(self.best >> (card & 31) & 1)


class SearchLimit(Exception):
    """The search reached its node limit."""


def legal_mask(hand: int, trick: list[int], best: int, winner: int, seat: int, trump: int,
               undertrump: bool) -> int:
    """The cards ``seat`` may play from ``hand``, with the engine's rules: follow the led suit;
    else trump (above a trump already played if it can, below it only if ``undertrump``, else
    anything), unless the partner is winning the trick; else anything."""
    if not trick:
        return hand
    tshift = 8 * trump
    led = trick[0] >> 3
    trumps = hand & SUIT_MASKS[trump]
    if led == trump:
        if not trumps:
            return hand
        return trumps & (TRUMP_ABOVE[best & 7] << tshift) or trumps
    following = hand & SUIT_MASKS[led]
    if following:
        return following
    if winner == (seat ^ 2) or not trumps:
        return hand
    if best >> 3 == trump:
        higher = trumps & (TRUMP_ABOVE[best & 7] << tshift)
        if higher:
            return higher
        return trumps if undertrump else hand
    return trumps


class _Search:
    """Alpha-beta over a deal's remaining card play: team 0 maximizes its card points minus team 1's."""

    def __init__(self, trump: int, undertrump: bool, node_limit: int) -> None:
        self.trump = trump
        self.undertrump = undertrump
        self.value = _VALUE[trump]
        self.strength = _STRENGTH[trump]
        self.suit_cards = _SUIT_CARDS[trump]
        self.between = _BETWEEN[trump]
        self.node_limit = node_limit
        self.nodes = 0
        #: (hands, leader, which teams took a trick) at a trick's start -> (lower, upper) bounds
        self.table: dict[tuple[int, int, int, int, int, int], tuple[int, int]] = {}
        #: (suit, its byte of the legal cards, of the other seats' cards) -> the moves worth trying
        self.suit_moves: dict[int, tuple[int, ...]] = {}

    def moves(self, mask: int, hands: list[int]) -> list[int]:
        """The cards of ``mask`` worth trying, strongest first in each suit: of zero-point cards
        with no other seat's card between them, the strongest only (they are worth the same)."""
        others = (hands[0] | hands[1] | hands[2] | hands[3]) & ~mask
        out: list[int] = []
        cache = self.suit_moves
        for sh in (0, 8, 16, 24):
            b = (mask >> sh) & 0xFF
            if b:
                key = sh << 16 | b << 8 | (others >> sh) & 0xFF
                found = cache.get(key)
                if found is None:
                    classes = self._suit_classes(sh >> 3, b, (others >> sh) & 0xFF)
                    found = cache[key] = tuple(c for c, _ in classes)
                out += found
        return out

    def classes(self, mask: int, hands: list[int]) -> list[tuple[int, int]]:
        """The cards of ``mask`` in classes of equal worth: (the strongest, the mask of the class)."""
        others = (hands[0] | hands[1] | hands[2] | hands[3]) & ~mask
        return [cls for s in range(4) if (mask >> (8 * s)) & 0xFF
                for cls in self._suit_classes(s, (mask >> (8 * s)) & 0xFF, (others >> (8 * s)) & 0xFF)]

    def _suit_classes(self, s: int, b: int, others: int) -> list[tuple[int, int]]:
        """The classes of the cards of byte ``b`` of suit ``s``, the other seats holding ``others``
        of it (a byte): zero-point cards with none of ``others`` between them are one class."""
        out: list[tuple[int, int]] = []
        value = self.value
        between = self.between
        held = others << (8 * s)
        prev = -1
        for c in self.suit_cards[s][b]:
            if value[c] == 0 and prev >= 0 and value[prev] == 0 and not between[prev][c] & held:
                top, same = out[-1]
                out[-1] = (top, same | 1 << c)
            else:
                out.append((c, 1 << c))
            prev = c
        return out

    def ordered(self, moves: list[int], trick: list[int], best: int, winner: int, seat: int) -> list[int]:
        """``moves`` in the order most likely to be best, so that alpha-beta cuts early: on the
        partner's trick the most points first; else the cards that win it (the cheapest first
        when last to play), then the fewest points."""
        value = self.value
        if winner == seat ^ 2:
            return sorted(moves, key=lambda c: -value[c])
        strength = self.strength
        bs = strength[best]
        trump = self.trump
        led = best >> 3
        last = len(trick) == 3
        winning = []
        losing = []
        for c in moves:
            if strength[c] > bs and (c >> 3 == led or c >> 3 == trump):
                winning.append(c)
            else:
                losing.append(c)
        if last:
            winning.reverse()  # the moves come strongest first
        losing.sort(key=lambda c: value[c])
        return winning + losing

    def run(self, hands: list[int], leader: int, trick: list[int], best: int, winner: int, won: int,
            alpha: int, beta: int, only: int = -1) -> int:
        """The remaining value for team 0 from this position (``won``: bit t once team t took a
        trick), fail-soft within the window (alpha, beta); with ``only``, the value once the seat
        to act has played that card."""
        self.nodes += 1
        if self.nodes > self.node_limit:
            raise SearchLimit
        key = None
        a0, b0 = alpha, beta
        if not trick and only < 0:
            if not (hands[0] | hands[1] | hands[2] | hands[3]):
                return _CAPOT_BONUS if won == 1 else -_CAPOT_BONUS if won == 2 else 0
            key = (hands[0], hands[1], hands[2], hands[3], leader, won)
            bounds = self.table.get(key)
            if bounds is not None:
                lo, hi = bounds
                if lo >= beta or lo == hi:
                    return lo
                if hi <= alpha:
                    return hi
                alpha = max(alpha, lo)
                beta = min(beta, hi)
        seat = (leader + len(trick)) & 3
        mask = 0 if only >= 0 else legal_mask(hands[seat], trick, best, winner, seat, self.trump,
                                               self.undertrump)
        maximizing = not seat & 1
        result = -_INF if maximizing else _INF
        if only >= 0:
            moves = [only]
        else:
            moves = self.moves(mask, hands)
            if trick and len(moves) > 1:
                moves = self.ordered(moves, trick, best, winner, seat)
        hand = hands[seat]
        strength = self.strength
        n = len(trick)
        for c in moves:
            hands[seat] = hand & ~(1 << c)
            if n == 0 or (strength[c] > strength[best] and (c >> 3 == best >> 3 or c >> 3 == self.trump)):
                nbest, nwinner = c, seat
            else:
                nbest, nwinner = best, winner
            if n == 3:
                value = self.value
                pts = value[trick[0]] + value[trick[1]] + value[trick[2]] + value[c]
                if not (hands[0] | hands[1] | hands[2] | hands[3]):
                    pts += _LAST_TRICK
                if nwinner & 1:
                    pts = -pts
                v = pts + self.run(hands, nwinner, [], -1, -1, won | 1 << (nwinner & 1),
                                   alpha - pts, beta - pts)
            else:
                trick.append(c)
                v = self.run(hands, leader, trick, nbest, nwinner, won, alpha, beta)
                trick.pop()
            hands[seat] = hand
            if maximizing:
                if v > result:
                    result = v
                    if v > alpha:
                        alpha = v
            elif v < result:
                result = v
                if v < beta:
                    beta = v
            if alpha >= beta:
                break
        if key is not None:
            lo, hi = self.table.get(key, (-_INF, _INF))
            if result <= a0:
                hi = min(hi, result)
            elif result >= b0:
                lo = max(lo, result)
            else:
                lo = hi = result
            self.table[key] = (lo, hi)
        return result


def _position(deal: Deal) -> tuple[list[int], int, list[int], int, int, int]:
    """The search's view of a deal in its card play: hands, leader, trick, best card, winner, won."""
    won = (1 if deal.tricks_won[0] else 0) | (2 if deal.tricks_won[1] else 0)
    return deal.hands[:], deal.trick_leader, list(deal.trick), deal.trick_best, deal.trick_winner, won


def tricks_left(deal: Deal) -> int:
    """Tricks not yet complete, the one in progress included."""
    return 8 - len(deal.tricks)


def best_cards(
    deal: Deal, *, exact_tricks: int = DEFAULT_EXACT_TRICKS, tail_tricks: int = DEFAULT_TAIL_TRICKS,
    node_limit: int = DEFAULT_NODE_LIMIT,
) -> OracleAnswer | None:
    """The perfect-information answer for the seat to act in ``deal``'s card play, or None when
    the search reached ``node_limit`` positions. ``deal`` is not changed."""
    if deal.phase is not Phase.PLAY:
        raise ValueError("the oracle answers card decisions only")
    sign = 1 if deal.to_act & 1 == 0 else -1  # the searches value team 0's points
    search = _Search(deal.trump, deal.rules.must_undertrump, node_limit)
    legal = deal.legal_cards()
    hands, leader, trick, best, winner, won = _position(deal)
    classes = search.classes(legal, hands)
    exact = tricks_left(deal) <= exact_tricks

    def value_of(card: int, alpha: int, beta: int) -> int:
        """``card``'s value for the seat's team, fail-soft within (alpha, beta)."""
        if exact:
            lo, hi = (alpha, beta) if sign > 0 else (-beta, -alpha)
            return sign * search.run(hands, leader, trick, best, winner, won, lo, hi, only=card)
        return _estimate(deal, card, search, sign, tail_tricks, alpha, beta)

    try:
        card, best_mask = classes[0]
        top = value_of(card, -_INF, _INF)
        for card, same in classes[1:]:
            v = value_of(card, top - 1, top + 1)  # below, at or above the best so far
            if v > top:
                top = value_of(card, top, _INF)  # above: exact with this window
                best_mask = same
            elif v == top:
                best_mask |= same
    except SearchLimit:
        return None
    return OracleAnswer(legal=legal, best=best_mask, value=top, exact=exact, nodes=search.nodes)


def _estimate(deal: Deal, card: int, search: _Search, sign: int, tail_tricks: int, alpha: int,
              beta: int) -> int:
    """``card``'s value for the team of ``sign`` (1: team 0), fail-soft within (alpha, beta): played,
    then the heuristic plays every seat until ``tail_tricks`` tricks are left, then the exact
    search; the points of the heuristic's tricks count."""
    d = deal.copy()
    before = d.trick_points[0] - d.trick_points[1]
    d.apply_unchecked(card)
    while d.phase is Phase.PLAY and (tricks_left(d) > tail_tricks or d.trick):
        d.apply_unchecked(_HEURISTIC.act(observe(d, d.to_act), _NO_RANDOM))
    gained = d.trick_points[0] - d.trick_points[1] - before
    if d.phase is not Phase.PLAY:  # only with tail_tricks 0
        won = d.tricks_won
        return sign * (gained + (_CAPOT_BONUS if won[1] == 0 else -_CAPOT_BONUS if won[0] == 0 else 0))
    hands, leader, trick, best, winner, won_flags = _position(d)
    lo, hi = (alpha, beta) if sign > 0 else (-beta, -alpha)
    rest = search.run(hands, leader, trick, best, winner, won_flags, lo - gained, hi - gained)
    return sign * (gained + rest)
