"""Anonymous readers looping on a node, and the honest bots, each in a child process of its own.

Two readers loop while told to (and idle otherwise) until told to stop, each
waiting for its answer before the next call, one on gRPC and one on HTTP, both
from this machine's one address. What they read is their ``kind``:

* ``registry``: ``ListBots`` as an old client asks it, with no page, then
  ``GetBot`` of a random bot; a page of ``/api/v1/bots`` at a random offset,
  then ``/api/v1/bots/NAME``;
* ``cheap``: ``ListMatches``, then ``GetMatch`` of the latest match listed;
  ``/api/v1/leaderboard``, then a page of ``/api/v1/bots``: calls that read
  nothing that grows, each a fraction of a millisecond of the node's time.

The child functions import nothing of the server. :class:`Readers` runs them
from the test's process.
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing as mp
import os
import random
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

#: the bots a test registers: reader targets are drawn from these names
NAME = "reg-{:05d}"
#: what a reader's call may get: an answer, or a refusal past its address's reads
ANSWERED = ("grpc OK", "http 200")
REFUSED = ("grpc RESOURCE_EXHAUSTED", "http 429")


async def grpc_reader(address: str, kind: str, bots: int, go: Any, stop: Any, tally: Counter[str]) -> None:
    import grpc
    from belote.arena.v1 import arena_service_pb2 as apb
    from belote.arena.v1 import arena_service_pb2_grpc as agrpc

    rng = random.Random(1)
    latest = ""
    async with grpc.aio.insecure_channel(address) as channel:
        stub: Any = agrpc.ArenaServiceStub(channel)

        async def list_matches() -> None:
            nonlocal latest
            matches = (await stub.ListMatches(apb.ListMatchesRequest(), timeout=30)).matches
            latest = matches[-1].match_id if matches else latest

        async def get_match() -> None:
            await stub.GetMatch(apb.GetMatchRequest(match_id=latest), timeout=30)

        calls: tuple[Callable[[], Awaitable[Any]], ...] = {
            "registry": (lambda: stub.ListBots(apb.ListBotsRequest(), timeout=30),
                         lambda: stub.GetBot(apb.GetBotRequest(name=NAME.format(rng.randrange(bots))),
                                             timeout=30)),
            "cheap": (list_matches, get_match),
        }[kind]
        while not stop.is_set():
            if not go.is_set():
                await asyncio.sleep(0.01)
                continue
            for call in calls:
                try:
                    await call()
                    tally["grpc OK"] += 1
                except grpc.aio.AioRpcError as e:
                    tally[f"grpc {e.code().name}"] += 1


async def http_reader(url: str, kind: str, bots: int, go: Any, stop: Any, tally: Counter[str]) -> None:
    import aiohttp

    rng = random.Random(2)
    paths: Callable[[], tuple[str, ...]] = {
        "registry": lambda: (f"/api/v1/bots?offset={rng.randrange(bots)}&limit=200",
                             f"/api/v1/bots/{NAME.format(rng.randrange(bots))}"),
        "cheap": lambda: ("/api/v1/leaderboard", f"/api/v1/bots?offset={rng.randrange(bots)}"),
    }[kind]
    async with aiohttp.ClientSession() as http:
        while not stop.is_set():
            if not go.is_set():
                await asyncio.sleep(0.01)
                continue
            for path in paths():
                try:
                    async with http.get(url + path) as reply:
                        await reply.read()
                        tally[f"http {reply.status}"] += 1
                except aiohttp.ClientError as e:
                    tally[f"http {type(e).__name__}"] += 1


def readers_main(address: str, url: str, kind: str, bots: int, cpus: list[int] | None, ready: Any, go: Any,
                 stop: Any, out: Any) -> None:
    """The child: connected and idle once ``ready``; reads while ``go`` is set, until ``stop``; its tally
    on ``out``."""
    if cpus:
        with contextlib.suppress(OSError):
            os.sched_setaffinity(0, cpus)
    with contextlib.suppress(OSError):
        os.nice(19)  # what the reads cost is the node's cost, as if they came from another machine
    import aiohttp  # noqa: F401  (imported before the quiet run: an import takes a core for a while)
    import grpc  # noqa: F401

    tally: Counter[str] = Counter()

    async def main() -> None:
        ready.set()
        await asyncio.gather(grpc_reader(address, kind, bots, go, stop, tally),
                             http_reader(url, kind, bots, go, stop, tally))

    asyncio.run(main())
    out.put(dict(tally))


def honest_main(address: str, tokens: dict[str, str], cpus: list[int] | None) -> None:
    """The child of the two honest bots: heuristic as ``honest-a``, random as ``honest-b``."""
    if cpus:
        with contextlib.suppress(OSError):
            os.sched_setaffinity(0, cpus)
    from belote_bot import HeuristicBot, RandomBot, run_async

    async def main() -> None:
        await asyncio.gather(
            run_async(HeuristicBot(1), address, tokens["honest-a"], 4, name="honest-a", verbose=False),
            run_async(RandomBot(2), address, tokens["honest-b"], 4, name="honest-b", verbose=False))

    asyncio.run(main())


# ------------------------------------------------------------------ in the test's process
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

    def __init__(self, address: str, url: str, kind: str, bots: int, cpus: list[int] | None) -> None:
        ctx = mp.get_context("spawn")
        self._ready, self._go, self._stop = ctx.Event(), ctx.Event(), ctx.Event()
        self._out: Any = ctx.Queue()
        self._proc = ctx.Process(target=readers_main, daemon=True, name=f"{kind}-readers", args=(
            address, url, kind, bots, cpus, self._ready, self._go, self._stop, self._out))
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


def p99(values: list[int]) -> int:
    return values[min(len(values) - 1, int(len(values) * 0.99))]
