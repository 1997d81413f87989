"""A pool's ladder on a real node (gRPC, the worker, the notice reader, the ladder thread) with real SDK
bots, on the embedded queue and on Redis: ``ladder start`` places every opted-in bot connected, with
no tournament made; a bot connected nowhere is never queued; a tournament made meanwhile plays at once
while the ladder goes on."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator

from belote_bot import HeuristicBot, RandomBot, run_async

from arena.engine.rules import PRESETS
from arena.node.ladder import Ladders
from arena.node.run import NodeSettings, RunningNode, running_node
from arena.queue import Broker
from arena.ratings import ladder_id
from arena.tournament import TournamentSpec, TournamentState
from tests.referee.arena_helpers import until

POOL = "coinche"


@contextlib.asynccontextmanager
async def node_with_bots(broker: Broker, bots: dict[str, int], *, connected: tuple[str, ...],
                         **settings: float) -> AsyncIterator[RunningNode]:
    """A node with ``bots`` registered (name -> seats offered), those of ``connected`` running as SDK
    bots (heuristic and random in turn)."""
    options = {"poll_s": 10.0, "heartbeat_s": 0.2, "lease_s": 10.0, "drain_s": 1.0, "capacity": 4,
               "absent_timeout_s": 3600.0, **settings}
    stop_bots = asyncio.Event()
    tasks: list[asyncio.Task[None]] = []
    async with running_node(broker, NodeSettings(**options), asyncio.Event()) as running:  # type: ignore[arg-type]
        try:
            for i, (name, seats) in enumerate(bots.items()):
                _, token = running.node.register_bot(name)
                if name in connected:
                    bot = HeuristicBot(i) if i % 2 == 0 else RandomBot(i)
                    tasks.append(asyncio.create_task(
                        run_async(bot, running.address, token, seats, name=name, stop=stop_bots)))
            await until(lambda: set(connected) <= set(running.node.connected_bots()), 15,
                        "the bots connected")
            yield running
        finally:
            stop_bots.set()
            await asyncio.gather(*tasks, return_exceptions=True)


def games(broker: Broker) -> dict[str, int]:
    return {bot: n for bot, (_, n) in broker.pool_ratings(POOL).items()}


def test_ladder_start_places_every_connected_bot_and_queues_nothing_for_an_absent_one(broker: Broker) -> None:
    bots = {"north": 2, "east": 2, "south": 2, "west": 2, "ghost": 2}
    here = ("north", "east", "south", "west")

    async def main() -> None:
        async with node_with_bots(broker, bots, connected=here) as running:
            ladders = Ladders(broker)
            for bot in bots:
                await asyncio.to_thread(ladders.add, POOL, bot)
            await asyncio.sleep(0.5)
            assert running.ladder.enqueued == 0  # opted in, the ladder off: nothing
            await asyncio.to_thread(ladders.start, POOL, 1)
            await until(lambda: all(games(broker).get(b, 0) >= 3 for b in here), 60, "three games each")
            assert broker.list_tournaments() == []  # nobody made a tournament
            assert "ghost" not in games(broker) and "ghost" not in broker.waiting_bots()
            # at most the ladder's share of the node's 4 slots at once, and every bot placed in the pool
            capacity = await asyncio.to_thread(running.ladder.capacity)  # it reads the node on the loop
            assert capacity.slots == 4 and running.ladder.slots(capacity) == 2
            status = await asyncio.to_thread(ladders.status, POOL)
            assert status.setting.on and status.bots == sorted(bots) and set(here) <= set(status.ratings)
            # stopped: what is queued plays out, and nothing more is enqueued
            await asyncio.to_thread(ladders.stop, POOL)
            await until(lambda: broker.pending_count(ladder_id(POOL)) == 0, 30, "the last matches")
            made = running.ladder.enqueued
            await asyncio.sleep(1.0)
            assert running.ladder.enqueued == made

    asyncio.run(asyncio.wait_for(main(), 120))


def test_a_tournament_made_while_the_ladder_runs_starts_at_once(broker: Broker) -> None:
    """Each bot offers four seats (two matches at once), the node four slots: the ladder fills two, so
    the tournament's matches find slots free and start while ladder matches are still being played."""
    bots = {"north": 4, "east": 4, "south": 4, "west": 4}

    async def main() -> None:
        async with node_with_bots(broker, bots, connected=tuple(bots)) as running:
            ladders = Ladders(broker)
            for bot in bots:
                await asyncio.to_thread(ladders.add, POOL, bot)
            await asyncio.to_thread(ladders.start, POOL, 2)
            await until(lambda: running.ladder.enqueued >= 4, 30, "the ladder going")
            spec = TournamentSpec(tournament_id="cup", format="round-robin", bots=("north", "east"),
                                  ruleset=PRESETS[POOL], deals=1)
            made_ms = time.time() * 1000  # the referee's clock, which dates each match's start
            ladder_before = running.ladder.enqueued
            await asyncio.to_thread(running.tournaments.create, spec)
            await until(lambda: broker.get_tournament("cup") is not None
                        and broker.get_tournament("cup")[1] is TournamentState.FINISHED,  # type: ignore[index]
                        30, "the tournament finished")
            assert len(broker.results("cup")) == 2
            await until(lambda: running.ladder.enqueued > ladder_before, 30, "the ladder going on")
            # it waited for no ladder match begun after it was made: its first match started before any
            # of those ended (a match's end: its last decision asked). Behind the ladder it would start
            # only once a seat or slot the ladder took back came free, after such a match.
            first = min(r.record.started_ms or 0 for r in broker.results("cup"))
            ends = [(r.record.started_ms or 0) + max((d[-1] for d in r.record.asked_ms if d), default=0)
                    for r in broker.results(ladder_id(POOL)) if (r.record.started_ms or 0) >= made_ms]
            assert all(first <= end for end in ends), (first, sorted(ends))

    asyncio.run(asyncio.wait_for(main(), 90))
