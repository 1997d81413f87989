"""Engine throughput: random complete coinche deals, our engine against colver, in one run.

Usage (from the repository root)::

    python bench/engine.py [--deals N] [--repeats K] [--rollouts M] [--seed S] [--json] [--no-install]

What is timed, per deal (the same ``--deals`` count and the same seeds ``seed + i`` on both
sides; dealer ``i % 4``; a fresh ``random.Random(seed + i)`` per deal on both sides):

* ours (``coinche`` preset)::

      rng = random.Random(seed + i)
      d = deal_from_rng(rules, i % 4, rng)          # shuffle, cut, packets, distribute
      while not d.is_over:
          d.apply_unchecked(rng.choice(d.legal_actions()))
      score_deal(d)                                  # builds the DealOutcome

* colver (the Rust coinche engine from PyPI, driven from Python the same way)::

      rng = random.Random(seed + i)                  # Python picks the actions
      env = colver.Env.deal(dealer=i % 4, seed=seed + i)
      while not env.is_terminal():
          env.step(rng.choice(env.legal_actions()))
      env.rewards()                                  # the deal's score, per team

What colver does, checked against colver 0.11.1: ``Env.deal`` shuffles and deals the 32
cards from its own RNG; the bidding offers pass, 80..160 and capot in each suit (41
actions, the same as ours) plus coinche/surcoinche; when all four pass the deal is thrown
in (``is_terminal()`` is true, rewards are 0, nothing is redealt), as ours does; the
scoring is done inside the ``step`` that plays the last card, which already returns
``(observation, reward, done, legal_actions)``, so ``rewards()`` only reads it back (our
``score_deal`` is that scoring step, done in Python). Both sides therefore do: deal, one
random legal action per decision chosen in Python, score. The bench checks (untimed)
that the two loops make the same number of decisions per deal (about 38).

Differences that remain:

* rules: our ``coinche`` preset has declarations (annonces: on the first trick the legal
  actions include each announceable set, the melds are compared at trick two) and
  belote *declared* (the king/queen of trump come with and without the word); colver has
  no declarations and scores belote automatically. So ours does more rules work per deal,
  with the same number of decisions. For information the bench also times our coinche
  with ``annonces=False, belote="automatic"`` (colver's rules);
* colver's ``step`` also returns, at every step, a 415-float observation list (the same
  as ``get_observation()``) and the next legal actions; it has no way to step without
  building them. Our ``apply_unchecked`` returns ``None``. The observation is most of
  colver's time in this loop (about 3.7 us of its about 4.3 us per step here), so the
  bench times ``get_observation()`` during its untimed check pass and prints, for
  information, an *estimate* of colver's rate without it (not a measurement). Driving
  colver from ``step``'s return value instead of ``is_terminal``/``legal_actions``
  changes its rate by about 1% only;
* the same seed gives different (equally random) deals on the two sides: the shuffles
  differ, and ours also cuts the deck and picks the packet pattern.

Also printed, for information: our ``classic`` preset with the same loop, and the
rollouts/s of our search fast path: from one fixed position mid-deal (after the bidding
and 14 cards), ``Deal.copy()`` then random ``apply_unchecked`` to the end (no scoring),
one ``random.Random`` for all rollouts, as a search bot does.

Timing: ``time.perf_counter``, one warm-up pass (a tenth of the work), then the best of
``--repeats`` runs; the garbage collector stays on. Default run: well under 30 s.
The last line is ``ratio_vs_colver=R`` (our coinche deals/s over colver's); the target
is R >= 5. When colver is missing the bench tries ``pip install colver`` (unless
``--no-install``), and otherwise says so and skips that half (``ratio_vs_colver=n/a``).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import platform
import random
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout

from arena.engine import Deal, Ruleset, deal_from_rng, score_deal
from arena.engine.deal import PLAY

COLVER_REQUIREMENT = "colver>=0.11"
TARGET_RATIO = 5.0
#: cards played before the rollouts position (mid-trick four: 18 cards left)
ROLLOUT_CARDS_PLAYED = 14

#: the ruleset closest to colver's: coinche without declarations, belote automatic
COLVER_LIKE_SPEC: dict[str, Any] = {"preset": "coinche", "annonces": False, "belote": "automatic"}


# --------------------------------------------------------------------------- the timed loops
def ours_deals(rules: Ruleset, deals: int, seed: int) -> None:
    for i in range(deals):
        rng = random.Random(seed + i)
        d = deal_from_rng(rules, i & 3, rng)
        while not d.is_over:
            d.apply_unchecked(rng.choice(d.legal_actions()))
        score_deal(d)


def colver_deals(deals: int, seed: int) -> None:
    from colver import Env

    for i in range(deals):
        rng = random.Random(seed + i)
        env = Env.deal(dealer=i & 3, seed=seed + i)
        while not env.is_terminal():
            env.step(rng.choice(env.legal_actions()))
        env.rewards()


def ours_rollouts(base: Deal, rollouts: int, seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(rollouts):
        d = base.copy()
        while not d.is_over:
            d.apply_unchecked(rng.choice(d.legal_actions()))


# --------------------------------------------------------------------------- helpers
def rollout_position(seed: int) -> Deal:
    """A fixed coinche position mid-deal: random bidding, then ``ROLLOUT_CARDS_PLAYED`` cards."""
    rules = Ruleset.from_spec("coinche")
    for s in range(seed, seed + 1000):
        rng = random.Random(f"bench-rollout/{s}")
        d = deal_from_rng(rules, s & 3, rng)
        while not d.is_over and not (d.phase == PLAY and len(d.plays) == ROLLOUT_CARDS_PLAYED):
            d.apply_unchecked(rng.choice(d.legal_actions()))
        if not d.is_over:
            return d
    raise RuntimeError("no deal reached the card play")  # pragma: no cover (4 passes: 1 in 41**4)


def ours_decisions(rules: Ruleset, deals: int, seed: int) -> float:
    """Untimed check of the work: decisions per deal."""
    decisions = 0
    for i in range(deals):
        rng = random.Random(seed + i)
        d = deal_from_rng(rules, i & 3, rng)
        while not d.is_over:
            d.apply_unchecked(rng.choice(d.legal_actions()))
            decisions += 1
        score_deal(d)
    return decisions / deals


def colver_decisions(deals: int, seed: int) -> tuple[float, float]:
    """Untimed check of colver's work: decisions per deal, and seconds per observation.

    The observation cost is timed on ``get_observation()``, which builds the same list
    that ``step`` returns.
    """
    from colver import Env

    decisions = 0
    obs_time = 0.0
    for i in range(deals):
        rng = random.Random(seed + i)
        env = Env.deal(dealer=i & 3, seed=seed + i)
        while not env.is_terminal():
            t0 = time.perf_counter()
            env.get_observation()
            obs_time += time.perf_counter() - t0
            env.step(rng.choice(env.legal_actions()))
            decisions += 1
        env.rewards()
    return decisions / deals, obs_time / max(1, decisions)


def best_rate(run: Callable[[int], None], work: int, repeats: int) -> float:
    """Units of work per second: a warm-up, then the best of ``repeats`` timed runs."""
    run(max(1, work // 10))
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        run(work)
        best = min(best, time.perf_counter() - t0)
    return work / best


def colver_status(install: bool) -> tuple[str | None, str]:
    """colver's version if importable (installing it with pip if asked), else why not."""
    if importlib.util.find_spec("colver") is None:
        if not install:
            return None, "not installed (pip install colver), and --no-install was given"
        print(f"colver is missing: running pip install {COLVER_REQUIREMENT!r} ...", file=sys.stderr)
        proc = subprocess.run(
            [sys.executable, "-m", "pip", "install", "--quiet", COLVER_REQUIREMENT],
            check=False, capture_output=True, text=True,
        )
        importlib.invalidate_caches()
        if proc.returncode != 0 or importlib.util.find_spec("colver") is None:
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["?"]
            return None, f"not installed, and pip install failed: {tail[0]}"
    try:
        module = importlib.import_module("colver")
    except ImportError as exc:
        return None, f"installed but does not import: {exc}"
    return str(getattr(module, "__version__", "?")), ""


