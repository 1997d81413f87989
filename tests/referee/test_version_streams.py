"""Versions over real gRPC, on a node alone: a bot's token holds one stream per version (the same version
twice is still one stream); each version seats under ``name@version`` while the bot's name seats its
promoted version; a bad label is refused; a version is promoted by hand only by its bot's token or an
admin; revoking the bot cuts every version's stream."""

from __future__ import annotations

import asyncio
import logging

import grpc
import pytest
from belote.arena.v1 import arena_service_pb2 as apb
from belote.arena.v1 import bot_service_pb2 as bpb
from belote_bot import HeuristicBot, RandomBot

from arena.referee.limits import NodeConfig
from arena.referee.node import Node
from tests.referee.arena_helpers import RawStream, arena_stub, arun, connect_client, node_server, until

ADMIN = "adm_versions_test_credential_0123456789"


def config() -> NodeConfig:
    from arena.referee.access import AccessPolicy
    from arena.referee.registry import digest

    return NodeConfig(access=AccessPolicy(admin_sha256=digest(ADMIN)))


async def versioned(node: Node, address: str, name: str, version: str, token: str | None = None) -> object:
    bot = HeuristicBot(1) if version != "3" else RandomBot(3)
    bot.version = version
    return await connect_client(node, address, bot, name, token=token, concurrency=2)


def plays_as(node: Node, name: str) -> str | None:
    """The version the bot's name seats on ``node`` (None: none of it)."""
    entry = node.bot_named(name)
    link = None if entry is None else node.play_link(entry)
    return None if link is None else link.bot_version


def test_one_stream_per_version_each_seated_by_its_key() -> None:
    async def main() -> None:
        async with node_server(config()) as (node, address):
            one = await versioned(node, address, "alpha", "1")
            two = await versioned(node, address, "alpha", "2", token=one.token)  # type: ignore[attr-defined]
            await until(lambda: {"alpha", "alpha@1", "alpha@2"} <= set(node.connected_bots()), 5,
                        "both versions connected")
            entry = node.bot_named("alpha")
            await until(lambda: len(node.bot_named("alpha").versions) == 2, 5, "both versions kept")  # type: ignore[union-attr]
            assert node.bot_named("alpha").promoted_version == "1"  # type: ignore[union-attr]
            assert entry is not None
            # the bot's name seats the promoted version; each version its own key; seats are each link's
            assert plays_as(node, "alpha") == "1"
            assert node.free_seats() == {"alpha": 2, "alpha@1": 2, "alpha@2": 2}
            mid = node.start_match("alpha@2", "alpha@1", "coinche", deals=1)
            record = await node.wait(mid)
            assert record.team_names() == ("alpha@2", "alpha@1")
            # the same version twice: still one stream (the second is refused while the first lives)
            stream = RawStream(address)
            try:
                await stream.send(bpb.ConnectRequest(hello=bpb.Hello(
                    token=one.token, concurrency=2, bot_version="2")))  # type: ignore[attr-defined]
                assert await stream.status() == grpc.StatusCode.ALREADY_EXISTS
            finally:
                await stream.close()
            # a bad label: INVALID_ARGUMENT, naming the rule
            stream = RawStream(address)
            try:
                await stream.send(bpb.ConnectRequest(hello=bpb.Hello(
                    token=one.token, concurrency=2, bot_version="two words")))  # type: ignore[attr-defined]
                assert await stream.status() == grpc.StatusCode.INVALID_ARGUMENT
                assert "1 to 32 letters" in (await stream.call.details() or "")
            finally:
                await stream.close()
            # revoking the bot cuts every version's stream
            await node.revoke_bot("alpha")
            await until(lambda: not any(k.startswith("alpha") for k in node.connected_bots()), 5, "cut")
            for c in (one, two):
                c.stop.set()  # type: ignore[attr-defined]

    arun(main(), 60)


