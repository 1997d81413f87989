"""A sealed table shows nothing of its deals in a bot's recent matches either.

In field duplicate play two tables deal the same cards. While one of them is
still being played, the other's totals, winner and end tell a bot at the
first how the deals went, so they are sealed in every view: GetMatch,
GetMatchRecord, WatchMatch, ListMatches, and (this test) a bot's recent
matches, over gRPC (``GetBot``) and HTTP (``/api/v1/bots/NAME``), and a
tournament's list of finished matches (``/api/v1/tournaments/ID/matches``). Before, those
lists showed a finished table's final totals and winner while its twin was
being played.

Two real nodes share one embedded queue; the bots connect to node B only, so
B lists the tables as its own matches and A from the queue's results: both
paths are read, as a stranger would, through each node's gRPC and web API.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from belote.arena.v1 import arena_service_pb2 as apb
from belote_bot import Bot, Observation, RandomBot, run_async

from arena.node.run import NodeSettings, RunningNode, running_node
from arena.queue import EmbeddedBroker
from arena.records import TimeControl
from arena.referee.access import AccessPolicy
from arena.referee.registry import digest, new_token
from arena.web import web_for
from tests.referee.arena_helpers import arena_stub, arun, until

pytestmark = pytest.mark.security

ADMIN = new_token("adm")
#: the quartet's tables: 0 and 1 deal board set 0, 2 and 3 board set 1
T0, T1, T2, T3 = (f"fd-r1-0-t{k}" for k in range(4))


class HeldAt(Bot):
    """Plays at once, except at table ``held``, where it waits for ``gate``."""

    act_inline = True

    def __init__(self, held: str, gate: asyncio.Event, seed: int) -> None:
        self.held, self.gate = held, gate
        self.inner = RandomBot(seed)

    async def act(self, obs: Observation) -> Any:
        if obs.match_id == self.held:
            await self.gate.wait()
        return self.inner.act(obs)


@contextlib.asynccontextmanager
async def two_nodes(tmp_path: Path) -> AsyncIterator[tuple[RunningNode, RunningNode, list[str]]]:
    """Nodes A and B on one embedded queue, each with its web site: (A, B, their sites' URLs)."""
    brokers = [EmbeddedBroker(tmp_path / "queue.sqlite3") for _ in range(2)]
    # the held table's bots never run out of time (at the default 1 s and 10 s bank, its fifth late
    # decision would forfeit it after some 45 s: on a loaded machine, perhaps while the views are read)
    settings = [NodeSettings(poll_s=0.05, heartbeat_s=0.2, lease_s=10.0, drain_s=1.0, capacity=8,
                             node_id=name, access=AccessPolicy(admin_sha256=digest(ADMIN)),
                             time=TimeControl(time_bank=600.0))
                for name in ("node-a", "node-b")]
    try:
        async with (running_node(brokers[0], settings[0], asyncio.Event()) as a,
                    running_node(brokers[1], settings[1], asyncio.Event()) as b,
                    web_for(a, "127.0.0.1:0") as web_a, web_for(b, "127.0.0.1:0") as web_b):
            yield a, b, [web_a.url, web_b.url]
    finally:
        for broker in brokers:
            broker.close()


def has_result(running: RunningNode, match_id: str) -> bool:
    return running.worker.broker.has_result(match_id)


Rows = dict[str, dict[str, Any]]


async def recent_rows(nodes: list[RunningNode], urls: list[str]) -> list[Rows]:
    """The recent matches of every bot as each node shows them, over gRPC and over HTTP: four views
    (A's gRPC, A's HTTP, B's gRPC, B's HTTP), each what its rows tell of each match's deals."""
    views: list[Rows] = [{} for _ in range(2 * len(nodes))]
    async with aiohttp.ClientSession() as http:
        for bot in "abcd":  # each bot plays one table of each board set
            for n, (running, url) in enumerate(zip(nodes, urls, strict=True)):
                async with arena_stub(running.address) as anyone:
                    reply = await anyone.GetBot(apb.GetBotRequest(name=bot))
                views[2 * n].update({m.match_id: {
                    "totals": list(m.totals), "result": m.HasField("result"), "deals_played": m.deals_played,
                    "seed": m.seed, "sealed": getattr(m, "sealed", False)} for m in reply.recent_matches})
                async with http.get(f"{url}/api/v1/bots/{bot}") as page:
                    assert page.status == 200
                    rows = (await page.json())["recent_matches"]
                views[2 * n + 1].update({m["match_id"]: {
                    "totals": m["totals"], "result": m["winner"] is not None or bool(m["reason"]),
                    "sealed": m.get("sealed", False), "tournament": m["tournament_id"]} for m in rows})
    return views


async def tournament_rows(urls: list[str]) -> list[Rows]:
    """The tournament's finished matches as each node's web API lists them (its page's table)."""
    views: list[Rows] = []
    async with aiohttp.ClientSession() as http:
        for url in urls:
            async with http.get(f"{url}/api/v1/tournaments/fd/matches") as page:
                assert page.status == 200
                rows = (await page.json())["items"]
            views.append({m["match_id"]: {
                "totals": m["totals"], "result": m["winner"] is not None or bool(m["reason"]),
                "sealed": m["sealed"]} for m in rows})
    return views


def test_a_bot_s_recent_matches_show_nothing_of_a_table_whose_twin_is_still_in_play(tmp_path: Path) -> None:
    async def main() -> tuple[list[Rows], list[Rows]]:
        gate, stop = asyncio.Event(), asyncio.Event()
        async with two_nodes(tmp_path) as (a, b, urls):
            bots = []
            for i, name in enumerate("abcd"):
                _, token = b.node.register_bot(name)
                bots.append(asyncio.create_task(run_async(HeldAt(T1, gate, i), b.address, token, 8, stop=stop,
                                                          all_nodes=False, verbose=False)))
            await until(lambda: sum(x.connected for x in b.node.bots()) == 4, 10, "the bots on node B")
            async with arena_stub(a.address, ADMIN) as admin:
                await admin.CreateTournament(apb.CreateTournamentRequest(spec=apb.TournamentSpec(
                    tournament_id="fd", format="round-robin", bots=list("abcd"), ruleset="coinche", deals=2,
                    duplicate=True)))  # field duplicate: the default
            # table 0 and board set 1 are over; table 1 deals table 0's cards and is still being played
            await until(lambda: all(has_result(b, t) for t in (T0, T2, T3)), 60, "tables 0, 2 and 3")
            assert not has_result(b, T1)
            during = await recent_rows([a, b], urls)
            listed_during = await tournament_rows(urls)
            gate.set()
            await until(lambda: has_result(b, T1), 60, "table 1")
            await asyncio.sleep(1.1)  # a tournament's page is kept a second (node_reads.DETAIL_TTL)
            after = await recent_rows([a, b], urls)
            listed_after = await tournament_rows(urls)
            stop.set()
            await asyncio.gather(*bots, return_exceptions=True)
        return during + listed_during, after + listed_after

    during, after = arun(main(), timeout=150)
    # every row of a bot's matches names the tournament, those node B plays (table 1 running) too
    for view in (during[1], during[3], after[1], after[3]):
        assert {row["tournament"] for row in view.values()} == {"fd"}, view
    assert T1 in during[3]
    # the tournament's list has a row for table 1 once it is over only
    listed_during, listed_after = during[4:], after[4:]
    assert all(T1 not in view for view in listed_during) and all(T1 in view for view in listed_after)
    during, after = during[:4], after[:4]
    assert all(T1 in view for view in during[2:])  # node B lists table 1 as it runs
    for view in during:  # node A's and B's, each over gRPC and HTTP
        t0 = view[T0]
        assert t0["totals"] == [] and not t0["result"], f"table 0's end shows while table 1 is played: {t0}"
        assert t0.get("deals_played", 0) == 0 and t0.get("seed", "") == ""
        assert t0["sealed"]
        if T1 in view:  # running: sealed too
            assert view[T1]["totals"] == [] and view[T1]["sealed"]
        for t in (T2, T3):  # board set 1 is over at both its tables: shown
            assert len(view[t]["totals"]) == 2 and view[t]["result"] and not view[t]["sealed"]
    for view in after + listed_after:  # every table dealing board set 0 is over: shown
        for t in (T0, T1):
            assert len(view[t]["totals"]) == 2 and view[t]["result"] and not view[t]["sealed"]
    for view in listed_during:  # the tournament's list as its page shows it: table 0 sealed, set 1 shown
        assert view[T0] == {"totals": [], "result": False, "sealed": True}
        for t in (T2, T3):
            assert len(view[t]["totals"]) == 2 and view[t]["result"] and not view[t]["sealed"]
