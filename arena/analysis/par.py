"""Par: the contract both sides reach when they bid seeing every card (bridge's par), and what the
contract actually reached lost against it.

Every candidate contract is valued double-dummy from its first card (``value``: a function from an
engine :class:`Deal` at the start of its card play to team 0's deal score less team 1's under
perfect play). The candidates, and how many are solved:

- **Classic** (16 solves; the deck is needed, since the hands after the second distribution depend
  on who takes): every seat taking in round one (the retourne's suit) and every seat choosing each
  other suit in round two. The bidding is then solved as a game: from the last seat of round two
  back to the first of round one, each seat passes or takes, whichever gives its side the larger
  margin, knowing what the seats after it will do; eight passes throw the deal in (0). Par is the
  contract this reaches.
- **Coinche** (at most 8 solves, and about 2 more for each contract made): for each side and
  trump suit, the contract at 80. For one that makes it (its margin positive), the highest level
  it makes, by a search over the levels up to the ruleset's ``max_bid`` (made is monotone in the
  level): its first guess the level its margin at 80 gives (exact without declarations or
  rounding: the side's points are then its margin's function), then the level above it (2 solves
  when the guess is right), else a bisection; the capot first when that margin says the side
  holds 252 points. Each side bids its best made contract; the side whose contract is higher wins
  the auction (equal: the side that speaks first), and its contract is par, undoubled: a contract
  that makes is not coinched by a side that sees it makes, and a sacrifice (outbidding to go down)
  always costs more than letting it make, as a failed contract gives the defence 160 plus its
  value. No side makes 80: par is all pass (0). Sacrifices, coinche and surcoinche are not
  searched.

Bound: a side holding fewer than :data:`MIN_TRUMPS` (3) of the 8 trumps is not searched as takers in
that suit (taken as not making it: against 6 trumps or more, 80 points with 2 is out of reach in
practice). It halves the solves or so; it is the one place par is not exact.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from arena.engine import actions as A
from arena.engine.cards import KING, QUEEN, SUITS
from arena.engine.deal import Deal

__all__ = ["Contract", "Par", "contract_of", "par"]

#: team 0's double-dummy margin of a deal at its first card
Value = Callable[[Deal], int]


@dataclass(frozen=True, slots=True)
class Contract:
    """A contract: its text as a bid (``90H``, ``capotS``; classic: the trump suit's letter), the
    takers' team and seat, and its doubling (1, coinche 2, surcoinche 4)."""

    text: str
    takers: int
    seat: int
    multiplier: int = 1

    def describe(self) -> str:
        word = {1: "", 2: " coinche", 4: " surcoinche"}.get(self.multiplier, "")
        return f"{self.text}{word} by team {self.takers}"

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {"text": self.text, "takers": self.takers, "seat": self.seat}
        if self.multiplier != 1:
            out["multiplier"] = self.multiplier
        return out


@dataclass(frozen=True, slots=True)
class Par:
    """Par (None: all pass) and its value, team 0's margin; ``solves``: contracts valued."""

    contract: Contract | None
    value: int
    solves: int


def contract_of(deal: Deal) -> Contract | None:
    """The contract ``deal`` reached (None: thrown in or still bidding)."""
    if deal.taker < 0:
        return None
    if deal.rules.is_coinche:
        value = deal.contract_value
        text = f"capot{SUITS[deal.trump]}" if value == A.CAPOT_VALUE else f"{value}{SUITS[deal.trump]}"
    else:
        text = SUITS[deal.trump]
    return Contract(text, deal.taker & 1, deal.taker, deal.multiplier)


def _bid_until(dealt: Deal, seat: int, action: int, *, second_round: bool = False) -> Deal | None:
    """``dealt`` (before its first bid) with every seat passing until ``seat`` (in the second round of
    classic when asked), which bids ``action``, then the others passing to the card play; None when
    that is not a legal bidding."""
    deal = dealt.copy()
    passes = 0
    while deal.to_act != seat or (second_round and passes < 4):
        if A.PASS not in deal.legal_actions():
            return None
        deal.apply_unchecked(A.PASS)
        passes += 1
    if action not in deal.legal_actions():
        return None
    deal.apply_unchecked(action)
    while deal.phase == "bidding":
        deal.apply_unchecked(A.PASS)
    return deal if deal.taker >= 0 else None


def par(dealt: Deal, value: Value) -> Par:
    """Par of ``dealt`` (a deal before its first bid, its deck known for classic)."""
    if dealt.rules.is_coinche:
        return _coinche_par(dealt, value)
    return _classic_par(dealt, value)


def _classic_par(dealt: Deal, value: Value) -> Par:
    first = (dealt.dealer + 1) & 3
    order = [(first + k) & 3 for k in range(4)]
    rs = dealt.retourne >> 3
    solves = 0
    # backward: what the bidding reaches from each seat's turn on
    best: tuple[Contract | None, int] = (None, 0)
    for rnd in (2, 1):
        for seat in reversed(order):
            side = 1 if seat & 1 == 0 else -1  # team 0's margin, seen from the seat's side
            choices: list[tuple[Contract | None, int]] = [best]
            suits = [rs] if rnd == 1 else [s for s in range(4) if s != rs]
            for suit in suits:
                action = A.TAKE if rnd == 1 else A.CHOOSE + suit
                deal = _bid_until(dealt, seat, action, second_round=rnd == 2)
                if deal is None or not _may_make(deal, seat & 1, suit):
                    continue
                solves += 1
                choices.append((contract_of(deal), value(deal)))
            best = max(choices, key=lambda c: side * c[1])
    return Par(best[0], best[1], solves)


#: a side holding fewer of the trumps than this is not searched as takers (see the module docstring)
MIN_TRUMPS = 3


def _may_make(deal: Deal, team: int, suit: int) -> bool:
    """Whether ``team`` holds :data:`MIN_TRUMPS` trumps of ``suit`` or more in ``deal`` (its hands as the
    card play starts)."""
    held = deal.hands[team] | deal.hands[team + 2]
    return (held >> (8 * suit) & 0xFF).bit_count() >= MIN_TRUMPS


def _made_level(points: int, max_bid: int) -> int:
    """The highest value bid a side holding ``points`` makes (0: none)."""
    level = min(points // 10 * 10, max_bid)
    return level if level >= 80 else 0


def _coinche_par(dealt: Deal, value: Value) -> Par:
    first = (dealt.dealer + 1) & 3
    order = [(first + k) & 3 for k in range(4)]
    max_bid = dealt.rules.max_bid
    solves = 0
    # each side's best contract it makes: (level rank, its margin for the side, contract, team 0's value)
    best: dict[int, tuple[int, int, Contract, int]] = {}
    for team in (0, 1):
        seat = next(s for s in order if s & 1 == team)  # the side's first seat to speak
        sign = 1 if team == 0 else -1
        for suit in range(4):
            deal = _bid_until(dealt, seat, A.bid_action(80, suit))
            if deal is None or not _may_make(deal, team, suit):
                continue
            solves += 1
            at80 = sign * value(deal)
            if at80 <= 0:
                continue  # 80 fails: nothing higher makes
            found = (80, at80, deal)
            points = _takers_points(at80, deal, team)
            if points >= 252:  # a capot, perhaps: the capot contract first
                capot = _bid_until(dealt, seat, A.bid_action(A.CAPOT_VALUE, suit))
                if capot is not None:
                    solves += 1
                    margin = sign * value(capot)
                    if margin > 0:
                        found = (A.CAPOT_VALUE, margin, capot)
            if found[0] == 80:
                # the highest level made: made is monotone in the level (a side that makes 120 makes
                # 110), so a binary search, its first guess the level the margin at 80 suggests
                lo, hi = 80, max_bid + 10  # made at lo, not made at hi
                probe = min(max(_made_level(points, max_bid), 90), max_bid)
                while hi - lo > 10:
                    mid = probe if lo < probe < hi else (lo + hi) // 20 * 10
                    higher = _bid_until(dealt, seat, A.bid_action(mid, suit))
                    if higher is None:
                        hi, probe = mid, 0
                        continue
                    solves += 1
                    margin = sign * value(higher)
                    if margin > 0:  # made: the next level up next (a right guess: 2 solves in all)
                        lo, found, probe = mid, (mid, margin, higher), mid + 10
                    else:
                        hi, probe = mid, mid - 10
            v, margin, made = found
            contract = contract_of(made)
            assert contract is not None
            key = (v, margin)
            if team not in best or key > best[team][:2]:
                best[team] = (v, margin, contract, sign * margin)
    if not best:
        return Par(None, 0, solves)
    if len(best) == 1:
        (only,) = best.values()
        return Par(only[2], only[3], solves)
    a, b = best[0], best[1]
    # the higher contract wins the auction; at the same level, the side that speaks first bids it first
    win = best[order[0] & 1] if a[0] == b[0] else a if a[0] > b[0] else b
    return Par(win[2], win[3], solves)


def _takers_points(margin_at_80: int, deal: Deal, team: int) -> int:
    """The points a side holds (its cards, belote and declarations: what a coinche contract's value
    is held against) from its margin in a made 80 contract, ``(T + 80) - D`` where the defence's
    ``D`` is the rest of the 162 card points and its own belote: exact without declarations or
    rounding, a first guess otherwise."""
    t = deal.trump
    both = (1 << (8 * t + KING)) | (1 << (8 * t + QUEEN))
    belote = [0, 0]
    for seat in range(4):
        if deal.hands[seat] & both == both:
            belote[seat & 1] = 20
    cards = (margin_at_80 - 80 + 162 + belote[1 - team] - belote[team]) // 2
    return cards + belote[team]
