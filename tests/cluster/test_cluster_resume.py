"""The whole cluster dies mid-tournament; fresh nodes and ``tournament resume`` finish it.

Two nodes play a Swiss tournament (its rounds are enqueued one by one, as the
results come in); both are SIGKILLed mid-way, with their bots. Two fresh nodes
on new ports (and new bot processes) reclaim what the dead ones held once their
lease is over, ``tournament resume`` enqueues whatever the results call for,
and the tournament ends with one result per scheduled match.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from arena.queue.keys import Keys
from arena.queue.redis_broker import RedisBroker
from tests.cluster.procs import (
    Procs,
    check_finished_tournament,
    check_recorded_once,
    cli,
    cli_json,
    redis_url,
    register_bots,
    schedule_of,
    wait_connected,
    wait_for,
    wait_state,
)

BOTS = {"rand-a": "random", "rand-b": "random", "heur-a": "heuristic", "heur-b": "heuristic"}
MATCHES = 6  # 3 Swiss rounds of 2 boards


@pytest.mark.slow
def test_crash_of_the_whole_cluster_then_resume_on_fresh_nodes(
    procs: Procs, own_db: tuple[Any, int], tmp_path: Path,
) -> None:
    client, db = own_db
    url = redis_url(db)
    old = procs.nodes(2, tmp_path, redis=url, lease=2, capacity=4, prefix="old")
    tokens = register_bots(old[0].address, list(BOTS))
    old_bots = [procs.start_bot(name, kind, old[0].address, tokens[name]) for name, kind in BOTS.items()]
    wait_connected([n.address for n in old], list(BOTS))
    broker = RedisBroker(url)
    try:
        cli_json("tournament", "create", "--address", old[0].address, "--format", "swiss",
                 "--bots", ",".join(BOTS),
                 "--rounds", "3", "--ruleset", "coinche", "--deals", "3", "--seed", "swiss-seed",
                 "--id", "swiss")
        k = Keys()

        def midway() -> bool:
            done = int(client.scard(k.results_index("swiss")))
            if not 2 <= done < MATCHES:
                return False
            return bool(broker.held())  # a later round is being played

        wait_for("the tournament to be mid-way", midway, 30, every=0.002)
        for p in (*old, *old_bots):
            p.kill()
        done_at_kill = len(broker.results("swiss"))
        found = broker.get_tournament("swiss")
        assert found is not None and found[1] == "running"
        assert done_at_kill < MATCHES

        fresh = procs.nodes(2, tmp_path, redis=url, lease=2, capacity=4, prefix="fresh")
        assert {n.port for n in fresh}.isdisjoint({n.port for n in old})
        # resumed before any bot is back: nothing can be played yet, the tournament is mid-way
        out = cli("tournament", "resume", "swiss", "--address", fresh[0].address).stdout
        assert out.startswith("tournament swiss (running):"), out
        for name, kind in BOTS.items():
            procs.start_bot(name, kind, fresh[0].address, tokens[name])
        wait_connected([n.address for n in fresh], list(BOTS))

        wait_state(broker, "swiss", "finished", timeout=60)
        results = check_finished_tournament(broker, "swiss", redis_client=client,
                                            db_arg=("--address", fresh[0].address), expect_matches=MATCHES)
        _, ids = schedule_of(broker, "swiss")
        assert sorted({int(m.split("-r")[1].split("-")[0]) for m in ids}) == [1, 2, 3]
        check_recorded_once([*old, *fresh], results, may_be_unlogged=[n.node_id for n in old])
        fresh_ids = {n.node_id for n in fresh}
        assert sum(r.node_id in fresh_ids for r in results) >= MATCHES - done_at_kill
        # resuming a finished tournament changes nothing
        again = cli("tournament", "resume", "swiss", "--address", fresh[1].address).stdout
        assert again.startswith("tournament swiss (finished): 6/6 matches done, 0 queued"), again
        assert len(broker.results("swiss")) == MATCHES
    finally:
        broker.close()
