"""What one message, one stream, one bot and one address may cost a node, each limit a rule.

Every stream here is a raw ``BotService.Connect`` call driven by hand, over
real gRPC; each refusal is checked for its status and its message, and the
node is checked to go on serving after it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
import time
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
import pytest
from belote.arena.v1 import arena_service_pb2 as apb
from belote.arena.v1 import bot_service_pb2 as bpb
from belote_bot import RandomBot

from arena.edge import quietlog
from arena.edge.guard import MIN_RECEIVE_CAP, TokenBucket, receive_cap
from arena.edge.quietlog import RateLimit
from arena.referee.node import Limits, Node, NodeConfig
from arena.referee.service import MAX_HELLO_TEXT
from arena.referee.sessions import IDLE_MESSAGES_BURST, STREAMS_BURST

from .arena_helpers import (
    FAST,
    DelayBot,
    RawStream,
    arena_stub,
    arun,
    connect_client,
    link_of,
    node_server,
    until,
)

pytestmark = pytest.mark.reliability

GET_MATCH = "/belote.arena.v1.ArenaService/GetMatch"


async def welcomed(address: str, token: str, concurrency: int = 4) -> RawStream:
    stream = RawStream(address)
    await stream.hello(token, concurrency=concurrency)
    assert (await stream.read()).HasField("welcome")
    return stream


def replies(n: int, first_id: int = 10_000) -> bpb.ConnectRequest:
    return bpb.ConnectRequest(action_replies=[bpb.ActionReply(request_id=first_id + i) for i in range(n)])


async def alive(stream: RawStream, nonce: int = 5) -> None:
    await stream.send(bpb.ConnectRequest(ping=bpb.Ping(nonce=nonce)))
    assert (await stream.read()).pong.nonce == nonce


async def ended(stream: RawStream) -> tuple[grpc.StatusCode, str]:
    code = await stream.status()
    return code, await stream.call.details() or ""


def on_node(body: Any, **config: Any) -> Any:
    async def main() -> Any:
        async with node_server(NodeConfig(time=FAST, limits=Limits(**config))) as (node, address):
            return await body(node, address)

    return arun(main())


# ------------------------------------------------------------ answers and messages
def test_answers_within_what_was_asked_are_taken_even_when_nothing_waits_for_them() -> None:
    """Late answers are normal after a strike: unknown ids are dropped without a word."""
    async def body(node: Node, address: str) -> None:
        _, token = node.register_bot("alpha")
        stream = await welcomed(address, token, concurrency=4)
        try:
            await stream.send(replies(4))  # as many as the stream's seats, none pending
            await alive(stream)
        finally:
            await stream.close()

    on_node(body)


def test_a_batch_of_more_answers_than_the_bot_was_asked_for_is_invalid_argument() -> None:
    async def body(node: Node, address: str) -> None:
        _, token = node.register_bot("alpha")
        stream = await welcomed(address, token, concurrency=4)
        try:
            await stream.send(replies(5))
            code, details = await ended(stream)
            assert code == grpc.StatusCode.INVALID_ARGUMENT
            assert "more answers than requests" in details
        finally:
            await stream.close()
        assert not link_of(node, "alpha").connected

    on_node(body)


def test_answers_are_counted_across_messages() -> None:
    """A bot earns one answer per request it was sent: a trickle of unknown ids ends too."""
    async def body(node: Node, address: str) -> None:
        _, token = node.register_bot("alpha")
        stream = await welcomed(address, token, concurrency=4)
        try:
            for i in range(4):
                await stream.send(bpb.ConnectRequest(action_reply=bpb.ActionReply(request_id=900 + i)))
            await alive(stream)
            await stream.send(bpb.ConnectRequest(action_reply=bpb.ActionReply(request_id=999)))
            code, details = await ended(stream)
            assert code == grpc.StatusCode.INVALID_ARGUMENT
            assert "more answers than requests" in details
        finally:
            await stream.close()

    on_node(body)


def test_a_bot_that_plays_many_matches_is_never_short_of_answers() -> None:
    """Every request earns its answer: an honest bot at full concurrency plays on untouched."""
    async def main() -> None:
        async with node_server(NodeConfig(time=FAST)) as (node, address):
            a = await connect_client(node, address, RandomBot(1), "alpha", concurrency=8)
            b = await connect_client(node, address, RandomBot(2), "beta", concurrency=8)
            ids = [node.start_match("alpha", "beta", "coinche", seed=i, deals=2) for i in range(4)]
            records = await asyncio.gather(*(node.wait(m) for m in ids))
            assert all(r.result.reason == "finished" and not r.strikes for r in records)
            assert a.client.welcome is not None and link_of(node, "alpha").connected
            await a.disconnect()
            await b.disconnect()

    arun(main(), timeout=60)


def test_a_stream_ended_while_its_welcome_is_on_its_way_still_gets_its_status() -> None:
    """The node ends the stream while its first write may be in flight: the bot still hears why."""
    async def body(node: Node, address: str) -> None:
        _, token = node.register_bot("alpha")
        link = link_of(node, "alpha")
        for _ in range(20):
            link.stream_budget = TokenBucket(rate=0.0, burst=1)
            stream = RawStream(address)
            try:
                await stream.hello(token)
                await stream.send(replies(100))  # at once, without waiting for the Welcome
                code, details = await ended(stream)
                assert code == grpc.StatusCode.INVALID_ARGUMENT, details
            finally:
                await stream.close()
            await until(lambda: not link.connected, what="the stream to end")

    on_node(body, refusal_hold=0.0)


def test_a_message_larger_than_the_protocol_needs_is_resource_exhausted() -> None:
    """The issue's attack: 400,000 answers in one message (1.6 MB), refused by size before it is read."""
    assert receive_cap(256) == MIN_RECEIVE_CAP == 16 * 1024

    async def body(node: Node, address: str) -> None:
        _, token = node.register_bot("alpha")
        stream = await welcomed(address, token)
        try:
            await stream.send(replies(400_000))
            code, details = await ended(stream)
            assert code == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert "larger than max" in details
        finally:
            await stream.close()
        async with arena_stub(address) as stub:
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await stub.RegisterBot(apb.RegisterBotRequest(name="x" * 20_000))
            assert info.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert [b.name for b in node.bots()] == ["alpha"]

    on_node(body)


