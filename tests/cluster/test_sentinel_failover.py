"""The Redis primary SIGKILLed mid-tournament: the nodes follow the promoted replica, nothing is lost.

A primary, a replica and three sentinels of the test's own (:mod:`tests.cluster.own_sentinel`);
two ``belote-arena serve --redis-sentinel ... --redis-master arena --redis-wait-replicas 1`` nodes,
four SDK bot processes, a round-robin of fixed deals. Once some results are in and a node holds
matches, the primary is killed; the sentinels promote the replica, the old primary is started
again as the new primary's replica (an operator's restart: until then no result can reach a
replica, so none is counted), and the tournament finishes with every result once.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from pathlib import Path

import pytest

pytest.importorskip("redis")

from arena.queue.keys import Keys
from arena.queue.redis_broker import RedisBroker
from arena.queue.sentinel import SentinelSet
from arena.tournament import MatchResult
from tests.cluster.own_sentinel import MASTER, sentinel_set
from tests.cluster.procs import (
    NodeProc,
    Procs,
    check_finished_tournament,
    cli_json,
    register_bots,
    wait_connected,
    wait_for,
    wait_state,
)

pytestmark = [pytest.mark.reliability, pytest.mark.slow]

BOTS = {"rand-a": "random", "rand-b": "random", "heur-a": "heuristic", "heur-b": "heuristic"}
MATCHES = 24


def test_failover_of_redis_mid_tournament_loses_no_result_and_counts_each_once(
    procs: Procs, tmp_path: Path,
) -> None:
    began = time.monotonic()
    with sentinel_set(tmp_path / "redis") as rs:
        old, replica = rs.servers
        flags = ["--redis-sentinel", rs.sentinels, "--redis-master", MASTER,
                 "--redis-wait-replicas", "1", "--redis-wait-timeout", "0.5"]
        nodes = procs.nodes(2, tmp_path, redis=None, lease=2, capacity=4, args=flags)
        for n in nodes:
            assert f"queue: Redis at sentinel://{rs.sentinels}/{MASTER}, its keys under" in n.text()
        tokens = register_bots(nodes[0].address, list(BOTS))
        for name, kind in BOTS.items():
            procs.start_bot(name, kind, nodes[0].address, tokens[name], concurrency=4)
        wait_connected([n.address for n in nodes], list(BOTS))

        broker = RedisBroker(sentinel=SentinelSet.parse(rs.sentinels, MASTER))
        k = Keys()
        try:
            created = cli_json("tournament", "create", "--address", nodes[1].address,
                               "--format", "round-robin", "--bots", ",".join(BOTS), "--ruleset", "coinche",
                               "--deals", "3", "--rounds", "2", "--seed", "failover-seed", "--id", "failover")
            assert (created["tournament_id"], created["jobs"]) == ("failover", MATCHES)

            with rs.client(old) as primary:
                def mid_tournament() -> bool:
                    if primary.scard(k.results_index("failover")) < 3:
                        return False
                    return int(primary.zcard(k.jobs_leased)) > 0  # matches held by the nodes

                wait_for("some results in and matches held", mid_tournament, 30, every=0.002)
                recorded_before = {n.node_id: set(n.recorded()) for n in nodes}
            rs.kill(old)
            killed_at = time.monotonic()
            wait_for("the sentinels to promote the replica", lambda: rs.primary_port() == replica, 30,
                     every=0.1)
            promoted_s = time.monotonic() - killed_at
            rs.start_server(old, replica_of=replica)  # the operator restarts it: a replica again

            with rs.client(replica) as new_primary:
                # the nodes heartbeat on the new primary: their keys, deleted there, come back
                new_primary.delete(*(k.node(n.node_id) for n in nodes))
                wait_for("both nodes to heartbeat on the new primary",
                         lambda: new_primary.exists(*(k.node(n.node_id) for n in nodes)) == len(nodes), 20)
                # their notices readers (a blocking XREAD) read the new primary: a bot registered
                # on one node after the failover is known to the other at once
                register_bots(nodes[0].address, ["late"])
                wait_for("node 1 to hear of the bot registered on node 0", lambda: any(
                    b["name"] == "late" for b in cli_json("bot", "list", "--address", nodes[1].address)), 10,
                    every=0.1)

                wait_state(broker, "failover", "finished", timeout=45)
                finished_s = time.monotonic() - killed_at
                results = check_finished_tournament(broker, "failover", redis_client=new_primary,
                                                    db_arg=("--address", nodes[1].address),
                                                    expect_matches=MATCHES)
            for n in nodes:
                assert n.alive(), n.text()[-3000:]
                assert "lost the arena's data" not in n.text(), n.text()[-3000:]
            check_each_counted_once(nodes, results, recorded_before)
            reported = sum(map(len, recorded_before.values()))
            print(f"primary killed {killed_at - began:.1f} s in, with {reported} results reported; replica "
                  f"promoted {promoted_s:.1f} s later; tournament finished "
                  f"{finished_s:.1f} s after the kill; test {time.monotonic() - began:.1f} s")
        finally:
            broker.close()


def check_each_counted_once(
    nodes: list[NodeProc], results: list[MatchResult], recorded_before: dict[str, set[str]],
) -> None:
    """Each result was reported ("recorded") at most once, by the node that wrote it; every one a node
    reported before the failover is still there, its own; and one that no node reported is one
    whose writer said why it was not counted (the primary died under the write, or no replica
    held it yet): its job was then dropped by the claim that found it."""
    by_id = {r.match_id: r for r in results}
    lines: Counter[str] = Counter()
    for n in nodes:
        for mid in n.recorded():
            lines[mid] += 1
            assert mid in by_id and by_id[mid].node_id == n.node_id, mid
    assert not [m for m, c in lines.items() if c > 1], f"reported twice: {lines.most_common(3)}"
    for node_id, before in recorded_before.items():
        for mid in before:
            assert by_id[mid].node_id == node_id, f"{mid}, reported before the failover, was rolled back"
    logs = {n.node_id: n.text() for n in nodes}
    for r in results:
        if r.match_id not in lines:
            said = re.search(rf"match {re.escape(r.match_id)}(?:'s result)?: .*"
                             r"(the job stays claimed|not reported)", logs[r.node_id])
            assert said, f"{r.match_id}: written by {r.node_id}, neither reported nor said why not"
