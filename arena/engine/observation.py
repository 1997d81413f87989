"""What one seat may know: its own hand and the public information.

This is the *information state* of a seat (OpenSpiel's term). The referee
builds the bots' requests from it alone, so nothing of another seat's hand can
leave the referee through it. The legal actions travel inside the observation
(as in PettingZoo), so a bot needs no rules to move legally.
"""

from __future__ import annotations

from dataclasses import dataclass

from arena.engine.cards import python_class
from arena.engine.deal import Deal, Phase


@python_class  # a Python class in the compiled build too (see python_class)
@dataclass(frozen=True, slots=True)
class Observation:
    seat: int
    dealer: int
    phase: Phase
    to_act: int
    #: the seat's own cards now, as a mask
    hand: int
    #: the turned-up card (classic), or -1; it is public
    retourne: int
    #: every bid so far, in turn order from the seat after the dealer
    bids: tuple[int, ...]
    #: every card play so far with its words (belote, declared kinds)
    plays: tuple[int, ...]
    trump: int
    taker: int
    contract_value: int
    multiplier: int
    trick_leader: int
    #: cards of the trick in progress, in playing order
    trick: tuple[int, ...]
    #: the seat winning the trick in progress so far, -1 when no card of it is played
    trick_winner: int
    #: completed tricks: (leader, cards, winner)
    tricks: tuple[tuple[int, tuple[int, ...], int], ...]
    #: trick points each team has taken so far (last-trick bonus included at the end)
    trick_points: tuple[int, int]
    #: melds shown after the first card of trick 2: (seat, mask) of the scoring side
    shown_declarations: tuple[tuple[int, int], ...]
    declarations_team: int | None
    #: the legal actions if this seat is to act, else empty
    legal_actions: tuple[int, ...]
    #: the match score before this deal and litige points held
    match_score: tuple[int, int] = (0, 0)
    held: int = 0


def observe(deal: Deal, seat: int, match_score: tuple[int, int] = (0, 0), held: int = 0) -> Observation:
    """Seat ``seat``'s observation of ``deal``."""
    shown: tuple[tuple[int, int], ...] = ()
    if deal.decl_shown and deal.decl_team is not None:
        shown = tuple(
            (s, m.mask) for s in range(4) if s & 1 == deal.decl_team for m in deal.declared[s]
        )
    return Observation(
        seat=seat,
        dealer=deal.dealer,
        phase=deal.phase,
        to_act=deal.to_act,
        hand=deal.hands[seat],
        retourne=deal.retourne,
        bids=tuple(deal.bids),
        plays=tuple(deal.plays),
        trump=deal.trump,
        taker=deal.taker,
        contract_value=deal.contract_value,
        multiplier=deal.multiplier,
        trick_leader=deal.trick_leader,
        trick=tuple(deal.trick),
        trick_winner=deal.trick_winner if deal.trick else -1,
        tricks=tuple(deal.tricks),
        trick_points=(deal.trick_points[0], deal.trick_points[1]),
        shown_declarations=shown,
        declarations_team=deal.decl_team if deal.decl_shown else None,
        legal_actions=tuple(deal.legal_actions()) if deal.to_act == seat else (),
        match_score=match_score,
        held=held,
    )
