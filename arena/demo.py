"""``belote-arena demo``: a node, the built-in bots over real gRPC, a small round-robin.

One process starts a referee node on the embedded default (records on disk),
connects the built-in bots as real gRPC clients, plays every pairing in both
seatings under classic and coinche with a progress bar, then prints a
leaderboard and where the match records are.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from dataclasses import dataclass
from pathlib import Path

from belote_bot import Bot, HeuristicBot, RandomBot
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from arena.harness import local_arena
from arena.referee.runner import MatchState


@dataclass
class Standing:
    name: str
    played: int = 0
    wins: int = 0
    draws: int = 0
    points_for: int = 0
    points_against: int = 0
    strikes: int = 0

    @property
    def score(self) -> float:
        return self.wins + 0.5 * self.draws


def demo_bots() -> dict[str, Bot]:
    return {
        "heuristic": HeuristicBot(),
        "heuristic-b": HeuristicBot(),
        "random": RandomBot(seed=1),
        "random-b": RandomBot(seed=2),
    }


async def run_demo(
    data_dir: Path, rulesets: list[str], deals: int | None, rounds: int, seed: int, console: Console,
    parallel: int = 8,
) -> int:
    bots = demo_bots()
    pairs = list(itertools.permutations(bots, 2))  # every pairing, both seatings
    games = [(r, a, b) for r in rulesets for a, b in pairs for _ in range(rounds)]
    table = {name: Standing(name) for name in bots}
    started = time.perf_counter()
    async with local_arena(data_dir=data_dir) as arena:
        console.print(f"referee node {arena.node.node_id} on {arena.address}, records in {data_dir}")
        for name, bot in bots.items():
            await arena.connect(name, bot, concurrency=4 * parallel)
        console.print(f"connected {len(bots)} bots over gRPC: {', '.join(bots)}")
        with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                      TimeElapsedColumn(), console=console) as progress:
            task = progress.add_task("round-robin", total=len(games))

            slots = asyncio.Semaphore(parallel)

            async def one(i: int, ruleset: str, a: str, b: str) -> tuple[str, str, MatchState]:
                async with slots:
                    st = await arena.play(a, b, ruleset, seed=f"{seed}/{i}", deals=deals)
                progress.advance(task)
                return a, b, st

            results = await asyncio.gather(*(one(i, *g) for i, g in enumerate(games)))
    for a, b, st in results:
        assert st.result is not None and st.record is not None
        for team, name in ((0, a), (1, b)):
            s = table[name]
            s.played += 1
            s.points_for += st.totals[team]
            s.points_against += st.totals[1 - team]
            if not st.result.HasField("winner"):
                s.draws += 1
            elif st.result.winner == team:
                s.wins += 1
            s.strikes += sum(1 for k in st.record["strikes"] if k["seat"] & 1 == team)
    elapsed = time.perf_counter() - started
    length = f"{deals} deals" if deals else "to the target"
    board = Table(title=f"Leaderboard: {len(games)} matches {length} ({', '.join(rulesets)})")
    for col in ("#", "bot", "played", "won", "drawn", "lost", "for", "against", "strikes"):
        board.add_column(col, justify="left" if col == "bot" else "right", no_wrap=True)
    ranked = sorted(table.values(), key=lambda s: (-s.score, -(s.points_for - s.points_against)))
    for rank, s in enumerate(ranked, 1):
        board.add_row(str(rank), s.name, str(s.played), str(s.wins), str(s.draws),
                      str(s.played - s.wins - s.draws), str(s.points_for), str(s.points_against),
                      str(s.strikes))
    console.print(board)
    latencies = sorted(x for _, _, st in results if st.record
                       for d in st.record["latencies_us"] for x in d if x >= 0)
    decisions = len(latencies)
    p50, p99 = latencies[decisions // 2], latencies[min(decisions - 1, decisions * 99 // 100)]
    console.print(f"{len(games)} matches, {decisions} decisions in {elapsed:.1f} s "
                  f"({decisions / elapsed:.0f} decisions/s over gRPC; per decision p50 {p50} us, "
                  f"p99 {p99} us)")
    console.print(f"match records: {data_dir / 'matches'}/*.json "
                  f"(check one: belote-arena replay {data_dir / 'matches'}/<id>.json)")
    return 0


def main(data_dir: str, deals: int | None, rounds: int, seed: int, rulesets: list[str]) -> int:
    from arena.referee.serve import install_uvloop

    install_uvloop()
    path = Path(data_dir) / time.strftime("demo-%Y%m%d-%H%M%S")
    return asyncio.run(run_demo(path, rulesets, deals, rounds, seed, Console()))