def test_the_largest_batch_a_stream_may_send_fits_under_the_cap() -> None:
    """Twice the largest concurrency in answers of the largest ids and codes, beside a Hello."""
    biggest = bpb.ConnectRequest(
        hello=bpb.Hello(token="t" * MAX_HELLO_TEXT, name="n" * MAX_HELLO_TEXT, version="v" * MAX_HELLO_TEXT),
        action_replies=[bpb.ActionReply(request_id=2**64 - 1, action=2**32 - 1)] * (2 * 256))
    assert biggest.ByteSize() <= receive_cap(256)


def test_messages_without_answers_are_rate_limited() -> None:
    async def body(node: Node, address: str) -> None:
        _, token = node.register_bot("alpha")
        stream = await welcomed(address, token)
        link = link_of(node, "alpha")
        link.idle_budget = TokenBucket(rate=0.0, burst=3)  # no refill: the fourth is one too many
        try:
            await stream.send(bpb.ConnectRequest())
            await stream.send(bpb.ConnectRequest(hello=bpb.Hello(token=token)))
            await alive(stream)
            await stream.send(bpb.ConnectRequest(ping=bpb.Ping(nonce=6)))
            code, details = await ended(stream)
            assert code == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert "without an answer" in details
        finally:
            await stream.close()

    assert IDLE_MESSAGES_BURST >= 10  # an honest bot pings once in 20 s
    on_node(body)


def test_a_ping_flood_gets_one_pong_per_write() -> None:
    """Pings read while a pong waits to go out add nothing to the outbox."""
    async def main() -> list[bpb.ConnectResponse]:
        from .test_batching import Recorder, attached, settle

        rec = Recorder()
        link = await attached(rec.write)
        await settle()
        for nonce in range(1, 51):
            link.post_pong(nonce)
        await settle()
        link.post_pong(99)
        await settle()
        return rec.messages

    messages = arun(main())
    assert [m.pong.nonce for m in messages] == [1, 99]


