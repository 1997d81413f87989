"""Two nodes of one embedded queue keep one registry: what one writes, the other knows at once.

Two ``running_node``s in this process on one sqlite file (the embedded queue's
readers of one file wake each other in-process), raw bot streams over real
gRPC. A bot registered through one node connects to the other at once (its
token is looked for again once the node has caught up), and a token rotated
through one node ends the old token's streams on both within
:data:`~arena.node.bots.CUT_BOUND_S`. tests/cluster/test_token_cut.py does the
same with two processes on Redis. The same holds of the other node's web API
and its pages' sign-in.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import grpc
import pytest
from belote.arena.v1 import arena_service_pb2 as apb

from arena.node.bots import CUT_BOUND_S
from arena.node.run import NodeSettings, RunningNode, running_node
from arena.queue import EmbeddedBroker
from arena.referee.access import AccessPolicy
from arena.referee.registry import digest, new_token
from arena.web import web_for
from tests.referee.arena_helpers import RawStream, arena_stub

pytestmark = pytest.mark.security

ADMIN = new_token("adm")


@contextlib.asynccontextmanager
async def two_nodes(path: Path, private_reads: bool = False,
                    ) -> AsyncIterator[tuple[RunningNode, RunningNode]]:
    access = AccessPolicy(admin_sha256=digest(ADMIN), private_reads=private_reads)
    settings = NodeSettings(poll_s=0.05, heartbeat_s=0.2, drain_s=1.0, access=access)
    with EmbeddedBroker(path) as one, EmbeddedBroker(path) as two:
        async with running_node(one, settings, asyncio.Event()) as a, \
                running_node(two, settings, asyncio.Event()) as b:
            yield a, b


async def welcomed(address: str, token: str) -> RawStream:
    stream = RawStream(address)
    await stream.hello(token)
    while not (await stream.read()).HasField("welcome"):
        pass
    return stream


async def ended(stream: RawStream) -> float:
    """When the node ended ``stream``; infinity if it did not within a few seconds."""
    try:
        assert await stream.status(timeout=CUT_BOUND_S + 4) == grpc.StatusCode.OK
    except TimeoutError:
        return float("inf")
    return time.monotonic()


def test_a_token_made_or_rotated_on_one_node_is_known_or_dead_on_the_other_at_once(tmp_path: Path) -> None:
    async def main() -> list[float]:
        async with two_nodes(tmp_path / "arena.sqlite3") as (a, b):
            async with arena_stub(a.address, ADMIN) as admin:
                old = (await admin.RegisterBot(apb.RegisterBotRequest(name="alpha"))).token
            streams = [await welcomed(b.address, old), await welcomed(a.address, old)]  # b first: just made
            ends = [asyncio.create_task(ended(s)) for s in streams]
            await asyncio.sleep(0.1)
            began = time.monotonic()
            async with arena_stub(a.address, old) as owner:
                new = (await owner.RotateBotToken(apb.RotateBotTokenRequest())).token
            cuts = [await end - began for end in ends]
            mine = await welcomed(b.address, new)
            await mine.close()
            return cuts

    cuts = asyncio.run(asyncio.wait_for(main(), 60))
    assert max(cuts) <= CUT_BOUND_S, cuts


def test_a_token_made_on_one_node_reads_and_signs_in_on_the_other_s_web_at_once(tmp_path: Path) -> None:
    """Both nodes need a credential to read. A bot registered through node A reads node B's API with
    its token, and signs in on B's pages, the moment it has the token: B looks for a token it does
    not know again once it has caught up, as its gRPC edge does. Before, B's web refused a token
    made an instant ago as unknown (and counted it against the address as a wrong guess)."""

    async def main() -> list[tuple[int, int]]:
        async with two_nodes(tmp_path / "arena.sqlite3", private_reads=True) as (a, b), \
                web_for(b, "127.0.0.1:0") as site, aiohttp.ClientSession() as http:
            got = []
            for n in range(10):
                async with arena_stub(a.address, ADMIN) as admin:
                    token = (await admin.RegisterBot(apb.RegisterBotRequest(name=f"bot{n}"))).token
                bearer = {"Authorization": f"Bearer {token}"}
                async with http.get(f"{site.url}/api/v1/bots", headers=bearer) as r:
                    read = r.status
                async with arena_stub(a.address, ADMIN) as admin:
                    token = (await admin.RegisterBot(apb.RegisterBotRequest(name=f"pages{n}"))).token
                async with http.post(f"{site.url}/api/v1/session", json={"token": token},
                                     headers={"Origin": site.url}) as r:
                    got.append((read, r.status))
            return got

    got = asyncio.run(asyncio.wait_for(main(), 60))
    assert got == [(200, 200)] * 10
