"""Anonymous readers of a node's bot registry, and the honest bots, each in a child process of its own.

Two readers loop while told to (and idle otherwise) until told to stop, each
waiting for its answer before the next call: one on gRPC (``ListBots`` as an old client asks it, with no page,
then ``GetBot`` of a random bot), one on HTTP (a page of ``/api/v1/bots`` at a
random offset, then ``/api/v1/bots/NAME``). They import nothing of the server.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
from collections import Counter
from typing import Any

#: the bots a test registers: reader targets are drawn from these names
NAME = "reg-{:05d}"


async def grpc_reader(address: str, bots: int, go: Any, stop: Any, tally: Counter[str]) -> None:
    import grpc
    from belote.arena.v1 import arena_service_pb2 as apb
    from belote.arena.v1 import arena_service_pb2_grpc as agrpc

    rng = random.Random(1)
    async with grpc.aio.insecure_channel(address) as channel:
        stub = agrpc.ArenaServiceStub(channel)
        while not stop.is_set():
            if not go.is_set():
                await asyncio.sleep(0.01)
                continue
            for call in (lambda: stub.ListBots(apb.ListBotsRequest(), timeout=30),
                         lambda: stub.GetBot(apb.GetBotRequest(name=NAME.format(rng.randrange(bots))),
                                             timeout=30)):
                try:
                    await call()
                    tally["grpc OK"] += 1
                except grpc.aio.AioRpcError as e:
                    tally[f"grpc {e.code().name}"] += 1


async def http_reader(url: str, bots: int, go: Any, stop: Any, tally: Counter[str]) -> None:
    import aiohttp

    rng = random.Random(2)
    async with aiohttp.ClientSession() as http:
        while not stop.is_set():
            if not go.is_set():
                await asyncio.sleep(0.01)
                continue
            for path in (f"/api/v1/bots?offset={rng.randrange(bots)}&limit=200",
                         f"/api/v1/bots/{NAME.format(rng.randrange(bots))}"):
                try:
                    async with http.get(url + path) as reply:
                        await reply.read()
                        tally[f"http {reply.status}"] += 1
                except aiohttp.ClientError as e:
                    tally[f"http {type(e).__name__}"] += 1


def readers_main(address: str, url: str, bots: int, cpus: list[int] | None, ready: Any, go: Any, stop: Any,
                 out: Any) -> None:
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
        await asyncio.gather(grpc_reader(address, bots, go, stop, tally),
                             http_reader(url, bots, go, stop, tally))

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