# ------------------------------------------------------------ streams
def test_a_stream_that_sends_no_hello_in_time_is_invalid_argument() -> None:
    async def body(node: Node, address: str) -> None:
        stream = RawStream(address)
        try:
            code, details = await ended(stream)
            assert code == grpc.StatusCode.INVALID_ARGUMENT
            assert "no Hello within 0.3 s" in details
        finally:
            await stream.close()

    on_node(body, hello_timeout=0.3)


def test_streams_from_one_address_are_bounded() -> None:
    async def body(node: Node, address: str) -> None:
        tokens = [node.register_bot(name)[1] for name in ("a", "b", "c", "d")]
        held = [await welcomed(address, token) for token in tokens[:3]]
        try:
            extra = RawStream(address)
            code, details = await ended(extra)
            await extra.close()
            assert code == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert "limit per address" in details
            await held.pop().close()  # one goes: another bot may come in, once grpc is done with it

            async def fourth() -> RawStream | None:
                stream = RawStream(address)
                await stream.hello(tokens[3])
                with contextlib.suppress(AssertionError, grpc.aio.AioRpcError):
                    if (await stream.read()).HasField("welcome"):
                        return stream
                await stream.close()
                return None

            for _ in range(100):
                if (stream := await fourth()) is not None:
                    break
                await asyncio.sleep(0.05)
            else:
                raise AssertionError("the freed place was never taken")
            await alive(stream)
            await stream.close()
        finally:
            for s in held:
                await s.close()

    on_node(body, max_streams_per_peer=3)


def test_streams_in_all_are_bounded() -> None:
    async def body(node: Node, address: str) -> None:
        idle = [await welcomed(address, node.register_bot(name)[1]) for name in ("a", "b")]
        try:
            extra = RawStream(address)
            code, details = await ended(extra)
            await extra.close()
            assert code == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert "limit of 2 bot streams" in details
        finally:
            for s in idle:
                await s.close()

    on_node(body, max_streams=2)


def test_a_hello_asking_for_more_seats_than_the_cap_gets_the_cap() -> None:
    async def body(node: Node, address: str) -> None:
        _, token = node.register_bot("alpha")
        stream = await welcomed(address, token, concurrency=1_000_000)
        try:
            assert link_of(node, "alpha").concurrency == 16
        finally:
            await stream.close()

    on_node(body, max_concurrency=16)


@pytest.mark.parametrize("field", ["name", "version"])
def test_a_hello_with_an_overlong_text_is_invalid_argument(field: str) -> None:
    async def body(node: Node, address: str) -> None:
        _, token = node.register_bot("alpha")
        stream = RawStream(address)
        try:
            hello = bpb.Hello(token=token)
            setattr(hello, field, "x" * 300)
            await stream.send(bpb.ConnectRequest(hello=hello))
            code, details = await ended(stream)
            assert code == grpc.StatusCode.INVALID_ARGUMENT
            assert f"Hello.{field}" in details
        finally:
            await stream.close()
        assert not link_of(node, "alpha").connected

    on_node(body)


def test_a_bot_that_opens_streams_too_often_is_resource_exhausted() -> None:
    async def body(node: Node, address: str) -> None:
        _, token = node.register_bot("alpha")
        link = link_of(node, "alpha")
        link.stream_budget = TokenBucket(rate=0.0, burst=2)
        for _ in range(2):
            stream = await welcomed(address, token)
            await stream.close()
            await until(lambda: not link.connected, what="the stream to end")
        stream = RawStream(address)
        try:
            await stream.hello(token)
            code, details = await ended(stream)
            assert code == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert "too often" in details
        finally:
            await stream.close()

    assert STREAMS_BURST >= 5  # the SDK reconnects 0.1-0.2 s after a drop
    on_node(body)


# ------------------------------------------------------------ retry storms
async def _refused_in(call: Any) -> tuple[grpc.StatusCode, float]:
    """``call``'s status and the seconds it took."""
    start = time.monotonic()
    code = await call()
    return code, time.monotonic() - start


