"""Every long-lived call is bounded per address and in all, and room is kept for what must get through.

Whatever one address holds of health watches, spectators or reflection
streams, the node's own probe (``Health/Check``), an admin's ``StartMatch``, a
reader's ``ListBots`` and a new bot stream are still served. Each test runs a
real node over real gRPC; the node listens on ``localhost`` (both loopback
addresses), the attacker dials ``[::1]`` (the node sees ``ipv6:[::1]``) and the
honest callers dial ``127.0.0.1``, so the node tells them apart as it would two
machines.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

import grpc
import grpc.aio
import pytest
from belote.arena.v1 import arena_service_pb2 as apb
from belote.arena.v1 import arena_service_pb2_grpc as agrpc
from belote_bot import RandomBot
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from arena.edge import quietlog
from arena.edge.quietlog import RateLimit
from arena.harness import LocalArena, local_arena
from arena.referee.arena_service import ArenaServicer
from arena.referee.node import Limits, Node

from .arena_helpers import FAST, DelayBot, arena_stub, arun

pytestmark = [pytest.mark.security, pytest.mark.reliability]

#: more calls than the 3,072 that filled the node's server-wide limit before calls were bounded per address
ATTEMPTS = 3_200
#: the attacker's channels (grpc opens one connection per channel)
CHANNELS = 8
#: calls started and not yet answered at once, at most
WAVE = 200


def attacker_address(arena: LocalArena) -> str:
    """The node's port on the IPv6 loopback: the node sees such a caller as another address."""
    return "[::1]:" + arena.address.rsplit(":", 1)[1]


async def open_until_refused(
    address: str, start: Callable[[grpc.aio.Channel], Any], attempts: int = ATTEMPTS,
) -> tuple[list[Any], collections.Counter[str], list[grpc.aio.Channel]]:
    """Open ``attempts`` calls from ``address``, :data:`WAVE` at a time, each made by
    ``start(channel)``, and read each one's first message: the calls that stay open, the refusals'
    ``CODE: details``, and the channels."""
    channels = [grpc.aio.insecure_channel(address) for _ in range(CHANNELS)]
    refused: collections.Counter[str] = collections.Counter()
    open_calls: list[Any] = []

    in_flight = asyncio.Semaphore(WAVE)  # all at once, grpc's client cancels some of them itself

    async def one(i: int) -> None:
        async with in_flight:
            await first_message(i)

    async def first_message(i: int) -> None:
        call = start(channels[i % CHANNELS])
        try:
            await asyncio.wait_for(call.read(), 20)
        except grpc.aio.AioRpcError as e:
            refused[f"{e.code().name}: {e.details()}"] += 1
        else:
            open_calls.append(call)

    await asyncio.gather(*(one(i) for i in range(attempts)))
    return open_calls, refused, channels


async def still_served(arena: LocalArena, tag: str) -> None:
    """From another address: a health check, a ListBots, two new bot streams and an admin's StartMatch,
    each answered within a few seconds."""
    async with grpc.aio.insecure_channel(arena.address) as channel:
        health: Any = health_pb2_grpc.HealthStub(channel)
        reply = await health.Check(health_pb2.HealthCheckRequest(), timeout=5)
        assert reply.status == health_pb2.HealthCheckResponse.SERVING
    async with arena_stub(arena.address) as anyone:
        await anyone.ListBots(apb.ListBotsRequest(), timeout=5)
    await arena.connect(f"{tag}-a", RandomBot(1))
    await arena.connect(f"{tag}-b", RandomBot(2))
    async with arena_stub(arena.address, arena.admin_token) as admin:
        started = await admin.StartMatch(
            apb.StartMatchRequest(team0_bot=f"{tag}-a", team1_bot=f"{tag}-b", deals=1), timeout=5)
    record = await asyncio.wait_for(arena.node.wait(started.match_id), 20)
    assert record.result.reason == "finished"


async def close_all(calls: list[Any], channels: list[grpc.aio.Channel]) -> None:
    for call in calls:
        call.cancel()
    await asyncio.gather(*(c.close(grace=None) for c in channels))


class SlowReads(ArenaServicer):
    """The node's ArenaService, but GetBot waits until ``go`` is set: a read held up behind a slow
    store, as a paused Redis holds one."""

    def __init__(self, node: Node, go: asyncio.Event) -> None:
        super().__init__(node)
        self.go = go

    async def GetBot(self, request: apb.GetBotRequest, context: Any) -> apb.GetBotResponse:
        await self.go.wait()
        return await super().GetBot(request, context)


def on_arena(body: Callable[[LocalArena], Awaitable[None]], limits: Limits | None = None) -> None:
    """Run ``body`` against a node on both loopback addresses."""
    async def main() -> None:
        async with local_arena(time=FAST, listen="localhost:0", limits=limits) as arena:
            await body(arena)

    arun(main(), timeout=120)


def health_watch(channel: grpc.aio.Channel) -> Any:
    stub: Any = health_pb2_grpc.HealthStub(channel)
    return stub.Watch(health_pb2.HealthCheckRequest())


