"""Decisions: how well each judge of a card tells the built-in bots apart, and what an analysis costs.

Usage (from the repository root)::

    python bench/decisions.py [--matches N] [--deals D] [--samples S] [--seed SEED] [--quick]

Plays ``N`` coinche matches of ``D`` deals, the heuristic bot (team 0) against the random bot
(team 1), in-process on the engine, and analyses each (:func:`arena.analysis.decisions.analyse`,
without par: the bidding is not what is judged here). Each bot's mean loss a decision is then
measured by the two judges of docs/analysis.md:

* **double-dummy**: the points its card lost against the best card, all hands seen;
* **second opinion**: the points its card lost by the search bot's evaluation on the bot's own
  information (``S`` sampled hands a decision).

Printed per judge: each bot's loss a decision over all matches, its share of decisions losing 10
points or more, the standard deviation of the per-match loss, the *separation* (the random bot's
mean less the heuristic's, over their pooled per-match standard deviation: how many standard
deviations one match's figures put between the two bots) and the share of matches in which the
judge ranks the random bot below the heuristic. The issue measured, with a prototype over 10
matches of 8 deals, double-dummy losses of 4.33 (heuristic) and 4.88 (random) points a decision and
per-match standard deviations of 1.0 to 1.4: one match does not tell the two apart.

Cost, in CPU seconds of this process (a shared machine's load does not count): the median and
largest seconds of one match's analysis and of one deal's, and the ratio of a
deal's analysis to the double-dummy solve of its first card (the reference, measured in the same
run); then one match analysed as the node does by default (par solved too). The last line is
``separation_second_vs_dd=R``: the second opinion's separation over the double-dummy's, heuristic
against careless (above 1: the second opinion tells the bots apart better).

``--quick``: 2 matches of 1 deal, 8 samples, seed 3 (unless given), the match with par of 1 deal. A
deal's double-dummy solves cost 0.05 to 10 CPU seconds and its par up to 25 (seed 0's matches took 45
CPU seconds); seed 3's deals are among the cheap ones and the careless bot's separations are numbers
(with one deal a match, another seed may give ``n/a``). Its figures are no measure: it checks that
every part runs.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from arena.analysis import Position, solve
from arena.analysis.decisions import Settings, analyse
from arena.engine import BUILD, PRESETS, Match, match_record
from arena.engine.actions import BID
from arena.engine.bots import HeuristicPlayer, Player, RandomPlayer
from arena.engine.observation import Observation, observe
from arena.engine.record import deal_from_record


class CarelessPlayer:
    """The heuristic's bids, then any legal card: sound contracts, random play."""

    name = "careless"

    def act(self, obs: Observation, rng: random.Random) -> int:
        if obs.legal_actions[0] >= BID:
            return HEURISTIC.act(obs, rng)
        return rng.choice(obs.legal_actions)


HEURISTIC = HeuristicPlayer()
WEAK: dict[str, Player] = {"random": RandomPlayer(), "careless": CarelessPlayer()}


def played(seed: str, deals: int, weak: str) -> dict[str, Any]:
    rules = PRESETS["coinche"].with_options(deals=deals)
    players: list[Player] = [HEURISTIC, WEAK[weak], HEURISTIC, WEAK[weak]]
    match = Match(rules, seed=seed)
    rng = random.Random(seed)
    while not match.is_over:
        deal = match.new_deal()
        while not deal.is_over:
            deal.apply(players[deal.to_act].act(observe(deal, deal.to_act), rng))
        match.add(deal)
    return match_record(match, ["heuristic", weak, "heuristic", weak])


def first_solve_s(record: dict[str, Any]) -> list[float]:
    """Seconds of a double-dummy solve of each played deal from its first card (the reference)."""
    rules = PRESETS["coinche"]
    out = []
    for rec in record["deals"]:
        deal = deal_from_record({k: v for k, v in rec.items() if k != "plays"}, rules)
        if deal.is_over:
            continue
        started = time.process_time()
        solve(Position.from_deal(deal))
        out.append(time.process_time() - started)
    return out


