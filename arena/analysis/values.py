"""The double-dummy value of a position: its deal score margin under perfect play by all four.

Values are *margins*: one side's deal score less the other's, as the deal's ruleset scores it
(card points, dix de der, belote, declarations, capot, contract made or down, litige, coinche and
surcoinche, rounding). :func:`solve` and :func:`card_values` give them for the side to play.

How: above the card search (:mod:`arena.analysis.search`, on the takers' outcome ``u``) sits a
thin layer in margin space. While a seat still has declarations to choose (the first trick, with
``annonces``), it searches the actions (card and declarations) one by one, each end of the
choices mapped to a margin by that context's table; from there on, a margin window is turned into
a window on ``u`` (the table is nondecreasing, :mod:`arena.analysis.position`), so the card
search runs with the tightest window the margin allows. :func:`solve` finds the margin by
null-window probes ("can the takers reach at least ``m``?"), bisecting between the known bounds,
each probe answered with a bound that skips the margin's plateaus (a coinched contract has two
values: one probe).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right

from arena.analysis.position import WORDS, Position, PositionError, Solver, pending_declarations
from arena.engine import score_deal
from arena.engine.actions import CARD_FIELD, DECL_SHIFT
from arena.engine.cards import CARDS, PLAIN_POINTS, PLAIN_STRENGTH, TRUMP_POINTS, TRUMP_STRENGTH, Card
from arena.engine.deal import Deal

#: beyond every margin a deal can score (a surcoinched capot is 4 x 410 plus declarations)
BOUND = 10_000


def _takers_value(solver: Solver, deal: Deal, alpha: int, beta: int) -> int:
    """The takers' margin from ``deal`` (fail-soft in the window ``alpha``, ``beta``)."""
    if deal.is_over:
        score = score_deal(deal).score
        return score[solver.takers] - score[1 - solver.takers]
    chosen: dict[int, int] = {}
    if pending_declarations(deal):
        undominated = solver.undominated(deal)
        if any(len(codes) > 1 for codes in undominated.values()):
            return _choosing(solver, deal, alpha, beta, undominated)
        chosen = {seat: codes[0] for seat, codes in undominated.items()}
    table = solver.margin_table(deal, chosen)
    # u <= lo: margin <= alpha; u >= hi: margin >= beta (index = u + 1)
    lo = bisect_right(table, alpha) - 2
    hi = bisect_left(table, beta) - 1
    takers = solver.takers
    sofar = deal.trick_points[takers]
    won = deal.tricks_won
    cs = (1 if won[takers] else 0) | (2 if won[1 - takers] else 0)
    rv = solver.search.value(deal.hands, deal.to_act, deal.trick, deal.trick_leader, cs,
                             lo - sofar, hi - sofar)
    u = min(max(sofar + rv, -1), 163)
    return table[u + 1]


def _choosing(solver: Solver, deal: Deal, alpha: int, beta: int, undominated: dict[int, list[int]]) -> int:
    """:func:`_takers_value` while seats still choose their declarations: action by action."""
    maximizing = deal.to_act & 1 == solver.takers
    value = -BOUND if maximizing else BOUND
    codes = undominated.get(deal.to_act)
    for action in useful_actions(deal):
        if codes is not None and action >> DECL_SHIFT not in codes:
            continue
        child = deal.copy()
        child.apply_unchecked(action)
        v = _takers_value(solver, child, alpha, beta)
        if maximizing:
            if v > value:
                value = v
                alpha = max(alpha, v)
        elif v < value:
            value = v
            beta = min(beta, v)
        if alpha >= beta:
            break
    return value


def useful_actions(deal: Deal) -> list[int]:
    """The legal actions less the dominated ones: a card without its belote word when the same
    card with it is legal (saying it never lowers the holder's margin: see
    :mod:`arena.analysis.position`)."""
    legal = deal.legal_actions()
    worded = {a & ~WORDS for a in legal if a & WORDS}
    return [a for a in legal if a & WORDS or a not in worded]


def _bounds(solver: Solver, deal: Deal) -> tuple[int, int]:
    if pending_declarations(deal):
        undominated = solver.undominated(deal)
        if any(len(codes) > 1 for codes in undominated.values()):
            return -BOUND, BOUND
        table = solver.margin_table(deal, {seat: codes[0] for seat, codes in undominated.items()})
    else:
        table = solver.margin_table(deal)
    return table[0], table[-1]


def _exact(solver: Solver, deal: Deal, lower: int, upper: int) -> int:
    """The takers' margin, known to lie in ``lower..upper``: bisection by null-window probes."""
    if not solver.probes:
        return _takers_value(solver, deal, -BOUND, BOUND)
    while lower < upper:
        gamma = (lower + upper + 1) // 2
        v = _takers_value(solver, deal, gamma - 1, gamma)
        if v >= gamma:
            lower = v
        else:
            upper = v
    return lower


