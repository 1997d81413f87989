"""A node for the command line's tests: in this process, on its own event loop thread, on the
embedded queue, with bots registered (and connected, if asked). The command line talks to it over
gRPC from the test's thread, exactly as from another process.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from belote_bot import RandomBot, run_async

from arena.node.run import NodeSettings, running_node
from arena.queue import EmbeddedBroker
from arena.referee.access import AccessPolicy
from arena.referee.node import Limits
from arena.referee.registry import digest, new_token
from tests.referee.arena_helpers import until

#: the admin credential of the nodes these tests start
ADMIN = new_token("adm")


@dataclass
class NodeThread:
    address: str
    tokens: dict[str, str]


@contextmanager
def node_with_bots(tmp_path: Path, bots: tuple[str, ...] = ("a", "b", "c"), connect: bool = False,
                   limits: Limits | None = None) -> Iterator[NodeThread]:
    """A node on an embedded queue in a thread of its own, with ``bots`` registered (and connected)."""
    ready = threading.Event()
    stop_box: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = []
    out: list[NodeThread] = []
    failed: list[BaseException] = []

    async def serve() -> None:
        stop = asyncio.Event()
        stop_box.append((asyncio.get_running_loop(), stop))
        settings = NodeSettings(data_dir=tmp_path / "node", poll_s=0.05, heartbeat_s=0.2,
                                access=AccessPolicy(admin_sha256=digest(ADMIN)), limits=limits or Limits())
        with EmbeddedBroker(tmp_path / "queue.sqlite3") as broker:
            async with running_node(broker, settings, stop) as node:
                tokens = {name: node.node.register_bot(name)[1] for name in bots}
                tasks = []
                if connect:
                    tasks = [asyncio.create_task(run_async(RandomBot(i), node.address, tokens[n], 4,
                                                           stop=stop, all_nodes=False, verbose=False))
                             for i, n in enumerate(bots)]
                    await until(lambda: all(b.connected for b in node.node.bots()), 10, "the bots")
                out.append(NodeThread(node.address, tokens))
                ready.set()
                await stop.wait()
                await asyncio.gather(*tasks, return_exceptions=True)

    def thread() -> None:
        try:
            asyncio.run(serve())
        except BaseException as e:  # the test thread reports it
            failed.append(e)
            ready.set()

    t = threading.Thread(target=thread, daemon=True)
    t.start()
    assert ready.wait(30), "the node did not start"
    if failed:
        raise failed[0]
    try:
        yield out[0]
    finally:
        loop, stop = stop_box[0]
        loop.call_soon_threadsafe(stop.set)
        t.join(30)
