"""Ladder matchmaking: the games until the ranking is known, against random and round-robin pairing.

Usage (from the repository root)::

    python bench/ladder.py [--quick] [--bots N] [--spread S] [--seeds K] [--settle G] [--json]

``--quick`` is ``--seeds 1 --bots 12`` (about 2 s here): what ``tests/test_benches.py`` runs, every
part of the bench once; its figures are no measure (``--seeds 3`` took 17 CPU seconds).

The pool: ``--bots`` bots (30) of true strength drawn from N(1500, S), S ``--spread`` (200), on the
Elo scale, the simulated pool of the rating tests (:mod:`arena.ratings.simulation`: Bradley-Terry
outcomes, 10% of the games between equals drawn). The ladder plays in rounds: every bot has one
match's free seats (2), a round's pairings are made, played, and the Bradley-Terry fit of the pool is
made again.
Three ways to pair:

- ``matchmaking``: :func:`arena.ratings.matchmaking.pick` (default :class:`Rules`), its fairness
  state carried from round to round; it never picks a game whose result is known in advance but when a
  wait forces it (the share of such games is printed);
- ``random``: the bots shuffled and paired, a uniform random matching each round;
- ``round_robin``: the circle method, every pair once every ``bots - 1`` rounds.

Measured, per way and seed: the games played until, after a round, the fitted order has Spearman
>= 0.95 against the true strengths **and** the mean 95% interval is at most 100 Elo wide (±50); the
median over the seeds (``--seeds``, 9) is printed. Then the newcomer: a ladder of ``--bots`` bots
settled by ``--settle`` round-robin games per bot (300: every interval about ±43), a new bot of
strength drawn from the same N(1500, 200) joins; the games the newcomer plays until its own interval
is ±50, matchmaking against random pairing (medians over the seeds).

The last line is ``games_ratio_vs_random=R``: random pairing's median games to converge over
matchmaking's (the target is R >= 2). Before it, ``bound_ratio_vs_random``: what no pairing can beat,
1/4 (a game between equals) over the mean ``p (1 - p)`` of random pairs, the information of a game
(:func:`information_bound`); in the tests' pool (spread 200) it is about 1.5, so the target of 2 can
only be reached in pools spread wider (``--spread 400``: about 2.3).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent)]  # run from a checkout

from arena.ratings.bt import fit  # noqa: E402
from arena.ratings.counts import PairCount  # noqa: E402
from arena.ratings.matchmaking import Fairness, Rules, pick  # noqa: E402
from arena.ratings.simulation import bot_names, play_pairs, spearman  # noqa: E402

SPEARMAN = 0.95
MEAN_WIDTH = 100.0
NEWCOMER_HALF = 50.0
#: a run that has not converged by then stops (a way of pairing that never would)
MAX_GAMES_PER_BOT = 2_000
TARGET_RATIO = 2.0

Counts = dict[tuple[str, str], PairCount]
Pairing = Callable[[Counts], list[tuple[int, int]]]


# --------------------------------------------------------------------------- the ways of pairing
def matchmaking(bots: int, seed: int, rules: Rules | None = None) -> tuple[Pairing, dict[str, int]]:
    """The matchmaking's pairing, and the longest wait and repeat it showed (filled as it runs)."""
    names = bot_names(bots)
    index = {bot: i for i, bot in enumerate(names)}
    rng = random.Random(seed)
    state = {"fairness": Fairness()}
    seen = {"max_wait": 0, "max_picks": 0, "picks": 0, "known": 0}

    def pairing(counts: Counts) -> list[tuple[int, int]]:
        fairness = state["fairness"]
        result = pick(counts, {bot: 2 for bot in names}, fairness, rng, rules or Rules())
        state["fairness"] = result.fairness
        seen["max_wait"] = max([seen["max_wait"], *result.fairness.waited.values()])
        seen["max_picks"] = max(seen["max_picks"], len(result.picks))
        seen["picks"] += len(result.picks)
        seen["known"] += sum(p.why.known for p in result.picks)
        return [(index[p.a], index[p.b]) for p in result.picks]

    return pairing, seen


def random_pairing(bots: int, seed: int) -> Pairing:
    rng = np.random.default_rng(seed)

    def pairing(counts: Counts) -> list[tuple[int, int]]:
        order = rng.permutation(bots).tolist()
        return [(order[k], order[k + 1]) for k in range(0, bots - 1, 2)]

    return pairing


def round_robin(bots: int) -> Pairing:
    """The circle method: bot 0 stays, the others turn one place a round (with a bye for an odd count)."""
    ring = list(range(bots)) + ([-1] if bots % 2 else [])
    rounds = circle(ring)

    def pairing(counts: Counts) -> list[tuple[int, int]]:
        return next(rounds)

    return pairing


