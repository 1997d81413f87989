"""``belote-arena demo --ladder``: the arena running itself, on one machine, in about a minute.

One process starts a referee node on the embedded broker, connects the built-in bots as real gRPC
clients that ask to play the ladder (``ladder=True``), and turns the coinche ladder on: nobody makes a
tournament. The ladder's matchmaking places every bot; meanwhile the bot ``patch`` connects in two
versions with one token, version 1 the random bot and version 2 the heuristic, and the node tests 2
against 1 by an SPRT on the ladder's slots and promotes it. The demo prints the ladder's standings with
their intervals and the versions of ``patch`` with the test's evidence, and with ``--http`` the pages'
addresses (it then serves them until Ctrl-C). Everything is the production path.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from belote_bot import Bot, HeuristicBot, RandomBot, run_async
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from arena.demo import _until_interrupted, ratings_table, stop_bots
from arena.node.ladder import Ladders
from arena.node.run import NodeSettings, RunningNode, running_node
from arena.node.versions import versions_view
from arena.queue import open_broker
from arena.referee.registry import BotEntry
from arena.referee.versions import find
from arena.tournament.sprt import elo_text
from arena.web import web_for

POOL = "coinche"
DEALS = 4
#: the demo stops once every bot has played this many ladder games and the test has decided, or at
#: LONGEST_S
GAMES_EACH = 60
LONGEST_S = 90.0
#: how long the last ladder matches may take to play out once the ladder is off
PLAY_OUT_S = 30.0
#: the versions of the bot whose new version is tested
VERSIONED = "patch"


def ladder_bots() -> dict[str, Bot]:
    return {"heuristic": HeuristicBot(seed=1), "heuristic-b": HeuristicBot(seed=2),
            "random": RandomBot(seed=1), "random-b": RandomBot(seed=2)}


def version(bot: Bot, label: str) -> Bot:
    bot.version = label
    return bot


def _games(running: RunningNode) -> dict[str, int]:
    return {bot: n for bot, (_, n) in running.worker.broker.pool_ratings(POOL).items()}


def _entry(running: RunningNode) -> BotEntry:
    entry = running.node.bot_named(VERSIONED)
    assert entry is not None
    return entry


def _decided(running: RunningNode) -> bool:
    v = find(_entry(running).versions, "2")
    return v is not None and v.state in ("promoted", "rejected", "undecided")


async def run_ladder_demo(data_dir: Path, console: Console, http: str = "", parallel: int = 8) -> int:
    broker = open_broker(None, data_dir)
    stop = asyncio.Event()
    # the ladder is all the demo plays: it may fill every slot (a node's default keeps half for tournaments)
    settings = NodeSettings(data_dir=data_dir, capacity=parallel, poll_s=0.05, ladder_share=1.0)
    started = time.perf_counter()
    tasks: list[asyncio.Task[None]] = []
    try:
        async with running_node(broker, settings, stop) as running:
            node = running.node
            console.print(f"referee node {node.node_id} on {running.address}, embedded queue in {data_dir}")
            site = await running.until_drained.enter_async_context(web_for(running, http)) if http else None
            tokens = {}
            for name in [*ladder_bots(), VERSIONED]:
                _, tokens[name] = await node.register(name)

            def connect(name: str, bot: Bot) -> None:
                tasks.append(asyncio.create_task(run_async(
                    bot, running.address, tokens[name], 4, name=name, stop=stop, all_nodes=False,
                    verbose=False, ladder=True)))

            for name, bot in ladder_bots().items():
                connect(name, bot)
            connect(VERSIONED, version(RandomBot(seed=3), "1"))
            await asyncio.to_thread(Ladders(broker).start, POOL, DEALS)
            console.print(f"the {POOL} ladder is on ({DEALS} deals a match); the built-in bots ask to play "
                          f"it, and {VERSIONED} connects as version 1 (the random bot)")
            while find(_entry(running).versions, "1") is None:
                await asyncio.sleep(0.1)
            connect(VERSIONED, version(HeuristicBot(seed=3), "2"))  # the same token, a second stream
            console.print(f"{VERSIONED} version 2 (the heuristic) connects beside it: the node tests it "
                          f"against version 1")
            with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.fields[what]}"),
                          TimeElapsedColumn(), console=console) as progress:
                bar = progress.add_task("ladder", total=GAMES_EACH * 5, what="")
                while time.perf_counter() - started < LONGEST_S:
                    games = await asyncio.to_thread(_games, running)
                    fewest = min((games.get(b, 0) for b in [*ladder_bots(), VERSIONED]), default=0)
                    v2 = find(_entry(running).versions, "2")
                    state = "waiting" if v2 is None else v2.state
                    progress.update(bar, completed=sum(min(GAMES_EACH, n) for n in games.values()),
                                    what=f"fewest games {fewest}; {VERSIONED} 2: {state}")
                    if fewest >= GAMES_EACH and _decided(running):
                        break
                    await asyncio.sleep(0.3)
            await asyncio.to_thread(Ladders(broker).stop, POOL)
            # what is queued or under way plays out while the bots are still connected
            until = time.perf_counter() + PLAY_OUT_S
            while await asyncio.to_thread(broker.pending_count) and time.perf_counter() < until:
                await asyncio.sleep(0.2)
            await node.flush_version_games()  # each version's games, counted in the registry
            board = await asyncio.to_thread(running.rankings.leaderboard, POOL, "bt", 0, 50)
            console.print(ratings_table(board))
            view = await asyncio.to_thread(versions_view, _entry(running), running.tournaments)
            table = Table(title=f"Versions of {VERSIONED}")
            for col in ("version", "state", "how", "games", "test"):
                table.add_column(col, justify="right" if col == "games" else "left", no_wrap=col != "test")
            for v in view.versions:
                test = ""
                if v.test:
                    elo = "" if v.elo is None else f", {elo_text(v.elo, v.elo_low, v.elo_high)}"
                    aside = f" ({v.set_aside} set aside)" if v.set_aside else ""
                    ended = v.decision or ("under way" if v.state == "testing" else "no decision")
                    test = f"vs {v.against}: {ended}, LLR {v.llr:.2f}, {v.pairs} pairs{aside}{elo}"
                table.add_row(v.version, v.state, v.how or "-", str(v.games), test)
            console.print(table)
            if view.test is not None:
                t = view.test
                elo = "" if t.elo is None else f", {elo_text(t.elo, t.elo_low, t.elo_high)}"
                console.print(f"the SPRT {t.tournament_id}: LLR {t.llr:.2f} against the bounds "
                              f"[{t.lower:.2f}, {t.upper:.2f}] after {t.pairs} pairs{elo} "
                              f"(H0: {t.elo0:g} Elo, H1: {t.elo1:g})")
            console.print(f"{time.perf_counter() - started:.0f} s")
            if site is not None:
                console.print(f"the ladder: {site.url}/ladders/{POOL}   the versions of {VERSIONED}: "
                              f"{site.url}/bots/{VERSIONED}/versions")
                console.print(f"still serving the pages on {site.url}/ : Ctrl-C to stop")
                await _until_interrupted()
    finally:
        await stop_bots(stop, tasks)
        broker.close()
    return 0


def main(data_dir: str, http: str = "") -> int:
    from arena.referee.serve import install_uvloop

    install_uvloop()
    path = Path(data_dir) / time.strftime("demo-ladder-%Y%m%d-%H%M%S")
    return asyncio.run(run_ladder_demo(path, Console(), http=http))
