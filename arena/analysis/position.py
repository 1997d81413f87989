"""A point of a deal's card play, with every hand known, and what its ruleset scores at the end.

A :class:`Position` is the engine's own :class:`~arena.engine.Deal` in its card play (any number
of cards played, in the middle of a trick too), kept as a private copy, plus the :class:`Solver`
it shares with the other positions of the same deal (so that their searches share one table).

What the deal's score still depends on once the card play is under way:

- the takers' card points with the dix de der and whether a side takes every trick: the takers'
  *outcome* ``u`` (see :mod:`arena.analysis.search`: -1 a capot of the defence, 0..162, 163 a
  capot of the takers);
- the belote: fixed by now. Its holder plays both cards (they are in their hand); under
  ``automatic`` it counts; under ``declared`` it counts when the words are said with both, and
  saying them is never worse for the holder's side (below), so perfect play says them: it counts
  unless the first of the two cards went without its word;
- the declarations: fixed once every seat has played its first card. Before, a seat's choice of
  declarations is a move of its own, searched as such (declaring is not always best: in classic,
  takers who go down give their declarations to the defence).

**The margin is a nondecreasing function of u** (so that searching ``u`` is exact; the search
itself only orders the ends of the deal by ``u``). The deal score margin is the takers' score less
the defence's. Write ``B`` and ``D`` for the belote and declaration points a side counts, ``s_t``
and ``s_d`` for each side's deal score before rounding. Classic (docs/rules.md#scoring-classic):
with ``u`` card points the takers' total is ``u + B_t + D_t`` and the defence's ``162 - u + B_d +
D_d``: the takers' total grows and the defence's shrinks with ``u``, so the deal goes from down to
litige to made as ``u`` grows, never back. Down: ``s_t = B_t``, ``s_d = 162 + D_t + D_d + B_d``;
litige: ``s_t = B_t``, ``s_d = 162 - u + B_d + D_d`` (smaller); made: ``s_t = u + B_t + D_t``
(larger), ``s_d`` the same formula; a capot of the takers (u = 163): ``s_t = 252 + B_t + D_t +
D_d`` (at least the made score at 162), ``s_d = B_d``; of the defence (u = -1): ``s_t = B_t``,
``s_d = 252 + B_d + D_t + D_d`` (at least the down score). So at every step up in ``u``, ``s_t``
does not fall and ``s_d`` does not rise. Coinche (docs/rules.md#scoring-coinche): made needs the
contract reached (points: a total growing with ``u``; a capot contract: u = 163) and a total above
the defence's, so it too only switches on as ``u`` grows. Not coinched, made: ``s_t = total_t +
value`` grows, ``s_d = total_d`` shrinks; down: ``s_t = B_t``, ``s_d = 160 + value + D_d + B_d``;
made against down: ``s_t`` at least ``B_t``, and ``total_d = 162 - u + B_d + D_d`` at most ``160
+ value + D_d + B_d`` as ``value >= 80``; a capot counts 252 instead of 162 in the winner's total,
more for it. Coinched or surcoinched: the winner of the contract scores ``(160 + value) x mult +
its D + B`` and the loser its ``B``: made only improves the takers' side. The rounding to the
nearest ten, halves up, is nondecreasing, so each rounded score moves as the unrounded one did.
Both scores move the right way at every step: their difference is nondecreasing in ``u``.
The same argument shows a side's belote or declarations never lower its own margin except in
classic's down case, where the takers' declarations go to the defence (hence the declarations
searched as moves). :meth:`Solver.margin_table` builds the margin of every ``u`` by the engine's
own :func:`~arena.engine.score_deal` and checks that it is nondecreasing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from arena.analysis.search import Search
from arena.engine import Deal, Ruleset, parse_action, score_deal
from arena.engine.actions import (
    BELOTE_WORD,
    CHOOSE,
    COINCHE,
    PASS,
    REBELOTE_WORD,
    SURCOINCHE,
    TAKE,
    bid_action,
)
from arena.engine.cards import KING, QUEEN, python_class
from arena.engine.deal import OVER, PLAY
from arena.engine.declarations import compare_declarations, declaration_choices
from arena.engine.errors import RecordError
from arena.engine.record import deal_from_record

#: the words a card may carry (belote, rebelote)
WORDS = BELOTE_WORD | REBELOTE_WORD
#: the takers' outcomes, lowest to highest: a capot of the defence, 0..162 points, their own capot
OUTCOMES = range(-1, 164)


class PositionError(ValueError):
    """A position that cannot be analysed: the deal is not in its card play, or a bad record."""


class Solver:
    """What the positions of one deal share: the search (its table) and the margin tables.

    Options (all on by default) switch the search's speed-ups off, for the bench: ``table``,
    ``equivalent``, ``ordering``, ``bounds``, ``quick``, ``etc`` (:class:`~arena.analysis.search.Search`) and
    ``probes`` (solve by null-window probes, else by one alpha-beta on the full window),
    ``dominance`` (declarations never better than another left out before the search).
    """

    takers: int
    dealt: list[int]
    probes: bool
    dominance: bool
    search: Search
    tables: dict[tuple[int, int, int], list[int]]

    def __init__(self, deal: Deal, *, table: bool = True, equivalent: bool = True, ordering: bool = True,
                 bounds: bool = True, quick: bool = True, etc: bool = True, probes: bool = True,
                 dominance: bool = True) -> None:
        self.takers = deal.takers
        self.dealt = list(deal.initial_hands)
        self.probes = probes
        self.dominance = dominance
        self.search = Search(deal.trump, deal.takers, deal.rules.must_undertrump, table=table,
                             equivalent=equivalent, ordering=ordering, bounds=bounds, quick=quick,
                             etc=etc)
        self.tables = {}

    def margin_table(self, deal: Deal, chosen: Mapping[int, int] | None = None) -> list[int]:
        """The takers' margin for each outcome ``u`` (index ``u + 1``), in ``deal``'s context: its
        belote and declarations as they stand, with ``chosen`` the declarations (kind codes) of the
        seats still to choose, by seat (none given: they declare nothing)."""
        declared = list(deal.declared)
        for seat, code in (chosen or {}).items():
            declared[seat] = declaration_choices(deal.hands[seat], deal.trump)[code]
        belote = belote_team(deal)
        decl_team, decl_points = compare_declarations(declared)
        key = (belote, -1 if decl_team is None else decl_team, decl_points)
        table = self.tables.get(key)
        if table is None:
            table = self.tables[key] = _margins(deal, belote, decl_team, decl_points)
        return table

    def undominated(self, deal: Deal) -> dict[int, list[int]]:
        """The declarations (kind codes) worth searching for each seat still to choose them, by seat:
        a choice is left out when another is never worse for its side, whatever the other seats
        choose, at every outcome of the card play. (The card play does not depend on declarations,
        only the margin does: so the subtree after the better choice is worth at least as much, its
        play the same and every end of it worth at least as much; the minimax keeps that order.)"""
        choices = {seat: sorted(declaration_choices(deal.hands[seat], deal.trump), reverse=True)
                   for seat in pending_seats(deal)}
        if not self.dominance:
            return choices
        seats = list(choices)
        out: dict[int, list[int]] = {}
        for seat in seats:
            others = [s for s in seats if s != seat]
            completions: list[dict[int, int]] = [{}]
            for other in others:
                completions = [{**c, other: code} for c in completions for code in choices[other]]
            sign = 1 if seat & 1 == self.takers else -1
            kept: list[int] = []
            for code in choices[seat]:
                if any(self._never_worse(deal, seat, k, code, sign, completions) for k in kept):
                    continue
                kept = [k for k in kept if not self._never_worse(deal, seat, code, k, sign, completions)]
                kept.append(code)
            out[seat] = kept
        return out

    def _never_worse(self, deal: Deal, seat: int, better: int, worse: int, sign: int,
                     completions: list[dict[int, int]]) -> bool:
        for c in completions:
            high = self.margin_table(deal, {**c, seat: better})
            low = self.margin_table(deal, {**c, seat: worse})
            if high is not low and any(sign * (h - w) < 0 for h, w in zip(high, low, strict=True)):
                return False
        return True


def _margins(deal: Deal, belote: int, decl_team: int | None, decl_points: int) -> list[int]:
    """Score every end of the deal with the engine's own scoring (see the module's docstring)."""
    end = deal.copy()
    end.phase = OVER
    end.to_act = -1
    end.trick = []
    end.belote_scored = belote >= 0
    end.decl_team = decl_team
    end.decl_points = decl_points
    end.decl_shown = True
    takers = deal.takers
    out: list[int] = []
    for u in OUTCOMES:
        won = [4, 4]
        points = [0, 0]
        if u < 0:
            won[takers], won[1 - takers] = 0, 8
            points[1 - takers] = 162
        elif u > 162:
            won[takers], won[1 - takers] = 8, 0
            points[takers] = 162
        else:
            points[takers], points[1 - takers] = u, 162 - u
        end.tricks_won = won
        end.trick_points = points
        score = score_deal(end).score
        out.append(score[takers] - score[1 - takers])
    if any(out[i] > out[i + 1] for i in range(len(out) - 1)):  # the docstring's proof, checked
        raise AssertionError(f"the deal's margin is not monotone in the takers' points: {out}")
    return out


def belote_team(deal: Deal) -> int:
    """The team whose belote counts under perfect play from here (-1: none)."""
    seat = deal.belote_seat
    if seat < 0:
        return -1
    if deal.rules.belote == "automatic":
        return seat & 1
    t8 = 8 * deal.trump
    hand = deal.hands[seat]
    held = (hand >> (t8 + KING) & 1) + (hand >> (t8 + QUEEN) & 1)
    if held == 2:
        return seat & 1
    if held == 1:
        return seat & 1 if deal.belote_said else -1
    return seat & 1 if deal.belote_scored else -1


def pending_seats(deal: Deal) -> list[int]:
    """The seats that still have a choice of declarations to make (with their first card)."""
    if not deal.rules.annonces or deal.tricks:
        return []
    out = []
    for i in range(len(deal.trick), 4):
        seat = (deal.trick_leader + i) & 3
        if len(declaration_choices(deal.hands[seat], deal.trump)) > 1:
            out.append(seat)
    return out


def pending_declarations(deal: Deal) -> bool:
    """Whether a seat still has a choice of declarations to make (with its first card)."""
    return bool(pending_seats(deal))


@python_class  # a Python class in the compiled build too (see arena.engine.cards.python_class)
@dataclass(frozen=True, eq=False)
class Position:
    """A point of a deal's card play with all four hands known.

    ``deal`` is a private copy (never changed); ``solver`` is shared by the positions of one deal.
    Build one with :meth:`from_deal`, :meth:`from_record`, :meth:`with_contract`, or every one of a
    record with :func:`positions_of_record_deal`; :meth:`after` plays an action.
    """

    deal: Deal
    solver: Solver = field(repr=False)

    @classmethod
    def from_deal(cls, deal: Deal, solver: Solver | None = None) -> Position:
        """The position of ``deal`` as it stands (its card play begun, not over)."""
        if deal.phase is not PLAY:
            raise PositionError(f"a position is in the card play, but the deal is {deal.phase.value}")
        if solver is not None and solver.dealt != deal.initial_hands:
            raise PositionError("a solver serves the positions of one deal only: this one has other hands")
        return cls(deal.copy(), solver if solver is not None else Solver(deal))

    @classmethod
    def from_record(cls, record: Mapping[str, Any], rules: Ruleset | None = None) -> Position:
        """The position after the bids and the plays of a deal record (docs/records.md)."""
        try:
            deal = deal_from_record(record, rules)
        except RecordError as e:
            raise PositionError(str(e)) from None
        return cls.from_deal(deal)

    @classmethod
    def with_contract(cls, rules: Ruleset | str, dealer: int, hands: Sequence[int], taker: int, trump: int,
                      value: int = 80, multiplier: int = 1) -> Position:
        """The position before the first card of a deal with a contract given: hands (card masks of
        seats 0..3), the taker's seat, trump, and for coinche the value (80..160 or 250, a capot)
        and multiplier (1, 2 or 4). Classic needs a card of the taker's hand to turn up: a trump
        when ``trump`` is taken in round one, else a card of another suit (round two)."""
        rules = Ruleset.from_spec(rules)
        first = (dealer + 1) & 3
        before = [PASS] * ((taker - first) & 3)
        if rules.is_coinche:
            deal = Deal.from_hands(rules, dealer, hands)
            bids = [*before, bid_action(value, trump)]
            bids += {1: [PASS] * 3, 2: [COINCHE, PASS, PASS, PASS], 4: [COINCHE, SURCOINCHE]}[multiplier]
        else:
            hand = hands[taker]
            same = hand >> (8 * trump) & 0xFF
            other = hand & ~(0xFF << (8 * trump))
            retourne = (8 * trump + same.bit_length() - 1) if same else other.bit_length() - 1
            deal = Deal.from_hands(rules, dealer, hands, retourne)
            bids = [*before, TAKE] if retourne >> 3 == trump else [PASS] * 4 + [*before, CHOOSE + trump]
        for bid in bids:
            deal.apply(bid)
        return cls.from_deal(deal)

    # ------------------------------------------------------------ queries
    @property
    def to_act(self) -> int:
        """The seat to play."""
        return self.deal.to_act

    @property
    def team(self) -> int:
        """The team to play (0: seats 0 and 2, 1: seats 1 and 3)."""
        return self.deal.to_act & 1

    @property
    def takers(self) -> int:
        return self.deal.takers

    @property
    def cards_played(self) -> int:
        return len(self.deal.plays)

    def legal_actions(self) -> list[int]:
        """The engine's legal actions (a card, with its words and declarations)."""
        return self.deal.legal_actions()

    def after(self, action: int | str) -> Position:
        """The position after ``action`` (an engine action or its text, such as ``"KH belote"``);
        a finished deal gives a position whose :attr:`is_over` is true."""
        deal = self.deal.copy()
        deal.apply(parse_action(action) if isinstance(action, str) else action)
        return Position(deal, self.solver)

    @property
    def is_over(self) -> bool:
        return self.deal.is_over


def positions_of_record_deal(record: Mapping[str, Any], rules: Ruleset | None = None,
                             solver_options: Mapping[str, bool] | None = None) -> list[Position]:
    """The position before each card of a deal record: ``positions[i]`` is where ``plays[i]`` was
    played (so ``len(positions) == len(plays)``; none for a thrown-in deal). ``rules`` for a deal
    record inside a match record, which names no ruleset. Every action is checked by the engine
    (:class:`PositionError` names the first illegal one). The positions share one solver."""
    plays = record.get("plays", [])
    if not isinstance(plays, list):
        raise PositionError("'plays' must be a list")
    try:
        deal = deal_from_record({**record, "plays": []}, rules)
    except RecordError as e:
        raise PositionError(str(e)) from None
    if deal.thrown_in or not plays:
        return []
    solver = Solver(deal, **(solver_options or {}))
    out: list[Position] = []
    for i, text in enumerate(plays):
        out.append(Position(deal.copy(), solver))
        try:
            deal.apply(parse_action(text))
        except Exception as e:
            raise PositionError(f"plays[{i}] {text!r}: {e}") from None
    return out
