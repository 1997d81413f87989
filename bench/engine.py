"""Engine throughput: random complete coinche deals, our engine against colver, in one run.

Usage (from the repository root)::

    python bench/engine.py [--quick] [--deals N] [--repeats K] [--rollouts M] [--seed S] [--json]
                           [--no-install] [--build both|compiled|pure]

``--quick`` (what CI runs: ``tests/test_benches.py``) is ``--deals 300 --repeats 1 --rollouts 2000
--no-install``, a few seconds: options given with it win.

Two builds of our engine (``arena.engine.BUILD``): the compiled one (mypyc, built by
``python scripts/build_engine.py``) and the pure Python one, the reference. One process holds one
of them, so by default (``--build both``) this process loads the compiled build, times it and
colver, and runs itself again in a child process with ``BELOTE_ENGINE=pure`` (``--build pure
--no-colver``, same options, same seeds) for the pure build's figures. ``ratio_vs_colver`` is the
compiled build's; without a compiled build (not built, or out of date) the bench says so and
both the figures and the ratio are the pure build's.

What is timed, per deal (the same ``--deals`` count and the same seeds ``seed + i`` on both
sides; dealer ``i % 4``; a fresh ``random.Random(seed + i)`` per deal on both sides):

* ours (``coinche`` preset)::

      rng = random.Random(seed + i)
      d = deal_from_rng(rules, i % 4, rng)          # shuffle, cut, packets, distribute
      while not d.is_over:
          d.apply_unchecked(rng.choice(d.legal_actions()))
      score_deal(d)                                  # builds the DealOutcome

  ``deal_from_rng`` draws the shuffle, the cut and the packets with ``rng.getrandbits``, the
  same draws ``rng.shuffle``, ``rng.randint`` and ``rng.choice`` make (checked at import);
  both builds play the same deals and actions (the decisions/deal printed for each agree);

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
``--repeats`` runs; the garbage collector stays on. Default run: about 30 s (both builds).
The last line is ``ratio_vs_colver=R`` (our coinche deals/s over colver's, with the compiled
build when there is one); the target is R >= 5. When colver is missing the bench tries
``pip install colver`` (unless ``--no-install``), and otherwise says so and skips that half
(``ratio_vs_colver=n/a``).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import os
import platform
import random
import subprocess
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run from a checkout

if TYPE_CHECKING:
    from arena.engine import Deal, Ruleset

# The engine is imported in main(), after BELOTE_ENGINE says which build this process loads.

COLVER_REQUIREMENT = "colver>=0.11"
TARGET_RATIO = 5.0
#: cards played before the rollouts position (mid-trick four: 18 cards left)
ROLLOUT_CARDS_PLAYED = 14

#: the ruleset closest to colver's: coinche without declarations, belote automatic
COLVER_LIKE_SPEC: dict[str, Any] = {"preset": "coinche", "annonces": False, "belote": "automatic"}


# --------------------------------------------------------------------------- the timed loops
def ours_deals(rules: Ruleset, deals: int, seed: int) -> None:
    from arena.engine import deal_from_rng, score_deal

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
    from arena.engine import Ruleset, deal_from_rng
    from arena.engine.deal import PLAY

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
    from arena.engine import deal_from_rng, score_deal

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
class Ours:
    """One build's figures (same loops, same seeds)."""

    build: str
    #: why this build (arena.engine.BUILD_NOTE)
    build_note: str
    coinche_deals_per_s: float
    coinche_decisions_per_deal: float
    coinche_colver_rules_deals_per_s: float
    classic_deals_per_s: float
    rollouts_per_s: float
    #: our coinche deals/s over colver's
    ratio_vs_colver: float | None = None


