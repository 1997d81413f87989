"""Rotating or revoking a token takes effect at once on every node of a cluster.

Two ``belote-arena serve`` nodes on one real Redis. A token stolen and used
on both nodes is rotated (or its bot revoked) through the first node: the
streams opened with it end on both within :data:`~arena.node.bots.CUT_BOUND_S`,
no node seats the bot on them, and the owner's stream with the new token is
welcomed on both (it takes over from a stream of the old token, never
``ALREADY_EXISTS``). Before, the thief's stream stayed up on the other node,
answering and seated in new matches, and the owner was refused.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import grpc
import pytest
from belote.arena.v1 import arena_service_pb2 as apb

from arena.node.bots import CUT_BOUND_S
from tests.cluster.procs import ADMIN_TOKEN, Procs, redis_url, register_bots
from tests.referee.arena_helpers import RawStream, arena_stub

pytestmark = [pytest.mark.security, pytest.mark.slow]


async def welcomed(address: str, token: str) -> RawStream:
    """A bot stream opened with ``token``, once the node has welcomed it."""
    stream = RawStream(address)
    await stream.hello(token, concurrency=4)
    while not (await stream.read(timeout=10)).HasField("welcome"):
        pass
    return stream


async def ended_at(stream: RawStream) -> float:
    """When the node ended ``stream`` (it is read meanwhile, as a bot would); infinity if it did not
    within a few seconds."""
    try:
        await stream.status(timeout=CUT_BOUND_S + 4)
    except TimeoutError:
        return float("inf")
    return time.monotonic()


async def start_code(address: str, team0: str, team1: str) -> grpc.StatusCode:
    async with arena_stub(address, ADMIN_TOKEN) as admin:
        try:
            await admin.StartMatch(apb.StartMatchRequest(team0_bot=team0, team1_bot=team1, deals=1))
        except grpc.aio.AioRpcError as e:
            return e.code()
    return grpc.StatusCode.OK


async def cut_within(streams: list[RawStream], what: Any) -> list[float]:
    """Do ``what()`` and return how long after it began each stream ended."""
    ends = [asyncio.create_task(ended_at(s)) for s in streams]
    await asyncio.sleep(0.2)  # every stream is being read
    began = time.monotonic()
    await what()
    return [round(await end - began, 3) for end in ends]


def test_a_rotated_token_s_streams_end_on_every_node_and_the_new_one_takes_over(
        procs: Procs, own_db: tuple[Any, int], tmp_path: Path) -> None:
    _, db = own_db
    one, two = procs.nodes(2, tmp_path, redis=redis_url(db))
    tokens = register_bots(one.address, ["alpha"])

    async def main() -> tuple[list[float], float]:
        stolen = [await welcomed(one.address, tokens["alpha"]), await welcomed(two.address, tokens["alpha"])]
        new: list[str] = []

        async def rotate() -> None:
            async with arena_stub(one.address, tokens["alpha"]) as owner:
                new.append((await owner.RotateBotToken(apb.RotateBotTokenRequest())).token)

        cuts = await cut_within(stolen, rotate)
        # the owner's stream with the new token is welcomed on both nodes, at once
        began = time.monotonic()
        mine = [await welcomed(two.address, new[0]), await welcomed(one.address, new[0])]
        took = time.monotonic() - began
        for s in stolen + mine:
            await s.close()
        return cuts, took

    cuts, took = asyncio.run(asyncio.wait_for(main(), 60))
    print(f"the stolen token's streams ended {cuts} s after the rotation; "
          f"the owner's welcomed in {took:.2f} s")
    assert max(cuts) <= CUT_BOUND_S, cuts


def test_a_revoked_bot_s_streams_end_on_every_node_and_no_node_seats_it(
        procs: Procs, own_db: tuple[Any, int], tmp_path: Path) -> None:
    _, db = own_db
    one, two = procs.nodes(2, tmp_path, redis=redis_url(db))
    tokens = register_bots(one.address, ["alpha", "beta"])

    async def main() -> tuple[list[float], grpc.StatusCode, list[apb.BotInfo]]:
        alpha = [await welcomed(one.address, tokens["alpha"]), await welcomed(two.address, tokens["alpha"])]
        beta = [await welcomed(one.address, tokens["beta"]), await welcomed(two.address, tokens["beta"])]

        async def revoke() -> None:
            async with arena_stub(one.address, ADMIN_TOKEN) as admin:
                await admin.RevokeBot(apb.RevokeBotRequest(name="beta"))

        cuts = await cut_within(beta, revoke)
        seated = await start_code(two.address, "alpha", "beta")
        async with arena_stub(two.address) as anyone:
            listed = list((await anyone.ListBots(apb.ListBotsRequest())).bots)
        again = RawStream(two.address)
        await again.hello(tokens["beta"])
        assert await again.status() == grpc.StatusCode.UNAUTHENTICATED
        for s in [*alpha, again]:
            await s.close()
        return cuts, seated, listed

    cuts, seated, listed = asyncio.run(asyncio.wait_for(main(), 60))
    print(f"the revoked bot's streams ended {cuts} s after the revocation")
    assert max(cuts) <= CUT_BOUND_S, cuts
    assert seated == grpc.StatusCode.FAILED_PRECONDITION  # the other node does not seat it
    beta = next(b for b in listed if b.name == "beta")
    assert beta.revoked and not beta.connected
