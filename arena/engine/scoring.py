"""Scoring a finished deal, classic and coinche, exactly as docs/rules.md#scoring-classic and
#scoring-coinche say.

Glossary: *takers* the side that chose trump; *defence* the other side;
*dedans* a failed contract; *litige* a classic tie, whose takers' points are
held for the next played deal; *capot* all eight tricks to one side;
*dix de der* the 10 points of the last trick (100 on a capot).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from arena.engine.actions import CAPOT_VALUE
from arena.engine.cards import CARD_TEXTS, SUITS, python_class
from arena.engine.deal import Deal

BELOTE_POINTS: Final = 20
CAPOT_POINTS: Final = 252


@python_class  # a Python class in the compiled build too (see python_class)
@dataclass(frozen=True, slots=True)
class DealOutcome:
    """What a deal scores; ``as_json`` gives the replay output of docs/records.md#deal-outcome."""

    thrown_in: bool
    score: tuple[int, int]
    takers: int = -1
    trump: int = -1
    made: bool | None = None
    value: int = 0
    multiplier: int = 1
    capot: int | None = None
    tricks: tuple[tuple[int, tuple[int, ...], int], ...] = ()
    card_points: tuple[int, int] = (0, 0)
    belote: int | None = None
    declarations: tuple[int, int] = (0, 0)
    held_for_next_deal: int = 0
    #: held litige points from earlier deals that this deal awarded (match only)
    held_received: tuple[int, int] = field(default=(0, 0))

    def as_json(self) -> dict[str, Any]:
        if self.thrown_in:
            return {"thrown_in": True, "score": list(self.score)}
        out: dict[str, Any] = {
            "takers": self.takers,
            "trump": SUITS[self.trump],
            "made": self.made,
            "tricks": [
                {"leader": leader, "cards": [CARD_TEXTS[c] for c in cards], "winner": winner}
                for leader, cards, winner in self.tricks
            ],
            "card_points": list(self.card_points),
            "belote": self.belote,
            "declarations": list(self.declarations),
            "score": list(self.score),
            "held_for_next_deal": self.held_for_next_deal,
        }
        if self.value:
            out["contract"] = (
                format_action_value(self.value, self.trump)
                + {1: "", 2: " coinche", 4: " surcoinche"}[self.multiplier]
            )
        if self.capot is not None:
            out["capot"] = self.capot
        if self.held_received != (0, 0):
            out["held_received"] = list(self.held_received)
        return out


def format_action_value(value: int, trump: int) -> str:
    return f"capot{SUITS[trump]}" if value == CAPOT_VALUE else f"{value}{SUITS[trump]}"


def round_half_up(points: int) -> int:
    """Nearest ten, halves up: 85 -> 90, 84 -> 80."""
    return (points + 5) // 10 * 10


def score_deal(deal: Deal) -> DealOutcome:
    """Score a deal that is over."""
    if not deal.is_over:
        raise ValueError("the deal is not over")
    if deal.thrown_in:
        return DealOutcome(thrown_in=True, score=(0, 0))
    rules = deal.rules
    takers = deal.takers
    defence = 1 - takers
    won = deal.tricks_won
    capot = 0 if won[1] == 0 else 1 if won[0] == 0 else None
    card_points = [deal.trick_points[0], deal.trick_points[1]]
    if capot is not None:
        card_points[capot] = CAPOT_POINTS
    belote = deal.belote_team()
    bel = [BELOTE_POINTS if belote == 0 else 0, BELOTE_POINTS if belote == 1 else 0]
    decl_team = deal.decl_team
    decl = [deal.decl_points if decl_team == 0 else 0, deal.decl_points if decl_team == 1 else 0]
    total = [card_points[0] + bel[0] + decl[0], card_points[1] + bel[1] + decl[1]]
    defence_test = total[defence] - (0 if rules.belote_counts_against_takers else bel[defence])
    if deal._coinche:
        return _score_coinche(deal, takers, total, defence_test, bel, decl, capot, card_points, belote)

    score = [0, 0]
    held = 0
    all_decl = deal.decl_points if decl_team is not None else 0
    scored_decl = [0, 0]
    if capot is not None:
        # the side with every trick scores 252, its belote and every scoring
        # declaration (the other side's pass to it); the other side its belote
        score[capot] = CAPOT_POINTS + bel[capot] + all_decl
        score[1 - capot] = bel[1 - capot]
        scored_decl[capot] = all_decl
        made: bool | None = capot == takers
    elif total[takers] > defence_test:
        made = True
        score = total[:]
        scored_decl = decl[:]
    elif total[takers] == defence_test:
        made = None
        score[defence] = total[defence]
        score[takers] = bel[takers]  # belote is kept whatever happens
        held = total[takers] - bel[takers]
        scored_decl[defence] = decl[defence]
    else:
        made = False
        score[takers] = bel[takers]
        score[defence] = 162 + all_decl + bel[defence]
        scored_decl[defence] = all_decl
    return DealOutcome(
        thrown_in=False, takers=takers, trump=deal.trump, capot=capot, tricks=tuple(deal.tricks),
        card_points=(card_points[0], card_points[1]), belote=belote,
        made=made, score=(score[0], score[1]),
        declarations=(scored_decl[0], scored_decl[1]), held_for_next_deal=held,
    )


def _score_coinche(
    deal: Deal, takers: int, total: list[int], defence_test: int, bel: list[int], decl: list[int],
    capot: int | None, card_points: list[int], belote: int | None,
) -> DealOutcome:
    defence = 1 - takers
    value = deal.contract_value
    mult = deal.multiplier
    reached = capot == takers if value == CAPOT_VALUE else total[takers] >= value
    made = reached and total[takers] > defence_test
    score = [0, 0]
    scored_decl = [0, 0]
    if mult == 1:
        if made:
            score[takers] = total[takers] + value
            score[defence] = total[defence]
            scored_decl = decl[:]
        else:
            score[takers] = bel[takers]
            score[defence] = 160 + value + decl[defence] + bel[defence]
            scored_decl[defence] = decl[defence]
    else:
        win = takers if made else defence
        score[win] = (160 + value) * mult + decl[win] + bel[win]
        score[1 - win] = bel[1 - win]
        scored_decl[win] = decl[win]
    if deal.rules.rounding == "nearest10":
        score = [round_half_up(s) for s in score]
    return DealOutcome(
        thrown_in=False, takers=takers, trump=deal.trump, capot=capot, tricks=tuple(deal.tricks),
        card_points=(card_points[0], card_points[1]), belote=belote,
        made=made, value=value, multiplier=mult, score=(score[0], score[1]),
        declarations=(scored_decl[0], scored_decl[1]),
    )
