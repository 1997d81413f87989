"""A cancel never publishes a secret while a deal of the tournament could still be played, and a
tournament's secret is never reused.

Two real nodes share one queue (the embedded one on a shared sqlite file, or a Redis under a prefix
of the test's own); the bots connect to node B only, so the matches run there, and the admin cancels
through node A. B stops its matches on the cancel's notice, within milliseconds; when that notice is
lost, B must find the cancel itself, by its check of its tournaments' states, and strangers read the
tournament through A's gRPC ``ArenaService`` and its web API, as fast as they can, while its matches
can still be played.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import grpc
import grpc.aio
import pytest
from belote.arena.v1 import arena_service_pb2 as apb
from belote_bot import Bot, Observation, RandomBot, run_async

from arena.node.run import NodeSettings, RunningNode, running_node
from arena.queue import CANCEL_NOTICE, Broker, BrokerUnavailable, EmbeddedBroker
from arena.referee.access import AccessPolicy
from arena.referee.registry import digest, new_token
from arena.tournament import TournamentState
from arena.web import web_for
from tests.node.cli import cli
from tests.queue.conftest import REDIS_URL, redis_unavailable
from tests.referee.arena_helpers import arena_stub, arun, until

ADMIN = new_token("adm")
#: how often a node reads whether its running matches' tournaments were cancelled, in these tests
CHECK_S = 0.5
#: the stop must come within this many check intervals (a check, one read, the matches' cancellation
#: and the acks, on a loaded machine); the matches it stops had tens of seconds left to play
STOP_BOUND = 10 * CHECK_S


def open_broker(backend: str, tmp_path: Path, prefix: str) -> Broker:
    if backend == "embedded":
        return EmbeddedBroker(tmp_path / "queue.sqlite3")
    from arena.queue.redis_broker import RedisBroker

    return RedisBroker(REDIS_URL, prefix=prefix)


@contextlib.asynccontextmanager
async def two_nodes(backend: str, tmp_path: Path, check_s: float = CHECK_S,
                    ) -> AsyncIterator[tuple[RunningNode, RunningNode]]:
    """Nodes A and B on one queue, each reading the states of its running matches' tournaments every
    ``check_s``."""
    if backend == "redis" and (why := redis_unavailable()):
        pytest.skip(why)
    prefix = f"test-cancel-{uuid.uuid4().hex[:12]}"
    brokers = [open_broker(backend, tmp_path, prefix) for _ in range(2)]
    access = AccessPolicy(admin_sha256=digest(ADMIN))
    settings = [NodeSettings(poll_s=0.05, heartbeat_s=0.2, lease_s=10.0, drain_s=1.0, capacity=8,
                             node_id=name, cancel_check_s=check_s, access=access)
                for name in ("node-a", "node-b")]
    try:
        async with (running_node(brokers[0], settings[0], asyncio.Event()) as a,
                    running_node(brokers[1], settings[1], asyncio.Event()) as b):
            yield a, b
    finally:
        for broker in brokers:
            broker.close()
        if backend == "redis":
            import redis

            client = redis.Redis.from_url(REDIS_URL)
            own = list(client.scan_iter(match=f"{prefix}:*"))
            if own:
                client.delete(*own)
            client.close()


class SlowInRound2(Bot):
    """Plays at once in round 1 and takes its time in round 2, so that round 2 is still being played
    long after round 1 is over."""

    act_inline = True

    def __init__(self, seed: int) -> None:
        self.inner = RandomBot(seed)

    async def act(self, obs: Observation) -> Any:
        if "-r2-" in obs.match_id:
            await asyncio.sleep(0.03)
        return self.inner.act(obs)


def connect(running: RunningNode, name: str, bot: Bot, stop: asyncio.Event) -> asyncio.Task[None]:
    _, token = running.node.register_bot(name)
    return asyncio.create_task(run_async(bot, running.address, token, 8, stop=stop, all_nodes=False,
                                         verbose=False))


def pool_games(broker: Broker) -> dict[str, int]:
    """Games counted per pool and bot: what a rated result moves."""
    return {f"{pool}/{bot}": games for pool in broker.pools()
            for bot, (_, games) in broker.pool_ratings(pool).items()}


async def create(stub: Any, **fields: Any) -> None:
    await stub.CreateTournament(apb.CreateTournamentRequest(spec=apb.TournamentSpec(**fields)))


def lose_cancel_notices(monkeypatch: pytest.MonkeyPatch, broker: Broker) -> None:
    """``broker`` fails to publish a cancel's notice, as a Redis that failed at that moment would: the
    other nodes are not told, and must find the cancel by their own check."""
    publish = broker.publish_notice

    def failing(kind: str, data: str = "") -> None:
        if kind == CANCEL_NOTICE:
            raise BrokerUnavailable("the cancel's notice was lost (the test's doing)")
        publish(kind, data)

    monkeypatch.setattr(broker, "publish_notice", failing)


@pytest.mark.security
@pytest.mark.parametrize("backend", ["embedded", "redis"])
def test_a_cancel_stops_the_running_matches_and_reveals_the_secret_only_once_none_can_be_played(
        backend: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With the cancel's notice lost, so that its matches can be played for a while after it (node B
    finds it by its check, the fallback): nothing shows the secret meanwhile."""
    async def main() -> None:
        stop = asyncio.Event()
        async with two_nodes(backend, tmp_path) as (a, b), web_for(a, "127.0.0.1:0") as web:
            broker = a.worker.broker
            lose_cancel_notices(monkeypatch, broker)
            bots = [connect(b, "north", SlowInRound2(1), stop), connect(b, "east", SlowInRound2(2), stop)]
            await until(lambda: sum(x.connected for x in b.node.bots()) == 2, 10, "the bots on node B")
            async with (arena_stub(a.address, ADMIN) as admin, arena_stub(a.address) as anyone,
                        aiohttp.ClientSession() as http):
                await create(admin, tournament_id="long", format="round-robin", bots=["north", "east"],
                             ruleset="coinche", deals=40, rounds=2)
                found = broker.get_tournament("long")
                assert found is not None
                secret = found[0].seed

                def in_play() -> int:
                    return broker.pending_count("long")

                # round 1 is over and rated; round 2's two matches are running on node B
                await until(lambda: len(broker.results("long")) == 2, 60, "round 1")
                await until(lambda: sum(j.startswith("long-r2-") for j in b.worker.running) == 2, 10,
                            "round 2")
                games = pool_games(broker)
                assert games and all(n == 2 for n in games.values())

                await admin.CancelTournament(apb.CancelTournamentRequest(tournament_id="long"))
                cancelled = time.monotonic()
                seen_in_play = []
                reads = 0
                while in_play():
                    replies = [
                        (await anyone.GetTournament(apb.GetTournamentRequest(tournament_id="long")))
                        .SerializeToString(),
                        (await anyone.ListTournaments(apb.ListTournamentsRequest())).SerializeToString(),
                    ]
                    for path in ("/api/v1/tournaments/long", "/api/v1/tournaments"):
                        async with http.get(web.url + path) as reply:
                            replies.append(await reply.read())
                    reads += len(replies)
                    if in_play():  # still in play after the reads: none of them may show the secret
                        seen_in_play += [r for r in replies if secret.encode() in r]
                    if time.monotonic() - cancelled > 60:
                        break
                    await asyncio.sleep(0.25)  # 16 reads a second: under the node's read rate per address
                stopped_s = time.monotonic() - cancelled

                # none of its matches can be played any more: the secret is public, and says why
                got = await anyone.GetTournament(apb.GetTournamentRequest(tournament_id="long"))
                status = got.tournament
                for _ in range(100):  # the page's detail is kept for a second (arena.web.node_reads)
                    async with http.get(web.url + "/api/v1/tournaments/long") as reply:
                        page = await reply.json()
                    if page["secret"]:
                        break
                    await asyncio.sleep(0.05)
                # then the records that exist pass `belote-arena verify`
                code, out, err = await cli("verify", "long", "--address", a.address, "--json",
                                           "--data-dir", str(tmp_path / "no-admin"))
                after = pool_games(broker)
                results = broker.results("long")
            stop.set()
            await asyncio.gather(*bots, return_exceptions=True)

        assert reads > 0 and seen_in_play == [], f"{len(seen_in_play)} of {reads} reads showed the secret " \
                                                 "while a match of the tournament could still be played"
        assert stopped_s < STOP_BOUND, f"its running matches took {stopped_s:.1f} s to stop"
        assert after == games, "the pools moved after the cancel"
        assert len(results) == 2 and all(r.match_id.startswith("long-r1-") for r in results)
        assert status.state == TournamentState.CANCELLED and status.secret == secret
        assert status.ended_reason == "cancelled by an admin"
        assert status.secret_revealed_at >= status.ended_at > 0
        assert status.ending.startswith("cancelled by an admin at ")
        assert "the secret revealed at" in status.ending
        assert page["secret"] == secret and page["ending"] == status.ending
        assert code == 0, err
        verified = json.loads(out)
        assert verified["ok"] and verified["matches"] == 2 and verified["deals"] == 80

    arun(main(), timeout=240)


