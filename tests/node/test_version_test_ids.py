"""The ``vt:`` tournament ids are the version tests' own (issue 24): no caller makes one.

Before, an admin's ``CreateTournament`` with the id ``vt:alpha:9:1`` returned OK, and its matches
counted as a version test's (the worker and the ladder took them for one). A real node on an
embedded queue, asked over gRPC as an admin would.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import grpc.aio
import pytest
from belote.arena.v1 import arena_service_pb2 as apb

from arena.node.run import NodeSettings, RunningNode, running_node
from arena.node.versions import PREFIX, is_test
from arena.queue import EmbeddedBroker
from arena.referee.access import AccessPolicy
from arena.referee.registry import digest, new_token
from arena.tournament import Tournaments, TournamentSpec
from arena.tournament.schedule import Schedule
from arena.tournament.spec import TournamentError
from tests.referee.arena_helpers import arena_stub, arun

ADMIN = new_token("adm")


@contextlib.asynccontextmanager
async def node(tmp_path: Path) -> AsyncIterator[RunningNode]:
    broker = EmbeddedBroker(tmp_path / "queue.sqlite3")
    settings = NodeSettings(poll_s=0.05, heartbeat_s=0.1, lease_s=5.0, drain_s=1.0,
                            access=AccessPolicy(admin_sha256=digest(ADMIN)))
    try:
        async with running_node(broker, settings, asyncio.Event()) as running:
            yield running
    finally:
        broker.close()


@pytest.mark.security
def test_no_admin_call_makes_a_tournament_whose_id_is_a_version_test_s(tmp_path: Path) -> None:
    async def main() -> None:
        async with node(tmp_path) as running:
            for name in ("alpha", "beta"):
                running.node.register_bot(name)
            async with arena_stub(running.address, ADMIN) as stub:
                for tid in ("vt:alpha:9:1", "vt:", "vt:x"):
                    with pytest.raises(grpc.aio.AioRpcError) as refused:
                        await stub.CreateTournament(apb.CreateTournamentRequest(spec=apb.TournamentSpec(
                            tournament_id=tid, format="round-robin", bots=["alpha", "beta"], deals=1)))
                    assert refused.value.code() is grpc.StatusCode.INVALID_ARGUMENT
                    assert "version tests" in (refused.value.details() or "")
                # nor a schedule, whose occurrences' ids start with the schedule's
                with pytest.raises(grpc.aio.AioRpcError) as refused:
                    await stub.CreateSchedule(apb.CreateScheduleRequest(
                        schedule_id="vt:alpha:9", every_s=3600, spec=apb.TournamentSpec(
                            format="round-robin", bots=["alpha", "beta"], deals=1)))
                assert refused.value.code() is grpc.StatusCode.INVALID_ARGUMENT
                assert "version tests" in (refused.value.details() or "")
                # an id that merely holds the letters is a tournament like any
                reply = await stub.CreateTournament(apb.CreateTournamentRequest(spec=apb.TournamentSpec(
                    tournament_id="alpha-vt:1", format="round-robin", bots=["alpha", "beta"], deals=1)))
                assert reply.tournament_id == "alpha-vt:1"
            stored = await asyncio.to_thread(running.worker.broker.list_tournaments)
            assert stored == ["alpha-vt:1"] and not any(is_test(t) for t in stored)

    arun(main(), 60)


@pytest.mark.security
def test_the_tournament_layer_refuses_the_prefix_to_any_caller(tmp_path: Path) -> None:
    broker = EmbeddedBroker(tmp_path / "queue.sqlite3")
    try:
        spec = TournamentSpec(tournament_id=f"{PREFIX}alpha:9:1", format="round-robin", bots=("a", "b"))
        with pytest.raises(TournamentError, match="version tests"):
            Tournaments(broker).create(spec)  # what CreateTournament and the demo call
        with pytest.raises(TournamentError, match="version tests"):
            Schedule.make(f"{PREFIX}alpha", 3600, "", ["a", "b"], {"format": "round-robin"})
        assert broker.list_tournaments() == []
    finally:
        broker.close()
