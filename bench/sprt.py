"""SPRT: the sequential test's error rates and length on many laws of pair scores, against the GSPRT
it replaced (issue 24).

Usage (from the repository root)::

    python bench/sprt.py [--quick] [--runs N] [--seed S] [--json]

Three tests, each with the options it runs with: the ``sprt`` format's defaults (fishtest's [0, 5],
alpha = beta = 0.05, 1,000 pairs at most), the same with elo1 30, and the version tests
(:data:`arena.node.versions.OPTIONS`). Each is simulated ``--runs`` times (10,000) on every case: a
law of the pair score, at a true Elo. The laws (pair scores 0, 1/4, 1/2, 3/4, 1, and pairs set aside
because a leg had no card played):

- degenerate ones: *all draws* (0 Elo), *all won* (+inf), *all lost* (-inf), *all thrown in* (no
  pair result at all: any verdict is one from no evidence, counted an error);
- families moved to a mean score by exponential tilting (the Elo given: elo0, elo1, 2 x elo1):
  *near-draws* (the least variance a mean allows: draws and 3/4, or draws and 1/4, the law that
  looks most like all draws), *one-sided* (every pair both legs won or both lost), *independent
  legs* (each leg won 45%, drawn 10%, lost 45% between equals), *high-draw* (90% drawn);
- Belote laws measured here from 600 mirror pairs of 8 deals each between the heuristic bot and the
  same bot playing a random legal card 1% or 3% of the time (``tests/tournament/mirror_play.py``):
  coinche 8/0/559/4/29 and 10/1/477/1/111, classic 15/8/493/7/77 with 61% of deals thrown in and
  3.2% of pairs set aside (a leg of 8 thrown-in deals), and the same classic law with half of the
  pairs set aside (*many thrown-in deals*).

Per case, for the test and for the GSPRT it replaced (:func:`arena.tournament.sprt.gsprt_llr_fishtest`
with fishtest's bounds, its ``min_pairs`` as it was, thrown-in pairs counted as draws): the share of
runs accepting H1, accepting H0, undecided at ``max_pairs``, and the mean pairs played; for the test,
the share of runs whose 95% Elo interval left the true score out when they stopped. The error of a
case is the share of false H1 at an Elo at most elo0, of false H0 at elo1 or more (verdicts at all
for *all thrown in*), of intervals missing the truth; its ratio is that share over its stated rate
plus two Monte Carlo standard errors of it (``sqrt(rate (1 - rate) / runs)``: 0.0022 at 5% and
10,000 runs), so that a ratio above 1 is a real excess, not noise. The last line is
``worst_error_vs_alpha=R``, the worst ratio of the test (target R <= 1), after
``worst_error_vs_alpha_before=``, the GSPRT's.

The simulation runs the runs of a case at once with numpy (:class:`VectorTest`), a copy of
:class:`arena.tournament.sprt.SequentialTest` written with the same operations in the same order;
``tests/tournament/test_sprt_bench.py`` checks that both give the same decisions, pairs and LLR on
random sequences. ``--quick`` is ``--runs 200`` and fewer laws (what ``tests/test_benches.py`` runs,
about 4 s here: a case's runs go at once, so a run's pairs, not the runs, set most of the cost); a full
run takes a few minutes on one core.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

sys.path[:0] = [str(Path(__file__).resolve().parent.parent)]  # run from a checkout

from arena.node.versions import OPTIONS as VERSION_OPTIONS  # noqa: E402
from arena.tournament.spec import SprtOptions  # noqa: E402
from arena.tournament.sprt import (  # noqa: E402
    CAP,
    INTERVAL_FRACTIONS,
    INTERVAL_LEVEL,
    PAIR_SCORES,
    PRIOR,
    bounds,
    elo_to_score,
    gsprt_llr_fishtest,
    hypotheses,
    run_sprt,
    score_to_elo,
)

Floats = NDArray[np.float64]
Ints = NDArray[np.int64]
X = np.array(PAIR_SCORES)
#: the outcome index of a pair set aside (after the five pair scores)
ASIDE = 5


@dataclass(frozen=True)
class Config:
    name: str
    options: SprtOptions
    #: the min_pairs the GSPRT ran with before issue 24
    old_min_pairs: int


CONFIGS = (
    Config("sprt format, fishtest's [0, 5]", SprtOptions(), 2),
    Config("sprt format, [0, 30]", SprtOptions(elo1=30.0), 2),
    Config("version tests", VERSION_OPTIONS, 8),
)


# ------------------------------------------------------------------ the laws
def tilt(base: Sequence[float], score: float) -> Floats:
    """``base`` (five pair-score weights) exponentially tilted to the mean ``score``."""
    p = np.asarray(base, dtype=float) / sum(base)
    lo, hi = -400.0, 400.0
    for _ in range(200):
        theta = (lo + hi) / 2
        w = p * np.exp(theta * (X - 0.5))
        w /= w.sum()
        lo, hi = (theta, hi) if float(w @ X) < score else (lo, theta)
    return w


def near_draws(score: float) -> Floats:
    """The law of least variance with mean ``score``: two neighbouring pair scores."""
    k = min(int(score * 4), 3)
    q = (score - X[k]) / 0.25
    p = np.zeros(5)
    p[k], p[k + 1] = 1 - q, q
    return p


def with_aside(p: Floats, aside: float) -> Floats:
    return np.append(p * (1 - aside), aside)


INDEPENDENT = (0.45 ** 2, 2 * 0.45 * 0.1, 0.1 ** 2 + 2 * 0.45 ** 2, 2 * 0.45 * 0.1, 0.45 ** 2)
#: measured mirror pairs (see the module's doc)
COINCHE_CLOSE = (8, 0, 559, 4, 29)
COINCHE = (10, 1, 477, 1, 111)
CLASSIC = (15, 8, 493, 7, 77)
CLASSIC_ASIDE = 0.032
#: the families: name, law at a mean score (six outcomes)
FAMILIES: tuple[tuple[str, Callable[[float], Floats]], ...] = (
    ("near-draws", lambda s: with_aside(near_draws(s), 0.0)),
    ("one-sided", lambda s: with_aside(np.array([1 - s, 0, 0, 0, s]), 0.0)),
    ("independent legs", lambda s: with_aside(tilt(INDEPENDENT, s), 0.0)),
    ("high-draw", lambda s: with_aside(tilt((2, 3, 90, 3, 2), s), 0.0)),
    ("Belote coinche, close", lambda s: with_aside(tilt(COINCHE_CLOSE, s), 0.0)),
    ("Belote coinche", lambda s: with_aside(tilt(COINCHE, s), 0.0)),
    ("Belote classic", lambda s: with_aside(tilt(CLASSIC, s), CLASSIC_ASIDE)),
    ("many thrown-in deals", lambda s: with_aside(tilt(CLASSIC, s), 0.5)),
)
#: the degenerate laws: name, true Elo, law
FIXED: tuple[tuple[str, float, Floats], ...] = (
    ("all draws", 0.0, with_aside(np.array([0.0, 0, 1, 0, 0]), 0.0)),
    ("all won", math.inf, with_aside(np.array([0.0, 0, 0, 0, 1]), 0.0)),
    ("all lost", -math.inf, with_aside(np.array([1.0, 0, 0, 0, 0]), 0.0)),
    ("all thrown in", math.nan, with_aside(np.array([0.0, 0, 1, 0, 0]), 1.0)),
)


# ------------------------------------------------------------------ the tests, vectorised
@dataclass
class VectorTest:
    """:class:`arena.tournament.sprt.SequentialTest` over ``runs`` runs at once (the same operations)."""

    options: SprtOptions
    runs: int
    counts: Ints = field(init=False)
    set_aside: Ints = field(init=False)
    log_w0: Floats = field(init=False)
    log_w1: Floats = field(init=False)
    llr: Floats = field(init=False)
    #: 1 H1, -1 H0, 0 none yet
    decision: Ints = field(init=False)

    def __post_init__(self) -> None:
        self.lower, self.upper = bounds(self.options.alpha, self.options.beta)
        self.s0, self.s1 = hypotheses(self.options.elo0, self.options.elo1)
        self.counts = np.zeros((self.runs, 5), dtype=np.int64)
        self.set_aside = np.zeros(self.runs, dtype=np.int64)
        self.log_w0 = np.zeros(self.runs)
        self.log_w1 = np.zeros(self.runs)
        self.llr = np.zeros(self.runs)
        self.decision = np.zeros(self.runs, dtype=np.int64)

    def add(self, outcome: Ints, rows: Ints) -> None:
        """One more pair for the undecided ``rows``: ``outcome`` 0..4 a pair score's index, 5 aside."""
        outcome = outcome[self.decision[rows] == 0]
        rows = rows[self.decision[rows] == 0]
        aside = outcome == ASIDE
        np.add.at(self.set_aside, rows[aside], 1)
        rows, k = rows[~aside], outcome[~aside]
        s0, s1 = self.s0, self.s1
        c = self.counts[rows] + PRIOR
        c0, c1, c2, c3, c4 = c[:, 0], c[:, 1], c[:, 2], c[:, 3], c[:, 4]
        n = c0 + c1 + c2 + c3 + c4
        mu = (c1 * 0.25 + c2 * 0.5 + c3 * 0.75 + c4) / n
        e1, e2, e3, e4 = 0.25 - mu, 0.5 - mu, 0.75 - mu, 1.0 - mu
        var = (c0 * mu * mu + c1 * e1 * e1 + c2 * e2 * e2 + c3 * e3 * e3 + c4 * e4 * e4) / n
        d0 = np.maximum(mu, s1) - s0
        lam = np.minimum(d0 / (var + d0 * d0), CAP / s0)
        d1 = s1 - np.minimum(mu, s0)
        gam = np.minimum(d1 / (var + d1 * d1), CAP / (1.0 - s1))
        x = X[k]
        self.log_w0[rows] += np.log1p(lam * (x - s0))
        self.log_w1[rows] += np.log1p(-gam * (x - s1))
        self.counts[rows, k] += 1
        llr = np.maximum(0.0, self.log_w0[rows]) - np.maximum(0.0, self.log_w1[rows])
        self.llr[rows] = llr
        ready = self.counts[rows].sum(axis=1) >= self.options.min_pairs
        self.decision[rows] = np.where(ready & (llr >= self.upper), 1,
                                       np.where(ready & (llr <= self.lower), -1, 0))


