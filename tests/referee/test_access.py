"""Who may call what: the admin credential, bot tokens, invites, open registration, throttles.

Every call goes over real gRPC to a real node; the credentials travel as the
``authorization: Bearer`` metadata, as any client sends them.
"""

from __future__ import annotations

import asyncio
import os
import stat
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
import pytest
from belote.arena.v1 import arena_service_pb2 as apb
from belote_bot import HeuristicBot, RandomBot

from arena.credentials import ADMIN_FILE, node_admin_token
from arena.harness import LocalArena, local_arena
from arena.referee.access import AccessPolicy, Registration, SlidingWindow
from arena.referee.live import MatchState
from arena.referee.node import Limits
from arena.referee.registry import digest, new_token

from .arena_helpers import FAST, NO_HOLD, DelayBot, RawStream, arena_stub, arun, connect_client, until

pytestmark = pytest.mark.security

ADMIN = new_token("adm")


def policy(**fields: Any) -> AccessPolicy:
    return AccessPolicy(admin_sha256=digest(ADMIN), **fields)


async def code_of(call: Awaitable[Any]) -> grpc.StatusCode:
    try:
        await call
    except grpc.aio.AioRpcError as e:
        return e.code()
    return grpc.StatusCode.OK


def on_arena(body: Callable[[LocalArena], Awaitable[None]], limits: Limits | None = None,
             **fields: Any) -> None:
    async def main() -> None:
        async with local_arena(time=FAST, access=policy(**fields), limits=limits) as arena:
            await body(arena)

    arun(main())


def test_what_changes_the_arena_needs_the_admin_credential() -> None:
    async def body(arena: LocalArena) -> None:
        _, bot_token = arena.node.register_bot("alpha")
        calls: list[Callable[[Any], Awaitable[Any]]] = [
            lambda s: s.RegisterBot(apb.RegisterBotRequest(name="beta")),
            lambda s: s.StartMatch(apb.StartMatchRequest(team0_bot="alpha", team1_bot="alpha")),
            lambda s: s.CancelMatch(apb.CancelMatchRequest(match_id="m-1")),
            lambda s: s.CreateInvite(apb.CreateInviteRequest()),
        ]
        for call in calls:
            async with arena_stub(arena.address) as nobody:
                assert await code_of(call(nobody)) == grpc.StatusCode.UNAUTHENTICATED
            async with arena_stub(arena.address, "adm_not-the-credential") as wrong:
                assert await code_of(call(wrong)) == grpc.StatusCode.UNAUTHENTICATED
            async with arena_stub(arena.address, bot_token) as bot:  # right credential, wrong thing
                assert await code_of(call(bot)) == grpc.StatusCode.PERMISSION_DENIED
        assert [b.name for b in arena.node.bots()] == ["alpha"]  # nothing changed
        async with arena_stub(arena.address, ADMIN) as admin:
            assert (await admin.RegisterBot(apb.RegisterBotRequest(name="beta"))).token

    on_arena(body, limits=NO_HOLD)  # each refusal held (test_refusal_hold): 12 of them here


def test_reading_is_public_by_default_and_needs_a_credential_with_private_reads() -> None:
    async def public(arena: LocalArena) -> None:
        async with arena_stub(arena.address) as nobody:
            assert await code_of(nobody.ListBots(apb.ListBotsRequest())) == grpc.StatusCode.OK
            assert await code_of(nobody.ListMatches(apb.ListMatchesRequest())) == grpc.StatusCode.OK

    async def private(arena: LocalArena) -> None:
        _, token = arena.node.register_bot("alpha")
        async with arena_stub(arena.address) as nobody:
            for call in (nobody.ListBots(apb.ListBotsRequest()), nobody.ListMatches(apb.ListMatchesRequest()),
                         nobody.GetMatch(apb.GetMatchRequest(match_id="m-1"))):
                assert await code_of(call) == grpc.StatusCode.UNAUTHENTICATED
        async with arena_stub(arena.address, token) as bot:
            assert await code_of(bot.ListBots(apb.ListBotsRequest())) == grpc.StatusCode.OK

    on_arena(public)
    on_arena(private, private_reads=True)


