"""A tournament's secret is never reused, and a Redis that lost the arena's data is reported the same
way by every read of tournaments, results and ratings.

Real nodes (``running_node``), real gRPC, the web API over real HTTP, the command line in a child
process; the data loss is a Redis server of the test's own that restarts empty.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import grpc
import pytest
from belote.arena.v1 import arena_service_pb2 as apb
from belote_bot import RandomBot, run_async

from arena.node.run import NodeSettings, RunningNode, running_node
from arena.queue import Broker, EmbeddedBroker
from arena.referee.access import AccessPolicy
from arena.referee.registry import digest, new_token
from arena.tournament import TournamentState
from arena.web import web_for
from tests.node.cli import cli
from tests.queue.test_redis_backend import free_port, start_redis, stop_redis
from tests.referee.arena_helpers import arena_stub, arun, until

ADMIN = new_token("adm")
#: the same node secret every time: before, a tournament's secret was derived from it and its id
NODE_SECRET = "the-same-node-secret"
LOST = "lost the arena's data"


def settings() -> NodeSettings:
    return NodeSettings(poll_s=0.05, heartbeat_s=0.2, lease_s=10.0, drain_s=1.0, secret=NODE_SECRET,
                        access=AccessPolicy(admin_sha256=digest(ADMIN)))


@contextlib.asynccontextmanager
async def node_with_bots(broker: Broker) -> AsyncIterator[RunningNode]:
    """A node on ``broker`` with the bots north and east registered and connected."""
    stop = asyncio.Event()
    async with running_node(broker, settings(), asyncio.Event()) as running:
        tasks = []
        for i, name in enumerate(("north", "east")):
            _, token = running.node.register_bot(name)
            tasks.append(asyncio.create_task(run_async(RandomBot(i), running.address, token, 4, stop=stop,
                                                       all_nodes=False, verbose=False)))
        await until(lambda: sum(b.connected for b in running.node.bots()) == 2, 10, "the bots")
        try:
            yield running
        finally:
            stop.set()
            await asyncio.gather(*tasks, return_exceptions=True)


async def play(running: RunningNode, tournament_id: str) -> str:
    """Create a rated round-robin of north and east, play it to its end; its commitment."""
    async with arena_stub(running.address, ADMIN) as admin:
        made = await admin.CreateTournament(apb.CreateTournamentRequest(spec=apb.TournamentSpec(
            tournament_id=tournament_id, format="round-robin", bots=["north", "east"], ruleset="coinche",
            deals=2)))
    broker = running.worker.broker

    def over() -> bool:
        found = broker.get_tournament(tournament_id)
        return found is not None and found[1] is TournamentState.FINISHED

    await until(over, 60, f"{tournament_id} to finish")
    assert not made.unrated_reason
    return str(made.commitment)


@pytest.mark.security
def test_a_tournament_made_again_with_the_same_id_gets_a_fresh_secret(tmp_path: Path) -> None:
    async def main() -> list[tuple[str, dict[str, Any]]]:
        out = []
        for attempt in ("first", "again"):  # the first queue lost (a fresh file), the node's secret kept
            with EmbeddedBroker(tmp_path / attempt / "queue.sqlite3") as broker:
                async with node_with_bots(broker) as running:
                    committed = await play(running, "same-id")
                    code, text, err = await cli("verify", "same-id", "--address", running.address, "--json",
                                                "--data-dir", str(tmp_path / "no-admin"))
                    assert code == 0, err
                    out.append((committed, json.loads(text)))
        return out

    (tmp_path / "first").mkdir()
    (tmp_path / "again").mkdir()
    (first, verified_first), (again, verified_again) = arun(main(), timeout=180)
    assert first != again  # the deals of the first, public once it ended, are not dealt again
    for committed, verified in ((first, verified_first), (again, verified_again)):
        assert verified["ok"] and verified["commitment"] == committed and verified["deals"] == 4


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[tuple[int, Path]]:
    """A free port for a redis-server of this test's own, and a folder (skipped without redis-server)."""
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not on PATH")
    yield free_port(), tmp_path


async def refused(call: Any) -> str:
    """The details of a call refused as UNAVAILABLE ("" if it was answered)."""
    try:
        await call
    except grpc.aio.AioRpcError as e:
        return f"{e.code().name}: {e.details()}"
    return ""


@pytest.mark.reliability
def test_a_redis_that_restarted_empty_is_reported_the_same_way_by_every_read(
        own_redis: tuple[int, Path]) -> None:
    from arena.queue.redis_broker import RedisBroker

    port, tmp_path = own_redis
    url = f"redis://127.0.0.1:{port}/0"
    (tmp_path / "before").mkdir()
    (tmp_path / "after").mkdir()
    proc = start_redis(port, tmp_path / "before")

    async def main() -> dict[str, Any]:
        nonlocal proc
        seen: dict[str, Any] = {}
        with RedisBroker(url) as broker:
            async with node_with_bots(broker) as running, web_for(running, "127.0.0.1:0") as web:
                seen["first"] = await play(running, "t")
                stop_redis(proc)  # Redis restarts, with none of its data
                proc = start_redis(port, tmp_path / "after")
                address = running.address
                async with arena_stub(address) as anyone, aiohttp.ClientSession() as http:
                    calls: dict[str, tuple[str, Any]] = {
                        "ListTournaments": ("ListTournaments", apb.ListTournamentsRequest()),
                        "GetLeaderboard": ("GetLeaderboard", apb.GetLeaderboardRequest()),
                        "GetLeaderboard(coinche)": ("GetLeaderboard",
                                                    apb.GetLeaderboardRequest(pool="coinche")),
                        "GetTournament": ("GetTournament", apb.GetTournamentRequest(tournament_id="t")),
                    }
                    for name, (rpc, request) in calls.items():
                        for _ in range(200):  # the first call after the restart may find no Redis yet
                            seen[name] = await refused(getattr(anyone, rpc)(request))
                            if LOST in seen[name]:
                                break
                            await asyncio.sleep(0.05)
                    for path in ("/api/v1/tournaments", "/api/v1/leaderboard", "/api/v1/tournaments/t",
                                 "/api/v1/leaderboard?pool=coinche"):
                        async with http.get(web.url + path) as reply:
                            seen[path] = (reply.status, (await reply.json()))
                    for args in (("tournament", "list"), ("rankings",), ("tournament", "status", "t")):
                        seen[" ".join(args)] = await cli(*args, "--address", address,
                                                         "--data-dir", str(tmp_path / "no-admin"))
        # the nodes restart on the empty Redis, as the message says, and the same id is made again
        with RedisBroker(url) as broker:
            async with node_with_bots(broker) as running:
                seen["again"] = await play(running, "t")
        return seen

    try:
        seen = arun(main(), timeout=240)
    finally:
        stop_redis(proc)
    message = f"Redis at {url} {LOST}"
    for name in ("ListTournaments", "GetLeaderboard", "GetLeaderboard(coinche)", "GetTournament"):
        assert seen[name].startswith(f"UNAVAILABLE: the tournament queue: {message}"), (name, seen[name])
    for path in ("/api/v1/tournaments", "/api/v1/leaderboard", "/api/v1/tournaments/t",
                 "/api/v1/leaderboard?pool=coinche"):
        status, body = seen[path]
        assert status == 503 and body["error"].startswith(f"the tournament queue: {message}"), (path, body)
    for command in ("tournament list", "rankings", "tournament status t"):
        code, out, err = seen[command]
        assert code != 0 and out == "" and message in err, (command, seen[command])
    assert seen["again"] != seen["first"]