@dataclass
class OldVectorTest:
    """The GSPRT before issue 24 (:func:`gsprt_llr_fishtest`, fishtest's bounds), a pair set aside
    counted as the draw its matches were."""

    options: SprtOptions
    runs: int
    min_pairs: int
    counts: Ints = field(init=False)
    decision: Ints = field(init=False)

    def __post_init__(self) -> None:
        a, b = self.options.alpha, self.options.beta
        self.lower, self.upper = math.log(b / (1 - a)), math.log((1 - b) / a)
        self.counts = np.zeros((self.runs, 5), dtype=np.int64)
        self.decision = np.zeros(self.runs, dtype=np.int64)
        self.s0, self.s1 = elo_to_score(self.options.elo0), elo_to_score(self.options.elo1)

    def add(self, outcome: Ints, rows: Ints) -> None:
        outcome = outcome[self.decision[rows] == 0]
        rows = rows[self.decision[rows] == 0]
        k = np.where(outcome == ASIDE, 2, outcome)
        self.counts[rows, k] += 1
        c = self.counts[rows].astype(float)
        n = c.sum(axis=1)
        reg = np.where(c > 0, c, 1e-3)
        rn = reg.sum(axis=1)
        mu = reg @ X / rn
        var = (reg * (X[None, :] - mu[:, None]) ** 2).sum(axis=1) / rn
        s0, s1 = self.s0, self.s1
        safe = np.where(var > 0, var, 1.0)
        llr = np.where((n >= 2) & (var > 0), n * (s1 - s0) * (2 * mu - s0 - s1) / (2 * safe), 0.0)
        ready = n >= self.min_pairs
        self.decision[rows] = np.where(ready & (llr >= self.upper), 1,
                                       np.where(ready & (llr <= self.lower), -1, 0))


