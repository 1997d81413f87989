"""SIGTERM drains a node: each match it runs is finished and recorded there, or released and
played by another node; never both, and never left to wait for its lease.
"""

from __future__ import annotations

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
#: long enough that a job left claimed by the drained node would stall the test
LEASE = 60.0
#: short enough that some running matches do not finish and must be released
DRAIN = 0.1


def held(broker: RedisBroker, node_id: str) -> set[str]:
    """The matches whose jobs the node holds."""
    return {c.job.match_id for c in broker.held() if c.node_id == node_id}


@pytest.mark.slow
def test_sigterm_drain_finishes_or_releases_each_match_exactly_once(
    procs: Procs, own_db: tuple[Any, int], tmp_path: Path,
) -> None:
    client, db = own_db
    url = redis_url(db)
    nodes = procs.nodes(2, tmp_path, redis=url, lease=LEASE, capacity=4, drain=DRAIN)
    drained, other = nodes
    tokens = register_bots(other.address, list(BOTS))
    for name, kind in BOTS.items():
        procs.start_bot(name, kind, other.address, tokens[name], concurrency=4)
    wait_connected([n.address for n in nodes], list(BOTS))
    broker = RedisBroker(url)
    try:
        cli_json("tournament", "create", "--address", other.address, "--format", "round-robin",
                 "--bots", ",".join(BOTS),
                 "--ruleset", "coinche", "--deals", "3", "--rounds", "2", "--seed", "drain-seed",
                 "--id", "drain")
        k = Keys()

        seen: set[str] = set()

        def busy() -> set[str] | None:
            """What the node holds, once it has just claimed a match after some results are in."""
            now = held(broker, drained.node_id)
            fresh = now - seen
            seen.update(now)
            if fresh and client.scard(k.results_index("drain")) >= 2:
                return now  # a match just started: it cannot finish within the drain time
            return None

        running = wait_for("the node to run matches", busy, 30, every=0.002)
        drained.terminate()
        signalled = time.monotonic()
        drained.popen.wait(timeout=20)
        assert drained.popen.returncode == 0, drained.text()
        log = drained.text()
        assert "draining" in log, log[-2000:]
        assert held(broker, drained.node_id) == set(), "the drained node left jobs claimed"

        wait_state(broker, "drain", "finished", timeout=LEASE / 2)
        finished_after = time.monotonic() - signalled
        assert finished_after < LEASE, "a released match waited for the lease"

        results = check_finished_tournament(broker, "drain", redis_client=client,
                                            db_arg=("--address", other.address), expect_matches=24)
        check_recorded_once(nodes, results)  # nobody was killed: every result has its one line
        by_id = {r.match_id: r for r in results}
        mine = set(drained.recorded())
        for mid in running:
            if by_id[mid].node_id == drained.node_id:
                assert mid in mine  # finished within the drain time, recorded here
            else:  # released: played by the other node, nothing of it recorded here
                assert by_id[mid].node_id == other.node_id
                assert mid not in mine and mid in other.recorded()
                assert mid not in drained.already_recorded()
        print(f"running at SIGTERM: {sorted(running)}; recorded there: {sorted(running & mine)}; "
              f"released: {sorted(running - mine)}; finished {finished_after:.1f} s later")
    finally:
        broker.close()
