"""The double-dummy solver's speed: the time to solve a whole deal from its first card.

Usage (from the repository root)::

    python bench/analysis.py [--quick] [--deals N] [--seed S] [--build both|compiled|pure]
                             [--reference-deals K] [--from-card C] [--ablation] [--no-build] [--json]

``--quick`` (what CI runs: ``tests/test_benches.py``) is ``--deals 3 --reference-deals 2
--from-card 4`` (from the second trick) and never builds: options given with it win.

The deals: for each of ``coinche`` and ``classic``, N deals played: deal ``i`` = 0, 1, ... is the
engine's seeded deal ``deal_from_rng(rules, i % 4, deal_rng(seed, i))``, bid by the built-in
heuristic bot at the four seats (a thrown-in deal is skipped, and counted). Timed, per deal, in
CPU time of the process (so that other load on the machine does not count): ``solve`` of the
position before the first card, with a fresh solver (no table from an earlier deal).

Two builds (``arena.analysis.BUILD``): the compiled one (the engine's mypyc build, which compiles
arena/analysis too) and the pure one. One process holds one of them, so by default (``--build
both``) this process runs itself twice, with ``BELOTE_ENGINE=compiled`` then ``pure``, after
building the compiled one with ``scripts/build_engine.py`` when it is not built (``--no-build``:
not; without a C compiler the compiled figures are ``n/a`` and the bench says why).

The reference, measured in the same run on the first ``--reference-deals`` deals of each preset:
the plain alpha-beta of the issue's prototype (fail-soft on the takers' points, one full window,
the transposition table at tricks' starts, equivalent cards, move ordering), without what the
solver adds on top (null-window probes of the margin, bisecting between its plateaus, and the
bound on the points left). ``ratio_vs_reference``: the reference's median time
over the solver's on those deals (higher is better). ``--ablation`` also times the solver with
each of its speed-ups off in turn (``docs/analysis.md``'s table), on the reference's deals (each
variant, and the reference, for ``--cap`` CPU seconds a preset at most: then on the deals so far).

The last line is ``dd_solve_ms_median=<the compiled build's median, ms, over both presets' deals>``
(``n/a`` without a compiled build).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PRESETS = ("coinche", "classic")
#: the solver's switches, each off in turn with --ablation (and all but the table off: the reference)
SWITCHES = ("probes", "equivalent", "ordering", "bounds", "quick", "etc", "table")
REFERENCE = {"probes": False, "bounds": False}


def deals(preset: str, count: int, seed: int, from_card: int = 0) -> tuple[list[Any], int]:
    """``count`` deals of ``preset`` bid by the heuristic bot, before their first card; and how many
    were thrown in on the way (skipped)."""
    from arena.engine import PRESETS as RULES
    from arena.engine import deal_from_rng, deal_rng, observe
    from arena.engine.bots import HeuristicPlayer
    from arena.engine.deal import PLAY

    out: list[Any] = []
    thrown = 0
    player = HeuristicPlayer()
    i = 0
    while len(out) < count:
        deal = deal_from_rng(RULES[preset], i % 4, deal_rng(f"analysis-bench/{seed}/{preset}", i))
        rng = random.Random(i)
        while deal.phase is not PLAY and not deal.is_over:
            deal.apply(player.act(observe(deal, deal.to_act), rng))
        if deal.is_over:
            thrown += 1
        else:
            for _ in range(from_card):
                deal.apply(player.act(observe(deal, deal.to_act), rng))
            out.append(deal)
        i += 1
    return out, thrown


def timed(deal: Any, options: dict[str, bool]) -> tuple[float, int, int]:
    """(seconds, nodes, value) of solving ``deal`` from its first card with a fresh solver."""
    from arena.analysis import Position, Solver, solve

    solver = Solver(deal, **options)
    pos = Position.from_deal(deal, solver)
    t0 = time.process_time()
    value = solve(pos)
    return time.process_time() - t0, solver.search.nodes, value


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def measure(args: argparse.Namespace) -> dict[str, Any]:
    """This process's build: every figure, as a dict (what a child prints with --json)."""
    import arena.analysis

    out: dict[str, Any] = {"build": arena.analysis.BUILD, "note": arena.analysis.BUILD_NOTE, "presets": {}}
    variants: dict[str, dict[str, bool]] = {"reference": REFERENCE}
    if args.ablation:
        variants.update({f"no_{s}": {s: False} for s in SWITCHES})
    all_times: list[float] = []
    for preset in PRESETS:
        ds, thrown = deals(preset, args.deals, args.seed, args.from_card)
        times, nodes, values = [], [], []
        for deal in ds:
            seconds, n, v = timed(deal, {})
            times.append(seconds)
            nodes.append(n)
            values.append(v)
        all_times += times
        entry: dict[str, Any] = {
            "deals": len(ds), "thrown_in": thrown, "median_ms": 1000 * statistics.median(times),
            "p95_ms": 1000 * p95(times), "max_ms": 1000 * max(times),
            "nodes_median": statistics.median(nodes),
        }
        k = min(args.reference_deals, len(ds))
        for name, options in variants.items():
            count = k
            ts, ns = [], []
            for i, deal in enumerate(ds[:count]):
                seconds, n, v = timed(deal, options)
                if v != values[i]:
                    raise SystemExit(f"{name} found {v} on {preset} deal {i}, the solver {values[i]}")
                ts.append(seconds)
                ns.append(n)
                if sum(ts) > args.cap:  # a speed-up off can cost minutes a deal: the deals so far
                    break
            count = len(ts)
            entry[name] = {"deals": count, "median_ms": 1000 * statistics.median(ts),
                           "solver_median_ms": 1000 * statistics.median(times[:count]),
                           "nodes_median": statistics.median(ns), "p95_ms": 1000 * p95(ts)}
        out["presets"][preset] = entry
    out["median_ms"] = 1000 * statistics.median(all_times)
    out["p95_ms"] = 1000 * p95(all_times)
    ref = [out["presets"][p]["reference"] for p in PRESETS]
    out["ratio_vs_reference"] = (statistics.mean(r["median_ms"] for r in ref)
                                 / statistics.mean(r["solver_median_ms"] for r in ref))
    return out


