"""Anonymous readers of a registry of 5,000 bots do not slow an honest match.

A node of a queue on a real Redis, with its web server and 5,000 registered
bots; two honest SDK bots play coinche matches. Two anonymous readers, in a
child process, loop on ``ListBots`` (as an old client asks it: no page),
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
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import asdict
from typing import Any

import pytest
from belote_bot import HeuristicBot, RandomBot, run_async

from arena.node.run import NodeSettings, running_node
from arena.queue.broker import Broker
from arena.records import MatchRecord
from arena.referee.registry import BotEntry
from arena.web import web_for
from tests.node.registry_readers import NAME, readers_main
from tests.queue.conftest import REDIS_URL, redis_unavailable

pytestmark = [pytest.mark.reliability, pytest.mark.slow]

BOTS = 5000
MATCHES = 2
DEALS = 12
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


class Readers:
    """The readers' child process: started idle, reading from ``go()`` on, stopped on exit."""

    def __init__(self, address: str, url: str) -> None:
        ctx = mp.get_context("spawn")
        self._ready, self._go, self._stop = ctx.Event(), ctx.Event(), ctx.Event()
        self._out: Any = ctx.Queue()
        self._proc = ctx.Process(target=readers_main, daemon=True, name="registry-readers", args=(
            address, url, BOTS, None, self._ready, self._go, self._stop, self._out))
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

    def go(self) -> None:
        self._go.set()


def latencies(records: list[MatchRecord]) -> list[int]:
    return sorted(v for r in records for deal in r.latencies_us for v in deal if v >= 0)


def p99(values: list[int]) -> int:
    return values[min(len(values) - 1, int(len(values) * 0.99))]


def test_readers_of_5000_bots_leave_an_honest_match_its_pace(broker_with_bots: Broker) -> None:
    async def main() -> tuple[list[MatchRecord], list[MatchRecord], dict[str, int]]:
        settings = NodeSettings(poll_s=0.05, heartbeat_s=0.5, lease_s=10.0, drain_s=2.0)
        stop = asyncio.Event()
        async with running_node(broker_with_bots, settings, asyncio.Event()) as running, \
                web_for(running, "127.0.0.1:0") as web:
            node = running.node
            bots = []
            for name, bot in (("honest-a", HeuristicBot(1)), ("honest-b", RandomBot(2))):
                entry, token = node.register_bot(name)
                bots.append(asyncio.create_task(run_async(bot, running.address, token, 4, name=name,
                                                          stop=stop, verbose=False)))
                await asyncio.wait_for(node.link_for(entry).connected_event.wait(), 30)

            async def play() -> list[MatchRecord]:
                return [await node.wait(node.start_match("honest-a", "honest-b", "coinche", deals=DEALS))
                        for _ in range(MATCHES)]

            try:
                readers = Readers(running.address, web.url)
                async with readers.running():
                    await play()  # warm-up
                    quiet = await play()  # the readers' process started, idle
                    readers.go()
                    await asyncio.sleep(1.0)  # the readers under way
                    loud = await play()
            finally:
                stop.set()
                await asyncio.gather(*bots, return_exceptions=True)
            return quiet, loud, readers.tally

    quiet, loud, tally = asyncio.run(asyncio.wait_for(main(), 600))
    q, a = latencies(quiet), latencies(loud)
    print(f"honest p99: quiet {p99(q) / 1000:.2f} ms, with the readers {p99(a) / 1000:.2f} ms "
          f"(max {a[-1] / 1000:.1f} ms) over {len(a)} decisions; the readers' calls: {tally}")
    assert sum(n for k, n in tally.items() if k in ("grpc OK", "http 200")) > 50, tally  # they did read
    assert not [k for k in tally if k not in ("grpc OK", "http 200")], tally
    assert [s for r in loud for s in r.strikes] == []
    assert p99(a) <= max(2 * p99(q), p99(q) + FLOOR_US), (p99(q), p99(a))
