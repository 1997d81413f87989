"""Readers of the web pages and JSON API of one node while it plays a tournament: their latencies.

Used by ``bench/ratings.py`` (``api_p99_ms=``). The node (``running_node`` on an
embedded queue, with its web server) runs in this process with four built-in
SDK bots over gRPC, playing a round-robin; the readers run in a child process
(their own event loop and CPU time, as if they were browsers elsewhere), each
going round the leaderboard, the bots, the tournament and the page itself,
one request after another. The reference, in the same run, is one reader
alone: ``ratio_vs_one_reader``.
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing as mp
import tempfile
import time
from pathlib import Path
from typing import Any

TOURNAMENT = "bench"
BOTS = ("heuristic", "heuristic-b", "random", "random-b")


def _paths() -> list[str]:
    board = f"/api/v1/leaderboard?pool=tournament:{TOURNAMENT}"
    return [board, "/api/v1/bots", f"/api/v1/tournaments/{TOURNAMENT}", "/", f"{board}&method=elo"]


async def _read(base: str, readers: int, seconds: float) -> tuple[list[tuple[str, float]], int]:
    import aiohttp

    latencies: list[tuple[str, float]] = []
    errors = 0
    end = time.perf_counter() + seconds
    paths = _paths()

    async def reader(k: int, session: aiohttp.ClientSession) -> None:
        nonlocal errors
        i = k
        while time.perf_counter() < end:
            start = time.perf_counter()
            path = paths[i % len(paths)]
            async with session.get(base + path) as reply:
                await reply.read()
                if reply.status != 200:
                    errors += 1
            latencies.append((path, time.perf_counter() - start))
            i += 1

    connector = aiohttp.TCPConnector(limit=readers)
    async with aiohttp.ClientSession(connector=connector) as session:
        await asyncio.gather(*(reader(k, session) for k in range(readers)))
    return latencies, errors


def _child(base: str, readers: int, seconds: float, out: Any) -> None:
    out.put(asyncio.run(_read(base, readers, seconds)))


def _in_child(base: str, readers: int, seconds: float) -> tuple[list[tuple[str, float]], int]:
    ctx = mp.get_context("spawn")
    out: Any = ctx.Queue()
    proc = ctx.Process(target=_child, args=(base, readers, seconds, out), daemon=True)
    proc.start()
    try:
        result: tuple[list[tuple[str, float]], int] = out.get(timeout=seconds + 60)
        return result
    finally:
        proc.join(10)


def _p99_ms(values: list[float]) -> float:
    values = sorted(values)
    return 1000 * values[min(len(values) - 1, int(len(values) * 0.99))] if values else float("nan")


async def measure(readers: int, seconds: float) -> dict[str, Any]:
    """The p50 and p99 of ``readers`` readers, and of one reader alone, during a tournament."""
    from belote_bot import HeuristicBot, RandomBot, run_async

    from arena.engine import Ruleset
    from arena.node.run import NodeSettings, running_node
    from arena.queue import open_broker
    from arena.referee.node import Limits
    from arena.tournament import TournamentSpec
    from arena.web import web_for

    stop = asyncio.Event()
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp)
        broker = open_broker(None, data)
        tasks: list[asyncio.Task[None]] = []
        try:
            # the readers stand for browsers at many addresses: this one's reads a second are not bounded
            limits = Limits(read_rate_per_peer=1 << 30, read_burst_per_peer=1 << 30)
            settings = NodeSettings(data_dir=data, capacity=4, poll_s=0.05, limits=limits)
            async with running_node(broker, settings, stop) as running, \
                    web_for(running, "127.0.0.1:0") as site:
                for name, bot in zip(BOTS, (HeuristicBot(1), HeuristicBot(2), RandomBot(3), RandomBot(4)),
                                     strict=True):
                    _, token = running.node.register_bot(name)
                    tasks.append(asyncio.create_task(run_async(bot, running.address, token, 16, name=name,
                                                               stop=stop, all_nodes=False, verbose=False)))
                running.tournaments.create(TournamentSpec(
                    tournament_id=TOURNAMENT, format="round-robin", bots=BOTS,
                    ruleset=Ruleset.from_spec("coinche"), deals=4, rounds=100))
                # the first result, so that the tournament's pool exists (a generous ceiling: a loaded
                # machine plays its first match late)
                deadline = time.monotonic() + 120
                while not await asyncio.to_thread(broker.pools):
                    if time.monotonic() > deadline:
                        raise TimeoutError("no match of the tournament finished within 120 s")
                    await asyncio.sleep(0.1)
                alone_timed, _ = await asyncio.to_thread(_in_child, site.url, 1, seconds / 2)
                many_timed, errors = await asyncio.to_thread(_in_child, site.url, readers, seconds)
                played = len(await asyncio.to_thread(broker.results, TOURNAMENT))
                # its matches stopped now: left to run, they would wait for the bots that leave next
                # (a forfeit after 10 s each), and the node's drain with them
                await asyncio.to_thread(running.tournaments.cancel, TOURNAMENT)
        finally:
            stop.set()
            for t in tasks:
                t.cancel()
            with contextlib.suppress(Exception):
                await asyncio.gather(*tasks, return_exceptions=True)
            broker.close()
    alone = [t for _, t in alone_timed]
    many = [t for _, t in many_timed]
    by_path = {path: round(_p99_ms([t for p, t in many_timed if p == path]), 2) for path in _paths()}
    return {"readers": readers, "requests": len(many), "errors": errors, "matches_during": played,
            "p99_ms_by_path": by_path,
            "api_p50_ms": round(1000 * sorted(many)[len(many) // 2], 2) if many else float("nan"),
            "api_p99_ms": round(_p99_ms(many), 2), "one_reader_p99_ms": round(_p99_ms(alone), 2),
            "ratio_vs_one_reader": round(_p99_ms(many) / _p99_ms(alone), 2)}
