"""A node of a queue: duplicate legs and tables stay hidden until every table dealing their cards is
over, absent bots forfeit,
one tournament's absent bots do not starve another's, bots registered through the API stay.

Each test runs real nodes (``running_node``) on an embedded queue, bots over real gRPC, and asks
the node's ArenaService what a stranger would.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
import pytest
from belote.arena.v1 import arena_service_pb2 as apb
from belote_bot import Bot, HeuristicBot, Observation, RandomBot, run_async

from arena.node.run import NodeSettings, RunningNode, running_node
from arena.queue import EmbeddedBroker
from arena.referee.access import AccessPolicy
from arena.referee.registry import digest, new_token
from arena.tournament import TournamentState
from tests.referee.arena_helpers import arena_stub, arun, until

ADMIN = new_token("adm")


@contextlib.asynccontextmanager
async def node(tmp_path: Path, **settings: Any) -> AsyncIterator[RunningNode]:
    broker = EmbeddedBroker(tmp_path / "queue.sqlite3")
    options: dict[str, Any] = {"poll_s": 0.05, "heartbeat_s": 0.1, "lease_s": 5.0, "drain_s": 1.0,
                               "access": AccessPolicy(admin_sha256=digest(ADMIN)), **settings}
    try:
        async with running_node(broker, NodeSettings(**options), asyncio.Event()) as running:
            yield running
    finally:
        broker.close()


def connect(running: RunningNode, name: str, bot: Bot, stop: asyncio.Event) -> asyncio.Task[None]:
    _, token = running.node.register_bot(name)
    return asyncio.create_task(run_async(bot, running.address, token, 8, stop=stop, all_nodes=False,
                                         verbose=False))


def has_result(running: RunningNode, match_id: str) -> bool:
    return running.worker.broker.get_result(match_id) is not None


def finished(running: RunningNode, tournament_id: str) -> bool:
    found = running.worker.broker.get_tournament(tournament_id)
    return found is not None and found[1] is TournamentState.FINISHED


async def create(stub: Any, **fields: Any) -> apb.CreateTournamentResponse:
    reply: apb.CreateTournamentResponse = await stub.CreateTournament(
        apb.CreateTournamentRequest(spec=apb.TournamentSpec(**fields)))
    return reply


async def state_of(stub: Any, tid: str) -> apb.TournamentStatus:
    reply = await stub.GetTournament(apb.GetTournamentRequest(tournament_id=tid))
    status: apb.TournamentStatus = reply.tournament
    return status


class GatedOnLeg1(Bot):
    """Plays at once, except in a duplicate pair's second leg, where it waits for ``gate``."""

    act_inline = True

    def __init__(self, gate: asyncio.Event) -> None:
        self.gate = gate
        self.inner = RandomBot(3)

    async def act(self, obs: Observation) -> Any:
        if obs.match_id.endswith("-leg1"):
            await self.gate.wait()
        return self.inner.act(obs)


@pytest.mark.security
def test_a_duplicate_leg_stays_hidden_until_its_pair_is_over(tmp_path: Path) -> None:
    async def main() -> None:
        gate, stop = asyncio.Event(), asyncio.Event()
        async with node(tmp_path) as running:
            bots = [connect(running, "a", GatedOnLeg1(gate), stop),
                    connect(running, "b", HeuristicBot(1), stop)]
            await until(lambda: all(b.connected for b in running.node.bots()), 10, "the bots")
            async with arena_stub(running.address, ADMIN) as admin, arena_stub(running.address) as anyone:
                await create(admin, tournament_id="dup", format="round-robin", bots=["a", "b"],
                             ruleset="coinche", deals=2, duplicate_mode="mirror")
                leg0, leg1 = "dup-r1-0-leg0", "dup-r1-0-leg1"
                await until(lambda: has_result(running, leg0), 20, "the first leg to be over")
                # leg 0 is over, but leg 1 plays the same decks: nothing of leg 0 may show yet
                for call in (anyone.GetMatchRecord(apb.GetMatchRecordRequest(match_id=leg0)),
                             anyone.WatchMatch(apb.WatchMatchRequest(match_id=leg0)).read()):
                    with pytest.raises(grpc.aio.AioRpcError) as hidden:
                        await call
                    assert hidden.value.code() == grpc.StatusCode.FAILED_PRECONDITION
                    assert "both legs" in (hidden.value.details() or "")
                summary = (await anyone.GetMatch(apb.GetMatchRequest(match_id=leg0))).match
                assert summary.state == "finished" and summary.seed == ""
                gate.set()
                await until(lambda: has_result(running, leg1), 20, "the second leg")
                record = await anyone.GetMatchRecord(apb.GetMatchRecordRequest(match_id=leg0))
                assert record.record_json
                summary = (await anyone.GetMatch(apb.GetMatchRequest(match_id=leg0))).match
                assert len(summary.seed) == 64
            stop.set()
            await asyncio.gather(*bots, return_exceptions=True)

    arun(main(), timeout=60)


