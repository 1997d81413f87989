"""A paused Redis holds no match and no health check: no broker call runs on a node's event loop.

A node (``belote-arena serve`` with its web server) on a redis-server of the
test's own, two SDK bots in their own processes playing a long match. Redis
is paused (``CLIENT PAUSE``: every command waits) for :data:`PAUSE_S`; at
once every read API is called, over gRPC and HTTP, each from its own thread
(each may wait for Redis: that is the caller's wait, not the node's), and the
node's health is checked throughout. Nothing the node does on its event loop
waits for Redis, so the health checks answer at once and the match's
decisions keep their pace. (Before: one anonymous ``ListBots`` held the loop
for the whole pause, a health check took 1.8 s, and a 300-deal match twice
its time.)
"""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
import pytest
import redis
from belote.arena.v1 import arena_service_pb2 as apb
from belote.arena.v1 import arena_service_pb2_grpc as agrpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from arena.records import MatchRecord
from tests.cluster.own_redis import own_redis_server
from tests.cluster.procs import ADMIN_TOKEN, Procs, free_port, register_bots, wait_connected, wait_for
from tests.timing import within

pytestmark = [pytest.mark.reliability, pytest.mark.slow, pytest.mark.timing]

#: how long Redis is paused (seconds): what a call that waited for it on the loop would hold the node
PAUSE_S = 2.0
#: deals of the honest match: it runs before, during and after the pause
DEALS = 200


def health_seconds(channel: grpc.Channel) -> float:
    started = time.monotonic()
    stub: Any = health_pb2_grpc.HealthStub(channel)
    reply = stub.Check(health_pb2.HealthCheckRequest(), timeout=30)
    assert reply.status == health_pb2.HealthCheckResponse.SERVING
    return time.monotonic() - started


def every_read(address: str, url: str, match_id: str, token: str) -> dict[str, Callable[[], Any]]:
    """Every read, over gRPC (anonymous and with a bot's token) and HTTP, by name."""
    channel = grpc.insecure_channel(address)
    anyone = agrpc.ArenaServiceStub(channel)
    as_bot = (("authorization", f"Bearer {token}"),)

    def http(path: str) -> Callable[[], Any]:
        def get() -> int:
            try:
                with urllib.request.urlopen(url + path, timeout=30) as reply:
                    reply.read()
                    return int(reply.status)
            except urllib.error.HTTPError as e:
                return int(e.code)
        return get

    def watch() -> str:  # the first event only: the match goes on
        call = anyone.WatchMatch(apb.WatchMatchRequest(match_id=match_id), timeout=30)
        next(iter(call))
        call.cancel()
        return "OK"

    def grpc_call(method: str, request: Any, metadata: Any = ()) -> Callable[[], Any]:
        def call() -> str:
            try:
                getattr(anyone, method)(request, timeout=30, metadata=metadata)
                return "OK"
            except grpc.RpcError as e:
                return str(e.code().name)  # a refusal is an answer too (a running match has no record)
        return call

    return {
        "ListBots": grpc_call("ListBots", apb.ListBotsRequest()),
        "ListBots as a bot": grpc_call("ListBots", apb.ListBotsRequest(), as_bot),
        "ListBots with a wrong token": grpc_call("ListBots", apb.ListBotsRequest(),
                                                 (("authorization", "Bearer bt_wrong"),)),
        "GetBot": grpc_call("GetBot", apb.GetBotRequest(name="alpha")),
        "GetBot unknown": grpc_call("GetBot", apb.GetBotRequest(name="nobody")),
        "ListMatches": grpc_call("ListMatches", apb.ListMatchesRequest()),
        "GetMatch": grpc_call("GetMatch", apb.GetMatchRequest(match_id=match_id)),
        "GetMatchRecord": grpc_call("GetMatchRecord", apb.GetMatchRecordRequest(match_id=match_id)),
        "WatchMatch": watch,
        "GetLeaderboard": grpc_call("GetLeaderboard", apb.GetLeaderboardRequest()),
        "ListTournaments": grpc_call("ListTournaments", apb.ListTournamentsRequest()),
        "GetTournament": grpc_call("GetTournament", apb.GetTournamentRequest(tournament_id="nope")),
        **{f"GET {p}": http(p) for p in (
            "/api/v1/pools", "/api/v1/leaderboard", "/api/v1/bots", "/api/v1/bots/alpha",
            "/api/v1/bots/alpha/history", "/api/v1/tournaments", "/api/v1/tournaments/nope",
            f"/api/v1/matches/{match_id}", "/metrics", "/bots")},
    }


def test_a_paused_redis_holds_no_health_check_and_no_decision(procs: Procs, tmp_path: Path) -> None:
    with own_redis_server() as redis_url:
        http_port = free_port()
        node = procs.ready(procs.start_node("node", tmp_path / "node", redis=redis_url,
                                            http=f"127.0.0.1:{http_port}"))
        address, url = node.address, f"http://127.0.0.1:{http_port}"
        tokens = register_bots(address, ["alpha", "beta"])
        procs.start_bot("alpha", "heuristic", address, tokens["alpha"])
        procs.start_bot("beta", "random", address, tokens["beta"])
        wait_connected([address], ["alpha", "beta"])

        channel = grpc.insecure_channel(address)
        admin = agrpc.ArenaServiceStub(channel)
        as_admin = (("authorization", f"Bearer {ADMIN_TOKEN}"),)
        quiet_health = min(health_seconds(channel) for _ in range(5))
        match_id = admin.StartMatch(apb.StartMatchRequest(team0_bot="alpha", team1_bot="beta",
                                                          ruleset="coinche", deals=DEALS),
                                    metadata=as_admin, timeout=10).match_id
        time.sleep(0.5)  # the match under way

        pauser: Any = redis.Redis.from_url(redis_url)
        reads = every_read(address, url, match_id, tokens["alpha"])
        answers: dict[str, Any] = {}
        threads = [threading.Thread(target=lambda n=name, r=read: answers.__setitem__(n, r()), daemon=True)
                   for name, read in reads.items()]
        pauser.execute_command("CLIENT", "PAUSE", int(PAUSE_S * 1000))
        paused_at = time.monotonic()
        for t in threads:
            t.start()
        time.sleep(0.1)
        during = []
        while time.monotonic() - paused_at < PAUSE_S - 0.3:
            during.append(health_seconds(channel))
            time.sleep(0.1)
        for t in threads:
            t.join(30)
        pauser.close()

        def over() -> bool:
            state = admin.GetMatch(apb.GetMatchRequest(match_id=match_id), timeout=10).match.state
            return state == "finished"

        wait_for("the honest match to finish", over, 120, every=0.2)
        record = MatchRecord.from_dict(json.loads(admin.GetMatchRecord(
            apb.GetMatchRecordRequest(match_id=match_id), timeout=10).record_json))
        channel.close()

    assert set(answers) == set(reads), f"reads that never answered: {sorted(set(reads) - set(answers))}"
    slowest = max(v for deal in record.latencies_us for v in deal) / 1e6
    print(f"health checks during the pause: {len(during)}, slowest {max(during):.3f} s "
          f"(quiet {quiet_health:.3f} s); slowest decision of the match {slowest:.3f} s; answers {answers}")
    # "not held up": a small part of the pause, where a call waiting for Redis on the loop took all of it
    within(max(during) < PAUSE_S / 4, f"a health check took {max(during):.2f} s while Redis was paused")
    within(slowest < PAUSE_S / 4, f"a decision took {slowest:.2f} s while Redis was paused")
    assert record.strikes == () and record.result.reason == "finished"
