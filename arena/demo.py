"""``belote-arena demo``: a local tournament on the embedded default, no Redis needed.

One process starts a referee node with its queue worker on the embedded
broker (sqlite in the data directory), connects the built-in bots as real
gRPC clients, queues a round-robin tournament per ruleset (or, with
``--format partners``, the four bots at one table, partners rotating), shows a progress
bar while the worker plays them, then prints the standings, the ratings with
their intervals, and where the records are. Everything is the production path: the same
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
from arena.hints import DEFAULT_ADDRESS, shell
from arena.node.rankings import Rankings
from arena.node.run import NodeSettings, running_node
from arena.queue import Broker, open_broker
from arena.ratings import pools_of
from arena.ratings.leaderboard import Leaderboard, Method
from arena.tournament import Tournaments, TournamentSpec
from arena.tournament.spec import Format
from arena.web import web_for


def demo_bots() -> dict[str, Bot]:
    return {
        "heuristic": HeuristicBot(seed=1),
        "heuristic-b": HeuristicBot(seed=2),
        "random": RandomBot(seed=1),
        "random-b": RandomBot(seed=2),
    }


def demo_specs(rulesets: list[str], deals: int | None, rounds: int, seed: int, fmt: Format = "round-robin",
               ) -> list[TournamentSpec]:
    """The demo's tournaments between :func:`demo_bots`, one a ruleset."""
    return [TournamentSpec(
        tournament_id=f"{ruleset}-{fmt}", format=fmt,
        bots=tuple(demo_bots()), ruleset=Ruleset.from_spec(ruleset), deals=deals, rounds=rounds,
        seed=f"demo/{seed}/{ruleset}",
        unrated_reason="the demo's seed is given on its command line, so its deals are known",
    ) for ruleset in rulesets]


async def _until_interrupted() -> None:
    """Wait for Ctrl-C (or SIGTERM), then return normally so the node drains and stops."""
    import signal

    done = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, done.set)
    await done.wait()


def _progress(tournaments: Tournaments, ids: list[str]) -> tuple[int, int, bool]:
    done = total = 0
    over = True
    for tid in ids:
        progress = tournaments.progress(tid)
        done += progress.matches_done
        total += progress.matches_scheduled
        over = over and not progress.state.is_open
    return done, total, over


async def run_demo(
    data_dir: Path, rulesets: list[str], deals: int | None, rounds: int, seed: int, console: Console,
    parallel: int = 8, http: str = "", fmt: Format = "round-robin",
) -> int:
    bots = demo_bots()
    broker = open_broker(None, data_dir)
    stop = asyncio.Event()
    settings = NodeSettings(data_dir=data_dir, capacity=parallel, poll_s=0.05)
    started = time.perf_counter()
    tasks: list[asyncio.Task[None]] = []
    try:
        async with running_node(broker, settings, stop) as running:
            node, tournaments = running.node, running.tournaments
            console.print(f"referee node {node.node_id} on {running.address}, "
                          f"embedded queue and records in {data_dir}")
            site = await running.until_drained.enter_async_context(web_for(running, http)) if http else None
            if site is not None:
                console.print(f"web pages on {site.url}/ (the JSON API under {site.url}/api/v1/)")
            for name, bot in bots.items():
                entry, token = await node.register(name)
                tasks.append(asyncio.create_task(run_async(
                    bot, running.address, token, 4 * parallel, name=name, stop=stop, all_nodes=False)))
                await asyncio.wait_for(node.link_for(entry).connected_event.wait(), 10)
            console.print(f"connected {len(bots)} bots over gRPC: {', '.join(bots)}")
            ids = []
            for spec in demo_specs(rulesets, deals, rounds, seed, fmt):
                tournaments.create(spec)
                ids.append(spec.tournament_id)
            with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                          TimeElapsedColumn(), console=console) as progress:
                bar = progress.add_task(f"{fmt} ({', '.join(rulesets)})", total=None)
                while True:
                    done, total, over = await asyncio.to_thread(_progress, tournaments, ids)
                    progress.update(bar, completed=done, total=total)
                    if over:
                        break
                    await asyncio.sleep(0.2)
            elapsed = time.perf_counter() - started
            methods = _report(console, broker, tournaments, ids, elapsed, data_dir)
            _hints(console, data_dir, methods, running.address if site is not None else None)
            if site is not None:
                console.print(f"still serving the pages on {site.url}/ : Ctrl-C to stop")
                await _until_interrupted()
    finally:
        await stop_bots(stop, tasks)
        broker.close()
    return 0


async def stop_bots(stop: asyncio.Event, tasks: list[asyncio.Task[None]]) -> None:
    """Stop the demo's bots (their streams close) and wait for them."""
    stop.set()
    for task in tasks:
        task.cancel()
    with contextlib.suppress(Exception):
        await asyncio.gather(*tasks, return_exceptions=True)