def reflection_stream(channel: grpc.aio.Channel) -> Any:
    """A reflection stream that asks one question and keeps its side open, as grpcurl's does."""
    stub: Any = reflection_pb2_grpc.ServerReflectionStub(channel)  # type: ignore[arg-type]  # typed: sync channels
    return OpenStream(stub.ServerReflectionInfo(), reflection_pb2.ServerReflectionRequest(list_services=""))


class OpenStream:
    """A bidirectional call that sends ``first`` when read, and never closes its side."""

    def __init__(self, call: Any, first: Any) -> None:
        self.call = call
        self.first = first

    async def read(self) -> Any:
        await self.call.write(self.first)
        return await self.call.read()

    def cancel(self) -> None:
        self.call.cancel()


def spectator(match_id: str) -> Callable[[grpc.aio.Channel], Any]:
    def start(channel: grpc.aio.Channel) -> Any:
        return agrpc.ArenaServiceStub(channel).WatchMatch(apb.WatchMatchRequest(match_id=match_id))
    return start


def refused_for(refused: collections.Counter[str], why: str) -> bool:
    """Every refusal is RESOURCE_EXHAUSTED and says ``why``."""
    return bool(refused) and all(r.startswith("RESOURCE_EXHAUSTED: ") and why in r for r in refused)


def test_the_attacker_and_the_honest_callers_come_from_two_addresses() -> None:
    """What the other tests stand on: the node sees [::1] and 127.0.0.1 as two addresses, so that
    one of them may fill its own share of a kind of call and the other still open one."""
    async def body(arena: LocalArena) -> None:
        held, refused, channels = await open_until_refused(attacker_address(arena), health_watch, attempts=3)
        try:
            assert len(held) == 2 and refused_for(refused, "2 health watches are open from ::/64"), refused
            honest, _, honest_channels = await open_until_refused(arena.address, health_watch, attempts=1)
            assert len(honest) == 1
            await close_all(honest, honest_channels)
        finally:
            await close_all(held, channels)

    on_arena(body, Limits(max_health_watches_per_peer=2, refusal_hold=0.0))


@pytest.mark.slow
def test_one_address_holding_health_watches_leaves_room_for_probes_admins_readers_and_bots() -> None:
    """The issue's attack: 3,200 anonymous Health/Watch streams from one address, with the default
    limits. Before, 3,072 of them filled the server-wide limit and every other call was refused."""
    async def body(arena: LocalArena) -> None:
        held, refused, channels = await open_until_refused(attacker_address(arena), health_watch)
        try:
            await still_served(arena, "hw")
            assert len(held) == Limits().max_health_watches_per_peer, refused
            assert len(held) + sum(refused.values()) == ATTEMPTS
            assert refused_for(refused, "health watches are open from ::/64, the limit per address"), refused
        finally:
            await close_all(held, channels)

    on_arena(body)


def test_one_address_holding_spectators_leaves_a_match_room_for_other_spectators() -> None:
    """Before, one address could take all 64 places of a match (and all 1,024 of the node)."""
    async def body(arena: LocalArena) -> None:
        await arena.connect("slow", DelayBot(0.05))
        await arena.connect("quick", RandomBot(3))
        match_id = arena.node.start_match("slow", "quick", "coinche", deals=1000)
        held, refused, channels = await open_until_refused(attacker_address(arena), spectator(match_id),
                                                           attempts=200)
        try:
            async with arena_stub(arena.address) as anyone:  # an honest spectator of the same match
                honest = anyone.WatchMatch(apb.WatchMatchRequest(match_id=match_id))
                first = await asyncio.wait_for(honest.read(), 5)
                assert isinstance(first, apb.WatchMatchResponse) and first.HasField("event")
                honest.cancel()
            await still_served(arena, "sp")
            assert len(held) == Limits().max_watchers_per_peer, refused
            assert refused_for(refused, "spectators are open from ::/64, the limit per address"), refused
        finally:
            arena.node.cancel_match(match_id)
            await close_all(held, channels)

    on_arena(body)


#: a node whose server-wide limit, before calls were bounded by kind, was 8 + 2 x 8 = 24 calls
SMALL = Limits(max_streams=8, max_watchers=8, refusal_hold=0.2)


def test_one_address_holding_reflection_streams_leaves_room_for_the_rest() -> None:
    async def body(arena: LocalArena) -> None:
        held, refused, channels = await open_until_refused(attacker_address(arena), reflection_stream,
                                                           attempts=200)
        try:
            await still_served(arena, "rf")
            assert len(held) == Limits().max_other_streams_per_peer, refused
            assert refused_for(refused, "streams are open from ::/64, the limit per address"), refused
        finally:
            await close_all(held, channels)

    on_arena(body, SMALL)