def circle(ring: list[int]) -> Iterator[list[tuple[int, int]]]:
    n = len(ring)
    while True:
        yield [(ring[k], ring[n - 1 - k]) for k in range(n // 2) if ring[k] >= 0 and ring[n - 1 - k] >= 0]
        ring = [ring[0], ring[-1], *ring[1:-1]]


# --------------------------------------------------------------------------- the runs
def converge(strengths: NDArray[np.float64], pairing: Pairing, rng: np.random.Generator) -> int:
    """Games played until the order and the intervals are known (see the module's docstring)."""
    counts: Counts = {}
    games = 0
    while games < MAX_GAMES_PER_BOT * len(strengths) // 2:
        pairs = pairing(counts)
        if not pairs:  # every pair open a known result and no wait pressing: it would never converge
            return MAX_GAMES_PER_BOT * len(strengths) // 2
        play_pairs(strengths, [a for a, _ in pairs], [b for _, b in pairs], rng, counts)
        games += len(pairs)
        result = fit(counts)
        if len(result.bots) < len(strengths):
            continue
        low, high = result.intervals()
        if float((high - low).mean()) <= MEAN_WIDTH and spearman(result.ratings, strengths) >= SPEARMAN:
            return games
    return games


def newcomer(strengths: NDArray[np.float64], settle: int, way: str, seed: int) -> int:
    """The newcomer's games until its interval is ±50, in a ladder settled by ``settle`` games a bot."""
    rng = np.random.default_rng(seed)
    bots = len(strengths) - 1  # the last one is the newcomer
    counts: Counts = {}
    rounds = round_robin(bots)
    for _ in range(settle):
        pairs = rounds(counts)
        play_pairs(strengths, [a for a, _ in pairs], [b for _, b in pairs], rng, counts)
    pairing = matchmaking(bots + 1, seed)[0] if way == "matchmaking" else random_pairing(bots + 1, seed)
    new = bot_names(bots + 1)[-1]
    played = 0
    while played < MAX_GAMES_PER_BOT:
        pairs = pairing(counts)
        play_pairs(strengths, [a for a, _ in pairs], [b for _, b in pairs], rng, counts)
        played += sum(bots in pair for pair in pairs)
        if played:
            low, high = fit(counts).interval(new)
            if (high - low) / 2 <= NEWCOMER_HALF:
                return played
    return played


def information_bound(strengths: NDArray[np.float64]) -> float:
    """1/4 over the mean ``p (1 - p)`` of the pool's pairs: a game's Fisher information is ``p (1 - p)``, at
    most 1/4 (equals), so no pairing needs fewer than this share of random pairing's games for the same
    intervals (fewer still can be reached: the strongest and weakest bots have no equal to play)."""
    gap = strengths[:, None] - strengths[None, :]
    p = 1.0 / (1.0 + 10.0 ** (-gap / 400.0))
    off = ~np.eye(len(strengths), dtype=bool)
    return float(0.25 / (p * (1.0 - p))[off].mean())


@dataclass
class Results:
    bots: int
    spread: float
    seeds: int
    settle: int
    games_matchmaking: list[int]
    games_random: list[int]
    games_round_robin: list[int]
    median_matchmaking: float
    median_random: float
    median_round_robin: float
    newcomer_matchmaking: list[int]
    newcomer_random: list[int]
    newcomer_median_matchmaking: float
    newcomer_median_random: float
    #: the most any pairing could gain over random: 1/4 over random pairs' mean p (1 - p), the
    #: information of a game (median over the pools)
    bound_ratio_vs_random: float
    #: the matchmaking's longest wait (picks in a row available without a game), over all its runs
    max_wait: int
    #: the share of the matchmaking's games whose result was known in advance (forced by a wait)
    known_share: float
    seconds: float
    games_ratio_vs_random: float
    games_ratio_vs_round_robin: float
    target_ratio: float = TARGET_RATIO


def run(args: argparse.Namespace) -> Results:
    t0 = time.perf_counter()
    mm: list[int] = []
    rnd: list[int] = []
    rr: list[int] = []
    new_mm: list[int] = []
    new_rnd: list[int] = []
    max_wait = 0
    picked = known = 0
    bounds: list[float] = []
    for seed in range(args.seeds):
        strengths = np.random.default_rng(1000 + seed).normal(1500.0, args.spread, args.bots)
        bounds.append(information_bound(strengths))
        pairing, seen = matchmaking(args.bots, seed)
        mm.append(converge(strengths, pairing, np.random.default_rng(seed)))
        max_wait = max(max_wait, seen["max_wait"])
        picked, known = picked + seen["picks"], known + seen["known"]
        rnd.append(converge(strengths, random_pairing(args.bots, seed), np.random.default_rng(seed)))
        rr.append(converge(strengths, round_robin(args.bots), np.random.default_rng(seed)))
        joined = np.random.default_rng(2000 + seed).normal(1500.0, args.spread, args.bots + 1)
        new_mm.append(newcomer(joined, args.settle, "matchmaking", seed))
        new_rnd.append(newcomer(joined, args.settle, "random", seed))
    med = statistics.median
    return Results(
        bots=args.bots, spread=args.spread, seeds=args.seeds, settle=args.settle,
        games_matchmaking=mm, games_random=rnd, games_round_robin=rr,
        median_matchmaking=med(mm), median_random=med(rnd), median_round_robin=med(rr),
        newcomer_matchmaking=new_mm, newcomer_random=new_rnd,
        newcomer_median_matchmaking=med(new_mm), newcomer_median_random=med(new_rnd),
        bound_ratio_vs_random=round(med(bounds), 2), max_wait=max_wait,
        known_share=round(known / picked, 4) if picked else 0.0,
        seconds=round(time.perf_counter() - t0, 1),
        games_ratio_vs_random=round(med(rnd) / med(mm), 2),
        games_ratio_vs_round_robin=round(med(rr) / med(mm), 2),
    )


def report(res: Results) -> None:
    print(f"ladder bench: {res.bots} bots of strength N(1500, {res.spread:g}), {res.seeds} seeds, "
          "one match a bot a round; "
          f"converged: Spearman >= {SPEARMAN} and mean 95% interval <= {MEAN_WIDTH:g} Elo ({res.seconds} s)")
    for label, games, median in (("matchmaking", res.games_matchmaking, res.median_matchmaking),
                                 ("random pairing", res.games_random, res.median_random),
                                 ("round-robin", res.games_round_robin, res.median_round_robin)):
        print(f"  {label:<16} median {median:>8,.0f} games  ({', '.join(f'{g:,}' for g in games)})")
    print(f"  matchmaking's longest wait: {res.max_wait} picks (bound {Rules().max_wait}); "
          f"{res.known_share:.2%} of its games a known result (forced by a wait)")
    print(f"newcomer in a ladder of {res.bots} settled by {res.settle} games a bot, "
          f"its games to ±{NEWCOMER_HALF:g}:")
    print(f"  matchmaking      median {res.newcomer_median_matchmaking:>8,.0f}  "
          f"({', '.join(map(str, res.newcomer_matchmaking))})")
    print(f"  random pairing   median {res.newcomer_median_random:>8,.0f}  "
          f"({', '.join(map(str, res.newcomer_random))})")
    print(f"  information bound: no pairing beats random by more than {res.bound_ratio_vs_random:.2f} "
          "(a game between equals is worth 1/4, random pairs' games their mean p (1 - p))")
    verdict = "met" if res.games_ratio_vs_random >= res.target_ratio else "NOT met"
    print(f"target games_ratio_vs_random >= {res.target_ratio:g}: {verdict}")
    print(f"newcomer_games_matchmaking={res.newcomer_median_matchmaking:g}")
    print(f"newcomer_games_random={res.newcomer_median_random:g}")
    print(f"games_matchmaking={res.median_matchmaking:g}")
    print(f"games_random={res.median_random:g}")
    print(f"games_round_robin={res.median_round_robin:g}")
    print(f"bound_ratio_vs_random={res.bound_ratio_vs_random:.2f}")
    print(f"games_ratio_vs_round_robin={res.games_ratio_vs_round_robin:.2f}")
    print(f"games_ratio_vs_random={res.games_ratio_vs_random:.2f}")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--quick", action="store_true", help="--seeds 1 --bots 12 (what CI runs)")
    p.add_argument("--bots", type=int, default=None, help="bots in the pool (30)")
    p.add_argument("--spread", type=float, default=200.0,
                   help="the standard deviation of the true strengths, Elo (200, as the rating tests)")
    p.add_argument("--seeds", type=int, default=None, help="pools and runs, the medians over them (9)")
    p.add_argument("--settle", type=int, default=300, help="round-robin games a bot, then the newcomer (300)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    args = p.parse_args(argv)
    if args.seeds is None:
        args.seeds = 1 if args.quick else 9
    if args.bots is None:
        args.bots = 12 if args.quick else 30
    for name, least in (("bots", 3), ("seeds", 1), ("settle", 1), ("spread", 0)):
        if getattr(args, name) < least:
            p.error(f"--{name} must be at least {least}")
    return args


def main(argv: list[str] | None = None) -> int:
    res = run(parse_args(argv))
    if "--json" in (argv if argv is not None else sys.argv[1:]):
        print(json.dumps(asdict(res), indent=2))
    else:
        report(res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
