"""The ``vt:`` tournament ids are the version tests' own (issue 24): no caller makes one, and the tests
are listed apart from the tournaments; a candidate that waits says why.

Before, an admin's ``CreateTournament`` with the id ``vt:alpha:9:1`` returned OK, and its matches
counted as a version test's (the worker and the ladder took them for one); one bot's tests filled
the tournaments list. A real node on an embedded queue, asked over gRPC and by the command line.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import grpc
import grpc.aio
import pytest
from belote.arena.v1 import arena_service_pb2 as apb

from arena.node import versions
from arena.node.bots import BrokerRegistryBackend
from arena.node.run import NodeSettings, RunningNode, running_node
from arena.node.versions import DAY_S, PREFIX, TESTS_A_DAY, is_test
from arena.queue import EmbeddedBroker
from arena.referee.access import AccessPolicy
from arena.referee.registry import BotEntry, BotRegistry, digest, new_token
from arena.referee.versions import seen
from arena.tournament import Tournaments, TournamentSpec
from arena.tournament.schedule import Schedule
from arena.tournament.spec import TournamentError
from tests.node.cli import cli
from tests.referee.arena_helpers import arena_stub, arun, until

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


def test_the_version_tests_are_listed_apart_and_a_waiting_candidate_says_why(tmp_path: Path) -> None:
    async def main() -> None:
        async with node(tmp_path) as running:
            for name in ("alpha", "beta"):
                running.node.register_bot(name)
            broker = running.worker.broker
            # a test, stored as a node stores one, and an admin's tournament
            test = versions.test_spec("alpha", "2", "1", f"{PREFIX}alpha:2:1000", "coinche", 1)
            assert await asyncio.to_thread(broker.put_tournament, test)
            async with arena_stub(running.address, ADMIN) as stub:
                await stub.CreateTournament(apb.CreateTournamentRequest(spec=apb.TournamentSpec(
                    tournament_id="league", format="round-robin", bots=["alpha", "beta"], deals=1)))
                listed = await stub.ListTournaments(apb.ListTournamentsRequest())
                assert [t.tournament_id for t in listed.tournaments] == ["league"]
                tests = await stub.ListTournaments(apb.ListTournamentsRequest(version_tests=True))
                assert [(t.tournament_id, t.format) for t in tests.tournaments] == [
                    (test.tournament_id, "sprt")]
            code, out, _ = await cli("tournament", "list", "--address", running.address)
            assert code == 0 and "league" in out and PREFIX not in out
            code, out, _ = await cli("tournament", "list", "--tests", "--json", "--address", running.address)
            assert code == 0 and [t["tournament_id"] for t in json.loads(out)] == [test.tournament_id]

            # alpha's versions, as another node writes them: 1 promoted, 2 and 3 waiting, its day's tests used
            other = BotRegistry(BrokerRegistryBackend(broker))
            now = int(time.time())

            def versions_and_tests(entry: BotEntry) -> BotEntry:
                versions = entry.versions
                for label, at in (("1", now - 300), ("2", now - 200), ("3", now - 100)):
                    versions = seen(versions, label, at) or versions
                return replace(entry, versions=versions, tests_started=(now - DAY_S + 600,) * TESTS_A_DAY)

            assert await asyncio.to_thread(other.update_entry, "alpha", versions_and_tests)
            await until(lambda: len(getattr(running.node.bot_named("alpha"), "versions", ())) == 3, 10,
                        "the node's copy")
            async with arena_stub(running.address) as reader:
                reply = await reader.GetBotVersions(apb.GetBotVersionsRequest(name="alpha"))
            waiting = {v.version: v.waiting for v in reply.versions}
            assert waiting["1"] == ""
            assert f"the most a bot may ({TESTS_A_DAY} a day): the next may start at" in waiting["2"]
            assert waiting["3"] == "waits behind version 2 (one test a bot at a time, the first seen first)"
            code, out, _ = await cli("bot", "versions", "alpha", "--address", running.address)
            assert code == 0 and "the next may start at" in out and "waits behind version 2" in out

    arun(main(), 90)