def interval_misses(counts: Ints, score: float) -> Floats:
    """Whether the 95% interval of each run's pentanomial leaves ``score`` out (1.0) or not (0.0):
    :func:`arena.tournament.sprt.score_interval` holds ``score`` unless one of its mixtures at
    ``score`` reached its threshold."""
    threshold = math.log(2.0 / (1.0 - INTERVAL_LEVEL))
    f = np.array(INTERVAL_FRACTIONS)
    out = np.zeros(len(counts))
    for lam in (f / score, -f / (1.0 - score)):
        logs = np.log1p(np.outer(X - score, lam))  # 5 x fractions
        wealth = counts @ logs  # runs x fractions
        top = wealth.max(axis=1)
        mixture = top + np.log(np.exp(wealth - top[:, None]).mean(axis=1))
        out = np.maximum(out, mixture >= threshold)
    return out


# ------------------------------------------------------------------ one case
@dataclass(frozen=True)
class Outcome:
    h1: float
    h0: float
    undecided: float
    pairs: float


@dataclass(frozen=True)
class Case:
    config: str
    law: str
    #: the true Elo (inf, -inf; nan: no evidence)
    elo: float
    now: Outcome
    before: Outcome
    #: the share of runs whose Elo interval missed the true score when they stopped (nan: not checked)
    missed: float
    #: the test's error (the share that counts against its stated rate) over that rate plus 2 se
    ratio: float
    ratio_before: float