def _check(pos: Position) -> None:
    if pos.deal.is_over:
        raise PositionError("the deal is over: no card is left to play")


def solve(pos: Position) -> int:
    """The margin of the side to play (its deal score less the other side's) under perfect play."""
    _check(pos)
    lower, upper = _bounds(pos.solver, pos.deal)
    v = _exact(pos.solver, pos.deal, lower, upper)
    return v if pos.team == pos.solver.takers else -v


def _margin_for(pos: Position, team: int, lower: int = -BOUND, upper: int = BOUND) -> int:
    """``team``'s margin from ``pos`` (over or not), known to lie in ``lower..upper``."""
    solver = pos.solver
    sign = 1 if team == solver.takers else -1
    if pos.deal.is_over:
        return sign * _takers_value(solver, pos.deal, -BOUND, BOUND)
    lo, hi = _bounds(solver, pos.deal)
    if sign > 0:
        lo, hi = max(lo, lower), min(hi, upper)
    else:
        lo, hi = max(lo, -upper), min(hi, -lower)
    return sign * _exact(solver, pos.deal, lo, max(lo, hi))


def _probe(pos: Position, team: int, at_least: int) -> bool:
    """Whether ``team`` is sure of a margin of at least ``at_least`` from ``pos``."""
    solver = pos.solver
    if team == solver.takers:
        return _takers_value(solver, pos.deal, at_least - 1, at_least) >= at_least
    return _takers_value(solver, pos.deal, -at_least, -at_least + 1) <= -at_least


def action_values(pos: Position) -> dict[int, int]:
    """For every legal action (a card with its words and declarations) of the side to play, its
    margin if it plays that action and all play perfectly after. Equivalent cards share a value."""
    _check(pos)
    team = pos.team
    best = solve(pos)
    out: dict[int, int] = {}
    seen: dict[tuple[int, int], int] = {}
    for action in pos.legal_actions():
        key = (_representative(pos.deal, action & CARD_FIELD), action & ~CARD_FIELD)
        if key in seen:
            out[action] = seen[key]
            continue
        child = pos.after(action)
        if child.is_over:
            value = _margin_for(child, team)
        elif _probe(child, team, best):
            value = best
        else:
            value = _margin_for(child, team, upper=best - 1)
        out[action] = seen[key] = value
    return out


def card_values(pos: Position) -> dict[Card, int]:
    """For every legal card of the side to play, its margin if it plays that card (saying its
    belote and choosing its best declarations) and all play perfectly after."""
    out: dict[Card, int] = {}
    for action, value in action_values(pos).items():
        card = CARDS[action & CARD_FIELD]
        if card not in out or value > out[card]:
            out[card] = value
    return out


def principal_actions(pos: Position) -> list[int]:
    """A line of perfect play to the deal's end: the engine's actions (with words and
    declarations), each the first in :func:`useful_actions`'s order that keeps the value."""
    _check(pos)
    line: list[int] = []
    while not pos.is_over:
        team = pos.team
        value = solve(pos)
        chosen = -1
        for action in useful_actions(pos.deal):
            child = pos.after(action)
            if (_margin_for(child, team) == value) if child.is_over else _probe(child, team, value):
                chosen = action
                pos = child
                break
        if chosen < 0:  # pragma: no cover (a position's value is one of its children's)
            raise AssertionError("no action keeps the position's value")
        line.append(chosen)
    return line


def principal_variation(pos: Position) -> list[Card]:
    """The cards of :func:`principal_actions`."""
    return [CARDS[a & CARD_FIELD] for a in principal_actions(pos)]


def scores(pos: Position) -> tuple[int, int]:
    """Each team's deal score (team 0, team 1) at the end of the principal variation, as the
    engine scores it: their difference is :func:`solve`'s margin."""
    deal = pos.deal.copy()
    for action in principal_actions(pos):
        deal.apply(action)
    score = score_deal(deal).score
    return score[0], score[1]


def _representative(deal: Deal, card: int) -> int:
    """The highest card of the mover's hand equivalent to ``card``: same suit and points, and no
    other hand's card between them in the suit's order."""
    seat = deal.to_act
    hand = deal.hands[seat]
    others = 0
    for s in range(4):
        if s != seat:
            others |= deal.hands[s]
    suit = card >> 3
    trump = suit == deal.trump
    strength = TRUMP_STRENGTH if trump else PLAIN_STRENGTH
    points = TRUMP_POINTS if trump else PLAIN_POINTS
    rank = card & 7
    best = rank
    for r in sorted(range(8), key=lambda q: strength[q]):
        if strength[r] <= strength[rank]:
            continue
        if others >> (8 * suit + r) & 1:
            break
        if hand >> (8 * suit + r) & 1:
            if points[r] != points[rank]:
                break
            best = r
    return 8 * suit + best
