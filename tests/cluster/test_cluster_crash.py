"""A node SIGKILLed mid-tournament: its matches are reclaimed and replayed, each result counted once.

Three ``belote-arena serve --redis`` nodes, four SDK bot processes (two random,
two heuristic) connected to the first node and finding the others by
themselves, a round-robin of fixed deals. The first node is killed while it
plays; after its lease the others replay its matches from their seeds.
"""

from __future__ import annotations

import signal
import time
from pathlib import Path
from typing import Any

import pytest

from arena.queue.keys import Keys
from arena.queue.redis_broker import RedisBroker
from tests.cluster.procs import (
    Procs,
    check_finished_tournament,
    check_recorded_once,
    cli_json,
    redis_url,
    register_bots,
    wait_connected,
    wait_for,
    wait_state,
)

BOTS = {"rand-a": "random", "rand-b": "random", "heur-a": "heuristic", "heur-b": "heuristic"}


def owned_jobs(broker: RedisBroker, node_id: str) -> dict[str, str]:
    """The jobs the node holds: job id -> match id."""
    return {c.handle: c.job.match_id for c in broker.held() if c.node_id == node_id}


@pytest.mark.slow
def test_crash_of_a_node_mid_tournament_reclaims_its_matches_exactly_once(
    procs: Procs, own_db: tuple[Any, int], tmp_path: Path,
) -> None:
    client, db = own_db
    url = redis_url(db)
    nodes = procs.nodes(3, tmp_path, redis=url, lease=2, capacity=4)
    victim, survivors = nodes[0], nodes[1:]
    tokens = register_bots(victim.address, list(BOTS))
    for name, kind in BOTS.items():
        procs.start_bot(name, kind, victim.address, tokens[name], concurrency=4)
    wait_connected([n.address for n in nodes], list(BOTS))

    broker = RedisBroker(url)
    try:
        created = cli_json("tournament", "create", "--address", survivors[0].address,
                           "--format", "round-robin",
                           "--bots", ",".join(BOTS), "--ruleset", "coinche", "--deals", "3",
                           "--rounds", "2", "--seed", "crash-seed", "--id", "crash")
        assert (created["tournament_id"], created["jobs"]) == ("crash", 24)
        assert "given by the caller" in created["unrated_reason"]  # a seed given: its deals were known

        # some matches done, and the victim holds at least one: kill it right there. It is stopped
        # (SIGSTOP) before its jobs are read, so that what it holds then is what it holds when killed:
        # read while it ran, a loaded run saw it finish its only match between the read and the kill
        k = Keys()

        def victim_busy() -> bool:
            if client.scard(k.results_index("crash")) < 3:
                return False
            victim.popen.send_signal(signal.SIGSTOP)
            time.sleep(0.05)  # what it had sent before it stopped reaches Redis
            if owned_jobs(broker, victim.node_id):
                return True
            victim.popen.send_signal(signal.SIGCONT)
            return False

        wait_for("the victim to hold a match after some results", victim_busy, 30, every=0.002)
        victim.kill()
        killed_at = time.monotonic()
        orphans = set(owned_jobs(broker, victim.node_id).values())
        assert orphans, "the victim held no match when killed"
        done_at_kill = {r.match_id for r in broker.results("crash")}
        if orphans - done_at_kill:  # they wait for the lease: the tournament cannot be over yet
            found = broker.get_tournament("crash")
            assert found is not None and found[1] == "running"

        wait_state(broker, "crash", "finished", timeout=60)
        print(f"killed {victim.node_id} holding {sorted(orphans)}; finished "
              f"{time.monotonic() - killed_at:.1f} s later")

        results = check_finished_tournament(broker, "crash", redis_client=client,
                                            db_arg=("--address", survivors[0].address), expect_matches=24)
        by_id = {r.match_id: r for r in results}
        # the orphaned matches were played again by a survivor (unless their result was in already)
        for mid in orphans - done_at_kill:
            assert by_id[mid].node_id in {n.node_id for n in survivors}, mid
        check_recorded_once(nodes, results, may_be_unlogged=[victim.node_id])
        # "was already recorded" only for a replay of a match the victim wrote and did not ack
        for n in survivors:
            for mid in n.already_recorded():
                assert mid in orphans and by_id[mid].node_id == victim.node_id, mid
        assert {n.node_id for n in survivors} & {r.node_id for r in results}
    finally:
        broker.close()