def test_an_invite_is_good_for_one_registration() -> None:
    async def body(arena: LocalArena) -> None:
        async with arena_stub(arena.address) as stranger:
            assert (await code_of(stranger.RegisterBot(apb.RegisterBotRequest(name="a")))
                    == grpc.StatusCode.PERMISSION_DENIED)
            assert (await code_of(stranger.RegisterBot(apb.RegisterBotRequest(name="a", invite="inv_forged")))
                    == grpc.StatusCode.PERMISSION_DENIED)
        async with arena_stub(arena.address, ADMIN) as admin:
            invite = (await admin.CreateInvite(apb.CreateInviteRequest())).invite
        async with arena_stub(arena.address) as stranger:
            # a bad name does not spend the invite
            bad = stranger.RegisterBot(apb.RegisterBotRequest(name="no spaces", invite=invite))
            assert await code_of(bad) == grpc.StatusCode.INVALID_ARGUMENT
            assert (await stranger.RegisterBot(apb.RegisterBotRequest(name="a", invite=invite))).token
            again = stranger.RegisterBot(apb.RegisterBotRequest(name="b", invite=invite))
            assert await code_of(again) == grpc.StatusCode.PERMISSION_DENIED
        assert [b.name for b in arena.node.bots()] == ["a"]

    on_arena(body, registration=Registration.INVITE)


def test_a_bot_s_owner_is_the_admin_s_word_or_its_invite_s_and_no_stranger_names_one() -> None:
    """The version tests take turns by owner (issue 24): a stranger who could name an owner would make
    another's bots wait; an invite made for an owner carries the name, which its digest seals."""
    async def body(arena: LocalArena) -> None:
        def owner(name: str) -> str:
            entry = arena.node.bot_named(name)
            assert entry is not None
            return entry.owner

        async with arena_stub(arena.address, ADMIN) as admin:
            invite = (await admin.CreateInvite(apb.CreateInviteRequest(owner="alice"))).invite
            plain = (await admin.CreateInvite(apb.CreateInviteRequest())).invite
            bad = admin.CreateInvite(apb.CreateInviteRequest(owner="no spaces"))
            assert await code_of(bad) == grpc.StatusCode.INVALID_ARGUMENT
            await admin.RegisterBot(apb.RegisterBotRequest(name="mine", owner="bob"))
        async with arena_stub(arena.address) as stranger:
            claims = stranger.RegisterBot(apb.RegisterBotRequest(name="c", invite=plain, owner="alice"))
            assert await code_of(claims) == grpc.StatusCode.PERMISSION_DENIED
            forged = stranger.RegisterBot(apb.RegisterBotRequest(name="c", invite=f"{plain}@alice"))
            assert await code_of(forged) == grpc.StatusCode.PERMISSION_DENIED
            assert (await stranger.RegisterBot(apb.RegisterBotRequest(name="a", invite=invite))).token
            assert (await stranger.RegisterBot(apb.RegisterBotRequest(name="p", invite=plain))).token
        assert (owner("a"), owner("p"), owner("mine")) == ("alice", "", "bob")
        assert [b.name for b in arena.node.bots()] == ["a", "mine", "p"]

    on_arena(body, registration=Registration.INVITE, limits=NO_HOLD)


def test_invite_guesses_are_throttled_per_address_but_a_right_invite_from_another_address_works() -> None:
    """Failed invite codes count as wrong credentials: past the window's few, the guessing address
    is refused (RESOURCE_EXHAUSTED) without its guess being tried, even a right one."""
    async def main() -> None:
        access = policy(registration=Registration.INVITE, failures_per_window=5)
        async with local_arena(time=FAST, access=access, listen="localhost:0", limits=NO_HOLD) as arena:
            guesser = "[::1]:" + arena.address.rsplit(":", 1)[1]  # another address of this machine
            async with arena_stub(arena.address, ADMIN) as admin:
                invite = (await admin.CreateInvite(apb.CreateInviteRequest())).invite
            async with arena_stub(guesser) as stranger:
                guesses = [apb.RegisterBotRequest(name="g", invite=f"inv_{i}") for i in range(30)]
                codes = [await code_of(stranger.RegisterBot(guess)) for guess in guesses]
                assert codes[:5] == [grpc.StatusCode.PERMISSION_DENIED] * 5
                assert codes[5:] == [grpc.StatusCode.RESOURCE_EXHAUSTED] * 25
                right = stranger.RegisterBot(apb.RegisterBotRequest(name="g", invite=invite))
                assert await code_of(right) == grpc.StatusCode.RESOURCE_EXHAUSTED
            async with arena_stub(arena.address) as honest:
                assert (await honest.RegisterBot(apb.RegisterBotRequest(name="h", invite=invite))).token
            assert [b.name for b in arena.node.bots()] == ["h"]

    arun(main())


def test_open_registration_is_rate_limited_per_address() -> None:
    async def body(arena: LocalArena) -> None:
        async with arena_stub(arena.address) as stranger:
            for i in range(3):
                assert (await stranger.RegisterBot(apb.RegisterBotRequest(name=f"b{i}"))).token
            fourth = stranger.RegisterBot(apb.RegisterBotRequest(name="b3"))
            assert await code_of(fourth) == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert len(arena.node.bots()) == 3

    on_arena(body, registration=Registration.OPEN, registrations_per_window=3)


