"""Strength: mean points per deal between two bots over duplicate deals, with 95% intervals.

Usage (from the repository root)::

    python bench/strength.py [--ms 50,200] [--deals N] [--timed-deals M] [--rows ROWS]
                             [--workers W] [--seed S] [--quick] [--json]

Each row pits bot A against bot B under one ruleset. A *board* is one shuffled deck
(``deal_from_rng`` seeded with ``strength/SEED/RULESET/i``, dealer ``i % 4``); it is played
twice with the same cards, A at seats 0 and 2 then at seats 1 and 3 (duplicate play). A
deal's difference is A's deal score minus B's (``score_deal``: the deal alone, no match
around it; a thrown-in deal counts 0, a classic litige's held points are lost), and the
board's is the mean of its two deals. The rows (``--rows``, all by default):

* ``heuristic-random``: the built-in heuristic against uniform random, ``classic`` and ``coinche``;
* ``search-heuristic``: ``belote_bot.bots.search.SearchBot(seed, budget_ms=MS)`` against the
  heuristic, ``classic`` and ``coinche``, at each ``--ms``;
* ``search-colver``: the search bot against colver's Smart IS-MCTS
  (:mod:`belote_bot.bots.colver_ismcts`, ``time_ms=MS`` per card decision) under colver's
  rules (coinche, declarations off, belote automatic; scoring still ours), at each ``--ms``;
* ``heuristic-colver``: the heuristic (microseconds a decision) against colver, for calibration.

The bots play in the bench's processes (no gRPC) exactly what the referee would send
them: each decision's :class:`belote_bot.Observation` is built by the referee's own
``observation_to_proto`` (deadline 1 s and time bank 10 s, the referee's defaults); each
bot gets ``on_match_start`` with the referee's ``MatchStarted`` (a one-deal match per
deal; the public events, ``on_event``, are not sent: the observations carry all they
say); its answer is checked as the SDK checks it (an illegal answer stops the bench).
Each seat of each deal has a bot object of its own, seeded from the bench seed, the row,
the board, the deal and the seat, so the boards can be spread over ``--workers``
processes and give the same results whatever their number (for bots whose play does
not depend on a clock: the search and colver stop on time, so they differ from run to run).

Printed per row: the number of boards, the mean difference per deal with its 95% interval
(Student's t over the board means) and each side's mean time per decision. Then, from
the measured variances, the deals needed to separate the pair at 95% (the expected
interval just excludes 0: n = (1.96 sd / mean)^2; counted in deals played, a board counts
2) with *plain* play (single deals, seats at random: the variance of single-deal
differences) and with *duplicate* play (the variance of board means), and their ratio;
and the same with the win/loss statistic (a deal or a board is a win, 1, a loss, 0, or a
draw, 0.5, by the sign of its difference) instead of points. For close bots the issue
measured duplicate play at 3.1x fewer deals in classic and 3.4x in coinche.

Targets: search beats the heuristic with the interval above zero (every search-heuristic
row); against colver, reported. The last line is ``search_vs_heuristic_low=L``: the lowest
lower end of the search-heuristic intervals, in points per deal (``n/a`` while
``belote_bot.bots.search`` does not exist in this tree).

``--quick`` (under 60 s here): ``--ms 25``, 200 boards for heuristic-random, 32 for the
search-heuristic rows and 4 for the colver rows. A full run (the defaults: 1000 and 100
boards, 50 and 200 ms) takes about 25 minutes on two workers here.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import inspect
import json
import math
import multiprocessing
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout

from belote.arena.v1 import bot_service_pb2 as bpb
from belote_bot.acting import legal_code
from belote_bot.bot import Bot
from belote_bot.events import MatchInfo
from belote_bot.types import Observation

from arena.engine import Ruleset, deal_from_rng, score_deal
from arena.referee.convert import observation_to_proto, ruleset_to_proto

Z95 = statistics.NormalDist().inv_cdf(0.975)
#: the referee's default time control (arena.records.TimeControl), as the requests carry it
DEADLINE_MS = 1000
TIME_BANK_MS = 10_000
ROW_KINDS = ("heuristic-random", "search-heuristic", "search-colver", "heuristic-colver")
COLVER_RULESET = "colver"
RULESETS: dict[str, Any] = {
    "classic": "classic",
    "coinche": "coinche",
    COLVER_RULESET: {"preset": "coinche", "annonces": False, "belote": "automatic"},
}
ISSUE_RATIOS = {"classic": 3.1, "coinche": 3.4}


# --------------------------------------------------------------------------- statistics
def t_quantile(p: float, df: int) -> float:
    """Student's t quantile (Cornish-Fisher expansion of the normal's: 1e-3 from df 3)."""
    z = statistics.NormalDist().inv_cdf(p)
    if df <= 0:
        return math.inf
    g1 = (z**3 + z) / 4
    g2 = (5 * z**5 + 16 * z**3 + 3 * z) / 96
    g3 = (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384
    g4 = (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / 92160
    return z + g1 / df + g2 / df**2 + g3 / df**3 + g4 / df**4


@dataclass(frozen=True)
class Interval:
    mean: float
    low: float
    high: float
    sd: float
    n: int


def mean_interval(xs: Sequence[float], level: float = 0.95) -> Interval:
    """The mean and its two-sided ``level`` interval (Student's t); sd is the sample's."""
    n = len(xs)
    if n == 0:
        return Interval(math.nan, math.nan, math.nan, math.nan, 0)
    mean = statistics.fmean(xs)
    if n == 1:
        return Interval(mean, -math.inf, math.inf, math.nan, 1)
    sd = statistics.stdev(xs)
    half = t_quantile(0.5 + level / 2, n - 1) * sd / math.sqrt(n)
    return Interval(mean, mean - half, mean + half, sd, n)


def units_to_separate(effect: float, variance: float, z: float = Z95) -> float:
    """Samples of this variance after which the expected interval, ``z`` sd's wide, excludes 0."""
    if variance == 0:
        return 1.0 if effect else math.inf
    if effect == 0 or math.isnan(effect):
        return math.inf
    return z * z * variance / (effect * effect)


def win(x: float) -> float:
    return 1.0 if x > 0 else 0.0 if x < 0 else 0.5


@dataclass(frozen=True)
class Separation:
    """Deals played to separate a pair at 95%, plain and duplicate, for one statistic."""

    plain: float
    duplicate: float

    @property
    def ratio(self) -> float:
        """How many times fewer deals duplicate play needs."""
        if math.isinf(self.plain) and math.isinf(self.duplicate):
            return math.nan
        return self.plain / self.duplicate if self.duplicate else math.inf


def separation(deals: Sequence[tuple[float, float]], statistic: str = "points") -> Separation:
    """From each board's two deal differences: deals played to separate the pair at 95%.

    Plain: single deals with random seats, the variance of all single-deal values. Duplicate:
    the variance of the board values; a board is 2 deals played. ``statistic`` "points" uses
    the differences, "wins" the win/loss (1, 0.5, 0) of each deal or board.
    """
    singles = [d for pair in deals for d in pair]
    boards = [(a + b) / 2 for a, b in deals]
    if statistic == "wins":
        singles, boards, centre = [win(x) for x in singles], [win(x) for x in boards], 0.5
    else:
        centre = 0.0
    if len(boards) < 2:
        return Separation(math.nan, math.nan)
    plain = units_to_separate(statistics.fmean(singles) - centre, statistics.variance(singles))
    dup = 2 * units_to_separate(statistics.fmean(boards) - centre, statistics.variance(boards))
    return Separation(plain, dup)


# --------------------------------------------------------------------------- contestants
BotFactory = Callable[[int, int], Bot]


def search_status() -> str | None:
    """None when ``belote_bot.bots.search`` exists in this tree, else why not."""
    if importlib.util.find_spec("belote_bot.bots.search") is None:
        return "not available (belote_bot.bots.search is not in this tree)"
    return None


def colver_status() -> str | None:
    try:
        from belote_bot.bots.colver_ismcts import import_colver

        import_colver()
    except ImportError as exc:
        return f"not available ({exc})"
    return None


def factory(name: str) -> BotFactory:
    """``make(seed, ms) -> Bot`` for a contestant; imported on first use."""
    if name == "random":
        from belote_bot.bots.random import RandomBot

        return lambda seed, ms: RandomBot(seed)
    if name == "heuristic":
        from belote_bot.bots.heuristic import HeuristicBot

        return lambda seed, ms: HeuristicBot(seed)
    if name == "search":
        from belote_bot.bots.search import SearchBot  # type: ignore[import-not-found, unused-ignore]

        return lambda seed, ms: SearchBot(seed=seed, budget_ms=ms)  # type: ignore[no-any-return, unused-ignore]
    if name == "colver":
        from belote_bot.bots.colver_ismcts import ColverIsmctsBot

        return lambda seed, ms: ColverIsmctsBot(seed, time_ms=ms)
    raise ValueError(f"unknown contestant {name!r}")


# --------------------------------------------------------------------------- playing
@dataclass(frozen=True)
class Row:
    a: str
    b: str
    ruleset: str
    ms: int
    boards: int

    @property
    def label(self) -> str:
        return f"{self.a} vs {self.b}"


@dataclass
class BoardResult:
    #: A minus B in each deal: A at seats 0/2, then at 1/3
    diffs: tuple[float, float]
    #: seconds spent in act, and decisions, with a choice (more than one legal action):
    #: A's bids, A's cards, B's bids, B's cards
    seconds: tuple[float, ...]
    decisions: tuple[int, ...]


def _run_hook(result: Any) -> None:
    if inspect.isawaitable(result):
        async def wait() -> None:
            await result

        asyncio.run(wait())


def play_board(row: Row, board: int, seed: int) -> BoardResult:
    """Both deals of one board; deterministic in (seed, row, board) for clock-free bots."""
    rules = Ruleset.from_spec(RULESETS[row.ruleset])
    makers = (factory(row.a), factory(row.b))
    diffs: list[float] = []
    seconds, decisions = [0.0] * 4, [0] * 4
    row_key = ROW_KINDS.index(f"{row.a}-{row.b}") * 1_000_003 + row.ms * 7919 + len(row.ruleset)
    for swap in (0, 1):
        deal = deal_from_rng(rules, board & 3, random.Random(f"strength/{seed}/{row.ruleset}/{board}"))
        side = [(seat + swap) & 1 for seat in range(4)]  # 0: A's bot, 1: B's
        match_id = f"strength-{row.a}-{row.b}-{row.ruleset}-{row.ms}-{board}-{swap}"
        bots = [makers[side[s]]((seed * 1_000_003 + row_key) * 65_536 + board * 8 + swap * 4 + s, row.ms)
                for s in range(4)]
        players = [[row.a, row.b][side[s]] for s in range(4)]
        for s, bot in enumerate(bots):
            _run_hook(bot.on_match_start(MatchInfo.from_proto(bpb.MatchStarted(
                match_id=match_id, seat=s, ruleset=ruleset_to_proto(rules), players=players,
                target=rules.target))))
        request = 0
        while not deal.is_over:
            seat = deal.to_act
            msg, legal = observation_to_proto(deal, seat)
            request += 1
            obs = Observation.from_proto(msg, legal, request_id=request, match_id=match_id,
                                         deadline_ms=DEADLINE_MS, time_bank_ms=TIME_BANK_MS)
            choice = len(legal) > 1
            slot = 2 * side[seat] + (deal.phase != "bidding")
            t0 = time.perf_counter()
            answer = bots[seat].act(obs)
            if inspect.isawaitable(answer):
                async def wait(a: Any = answer) -> Any:
                    return await a

                answer = asyncio.run(wait())
            if choice:  # forced moves are not timed: some bots answer them at once
                seconds[slot] += time.perf_counter() - t0
                decisions[slot] += 1
            deal.apply(legal_code(obs, answer))  # raises on an illegal answer
        score = score_deal(deal).score
        a_team = swap  # A sits at seats 0/2 (team 0), then at 1/3 (team 1)
        diffs.append(float(score[a_team] - score[1 - a_team]))
    return BoardResult((diffs[0], diffs[1]), tuple(seconds), tuple(decisions))


def _task(args: tuple[Row, int, int, int]) -> list[BoardResult]:
    row, start, stop, seed = args
    return [play_board(row, b, seed) for b in range(start, stop)]


def play_rows(rows: Sequence[Row], seed: int, workers: int) -> list[list[BoardResult]]:
    """Every board of every row, in order; boards of clock-free rows go to a worker in batches
    of 25 (milliseconds each), the others one by one (so the workers stay evenly loaded)."""
    tasks = []
    for row in rows:
        step = 25 if row.ms == 0 else 1
        tasks += [(row, b, min(b + step, row.boards), seed) for b in range(0, row.boards, step)]
    if workers <= 1:
        batches = [_task(t) for t in tasks]
    else:
        ctx = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
            batches = list(pool.map(_task, tasks))
    flat = [result for batch in batches for result in batch]
    out: list[list[BoardResult]] = []
    pos = 0
    for row in rows:
        out.append(flat[pos:pos + row.boards])
        pos += row.boards
    return out


# --------------------------------------------------------------------------- the run
@dataclass
class RowResult:
    a: str
    b: str
    ruleset: str
    ms: int
    boards: int
    missing: str | None = None
    mean: float | None = None
    low: float | None = None
    high: float | None = None
    sd_board: float | None = None
    sd_deal: float | None = None
    #: mean ms of a decision with a choice: A's bids, A's cards, B's bids, B's cards
    ms_per_decision: tuple[float, ...] | None = None
    points: dict[str, float] = field(default_factory=dict)
    wins: dict[str, float] = field(default_factory=dict)
    win_rate_boards: float | None = None


def summarize(row: Row, results: Sequence[BoardResult]) -> RowResult:
    deals = [r.diffs for r in results]
    iv = mean_interval([(a + b) / 2 for a, b in deals])
    sec = [sum(r.seconds[i] for r in results) for i in range(4)]
    dec = [sum(r.decisions[i] for r in results) for i in range(4)]
    sep_p, sep_w = separation(deals, "points"), separation(deals, "wins")
    singles = [d for pair in deals for d in pair]
    return RowResult(
        row.a, row.b, row.ruleset, row.ms, row.boards, mean=iv.mean, low=iv.low, high=iv.high,
        sd_board=iv.sd, sd_deal=statistics.stdev(singles) if len(singles) > 1 else math.nan,
        ms_per_decision=tuple(round(1000 * s / max(1, n), 3) for s, n in zip(sec, dec, strict=True)),
        points={"plain": sep_p.plain, "duplicate": sep_p.duplicate, "ratio": sep_p.ratio},
        wins={"plain": sep_w.plain, "duplicate": sep_w.duplicate, "ratio": sep_w.ratio},
        win_rate_boards=statistics.fmean(win((a + b) / 2) for a, b in deals),
    )


def plan(args: argparse.Namespace) -> list[Row]:
    rows: list[Row] = []
    kinds = args.rows
    if "heuristic-random" in kinds:
        rows += [Row("heuristic", "random", r, 0, args.deals) for r in ("classic", "coinche")]
    for ms in args.ms:
        if "search-heuristic" in kinds:
            rows += [Row("search", "heuristic", r, ms, args.timed_deals) for r in ("classic", "coinche")]
    for ms in args.ms:
        if "search-colver" in kinds:
            rows.append(Row("search", "colver", COLVER_RULESET, ms, args.colver_deals))
        if "heuristic-colver" in kinds:
            rows.append(Row("heuristic", "colver", COLVER_RULESET, ms, args.colver_deals))
    return rows


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--ms", default=None, help="time per decision of the bots that search, ms (50,200)")
    p.add_argument("--deals", type=int, default=None, help="boards of the heuristic-random rows (1000)")
    p.add_argument("--timed-deals", type=int, default=None, help="boards of the search-heuristic rows (100)")
    p.add_argument("--colver-deals", type=int, default=None, help="boards of the colver rows (100)")
    p.add_argument("--rows", default=",".join(ROW_KINDS), help=f"which rows ({','.join(ROW_KINDS)})")
    p.add_argument("--workers", type=int, default=2, help="processes playing boards (2)")
    p.add_argument("--seed", type=int, default=0, help="the bench seed: decks and bot seeds (0)")
    p.add_argument("--quick", action="store_true", help="--ms 25, 200/32/4 boards: under 60 s")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    args = p.parse_args(argv)
    quick = args.quick
    args.ms = [int(x) for x in (args.ms or ("25" if quick else "50,200")).split(",") if x]
    args.deals = args.deals if args.deals is not None else 200 if quick else 1000
    args.timed_deals = args.timed_deals if args.timed_deals is not None else 32 if quick else 100
    args.colver_deals = args.colver_deals if args.colver_deals is not None else 4 if quick else 100
    args.rows = [r for r in args.rows.split(",") if r]
    for r in args.rows:
        if r not in ROW_KINDS:
            p.error(f"--rows: unknown row {r!r}; known: {', '.join(ROW_KINDS)}")
    if min([args.deals, args.timed_deals, args.colver_deals, args.workers, *args.ms]) < 1:
        p.error("--ms, --deals, --timed-deals, --colver-deals and --workers must be at least 1")
    return args


def run(args: argparse.Namespace) -> dict[str, Any]:
    missing = {"search": search_status(), "colver": colver_status()}
    rows = plan(args)
    playable = [r for r in rows if not missing.get(r.a) and not missing.get(r.b)]
    t0 = time.perf_counter()
    played = dict(zip(map(id, playable), play_rows(playable, args.seed, args.workers), strict=True))
    wall = time.perf_counter() - t0
    results: list[RowResult] = []
    for row in rows:
        if id(row) in played:
            results.append(summarize(row, played[id(row)]))
        else:
            why = "; ".join(f"{n}: {missing[n]}" for n in (row.a, row.b) if missing.get(n))
            results.append(RowResult(row.a, row.b, row.ruleset, row.ms, 0, missing=why))
    # (a row of one board has no interval: its low is -inf, and says nothing)
    lows = [r.low for r in results if r.a == "search" and r.b == "heuristic" and r.low is not None
            and math.isfinite(r.low)]
    colver_version = None
    if not missing["colver"]:
        import colver

        colver_version = str(getattr(colver, "__version__", "?"))
    return {
        "seed": args.seed, "workers": args.workers, "ms": args.ms, "quick": args.quick,
        "python": platform.python_version(), "colver": colver_version,
        "search": missing["search"] or "available", "wall_s": round(wall, 1),
        "rows": [asdict(r) for r in results],
        "search_vs_heuristic_low": round(min(lows), 1) if lows else None,
    }


def _deals(x: float, least: int = 1) -> str:
    """A deal count as printed: whole deals, at least ``least`` (a board is 2)."""
    if math.isnan(x):
        return "-"
    if math.isinf(x):
        return "inf"
    x = max(least, math.ceil(x))
    return f"{x:,}" if x < 1e7 else f"{x:.1e}"


def _ratio(x: float) -> str:
    return f"{x:.1f}x" if math.isfinite(x) else "-"


def report(res: dict[str, Any]) -> None:
    print(f"strength bench: seed {res['seed']}, {res['workers']} workers, ms {res['ms']}, Python "
          f"{res['python']}, colver {res['colver'] or 'MISSING'}, search: {res['search']}; "
          f"{res['wall_s']} s")
    print("mean points per deal, A minus B, over duplicate boards (each board = 2 deals), 95% interval")
    print(f"{'A vs B':<22}{'ruleset':<9}{'ms':>5}{'boards':>8}{'mean':>9}  {'95% interval':<20}"
          f"{'ms/bid A/B':>14}{'ms/card A/B':>16}  (decisions with a choice)")
    for r in res["rows"]:
        label = f"{r['a']} vs {r['b']}"
        ms = str(r["ms"]) if r["ms"] else "-"
        if r["missing"]:
            print(f"{label:<22}{r['ruleset']:<9}{ms:>5}  {r['missing']}")
            continue
        iv = f"[{r['low']:+.1f}, {r['high']:+.1f}]"
        a_bid, a_card, b_bid, b_card = r["ms_per_decision"]
        print(f"{label:<22}{r['ruleset']:<9}{ms:>5}{r['boards']:>8}{r['mean']:>+9.1f}  {iv:<20}"
              f"{a_bid:>7.2f} /{b_bid:>6.2f}{a_card:>8.2f} /{b_card:>6.1f}")
    print()
    print("deals played to separate the pair at 95% (plain: single deals, random seats; duplicate: "
          "boards, 2 deals each)")
    print(f"{'A vs B':<22}{'ruleset':<9}{'ms':>5}  {'points: plain':>14}{'duplicate':>11}{'ratio':>7}"
          f"  {'wins: plain':>12}{'duplicate':>11}{'ratio':>7}  {'wins/points, dup':>17}")
    for r in res["rows"]:
        if r["missing"]:
            continue
        p, w = r["points"], r["wins"]
        versus = w["duplicate"] / p["duplicate"] if 0 < p["duplicate"] < math.inf else math.nan
        versus_text = f"{versus:.2f}x" if math.isfinite(versus) else "-"
        ms = str(r["ms"]) if r["ms"] else "-"
        print(f"{r['a'] + ' vs ' + r['b']:<22}{r['ruleset']:<9}{ms:>5}  {_deals(p['plain']):>14}"
              f"{_deals(p['duplicate'], 2):>11}{_ratio(p['ratio']):>7}  {_deals(w['plain']):>12}"
              f"{_deals(w['duplicate'], 2):>11}{_ratio(w['ratio']):>7}  {versus_text:>17}")
    for rules, issue in ISSUE_RATIOS.items():
        ratios = [f"{r['a']} vs {r['b']}{' ' + str(r['ms']) + ' ms' if r['ms'] else ''} "
                  f"{_ratio(r['points']['ratio'])}"
                  for r in res["rows"] if r["ruleset"] == rules and not r["missing"]]
        if ratios:
            print(f"duplicate play's saving in {rules}, points: {', '.join(ratios)} "
                  f"(the issue, close bots on the engine: {issue}x)")
    print()
    sh = [r for r in res["rows"] if r["a"] == "search" and r["b"] == "heuristic"]
    low = res["search_vs_heuristic_low"]
    if low is None:
        print(f"target search beats heuristic, interval above zero: n/a (search {res['search']})")
    else:
        verdict = "met" if all(r["low"] > 0 for r in sh) else "NOT met"
        print(f"target search beats heuristic, interval above zero in every row: {verdict}")
    for r in res["rows"]:
        if r["b"] == "colver" and r["a"] == "search" and not r["missing"]:
            print(f"search vs colver at {r['ms']} ms: {r['mean']:+.1f} [{r['low']:+.1f}, {r['high']:+.1f}] "
                  "(reported; aim: above zero)")
    print(f"search_vs_heuristic_low={'n/a' if low is None else f'{low:.1f}'}")


def _finite(x: Any) -> Any:
    """JSON has no inf or nan: "inf" (never separated) and null (undefined)."""
    if isinstance(x, float) and not math.isfinite(x):
        return None if math.isnan(x) else "inf" if x > 0 else "-inf"
    if isinstance(x, dict):
        return {k: _finite(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_finite(v) for v in x]
    return x


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    res = run(args)
    if args.json:
        print(json.dumps(_finite(res), indent=2))
    else:
        report(res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