class Slow(Bot):
    """Takes its time over each decision, so that a match lasts far longer than the test."""

    act_inline = True

    def __init__(self, seed: int) -> None:
        self.inner = RandomBot(seed)

    async def act(self, obs: Observation) -> Any:
        await asyncio.sleep(0.03)
        return self.inner.act(obs)


#: node B's interval between two reads of its tournaments' states in the test below: far beyond
#: what the stop may take, so that only the cancel's notice can stop B's matches in time
FAR_CHECK_S = 60.0


@pytest.mark.security
@pytest.mark.parametrize("backend", ["embedded", "redis"])
def test_a_cancel_through_one_node_stops_another_s_matches_on_its_notice_not_its_next_check(
        backend: str, tmp_path: Path) -> None:
    """The node that takes a cancel tells every node at once: node B stops its matches of the
    tournament on the notice, not at its next read of the tournaments' states (a minute away here).
    Before, B found the cancel only by that read: half its interval on average, all of it at worst."""
    async def main() -> tuple[float, int]:
        stop = asyncio.Event()
        async with two_nodes(backend, tmp_path, check_s=FAR_CHECK_S) as (a, b):
            broker = a.worker.broker
            bots = [connect(b, "north", Slow(1), stop), connect(b, "east", Slow(2), stop)]
            await until(lambda: sum(x.connected for x in b.node.bots()) == 2, 10, "the bots on node B")
            async with arena_stub(a.address, ADMIN) as admin:
                await create(admin, tournament_id="pushed", format="round-robin", bots=["north", "east"],
                             ruleset="coinche", deals=200)
                await until(lambda: any(m.startswith("pushed-") for m in b.worker.running), 30,
                            "its matches on B")
                running = sum(m.startswith("pushed-") for m in b.worker.running)
                await asyncio.sleep(0.2)  # its match has begun its first deals
                await admin.CancelTournament(apb.CancelTournamentRequest(tournament_id="pushed"))
                cancelled = time.monotonic()
                await until(lambda: broker.pending_count("pushed") == 0, FAR_CHECK_S / 2,
                            "B's matches of the tournament to stop")
                stopped_s = time.monotonic() - cancelled
            stop.set()
            await asyncio.gather(*bots, return_exceptions=True)
        return stopped_s, running

    stopped_s, running = arun(main(), timeout=120)
    print(f"{running} matches on node B stopped {stopped_s * 1000:.0f} ms after the cancel through node A "
          f"(its own check {FAR_CHECK_S:.0f} s away)")
    assert running >= 1
    assert stopped_s < FAR_CHECK_S / 20, f"node B's matches took {stopped_s:.1f} s to stop"


