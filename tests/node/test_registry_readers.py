"""Anonymous readers of a registry of 5,000 bots do not slow an honest match.

A node of a queue on a real Redis, with its web server and 5,000 registered
bots; two honest SDK bots, in a child process, play coinche matches. Two
anonymous readers, in another, loop on ``ListBots`` (as an old client asks it: no page),
``GetBot``, ``/api/v1/bots`` pages and ``/api/v1/bots/NAME``, each waiting for
its answer before the next call. The node reads the registry from memory, a
page at a time, so the honest p99 stays within 2x of the quiet run's (or 5 ms
of it, what a loaded two-core machine moves by itself: see
tests/referee/test_hostile.py). Before, every read parsed every bot's JSON
on the event loop (40-64 ms a call): a 30-deal match went from 0.6 s to 101 s.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import multiprocessing as mp
import os
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import asdict
from typing import Any

import pytest

from arena.node.run import NodeSettings, running_node
from arena.queue.broker import Broker
from arena.records import MatchRecord
from arena.referee.registry import BotEntry
from arena.web import web_for
from tests.node.registry_readers import NAME, honest_main, readers_main
from tests.queue.conftest import REDIS_URL, redis_unavailable

pytestmark = [pytest.mark.reliability, pytest.mark.slow]

BOTS = 5000
#: quiet and read matches played in turn
ROUNDS = 3
DEALS = 10
#: the absolute slack on the honest p99 (as tests/referee/test_hostile.py's)
FLOOR_US = 5_000


@pytest.fixture
def broker_with_bots() -> Iterator[Broker]:
    """A Redis broker under a prefix of its own holding BOTS registered bots."""
    why = redis_unavailable()
    if why:
        pytest.skip(why)
    import redis

    from arena.queue.redis_broker import RedisBroker

    prefix = f"test-arena-{uuid.uuid4().hex[:12]}"
    broker = RedisBroker(REDIS_URL, prefix=prefix)
    try:
        for i in range(BOTS):
            entry = BotEntry(bot_id=f"bot-r{i:05d}", name=NAME.format(i), token_sha256=uuid.uuid4().hex * 2)
            broker.add_bot(entry.name, json.dumps(asdict(entry)))
        yield broker
    finally:
        broker.close()
        client = redis.Redis.from_url(REDIS_URL)
        try:
            own = list(client.scan_iter(match=f"{prefix}:*", count=1000))
            for i in range(0, len(own), 1000):
                client.delete(*own[i:i + 1000])
        finally:
            client.close()


@contextlib.contextmanager
def node_on_one_cpu() -> Iterator[list[int] | None]:
    """This process (the node) on the first CPU for the block, as bench/trust.py runs it; the other
    CPUs for the children (the honest bots, the readers), so that what the reads cost is the node's
    own; None (no pinning) on a machine of one CPU."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        yield None
        return
    os.sched_setaffinity(0, cpus[:1])
    try:
        yield cpus[1:]
    finally:
        os.sched_setaffinity(0, cpus)


class Readers:
    """The readers' child process: started idle, reading while ``reading(True)``, stopped on exit."""

    def __init__(self, address: str, url: str, cpus: list[int] | None) -> None:
        ctx = mp.get_context("spawn")
        self._ready, self._go, self._stop = ctx.Event(), ctx.Event(), ctx.Event()
        self._out: Any = ctx.Queue()
        self._proc = ctx.Process(target=readers_main, daemon=True, name="registry-readers", args=(
            address, url, BOTS, cpus, self._ready, self._go, self._stop, self._out))
        self.tally: dict[str, int] = {}

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[Readers]:
        self._proc.start()
        try:
            assert await asyncio.to_thread(self._ready.wait, 60), "the readers' process did not start"
            yield self
        finally:
            self._stop.set()
            with contextlib.suppress(Exception):
                self.tally = await asyncio.to_thread(self._out.get, True, 60)
            await asyncio.to_thread(self._proc.join, 10)
            if self._proc.is_alive():
                self._proc.kill()

    def reading(self, on: bool) -> None:
        (self._go.set if on else self._go.clear)()


def latencies(records: list[MatchRecord]) -> list[int]:
    return sorted(v for r in records for deal in r.latencies_us for v in deal if v >= 0)


def p99(values: list[int]) -> int:
    return values[min(len(values) - 1, int(len(values) * 0.99))]


def test_readers_of_5000_bots_leave_an_honest_match_its_pace(broker_with_bots: Broker) -> None:
    async def main() -> tuple[list[MatchRecord], list[MatchRecord], dict[str, int]]:
        settings = NodeSettings(poll_s=0.05, heartbeat_s=0.5, lease_s=10.0, drain_s=2.0)
        async with running_node(broker_with_bots, settings, asyncio.Event()) as running, \
                web_for(running, "127.0.0.1:0") as web:
            node = running.node
            tokens = {name: (await node.register(name))[1] for name in ("honest-a", "honest-b")}
            honest = mp.get_context("spawn").Process(target=honest_main, args=(running.address, tokens, cpus),
                                                     daemon=True, name="honest-bots")
            honest.start()
            for name in tokens:
                entry = node.bot_named(name)
                assert entry is not None
                await asyncio.wait_for(node.link_for(entry).connected_event.wait(), 60)

            async def play() -> MatchRecord:
                return await node.wait(node.start_match("honest-a", "honest-b", "coinche", deals=DEALS))

            try:
                readers = Readers(running.address, web.url, cpus)
                quiet, loud = [], []
                async with readers.running():
                    await play()  # warm-up
                    # quiet and read matches in turn, so that the machine's other load weighs on both
                    for _ in range(ROUNDS):
                        quiet.append(await play())  # the readers connected, idle
                        readers.reading(True)
                        await asyncio.sleep(0.3)  # the readers under way
                        loud.append(await play())
                        readers.reading(False)
            finally:
                honest.terminate()
                await asyncio.to_thread(honest.join, 10)
            return quiet, loud, readers.tally

    with node_on_one_cpu() as cpus:
        quiet, loud, tally = asyncio.run(asyncio.wait_for(main(), 600))
    q, a = latencies(quiet), latencies(loud)
    print(f"honest p99: quiet {p99(q) / 1000:.2f} ms, with the readers {p99(a) / 1000:.2f} ms "
          f"(max {a[-1] / 1000:.1f} ms) over {len(a)} decisions; the readers' calls: {tally}")
    assert sum(n for k, n in tally.items() if k in ("grpc OK", "http 200")) > 50, tally  # they did read
    assert not [k for k in tally if k not in ("grpc OK", "http 200")], tally
    assert [s for r in loud for s in r.strikes] == []
    assert p99(a) <= max(2 * p99(q), p99(q) + FLOOR_US), (p99(q), p99(a))