def test_a_rotated_token_replaces_the_old_one() -> None:
    async def body(arena: LocalArena) -> None:
        _, old = arena.node.register_bot("alpha")
        async with arena_stub(arena.address, old) as bot:
            new = (await bot.RotateBotToken(apb.RotateBotTokenRequest())).token
        assert new != old and len(new) >= 32
        stream = RawStream(arena.address)
        await stream.hello(old)
        assert await stream.status() == grpc.StatusCode.UNAUTHENTICATED
        conn = await connect_client(arena.node, arena.address, RandomBot(1), "alpha", token=new)
        await conn.disconnect()
        async with arena_stub(arena.address, ADMIN) as admin:  # only a bot's own token rotates it
            assert await code_of(admin.RotateBotToken(apb.RotateBotTokenRequest())) == \
                grpc.StatusCode.PERMISSION_DENIED

    on_arena(body)


def test_a_revoked_bot_can_no_longer_connect_and_keeps_its_name() -> None:
    async def body(arena: LocalArena) -> None:
        conn = await connect_client(arena.node, arena.address, RandomBot(1), "alpha")
        async with arena_stub(arena.address, conn.token) as bot:
            other = bot.RevokeBot(apb.RevokeBotRequest(name="someone-else"))
            assert await code_of(other) == grpc.StatusCode.PERMISSION_DENIED
            await bot.RevokeBot(apb.RevokeBotRequest())
        # its stream here is cut; the token no longer opens one
        await until(lambda: not next(b for b in arena.node.bots() if b.name == "alpha").connected,
                    what="the revoked bot's stream to end")
        conn.stop.set()
        stream = RawStream(arena.address)
        await stream.hello(conn.token)
        assert await stream.status() == grpc.StatusCode.UNAUTHENTICATED
        [alpha] = arena.node.bots()
        assert alpha.revoked
        async with arena_stub(arena.address, ADMIN) as admin:
            taken = admin.RegisterBot(apb.RegisterBotRequest(name="alpha"))
            assert await code_of(taken) == grpc.StatusCode.ALREADY_EXISTS

    on_arena(body)


def test_the_admin_credential_does_not_open_a_bot_stream() -> None:
    async def body(arena: LocalArena) -> None:
        stream = RawStream(arena.address)
        await stream.hello(ADMIN)
        assert await stream.status() == grpc.StatusCode.PERMISSION_DENIED

    on_arena(body)


def test_wrong_credentials_are_throttled_per_address_but_a_known_token_still_connects() -> None:
    async def body(arena: LocalArena) -> None:
        _, token = arena.node.register_bot("alpha")
        codes = []
        for i in range(6):
            stream = RawStream(arena.address)
            await stream.hello(f"bt_guess{i}")
            codes.append(await stream.status())
        assert codes[:5] == [grpc.StatusCode.UNAUTHENTICATED] * 5
        assert codes[5] == grpc.StatusCode.RESOURCE_EXHAUSTED
        conn = await connect_client(arena.node, arena.address, RandomBot(1), "alpha", token=token)
        await conn.disconnect()

    on_arena(body, failures_per_window=5, limits=NO_HOLD)


def test_a_sliding_window_forgets_what_is_older_than_the_window() -> None:
    now = [0.0]
    window = SlidingWindow(2, 10.0, clock=lambda: now[0])
    window.add("x")
    window.add("x")
    assert window.full("x") and not window.full("y")
    assert window.retry_after("x") == 10.0
    now[0] = 10.0
    assert not window.full("x")


def test_the_seed_of_a_running_match_is_never_shown() -> None:
    async def body(arena: LocalArena) -> None:
        await arena.connect("slow", DelayBot(0.01, HeuristicBot(1)))
        await arena.connect("beta", RandomBot(2))
        mid = arena.node.start_match("slow", "beta", "coinche", deals=2)
        async with arena_stub(arena.address) as anyone:
            running = (await anyone.GetMatch(apb.GetMatchRequest(match_id=mid))).match
            listed = (await anyone.ListMatches(apb.ListMatchesRequest())).matches
            assert running.state == "running" and running.seed == ""
            assert [m.seed for m in listed] == [""]
            record = await arena.node.wait(mid)
            over = (await anyone.GetMatch(apb.GetMatchRequest(match_id=mid))).match
        # drawn from the node's secret, shown once the match is over
        assert over.seed == record.seed and len(over.seed) == 64

    on_arena(body)