def row(weak: str, args: argparse.Namespace, settings: Settings, match_s: list[float], deal_s: list[float],
        ratios: list[float], separation: dict[tuple[str, str], float]) -> None:
    """The heuristic bot against ``weak``: each judge's figures (module docstring)."""
    per_match: dict[str, dict[str, list[float]]] = {j: {"heuristic": [], weak: []} for j in ("dd", "second")}
    losses: dict[str, dict[str, list[float]]] = {j: {"heuristic": [], weak: []} for j in ("dd", "second")}
    for m in range(args.matches):
        record = played(f"decisions/{args.seed}/{m}", args.deals, weak)
        started = time.process_time()
        a = analyse(record, settings=settings)
        spent = time.process_time() - started
        played_deals = [d for d in a["deals"] if not d["thrown_in"]]
        match_s.append(spent)
        reference = first_solve_s(record)
        if played_deals:
            deal_s.append(spent / len(played_deals))
            if reference:
                ratios.append((spent / len(played_deals)) / statistics.mean(reference))
        for judge in ("dd", "second"):
            mine: dict[str, list[float]] = {"heuristic": [], weak: []}
            for d in played_deals:
                for c in d["cards"]:
                    if "value" not in c:
                        continue
                    bot = a["players"][c["seat"]]
                    loss = c["loss"] if judge == "dd" else c.get("second_opinion", {}).get("loss")
                    if loss is not None:
                        mine[bot].append(float(loss))
            for bot, xs in mine.items():
                losses[judge][bot] += xs
                if xs:
                    per_match[judge][bot].append(statistics.mean(xs))
        print(f"{weak} match {m + 1}: {len(played_deals)} deals played, analysed in {spent:.1f} s",
              flush=True)
    for judge, name in (("dd", "double-dummy"), ("second", "second opinion")):
        print(f"heuristic against {weak}, {name}:")
        sds = []
        for bot in ("heuristic", weak):
            xs, ms = losses[judge][bot], per_match[judge][bot]
            sd = statistics.stdev(ms) if len(ms) > 1 else 0.0
            sds.append(sd)
            big = sum(1 for x in xs if x >= 10) / len(xs) if xs else 0.0
            mean = statistics.mean(xs) if xs else 0.0
            print(f"  {bot:<9} loss/decision {mean:.2f} over {len(xs)} decisions, "
                  f"{100 * big:.1f}% losing 10 or more, per-match sd {sd:.2f}")
        h, r = per_match[judge]["heuristic"], per_match[judge][weak]
        pooled = (sum(s * s for s in sds) / 2) ** 0.5
        gap = (statistics.mean(r) - statistics.mean(h)) if h and r else 0.0
        separation[(weak, judge)] = gap / pooled if pooled else 0.0
        ranked = sum(1 for x, y in zip(h, r, strict=False) if y > x) / max(1, min(len(h), len(r)))
        print(f"  separation {separation[(weak, judge)]:.2f} sd; {weak} ranked below the heuristic in "
              f"{100 * ranked:.0f}% of matches")
        print(f"{weak}_{judge}_separation={separation[(weak, judge)]:.2f}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--matches", type=int, default=10)
    p.add_argument("--deals", type=int, default=8)
    p.add_argument("--samples", type=int, default=16)
    p.add_argument("--seed", default=None, help="the matches' seeds' prefix (0; --quick 3)")
    p.add_argument("--quick", action="store_true")
    args = p.parse_args(argv)
    if args.quick:
        args.matches, args.deals, args.samples = 2, 1, 8  # 2: a per-match standard deviation
    args.seed = args.seed if args.seed is not None else ("3" if args.quick else "0")
    settings = Settings(second_opinion_samples=args.samples, par=False)
    print(f"build={BUILD} matches={args.matches} deals={args.deals} samples={args.samples} (coinche, the "
          "heuristic bot, team 0, against the random bot, then against a careless one: the heuristic's bids, "
          "random cards)")
    match_s: list[float] = []
    deal_s: list[float] = []
    ratios: list[float] = []
    separation: dict[tuple[str, str], float] = {}
    for weak in WEAK:
        row(weak, args, settings, match_s, deal_s, ratios, separation)
    print(f"analysis_s_per_match_median={statistics.median(match_s):.2f}")
    print(f"analysis_s_per_match_max={max(match_s):.2f}")
    if deal_s:
        print(f"analysis_s_per_deal_median={statistics.median(deal_s):.2f}")
    if ratios:
        print(f"deal_analysis_vs_first_solve={statistics.median(ratios):.1f}")
    # what the node makes by default: par solved too, the second opinion's default samples
    record = played(f"decisions/{args.seed}/0", args.deals, "careless")
    started = time.process_time()
    analyse(record)
    print(f"analysis_s_per_match_with_par={time.process_time() - started:.2f} ({args.deals} deals, careless)")
    dd, second = separation[("careless", "dd")], separation[("careless", "second")]
    print(f"separation_second_vs_dd={second / dd:.2f}" if dd > 0 else "separation_second_vs_dd=n/a")
    return 0


if __name__ == "__main__":
    sys.exit(main())
