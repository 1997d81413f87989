"""A bot's recent matches come from its own list in the store, in one read, however old they are.

The store holds 60 tournaments; the bot played only in the first. Its page
(the JSON API's reads) and gRPC ``GetBot`` still list its matches, newest
first, reading the bot's list once and no tournament's results. A mixed match
(partners that are different bots) is listed for each of its four bots, and a
partners tournament's page (standings and crosstable per bot) reads no
result either. Both backends. A match that ends while the page is read is
listed with its tournament all the same.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Callable
from typing import Any, cast

from belote.arena.v1 import arena_service_pb2 as apb
from belote_bot import Bot, Observation, RandomBot, run_async

from arena.node.run import NodeSettings, running_node
from arena.queue import Broker
from arena.records import TimeControl
from arena.referee.live import MatchState
from arena.tournament import MatchJob, Tournaments, TournamentSpec
from arena.web.node_reads import RECENT_MATCHES, NodeReads
from tests.factories import result_of_job
from tests.queue.conftest import Store, store  # noqa: F401  # the backends' fixture
from tests.referee.arena_helpers import arena_stub, arun, until

WON = (1001, 640)
OLD = 3  # the bot's matches, all in the first tournament
LATER = 60  # tournaments after it, between other bots


class Counted:
    """A broker that counts the calls made of it."""

    def __init__(self, broker: Broker) -> None:
        self.broker = broker
        self.calls: Counter[str] = Counter()

    def __getattr__(self, name: str) -> Any:
        found = getattr(self.broker, name)
        if not callable(found):
            return found

        def call(*args: Any, **kwargs: Any) -> Any:
            self.calls[name] += 1
            return found(*args, **kwargs)
        return call


def fill(broker: Broker) -> list[str]:
    """The old bot's matches long ago, then many tournaments without it; its match ids, newest first."""
    spec = TournamentSpec(tournament_id="t000", format="round-robin", bots=("old", "x"), duplicate="mirror",
                          deals=2)
    broker.put_tournament(spec)
    mine = []
    for n in range(OLD):
        for leg, (t0, t1) in enumerate((("old", "x"), ("x", "old"))):
            job = MatchJob(f"t000-r1-{n}-leg{leg}", "t000", t0, t1, "classic", f"s{n}", deals=2)
            broker.write_result(result_of_job(job, WON, 0))
            mine.append(job.match_id)
    for t in range(1, LATER + 1):
        tid = f"t{t:03d}"
        broker.put_tournament(TournamentSpec(tournament_id=tid, format="round-robin", bots=("p", "q")))
        broker.write_result(result_of_job(MatchJob(f"{tid}-r1-0", tid, "p", "q", "classic", "s"), WON, 0))
    return mine[::-1]


def test_a_bots_old_matches_are_listed_in_one_read(store: Store) -> None:  # noqa: F811
    broker = store.open()
    mine = fill(broker)

    async def main() -> None:
        settings = NodeSettings(poll_s=0.05, heartbeat_s=0.1, lease_s=5.0, drain_s=1.0)
        async with running_node(broker, settings, asyncio.Event()) as running:
            running.node.register_bot("old")
            counted = Counted(running.worker.broker)
            reads = NodeReads(running.node, cast(Broker, counted), running.tournaments, running.rankings)
            detail = await reads.bot("old")
            assert [m.match_id for m in detail.recent_matches] == mine
            row = detail.recent_matches[0]
            assert (row.tournament_id, row.teams, row.totals, row.winner, row.state) == (
                "t000", ("x", "old"), WON, 0, "finished")
            assert counted.calls["bot_matches"] == 1
            assert not {"results", "list_tournaments", "get_tournament", "summaries"} & set(counted.calls)
            assert len(mine) < RECENT_MATCHES

            async with arena_stub(running.address) as stub:
                reply = await stub.GetBot(apb.GetBotRequest(name="old"))
            assert [m.match_id for m in reply.recent_matches] == mine
            first = reply.recent_matches[0]
            assert list(first.players) == ["x", "old", "x", "old"] and list(first.totals) == list(WON)
            assert first.state == "finished" and first.result.winner == 0
            assert first.seed == ""  # a duplicate leg's seed is shown with the match, once both legs are over

    arun(main(), timeout=60)


