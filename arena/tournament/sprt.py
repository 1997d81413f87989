"""The SPRT of the ``sprt`` format and of version tests: a sequential test by betting, which keeps
the error rates it states after any number of pairs, whatever the law of the pairs.

**What is counted.** Each mirror duplicate pair scores ``X = (s_leg0 + s_leg1) / 2`` for the
candidate, a match won counting 1, drawn 1/2, lost 0: one of 0, 1/4, 1/2, 3/4, 1 (the five counts
are the *pentanomial*). A pair one of whose legs had no card played (every deal thrown in: all
four seats passed), and did not end by forfeit, is **set aside**: such a match is a 0-0 draw that
says nothing of how either bot plays, so it is no pair result. The test counts how many it set
aside (:attr:`SprtState.set_aside`) and tells nothing else from them.

**The hypotheses.** With ``L(elo) = 1 / (1 + 10 ** (-elo / 400))``, ``s0 = L(elo0)`` and
``s1 = L(elo1)``: H0, the candidate's mean pair score is at most ``s0``; H1, at least ``s1``. No
other assumption: the law of ``X`` may be anything on [0, 1], all draws or all wins included.

**The test.** Two gamblers start with a wealth of 1 and bet on every pair, each a stake chosen
from the pairs before it only::

    W0 <- W0 * (1 + lam * (X - s0))     lam in [0, CAP / s0]        (against H0: gains when X > s0)
    W1 <- W1 * (1 - gam * (X - s1))     gam in [0, CAP / (1 - s1)]  (against H1: gains when X < s1)

Whatever the law of ``X`` with a mean at most ``s0``, each factor of ``W0`` has an expectation at
most 1 and is never negative: ``W0`` is a nonnegative supermartingale from 1, and by Ville's
inequality ``P(W0 ever reaches 1/alpha) <= alpha``; likewise ``P(W1 ever reaches 1/beta) <= beta``
when the mean is at least ``s1``. The test accepts H1 only once ``log W0 >= log(1/alpha)`` and H0
only once ``log W1 >= log(1/beta)``. So a false H1 has a chance of at most ``alpha`` and a false
H0 at most ``beta``, exactly (no normal approximation, no large sample), after any number of pairs,
however often the test is looked at, on any law of the pair scores: this is what lets it decide
after every pair from the second on, and what ``min_pairs`` no longer needs to guard (it is kept
as an option; no constant of this test is a patch against small samples).

The LLR it reports is ``log+ W0 - log+ W1`` (``log+ = max(0, log)``), with the bounds
``lower = log(beta)`` and ``upper = log(1/alpha)``: it reaches ``upper`` only when ``W0`` does and
``lower`` only when ``W1`` does, and it moves as fishtest's LLR does (the expected step of
``log W0`` at a mean ``mu`` is about ``lam (mu - (s0 + s1) / 2)`` with ``lam = (s1 - s0) / var``:
the GSPRT's). Its chart reads as fishtest's; only the bounds are ``+-log(20) = +-3.00`` at
``alpha = beta = 0.05`` instead of ``+-log(19) = +-2.94``.

**The stakes** only move how soon the test decides, never its error rates. Each is Kelly's for a
pair law with the mean of the alternative it bets on and the variance seen so far:
``lam = d / (var + d ** 2)`` with ``d = max(mu, s1) - s0``, and ``gam`` alike with
``d = s1 - min(mu, s0)``, where ``mu`` and ``var`` are the mean and variance of the pentanomial so
far plus :data:`PRIOR` pairs in each of its five cells (a variance of 1/8 before any pair,
forgotten as pairs come), and each stake is capped so that one pair risks at most :data:`CAP` of
the wealth. ``bench/sprt.py`` chose ``PRIOR`` and ``CAP`` on Belote laws measured from real play:
between two close versions of a bot, 80 to 93% of mirror pairs are drawn (both legs play the same
cards, and close bots play most deals alike), the rest mostly both legs won or both lost.

**Against fishtest.** fishtest's GSPRT (this module's method before issue 24, kept as
:func:`gsprt_llr_fishtest` for ``bench/sprt.py`` only) takes
``LLR = N (s1 - s0)(2 mu - s0 - s1) / (2 var)`` with ``var`` the variance of the observed
pentanomial, 1e-3 counted in its empty cells. That is a normal approximation: sound over the
tens of thousands of pairs of a chess patch, whose pentanomial is never degenerate, and not on
few pairs or a degenerate pentanomial, whose variance it estimates near 0: 8 pairs all won gave
LLR +703 at [0, 30], all drawn -95. On the Belote laws above it accepted H0 for a version 30 Elo
better in 74 to 82% of the runs at [0, 30], and between equal bots it accepted H1 in up to 10%
(independent legs) and 27% (pairs all won or all lost) against the 5% it states (``bench/sprt.py``
prints its figures beside the test's; docs/ratings.md has the table). The betting test needs about the GSPRT's
pairs where that approximation holds, as its drift is the GSPRT's; where it does not, it needs more
pairs than the GSPRT took, the price of deciding only on evidence.

**The Elo shown** (:attr:`SprtState.elo`, :attr:`SprtState.elo_interval`): the Elo of the mean
score of the pentanomial with :data:`PRIOR` pairs in each cell (finite: 8 pairs all won show
+348, not +1000), and a 95% confidence interval for the Elo by betting too: the mean scores ``m``
that neither a mixture of gamblers betting that the mean is above ``m`` nor one betting below has
made 40 times richer (:func:`score_interval`). It holds for any law and after any number of pairs,
as the test does; it is unbounded above when no pair was lost (a candidate that has won every pair
may be any amount stronger), below when none was won.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Literal

from arena.tournament.spec import SprtOptions

Decision = Literal["H0", "H1"]
Pentanomial = tuple[int, int, int, int, int]
PAIR_SCORES: tuple[float, ...] = (0.0, 0.25, 0.5, 0.75, 1.0)

#: the pairs counted in each of the pentanomial's five cells before any is played, for the stakes and
#: the Elo estimate (a variance of 1/8: two legs independent and no draw); chosen by bench/sprt.py
PRIOR = 0.5
#: the most of its wealth a gambler risks on one pair (the stake's cap); chosen by bench/sprt.py
CAP = 0.6
#: the confidence of the Elo interval
INTERVAL_LEVEL = 0.95
#: the interval's gamblers risk these fractions of their wealth on a pair (0.9 down to 0.009), each
#: gambler starting with as much: enough to bound the mean of 100,000 pairs, few enough that the
#: mixture gives up little on 8 (its cost is the log of their number)
INTERVAL_FRACTIONS: tuple[float, ...] = tuple(0.9 * 0.6 ** j for j in range(10))
#: the least distance kept between a hypothesis's mean score and 0 or 1 (an elo0 or elo1 so large
#: that its score rounds to 0 or 1 still gives a finite cap)
_EDGE = 1e-12


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


def finite_or_none(value: float) -> float | None:
    """``value``, or None for an infinite end of an interval (as JSON and the registry keep it)."""
    return value if math.isfinite(value) else None


def elo_text(elo: float, low: float | None, high: float | None) -> str:
    """``+348 Elo (95%: -28 to +inf)``: an estimate and its interval, an end None or infinite being
    unbounded."""
    def end(x: float | None, sign: str) -> str:
        return f"{sign}inf" if x is None or not math.isfinite(x) else f"{x:+.0f}"

    return f"{elo:+.0f} Elo (95%: {end(low, '-')} to {end(high, '+')})"


def bounds(alpha: float, beta: float) -> tuple[float, float]:
    """(lower, upper): accept H0 at or below the lower, H1 at or above the upper."""
    return math.log(beta), math.log(1.0 / alpha)


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
    """Mean pair score and per-pair variance of the observed frequencies (0.5 and 0 for no pair)."""
    n = sum(counts)
    if n == 0:
        return 0.5, 0.0
    mu = sum(c * x for c, x in zip(counts, PAIR_SCORES, strict=True)) / n
    var = sum(c * (x - mu) ** 2 for c, x in zip(counts, PAIR_SCORES, strict=True)) / n
    return mu, var


def smoothed(counts: Sequence[int]) -> tuple[float, float]:
    """The mean and variance of the pentanomial with :data:`PRIOR` pairs added in each cell.

    Written out term by term, in the order ``bench/sprt.py``'s vectorised copy adds them, so that
    both give the same bits (a test checks it)."""
    c0, c1, c2, c3, c4 = (c + PRIOR for c in counts)
    n = c0 + c1 + c2 + c3 + c4
    mu = (c1 * 0.25 + c2 * 0.5 + c3 * 0.75 + c4) / n
    e1, e2, e3, e4 = 0.25 - mu, 0.5 - mu, 0.75 - mu, 1.0 - mu
    var = (c0 * mu * mu + c1 * e1 * e1 + c2 * e2 * e2 + c3 * e3 * e3 + c4 * e4 * e4) / n
    return mu, var


def hypotheses(elo0: float, elo1: float) -> tuple[float, float]:
    """(s0, s1): the mean pair scores of H0 and H1, kept off 0 and 1."""
    return (min(max(elo_to_score(elo0), _EDGE), 1.0 - _EDGE),
            min(max(elo_to_score(elo1), _EDGE), 1.0 - _EDGE))


def stakes(counts: Sequence[int], s0: float, s1: float) -> tuple[float, float]:
    """(lam, gam): what the two gamblers bet on the next pair, from the pentanomial so far."""
    mu, var = smoothed(counts)
    d0 = max(mu, s1) - s0
    lam = min(d0 / (var + d0 * d0), CAP / s0)
    d1 = s1 - min(mu, s0)
    gam = min(d1 / (var + d1 * d1), CAP / (1.0 - s1))
    return lam, gam


def _log_mean_exp(values: Sequence[float]) -> float:
    top = max(values)
    if top == -math.inf:
        return top
    return top + math.log(sum(math.exp(v - top) for v in values) / len(values))


def _log_capital(counts: Sequence[int], m: float, above: bool) -> float:
    """The log wealth of the interval's mixture of gamblers betting the mean is above ``m`` (or below)."""
    out = []
    for f in INTERVAL_FRACTIONS:
        lam = f / m if above else -f / (1.0 - m)
        out.append(sum(c * math.log1p(lam * (x - m)) for c, x in zip(counts, PAIR_SCORES, strict=True) if c))
    return _log_mean_exp(out)