def simulate(law: Floats, options: SprtOptions, old_min: int, runs: int,
             rng: np.random.Generator) -> tuple[Outcome, Outcome, Ints]:
    """Both tests on the same pairs; the outcomes and the test's pentanomials when each run stopped."""
    new, old = VectorTest(options, runs), OldVectorTest(options, runs, old_min)
    stop_new = np.full(runs, options.max_pairs)
    stop_old = np.full(runs, options.max_pairs)
    cum = np.cumsum(law)
    cum[-1] = 1.0
    every = np.arange(runs)
    for t in range(1, options.max_pairs + 1):
        open_new = every[new.decision == 0]
        open_old = every[old.decision == 0]
        if not len(open_new) and not len(open_old):
            break
        outcome = np.searchsorted(cum, rng.random(runs), side="right").astype(np.int64)
        new.add(outcome[open_new], open_new)
        old.add(outcome[open_old], open_old)
        stop_new[open_new[new.decision[open_new] != 0]] = t
        stop_old[open_old[old.decision[open_old] != 0]] = t

    def outcome_of(decision: Ints, stop: Ints) -> Outcome:
        return Outcome(float(np.mean(decision == 1)), float(np.mean(decision == -1)),
                       float(np.mean(decision == 0)), float(np.mean(stop)))

    return outcome_of(new.decision, stop_new), outcome_of(old.decision, stop_old), new.counts


def error_ratio(outcome: Outcome, elo: float, options: SprtOptions, runs: int) -> float:
    def over(share: float, rate: float) -> float:
        return share / (rate + 2 * math.sqrt(rate * (1 - rate) / runs))

    if math.isnan(elo):  # no evidence: any verdict is an error
        return over(outcome.h1 + outcome.h0, min(options.alpha, options.beta))
    if elo <= options.elo0:
        return over(outcome.h1, options.alpha)
    if elo >= options.elo1:
        return over(outcome.h0, options.beta)
    return 0.0


def run_case(config: Config, law_name: str, elo: float, law: Floats, runs: int,
             rng: np.random.Generator) -> Case:
    options = config.options
    now, before, counts = simulate(law, options, config.old_min_pairs, runs, rng)
    missed = math.nan
    if math.isfinite(elo):
        missed = float(interval_misses(counts, elo_to_score(elo)).mean())
    ratio = error_ratio(now, elo, options, runs)
    if not math.isnan(missed):
        miss_rate = 1.0 - INTERVAL_LEVEL
        ratio = max(ratio, missed / (miss_rate + 2 * math.sqrt(miss_rate * (1 - miss_rate) / runs)))
    return Case(config.name, law_name, elo, now, before, missed, ratio,
                error_ratio(before, elo, options, runs))


def cases_of(config: Config, quick: bool) -> list[tuple[str, float, Floats]]:
    o = config.options
    out = [(name, elo, law) for name, elo, law in FIXED if not (name == "all draws" and o.elo0 != 0)]
    for name, family in FAMILIES:
        if quick and name in ("high-draw", "Belote coinche"):
            continue
        for elo in (o.elo0, o.elo1, 2 * o.elo1):
            out.append((name, elo, family(elo_to_score(elo))))
    return out


# ------------------------------------------------------------------ the report
@dataclass
class Results:
    runs: int
    seconds: float
    cases: list[Case]
    examples: dict[str, dict[str, object]]
    worst_error_vs_alpha: float
    worst_error_vs_alpha_before: float


