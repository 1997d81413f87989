"""``belote-arena demo``: a local tournament on the embedded default, no Redis needed.

One process starts a referee node with its queue worker on the embedded
broker (sqlite in the data directory), connects the built-in bots as real
gRPC clients, queues a round-robin tournament per ruleset, shows a progress
bar while the worker plays them, then prints the standings, the Elo ratings
and where the records are. Everything is the production path: the same
tournament would run unchanged on a Redis cluster of nodes.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from pathlib import Path

from belote_bot import Bot, HeuristicBot, RandomBot, run_async
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from arena.engine import Ruleset
from arena.queue import open_broker
from arena.queue.broker import Broker
from arena.queue.cluster import ClusterConfig, cluster_node
from arena.queue.worker import advance_tournament, tournament_of
from arena.tournament import TournamentSpec


def demo_bots() -> dict[str, Bot]:
    return {
        "heuristic": HeuristicBot(seed=1),
        "heuristic-b": HeuristicBot(seed=2),
        "random": RandomBot(seed=1),
        "random-b": RandomBot(seed=2),
    }


def _progress(broker: Broker, ids: list[str]) -> tuple[int, int, bool]:
    done = total = 0
    over = True
    for tid in ids:
        found = broker.get_tournament(tid)
        assert found is not None
        spec_json, state = found
        tour = tournament_of(tid, spec_json)
        results = broker.results(tid)
        done += len(results)
        total += sum(len(p.jobs) for stage in tour.stages(results) for p in stage.pairings)
        over = over and state in ("finished", "cancelled")
    return done, total, over


async def run_demo(
    data_dir: Path, rulesets: list[str], deals: int | None, rounds: int, seed: int, console: Console,
    parallel: int = 8,
) -> int:
    bots = demo_bots()
    broker = open_broker(None, data_dir)
    stop = asyncio.Event()
    config = ClusterConfig(data_dir=data_dir, capacity=parallel, poll_s=0.05)
    started = time.perf_counter()
    tasks: list[asyncio.Task[None]] = []
    try:
        async with cluster_node(broker, config, stop) as running:
            node = running.node
            console.print(f"referee node {node.node_id} on {running.address}, "
                          f"embedded queue and records in {data_dir}")
            for name, bot in bots.items():
                entry, token = node.register_bot(name)
                tasks.append(asyncio.create_task(run_async(
                    bot, running.address, token, 4 * parallel, name=name, stop=stop, all_nodes=False)))
                await asyncio.wait_for(node.link_for(entry).connected_event.wait(), 10)
            console.print(f"connected {len(bots)} bots over gRPC: {', '.join(bots)}")
            ids = []
            for ruleset in rulesets:
                spec = TournamentSpec(
                    tournament_id=f"{ruleset}-round-robin", format="round-robin",
                    bots=tuple(bots), ruleset=Ruleset.from_spec(ruleset), deals=deals, rounds=rounds,
                    seed=f"demo/{seed}/{ruleset}",
                )
                broker.put_tournament(spec.tournament_id, spec.to_dict())
                advance_tournament(broker, spec.tournament_id)
                ids.append(spec.tournament_id)
            with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                          TimeElapsedColumn(), console=console) as progress:
                bar = progress.add_task(f"round-robin ({', '.join(rulesets)})", total=None)
                while True:
                    done, total, over = await asyncio.to_thread(_progress, broker, ids)
                    progress.update(bar, completed=done, total=total)
                    if over:
                        break
                    await asyncio.sleep(0.2)
        elapsed = time.perf_counter() - started
        _report(console, broker, ids, elapsed, data_dir)
    finally:
        stop.set()
        for t in tasks:
            t.cancel()
        with contextlib.suppress(Exception):
            await asyncio.gather(*tasks, return_exceptions=True)
        broker.close()
    return 0


def _report(console: Console, broker: Broker, ids: list[str], elapsed: float, data_dir: Path) -> None:
    latencies: list[int] = []
    matches = 0
    for tid in ids:
        found = broker.get_tournament(tid)
        assert found is not None
        tour = tournament_of(tid, found[0])
        results = broker.results(tid)
        matches += len(results)
        for r in results:
            latencies += [x for deal in r.record.get("latencies_us", []) for x in deal if x >= 0]
        length = f"{tour.spec.deals} deals" if tour.spec.deals else "to the target"
        table = Table(title=f"Leaderboard of {tid}: {len(results)} matches {length}")
        for col in ("#", "bot", "played", "won", "drawn", "lost", "for", "against"):
            table.add_column(col, justify="left" if col == "bot" else "right", no_wrap=True)
        for s in tour.standings(results):
            table.add_row(str(s.rank), s.bot, str(s.played), str(s.wins), str(s.draws), str(s.losses),
                          str(s.points_for), str(s.points_against))
        console.print(table)
    ratings = sorted(broker.ratings().items(), key=lambda kv: -kv[1][0])
    elo = Table(title="Elo after every match (online, K=16)")
    for col in ("bot", "rating", "matches"):
        elo.add_column(col, justify="left" if col == "bot" else "right")
    for name, (rating, games) in ratings:
        elo.add_row(name, f"{rating:.0f}", str(games))
    console.print(elo)
    latencies.sort()
    if latencies:
        n = len(latencies)
        console.print(f"{matches} matches, {n} decisions in {elapsed:.1f} s ({n / elapsed:.0f} "
                      f"decisions/s over gRPC; per decision p50 {latencies[n // 2]} us, "
                      f"p99 {latencies[n * 99 // 100]} us)")
    console.print(f"match records: {data_dir / 'matches'}/*.json "
                  f"(check one: belote-arena replay {data_dir / 'matches'}/<id>.json)")


def main(data_dir: str, deals: int | None, rounds: int, seed: int, rulesets: list[str]) -> int:
    from arena.referee.serve import install_uvloop

    install_uvloop()
    path = Path(data_dir) / time.strftime("demo-%Y%m%d-%H%M%S")
    return asyncio.run(run_demo(path, rulesets, deals, rounds, seed, Console()))
