"""Scheduled tournaments on two in-process nodes sharing an embedded queue file: one tournament per
occurrence whichever node wakes first, and after every node was down, the latest occurrence missed
only."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from pathlib import Path

from belote.arena.v1 import arena_service_pb2 as apb

from arena.node.run import NodeSettings, RunningNode, running_node
from arena.queue import Broker, EmbeddedBroker
from arena.referee.access import AccessPolicy
from arena.referee.registry import digest, new_token
from arena.remote import Remote
from arena.tournament import TournamentState
from arena.tournament.schedule import Schedule
from tests.cluster.test_cluster_smoke import until

ADMIN = new_token("adm")
EVERY = 2


@contextlib.asynccontextmanager
async def node(broker: Broker) -> AsyncIterator[RunningNode]:
    settings = NodeSettings(lease_s=5.0, poll_s=0.05, heartbeat_s=0.2, drain_s=2.0, schedule_min_every_s=1,
                            access=AccessPolicy(admin_sha256=digest(ADMIN)))
    async with running_node(broker, settings, asyncio.Event()) as running:
        yield running


def occurrences(broker: Broker) -> list[str]:
    return sorted(t for t in broker.list_tournaments() if t.startswith("tick@"))


def test_two_nodes_make_one_tournament_per_occurrence_and_the_latest_missed_once(tmp_path: Path) -> None:
    db_file = tmp_path / "arena.sqlite3"

    async def main() -> None:
        one, two = EmbeddedBroker(db_file), EmbeddedBroker(db_file)
        try:
            async with node(one) as first, node(two) as second:
                for name in ("a", "b"):
                    first.node.register_bot(name)
                spec = apb.TournamentSpec(format="round-robin", bots=["a", "b"], deals=1)
                request = apb.CreateScheduleRequest(schedule_id="tick", spec=spec, every_s=EVERY)
                with Remote(second.address, ADMIN) as remote:  # through one node; the other by the notice
                    await asyncio.to_thread(remote.call, "CreateSchedule", request)
                await until("four occurrences", lambda: len(occurrences(one)) >= 4, 4 * EVERY + 3)
                made = first.schedules.made + second.schedules.made
            [(_, text, last)] = one.schedules()
            schedule = Schedule.from_json(text)
            ids = occurrences(one)
            # one tournament per occurrence, each made by one node, none skipped while they were up
            assert sorted(made) == ids and len(set(made)) == len(made)
            assert ids == [schedule.tournament_id(schedule.first + k * EVERY) for k in range(len(ids))]
            for tid in ids:  # each with its first stage queued
                found = one.get_tournament(tid)
                assert found is not None and found[1] is TournamentState.RUNNING
                assert one.pending_count(tid) == 2
            # every node down for more than two periods: the one that comes back makes the latest
            # occurrence missed, once, not the backlog
            await asyncio.sleep(2.5 * EVERY)
            back_at = time.time()
            async with node(one) as again:
                await until("the missed occurrence", lambda: len(occurrences(one)) > len(ids), 3)
                later = [t for t in occurrences(one) if t not in ids]
                missed = schedule.latest_due(back_at)
                assert missed is not None and missed > last + EVERY  # at least one skipped
                assert later[0] == schedule.tournament_id(missed)
                skipped = {schedule.tournament_id(t) for t in range(last + EVERY, missed, EVERY)}
                assert not skipped & set(occurrences(one))
                assert again.schedules.made[0] == later[0]
        finally:
            one.close()
            two.close()

    asyncio.run(main())
