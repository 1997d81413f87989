"""Quick cluster checks in one process: two ``running_node``s sharing an embedded queue file.

No Redis, no child process: two nodes (each with its own gRPC server, worker
and heartbeat) on one sqlite file, and SDK bots as ``run_async`` tasks connected
to the first node, finding the second by themselves.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from pathlib import Path

from belote_bot import HeuristicBot, RandomBot, run_async

from arena.node.run import NodeSettings, RunningNode, running_node
from arena.queue import Broker, EmbeddedBroker
from arena.tournament import MatchJob, Tournament, TournamentSpec, TournamentState
from tests.cluster.procs import replayed


async def until(what: str, check: Callable[[], bool], timeout: float) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not check():
        if loop.time() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        await asyncio.sleep(0.02)


@contextlib.asynccontextmanager
async def node(broker: Broker, data_dir: Path | None = None) -> AsyncIterator[RunningNode]:
    """A node with short lease, poll and heartbeat periods, stopped (drained) when the block exits."""
    settings = NodeSettings(data_dir=data_dir, lease_s=5.0, poll_s=0.05, heartbeat_s=0.2, drain_s=5.0)
    async with running_node(broker, settings, asyncio.Event()) as running:
        yield running


def test_two_in_process_nodes_play_a_tiny_round_robin_exactly_once(tmp_path: Path) -> None:
    db_file = tmp_path / "arena.sqlite3"

    async def main() -> None:
        one, two = EmbeddedBroker(db_file), EmbeddedBroker(db_file)
        stop_bots = asyncio.Event()
        bots: list[asyncio.Task[None]] = []
        try:
            async with node(one) as first, node(two) as second:
                for name, bot in (("rand", RandomBot(1)), ("heur", HeuristicBot()), ("rand2", RandomBot(2))):
                    _, token = first.node.register_bot(name)
                    bots.append(asyncio.create_task(
                        run_async(bot, first.address, token, 4, name=name, stop=stop_bots)))

                def connected(n: RunningNode) -> bool:
                    bots = n.node.bots()
                    return len(bots) == 3 and all(b.connected for b in bots)

                await until("the bots on both nodes", lambda: connected(first) and connected(second), 8)
                spec = TournamentSpec.from_dict({"tournament_id": "smoke", "format": "round-robin",
                                                 "bots": ["rand", "heur", "rand2"], "ruleset": "coinche",
                                                 "deals": 1, "seed": "smoke"})
                await asyncio.to_thread(first.tournaments.create, spec)
                assert one.pending_count("smoke") == 6

                def finished() -> bool:
                    found = one.get_tournament("smoke")
                    return found is not None and found[1] is TournamentState.FINISHED

                await until("the tournament to finish", finished, 8)
            assert first.worker.completed + second.worker.completed == 6  # once both drained
            results = one.results("smoke")
            tour = Tournament(spec)
            ids = [j.match_id for s in tour.stages(results) for p in s.pairings for j in p.jobs]
            assert sorted(r.match_id for r in results) == sorted(ids) and len(ids) == 6
            assert {r.node_id for r in results} <= {first.node.node_id, second.node.node_id}
            assert sum(games for _, games in one.pool_ratings("coinche").values()) == 2 * len(results)
            assert one.pending_count() == 0
            for r in results:
                again = replayed(r)
                assert (again.totals, again.winner) == (r.totals, r.winner)
        finally:
            stop_bots.set()
            await asyncio.gather(*bots, return_exceptions=True)
            one.close()
            two.close()

    asyncio.run(asyncio.wait_for(main(), 20))


def test_restart_with_a_kept_record_writes_its_result_exactly_once(tmp_path: Path) -> None:
    """A node kept a match's record and died before writing its result; restarted on its data folder,
    it writes the result from the record (its node refuses to play that match id again), once."""
    data = tmp_path / "node"
    db_file = tmp_path / "arena.sqlite3"

    async def main() -> None:
        broker = EmbeddedBroker(db_file)
        try:
            # a finished match's record, as the dead node left it in its data folder
            async with node(broker) as running:
                stop_bots = asyncio.Event()
                _, ta = running.node.register_bot("rand-a")
                _, tb = running.node.register_bot("rand-b")
                bots = [asyncio.create_task(run_async(RandomBot(i), running.address, t, 2, stop=stop_bots))
                        for i, t in enumerate((ta, tb))]
                try:
                    await until("the bots", lambda: all(b.connected for b in running.node.bots()), 15)
                    mid = running.node.start_match("rand-a", "rand-b", "coinche", seed="kept/1/0", deals=1,
                                                   match_id="kept-r1-0")
                    record = await running.node.wait(mid)
                    assert record.result.reason == "finished"
                finally:
                    stop_bots.set()
                    await asyncio.gather(*bots, return_exceptions=True)
            (data / "matches").mkdir(parents=True)
            (data / "matches" / "kept-r1-0.json").write_text(record.to_json())
            job = MatchJob(match_id="kept-r1-0", tournament_id="kept", team0="rand-a", team1="rand-b",
                           ruleset="coinche", seed="kept/1/0", deals=1)
            broker.enqueue([job])
            # the restarted node: no bot connected, yet the result is written from the record
            async with node(broker, data) as restarted:
                await until("the result", lambda: broker.get_result("kept-r1-0") is not None, 15)
                await until("the ack", lambda: broker.pending_count() == 0, 15)
                # the worker counts a job once its ack has come back from the broker's thread: the
                # queue may show it acked a moment before (asserting at once failed, now and then)
                await until("the count", lambda: restarted.worker.completed == 1, 5)
            result = broker.get_result("kept-r1-0")
            assert result is not None and result.record == record
            assert result.totals == record.totals and result.winner == record.winner
            assert broker.pools() == ["tournament:kept"]  # a tournament the store does not hold
            assert sum(games for _, games in broker.pool_ratings("tournament:kept").values()) == 2
        finally:
            broker.close()

    asyncio.run(asyncio.wait_for(main(), 20))