def test_a_mixed_match_is_listed_for_each_of_its_bots_and_a_partners_page_reads_no_result(
    store: Store,  # noqa: F811
) -> None:
    broker = store.open()
    bots = ("ann", "bob", "cat", "dan", "eve")
    spec = TournamentSpec(tournament_id="pt", format="partners", bots=bots, rounds=5, seed="fixed")
    broker.put_tournament(spec)
    _, jobs = Tournaments(broker).tournament(spec).jobs_for([])
    for job in jobs:  # the side at seats 0 and 2 wins every match
        broker.write_result(result_of_job(job, WON, 0))

    async def main() -> None:
        settings = NodeSettings(poll_s=0.05, heartbeat_s=0.1, lease_s=5.0, drain_s=1.0)
        async with running_node(broker, settings, asyncio.Event()) as running:
            for b in bots:
                running.node.register_bot(b)
            counted = Counted(running.worker.broker)
            reads = NodeReads(running.node, cast(Broker, counted), Tournaments(cast(Broker, counted)),
                              running.rankings)
            for b in bots:
                detail = await reads.bot(b)
                mine = [j.match_id for j in reversed(jobs) if b in j.seat_bots]
                assert [m.match_id for m in detail.recent_matches] == mine, b
            first = jobs[-1]
            row = (await reads.bot(first.seat_bots[0])).recent_matches[0]
            assert row.teams == (first.team0, first.team1) and "+" in row.teams[0]
            page = await reads.tournament("pt")
            assert set(page.crosstable_bots) == set(bots) and page.matches_done == len(jobs)
            assert page.crosstable is not None
            at = {b: i for i, b in enumerate(page.crosstable_bots)}
            for job in jobs:  # each bot of the winning side beat the opponent of the seat after its own
                for x, y in ((job.seat_bots[0], job.seat_bots[1]), (job.seat_bots[2], job.seat_bots[3])):
                    cell = page.crosstable[at[x]][at[y]]
                    assert cell is not None and cell[0] >= 1.0
            wins = {s["bot"]: s["wins"] for s in page.standings}
            assert wins == {b: sum(b in j.seat_bots[0::2] for j in jobs) for b in bots}
            assert "results" not in counted.calls

            async with arena_stub(running.address) as stub:
                reply = await stub.GetBot(apb.GetBotRequest(name=first.seat_bots[3]))
            assert list(reply.recent_matches[0].players) == list(first.seat_bots)

    arun(main(), timeout=60)


class HeldFirst(Bot):
    """Waits for ``gate`` before each action, then plays at random."""

    act_inline = True

    def __init__(self, gate: asyncio.Event, seed: int) -> None:
        self.gate = gate
        self.inner = RandomBot(seed)

    async def act(self, obs: Observation) -> Any:
        await self.gate.wait()
        return self.inner.act(obs)


class EndsDuringTheRead(Counted):
    """A broker whose read of a bot's recent matches lets the node's held matches end in between: it
    reads the list, opens the gate, waits until the worker has written their results and let them
    go, and answers the list it read before."""

    def __init__(self, broker: Broker, open_gate: Callable[[], object], over: Callable[[], bool]) -> None:
        super().__init__(broker)
        self.open_gate, self.over = open_gate, over

    def bot_matches(self, bot: str, limit: int) -> Any:
        before = self.broker.bot_matches(bot, limit)
        self.open_gate()
        hang = time.monotonic() + 60  # a guard against a hang, not a bound on speed
        while not self.over():
            assert time.monotonic() < hang, "the held matches did not end"
            time.sleep(0.01)
        return before


def test_a_match_that_ends_while_the_page_is_read_is_listed_with_its_tournament(
    store: Store,  # noqa: F811
) -> None:
    broker = store.open()
    spec = TournamentSpec(tournament_id="ends", format="round-robin", bots=("a", "b"), deals=1)

    async def main() -> None:
        gate, stop = asyncio.Event(), asyncio.Event()
        loop = asyncio.get_running_loop()
        # the held bots never run out of time: only the gate ends their wait
        settings = NodeSettings(poll_s=0.05, heartbeat_s=0.1, lease_s=5.0, drain_s=1.0, capacity=4,
                                time=TimeControl(time_bank=600.0))
        async with running_node(broker, settings, stop) as running:
            bots = []
            for i, name in enumerate(spec.bots):
                _, token = running.node.register_bot(name)
                bots.append(asyncio.create_task(run_async(HeldFirst(gate, i), running.address, token, 4,
                                                          stop=stop, all_nodes=False, verbose=False)))
            await until(lambda: sum(b.connected for b in running.node.bots()) == 2, 10, "the bots")
            running.tournaments.create(spec)
            await until(lambda: len(running.worker.running) == 2, 30, "both legs under way")
            held = sorted(running.worker.running)

            def over() -> bool:
                return all(broker.has_result(m) for m in held) and not set(held) & set(running.worker.running)

            reads = NodeReads(running.node, cast(Broker, EndsDuringTheRead(
                running.worker.broker, lambda: loop.call_soon_threadsafe(gate.set), over)),
                running.tournaments, running.rankings, worker=running.worker)
            detail = await reads.bot("a")
            rows = {m.match_id: m for m in detail.recent_matches}
            assert sorted(rows) == held and over()
            for row in rows.values():  # listed as they were when the page was read: running
                assert row.state == str(MatchState.RUNNING) and row.tournament_id == "ends", row
            stop.set()
            await asyncio.gather(*bots, return_exceptions=True)

    arun(main(), timeout=120)