def test_a_client_that_retries_at_once_whenever_it_is_refused_waits_the_hold_each_time() -> None:
    """A refusal is held before its status, on the bot stream and on ArenaService, so a client
    that retries at once (a reconnect storm) makes one call a hold; the node serves others meanwhile."""
    hold = 0.4

    async def bad_stream(address: str) -> grpc.StatusCode:
        stream = RawStream(address)
        try:
            await stream.hello("not-a-token")
            return await stream.status()
        finally:
            await stream.close()

    async def garbage(channel: grpc.aio.Channel) -> grpc.StatusCode:
        call: Any = channel.unary_unary(GET_MATCH, request_serializer=None, response_deserializer=None)
        try:
            await call(b"\xff\xff\xff", timeout=10)
        except grpc.aio.AioRpcError as e:
            return e.code()
        return grpc.StatusCode.OK

    async def body(node: Node, address: str) -> None:
        node.register_bot("alpha")
        async with arena_stub(address) as stub, grpc.aio.insecure_channel(address) as channel:
            for _ in range(3):
                held = asyncio.ensure_future(_refused_in(lambda: bad_stream(address)))
                await asyncio.sleep(0.05)
                # while the refusal is held, an honest call is answered
                answered = asyncio.ensure_future(stub.ListBots(apb.ListBotsRequest()))
                await asyncio.wait_for(asyncio.shield(answered), hold)
                assert [b.name for b in answered.result().bots] == ["alpha"]
                code, took = await held
                assert code == grpc.StatusCode.UNAUTHENTICATED and took >= hold * 0.9, (code, took)
                code, took = await _refused_in(lambda: garbage(channel))
                assert code == grpc.StatusCode.INVALID_ARGUMENT and took >= hold * 0.9, (code, took)

    on_node(body, refusal_hold=hold)


def test_refusals_past_what_one_address_may_have_held_come_at_once() -> None:
    """The tarpit holds as many refusals per address as it may open streams; the rest are answered
    at once, so holding costs the node a bounded number of timers."""
    async def refused(address: str) -> tuple[grpc.StatusCode, float]:
        stream = RawStream(address)
        try:
            return await _refused_in(lambda: _hello_then_status(stream))
        finally:
            await stream.close()

    async def _hello_then_status(stream: RawStream) -> grpc.StatusCode:
        await stream.hello("not-a-token")
        return await stream.status(timeout=30)

    async def body(node: Node, address: str) -> None:
        results = await asyncio.gather(*(refused(address) for _ in range(6)))
        # wrong tokens, past the few an address may try in a row: throttled
        assert {code for code, _ in results} <= {grpc.StatusCode.UNAUTHENTICATED,
                                                 grpc.StatusCode.RESOURCE_EXHAUSTED}, results
        times = sorted(took for _, took in results)
        assert all(t >= 4.5 for t in times[3:]), times  # three held for the whole hold
        assert all(t < 2.0 for t in times[:3]), times  # three refused at once

    on_node(body, refusal_hold=5.0, max_streams_per_peer=3)


def test_a_stream_refused_for_its_rate_is_held_only_until_the_bot_may_open_one() -> None:
    async def body(node: Node, address: str) -> None:
        _, token = node.register_bot("alpha")
        link = link_of(node, "alpha")
        link.stream_budget = TokenBucket(rate=2.0, burst=1)  # one now, the next in half a second
        stream = await welcomed(address, token)
        await stream.close()
        await until(lambda: not link.connected, what="the stream to end")
        stream = RawStream(address)
        try:
            await stream.hello(token)
            code, took = await _refused_in(stream.status)
            assert code == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert 0.2 <= took < 3.0, took  # about half a second, not the tarpit's 10
        finally:
            await stream.close()

    on_node(body, refusal_hold=10.0)


def test_a_token_bucket_says_when_it_could_give_again() -> None:
    now = [0.0]
    bucket = TokenBucket(rate=2.0, burst=1, clock=lambda: now[0])
    assert bucket.wait() == 0.0 and bucket.take()
    assert bucket.wait() == 0.5 and not bucket.take()
    now[0] = 0.25
    assert bucket.wait() == 0.25
    now[0] = 1.0
    assert bucket.wait() == 0.0
    assert TokenBucket(rate=0.0, burst=0).wait() == float("inf")


# ------------------------------------------------------------ spectators
async def _watch(address: str, match_id: str) -> tuple[grpc.aio.Channel, Any]:
    channel = grpc.aio.insecure_channel(address)
    from belote.arena.v1 import arena_service_pb2_grpc as agrpc

    call = agrpc.ArenaServiceStub(channel).WatchMatch(apb.WatchMatchRequest(match_id=match_id))
    return channel, call


