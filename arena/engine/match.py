"""A match: deals until a side reaches the target, or a fixed number of deals.

The dealer of the first deal is drawn from the match seed and moves to the
next seat every deal, thrown-in deals included. A classic *litige* holds the
takers' points for the next played deal (see :mod:`arena.engine.scoring`);
points still held when the match ends are lost.
"""

from __future__ import annotations

import dataclasses

from arena.engine.deal import Deal
from arena.engine.dealing import deal_from_rng, deal_rng, first_dealer
from arena.engine.errors import EngineError
from arena.engine.rules import Ruleset
from arena.engine.scoring import DealOutcome, score_deal


class MatchOverError(EngineError):
    """A deal was started or recorded after the match was decided."""


class Match:
    """The running score of a match and the deals played so far."""

    def __init__(
        self, rules: Ruleset, seed: int | str = 0, *, dealer: int | None = None,
        target: int | None = None,
    ) -> None:
        self.rules = rules
        self.seed = seed
        self.first_dealer = first_dealer(seed) if dealer is None else dealer
        self.target = rules.target if target is None else target
        self.deals: list[Deal] = []
        self.outcomes: list[DealOutcome] = []
        self.totals = [0, 0]
        self.held = 0
        self.winner: int | None = None
        self.is_over = False

    @property
    def next_dealer(self) -> int:
        return (self.first_dealer + len(self.outcomes)) & 3

    def new_deal(self) -> Deal:
        """Shuffle, cut and distribute the next deal from the match seed."""
        self._check_open()
        index = len(self.outcomes)
        return deal_from_rng(self.rules, self.next_dealer, deal_rng(self.seed, index))

    def add(self, deal: Deal) -> DealOutcome:
        """Score a finished deal into the match; returns its outcome as written down."""
        self._check_open()
        if deal.dealer != self.next_dealer:
            raise ValueError(
                f"deal {len(self.outcomes)} is dealt by seat {self.next_dealer}, not {deal.dealer}"
            )
        outcome = score_deal(deal)
        if not outcome.thrown_in:
            received = [0, 0]
            if self.held and outcome.made is not None:
                winner = outcome.takers if outcome.made else 1 - outcome.takers
                received[winner] = self.held
                self.held = 0
            self.held += outcome.held_for_next_deal
            if received != [0, 0]:
                outcome = dataclasses.replace(
                    outcome,
                    score=(outcome.score[0] + received[0], outcome.score[1] + received[1]),
                    held_received=(received[0], received[1]),
                )
        self.deals.append(deal)
        self.outcomes.append(outcome)
        self.totals[0] += outcome.score[0]
        self.totals[1] += outcome.score[1]
        self._check_end()
        return outcome

    def _check_open(self) -> None:
        if self.is_over:
            raise MatchOverError(
                f"the match is over after {len(self.outcomes)} deals "
                f"({self.totals[0]}-{self.totals[1]})"
            )

    def _check_end(self) -> None:
        t0, t1 = self.totals
        if self.rules.deals is not None:
            if len(self.outcomes) >= self.rules.deals:
                self.is_over = True
                self.winner = 0 if t0 > t1 else 1 if t1 > t0 else None
            return
        target = self.target
        if (t0 >= target or t1 >= target) and t0 != t1:
            self.is_over = True
            self.winner = 0 if t0 > t1 else 1
            # equal past the target: one more deal
        if self.is_over:
            self.held = 0  # points still held at the end are lost