class GatedOn(Bot):
    """Plays at once, except in match ``held``, where it waits for ``gate``."""

    act_inline = True

    def __init__(self, held: str, gate: asyncio.Event, seed: int) -> None:
        self.held, self.gate = held, gate
        self.inner = RandomBot(seed)

    async def act(self, obs: Observation) -> Any:
        if obs.match_id == self.held:
            await self.gate.wait()
        return self.inner.act(obs)


@pytest.mark.security
def test_a_field_table_stays_sealed_until_every_table_dealing_its_cards_is_over(tmp_path: Path) -> None:
    async def main() -> None:
        gate, stop = asyncio.Event(), asyncio.Event()
        t0, t1, t2, t3 = (f"fd-r1-0-t{k}" for k in range(4))  # t0 and t1 deal board set 0, t2 and t3 set 1
        async with node(tmp_path) as running:
            bots = [connect(running, name, GatedOn(t1, gate, i), stop) for i, name in enumerate("abcd")]
            await until(lambda: sum(b.connected for b in running.node.bots()) == 4, 10, "the bots")
            async with arena_stub(running.address, ADMIN) as admin, arena_stub(running.address) as anyone:
                created = await create(admin, tournament_id="fd", format="round-robin", bots=list("abcd"),
                                       ruleset="coinche", deals=2, duplicate=True)  # field: the default
                assert created.duplicate_note == ""
                await until(lambda: has_result(running, t0), 30, "table 0 to be over")
                # table 1 deals the same cards and is not over: nothing of table 0 may show yet
                for call in (anyone.GetMatchRecord(apb.GetMatchRecordRequest(match_id=t0)),
                             anyone.WatchMatch(apb.WatchMatchRequest(match_id=t0)).read()):
                    with pytest.raises(grpc.aio.AioRpcError) as hidden:
                        await call
                    assert hidden.value.code() == grpc.StatusCode.FAILED_PRECONDITION
                    assert "both tables that deal its cards" in (hidden.value.details() or "")
                for match_id in (t0, t1):
                    summary = (await anyone.GetMatch(apb.GetMatchRequest(match_id=match_id))).match
                    assert (summary.seed, list(summary.totals), summary.deals_played) == ("", [], 0)
                    assert not summary.HasField("result")
                listed = {m.match_id: m for m in (await anyone.ListMatches(apb.ListMatchesRequest())).matches}
                assert listed[t0].seed == "" and list(listed[t0].totals) == []
                # board set 1 is another deal: once both its tables are over, they show
                await until(lambda: has_result(running, t2) and has_result(running, t3), 30, "board set 1")
                record = await anyone.GetMatchRecord(apb.GetMatchRecordRequest(match_id=t2))
                assert record.record_json
                status = await state_of(anyone, "fd")
                assert status.spec.duplicate_mode == "field" and status.duplicate_note == ""
                gate.set()
                await until(lambda: has_result(running, t1), 30, "table 1")
                record = await anyone.GetMatchRecord(apb.GetMatchRecordRequest(match_id=t0))
                assert record.record_json
                summary = (await anyone.GetMatch(apb.GetMatchRequest(match_id=t0))).match
                assert len(summary.seed) == 64 and len(summary.totals) == 2
            stop.set()
            await asyncio.gather(*bots, return_exceptions=True)

    arun(main(), timeout=90)


