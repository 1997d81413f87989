"""Bots that opt in to the ladder by themselves: the SDK's ``run_async(..., ladder=True)`` sends it in
its Hello, and a real node with a queue (gRPC, the ladder thread, the embedded queue and Redis) opts the
bot in to every pool whose ladder is on while it is connected, started before it came or after; a bot
that did not ask is left out; an admin's ``ladder remove`` holds across the bot's reconnection, until
the admin adds it back. A node without a queue takes the flag and does nothing with it."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from belote_bot import HeuristicBot, RandomBot, run_async
from belote_bot.client import Client

from arena.node.ladder import Ladders
from arena.node.run import NodeSettings, RunningNode, running_node
from arena.queue import Broker
from arena.referee.node import NodeConfig
from tests.referee.arena_helpers import arun, connect_client, link_of, node_server, until

POOL = "coinche"


class Bots:
    """SDK bots on a running node, each started and stopped on its own (a reconnection is a stop and a
    new start with the same token)."""

    def __init__(self, running: RunningNode) -> None:
        self.running = running
        self.tokens: dict[str, str] = {}
        self.runs: dict[str, tuple[asyncio.Event, asyncio.Task[None]]] = {}

    async def start(self, name: str, *, ladder: bool, seats: int = 2,
                    registered_ladder: bool = False) -> None:
        if name not in self.tokens:
            self.tokens[name] = self.running.node.register_bot(name, registered_ladder)[1]
        stop = asyncio.Event()
        bot = HeuristicBot(len(self.runs)) if len(self.runs) % 2 == 0 else RandomBot(len(self.runs))
        task = asyncio.create_task(run_async(bot, self.running.address, self.tokens[name], seats, name=name,
                                             stop=stop, ladder=ladder, verbose=False))
        self.runs[name] = (stop, task)
        await until(lambda: name in self.running.node.connected_bots(), 15, f"{name} connected")

    async def stop(self, name: str) -> None:
        stop, task = self.runs.pop(name)
        stop.set()
        await asyncio.wait_for(task, 10)
        await until(lambda: name not in self.running.node.connected_bots(), 15, f"{name} gone")

    async def stop_all(self) -> None:
        for name in list(self.runs):
            await self.stop(name)


@contextlib.asynccontextmanager
async def node_and_bots(broker: Broker) -> AsyncIterator[tuple[RunningNode, Bots]]:
    settings = NodeSettings(poll_s=10.0, heartbeat_s=0.2, lease_s=10.0, drain_s=1.0, capacity=4,
                            absent_timeout_s=3600.0)
    async with running_node(broker, settings, asyncio.Event()) as running:
        bots = Bots(running)
        try:
            yield running, bots
        finally:
            await bots.stop_all()


def opted(broker: Broker, pool: str = POOL) -> list[str]:
    return broker.ladder_bots(pool)


def test_bots_that_ask_are_opted_in_to_the_ladders_on_and_play_them(broker: Broker) -> None:
    async def main() -> None:
        async with node_and_bots(broker) as (_, bots):
            ladders = Ladders(broker)
            await asyncio.to_thread(ladders.start, POOL, 1)  # on before the bots come
            await bots.start("north", ladder=True)
            await bots.start("east", ladder=True)
            await bots.start("south", ladder=False)  # did not ask: left out
            await until(lambda: opted(broker) == ["east", "north"], 15, "the two opted in")
            # the two play ladder matches against each other, rated in the pool
            await until(lambda: all(broker.pool_ratings(POOL).get(b, (0.0, 0))[1] >= 2
                                    for b in ("north", "east")), 60, "two ladder games each")
            assert "south" not in broker.pool_ratings(POOL)
            # a ladder started while they are connected takes them too (the order does not matter)
            assert opted(broker, "classic") == []
            await asyncio.to_thread(ladders.start, "classic", 1)
            await until(lambda: opted(broker, "classic") == ["east", "north"], 15, "opted in to classic")
            assert opted(broker) == ["east", "north"] and broker.list_tournaments() == []
            await asyncio.to_thread(ladders.stop, POOL)
            await asyncio.to_thread(ladders.stop, "classic")

    arun(main(), 120)


def test_a_bot_that_asked_at_its_registration_is_opted_in_whenever_it_connects(broker: Broker) -> None:
    async def main() -> None:
        async with node_and_bots(broker) as (running, bots):
            await asyncio.to_thread(Ladders(broker).start, POOL, 1)
            await bots.start("north", ladder=False, registered_ladder=True)  # no flag in its Hello
            await bots.start("east", ladder=False)
            await until(lambda: opted(broker) == ["north"], 15, "the bot that asked at its registration")
            entry = running.node.bot_named("north")
            assert entry is not None and entry.ladder and '"ladder": true' in entry.to_json()
            assert '"ladder"' not in running.node.bot_named("east").to_json()  # type: ignore[union-attr]
            await asyncio.to_thread(Ladders(broker).stop, POOL)

    arun(main(), 60)


def test_an_admins_removal_holds_across_a_reconnection_until_the_admin_adds_it_back(broker: Broker) -> None:
    async def main() -> None:
        async with node_and_bots(broker) as (_, bots):
            ladders = Ladders(broker)
            await asyncio.to_thread(ladders.start, POOL, 1)
            await bots.start("north", ladder=True)
            await until(lambda: opted(broker) == ["north"], 15, "north opted in")
            assert await asyncio.to_thread(ladders.remove, POOL, "north")  # the admin takes it out
            await bots.stop("north")
            # a bot that asks, opted in: the loop has looked while north was away (it forgot north)
            await bots.start("east", ladder=True)
            await until(lambda: "east" in opted(broker), 15, "east opted in")
            await bots.start("north", ladder=True)  # it comes back, asking again
            # another one opted in: the loop has looked since north came back, and asked for it
            await bots.start("west", ladder=True)
            await until(lambda: "west" in opted(broker), 15, "west opted in")
            assert opted(broker) == ["east", "west"]
            await asyncio.sleep(0.5)  # and a later look does not put it back either
            assert opted(broker) == ["east", "west"]
            # the admin's add clears the mark: in again, and it stays in across its next reconnection
            assert await asyncio.to_thread(ladders.add, POOL, "north")
            await bots.stop("north")
            await bots.start("north", ladder=True)
            assert opted(broker) == ["east", "north", "west"]
            await asyncio.to_thread(ladders.stop, POOL)

    arun(main(), 90)


def test_a_node_without_a_queue_takes_the_flag_and_does_nothing_with_it() -> None:
    """Its Hello is welcomed as any other (no ladder to join: the flag is only kept on the link)."""
    async def main() -> None:
        async with node_server(NodeConfig()) as (node, address):
            _, token = node.register_bot("asking")
            client = Client(HeuristicBot(1), address, token, 2, name="asking", ladder=True, verbose=False)
            stop = asyncio.Event()
            task = asyncio.create_task(client.run(stop))
            plain = await connect_client(node, address, RandomBot(2), "plain", concurrency=2)
            await until(lambda: client.welcome is not None, 10, "asking's Welcome")
            assert link_of(node, "asking").ladder and not link_of(node, "plain").ladder
            assert node.ladder_bots() == frozenset({"asking"})
            assert sorted(node.connected_bots()) == ["asking", "plain"]
            stop.set()
            await asyncio.wait_for(task, 10)
            await plain.disconnect()
            # gone: no longer counted, once the node has seen its stream end (it hears it a moment
            # after the bot's side closes)
            await until(lambda: node.ladder_bots() == frozenset(), 10, "asking's stream to end here")

    arun(main(), 30)
