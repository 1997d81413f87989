"""Rotating or revoking a token takes effect at once on every node of a cluster.

Two ``belote-arena serve`` nodes on one real Redis. A token stolen and used
on both nodes is rotated (or its bot revoked) through the first node: the
streams opened with it end on both within :data:`~arena.node.bots.CUT_BOUND_S`,
no node seats the bot on them, and the owner's stream with the new token is
welcomed on both (it takes over from a stream of the old token, never
``ALREADY_EXISTS``). Before, the thief's stream stayed up on the other node,
answering and seated in new matches, and the owner was refused. The same holds of the web's
sessions a browser opened with the token, on each node's pages.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import aiohttp
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


# ------------------------------------------------------------- the web's sessions
SESSION = "/api/v1/session"
COOKIE = "belote_read"


async def signed_in(http: aiohttp.ClientSession, url: str, token: str) -> str:
    """A browser's session on the node at ``url``, opened with ``token`` from the node's own page."""
    async with http.post(url + SESSION, json={"token": token}, headers={"Origin": url}) as reply:
        assert reply.status == 200, await reply.text()
        found = reply.cookies.get(COOKIE)
        assert found is not None and found.value
        return found.value


async def reads(http: aiohttp.ClientSession, url: str, session: str) -> int:
    async with http.get(url + "/api/v1/bots", headers={"Cookie": f"{COOKIE}={session}"}) as reply:
        await reply.read()
        return reply.status


async def ended_after(http: aiohttp.ClientSession, url: str, session: str, began: list[float]) -> float:
    """How long after ``began[0]`` (set once the change is under way) the session stopped reading
    (it is read meanwhile, as a browser's page would): when the first read refused was sent, since a
    refusal's answer is held ``--refusal-hold`` (1 s) before it comes; infinity if it still read a
    few seconds on."""
    while not began:
        await asyncio.sleep(0.005)
    while time.monotonic() - began[0] < CUT_BOUND_S + 4:
        sent = time.monotonic()
        if await reads(http, url, session) == 401:
            return round(sent - began[0], 3)
        await asyncio.sleep(0.01)
    return float("inf")


def test_a_rotated_or_revoked_token_s_web_sessions_end_on_every_node(
        procs: Procs, own_db: tuple[Any, int], tmp_path: Path) -> None:
    """A browser signed in with a bot's token (on each node of the cluster, which keeps its own
    sessions) reads nothing once the token is rotated or the bot revoked through one node: on every
    node within the bound of a stream's cut. Before, the sessions read on for their 12 hours."""
    _, db = own_db
    one, two = procs.nodes(2, tmp_path, redis=redis_url(db), http="127.0.0.1:0", args=["--private-reads"])
    tokens = register_bots(one.address, ["alpha", "beta"])
    urls = [one.web_url, two.web_url]

    async def main() -> tuple[list[float], list[float], list[int], int]:
        async with aiohttp.ClientSession() as http:
            alpha = [await signed_in(http, url, tokens["alpha"]) for url in urls]
            beta = [await signed_in(http, url, tokens["beta"]) for url in urls]
            admin = await signed_in(http, urls[1], ADMIN_TOKEN)
            pairs = zip(urls * 2, alpha + beta, strict=True)
            assert [await reads(http, url, s) for url, s in pairs] == [200] * 4
            new: list[str] = []

            async def cut(sessions: list[str], change: Any) -> list[float]:
                began: list[float] = []
                ends = [asyncio.create_task(ended_after(http, url, s, began))
                        for url, s in zip(urls, sessions, strict=True)]
                await asyncio.sleep(0.1)  # every session is being read
                began.append(time.monotonic())
                await change()
                return [await end for end in ends]

            async def rotate() -> None:
                async with arena_stub(one.address, tokens["alpha"]) as owner:
                    new.append((await owner.RotateBotToken(apb.RotateBotTokenRequest())).token)

            async def revoke() -> None:
                async with arena_stub(one.address, ADMIN_TOKEN) as operator:
                    await operator.RevokeBot(apb.RevokeBotRequest(name="beta"))

            rotated = await cut(alpha, rotate)
            revoked = await cut(beta, revoke)
            # the new token signs in and reads on both nodes; the admin's session is untouched
            fresh = [await reads(http, url, await signed_in(http, url, new[0])) for url in urls]
            return rotated, revoked, fresh, await reads(http, urls[1], admin)

    rotated, revoked, fresh, admin = asyncio.run(asyncio.wait_for(main(), 60))
    print(f"the sessions of the rotated token ended {rotated} s after the rotation, those of the "
          f"revoked bot {revoked} s after the revocation")
    assert max(rotated + revoked) <= CUT_BOUND_S, (rotated, revoked)
    assert fresh == [200, 200] and admin == 200
