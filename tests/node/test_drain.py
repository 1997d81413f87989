"""A draining node says so: its health check answers NOT_SERVING while its running matches finish,
so that load balancers and Kubernetes' probes stop sending it work."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
import pytest
from belote_bot import RandomBot
from grpc_health.v1 import health_pb2, health_pb2_grpc

from arena.referee.live import MatchState
from tests.node.test_tournament_trust import ADMIN, connect, create, node
from tests.referee.arena_helpers import DelayBot, arena_stub, arun, until

SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING


@pytest.mark.reliability
def test_health_is_not_serving_while_the_node_drains(tmp_path: Path) -> None:
    statuses: list[int] = []

    async def poll(address: str) -> None:
        async with grpc.aio.insecure_channel(address) as channel:
            stub: Any = health_pb2_grpc.HealthStub(channel)
            while True:
                try:
                    reply = await stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=1)
                except grpc.aio.AioRpcError:
                    return  # the node has stopped
                statuses.append(reply.status)
                await asyncio.sleep(0.02)

    async def main() -> None:
        stop = asyncio.Event()
        async with node(tmp_path, drain_s=10.0) as running:
            bots = [connect(running, name, DelayBot(0.02, RandomBot(i)), stop)
                    for i, name in enumerate(("slow-a", "slow-b"))]
            async with arena_stub(running.address, ADMIN) as admin:
                await create(admin, tournament_id="drain", format="round-robin", bots=["slow-a", "slow-b"],
                             ruleset="classic", deals=3)
            await until(lambda: any(s.state is MatchState.RUNNING for s in running.node.summaries()),
                        timeout=30, what="a match to run")
            poller = asyncio.create_task(poll(running.address))
            await until(lambda: SERVING in statuses, what="the health check to answer")
            # leaving the block drains the node: its running match finishes first
        await asyncio.wait_for(poller, 10)
        stop.set()
        await asyncio.gather(*bots, return_exceptions=True)
        assert running.node.draining

    arun(main(), timeout=120)
    first_not_serving = statuses.index(NOT_SERVING)
    assert set(statuses[:first_not_serving]) == {SERVING}
    assert set(statuses[first_not_serving:]) == {NOT_SERVING}  # never serving again
    assert len(statuses) - first_not_serving >= 2, statuses  # seen while the match drained


def test_a_node_alone_turns_not_serving_once(tmp_path: Path) -> None:
    async def main() -> list[int]:
        from arena.harness import local_arena

        async with local_arena() as arena, grpc.aio.insecure_channel(arena.address) as channel:
            stub: Any = health_pb2_grpc.HealthStub(channel)
            before = (await stub.Check(health_pb2.HealthCheckRequest(service=""))).status
            await arena.node.begin_drain()
            await arena.node.begin_drain()  # once is enough
            after = [(await stub.Check(health_pb2.HealthCheckRequest(service=s))).status
                     for s in ("", "belote.arena.v1.ArenaService", "belote.arena.v1.BotService")]
            return [before, *after]

    assert arun(main()) == [SERVING, NOT_SERVING, NOT_SERVING, NOT_SERVING]


@pytest.mark.reliability
def test_the_web_pages_answer_until_the_node_has_drained(tmp_path: Path) -> None:
    """``serve --http``: the pages, the live views and /metrics outlive the drain, so people watch
    the last matches end; the web server stops only once they have."""
    import aiohttp

    from arena.web import web_for

    seen: list[tuple[bool, int]] = []  # (draining, HTTP status) of each /metrics read

    async def poll(url: str, running: Any) -> None:
        async with aiohttp.ClientSession() as session:
            while True:
                try:
                    async with session.get(f"{url}/metrics", timeout=aiohttp.ClientTimeout(total=2)) as r:
                        seen.append((running.node.draining, r.status))
                except (aiohttp.ClientError, TimeoutError):
                    return  # the web server has stopped
                await asyncio.sleep(0.02)

    async def main() -> None:
        stop = asyncio.Event()
        async with node(tmp_path, drain_s=10.0) as running:
            site = await running.until_drained.enter_async_context(web_for(running, "127.0.0.1:0"))
            bots = [connect(running, name, DelayBot(0.02, RandomBot(i)), stop)
                    for i, name in enumerate(("slow-a", "slow-b"))]
            async with arena_stub(running.address, ADMIN) as admin:
                await create(admin, tournament_id="drain-web", format="round-robin",
                             bots=["slow-a", "slow-b"], ruleset="classic", deals=3)
            await until(lambda: any(s.state is MatchState.RUNNING for s in running.node.summaries()),
                        timeout=30, what="a match to run")
            poller = asyncio.create_task(poll(site.url, running))
            await until(lambda: bool(seen), what="the web server to answer")
        await asyncio.wait_for(poller, 10)
        stop.set()
        await asyncio.gather(*bots, return_exceptions=True)

    arun(main(), timeout=120)
    assert {status for _, status in seen} == {200}
    assert sum(draining for draining, _ in seen) >= 2, seen  # answered while the match drained


def test_healthz_answers_as_the_grpc_health_check_does(tmp_path: Path) -> None:
    """``GET /healthz`` on the web port, for a probe that cannot speak gRPC over TLS (Kubernetes' grpc
    probe): 200 while the node serves, 503 from the moment it drains, as its gRPC health check says."""
    import aiohttp

    from arena.web import web_for

    async def main() -> list[tuple[int, str, int]]:
        seen: list[tuple[int, str, int]] = []
        async with node(tmp_path) as running, web_for(running, "127.0.0.1:0") as site, \
                aiohttp.ClientSession() as session, grpc.aio.insecure_channel(running.address) as channel:
            stub: Any = health_pb2_grpc.HealthStub(channel)
            for _ in range(2):
                async with session.get(f"{site.url}/healthz") as r:
                    grpc_status = (await stub.Check(health_pb2.HealthCheckRequest(service=""))).status
                    seen.append((r.status, await r.text(), grpc_status))
                await running.node.begin_drain()
        return seen

    assert arun(main(), timeout=60) == [(200, "SERVING\n", SERVING), (503, "NOT_SERVING\n", NOT_SERVING)]