# --------------------------------------------------------------------------- main
@dataclass
class Results:
    deals: int
    repeats: int
    rollouts: int
    seed: int
    python: str
    colver_version: str | None
    colver_missing: str | None
    ours_coinche_deals_per_s: float
    ours_coinche_decisions_per_deal: float
    ours_coinche_colver_rules_deals_per_s: float
    ours_classic_deals_per_s: float
    colver_deals_per_s: float | None
    colver_decisions_per_deal: float | None
    #: time of one ``get_observation()`` (what each colver ``step`` also builds), microseconds
    colver_observation_us: float | None
    #: colver's rate minus its observations: an estimate, not a measurement
    colver_without_observation_deals_per_s_estimate: float | None
    rollouts_per_s: float
    rollout_cards_left: int
    ratio_vs_colver: float | None
    target_ratio: float = TARGET_RATIO


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--deals", type=int, default=10_000, help="deals per timed run, each side (10000)")
    p.add_argument("--repeats", type=int, default=3, help="timed runs per measure, best kept (3)")
    p.add_argument("--rollouts", type=int, default=50_000, help="rollouts per timed run (50000)")
    p.add_argument("--seed", type=int, default=0, help="first deal seed (0)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    p.add_argument("--no-install", action="store_true", help="do not pip install colver if missing")
    args = p.parse_args(argv)
    for name in ("deals", "repeats", "rollouts"):
        if getattr(args, name) < 1:
            p.error(f"--{name} must be at least 1")
    return args


def run(args: argparse.Namespace) -> Results:
    deals, repeats, seed = args.deals, args.repeats, args.seed
    check = min(deals, 2000)  # deals of the untimed work checks

    version, missing = colver_status(install=not args.no_install)
    coinche = Ruleset.from_spec("coinche")
    colver_rules = Ruleset.from_spec(COLVER_LIKE_SPEC)
    classic = Ruleset.from_spec("classic")

    ours_rate = best_rate(lambda n: ours_deals(coinche, n, seed), deals, repeats)
    ours_dpd = ours_decisions(coinche, check, seed)
    colver_rate: float | None = None
    colver_dpd: float | None = None
    obs_s: float | None = None
    no_obs_rate: float | None = None
    if version is not None:
        colver_rate = best_rate(lambda n: colver_deals(n, seed), deals, repeats)
        colver_dpd, obs_s = colver_decisions(check, seed)
        rest = 1 / colver_rate - obs_s * colver_dpd
        no_obs_rate = 1 / rest if rest > 0 else None
    plain_rate = best_rate(lambda n: ours_deals(colver_rules, n, seed), deals, repeats)
    classic_rate = best_rate(lambda n: ours_deals(classic, n, seed), deals, repeats)
    base = rollout_position(seed)
    rollout_rate = best_rate(lambda n: ours_rollouts(base, n, seed), args.rollouts, repeats)

    def r(x: float | None, digits: int = 1) -> float | None:
        return None if x is None else round(x, digits)

    return Results(
        deals=deals, repeats=repeats, rollouts=args.rollouts, seed=seed,
        python=platform.python_version(), colver_version=version, colver_missing=missing or None,
        ours_coinche_deals_per_s=round(ours_rate, 1),
        ours_coinche_decisions_per_deal=round(ours_dpd, 2),
        ours_coinche_colver_rules_deals_per_s=round(plain_rate, 1),
        ours_classic_deals_per_s=round(classic_rate, 1),
        colver_deals_per_s=r(colver_rate),
        colver_decisions_per_deal=r(colver_dpd, 2),
        colver_observation_us=r(None if obs_s is None else obs_s * 1e6, 2),
        colver_without_observation_deals_per_s_estimate=r(no_obs_rate),
        rollouts_per_s=round(rollout_rate, 1),
        rollout_cards_left=32 - ROLLOUT_CARDS_PLAYED,
        ratio_vs_colver=r(None if colver_rate is None else ours_rate / colver_rate, 3),
    )


def report(res: Results) -> None:
    def line(label: str, rate: float, unit: str, note: str) -> None:
        print(f"{label:<30}{rate:>10,.0f} {unit:<11}({note})")

    print(f"engine bench: {res.deals} deals per run, best of {res.repeats}, "
          f"seeds {res.seed}..{res.seed + res.deals - 1}, Python {res.python}, "
          f"colver {res.colver_version or 'MISSING'}")
    line("ours coinche", res.ours_coinche_deals_per_s, "deals/s",
         f"{res.ours_coinche_decisions_per_deal:.1f} decisions/deal; annonces, belote declared")
    if res.colver_deals_per_s is None:
        print(f"{'colver coinche':<30}MISSING: {res.colver_missing}; skipped")
    else:
        line("colver coinche", res.colver_deals_per_s, "deals/s",
             f"{res.colver_decisions_per_deal:.1f} decisions/deal; no annonces, belote automatic")
        if res.colver_without_observation_deals_per_s_estimate is not None:
            line("colver, minus observations", res.colver_without_observation_deals_per_s_estimate,
                 "deals/s", f"info, ESTIMATE: each step builds a 415-float observation, "
                 f"{res.colver_observation_us:.1f} us")
    line("ours coinche, colver's rules", res.ours_coinche_colver_rules_deals_per_s, "deals/s",
         "info: annonces off, belote automatic")
    line("ours classic", res.ours_classic_deals_per_s, "deals/s", "info")
    line("ours rollouts", res.rollouts_per_s, "rollouts/s",
         f"copy + random apply_unchecked, {res.rollout_cards_left} cards left")
    if res.ratio_vs_colver is None:
        print("ratio_vs_colver=n/a")
    else:
        verdict = "met" if res.ratio_vs_colver >= res.target_ratio else "NOT met"
        print(f"target ratio_vs_colver >= {res.target_ratio:g}: {verdict}")
        print(f"ratio_vs_colver={res.ratio_vs_colver:.2f}")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    res = run(args)
    if args.json:
        print(json.dumps(asdict(res), indent=2))
    else:
        report(res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