def test_a_version_is_promoted_by_hand_by_its_bot_or_an_admin_only() -> None:
    async def main() -> None:
        async with node_server(config()) as (node, address):
            one = await versioned(node, address, "alpha", "1")
            await versioned(node, address, "alpha", "2", token=one.token)  # type: ignore[attr-defined]
            other = await versioned(node, address, "beta", "1")
            await until(lambda: len(node.bot_named("alpha").versions) == 2, 5, "both versions kept")  # type: ignore[union-attr]
            async with arena_stub(address, other.token) as stranger:  # type: ignore[attr-defined]
                with pytest.raises(grpc.aio.AioRpcError) as denied:
                    await stranger.PromoteBotVersion(apb.PromoteBotVersionRequest(name="alpha", version="2"))
                assert denied.value.code() == grpc.StatusCode.PERMISSION_DENIED
            async with arena_stub(address) as anonymous:
                with pytest.raises(grpc.aio.AioRpcError) as nobody:
                    await anonymous.PromoteBotVersion(apb.PromoteBotVersionRequest(name="alpha", version="2"))
                assert nobody.value.code() == grpc.StatusCode.UNAUTHENTICATED
                before = await anonymous.GetBotVersions(apb.GetBotVersionsRequest(name="alpha"))
                assert before.promoted == "1" and [v.version for v in before.versions] == ["2", "1"]
                with pytest.raises(grpc.aio.AioRpcError) as unknown:
                    await anonymous.GetBotVersions(apb.GetBotVersionsRequest(name="nobody"))
                assert unknown.value.code() == grpc.StatusCode.NOT_FOUND
            async with arena_stub(address, one.token) as owner:  # type: ignore[attr-defined]
                with pytest.raises(grpc.aio.AioRpcError) as missing:
                    await owner.PromoteBotVersion(apb.PromoteBotVersionRequest(version="9"))
                assert missing.value.code() == grpc.StatusCode.FAILED_PRECONDITION
                assert "no version '9'" in (missing.value.details() or "")
                done = await owner.PromoteBotVersion(apb.PromoteBotVersionRequest(version="2"))
                states = {v.version: (v.state, v.how) for v in done.versions}
                assert states == {"2": ("promoted", "hand"), "1": ("retired", "first")}
            # the bot's name now seats version 2
            assert plays_as(node, "alpha") == "2"
            async with arena_stub(address, ADMIN) as admin:
                done = await admin.PromoteBotVersion(apb.PromoteBotVersionRequest(name="alpha", version="1"))
                assert {v.version: v.how for v in done.versions if v.state == "promoted"} == {"1": "hand"}

    arun(main(), 60)


def test_a_node_refuses_a_bots_versions_beyond_its_bound() -> None:
    from arena.referee.versions import MAX_VERSIONS

    async def main() -> None:
        node = Node(config())
        entry, _ = node.register_bot("alpha")
        links = [node.link_for(entry, str(i)) for i in range(MAX_VERSIONS)]
        for link in links:
            link.seats_in_use = 1  # each playing: none may be dropped
        with pytest.raises(Exception, match="the most a bot may"):
            node.link_for(entry, "extra")
        links[0].seats_in_use = 0  # one idle: its place is taken
        assert node.link_for(entry, "extra").bot_version == "extra"
        assert node.version_link(entry, "0") is None

    asyncio.run(main())


def _set_versions(node: Node, name: str, change: object) -> None:
    """Write the bot's versions as ``change(versions)`` says, as a test, a promotion or an SPRT would."""
    assert node._registry.update_versions(name, change, strict=True) is not None  # type: ignore[arg-type]


