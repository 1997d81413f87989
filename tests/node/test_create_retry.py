"""What CreateTournament answers is true: an UNAVAILABLE leaves nothing stored when the queue's Redis has
lost the arena's data, and a create retried with the same id and spec answers OK, the same tournament.

Before: during a data loss, CreateTournament answered UNAVAILABLE yet stored the tournament in the empty
Redis; the retry after the nodes restarted got ALREADY_EXISTS, and the tournament ran all the same. Real
nodes over real gRPC; the data loss is a redis-server of the test's own, stopped by its pid and started
again empty on the same port.
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import grpc
import pytest
import redis
from belote.arena.v1 import arena_service_pb2 as apb

from arena.queue import Broker, BrokerDataLost
from arena.queue.redis_broker import RedisBroker
from arena.tournament import TournamentSpec, TournamentState
from tests.node.test_fresh_secrets import ADMIN, LOST, node_with_bots
from tests.queue.test_redis_backend import free_port, start_redis, stop_redis
from tests.referee.arena_helpers import arena_stub, arun, until

SPEC = apb.TournamentSpec(tournament_id="nightly", format="round-robin", bots=["north", "east"],
                          ruleset="coinche", deals=1)


async def create(address: str, spec: apb.TournamentSpec = SPEC) -> tuple[str, Any]:
    """CreateTournament: ("OK", its answer), or (the status, its details)."""
    async with arena_stub(address, ADMIN) as admin:
        try:
            return "OK", await admin.CreateTournament(apb.CreateTournamentRequest(spec=spec))
        except grpc.aio.AioRpcError as e:
            return e.code().name, e.details()


@pytest.fixture
def redis_port(tmp_path: Path) -> tuple[int, Path]:
    """A free port for a redis-server of this test's own, and a folder (skipped without redis-server)."""
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not on PATH")
    return free_port(), tmp_path


def finished(broker: Broker, tournament_id: str) -> bool:
    found = broker.get_tournament(tournament_id)
    return found is not None and found[1] is TournamentState.FINISHED


@pytest.mark.reliability
def test_a_create_refused_during_a_data_loss_stores_nothing_and_its_retry_makes_it_once(
        redis_port: tuple[int, Path]) -> None:
    port, tmp_path = redis_port
    url = f"redis://127.0.0.1:{port}/0"
    for folder in ("before", "after"):
        (tmp_path / folder).mkdir()
    proc = start_redis(port, tmp_path / "before")

    async def main() -> dict[str, Any]:
        nonlocal proc
        seen: dict[str, Any] = {}
        with RedisBroker(url) as broker, RedisBroker(url) as unaware:
            async with node_with_bots(broker) as running:
                stop_redis(proc)  # Redis restarts, with none of its data
                proc = start_redis(port, tmp_path / "after")
                # a broker that has not looked since stores nothing either
                spec = TournamentSpec.from_dict({"tournament_id": "unaware", "format": "round-robin",
                                                 "bots": ["north", "east"]})
                try:
                    seen["unaware"] = await asyncio.to_thread(unaware.put_tournament, spec)
                except BrokerDataLost as e:
                    seen["unaware"] = str(e)
                async with arena_stub(running.address) as anyone:
                    for _ in range(200):  # the node notices (the first calls may find no Redis yet)
                        try:
                            await anyone.ListTournaments(apb.ListTournamentsRequest())
                        except grpc.aio.AioRpcError as e:
                            if LOST in (e.details() or ""):
                                break
                        await asyncio.sleep(0.05)
                seen["during"] = await create(running.address)
                client = redis.Redis.from_url(url, decode_responses=True)
                seen["stored"] = sorted(client.scan_iter(match="*tournament*"))
                client.close()
        # the nodes restart on the empty Redis, as the message says, and the caller tries again
        with RedisBroker(url) as broker:
            async with node_with_bots(broker) as running:
                seen["retry"] = await create(running.address)
                await until(lambda: finished(broker, "nightly"), 60, "the tournament to finish")
                seen["again"] = await create(running.address)  # the same request once more: the same one
                seen["tournaments"] = broker.list_tournaments()
                seen["results"] = len(broker.results("nightly"))
        return seen

    try:
        seen = arun(main(), timeout=240)
    finally:
        stop_redis(proc)
    code, details = seen["during"]
    assert code == "UNAVAILABLE" and LOST in details, seen["during"]
    assert seen["stored"] == [], f"a create refused as UNAVAILABLE stored the tournament: {seen['stored']}"
    assert isinstance(seen["unaware"], str) and LOST in seen["unaware"], seen["unaware"]
    code, made = seen["retry"]
    assert code == "OK" and made.tournament_id == "nightly" and made.jobs_queued == 2, seen["retry"]
    code, again = seen["again"]
    assert code == "OK" and again.commitment == made.commitment and again.jobs_queued == 0, seen["again"]
    assert seen["tournaments"] == ["nightly"] and seen["results"] == 2


def test_a_create_retried_with_the_same_spec_answers_the_same_tournament(broker: Broker) -> None:
    """A create whose answer was lost (a cut connection, a node gone between its write and its answer)
    is retried: the same id and spec answer OK with the tournament stored, its commitment included;
    another spec under that id is ALREADY_EXISTS, and a seed given by the caller is part of the spec."""
    async def main() -> dict[str, Any]:
        async with node_with_bots(broker) as running:
            seen: dict[str, Any] = {"first": await create(running.address),
                                    "retry": await create(running.address)}
            other = apb.TournamentSpec()
            other.CopyFrom(SPEC)
            other.deals = 2
            seen["other"] = await create(running.address, other)
            seeded = apb.TournamentSpec()
            seeded.CopyFrom(SPEC)
            seeded.tournament_id, seeded.seed = "seeded", "s1"
            seen["seeded"] = await create(running.address, seeded)
            seen["seeded again"] = await create(running.address, seeded)
            seeded.seed = "s2"
            seen["seeded otherwise"] = await create(running.address, seeded)
            seen["tournaments"] = broker.list_tournaments()
        return seen

    seen = arun(main(), timeout=120)
    (code, first), (again, retry) = seen["first"], seen["retry"]
    assert (code, again) == ("OK", "OK")
    assert (retry.tournament_id, retry.commitment, retry.unrated_reason) == (
        first.tournament_id, first.commitment, first.unrated_reason)
    code, details = seen["other"]
    assert code == "ALREADY_EXISTS" and "with another spec" in details, details
    assert seen["seeded"][0] == seen["seeded again"][0] == "OK"
    assert seen["seeded again"][1].commitment == seen["seeded"][1].commitment
    assert seen["seeded otherwise"][0] == "ALREADY_EXISTS"
    assert sorted(seen["tournaments"]) == ["nightly", "seeded"]