def score_interval(counts: Sequence[int], level: float = INTERVAL_LEVEL) -> tuple[float, float]:
    """A confidence interval for the mean pair score, valid after any number of pairs on any law.

    The scores ``m`` at which neither mixture of gamblers (above ``m``, below ``m``: each at
    ``(1 - level) / 2``) has grown ``2 / (1 - level)`` times: by Ville's inequality, the true mean
    is left out, at any pair, with a chance of at most ``1 - level``. The wealth betting above ``m``
    falls as ``m`` rises, the other grows: each end is found by bisection."""
    n = sum(counts)
    if n == 0:
        return 0.0, 1.0
    mu = mean_and_variance(counts)[0]
    threshold = math.log(2.0 / (1.0 - level))
    lo, hi = 0.0, mu  # the lower end: in (lo, hi]
    if counts[0] == n:
        low = 0.0
    else:
        for _ in range(60):
            mid = (lo + hi) / 2
            if mid <= 0.0 or _log_capital(counts, mid, above=True) >= threshold:
                lo = mid
            else:
                hi = mid
        low = hi
    lo, hi = mu, 1.0  # the upper end: in [lo, hi)
    if counts[4] == n:
        high = 1.0
    else:
        for _ in range(60):
            mid = (lo + hi) / 2
            if mid >= 1.0 or _log_capital(counts, mid, above=False) >= threshold:
                hi = mid
            else:
                lo = mid
        high = lo
    return low, high


