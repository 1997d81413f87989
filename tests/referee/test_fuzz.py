"""Right statuses, quiet logs: what a peer sends never crashes the node, never gets INTERNAL or
UNKNOWN, and never puts a traceback in its log.

Everything goes over real gRPC to a real node. The fuzz sends 10,000
messages while an honest match runs: bytes (random, and well-formed
messages cut, flipped or padded) as the first message of a bot stream, inside
an accepted bot stream and to every ArenaService method, and well-formed
messages from hypothesis (:mod:`.fuzz_messages`, built from the descriptors)
inside accepted bot streams and to every ArenaService method.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections import Counter
from typing import Any

import grpc
import grpc.aio
import pytest
from belote.arena.v1 import arena_service_pb2 as apb
from belote.arena.v1 import bot_service_pb2 as bpb
from belote_bot import HeuristicBot, RandomBot
from google.protobuf.message import DecodeError, Message
from grpc_health.v1 import health_pb2, health_pb2_grpc
from hypothesis import strategies as st

from arena.edge import quietlog
from arena.edge.guard import TokenBucket
from arena.records import MatchRecord
from arena.referee.node import Node, NodeConfig

from .arena_helpers import NO_HOLD, RawStream, arun, connect_client, link_of, node_server, until
from .fuzz_messages import garbage, messages, sample
from .hostile_clients import CONNECT, LOST, OPTIONS

pytestmark = pytest.mark.reliability

ARENA = apb.DESCRIPTOR.services_by_name["ArenaService"]
RAW: dict[str, Any] = {"request_serializer": None, "response_deserializer": None}
#: the statuses the node documents; INTERNAL and UNKNOWN are not among them (UNIMPLEMENTED: the
#: tournament calls, on a node without a queue)
DOCUMENTED = {"OK", "INVALID_ARGUMENT", "UNAUTHENTICATED", "PERMISSION_DENIED", "ALREADY_EXISTS",
              "RESOURCE_EXHAUSTED", "NOT_FOUND", "FAILED_PRECONDITION", "UNIMPLEMENTED"}
#: a bot stream the node ended while the client was writing: grpc's client replaces the node's status
#: with an INTERNAL of its own making, "Internal error from Core" (the node never sends it); counted
#: apart, since the node's status was not lost on the node's side
CLIENT_LOST = "lost by the client"


async def status_of(call: Any) -> str:
    """How a call ended: the status the node sent, or :data:`CLIENT_LOST`."""
    code: grpc.StatusCode = await call.code()
    if code == grpc.StatusCode.INTERNAL and await call.details() == LOST:
        return CLIENT_LOST
    return code.name


def arena_path(method: str) -> str:
    return f"/{ARENA.full_name}/{method}"


async def call_arena(channel: grpc.aio.Channel, method: str, data: bytes) -> grpc.StatusCode:
    """One ArenaService call with ``data`` as its request, read to its end; its status."""
    try:
        if ARENA.methods_by_name[method].server_streaming:
            call: Any = channel.unary_stream(arena_path(method), **RAW)(data, timeout=10)
            while await call.read() is not grpc.aio.EOF:
                pass
            code: grpc.StatusCode = await call.code()
            return code
        await channel.unary_unary(arena_path(method), **RAW)(data, timeout=10)
        return grpc.StatusCode.OK
    except grpc.aio.AioRpcError as e:
        return e.code()


async def first_message(channel: grpc.aio.Channel, data: bytes) -> str:
    """A bot stream whose first message is ``data``: how it ended (the node always ends it)."""
    call: Any = channel.stream_stream(CONNECT, **RAW)()
    with contextlib.suppress(grpc.aio.AioRpcError, asyncio.InvalidStateError):
        await call.write(data)
    while True:
        try:
            msg = await asyncio.wait_for(call.read(), 10)
        except grpc.aio.AioRpcError:
            break
        if msg is grpc.aio.EOF:
            break
        # bytes that decode to a Hello with a registered token get a Welcome: close the stream then
        call.cancel()
        return "OK"
    return await status_of(call)


class FuzzBot:
    """A registered bot whose stream carries fuzz: each message is followed by a ping, and the next
    one waits for its pong, so that no message is written while the node is ending the stream."""

    def __init__(self, address: str, token: str, statuses: Counter[str]) -> None:
        self.channel = grpc.aio.insecure_channel(address, options=OPTIONS)
        self.hello = bpb.ConnectRequest(hello=bpb.Hello(token=token, concurrency=4)).SerializeToString()
        self.statuses = statuses
        self.call: Any = None
        self.nonce = 2**63

    async def send(self, data: bytes) -> None:
        try:  # a message with a ping of its own gets that pong: the node holds a second ping back
            pings = bpb.ConnectRequest.FromString(data).HasField("ping")
        except DecodeError:
            pings = False
        if self.call is None:
            self.statuses["opened"] += 1
            self.call = self.channel.stream_stream(CONNECT, **RAW)()
            await self.call.write(self.hello)
            assert bpb.ConnectResponse.FromString(await self.call.read()).HasField("welcome")
        call = self.call
        self.nonce += 1
        with contextlib.suppress(grpc.aio.AioRpcError, asyncio.InvalidStateError):  # ended meanwhile
            await call.write(data)
            if not pings:  # the fuzz message was not a ping itself: ask for a pong
                await call.write(bpb.ConnectRequest(ping=bpb.Ping(nonce=self.nonce)).SerializeToString())
        while True:
            try:
                raw = await asyncio.wait_for(call.read(), 10)
            except grpc.aio.AioRpcError:
                raw = grpc.aio.EOF
            if raw is grpc.aio.EOF:
                self.statuses[await status_of(call)] += 1
                self.call = None
                return
            msg = bpb.ConnectResponse.FromString(raw)
            if msg.HasField("pong") and (pings or msg.pong.nonce == self.nonce):
                return

    async def close(self) -> None:
        if self.call is not None:
            self.statuses["opened"] -= 1  # still open at the end: the fuzz closes it
            self.call.cancel()
        await self.channel.close(grace=None)


async def play_honest(node: Node, until_done: asyncio.Event) -> list[MatchRecord]:
    """Honest matches one after the other until ``until_done``: the first with seed "fuzz"."""
    records: list[MatchRecord] = []
    while not records or not until_done.is_set():
        seed = "fuzz" if not records else f"fuzz/{len(records)}"
        records.append(await node.wait(node.start_match("honest-a", "honest-b", "coinche", seed=seed,
                                                        deals=DEALS if not records else 2)))
    return records


DEALS = 12


def requests_of(method: Any) -> st.SearchStrategy[tuple[str, Message]]:
    """Well-formed requests of an ArenaService method, with its name."""
    return messages(method.input_type).map(lambda request: (method.name, request))


@pytest.mark.slow
@pytest.mark.timing
def test_ten_thousand_hostile_messages_leave_the_node_serving_and_the_honest_match_intact(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch,
) -> None:
    rng = random.Random(8)
    stream_messages = sample(messages(bpb.ConnectRequest.DESCRIPTOR), 1000)
    arena_requests = sample(st.sampled_from(list(ARENA.methods)).flatmap(requests_of), 1000)
    valid = [m.SerializeToString() for m in stream_messages]
    valid += [r.SerializeToString() for _, r in arena_requests]
    first_bytes = garbage(rng, valid, 3500)
    stream_bytes = garbage(rng, valid, 500)
    arena_bytes = [(rng.choice(ARENA.methods).name, b) for b in garbage(rng, valid, 4000)]
    assert len(stream_messages) + len(arena_requests) + len(first_bytes) + len(stream_bytes) + len(
        arena_bytes) == 10_000

    statuses: Counter[str] = Counter()

    async def main() -> tuple[MatchRecord, list[MatchRecord], int]:
        # the fuzz is about messages, not their rate: refusals are answered at once
        async with node_server(NodeConfig(limits=NO_HOLD)) as (node, address):
            # the match the fuzz must not change, played quiet by bots of the same seeds
            ref = [await connect_client(node, address, HeuristicBot(1), "ref-a"),
                   await connect_client(node, address, RandomBot(2), "ref-b")]
            reference = await node.wait(
                node.start_match("ref-a", "ref-b", "coinche", seed="fuzz", deals=DEALS))
            for bot in ref:
                await bot.disconnect()
            honest = [await connect_client(node, address, HeuristicBot(1), "honest-a"),
                      await connect_client(node, address, RandomBot(2), "honest-b")]
            bots = []
            for i in range(4):
                _, token = node.register_bot(f"fuzz-{i}")
                link = link_of(node, f"fuzz-{i}")  # the fuzz is about messages, not their rate
                link.stream_budget = link.idle_budget = TokenBucket(1e9, 1e9)
                bots.append(FuzzBot(address, token, statuses))
            done = asyncio.Event()
            matches = asyncio.ensure_future(play_honest(node, done))

            async def on_streams(k: int) -> None:
                items = [m.SerializeToString() for m in stream_messages[k::4]] + stream_bytes[k::4]
                random.Random(k).shuffle(items)
                for data in items:
                    await bots[k].send(data)
                await bots[k].close()

            async def on_connect(k: int) -> None:
                async with grpc.aio.insecure_channel(address, options=OPTIONS) as channel:
                    for data in first_bytes[k::4]:
                        statuses[await first_message(channel, data)] += 1

            async def on_arena(k: int) -> None:
                work = [(m, r.SerializeToString()) for m, r in arena_requests[k::4]] + arena_bytes[k::4]
                async with grpc.aio.insecure_channel(address, options=OPTIONS) as channel:
                    for method, data in work:
                        statuses[(await call_arena(channel, method, data)).name] += 1

            await asyncio.gather(*(f(k) for k in range(4) for f in (on_streams, on_connect, on_arena)))
            done.set()
            records = await matches
            async with grpc.aio.insecure_channel(address) as channel:
                health: Any = health_pb2_grpc.HealthStub(channel)
                serving = (await health.Check(health_pb2.HealthCheckRequest(service=""), timeout=5)).status
            for bot in honest:
                await bot.disconnect()
            await until(lambda: not node.is_running(records[-1].match_id), what="the last match to end")
            return reference, records, serving

    monkeypatch.setattr(quietlog.quiet, "limit", quietlog.RateLimit())  # nothing held from earlier tests
    with caplog.at_level(logging.INFO):
        reference, records, serving = arun(main(), timeout=300)

    opened = statuses.pop("opened") + len(first_bytes) + len(arena_requests) + len(arena_bytes)
    print(f"fuzz: {opened} calls, {dict(statuses)}")
    assert sum(statuses.values()) == opened, statuses  # every call ended, with a status
    assert set(statuses) <= DOCUMENTED | {CLIENT_LOST}, statuses
    assert not [r for r in caplog.records if r.exc_info or "Traceback" in r.getMessage()]
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) < 100, warnings  # one line per kind of problem, not one per message
    assert serving == health_pb2.HealthCheckResponse.SERVING
    assert all(r.result.reason == "finished" and not r.strikes for r in records)
    for record in records:
        match, _ = record.replay()  # the engine checks every action
        assert (match.totals[0], match.totals[1]) == record.totals
    assert records[0].deals == reference.deals and records[0].totals == reference.totals


# ------------------------------------------------------------ each service, one message
def _every_method() -> list[str]:
    return [CONNECT] + [arena_path(m.name) for m in ARENA.methods] + ["/grpc.health.v1.Health/Check"]


@pytest.mark.parametrize("method", _every_method())
def test_bytes_that_do_not_decode_are_invalid_argument_on_every_method(
    method: str, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def main() -> list[grpc.StatusCode]:
        async with node_server(NodeConfig(limits=NO_HOLD)) as (_, address), \
                grpc.aio.insecure_channel(address) as channel:
            codes = []
            for _ in range(5):
                if method == CONNECT:
                    codes.append(getattr(grpc.StatusCode, await first_message(channel, b"\xff\xff\xff")))
                elif method.startswith("/grpc.health"):
                    try:
                        await channel.unary_unary(method, **RAW)(b"\xff\xff\xff", timeout=5)
                        codes.append(grpc.StatusCode.OK)
                    except grpc.aio.AioRpcError as e:
                        codes.append(e.code())
                else:
                    codes.append(await call_arena(channel, method.rsplit("/", 1)[1], b"\xff\xff\xff"))
            return codes

    monkeypatch.setattr(quietlog.quiet, "limit", quietlog.RateLimit())
    with caplog.at_level(logging.INFO):
        codes = arun(main())
    assert codes == [grpc.StatusCode.INVALID_ARGUMENT] * 5
    lines = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(lines) == 1, [r.getMessage() for r in lines]  # five times the same problem: one line
    assert "\n" not in lines[0].getMessage() and not lines[0].exc_info


def test_a_stream_cut_while_its_write_is_blocked_leaves_no_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A bot that stops reading is cut; when it then goes, grpc's error about the status it could not
    send is one line."""
    from arena.records import TimeControl

    async def main() -> None:
        config = NodeConfig(time=TimeControl(deadline=0.2, time_bank=0.2, max_strikes=3, grace=1.0))
        async with node_server(config) as (node, address):
            _, token = node.register_bot("stuck")
            stream = RawStream(address)
            await stream.hello(token)  # and never reads
            link = link_of(node, "stuck")
            await until(lambda: link.connected, what="the stream")
            for i in range(200):  # the node writes to it until its writes block
                await node.set_peers([f"peer-{i}-{j}.example:50051" for j in range(2000)])
                if not link.connected:
                    break
                await asyncio.sleep(0.01)
            await until(lambda: not link.connected, timeout=10, what="the cut")
            await stream.close()  # the bot goes while the node's last write and status are stuck
            await asyncio.sleep(0)

    with caplog.at_level(logging.INFO):
        arun(main())
    assert any("stopped reading" in r.getMessage() for r in caplog.records)
    assert not [r for r in caplog.records if r.exc_info or "Traceback" in r.getMessage()]
