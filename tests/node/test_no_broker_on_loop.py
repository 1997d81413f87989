"""No Redis command is ever sent from a node's event loop, whatever a caller asks.

A node of a queue on a real Redis, with its web server and two SDK bots; the
broker's Redis client is wrapped so that every command taken from the event
loop's thread is recorded (each command, plain, pipelined or a script, takes a
connection from the client's pool: the wrapper is there). Then every
``ArenaService`` method (listed from the service's descriptor, so that a
method added later is called too or the test says it is not), a bot stream's
Hello, a health check and every HTTP route (listed from the web app's router)
are called, the way a client would, and nothing may have been recorded. A
Redis command on the loop holds every match of the node while Redis answers:
a slow or paused Redis then stalls them all (tests/node/test_paused_redis.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import threading
import traceback
import uuid
from collections.abc import AsyncIterator, Awaitable, Iterator
from typing import Any

import aiohttp
import grpc
import pytest
from belote.arena.v1 import arena_service_pb2 as apb
from belote_bot import HeuristicBot, RandomBot, run_async
from grpc_health.v1 import health_pb2, health_pb2_grpc

from arena.node.run import NodeSettings, RunningNode, running_node
from arena.queue.broker import Broker
from arena.referee.access import AccessPolicy, Registration
from arena.referee.registry import digest, new_token
from arena.web import web_for
from tests.queue.conftest import REDIS_URL, redis_unavailable
from tests.referee.arena_helpers import FAST, arena_stub

pytestmark = pytest.mark.reliability

ADMIN = new_token("adm")


class LoopCommands:
    """Records each Redis command a broker's client sends from one thread (the event loop's)."""

    def __init__(self, broker: Broker) -> None:
        self.pool = broker._redis.connection_pool  # type: ignore[attr-defined]
        self.original = self.pool.get_connection
        self.loop_thread = -1
        self.seen: list[str] = []

    def __enter__(self) -> LoopCommands:
        def get_connection(*args: Any, **kwargs: Any) -> Any:
            if threading.get_ident() == self.loop_thread:
                where = [f"{f.filename.rsplit('/', 2)[-1]}:{f.lineno} {f.name}"
                         for f in traceback.extract_stack(limit=14)[:-1] if "/arena/" in f.filename]
                self.seen.append(" <- ".join(reversed(where)))
            return self.original(*args, **kwargs)

        self.pool.get_connection = get_connection
        return self

    def __exit__(self, *exc: object) -> None:
        self.pool.get_connection = self.original


@pytest.fixture
def redis_broker() -> Iterator[Broker]:
    why = redis_unavailable()
    if why:
        pytest.skip(why)
    import redis

    from arena.queue.redis_broker import RedisBroker

    prefix = f"test-arena-{uuid.uuid4().hex[:12]}"
    broker = RedisBroker(REDIS_URL, prefix=prefix)
    try:
        yield broker
    finally:
        broker.close()
        client = redis.Redis.from_url(REDIS_URL)
        try:
            own = list(client.scan_iter(match=f"{prefix}:*", count=500))
            if own:
                client.delete(*own)
        finally:
            client.close()


async def code_of(call: Awaitable[Any]) -> grpc.StatusCode:
    try:
        await call
    except grpc.aio.AioRpcError as e:
        return e.code()
    return grpc.StatusCode.OK


async def drain(call: Any) -> None:
    async for _ in call:
        pass


class Calls:
    """The ArenaService methods called so far, through stubs that note each one."""

    def __init__(self) -> None:
        self.called: set[str] = set()

    @contextlib.asynccontextmanager
    async def stub(self, address: str, token: str = "") -> AsyncIterator[Any]:
        async with arena_stub(address, token) as stub:
            yield _Noting(stub, self.called)


class _Noting:
    def __init__(self, stub: Any, called: set[str]) -> None:
        self._stub = stub
        self._called = called

    def __getattr__(self, name: str) -> Any:
        self._called.add(name)
        return getattr(self._stub, name)


async def every_arena_call(address: str, calls: Calls) -> tuple[str, str]:
    """Every ArenaService method, by an admin, a bot and a stranger; the ids of a finished match and
    of a tournament, for the HTTP routes."""
    async with calls.stub(address, ADMIN) as admin, calls.stub(address) as anyone:
        invite = (await admin.CreateInvite(apb.CreateInviteRequest())).invite
        gamma = await anyone.RegisterBot(apb.RegisterBotRequest(name="gamma", invite=invite))
        assert await code_of(anyone.RegisterBot(apb.RegisterBotRequest(name="delta", invite="inv_forged"))) \
            == grpc.StatusCode.PERMISSION_DENIED
        async with calls.stub(address, gamma.token) as bot:
            rotated = (await bot.RotateBotToken(apb.RotateBotTokenRequest())).token
        async with calls.stub(address, rotated) as bot:
            await bot.RevokeBot(apb.RevokeBotRequest())
        async with calls.stub(address, "bt_a-token-nobody-has") as stranger:
            assert await code_of(stranger.ListBots(apb.ListBotsRequest())) == grpc.StatusCode.UNAUTHENTICATED
        assert len((await anyone.ListBots(apb.ListBotsRequest())).bots) == 3
        assert (await anyone.GetBot(apb.GetBotRequest(name="alpha"))).bot.connected
        assert await code_of(anyone.GetBot(apb.GetBotRequest(name="nobody"))) == grpc.StatusCode.NOT_FOUND

        started = await admin.StartMatch(apb.StartMatchRequest(team0_bot="alpha", team1_bot="beta",
                                                               ruleset="coinche", deals=1))
        await drain(anyone.WatchMatch(apb.WatchMatchRequest(match_id=started.match_id)))
        await anyone.GetMatch(apb.GetMatchRequest(match_id=started.match_id))
        await anyone.GetMatchRecord(apb.GetMatchRecordRequest(match_id=started.match_id))
        await anyone.ListMatches(apb.ListMatchesRequest())
        other = await admin.StartMatch(apb.StartMatchRequest(team0_bot="alpha", team1_bot="beta", deals=200))
        await admin.CancelMatch(apb.CancelMatchRequest(match_id=other.match_id))
        assert await code_of(admin.StartMatch(apb.StartMatchRequest(team0_bot="alpha", team1_bot="nobody"))) \
            == grpc.StatusCode.NOT_FOUND

        spec = apb.TournamentSpec(tournament_id="t-loop", format="round-robin", bots=["alpha", "beta"],
                                  ruleset="coinche", deals=1)
        await admin.CreateTournament(apb.CreateTournamentRequest(spec=spec))
        assert await code_of(admin.CreateTournament(apb.CreateTournamentRequest(spec=apb.TournamentSpec(
            format="round-robin", bots=["alpha", "nobody"])))) == grpc.StatusCode.INVALID_ARGUMENT
        for _ in range(200):
            status = (await anyone.GetTournament(apb.GetTournamentRequest(tournament_id="t-loop"))).tournament
            if status.state == "finished":
                break
            await asyncio.sleep(0.05)
        await anyone.ListTournaments(apb.ListTournamentsRequest())
        await code_of(admin.AuditTournament(apb.AuditTournamentRequest(tournament_id="t-loop", max_deals=4)))
        await admin.ResumeTournament(apb.ResumeTournamentRequest(tournament_id="t-loop"))
        await admin.CreateTournament(apb.CreateTournamentRequest(spec=apb.TournamentSpec(
            tournament_id="t-cancelled", format="round-robin", bots=["alpha", "beta"], deals=1)))
        await admin.CancelTournament(apb.CancelTournamentRequest(tournament_id="t-cancelled"))
        await code_of(anyone.GetLeaderboard(apb.GetLeaderboardRequest()))
        await admin.CreateSchedule(apb.CreateScheduleRequest(schedule_id="s-loop", every_s=86_400, at="03:00",
                                                             spec=apb.TournamentSpec(format="round-robin",
                                                                                     bots=["alpha", "beta"])))
        await anyone.ListSchedules(apb.ListSchedulesRequest())
        await admin.CancelSchedule(apb.CancelScheduleRequest(schedule_id="s-loop"))
        await admin.StartLadder(apb.StartLadderRequest(pool="coinche", deals=1))
        await admin.AddLadderBot(apb.AddLadderBotRequest(pool="coinche", bots=["alpha"]))
        await anyone.GetLadder(apb.GetLadderRequest(pool="coinche"))
        await anyone.ListLadders(apb.ListLaddersRequest())
        await admin.RemoveLadderBot(apb.RemoveLadderBotRequest(pool="coinche", bots=["alpha"]))
        await admin.StopLadder(apb.StopLadderRequest(pool="coinche"))
        swiss = apb.TournamentSpec(format="swiss")
        await admin.CreateSchedule(apb.CreateScheduleRequest(schedule_id="s-ladder", every_s=86_400,
                                                             ladder="coinche", spec=swiss))
        await admin.CancelSchedule(apb.CancelScheduleRequest(schedule_id="s-ladder"))
        await anyone.GetBotVersions(apb.GetBotVersionsRequest(name="alpha"))
        await anyone.GetBotReport(apb.GetBotReportRequest(name="alpha", limit=5))
        promote = apb.PromoteBotVersionRequest(name="alpha", version="9")  # alpha never said a version
        assert await code_of(admin.PromoteBotVersion(promote)) == grpc.StatusCode.FAILED_PRECONDITION
        return started.match_id, "t-loop"


async def every_http_route(running: RunningNode, url: str, runner: Any, match_id: str, tournament: str,
                           token: str) -> list[str]:
    """GET every route of the web app (its placeholders filled in), sign in and out; what was asked."""
    values = {"name": "alpha", "id": match_id, "pool": "coinche"}
    asked = []
    async with aiohttp.ClientSession() as http:
        for route in runner.app.router.routes():
            info = route.resource.get_info() if route.resource is not None else {}
            path = info.get("formatter") or info.get("path") or ""
            if "prefix" in info:  # the static files
                path = info["prefix"] + "/app.js"
            if route.method not in ("GET", "POST", "DELETE") or not path:
                continue
            fields = {name: values.get(name, "") for name in re.findall(r"{(\w+)}", path)}
            assert all(fields.values()), f"no value for a placeholder of {path}: add one to this test"
            if "tournaments" in path:
                fields["id"] = tournament
            target = path.format(**fields)
            body = {"token": token} if route.method == "POST" else None
            async with http.request(route.method, url + target, json=body) as reply:
                await reply.read()
                assert reply.status < 500, (target, reply.status)
            asked.append(f"{route.method} {target}")
    return asked


def test_no_call_of_any_kind_sends_a_redis_command_from_the_event_loop(redis_broker: Broker) -> None:
    async def main() -> None:
        access = AccessPolicy(admin_sha256=digest(ADMIN), registration=Registration.INVITE)
        settings = NodeSettings(time=FAST, poll_s=0.05, heartbeat_s=0.2, lease_s=5.0, drain_s=2.0,
                                access=access)
        with LoopCommands(redis_broker) as commands:
            commands.loop_thread = threading.get_ident()
            stop = asyncio.Event()
            async with running_node(redis_broker, settings, asyncio.Event()) as running, \
                    web_for(running, "127.0.0.1:0") as web:
                calls = Calls()
                async with calls.stub(running.address, ADMIN) as admin:
                    tokens = {name: (await admin.RegisterBot(apb.RegisterBotRequest(name=name))).token
                              for name in ("alpha", "beta")}
                bots = [asyncio.create_task(run_async(bot, running.address, tokens[name], 8, name=name,
                                                      stop=stop, verbose=False))
                        for name, bot in (("alpha", HeuristicBot(1)), ("beta", RandomBot(2)))]
                try:
                    async with arena_stub(running.address) as anyone:
                        for _ in range(200):
                            listed = (await anyone.ListBots(apb.ListBotsRequest())).bots
                            if sum(b.connected for b in listed) == 2:
                                break
                            await asyncio.sleep(0.05)
                    match_id, tournament = await every_arena_call(running.address, calls)
                    asked = await every_http_route(running, web.url, web.runner, match_id, tournament,
                                                   tokens["alpha"])
                    async with grpc.aio.insecure_channel(running.address) as channel:
                        health: Any = health_pb2_grpc.HealthStub(channel)
                        await health.Check(health_pb2.HealthCheckRequest())
                finally:
                    stop.set()
                    await asyncio.gather(*bots, return_exceptions=True)
        methods = set(apb.DESCRIPTOR.services_by_name["ArenaService"].methods_by_name)
        assert methods <= calls.called, f"not called: {sorted(methods - calls.called)}"
        assert any("/api/v1/bots/" in a for a in asked) and any("/metrics" in a for a in asked), asked
        assert commands.seen == [], "Redis commands from the event loop:\n" + "\n".join(commands.seen[:20])

    asyncio.run(asyncio.wait_for(main(), 120))
