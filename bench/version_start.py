"""Where a newly promoted version starts: its row's rating and interval, inherited or from scratch.

Usage (from the repository root)::

    python bench/version_start.py [--quick] [--runs N] [--seed S] [--json]

``--quick`` is ``--runs 15`` (a few seconds): what ``tests/test_benches.py`` runs.

The pool (:mod:`arena.ratings.simulation`'s model: Bradley-Terry outcomes, 10% of the games between
equals drawn): 12 bots of true strength drawn from N(1500, 200), each playing about 150 games
against random opponents; one of them, the *hero*, plays them as its version 1. Then its version 2
is promoted, of true strength version 1's plus a step drawn from a scenario:

- ``patch``: a step uniform in [0, +60] Elo (what an SPRT at H1 = 30 promotes);
- ``same``: 0 (a new label on the same bot);
- ``worse``: -100 (a version promoted by hand that is worse);
- ``rewrite+`` and ``rewrite-``: +400 and -400 (a new bot under the old name).

Version 2 then plays ``k`` games (0, 5, 20, 50, 200) against random opponents while the pool goes on,
and its leaderboard row (:class:`arena.ratings.leaderboard.PoolFit`, the code the arena runs) is
read under each start rule:

- ``inherit`` (the arena's: :data:`arena.ratings.versions.STEP_SD`, 200 Elo), and ``inherit/2`` and
  ``inherit*2`` (the link's standard deviation halved and doubled);
- ``scratch``: version 2 a new player, its own games only (the fit's usual prior of two draws at
  1500); with no game it has no rating of its own (1500, no interval: the row is counted as
  missing its truth).

Measured per scenario, rule and ``k``, over ``--runs`` runs: the **coverage** of the row's 95%
interval (the fraction of runs where version 2's true strength, relative to the mean of the other
bots', lies in it; relative, as the fit anchors the pool's mean) and the **error** (root mean square,
Elo) of its rating. The honest rule covers the truth about 95% of the time wherever a bot author
expects a version to land (a patch, the same bot, a worse one), and from scratch is off by the
hero's distance from the mean until its games come.

The last line is ``inherit_worst_coverage=C``: the lowest coverage of the arena's rule over the
three common scenarios and every ``k`` (the target is C >= 0.90 on ``--runs 400``; a rewrite of
±400 Elo is outside the link's prior and is covered only once its own games come: printed above).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE)]  # run from a checkout

from arena.ratings.counts import PairCount, add_game  # noqa: E402
from arena.ratings.leaderboard import PoolFit  # noqa: E402
from arena.ratings.simulation import DRAW_RATE  # noqa: E402
from arena.ratings.versions import STEP_SD, VersionCounts  # noqa: E402
from arena.ratings.versions import add_game as add_version_game  # noqa: E402

BOTS = 12
GAMES_PER_BOT = 150
KS = (0, 5, 20, 50, 200)
SCENARIOS = {"patch": (0.0, 60.0), "same": (0.0, 0.0), "worse": (-100.0, -100.0),
             "rewrite+": (400.0, 400.0), "rewrite-": (-400.0, -400.0)}
COMMON = ("patch", "same", "worse")
RULES = {"inherit": STEP_SD, "inherit/2": STEP_SD / 2, "inherit*2": STEP_SD * 2, "scratch": 0.0}


class Pool:
    def __init__(self, strengths: dict[str, float], rng: np.random.Generator) -> None:
        self.strengths = strengths
        self.rng = rng
        self.bots: dict[tuple[str, str], PairCount] = {}
        self.games: dict[str, dict[str, PairCount]] = {}
        self.order: dict[str, tuple[str, ...]] = {}

    def game(self, a: str, b: str, strength_a: float, version_a: str) -> None:
        p = 1.0 / (1.0 + 10.0 ** ((self.strengths[b] - strength_a) / 400.0))
        draw = 2.0 * DRAW_RATE * min(p, 1.0 - p)
        u = self.rng.random()
        score = 1.0 if u < p - draw / 2 else 0.5 if u < p + draw / 2 else 0.0
        add_game(self.bots, a, b, score)
        add_version_game(self.games, self.order, a, b, score, (f"{a}@{version_a}" if version_a else a, b))

    def round(self, hero: str, hero_strength: float, version: str, hero_games: int) -> None:
        """The others' games among themselves (about as many a bot as the hero's), and the hero's."""
        others = [b for b in self.strengths if b != hero]
        for _ in range(hero_games * (len(others) - 1) // 2):
            a, b = self.rng.choice(others, 2, replace=False)
            self.game(str(a), str(b), self.strengths[str(a)], "")
        for _ in range(hero_games):
            self.game(hero, str(self.rng.choice(others)), hero_strength, version)


def one_run(rng: np.random.Generator, step: tuple[float, float]) -> dict[str, dict[int, tuple[bool, float]]]:
    """One hero's promotion: for each rule and k, (its interval covers the truth, its rating's error)."""
    names = [f"b{i:02d}" for i in range(BOTS)]
    strengths = dict(zip(names, rng.normal(1500.0, 200.0, BOTS).tolist(), strict=True))
    hero = names[0]
    pool = Pool(strengths, rng)
    pool.round(hero, strengths[hero], "1", GAMES_PER_BOT)
    new_strength = strengths[hero] + float(rng.uniform(*step))
    others = names[1:]
    truth = new_strength - float(np.mean([strengths[b] for b in others]))
    out: dict[str, dict[int, tuple[bool, float]]] = {rule: {} for rule in RULES}
    played = 0
    for k in KS:
        pool.round(hero, new_strength, "2", k - played)
        played = k
        versions = VersionCounts({p: dict(row) for p, row in pool.games.items()}, dict(pool.order))
        for rule, sd in RULES.items():
            fit = PoolFit(dict(pool.bots), versions, step_sd=sd)
            row = fit.shown(hero, "2")
            mean = float(np.mean([fit.shown(b, "").rating for b in others]))
            low, high = row.interval()
            rating = row.rating - mean
            covered = low is not None and high is not None and low - mean <= truth <= high - mean
            out[rule][k] = (covered, rating - truth)
    return out


def measure(runs: int, seed: int) -> dict[str, dict[str, dict[int, tuple[float, float]]]]:
    """Per scenario, rule and k: (coverage, root mean square error)."""
    rng = np.random.default_rng(seed)
    results: dict[str, dict[str, dict[int, tuple[float, float]]]] = {}
    for scenario, step in SCENARIOS.items():
        runs_out = [one_run(rng, step) for _ in range(runs)]
        results[scenario] = {
            rule: {k: (sum(r[rule][k][0] for r in runs_out) / runs,
                       math.sqrt(sum(r[rule][k][1] ** 2 for r in runs_out) / runs)) for k in KS}
            for rule in RULES}
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="--runs 15")
    parser.add_argument("--runs", type=int, default=None, help="runs per scenario (400)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true", help="the figures as JSON, then the last line")
    args = parser.parse_args()
    runs = args.runs or (15 if args.quick else 400)
    results = measure(runs, args.seed)
    if args.json:
        print(json.dumps({s: {r: {str(k): v for k, v in ks.items()} for r, ks in rules.items()}
                          for s, rules in results.items()}))
    else:
        print(f"{runs} runs a scenario; coverage of the 95% interval / RMS error (Elo) of version 2's row "
              f"after k of its games")
        print(f"{'scenario':10} {'rule':11} " + " ".join(f"{'k=' + str(k):>13}" for k in KS))
        for scenario, rules in results.items():
            for rule, ks in rules.items():
                cells = " ".join(f"{c:5.2f} / {e:5.0f}" for c, e in ks.values())
                print(f"{scenario:10} {rule:11} {cells}")
    worst = min(results[s]["inherit"][k][0] for s in COMMON for k in KS)
    print(f"inherit_worst_coverage={worst:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
