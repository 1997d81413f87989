"""The gRPC edge refuses bad tokens and bad requests with the right status, and survives them.

Bot streams here are raw ``BotService.Connect`` calls, driven by hand; after
every refusal a normal match still runs on the node.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import grpc
import grpc.aio
import pytest
from belote.arena.v1 import arena_service_pb2 as apb
from belote.arena.v1 import bot_service_pb2 as bpb
from belote_bot import HeuristicBot, RandomBot

from arena.harness import LocalArena, local_arena
from arena.referee.node import NodeConfig

from .arena_helpers import FAST, DelayBot, RawStream, arena_stub, arun, link_of, node_server, until


async def still_plays(arena: LocalArena) -> None:
    """The node is unharmed: two fresh bots play a match to its end."""
    n = len(arena.node.bots())
    await arena.connect(f"ok{n}a", HeuristicBot(1))
    await arena.connect(f"ok{n}b", RandomBot(2))
    state = await arena.play(f"ok{n}a", f"ok{n}b", "coinche", seed=1, deals=1)
    assert state.result.reason == "finished"


def on_arena(body: Callable[[LocalArena], Awaitable[Any]]) -> Any:
    """Run ``body`` on a fresh arena, then check that the node still plays."""
    async def main() -> Any:
        async with local_arena(time=FAST) as arena:
            out = await body(arena)
            await still_plays(arena)
            return out

    return arun(main())


async def rpc_error(call: Awaitable[Any]) -> grpc.aio.AioRpcError:
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await call
    return info.value


# ------------------------------------------------------------- BotService
@pytest.mark.parametrize("where", ["hello", "metadata"])
def test_a_wrong_token_ends_the_stream_unauthenticated(where: str) -> None:
    async def body(arena: LocalArena) -> None:
        arena.node.register_bot("alpha")
        metadata = (("authorization", "Bearer not-a-token"),) if where == "metadata" else ()
        stream = RawStream(arena.address, metadata)
        try:
            await stream.hello("not-a-token" if where == "hello" else "")
            assert await stream.status() == grpc.StatusCode.UNAUTHENTICATED
            assert "token" in (await stream.call.details() or "")
        finally:
            await stream.close()

    on_arena(body)


def test_a_missing_token_ends_the_stream_unauthenticated() -> None:
    async def body(arena: LocalArena) -> None:
        arena.node.register_bot("alpha")
        stream = RawStream(arena.address)
        try:
            await stream.hello("")
            assert await stream.status() == grpc.StatusCode.UNAUTHENTICATED
            assert "missing" in (await stream.call.details() or "")
        finally:
            await stream.close()

    on_arena(body)


def test_a_bearer_token_in_metadata_with_an_empty_hello_is_accepted() -> None:
    async def body(arena: LocalArena) -> None:
        entry, token = arena.node.register_bot("alpha")
        stream = RawStream(arena.address, (("authorization", f"Bearer {token}"),))
        try:
            await stream.hello("", concurrency=3)
            msg = await stream.read()
            assert msg.HasField("welcome")
            assert msg.welcome.bot_id == entry.bot_id
            assert msg.welcome.bot_name == "alpha"
            assert msg.welcome.node_id == arena.node.node_id
            assert not msg.welcome.resumed
            link = arena.node.link_for(entry)
            assert link.connected and link.concurrency == 3
        finally:
            await stream.close()

    on_arena(body)


@pytest.mark.parametrize("first", [
    bpb.ConnectRequest(ping=bpb.Ping(nonce=1)),
    bpb.ConnectRequest(action_reply=bpb.ActionReply(request_id=1, action=0)),
    bpb.ConnectRequest(),
    None,  # the bot closes its side without a word
], ids=["ping", "action_reply", "empty", "nothing"])
def test_a_first_message_that_is_not_hello_is_invalid_argument(first: bpb.ConnectRequest | None) -> None:
    async def body(arena: LocalArena) -> None:
        _, token = arena.node.register_bot("alpha")
        stream = RawStream(arena.address, (("authorization", f"Bearer {token}"),))
        try:
            if first is not None:
                await stream.send(first)
            await stream.call.done_writing()
            assert await stream.status() == grpc.StatusCode.INVALID_ARGUMENT
            assert "Hello" in (await stream.call.details() or "")
        finally:
            await stream.close()

    on_arena(body)


def test_a_second_stream_with_a_connected_token_is_already_exists() -> None:
    async def body(arena: LocalArena) -> None:
        entry, token = arena.node.register_bot("alpha")
        first, second = RawStream(arena.address), RawStream(arena.address)
        try:
            await first.hello(token)
            assert (await first.read()).HasField("welcome")
            await second.hello(token)
            assert await second.status() == grpc.StatusCode.ALREADY_EXISTS
            # the first stream is untouched
            await first.send(bpb.ConnectRequest(ping=bpb.Ping(nonce=7)))
            assert (await first.read()).pong.nonce == 7
            assert arena.node.link_for(entry).connected
        finally:
            await first.close()
            await second.close()

    on_arena(body)


def test_with_replace_streams_a_second_stream_takes_over() -> None:
    async def main() -> None:
        async with node_server(NodeConfig(time=FAST, replace_streams=True)) as (node, address):
            entry, token = node.register_bot("alpha")
            first, second = RawStream(address), RawStream(address)
            try:
                await first.hello(token, concurrency=2)
                assert (await first.read()).HasField("welcome")
                await second.hello(token, concurrency=5)
                assert (await second.read()).HasField("welcome")
                # the first stream ends (its handler is cut); the second is the bot's now
                await first.status(timeout=2.0)
                assert first.call.done()
                link = node.link_for(entry)
                assert link.connected and link.concurrency == 5
                await second.send(bpb.ConnectRequest(ping=bpb.Ping(nonce=9)))
                assert (await second.read()).pong.nonce == 9
            finally:
                await first.close()
                await second.close()
            await until(lambda: not node.link_for(entry).connected, what="the second stream to go")

    arun(main())


# ----------------------------------------------------------- ArenaService
def test_register_bot_with_a_taken_name_is_already_exists() -> None:
    async def body(arena: LocalArena) -> None:
        async with arena_stub(arena.address, arena.admin_token) as stub:
            first = await stub.RegisterBot(apb.RegisterBotRequest(name="alpha"))
            assert first.bot_id and first.token
            err = await rpc_error(stub.RegisterBot(apb.RegisterBotRequest(name="alpha")))
            assert err.code() == grpc.StatusCode.ALREADY_EXISTS
            listed = await stub.ListBots(apb.ListBotsRequest())
            assert [b.name for b in listed.bots] == ["alpha"]

    on_arena(body)


@pytest.mark.parametrize("name", ["", "two words", "-dash", "x" * 65, "caf\u00e9", "a/b", "\x00"])
def test_register_bot_with_a_bad_name_is_invalid_argument(name: str) -> None:
    async def body(arena: LocalArena) -> None:
        async with arena_stub(arena.address, arena.admin_token) as stub:
            err = await rpc_error(stub.RegisterBot(apb.RegisterBotRequest(name=name)))
            assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert "name" in (err.details() or "")
        assert arena.node.bots() == []

    on_arena(body)


async def _start_error(arena: LocalArena, **fields: Any) -> grpc.aio.AioRpcError:
    async with arena_stub(arena.address, arena.admin_token) as stub:
        return await rpc_error(stub.StartMatch(apb.StartMatchRequest(**fields)))


def test_start_match_with_an_unknown_bot_is_not_found() -> None:
    async def body(arena: LocalArena) -> None:
        await arena.connect("alpha", HeuristicBot(1))
        for team0, team1 in [("alpha", "nobody"), ("nobody", "alpha"), ("", "alpha"), ("alpha", "")]:
            err = await _start_error(arena, team0_bot=team0, team1_bot=team1, ruleset="coinche")
            assert err.code() == grpc.StatusCode.NOT_FOUND, (team0, team1)

    on_arena(body)


def test_start_match_with_a_bot_not_connected_is_failed_precondition() -> None:
    async def body(arena: LocalArena) -> None:
        await arena.connect("alpha", HeuristicBot(1))
        arena.node.register_bot("absent")
        err = await _start_error(arena, team0_bot="alpha", team1_bot="absent", ruleset="coinche")
        assert err.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert "absent" in (err.details() or "")
        assert arena.node.summaries() == []

    on_arena(body)


@pytest.mark.parametrize("ruleset", [
    "poker",
    "{not json",
    '{"preset": "coinche"',
    '{"preset": "nope"}',
    '{"target": 1000}',
    '{"preset": "coinche", "target": "high"}',
    '{"preset": "coinche", "target": 0}',
    '{"preset": "coinche", "deals": -2}',
    '{"preset": "coinche", "belote": 3}',
    '{"preset": "coinche", "target": 1e999}',
    "[1, 2]",
])
def test_start_match_with_a_bad_ruleset_is_invalid_argument(ruleset: str) -> None:
    async def body(arena: LocalArena) -> None:
        await arena.connect("alpha", HeuristicBot(1))
        await arena.connect("beta", RandomBot(2))
        err = await _start_error(arena, team0_bot="alpha", team1_bot="beta", ruleset=ruleset)
        assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert arena.node.summaries() == []

    on_arena(body)


def test_start_match_without_free_seats_is_resource_exhausted() -> None:
    async def body(arena: LocalArena) -> None:
        await arena.connect("single", HeuristicBot(1), concurrency=1)
        await arena.connect("pair", RandomBot(2), concurrency=2)
        err = await _start_error(arena, team0_bot="single", team1_bot="pair", ruleset="coinche")
        assert err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "single" in (err.details() or "")
        # a bot against itself needs four seats
        err = await _start_error(arena, team0_bot="pair", team1_bot="pair", ruleset="coinche")
        assert err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        # seats in use are not free
        await arena.connect("other", RandomBot(3), concurrency=2)
        mid = arena.node.start_match("pair", "other", "coinche", seed=1, deals=1)
        await arena.connect("third", RandomBot(4), concurrency=2)
        err = await _start_error(arena, team0_bot="pair", team1_bot="third", ruleset="coinche")
        assert err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        await arena.node.wait(mid)
        assert link_of(arena.node, "pair").seats_in_use == 0

    on_arena(body)


@pytest.mark.parametrize("match_id", ["m-000000000000", "", "../bots", ".hidden", "a/b", "bots"])
def test_get_match_and_its_record_of_an_unknown_id_are_not_found(match_id: str, tmp_path: Any) -> None:
    async def main() -> None:
        async with local_arena(data_dir=tmp_path, time=FAST) as arena:
            arena.node.register_bot("alpha")  # bots.json exists beside the match records
            async with arena_stub(arena.address) as stub:
                err = await rpc_error(stub.GetMatch(apb.GetMatchRequest(match_id=match_id)))
                assert err.code() == grpc.StatusCode.NOT_FOUND
                err = await rpc_error(stub.GetMatchRecord(apb.GetMatchRecordRequest(match_id=match_id)))
                assert err.code() == grpc.StatusCode.NOT_FOUND
            await still_plays(arena)

    arun(main())


def test_get_match_record_of_a_running_match_is_failed_precondition() -> None:
    async def body(arena: LocalArena) -> None:
        await arena.connect("slow", DelayBot(0.01))
        await arena.connect("beta", RandomBot(2))
        async with arena_stub(arena.address, arena.admin_token) as stub:
            started = await stub.StartMatch(apb.StartMatchRequest(
                team0_bot="slow", team1_bot="beta", ruleset="coinche", deals=1))
            err = await rpc_error(stub.GetMatchRecord(apb.GetMatchRecordRequest(match_id=started.match_id)))
            assert err.code() == grpc.StatusCode.FAILED_PRECONDITION
            got = await stub.GetMatch(apb.GetMatchRequest(match_id=started.match_id))
            assert got.match.state == "running"
            assert not got.match.HasField("result")
            await arena.node.wait(started.match_id)
            reply = await stub.GetMatchRecord(apb.GetMatchRecordRequest(match_id=started.match_id))
            assert reply.record_json

    on_arena(body)


def test_garbage_on_a_bot_stream_does_not_crash_the_node() -> None:
    """Unknown request ids, illegal codes out of turn, a second Hello: ignored, the stream lives."""
    async def body(arena: LocalArena) -> None:
        _, token = arena.node.register_bot("alpha")
        stream = RawStream(arena.address)
        try:
            await stream.hello(token)
            assert (await stream.read()).HasField("welcome")
            for msg in [
                bpb.ConnectRequest(action_reply=bpb.ActionReply(request_id=12345, action=0xFFFFFFFF)),
                bpb.ConnectRequest(action_reply=bpb.ActionReply(request_id=0, action=7)),
                bpb.ConnectRequest(hello=bpb.Hello(token="other", concurrency=99)),
                bpb.ConnectRequest(),
            ]:
                await stream.send(msg)
            await stream.send(bpb.ConnectRequest(ping=bpb.Ping(nonce=3)))
            assert (await stream.read()).pong.nonce == 3
        finally:
            await stream.close()

    on_arena(body)


def test_many_refused_streams_at_once_leave_the_node_serving() -> None:
    async def body(arena: LocalArena) -> None:
        streams = [RawStream(arena.address) for _ in range(20)]
        try:
            await asyncio.gather(*(s.hello(f"bad-{i}") for i, s in enumerate(streams)))
            codes = await asyncio.gather(*(s.status() for s in streams))
            # 20 streams from one address at once: past its 16, one opened before the others' Hello
            # was read is refused for the address's limit
            assert grpc.StatusCode.UNAUTHENTICATED in codes
            assert set(codes) <= {grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.RESOURCE_EXHAUSTED}
        finally:
            await asyncio.gather(*(s.close() for s in streams))
        async with arena_stub(arena.address) as stub:  # and the node serves on
            assert (await stub.ListBots(apb.ListBotsRequest())).bots is not None

    on_arena(body)