@dataclass
class Results:
    deals: int
    repeats: int
    rollouts: int
    seed: int
    python: str
    colver_version: str | None
    colver_missing: str | None
    colver_deals_per_s: float | None
    colver_decisions_per_deal: float | None
    #: time of one ``get_observation()`` (what each colver ``step`` also builds), microseconds
    colver_observation_us: float | None
    #: colver's rate minus its observations: an estimate, not a measurement
    colver_without_observation_deals_per_s_estimate: float | None
    rollout_cards_left: int
    #: the build of this process: the compiled one when it loads (``ratio_vs_colver`` is its)
    ours: Ours
    #: the pure build, timed in a child process (None: this process is the pure build, or
    #: ``--build compiled``)
    pure: Ours | None
    #: why there is no compiled figure (None: there is one)
    compiled_missing: str | None
    ratio_vs_colver: float | None
    target_ratio: float = TARGET_RATIO


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--quick", action="store_true",
                   help="--deals 300 --repeats 1 --rollouts 2000 --no-install: a few seconds (what CI runs)")
    p.add_argument("--deals", type=int, default=None, help="deals per timed run, each side (10000)")
    p.add_argument("--repeats", type=int, default=None, help="timed runs per measure, best kept (3)")
    p.add_argument("--rollouts", type=int, default=None, help="rollouts per timed run (50000)")
    p.add_argument("--seed", type=int, default=0, help="first deal seed (0)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    p.add_argument("--no-install", action="store_true", help="do not pip install colver if missing")
    p.add_argument("--build", choices=("both", "compiled", "pure"), default="both",
                   help="our engine's builds to time: both (the pure one in a child process), or one")
    p.add_argument("--no-colver", action="store_true", help="do not time colver (the child's option)")
    args = p.parse_args(argv)
    for name, full, small in (("deals", 10_000, 300), ("repeats", 3, 1), ("rollouts", 50_000, 2000)):
        if getattr(args, name) is None:
            setattr(args, name, small if args.quick else full)
    args.no_install = args.no_install or args.quick  # a quick look installs nothing
    for name in ("deals", "repeats", "rollouts"):
        if getattr(args, name) < 1:
            p.error(f"--{name} must be at least 1")
    return args


def time_ours(deals: int, repeats: int, rollouts: int, seed: int) -> Ours:
    """Our figures with the build this process loaded."""
    import arena.engine
    from arena.engine import Ruleset

    check = min(deals, 2000)  # deals of the untimed work check
    coinche = Ruleset.from_spec("coinche")
    colver_rules = Ruleset.from_spec(COLVER_LIKE_SPEC)
    classic = Ruleset.from_spec("classic")
    rate = best_rate(lambda n: ours_deals(coinche, n, seed), deals, repeats)
    plain_rate = best_rate(lambda n: ours_deals(colver_rules, n, seed), deals, repeats)
    classic_rate = best_rate(lambda n: ours_deals(classic, n, seed), deals, repeats)
    base = rollout_position(seed)
    rollout_rate = best_rate(lambda n: ours_rollouts(base, n, seed), rollouts, repeats)
    return Ours(
        build=arena.engine.BUILD, build_note=arena.engine.BUILD_NOTE,
        coinche_deals_per_s=round(rate, 1),
        coinche_decisions_per_deal=round(ours_decisions(coinche, check, seed), 2),
        coinche_colver_rules_deals_per_s=round(plain_rate, 1),
        classic_deals_per_s=round(classic_rate, 1),
        rollouts_per_s=round(rollout_rate, 1),
    )


def time_pure_in_child(args: argparse.Namespace) -> Ours:
    """The pure build's figures: this script again in a child process, ``BELOTE_ENGINE=pure``."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--build", "pure", "--no-colver", "--json",
           "--deals", str(args.deals), "--repeats", str(args.repeats), "--rollouts", str(args.rollouts),
           "--seed", str(args.seed)]
    env = {**os.environ, "BELOTE_ENGINE": "pure"}
    proc = subprocess.run(cmd, cwd=ROOT, env=env, check=False, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"the pure build's child failed: {proc.stderr.strip()[-2000:]}")
    ours = json.loads(proc.stdout)["ours"]
    return Ours(**{f.name: ours[f.name] for f in fields(Ours)})


def run(args: argparse.Namespace) -> Results:
    import arena.engine

    deals, repeats, seed = args.deals, args.repeats, args.seed
    check = min(deals, 2000)  # deals of the untimed work checks

    version, missing = (None, "not timed (--no-colver)") if args.no_colver else colver_status(
        install=not args.no_install)
    colver_rate: float | None = None
    colver_dpd: float | None = None
    obs_s: float | None = None
    no_obs_rate: float | None = None
    if version is not None:
        colver_rate = best_rate(lambda n: colver_deals(n, seed), deals, repeats)
        colver_dpd, obs_s = colver_decisions(check, seed)
        rest = 1 / colver_rate - obs_s * colver_dpd
        no_obs_rate = 1 / rest if rest > 0 else None
    ours = time_ours(deals, repeats, args.rollouts, seed)
    compiled_missing = None if arena.engine.BUILD == "compiled" else arena.engine.BUILD_NOTE
    pure = time_pure_in_child(args) if args.build == "both" and ours.build == "compiled" else None

    def r(x: float | None, digits: int = 1) -> float | None:
        return None if x is None else round(x, digits)

    def ratio(o: Ours | None) -> None:
        if o is not None and colver_rate is not None:
            o.ratio_vs_colver = round(o.coinche_deals_per_s / colver_rate, 3)

    ratio(ours)
    ratio(pure)
    return Results(
        deals=deals, repeats=repeats, rollouts=args.rollouts, seed=seed,
        python=platform.python_version(), colver_version=version, colver_missing=missing or None,
        colver_deals_per_s=r(colver_rate),
        colver_decisions_per_deal=r(colver_dpd, 2),
        colver_observation_us=r(None if obs_s is None else obs_s * 1e6, 2),
        colver_without_observation_deals_per_s_estimate=r(no_obs_rate),
        rollout_cards_left=32 - ROLLOUT_CARDS_PLAYED,
        ours=ours, pure=pure, compiled_missing=compiled_missing,
        ratio_vs_colver=ours.ratio_vs_colver,
    )


def report(res: Results) -> None:
    def line(label: str, rate: float, unit: str, note: str) -> None:
        print(f"{label:<34}{rate:>10,.0f} {unit:<11}({note})")

    print(f"engine bench: {res.deals} deals per run, best of {res.repeats}, "
          f"seeds {res.seed}..{res.seed + res.deals - 1}, Python {res.python}, "
          f"colver {res.colver_version or 'MISSING'}")
    builds = [res.ours] if res.pure is None else [res.ours, res.pure]
    if res.compiled_missing is not None:
        print(f"{'compiled engine':<34}MISSING: {res.compiled_missing}; the figures are the pure build's")
    for o in builds:
        line(f"ours coinche, {o.build}", o.coinche_deals_per_s, "deals/s",
             f"{o.coinche_decisions_per_deal:.1f} decisions/deal; annonces, belote declared")
    if res.colver_deals_per_s is None:
        print(f"{'colver coinche':<34}MISSING: {res.colver_missing}; skipped")
    else:
        line("colver coinche", res.colver_deals_per_s, "deals/s",
             f"{res.colver_decisions_per_deal:.1f} decisions/deal; no annonces, belote automatic")
        if res.colver_without_observation_deals_per_s_estimate is not None:
            line("colver, minus observations", res.colver_without_observation_deals_per_s_estimate,
                 "deals/s", f"info, ESTIMATE: each step builds a 415-float observation, "
                 f"{res.colver_observation_us:.1f} us")
    for o in builds:
        line(f"ours colver's rules, {o.build}", o.coinche_colver_rules_deals_per_s, "deals/s",
             "info: annonces off, belote automatic")
    for o in builds:
        line(f"ours classic, {o.build}", o.classic_deals_per_s, "deals/s", "info")
    for o in builds:
        line(f"ours rollouts, {o.build}", o.rollouts_per_s, "rollouts/s",
             f"copy + random apply_unchecked, {res.rollout_cards_left} cards left")
    if res.pure is not None:
        print(f"compiled over pure: {res.ours.coinche_deals_per_s / res.pure.coinche_deals_per_s:.2f}x "
              f"coinche deals, {res.ours.rollouts_per_s / res.pure.rollouts_per_s:.2f}x rollouts")
        if res.pure.ratio_vs_colver is not None:
            print(f"pure build: ratio_vs_colver={res.pure.ratio_vs_colver:.2f} (info)")
    if res.ratio_vs_colver is None:
        print("ratio_vs_colver=n/a")
    else:
        verdict = "met" if res.ratio_vs_colver >= res.target_ratio else "NOT met"
        print(f"target ratio_vs_colver >= {res.target_ratio:g} ({res.ours.build} build): {verdict}")
        print(f"ratio_vs_colver={res.ratio_vs_colver:.2f}")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    # which build this process loads: set before the engine's first import (in run)
    os.environ["BELOTE_ENGINE"] = "pure" if args.build == "pure" else "compiled"
    with warnings.catch_warnings():
        # no compiled build: said in the report (compiled_missing), not as a warning
        warnings.simplefilter("ignore", RuntimeWarning)
        import arena.engine  # noqa: F401
    res = run(args)
    if args.json:
        print(json.dumps(asdict(res), indent=2))
    else:
        report(res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
