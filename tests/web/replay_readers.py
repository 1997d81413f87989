"""Anonymous readers of a finished match, looping as fast as the node answers, in a child process.

Each reader keeps ``loops`` requests going at once from one address, each
reading its whole answer and asking again at once, whatever the answer:

* ``sse``: ``GET /api/v1/matches/ID/events`` (server-sent events) to its end;
* ``get``: ``GET /api/v1/matches/ID`` (its record and replay);
* ``record``: ``GET /api/v1/matches/ID/record`` (the replay page's download);
* ``watch``: gRPC ``WatchMatch`` to its end.

They run in a child process of their own at the lowest priority (as
:mod:`tests.referee.hostile_clients`' attackers do), so that what they cost is
the node's cost, not CPU taken from the honest bots. The tally says how the
reads ended (``ok`` for a whole answer, else the status), and counts the
answers begun (``begun``: the node had its view ready) and what they brought
(``received``: bytes, or WatchMatch messages).
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing as mp
import os
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tests.referee.hostile_clients import OPTIONS, InChild

MODES = ("sse", "get", "record", "watch")


@dataclass(frozen=True)
class Reading:
    mode: str
    #: the node's web site (``http://host:port``) and gRPC address
    url: str
    address: str
    match_id: str
    #: requests going at once, all from the one address
    loops: int = 4


async def _sse(session: Any, plan: Reading, tally: Counter[str]) -> None:
    async with session.get(f"{plan.url}/api/v1/matches/{plan.match_id}/events") as reply:
        if reply.status != 200:
            await reply.read()
            tally[f"http {reply.status}"] += 1
            return
        tail = b""
        async for chunk in reply.content.iter_any():
            if not tail:
                tally["begun"] += 1
            tally["received"] += len(chunk)
            tail = (tail + chunk)[-64:]
        tally["ok" if tail.endswith(b"event: end\ndata: {}\n\n") else "cut"] += 1


async def _body(reply: Any, tally: Counter[str]) -> bytes:
    """The reply's body, a 200's bytes counted as they come (``begun`` at its first): what the readers
    received during a match is what came during it, not the answers that happened to end in it (a
    paced 1.5 MB answer can take longer than the match)."""
    parts: list[bytes] = []
    async for chunk in reply.content.iter_any():
        if reply.status == 200:
            tally["begun"] += not parts
            tally["received"] += len(chunk)
        parts.append(chunk)
    return b"".join(parts)


async def _get(session: Any, plan: Reading, tally: Counter[str]) -> None:
    async with session.get(f"{plan.url}/api/v1/matches/{plan.match_id}") as reply:
        body = await _body(reply, tally)
        whole = reply.status == 200 and b'"record": {' in body
        tally["ok" if whole else f"http {reply.status}"] += 1


async def _record(session: Any, plan: Reading, tally: Counter[str]) -> None:
    async with session.get(f"{plan.url}/api/v1/matches/{plan.match_id}/record") as reply:
        body = await _body(reply, tally)
        whole = reply.status == 200 and body.endswith(b"}")
        tally["ok" if whole else f"http {reply.status}"] += 1


async def _watch(stub: Any, plan: Reading, tally: Counter[str]) -> None:
    import grpc
    from belote.arena.v1 import arena_service_pb2 as apb

    call = stub.WatchMatch(apb.WatchMatchRequest(match_id=plan.match_id))
    last = None
    try:
        async for message in call:
            if last is None:
                tally["begun"] += 1
            tally["received"] += 1
            last = message
    except grpc.aio.AioRpcError as e:
        tally[e.code().name] += 1
        return
    tally["ok" if last is not None and last.HasField("result") else "cut"] += 1


async def read(plan: Reading, stop: Callable[[], bool], tally: Counter[str], progress: Any = None) -> None:
    """Run ``plan.loops`` readers until ``stop()``; ``progress`` gets the answers begun, and what
    they brought."""
    import aiohttp
    import grpc.aio
    from belote.arena.v1 import arena_service_pb2_grpc as agrpc

    async def loop(once: Callable[[], Any]) -> None:
        while True:
            try:
                await once()
            except asyncio.CancelledError:
                raise
            except Exception as e:  # a reset connection: counted, and read again at once
                tally[type(e).__name__] += 1

    connector = aiohttp.TCPConnector(limit=plan.loops)
    timeout = aiohttp.ClientTimeout(total=120)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
        channel = grpc.aio.insecure_channel(plan.address, options=OPTIONS)
        stub = agrpc.ArenaServiceStub(channel)
        once: Callable[[], Any] = {
            "sse": lambda: _sse(session, plan, tally),
            "get": lambda: _get(session, plan, tally),
            "record": lambda: _record(session, plan, tally),
            "watch": lambda: _watch(stub, plan, tally),
        }[plan.mode]
        tasks = [asyncio.ensure_future(loop(once)) for _ in range(plan.loops)]
        try:
            while not stop():
                if progress is not None:
                    progress[0], progress[1] = tally["begun"], tally["received"]
                await asyncio.sleep(0.02)
        finally:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await channel.close(grace=None)


def _child(plan: Reading, progress: Any, ready: Any, go: Any, stop: Any, out: Any) -> None:
    with contextlib.suppress(OSError):
        os.nice(19)
    import aiohttp  # noqa: F401  # imported before ``ready``: the quiet run sees no start-up
    import grpc.aio  # noqa: F401

    ready.set()
    while not go.wait(0.05):
        if stop.is_set():
            out.put({})
            return
    tally: Counter[str] = Counter()
    asyncio.run(read(plan, stop.is_set, tally, progress))
    out.put(dict(tally))


class Readers(InChild):
    """The readers of ``plan`` in a child process, started idle: ``go()`` starts them reading."""

    def __init__(self, plan: Reading) -> None:
        ctx = mp.get_context("spawn")
        self._progress = ctx.Array("q", 2)
        self._ready = ctx.Event()
        self._go = ctx.Event()
        super().__init__(_child, (plan, self._progress, self._ready, self._go), f"readers-{plan.mode}")

    async def ready(self, timeout: float = 60.0) -> None:
        if not await asyncio.to_thread(self._ready.wait, timeout):
            raise TimeoutError("the readers' process did not start")

    def go(self) -> None:
        self._go.set()

    @property
    def begun(self) -> int:
        """Answers begun: the node had its view ready (a finished match's is built once)."""
        value: int = self._progress[0]
        return value

    @property
    def received(self) -> int:
        """Bytes, or WatchMatch messages, received so far."""
        value: int = self._progress[1]
        return value