def test_every_address_together_filling_every_long_lived_kind_leaves_room_for_the_rest() -> None:
    """Many addresses (here two) hold every kind of long-lived call up to its total, and refusals
    are held meanwhile: grpc's own bound lies above all of it, so the rest still gets in."""
    limits = Limits(max_streams=8, max_watchers=4, max_watchers_per_peer=2, max_health_watches=4,
                    max_health_watches_per_peer=2, max_other_streams=2, max_other_streams_per_peer=1,
                    max_held_refusals=4, refusal_hold=30.0)

    async def body(arena: LocalArena) -> None:
        await arena.connect("slow", DelayBot(0.05))
        await arena.connect("quick", RandomBot(3))
        match_id = arena.node.start_match("slow", "quick", "coinche", deals=1000)
        everything: list[tuple[list[Any], list[grpc.aio.Channel]]] = []
        try:
            for start, room in ((health_watch, 2), (reflection_stream, 1), (spectator(match_id), 2)):
                for address in (attacker_address(arena), arena.address):
                    held, _, channels = await open_until_refused(address, start, attempts=room)
                    everything.append((held, channels))
                    assert len(held) == room
            # one too many of each: refused, and held (the tarpit's calls count against grpc's bound too)
            extra = grpc.aio.insecure_channel(arena.address)
            everything.append(([], [extra]))
            over = [start(extra) for start in (health_watch, reflection_stream, spectator(match_id))]
            reads = [asyncio.ensure_future(call.read()) for call in over]
            everything.append((over, []))
            await asyncio.sleep(0.5)
            assert not any(read.done() for read in reads)
            await still_served(arena, "all")
        finally:
            arena.node.cancel_match(match_id)
            for held, channels in everything:
                await close_all(held, channels)

    on_arena(body, limits)


def test_slow_calls_from_one_address_leave_room_for_the_others_and_for_admins() -> None:
    """Short calls are bounded too: calls held up (behind a slow store, say) from one address fill
    that address's share, and from every address the node's share; an admin's call and a health
    check have their own."""
    limits = Limits(max_calls_per_peer=4, max_calls=6, refusal_hold=0.0)

    async def main() -> None:
        go = asyncio.Event()
        async with local_arena(time=FAST, listen="localhost:0", limits=limits,
                               arena_service=lambda node: SlowReads(node, go)) as arena:
            await arena.connect("alpha", RandomBot(1))

            def slow_read(channel: grpc.aio.Channel) -> Any:
                call = agrpc.ArenaServiceStub(channel).GetBot(apb.GetBotRequest(name="alpha"))
                return SlowCall(call)

            attacker = attacker_address(arena)
            held, refused, channels = await open_until_refused(attacker, slow_read, attempts=10)
            try:
                assert len(held) == 4 and refused_for(refused, "4 calls are open from ::/64"), refused
                async with arena_stub(arena.address) as anyone:
                    await anyone.ListBots(apb.ListBotsRequest(), timeout=5)  # this address's share is free
                    more, refused, others = await open_until_refused(arena.address, slow_read, attempts=3)
                    channels += others
                    held += more
                    assert len(more) == 2, refused
                    assert refused_for(refused, "the node holds its limit of 6 calls"), refused
                    with pytest.raises(grpc.aio.AioRpcError) as info:
                        await anyone.ListBots(apb.ListBotsRequest(), timeout=5)
                    assert info.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
                async with arena_stub(arena.address, arena.admin_token) as admin:
                    await admin.ListBots(apb.ListBotsRequest(), timeout=5)
                async with grpc.aio.insecure_channel(arena.address) as channel:
                    health: Any = health_pb2_grpc.HealthStub(channel)
                    await health.Check(health_pb2.HealthCheckRequest(), timeout=5)
                go.set()
                for call in held:
                    assert (await asyncio.wait_for(call.call, 5)).bot.name == "alpha"
            finally:
                go.set()
                await close_all([], channels)

    arun(main(), timeout=60)


class SlowCall:
    """A unary call that counts as open until it is answered (``read`` waits a moment for a refusal)."""

    def __init__(self, call: Any) -> None:
        self.call = call

    async def read(self) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(self.call), 1.0)

    def cancel(self) -> None:
        self.call.cancel()


def test_a_refusal_for_a_full_kind_is_held_and_logged_once_per_kind(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(quietlog.quiet, "limit", RateLimit())  # nothing held back from earlier tests
    hold = 0.5

    async def body(arena: LocalArena) -> None:
        channels = [grpc.aio.insecure_channel(attacker_address(arena)) for _ in range(2)]
        held = [health_watch(channels[0])]
        await held[0].read()
        try:
            for channel in channels:
                start = time.monotonic()
                with pytest.raises(grpc.aio.AioRpcError) as info:
                    await health_watch(channel).read()
                assert info.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
                assert time.monotonic() - start >= hold * 0.9
        finally:
            await close_all(held, channels)

    with caplog.at_level(logging.INFO):
        on_arena(body, Limits(max_health_watches_per_peer=1, refusal_hold=hold))
    lines = [r for r in caplog.records if "health watches are open" in r.getMessage()]
    assert len(lines) == 1 and not lines[0].exc_info
