"""Two nodes on one Redis play one tournament: a scrape of each, taken while matches run, passes
``promtool check metrics``, and together they count every match once.
"""

from __future__ import annotations

import asyncio
import functools
import shutil
import subprocess
import uuid
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from belote_bot import HeuristicBot, RandomBot, run_async

from arena.node.run import NodeSettings, RunningNode, running_node
from arena.queue.redis_broker import RedisBroker
from arena.referee.access import AccessPolicy
from arena.referee.registry import digest
from arena.web import web_for
from tests.cluster.procs import wait_for
from tests.node.test_metrics import samples, scrape, total
from tests.node.test_tournament_trust import ADMIN, create
from tests.queue.conftest import REDIS_URL, Store, redis_unavailable
from tests.referee.arena_helpers import DelayBot, arena_stub, arun, until

TOURNAMENT = "two-nodes"
BOTS = ("alpha", "beta", "gamma")

pytestmark = pytest.mark.slow


@asynccontextmanager
async def cluster(prefix: str) -> AsyncIterator[list[tuple[RunningNode, str]]]:
    """Two nodes sharing one Redis (each with its own broker client, as on two machines), each with
    its web server: (the node, its site's URL)."""
    async with AsyncExitStack() as stack:
        out = []
        for _ in range(2):
            broker = RedisBroker(REDIS_URL, prefix=prefix)
            stack.callback(broker.close)
            settings = NodeSettings(poll_s=0.05, heartbeat_s=0.1, lease_s=5.0, drain_s=1.0, capacity=1,
                                    access=AccessPolicy(admin_sha256=digest(ADMIN)))
            running = await stack.enter_async_context(running_node(broker, settings, asyncio.Event()))
            site = await stack.enter_async_context(web_for(running, "127.0.0.1:0"))
            out.append((running, site.url))
        yield out


def test_a_two_node_tournament_scrapes_clean_on_both_nodes() -> None:
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.skip("promtool is not installed (Debian's prometheus package): the lint cannot run")
    why = redis_unavailable()
    if why:
        pytest.skip(why)
    store = Store("redis", Path("unused"), f"test-arena-{uuid.uuid4().hex[:12]}")
    scrapes: list[str] = []

    async def main() -> list[str]:
        stop = asyncio.Event()
        async with cluster(store.prefix) as nodes:
            (first, _), (second, _) = nodes
            tasks: list[asyncio.Task[None]] = []
            for i, name in enumerate(BOTS):
                _, token = first.node.register_bot(name)  # the registry is shared through Redis
                bot: Any = DelayBot(0.01, HeuristicBot(i) if i == 0 else RandomBot(i))
                for running in (first, second):  # a bot connects to every node
                    tasks.append(asyncio.create_task(run_async(
                        bot, running.address, token, 8, stop=stop, all_nodes=False, verbose=False)))
            await until(lambda: all(sum(b.connected for b in r.node.bots()) == 3 for r, _ in nodes), 20,
                        "the bots on both nodes")
            async with arena_stub(first.address, ADMIN) as admin:
                await create(admin, tournament_id=TOURNAMENT, format="round-robin", bots=list(BOTS),
                             ruleset="classic", deals=2, rounds=2)
            def playing(running: RunningNode) -> bool:
                return any(s.state.value == "running" for s in running.node.summaries())

            for running, url in nodes:  # a scrape of each node while it plays a match
                await until(functools.partial(playing, running), 30, "a match on each node")
                scrapes.append(await asyncio.to_thread(scrape, url))
            broker = first.worker.broker
            await until(lambda: len(broker.results(TOURNAMENT)) == 12, 90, "the tournament's 12 matches")
            # each node counts the live nodes by their heartbeats, which a loaded machine may delay past
            # their time for a moment (a six-worker run saw one node count one): read again, for up to
            # 30 s, until both count two; a node that never sees the other still fails
            def both_live() -> list[str] | None:
                texts = [scrape(url) for _, url in nodes]
                live = all(total(samples(t), "belote_arena_live_nodes") == 2 for t in texts)
                return texts if live else None

            after = await asyncio.to_thread(wait_for, "each node to count both live", both_live, 30, 0.5)
            stop.set()
            await asyncio.gather(*tasks, return_exceptions=True)
            return after

    try:
        after = arun(main(), timeout=150)
    finally:
        store.cleanup()
    for text in scrapes + after:
        checked = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True, text=True,
                                 timeout=30, check=False)
        assert checked.returncode == 0 and not checked.stdout.strip() and not checked.stderr.strip(), (
            checked.stdout + checked.stderr)
    # the two nodes shared the work, and counted each result once between them
    written = [total(samples(text), "belote_arena_results_written_total") for text in after]
    assert all(w > 0 for w in written) and sum(written) == 12, written
    assert all(total(samples(text), "belote_arena_live_nodes") == 2 for text in after)
