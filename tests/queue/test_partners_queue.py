"""A partners tournament through the queue, on each backend: real nodes, five SDK bots over gRPC.

Every match seats four different bots, each on its own stream; the results
come back through the broker, and the standings are per bot.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from belote_bot import HeuristicBot, RandomBot, run_async

from arena.engine import Ruleset
from arena.node.run import NodeSettings, running_node
from arena.records import ResultReason
from arena.tournament import Tournaments, TournamentSpec, TournamentState
from tests.queue.conftest import Store
from tests.referee.arena_helpers import FAST, arun, until

BOTS = ("ace", "bea", "cal", "dee", "eve")


def test_a_partners_tournament_plays_through_the_queue(store: Store, tmp_path: Path) -> None:
    broker = store.open()
    spec = TournamentSpec("partners-q", "partners", BOTS, ruleset=Ruleset.from_spec("coinche"), deals=1,
                          duplicate="mirror", rounds=3, seed="partners/queue")

    async def main() -> None:
        stop = asyncio.Event()
        settings = NodeSettings(poll_s=0.05, heartbeat_s=0.1, lease_s=5.0, drain_s=1.0, capacity=4,
                                time=FAST, data_dir=tmp_path / "node")
        async with running_node(broker, settings, stop) as running:
            tasks = []
            for i, name in enumerate(BOTS):
                _, token = running.node.register_bot(name)
                bot = HeuristicBot(i) if i == 0 else RandomBot(i)
                tasks.append(asyncio.create_task(run_async(bot, running.address, token, 4, stop=stop,
                                                           all_nodes=False, verbose=False)))
            await until(lambda: sum(b.connected for b in running.node.bots()) == len(BOTS), 10, "the bots")
            running.tournaments.create(spec)
            await until(lambda: running.tournaments.progress(spec.tournament_id).state
                        is TournamentState.FINISHED, 60, "the tournament's end")
            stop.set()
            await asyncio.gather(*tasks, return_exceptions=True)

    arun(main(), timeout=90)
    results = broker.results(spec.tournament_id)
    assert len(results) == 3 * 2  # one table a round, two legs
    for r in results:
        assert r.is_mixed and len(set(r.seat_bots)) == 4
        assert r.reason is ResultReason.FINISHED
        assert r.record.team_names() == (r.team0, r.team1)

    progress = Tournaments(broker).progress(spec.tournament_id)
    table = {s.bot: s for s in progress.standings}
    assert set(table) == set(BOTS)
    played = {b: s.played for b, s in table.items()}
    assert sum(played.values()) == 3 * 4  # four bots a game
    assert all(s.played + s.byes == 3 for s in table.values())
    pool = f"tournament:{spec.tournament_id}"
    assert broker.pair_counts(pool) == {} and broker.pool_ratings(pool) == {}  # no Bradley-Terry count
    assert broker.mixed_pending(pool) == 0  # the node rated its games with openskill at once
    assert {b: s.games for b, s in broker.mixed_ratings(pool).items()} == played


