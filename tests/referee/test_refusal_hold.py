"""A refusal of access is held ``--refusal-hold`` before its status, as every other refusal is: a wrong
credential, a right one for the wrong thing, an invite guess, and a guesser past the throttle.

A client that calls again at once whenever it is refused then makes one call a second, not hundreds
(before: these were refused in under a millisecond). What the holds cost is bounded: a timer each, no
thread, at most an address's short calls held per address and half the node's short calls in all;
past those, the status at once. Real gRPC to a real node, from two loopback addresses.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

import grpc
import pytest
from belote.arena.v1 import arena_service_pb2 as apb

from arena.harness import LocalArena, local_arena
from arena.referee.access import AccessPolicy, Registration
from arena.referee.node import Limits
from arena.referee.registry import digest, new_token

from .arena_helpers import FAST, RawStream, arena_stub, arun

pytestmark = pytest.mark.security

ADMIN = new_token("adm")
HOLD = 0.5


async def refused_after(call: Awaitable[Any]) -> tuple[grpc.StatusCode, float]:
    """The status a call was refused with, and the seconds it took."""
    start = time.monotonic()
    try:
        await call
    except grpc.aio.AioRpcError as e:
        return e.code(), time.monotonic() - start
    raise AssertionError("the call was not refused")


def on_arena(body: Callable[[LocalArena], Awaitable[None]], limits: Limits, **fields: Any) -> None:
    async def main() -> None:
        access = AccessPolicy(admin_sha256=digest(ADMIN), **fields)
        async with local_arena(time=FAST, access=access, limits=limits, listen="localhost:0") as arena:
            await body(arena)

    arun(main(), timeout=120)


def test_every_refusal_of_access_is_held_as_documented() -> None:
    async def body(arena: LocalArena) -> None:
        _, bot_token = arena.node.register_bot("alpha")
        async with (arena_stub(arena.address, "adm_not-the-credential") as wrong,
                    arena_stub(arena.address, bot_token) as bot, arena_stub(arena.address) as nobody):
            refused = {
                "a wrong credential": await refused_after(wrong.ListBots(apb.ListBotsRequest())),
                "no credential for an admin's call": await refused_after(
                    nobody.CreateInvite(apb.CreateInviteRequest())),
                "a bot's token for an admin's call": await refused_after(
                    bot.CreateInvite(apb.CreateInviteRequest())),
            }
            guesses = [await refused_after(nobody.RegisterBot(apb.RegisterBotRequest(
                name="g", invite=f"inv_{i}"))) for i in range(4)]
        refused["an invite guess"] = guesses[0]
        refused["an invite guess past the throttle"] = guesses[-1]
        stream = RawStream("[::1]:" + arena.address.rsplit(":", 1)[1])  # an address not throttled yet
        start = time.monotonic()
        await stream.hello("bt_guess")
        refused["a wrong bot token"] = (await stream.status(timeout=10), time.monotonic() - start)
        assert {what: code for what, (code, _) in refused.items()} == {
            "a wrong credential": grpc.StatusCode.UNAUTHENTICATED,
            "no credential for an admin's call": grpc.StatusCode.UNAUTHENTICATED,
            "a bot's token for an admin's call": grpc.StatusCode.PERMISSION_DENIED,
            "an invite guess": grpc.StatusCode.PERMISSION_DENIED,
            "an invite guess past the throttle": grpc.StatusCode.RESOURCE_EXHAUSTED,
            "a wrong bot token": grpc.StatusCode.UNAUTHENTICATED,
        }
        fast = {what: round(took, 4) for what, (_, took) in refused.items() if took < HOLD}
        assert not fast, f"refused before the {HOLD} s hold: {fast}"

    on_arena(body, Limits(refusal_hold=HOLD), registration=Registration.INVITE, failures_per_window=3)


def test_a_held_refusal_holds_no_one_else() -> None:
    """While a guesser's refusals are held, an honest caller of the same address is answered (the hold
    is a timer, not a thread nor the call's place in line)."""
    async def body(arena: LocalArena) -> None:
        async with arena_stub(arena.address, "adm_wrong") as wrong, arena_stub(arena.address, ADMIN) as admin:
            held = [asyncio.ensure_future(wrong.CreateInvite(apb.CreateInviteRequest())) for _ in range(8)]
            invite = await admin.CreateInvite(apb.CreateInviteRequest())
            assert invite.invite and not any(call.done() for call in held)
            codes = {(await refused_after(call))[0] for call in held}
        assert codes == {grpc.StatusCode.UNAUTHENTICATED}

    on_arena(body, Limits(refusal_hold=3.0))


def test_what_the_holds_cost_is_bounded_per_address_and_in_all() -> None:
    """An address's refusals are held as many at once as it may make short calls; all addresses' as
    many as half the node's short calls, so that guessers never fill the room of honest callers; past
    those, the status comes at once (and the throttle's count goes on)."""
    async def body(arena: LocalArena) -> None:
        port = arena.address.rsplit(":", 1)[1]
        async with (arena_stub(f"127.0.0.1:{port}", "adm_wrong") as first,
                    arena_stub(f"[::1]:{port}", "adm_wrong") as second,
                    arena_stub(f"[::1]:{port}", ADMIN) as admin):
            held = [asyncio.ensure_future(first.ListBots(apb.ListBotsRequest())) for _ in range(4)]
            await asyncio.sleep(1.0)
            assert not any(call.done() for call in held)  # the first address holds the 4 of all
            code, took = await refused_after(second.ListBots(apb.ListBotsRequest()))
            assert code == grpc.StatusCode.UNAUTHENTICATED and took < 10.0  # at once: none left to hold
            assert (await admin.ListBots(apb.ListBotsRequest())).total == 0
            for call in held:
                call.cancel()

    on_arena(body, Limits(refusal_hold=30.0, max_calls_per_peer=4, max_calls=8))