def examples() -> dict[str, dict[str, object]]:
    """The LLR and Elo of a few pentanomials by the test and by the GSPRT it replaced, at [0, 30]."""
    out: dict[str, dict[str, object]] = {}
    options = SprtOptions(elo1=30.0, max_pairs=1000)
    for name, scores in (("8 pairs all won", [1.0] * 8), ("8 pairs all drawn", [0.5] * 8),
                         ("64 pairs thrown in", [None] * 64)):
        state = run_sprt(scores, options)
        played = [0.5 if s is None else s for s in scores]
        counts = [sum(1 for s in played if s == x) for x in PAIR_SCORES]
        mean = sum(played) / len(played)
        low, high = state.elo_interval
        out[name] = {
            "llr": round(state.llr, 2), "decision": state.decision or "", "pairs": state.pairs,
            "set_aside": state.set_aside, "elo": round(state.elo, 1), "elo_low": round(low, 1),
            "elo_high": round(high, 1),
            "llr_before": round(gsprt_llr_fishtest(counts, 0.0, 30.0), 2),
            "elo_before": max(-1000.0, min(1000.0, round(score_to_elo(mean), 1))),
        }
    return out


def run(args: argparse.Namespace) -> Results:
    started = time.perf_counter()
    rng = np.random.default_rng(args.seed)
    cases = [run_case(config, name, elo, law, args.runs, rng)
             for config in CONFIGS for name, elo, law in cases_of(config, args.quick)]
    return Results(args.runs, time.perf_counter() - started, cases, examples(),
                   max(c.ratio for c in cases), max(c.ratio_before for c in cases))


def _elo(elo: float, options: SprtOptions) -> str:
    if math.isnan(elo):
        return "none"
    if math.isinf(elo):
        return "+inf" if elo > 0 else "-inf"
    tag = " (elo0)" if elo == options.elo0 else " (elo1)" if elo == options.elo1 else ""
    return f"{elo:+g}{tag}"


def report(res: Results) -> None:
    for name, ex in res.examples.items():
        print(f"{name}, [0, 30]: LLR {ex['llr']:+.2f} {ex['decision'] or 'undecided'} after {ex['pairs']} "
              f"pairs ({ex['set_aside']} set aside), Elo {ex['elo']:+.0f} (95%: {ex['elo_low']:+.0f} to "
              f"{ex['elo_high']:+.0f}); before: LLR {ex['llr_before']:+.2f}, Elo {ex['elo_before']:+.0f}")
    for config in CONFIGS:
        o = config.options
        print(f"\n{config.name}: elo0 {o.elo0:g}, elo1 {o.elo1:g}, alpha {o.alpha:g}, beta {o.beta:g}, "
              f"max_pairs {o.max_pairs}, min_pairs {o.min_pairs} (before: {config.old_min_pairs}); "
              f"{res.runs:,} runs a case")
        print(f"  {'law':<22} {'true Elo':>13} | {'H1':>6} {'H0':>6} {'undec':>6} {'pairs':>6} {'missed':>6} "
              f"{'ratio':>5} | before: {'H1':>6} {'H0':>6} {'undec':>6} {'pairs':>6} {'ratio':>5}")
        for c in (c for c in res.cases if c.config == config.name):
            n, b = c.now, c.before
            missed = "-" if math.isnan(c.missed) else f"{c.missed:.4f}"
            print(f"  {c.law:<22} {_elo(c.elo, o):>13} | {n.h1:6.4f} {n.h0:6.4f} {n.undecided:6.4f} "
                  f"{n.pairs:6.1f} {missed:>6} {c.ratio:5.2f} | before: {b.h1:6.4f} {b.h0:6.4f} "
                  f"{b.undecided:6.4f} {b.pairs:6.1f} {c.ratio_before:5.2f}")
    print(f"\nratio: the error that counts against the stated rate (false H1 at elo0 or below, false H0 at "
          f"elo1 or above, any verdict with no evidence, an interval missing the truth) over that rate "
          f"plus 2 Monte Carlo standard errors; {res.seconds:.0f} s")
    print(f"target worst_error_vs_alpha <= 1: {'met' if res.worst_error_vs_alpha <= 1 else 'NOT met'}")
    print(f"worst_error_vs_alpha_before={res.worst_error_vs_alpha_before:.2f}")
    print(f"worst_error_vs_alpha={res.worst_error_vs_alpha:.2f}")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--quick", action="store_true", help="--runs 200 and fewer laws (what CI runs)")
    p.add_argument("--runs", type=int, default=None, help="runs a case (10,000)")
    p.add_argument("--seed", type=int, default=24, help="the simulation's seed (24)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    args = p.parse_args(argv)
    if args.runs is None:
        args.runs = 200 if args.quick else 10_000
    if args.runs < 1:
        p.error("--runs must be at least 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    res = run(args)
    if args.json:
        print(json.dumps(asdict(res), default=str))
    else:
        report(res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
