"""The embedded default: one node on sqlite in its data folder, killed and restarted on it.

``belote-arena serve --data-dir D`` with no Redis; ``tournament create --data-dir
D`` queues into the same file. The node is SIGKILLed mid-tournament and started
again on D (same port: the bots reconnect by themselves); the jobs the dead node
held are reclaimed once their lease is over and every match ends with one result.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from arena.queue import DATABASE_NAME
from arena.queue.embedded import EmbeddedBroker
from tests.cluster.procs import (
    Procs,
    check_finished_tournament,
    check_recorded_once,
    cli_json,
    free_port,
    register_bots,
    wait_connected,
    wait_for,
    wait_state,
)

BOTS = {"rand-a": "random", "rand-b": "random", "heur-a": "heuristic", "heur-b": "heuristic"}


def claimed(db_file: Path) -> list[str]:
    """Match ids of the jobs claimed now (read-only, beside the node's own connection)."""
    with sqlite3.connect(f"file:{db_file}?mode=ro", uri=True, timeout=10) as db:
        return [m for (m,) in db.execute("SELECT match_id FROM jobs WHERE state = 'claimed'")]


@pytest.mark.slow
def test_embedded_node_crash_and_restart_on_its_data_dir_records_every_match_exactly_once(
    procs: Procs, tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    db_file = data / DATABASE_NAME
    port = free_port()
    first = procs.ready(procs.start_node("first", data, redis=None, lease=2, capacity=4, port=port))
    tokens = register_bots(first.address, list(BOTS))
    for name, kind in BOTS.items():
        procs.start_bot(name, kind, first.address, tokens[name])
    wait_connected([first.address], list(BOTS))
    created = cli_json("tournament", "create", "--address", first.address, "--format", "round-robin",
                       "--bots", ",".join(BOTS), "--ruleset", "coinche", "--deals", "3",
                       "--seed", "embedded-seed", "--id", "emb")
    assert (created["tournament_id"], created["jobs"]) == ("emb", 12)
    broker = EmbeddedBroker(db_file)
    try:
        def midway() -> list[str] | None:
            if len(broker.results("emb")) < 2:
                return None
            return claimed(db_file) or None

        wait_for("the node to be mid-way", midway, 30, every=0.005)
        first.kill()
        orphans = set(claimed(db_file))
        assert orphans, "the node held no job when killed"
        found = broker.get_tournament("emb")
        assert found is not None and found[1] == "running"

        second = procs.ready(procs.start_node("second", data, redis=None, lease=2, capacity=4, port=port))
        assert second.node_id != first.node_id
        wait_connected([second.address], list(BOTS))  # the same bot processes, reconnected
        wait_state(broker, "emb", "finished", timeout=60)

        results = check_finished_tournament(broker, "emb", redis_client=None,
                                            db_arg=("--address", second.address), expect_matches=12)
        check_recorded_once([first, second], results, may_be_unlogged=[first.node_id])
        by_id = {r.match_id: r for r in results}
        assert all(by_id[m].node_id in (first.node_id, second.node_id) for m in orphans)
        assert claimed(db_file) == []
    finally:
        broker.close()