class SlowInLeg1(Bot):
    """Plays a duplicate pair's first leg at once and takes its time over the second."""

    act_inline = True

    def __init__(self, seed: int) -> None:
        self.inner = RandomBot(seed)

    async def act(self, obs: Observation) -> Any:
        if obs.match_id.endswith("-leg1"):
            await asyncio.sleep(0.03)
        return self.inner.act(obs)


@pytest.mark.security
def test_a_duplicate_tournament_cancelled_between_its_legs_verifies_once_its_secret_is_revealed(
        tmp_path: Path) -> None:
    async def main() -> None:
        stop = asyncio.Event()
        async with two_nodes("embedded", tmp_path) as (a, b):
            broker = a.worker.broker
            bots = [connect(b, "north", SlowInLeg1(1), stop), connect(b, "east", SlowInLeg1(2), stop)]
            await until(lambda: sum(x.connected for x in b.node.bots()) == 2, 10, "the bots on node B")
            async with arena_stub(a.address, ADMIN) as admin, arena_stub(a.address) as anyone:
                await create(admin, tournament_id="dup", format="round-robin", bots=["north", "east"],
                             ruleset="coinche", deals=20, duplicate_mode="mirror", rounds=2)  # two pairs
                await until(lambda: len(broker.results("dup")) == 2, 60, "the first legs")
                legs = [r.match_id for r in broker.results("dup")]
                assert all(leg.endswith("-leg0") for leg in legs)
                # the second legs deal the same cards: the first legs' records stay sealed
                with pytest.raises(grpc.aio.AioRpcError, match="both legs"):
                    await anyone.GetMatchRecord(apb.GetMatchRecordRequest(match_id=legs[0]))
                await admin.CancelTournament(apb.CancelTournamentRequest(tournament_id="dup"))
                await until(lambda: broker.pending_count("dup") == 0, STOP_BOUND, "the second legs to stop")
                reply = await anyone.GetTournament(apb.GetTournamentRequest(tournament_id="dup"))
                status = reply.tournament
                # none of its deals can be played any more: the first legs are shown, and verify
                code, out, err = await cli("verify", "dup", "--address", a.address, "--json",
                                           "--data-dir", str(tmp_path / "no-admin"))
            stop.set()
            await asyncio.gather(*bots, return_exceptions=True)
        assert status.secret and list(status.finished_matches) == sorted(legs)
        assert code == 0, err
        verified = json.loads(out)
        assert verified["ok"] and verified["matches"] == 2 and verified["deals"] == 40

    arun(main(), timeout=180)