@dataclass(frozen=True)
class SprtState:
    """Where the SPRT stands: the LLR, its bounds, and the decision if any.

    ``pairs`` and ``pentanomial`` count the pair results the test used: when it has decided, those
    up to the crossing (pairs finished later do not change it); ``set_aside`` the pairs before
    them that were no result (a leg with no card played).
    """

    llr: float
    lower: float
    upper: float
    decision: Decision | None
    pairs: int
    pentanomial: Pentanomial
    elo0: float
    elo1: float
    set_aside: int = 0

    @property
    def score(self) -> float:
        """The candidate's mean pair score as estimated (:data:`PRIOR` pairs in each cell; 0.5
        before any pair)."""
        return smoothed(self.pentanomial)[0]

    @cached_property
    def score_interval(self) -> tuple[float, float]:
        """The 95% interval of the mean pair score (:func:`score_interval`; worked out once)."""
        return score_interval(self.pentanomial)

    @property
    def elo(self) -> float:
        """The Elo estimate (finite), inside its interval."""
        low, high = self.score_interval
        return score_to_elo(min(max(self.score, low), high))

    @property
    def elo_interval(self) -> tuple[float, float]:
        """The 95% interval of the Elo difference; -inf or +inf at an end the pairs do not bound."""
        low, high = self.score_interval
        return score_to_elo(low), score_to_elo(high)

    def to_dict(self) -> dict[str, object]:
        """As the JSON API shows it: ``elo``, ``elo_low`` and ``elo_high`` None before any pair result,
        an end None where it is unbounded."""
        out: dict[str, object] = {
            "llr": round(self.llr, 4), "lower": round(self.lower, 4), "upper": round(self.upper, 4),
            "decision": self.decision, "pairs": self.pairs, "pentanomial": list(self.pentanomial),
            "set_aside": self.set_aside, "elo0": self.elo0, "elo1": self.elo1,
            "elo": None, "elo_low": None, "elo_high": None}
        if self.pairs:
            low, high = self.elo_interval
            out.update(elo=round(self.elo, 1), elo_low=finite_or_none(round(low, 1)),
                       elo_high=finite_or_none(round(high, 1)))
        return out


