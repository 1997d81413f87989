"""The SPRT as fishtest runs it: a pentanomial GSPRT on duplicate pairs.

Each duplicate pair scores ``(s_leg0 + s_leg1) / 2`` for the candidate, a
match won counting 1, drawn 1/2, lost 0: one of 0, 1/4, 1/2, 3/4, 1. The five
counts are the *pentanomial*. With ``N`` pairs, mean pair score ``mu`` and
per-pair variance ``var`` (of the observed frequencies), the log-likelihood
ratio of H1 (the candidate is ``elo1`` stronger) against H0 (``elo0``) by the
normal approximation (GSPRT; fishtest's ``LLR_alt2``, once its ``LLR_logistic``) is::

    s0, s1 = L(elo0), L(elo1)          with L(elo) = 1 / (1 + 10 ** (-elo / 400))
    LLR = N * (s1 - s0) * (2 * mu - s0 - s1) / (2 * var)

The test accepts H1 once ``LLR >= log((1 - beta) / alpha)`` and H0 once
``LLR <= log(beta / (1 - alpha))``, checked after every pair in pair order,
and stops at the first crossing. With fewer than 2 pairs, or a variance of
zero, there is no decision (and the LLR is reported as 0). So a candidate
that scores the same in every pair (say, wins them all) never decides and
plays up to ``max_pairs``; fishtest avoids that by counting 1e-3 in every
empty cell of the pentanomial, which this module does not do.

Why the pentanomial on match results rather than a trinomial on the sign of
the duplicate point difference: the two legs of a pair share their decks, so
their results are correlated; the pentanomial measures the variance of the
pair as a whole, which is what makes paired play cheaper, exactly as
fishtest's paired openings. And it keeps ``elo0``/``elo1`` on the scale of a
*match* result, the scale ratings use. A trinomial on the point difference's
sign would test the chance of winning a *pair*, a different, inflated scale
on which fishtest-style bounds such as [0, 5] would mean something else. The
point difference is still reported in the standings.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from arena.tournament.spec import SprtOptions

Decision = Literal["H0", "H1"]
Pentanomial = tuple[int, int, int, int, int]
PAIR_SCORES: tuple[float, ...] = (0.0, 0.25, 0.5, 0.75, 1.0)


def elo_to_score(elo: float) -> float:
    """The expected score of a side ``elo`` points stronger (logistic)."""
    return 1.0 / (1.0 + math.pow(10.0, -elo / 400.0))


def score_to_elo(score: float) -> float:
    """The Elo difference of an expected score (infinite at 0 and 1)."""
    if score <= 0.0:
        return -math.inf
    if score >= 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / score - 1.0)


def bounds(alpha: float, beta: float) -> tuple[float, float]:
    """(lower, upper): accept H0 at or below the lower, H1 at or above the upper."""
    return math.log(beta / (1.0 - alpha)), math.log((1.0 - beta) / alpha)


def pair_index(pair_score: float) -> int:
    """0..4 for a pair score of 0, 1/4, 1/2, 3/4, 1."""
    i = round(pair_score * 4)
    if not 0 <= i <= 4 or abs(i / 4 - pair_score) > 1e-9:
        raise ValueError(f"a pair score is one of 0, 1/4, 1/2, 3/4, 1, not {pair_score}")
    return i


def pentanomial(pair_scores: Iterable[float]) -> Pentanomial:
    counts = [0] * 5
    for s in pair_scores:
        counts[pair_index(s)] += 1
    return counts[0], counts[1], counts[2], counts[3], counts[4]


def mean_and_variance(counts: Sequence[float]) -> tuple[float, float]:
    """Mean pair score and per-pair variance of the observed frequencies."""
    n = sum(counts)
    if n == 0:
        return 0.5, 0.0
    mu = sum(c * x for c, x in zip(counts, PAIR_SCORES, strict=True)) / n
    var = sum(c * (x - mu) ** 2 for c, x in zip(counts, PAIR_SCORES, strict=True)) / n
    return mu, var


def llr(counts: Sequence[int], elo0: float, elo1: float) -> float:
    """The GSPRT log-likelihood ratio of a pentanomial; 0 with fewer than 2 pairs.

    As fishtest does, an empty cell counts 1e-3 pairs, so a run where one bot
    wins every pair (no variance) still decides instead of playing to max_pairs.
    """
    n = sum(counts)
    if n < 2:
        return 0.0
    regular = [c if c > 0 else 1e-3 for c in counts]
    mu, var = mean_and_variance(regular)
    if var <= 0.0:
        return 0.0
    s0, s1 = elo_to_score(elo0), elo_to_score(elo1)
    return n * (s1 - s0) * (2.0 * mu - s0 - s1) / (2.0 * var)


@dataclass(frozen=True)
class SprtState:
    """Where the SPRT stands: the LLR, its bounds, and the decision if any.

    ``pairs`` and ``pentanomial`` count the pairs the test used: when it has
    decided, those up to the crossing (pairs finished later do not change it).
    """

    llr: float
    lower: float
    upper: float
    decision: Decision | None
    pairs: int
    pentanomial: Pentanomial
    elo0: float
    elo1: float

    @property
    def score(self) -> float:
        """The candidate's mean pair score so far (0.5 before any pair)."""
        return mean_and_variance(self.pentanomial)[0]

    @property
    def elo(self) -> float:
        """The Elo difference the mean score suggests (no interval)."""
        return score_to_elo(self.score)


class SequentialTest:
    """The SPRT fed one pair score at a time, in pair order; it stops at the first crossing."""

    def __init__(self, options: SprtOptions) -> None:
        self.options = options
        self.lower, self.upper = bounds(options.alpha, options.beta)
        self.counts = [0] * 5
        self.llr = 0.0
        self.decision: Decision | None = None

    def add(self, pair_score: float) -> Decision | None:
        """Count one more pair (ignored once decided); the decision so far."""
        if self.decision is not None:
            return self.decision
        self.counts[pair_index(pair_score)] += 1
        self.llr = llr(self.counts, self.options.elo0, self.options.elo1)
        # an undefined LLR is 0, strictly inside the bounds (alpha, beta < 0.5); none before min_pairs
        if sum(self.counts) < self.options.min_pairs:
            return None
        if self.llr >= self.upper:
            self.decision = "H1"
        elif self.llr <= self.lower:
            self.decision = "H0"
        return self.decision

    def state(self) -> SprtState:
        c = self.counts
        return SprtState(
            llr=self.llr, lower=self.lower, upper=self.upper, decision=self.decision, pairs=sum(c),
            pentanomial=(c[0], c[1], c[2], c[3], c[4]), elo0=self.options.elo0, elo1=self.options.elo1,
        )


def run_sprt(pair_scores: Iterable[float], options: SprtOptions) -> SprtState:
    """Feed pair scores in order; stop at the first crossing of a bound."""
    test = SequentialTest(options)
    for s in pair_scores:
        if test.add(s) is not None:
            break
    return test.state()
