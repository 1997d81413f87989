"""Leaderboard time: the Bradley-Terry leaderboard of one pool of 1,000 bots and 1,000,000 results.

Usage (from the repository root)::

    python bench/ratings.py [--quick] [--bots N] [--results M] [--repeats K] [--seed S] [--readers R]
                            [--api-seconds T] [--json]

``--quick`` is ``--bots 50 --results 5000 --repeats 1 --readers 3 --api-seconds 1``, a few seconds:
what ``tests/ratings/test_bench.py`` runs (options given with it win).

The pool (untimed): ``--bots`` bots of true strength drawn from N(1500, 200) on the Elo
scale play ``--results`` games between pairs drawn at random (``numpy`` Generator seeded
with ``--seed``), each game's expected score the Bradley-Terry probability, 10% of games
between equals drawn (fewer as the gap grows); the results are kept as the store keeps
them, one :class:`~arena.ratings.counts.PairCount` per pair (1,000,000 results over
1,000 bots touch about 432,000 of the 499,500 pairs). The online Elo the leaderboard also
takes is a stand-in (the true strengths): only the ``elo`` method reads it.

What is timed (``time.perf_counter``, one warm-up, then the best of ``--repeats``)::

    leaderboard(counts, elo, pool="bench", method="bt", limit=bots)   # every bot on one page

that is: the counts into arrays, the Newton fit, the covariance (a bots x bots inverse),
the 95% intervals, the LOS between neighbours and the entries. For information also: the
arrays alone, the fit alone, and ``method="elo"`` (no fit). The reference, measured in
the same run, is one plain-Python pass over the counts
(``sum(c.games for c in counts.values())``); the last line is
``ratio_vs_sum=R``, the leaderboard's time in such passes. Untimed check: the Spearman
correlation between the fitted order and the true strengths.

Target: ``leaderboard_s`` under 1 s at the default size.

Then (``--readers``, 50 by default; 0 skips it) the readers of one node's web
pages and JSON API while it plays a tournament (:mod:`web_readers`): ``--readers``
readers at once for ``--api-seconds``, each going round the leaderboard, the bots,
the tournament and the page, against one reader alone in the same run. It prints
``api_p99_ms=`` and ``api_ratio_vs_one_reader=``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE)]  # run from a checkout

from arena.ratings.bt import PairArrays, fit_arrays  # noqa: E402
from arena.ratings.leaderboard import leaderboard  # noqa: E402
from arena.ratings.simulation import bot_names, play_games  # noqa: E402

TARGET_S = 1.0


# --------------------------------------------------------------------------- the pool
# the pool's games are the simulated leagues' of the rating tests (arena/ratings/simulation.py)
pool_counts = play_games


def spearman(x: NDArray[np.float64], y: NDArray[np.float64]) -> float:
    rx, ry = np.argsort(np.argsort(x)), np.argsort(np.argsort(y))
    return float(np.corrcoef(rx, ry)[0, 1])


def best_time(run: Callable[[], object], repeats: int) -> float:
    """Seconds of the fastest of ``repeats`` runs, after one warm-up."""
    run()
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - t0)
    return best


# --------------------------------------------------------------------------- main
@dataclass
class Results:
    bots: int
    results: int
    pairs: int
    repeats: int
    seed: int
    python: str
    numpy: str
    #: the timed call: the whole bt leaderboard, every bot on one page
    leaderboard_s: float
    arrays_s: float
    fit_s: float
    elo_leaderboard_s: float
    #: the reference: one plain-Python pass summing the counts' games
    sum_s: float
    spearman_vs_true: float
    ratio_vs_sum: float
    target_s: float = TARGET_S


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--quick", action="store_true",
                   help="--bots 50 --results 5000 --repeats 1 --readers 3 --api-seconds 1 (what CI runs)")
    p.add_argument("--bots", type=int, default=None, help="bots in the pool (1000)")
    p.add_argument("--results", type=int, default=None, help="games played in the pool (1000000)")
    p.add_argument("--repeats", type=int, default=None, help="timed runs per measure, best kept (3)")
    p.add_argument("--seed", type=int, default=0, help="the schedule's and results' seed (0)")
    p.add_argument("--readers", type=int, default=None,
                   help="web readers at once during a tournament (50; 0: none)")
    p.add_argument("--api-seconds", type=float, default=None, help="how long they read (10)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    args = p.parse_args(argv)
    for name, full, small in (("bots", 1_000, 50), ("results", 1_000_000, 5000), ("repeats", 3, 1),
                              ("readers", 50, 3), ("api_seconds", 10.0, 1.0)):
        if getattr(args, name) is None:
            setattr(args, name, small if args.quick else full)
    if args.readers < 0 or not args.api_seconds > 0:
        p.error("--readers must be 0 or more and --api-seconds more than 0")
    for name, least in (("bots", 2), ("results", 1), ("repeats", 1)):
        if getattr(args, name) < least:
            p.error(f"--{name} must be at least {least}")
    return args


def run(args: argparse.Namespace) -> Results:
    rng = np.random.default_rng(args.seed)
    strengths = rng.normal(1500.0, 200.0, args.bots)
    counts = pool_counts(strengths, args.results, rng)
    elo = {bot: (float(s), 0) for bot, s in zip(bot_names(args.bots), strengths.tolist(), strict=True)}
    n = args.bots

    board_s = best_time(lambda: leaderboard(counts, elo, pool="bench", method="bt", limit=n), args.repeats)
    arrays_s = best_time(lambda: PairArrays.from_counts(counts), args.repeats)
    pairs = PairArrays.from_counts(counts)
    fit_s = best_time(lambda: fit_arrays(pairs), args.repeats)
    elo_s = best_time(lambda: leaderboard(counts, elo, pool="bench", method="elo", limit=n), args.repeats)
    sum_s = best_time(lambda: sum(c.games for c in counts.values()), args.repeats)

    board = leaderboard(counts, elo, pool="bench", method="bt", limit=n)
    fitted = {e.bot: e.rating for e in board.entries}
    truth = dict(zip(bot_names(n), strengths.tolist(), strict=True))
    played = sorted(fitted)
    rho = spearman(np.array([fitted[b] for b in played]), np.array([truth[b] for b in played]))
    return Results(
        bots=n, results=args.results, pairs=len(counts), repeats=args.repeats, seed=args.seed,
        python=platform.python_version(), numpy=np.__version__,
        leaderboard_s=round(board_s, 4), arrays_s=round(arrays_s, 4), fit_s=round(fit_s, 4),
        elo_leaderboard_s=round(elo_s, 4), sum_s=round(sum_s, 5), spearman_vs_true=round(rho, 4),
        ratio_vs_sum=round(board_s / sum_s, 2),
    )


def report(res: Results) -> None:
    def line(label: str, seconds: float, note: str) -> None:
        print(f"{label:<28}{seconds * 1000:>10,.1f} ms  ({note})")

    print(f"ratings bench: {res.bots} bots, {res.results:,} results over {res.pairs:,} pairs, "
          f"best of {res.repeats}, seed {res.seed}, Python {res.python}, numpy {res.numpy}")
    line("leaderboard, bt", res.leaderboard_s, f"all {res.bots} bots on one page: fit, intervals, LOS")
    line("  counts into arrays", res.arrays_s, "info")
    line("  Bradley-Terry fit", res.fit_s, "info: Newton steps and the covariance")
    line("leaderboard, elo", res.elo_leaderboard_s, "info: no fit")
    line("sum of the counts", res.sum_s, "reference: one plain-Python pass")
    print(f"spearman_vs_true={res.spearman_vs_true:.4f}")
    verdict = "met" if res.leaderboard_s < res.target_s else "NOT met"
    print(f"target leaderboard_s < {res.target_s:g}: {verdict}")
    print(f"leaderboard_s={res.leaderboard_s:.3f}")
    print(f"ratio_vs_sum={res.ratio_vs_sum:.1f}")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    res = run(args)
    api: dict[str, Any] = {}
    if args.readers:
        from web_readers import measure

        api = asyncio.run(measure(args.readers, args.api_seconds))
    if args.json:
        print(json.dumps({**asdict(res), **api}, indent=2))
        return 0
    report(res)
    if api:
        print(f"web readers: {api['readers']:.0f} at once during a tournament ({api['matches_during']:.0f} "
              f"matches played), {api['requests']:.0f} requests, {api['errors']:.0f} errors; "
              f"p50 {api['api_p50_ms']} ms; one reader alone: p99 {api['one_reader_p99_ms']} ms")
        for path, ms in api["p99_ms_by_path"].items():
            print(f"  p99 {ms:>9.2f} ms  GET {path}")
        print(f"api_p99_ms={api['api_p99_ms']}")
        print(f"api_ratio_vs_one_reader={api['ratio_vs_one_reader']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