class SequentialTest:
    """The SPRT fed one pair at a time, in pair order; it stops at the first crossing."""

    def __init__(self, options: SprtOptions) -> None:
        self.options = options
        self.lower, self.upper = bounds(options.alpha, options.beta)
        self.s0, self.s1 = hypotheses(options.elo0, options.elo1)
        self.counts = [0] * 5
        self.set_aside_pairs = 0
        #: log W0 (evidence against H0) and log W1 (against H1)
        self.log_w0 = 0.0
        self.log_w1 = 0.0
        self.llr = 0.0
        self.decision: Decision | None = None

    def add(self, pair_score: float | None) -> Decision | None:
        """Count one more pair, ``None`` for one set aside (ignored once decided); the decision so far."""
        if self.decision is not None:
            return self.decision
        if pair_score is None:
            self.set_aside_pairs += 1
            return None
        i = pair_index(pair_score)
        x = PAIR_SCORES[i]
        lam, gam = stakes(self.counts, self.s0, self.s1)
        self.log_w0 += math.log1p(lam * (x - self.s0))
        self.log_w1 += math.log1p(-gam * (x - self.s1))
        self.counts[i] += 1
        self.llr = max(0.0, self.log_w0) - max(0.0, self.log_w1)
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
            set_aside=self.set_aside_pairs,
        )


def run_sprt(pair_scores: Iterable[float | None], options: SprtOptions) -> SprtState:
    """Feed pair scores in order (``None``: a pair set aside); stop at the first crossing of a bound."""
    test = SequentialTest(options)
    for s in pair_scores:
        if test.add(s) is not None:
            break
    return test.state()


def gsprt_llr_fishtest(counts: Sequence[int], elo0: float, elo1: float) -> float:
    """This module's LLR before issue 24, fishtest's GSPRT: kept for ``bench/sprt.py`` only, which
    shows its error rates beside the test's (its bounds were ``log(beta / (1 - alpha))`` and
    ``log((1 - beta) / alpha)``). Never decide with it: its variance estimate is near 0 on a
    degenerate pentanomial (see the module's doc)."""
    n = sum(counts)
    if n < 2:
        return 0.0
    regular = [c if c > 0 else 1e-3 for c in counts]
    mu, var = mean_and_variance(regular)
    if var <= 0.0:
        return 0.0
    s0, s1 = elo_to_score(elo0), elo_to_score(elo1)
    return n * (s1 - s0) * (2.0 * mu - s0 - s1) / (2.0 * var)