@pytest.mark.security
def test_only_the_promoted_version_plays_under_the_bots_name(caplog: pytest.LogCaptureFixture) -> None:
    """The issue's run: version 2 was rejected, and while version 1 (the promoted one) reconnected, the
    bot's name seated version 2 in rated matches. Neither a rejected version, nor a candidate, nor a
    stream that says no version plays as the bot: while its promoted version is away, the bot is away
    (its name has no seat, no presence, and a match naming it is refused), and ``name@version`` still
    seats each version for its tests."""
    from arena.referee.node import BotNotConnected
    from arena.referee.versions import decide, start_test

    caplog.set_level(logging.INFO, logger="arena.referee")  # the stream's note says why it is not seated

    async def main() -> None:
        async with node_server(config()) as (node, address):
            one = await versioned(node, address, "alpha", "1")
            token = one.token  # type: ignore[attr-defined]
            two = await versioned(node, address, "alpha", "2", token=token)
            beta = await connect_client(node, address, HeuristicBot(5), "beta", concurrency=2)
            await until(lambda: len(node.bot_named("alpha").versions) == 2, 5, "both versions kept")  # type: ignore[union-attr]
            _set_versions(node, "alpha", lambda vs: decide(start_test(vs, "2", "vt:alpha:2:1", "1", 1),
                                                           "2", "vt:alpha:2:1", "H0", -3.0, 8, -120.0, 2))
            assert node.bot_named("alpha").promoted_version == "1"  # type: ignore[union-attr]
            await one.disconnect()  # type: ignore[attr-defined]
            await until(lambda: "alpha@1" not in node.connected_bots(), 5, "version 1 away")
            assert "alpha" not in node.free_seats() and "alpha" not in node.connected_bots()
            with pytest.raises(BotNotConnected):
                node.start_match("alpha", "beta", "coinche", deals=1)
            # its own key still seats the rejected version (an unrated match, as its tests are)
            assert node.free_seats()["alpha@2"] == 2
            record = await node.wait(node.start_match("alpha@2", "beta", "coinche", deals=1))
            assert record.team_names() == ("alpha@2", "beta")
            assert [b.version for b in record.bots] == ["2", "", "2", ""]  # what played each seat
            # nor does a stream that says no version (untested) play as the bot
            bare = await connect_client(node, address, RandomBot(7), "alpha", token=token, concurrency=2)
            assert "alpha" not in node.free_seats()
            said = [r.getMessage() for r in caplog.records
                    if getattr(r, "event", "") == "bot_not_seated_as_itself"]
            assert any("plays nowhere (it says no version): only the promoted version 1 plays as alpha" in m
                       for m in said), said
            with pytest.raises(BotNotConnected):
                node.start_match("alpha", "beta", "coinche", deals=1)
            # version 1 back: the bot is back, and its name seats version 1
            again = await versioned(node, address, "alpha", "1", token=token)
            assert node.free_seats()["alpha"] == 2
            assert plays_as(node, "alpha") == "1"
            record = await node.wait(node.start_match("alpha", "beta", "coinche", deals=1))
            assert [b.version for b in record.bots] == ["1", "", "1", ""]
            for c in (two, beta, bare, again):
                await c.disconnect()  # type: ignore[attr-defined]

    arun(main(), 60)


def test_a_first_version_plays_as_the_bot_once_kept_and_the_node_looks_again() -> None:
    """A bot's first version is promoted as it is first seen: it plays as the bot once the registry keeps
    it (never before: another first version may win the write), and the node's seat hooks (its worker)
    are told then. A bot that never says a version plays as before."""
    async def main() -> None:
        async with node_server(config()) as (node, address):
            plain = await connect_client(node, address, HeuristicBot(5), "beta", concurrency=2)
            assert node.free_seats() == {"beta": 2}
            told: list[str] = []
            node.seat_hooks.append(told.append)
            _, token = node.register_bot("alpha")
            first = await versioned(node, address, "alpha", "1", token=token)
            await until(lambda: node.bot_named("alpha").promoted_version == "1", 5, "version 1 kept")  # type: ignore[union-attr]
            await until(lambda: "alpha" in node.free_seats(), 5, "version 1 seated as the bot")
            assert told.count("") >= 2  # the stream opened, then the version was kept
            await node.wait(node.start_match("alpha", "beta", "coinche", deals=1))
            for c in (plain, first):
                await c.disconnect()  # type: ignore[attr-defined]

    arun(main(), 60)