def _report(
    console: Console, broker: Broker, tournaments: Tournaments, ids: list[str], elapsed: float,
    data_dir: Path,
) -> dict[str, Method]:
    """Print the standings and ratings; the method each tournament's ratings were shown with."""
    latencies: list[int] = []
    matches = 0
    for tid in ids:
        progress = tournaments.progress(tid)
        results = broker.results(tid)
        matches += len(results)
        for r in results:
            latencies += [x for deal in r.record.latencies_us for x in deal if x >= 0]
        length = f"{progress.spec.deals} deals" if progress.spec.deals else "to the target"
        table = Table(title=f"Leaderboard of {tid}: {len(results)} matches {length}")
        for col in ("#", "bot", "played", "won", "drawn", "lost", "for", "against"):
            table.add_column(col, justify="left" if col == "bot" else "right", no_wrap=True)
        for s in progress.standings:
            table.add_row(str(s.rank), s.bot, str(s.played), str(s.wins), str(s.draws), str(s.losses),
                          str(s.points_for), str(s.points_against))
        console.print(table)
    rankings = Rankings(broker)
    shown: dict[str, Method] = {}
    for tid in ids:
        # the widest pool the tournament counts in: its preset's when rated; the demo's seed is
        # known, so it is unrated and counts in its own pool only
        found = broker.get_tournament(tid)
        if found is None:
            continue
        spec = found[0]
        pool = pools_of(tid, spec.ruleset.to_spec(), rated=spec.unrated_reason == "")[-1]
        method: Method = "openskill" if spec.format == "partners" else "bt"  # partners are mixed sides
        if method == "openskill":
            broker.apply_mixed(pool)  # anything the node left unrated
        if pool in broker.pools():
            console.print(ratings_table(rankings.leaderboard(pool, method, 0, 200)))
            shown[tid] = method
    latencies.sort()
    if latencies:
        n = len(latencies)
        console.print(f"{matches} matches, {n} decisions in {elapsed:.1f} s ({n / elapsed:.0f} "
                      f"decisions/s over gRPC; per decision p50 {latencies[n // 2]} us, "
                      f"p99 {latencies[n * 99 // 100]} us)")
    console.print(f"match records: {data_dir / 'matches'}/*.json")
    return shown


def _hints(console: Console, data_dir: Path, methods: dict[str, Method], address: str | None) -> None:
    """Commands to go on with, each runnable as printed: replay a record; the ratings again, from
    this node while it serves (``address``), else from a node started on the demo's folder."""
    def hint(text: str, *words: str) -> None:
        console.print(f"{text}: {shell('belote-arena', *words)}", soft_wrap=True, markup=False,
                      highlight=False)

    records = sorted((data_dir / "matches").glob("*.json"))
    if records:
        hint("check a match", "replay", str(records[0]))
    if address is None and methods:
        hint("the ratings again later: start a node on this folder (it runs until Ctrl-C)",
             "serve", "--data-dir", str(data_dir), "--listen", DEFAULT_ADDRESS)
    for tid, method in methods.items():
        where = "while this node serves" if address is not None else "then, beside it"
        hint(where, "rankings", "--tournament", tid, "--method", method,
             "--address", address or DEFAULT_ADDRESS)


def main(
    data_dir: str, deals: int | None, rounds: int, seed: int, rulesets: list[str], http: str = "",
    fmt: Format = "round-robin",
) -> int:
    from arena.referee.serve import install_uvloop

    install_uvloop()
    path = Path(data_dir) / time.strftime("demo-%Y%m%d-%H%M%S")
    return asyncio.run(run_demo(path, rulesets, deals, rounds, seed, Console(), http=http, fmt=fmt))


def ratings_table(board: Leaderboard) -> Table:
    """A pool's Bradley-Terry (or openskill) ratings: each with its 95% interval, and how likely each
    bot is stronger than the next one down (two copies of one bot overlap, near 50%)."""
    how = ("openskill of mixed partnerships, new bots at 1500, ranked by mu - 3 sigma"
           if board.method == "openskill" else "Bradley-Terry, mean 1500")
    table = Table(title=f"Ratings in {board.pool} ({how})")
    for col in ("#", "bot", "rating", "95% interval", "LOS next", "games"):
        table.add_column(col, justify="left" if col == "bot" else "right", no_wrap=True)
    for e in board.entries:
        interval = "" if e.low is None or e.high is None else f"{e.low:.0f} .. {e.high:.0f}"
        los = "" if e.los_next is None else f"{100 * e.los_next:.0f}%"
        table.add_row(str(e.rank), e.bot, f"{e.rating:.0f}", interval, los, str(e.games))
    return table