@pytest.mark.security
def test_field_duplicate_with_fewer_than_four_bots_is_refused_naming_mirror(tmp_path: Path) -> None:
    async def main() -> None:
        async with node(tmp_path) as running:
            for name in "abc":
                running.node.register_bot(name)
            async with arena_stub(running.address, ADMIN) as admin:
                with pytest.raises(grpc.aio.AioRpcError) as refused:
                    await create(admin, format="round-robin", bots=list("abc"), deals=2, duplicate=True)
                assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
                said = refused.value.details() or ""
                assert "ask for duplicate 'mirror' (both legs seen by both bots)" in said
                made = await create(admin, format="round-robin", bots=list("abc"), deals=2,
                                    duplicate_mode="mirror")
                assert made.duplicate_note.startswith("mirror duplicate: both legs seen by both bots")
                status = await state_of(admin, made.tournament_id)
                assert status.spec.duplicate_mode == "mirror" and "both legs" in status.duplicate_note
                with pytest.raises(grpc.aio.AioRpcError) as bad:
                    await create(admin, format="round-robin", bots=list("abc"), deals=2,
                                 duplicate_mode="x" * 99)
                assert bad.value.code() == grpc.StatusCode.INVALID_ARGUMENT
                assert len(bad.value.details() or "") < 120

    arun(main(), timeout=30)


@pytest.mark.reliability
def test_a_bot_connected_to_no_node_forfeits_its_matches_and_the_tournament_finishes(tmp_path: Path) -> None:
    async def main() -> None:
        stop = asyncio.Event()
        async with node(tmp_path, absent_timeout_s=0.5) as running:
            here = connect(running, "here", RandomBot(1), stop)
            running.node.register_bot("away")  # registered, never connected
            # seen by the queue once its node's heartbeat has named it
            await until(lambda: "here" in running.worker.broker.present_bots(), 10, "the bot")
            async with arena_stub(running.address, ADMIN) as admin:
                await create(admin, tournament_id="abs", format="round-robin", bots=["here", "away"],
                             ruleset="coinche", deals=1)
                status = await state_of(admin, "abs")
                assert list(status.waiting_for) == ["away"]
                await until(lambda: finished(running, "abs"), 30, "the tournament to finish")
                status = await state_of(admin, "abs")
            results = running.worker.broker.results("abs")
            assert len(results) == 2
            for r in results:
                assert r.reason == "forfeit" and r.record.deals == () and r.record.seed == ""
                assert "away connected to no node" in r.record.result.detail
                assert r.winner == (0 if r.team0 == "here" else 1)
            assert status.standings[0].bot == "here" and status.waiting_for == []
            stop.set()
            await here

    arun(main(), timeout=60)


@pytest.mark.reliability
def test_one_tournament_s_absent_bots_do_not_starve_another(tmp_path: Path) -> None:
    async def main() -> None:
        stop = asyncio.Event()
        # one slot and a slow poll: without looking past the jobs it cannot seat, the node would
        # take one of the absent bots' jobs each second and give it back
        async with node(tmp_path, capacity=1, poll_s=1.0) as running:
            bots = [connect(running, n, RandomBot(i), stop) for i, n in enumerate(("a", "b"))]
            for n in ("x", "y"):
                running.node.register_bot(n)
            await until(lambda: sum(b.connected for b in running.node.bots()) == 2, 10, "the bots")
            async with arena_stub(running.address, ADMIN) as admin:
                await create(admin, tournament_id="stuck", format="round-robin", bots=["x", "y"],
                             ruleset="coinche", deals=1, rounds=15)
                await create(admin, tournament_id="live", format="round-robin", bots=["a", "b"],
                             ruleset="coinche", deals=1)
                broker = running.worker.broker
                await until(lambda: finished(running, "live"), 20, "the live tournament to finish")
                assert broker.pending_count("stuck") == 30  # waiting for x and y, not dropped
            stop.set()
            await asyncio.gather(*bots, return_exceptions=True)

    arun(main(), timeout=60)


@pytest.mark.reliability
def test_bots_registered_through_the_api_survive_a_restart(tmp_path: Path) -> None:
    async def main() -> None:
        async with node(tmp_path) as first, arena_stub(first.address, ADMIN) as admin:
            token = (await admin.RegisterBot(apb.RegisterBotRequest(name="kept"))).token
        async with node(tmp_path) as second:
            entry = second.node.gate.caller(token, "ipv4:127.0.0.1").bot
            assert entry is not None and entry.name == "kept"

    arun(main())