def test_a_node_makes_its_admin_credential_readable_by_its_user_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("BELOTE_ADMIN_TOKEN", raising=False)
    token, where = node_admin_token(None, tmp_path)
    path = tmp_path / ADMIN_FILE
    assert where == str(path) and path.read_text().strip() == token and len(token) > 40
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert node_admin_token(None, tmp_path) == (token, where)  # kept across restarts
    from_env = new_token("adm")
    monkeypatch.setenv("BELOTE_ADMIN_TOKEN", from_env)
    assert node_admin_token(None, tmp_path)[0] == from_env


def test_tokens_are_made_by_the_node_and_long() -> None:
    async def body(arena: LocalArena) -> None:
        tokens = {arena.node.register_bot(f"b{i}")[1] for i in range(20)}
        assert len(tokens) == 20 and all(len(t) >= 32 for t in tokens)  # 192 random bits each

    on_arena(body)


def test_a_match_can_be_cancelled_by_an_admin() -> None:
    async def body(arena: LocalArena) -> None:
        await arena.connect("slow", DelayBot(0.01, HeuristicBot(1)))
        await arena.connect("beta", RandomBot(2))
        mid = arena.node.start_match("slow", "beta", "coinche", deals=5)
        waiting = asyncio.ensure_future(arena.node.wait(mid))  # an aborted match's record is not kept
        async with arena_stub(arena.address, ADMIN) as admin:
            await admin.CancelMatch(apb.CancelMatchRequest(match_id=mid))
            record = await asyncio.wait_for(waiting, 10)
            assert record.result.reason == "aborted"
            assert arena.node.summary(mid).state is MatchState.ABORTED
            again = admin.CancelMatch(apb.CancelMatchRequest(match_id=mid))
            assert await code_of(again) == grpc.StatusCode.NOT_FOUND

    on_arena(body)


def test_a_rotation_cuts_the_old_token_s_stream_and_the_new_token_s_stream_takes_over() -> None:
    """A thief's stream with a stolen token ends as soon as the owner rotates it, and is never seated;
    the owner's stream with the new token is welcomed even before (never ALREADY_EXISTS)."""
    async def body(arena: LocalArena) -> None:
        await arena.connect("beta", RandomBot(2))
        _, old = arena.node.register_bot("alpha")
        thief = RawStream(arena.address)
        await thief.hello(old)
        assert (await thief.read()).HasField("welcome")
        async with arena_stub(arena.address, old) as owner:
            new = (await owner.RotateBotToken(apb.RotateBotTokenRequest())).token
        assert await thief.status() == grpc.StatusCode.OK  # cut by the node
        mine = await connect_client(arena.node, arena.address, RandomBot(1), "alpha", token=new)
        record = await arena.play("alpha", "beta", deals=1)
        assert record.result.reason == "finished"
        await mine.disconnect()

    on_arena(body)


async def stale_stream(arena: LocalArena) -> tuple[RawStream, str]:
    """alpha's stream, opened with a token since rotated as another node rotates it: this node's copy
    of the registry has the new token, and the stream of the old one is not cut yet. The stream and
    the new token."""
    _, old = arena.node.register_bot("alpha")
    stream = RawStream(arena.address)
    await stream.hello(old)
    assert (await stream.read()).HasField("welcome")
    entry = arena.node.bot_named("alpha")
    assert entry is not None
    _, new = arena.node._registry.rotate(entry)  # the backend's write, as it reaches this node
    assert arena.node.link_for(entry).connected  # not cut yet
    return stream, new


def test_a_stream_of_a_rotated_token_is_never_seated() -> None:
    async def body(arena: LocalArena) -> None:
        await arena.connect("beta", RandomBot(2))
        stale, _ = await stale_stream(arena)
        async with arena_stub(arena.address, ADMIN) as admin:
            start = admin.StartMatch(apb.StartMatchRequest(team0_bot="alpha", team1_bot="beta", deals=1))
            assert await code_of(start) == grpc.StatusCode.FAILED_PRECONDITION
        assert await stale.status() == grpc.StatusCode.OK  # and the node cut it

    on_arena(body)


def test_the_new_token_s_stream_takes_over_from_a_stream_of_the_rotated_one() -> None:
    async def body(arena: LocalArena) -> None:
        stale, new = await stale_stream(arena)
        owner = RawStream(arena.address)
        await owner.hello(new)
        assert (await owner.read()).HasField("welcome")  # not ALREADY_EXISTS
        assert await stale.status() == grpc.StatusCode.OK
        await owner.close()

    on_arena(body)