def child(build: str, args: argparse.Namespace) -> dict[str, Any] | str:
    """The figures of ``build`` from a child process (or why there are none)."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--build", build, "--json",
           "--deals", str(args.deals), "--seed", str(args.seed), "--from-card", str(args.from_card),
           "--reference-deals", str(args.reference_deals), "--cap", str(args.cap)]
    if args.ablation:
        cmd.append("--ablation")
    env = {**os.environ, "BELOTE_ENGINE": build}
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    if proc.returncode:
        return f"the {build} run failed: {proc.stderr.strip()[-2000:]}"
    result: dict[str, Any] = json.loads(proc.stdout)
    if result["build"] != build:
        return f"no {build} build: {result['note']}"
    return result


def ensure_compiled(no_build: bool) -> str | None:
    """None when the compiled build is there (built now if need be), else why not."""
    check = subprocess.run([sys.executable, "-c", "import arena.analysis as a; print(a.BUILD)"], cwd=ROOT,
                           env={**os.environ, "BELOTE_ENGINE": "auto"}, capture_output=True, text=True,
                           check=False)
    if check.stdout.strip() == "compiled":
        return None
    if no_build:
        return "the compiled build is not built (--no-build)"
    print("building the compiled engine and analysis (scripts/build_engine.py) ...", flush=True)
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "build_engine.py")], cwd=ROOT,
                          capture_output=True, text=True, check=False)
    if proc.returncode:
        return f"the compiled build failed: {(proc.stderr or proc.stdout).strip()[-500:]}"
    return None


def report(results: dict[str, dict[str, Any] | str]) -> None:
    print(f"{'build':9} {'preset':8} {'deals':>5} {'median ms':>10} {'p95 ms':>9} {'max ms':>9} "
          f"{'nodes':>9} {'ref ms':>9} {'vs ref':>7}")
    for build, result in results.items():
        if isinstance(result, str):
            print(f"{build:9} unavailable: {result}")
            continue
        for preset, e in result["presets"].items():
            r = e["reference"]
            print(f"{build:9} {preset:8} {e['deals']:5} {e['median_ms']:10.1f} {e['p95_ms']:9.1f} "
                  f"{e['max_ms']:9.1f} {e['nodes_median']:9.0f} {r['median_ms']:9.1f} "
                  f"{r['median_ms'] / r['solver_median_ms']:7.2f}")
        for preset, e in result["presets"].items():
            for name, v in e.items():
                if name.startswith("no_"):
                    print(f"{build:9} {preset:8} {name:14} median {v['median_ms']:8.1f} ms  p95 "
                          f"{v['p95_ms']:8.1f} ms  nodes {v['nodes_median']:9.0f}  "
                          f"x{v['median_ms'] / v['solver_median_ms']:.2f} the solver's time")
    for build, result in results.items():
        if not isinstance(result, str):
            print(f"dd_solve_ms_median_{build}={result['median_ms']:.1f}")
            print(f"dd_solve_ms_p95_{build}={result['p95_ms']:.1f}")
            print(f"ratio_vs_reference_{build}={result['ratio_vs_reference']:.2f}")
    compiled = results.get("compiled")
    print(f"dd_solve_ms_median={compiled['median_ms']:.1f}" if isinstance(compiled, dict)
          else "dd_solve_ms_median=n/a")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--quick", action="store_true", help="a few deals, no build (what CI runs)")
    p.add_argument("--deals", type=int, default=None, help="deals dealt per preset (default 40)")
    p.add_argument("--reference-deals", type=int, default=None, help="of them, timed for the reference (10)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--from-card", type=int, default=None,
                   help="solve after this many cards, played by the heuristic bot (default 0: the first)")
    p.add_argument("--build", choices=("both", "compiled", "pure"), default="both")
    p.add_argument("--ablation", action="store_true", help="time the solver with each speed-up off")
    p.add_argument("--cap", type=float, default=120.0,
                   help="CPU seconds a variant is timed for at most, per preset (then on the deals so far)")
    p.add_argument("--no-build", action="store_true", help="do not build the compiled build if missing")
    p.add_argument("--json", action="store_true", help="this process's figures as JSON (one build)")
    args = p.parse_args(argv)
    if args.deals is None:
        args.deals = 3 if args.quick else 40
    if args.reference_deals is None:
        args.reference_deals = 2 if args.quick else 10
    if args.from_card is None:
        args.from_card = 4 if args.quick else 0
    if args.build != "both":
        result = measure(args)
        if args.json:
            print(json.dumps(result))
        else:
            report({result["build"]: result})
        return 0
    results: dict[str, dict[str, Any] | str] = {}
    why = ensure_compiled(args.no_build or args.quick)
    results["compiled"] = why if why is not None else child("compiled", args)
    results["pure"] = child("pure", args)
    report(results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