@pytest.mark.parametrize("limit", ["per match", "in all"])
def test_spectators_are_bounded(limit: str) -> None:
    async def main() -> None:
        limits = Limits(max_watchers_per_match=2) if limit == "per match" else Limits(max_watchers=2)
        config = NodeConfig(time=FAST, limits=limits)
        async with node_server(config) as (node, address):
            a = await connect_client(node, address, DelayBot(0.05), "slow")
            b = await connect_client(node, address, RandomBot(2), "beta")
            mid = node.start_match("slow", "beta", "coinche", seed=1, deals=1)
            watches = [await _watch(address, mid) for _ in range(2)]
            for _, call in watches:
                assert isinstance(await call.read(), apb.WatchMatchResponse)
            channel, call = await _watch(address, mid)
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await call.read()
            assert info.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert "spectators" in (info.value.details() or "")
            await channel.close()
            for ch, _ in watches:
                await ch.close()
            await node.wait(mid)
            await a.disconnect()
            await b.disconnect()

    arun(main())


def test_refusals_are_logged_once_per_kind_without_traceback(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(quietlog.quiet, "limit", RateLimit())  # nothing held back from earlier tests

    async def body(node: Node, address: str) -> None:
        for _ in range(5):
            stream = RawStream(address)
            await stream.hello("not-a-token")
            assert (await ended(stream))[0] == grpc.StatusCode.UNAUTHENTICATED
            await stream.close()

    with caplog.at_level(logging.INFO):
        on_node(body, refusal_hold=0.0)
    lines = [r for r in caplog.records if "unknown or revoked credential" in r.getMessage()]
    assert len(lines) == 1
    # (asyncio may report grpc's poller of an earlier test's closed loop: not this node's doing)
    assert not [r.getMessage() for r in caplog.records if r.exc_info and r.name.startswith(("arena", "grpc"))]


# ------------------------------------------------------------ belote-arena serve
def test_serve_takes_the_limits_from_its_flags(tmp_path: Path) -> None:
    """``belote-arena serve --hello-timeout --max-concurrency ...``: the node it runs holds to them."""
    from tests.cluster.procs import NodeProc, Procs, register_bots

    procs = Procs(tmp_path)
    try:
        proc = procs.spawn("node", [
            sys.executable, "-m", "arena.cli", "serve", "--listen", "127.0.0.1:0", "--data-dir",
            str(tmp_path / "data"), "--hello-timeout", "0.5", "--refusal-hold", "2.5",
            "--max-concurrency", "3", "--max-streams-per-address", "2", "--read-rate-per-address", "1",
            "--read-burst-per-address", "4"])
        node = procs.ready(NodeProc(proc.name, proc.popen, proc.log))
        token = register_bots(node.address, ["alpha"])["alpha"]

        async def main() -> None:
            stream = await welcomed(node.address, token, concurrency=100)
            silent = RawStream(node.address)
            try:
                async with arena_stub(node.address) as stub:
                    bots = (await stub.ListBots(apb.ListBotsRequest())).bots
                    assert [(b.name, b.concurrency) for b in bots] == [("alpha", 3)]
                    for _ in range(3):  # four reads at once, the first above among them
                        await stub.ListMatches(apb.ListMatchesRequest())
                    with pytest.raises(grpc.aio.AioRpcError) as refused:
                        await stub.ListMatches(apb.ListMatchesRequest())
                    assert "reads more than 1 a second" in (refused.value.details() or "")
                code, details = await ended(silent)
                assert code == grpc.StatusCode.INVALID_ARGUMENT and "within 0.5 s" in details
                stranger = RawStream(node.address)
                await stranger.hello("not-a-token")
                code, took = await _refused_in(stranger.status)
                await stranger.close()
                assert code == grpc.StatusCode.UNAUTHENTICATED and took >= 2.2, (code, took)
                third = [RawStream(node.address) for _ in range(2)]
                codes = [await ended(s) for s in third]  # with alpha's stream, one too many
                assert any(c == grpc.StatusCode.RESOURCE_EXHAUSTED and "limit per address" in d
                           for c, d in codes), codes
                for s in third:
                    await s.close()
            finally:
                await stream.close()
                await silent.close()

        arun(main())
    finally:
        procs.close()
