"""RedisBroker on a primary with a replica: the wait for the replica, and following a failover.

Each test has its own redis-servers (and sentinels) on loopback (:mod:`tests.cluster.own_sentinel`).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("redis")

from arena.queue import BrokerDataLost, open_broker
from arena.queue.keys import Keys
from arena.queue.redis_broker import RedisBroker
from arena.queue.sentinel import NotReplicated, SentinelSet
from arena.tournament import TournamentState
from tests.cluster.own_sentinel import MASTER, primary_and_replica, sentinel_set
from tests.cluster.procs import wait_for
from tests.factories import tournament_spec
from tests.queue.test_broker_contract import LEASE, job, result

pytestmark = [pytest.mark.reliability]

WAIT_S = 0.5


def waits(client: Any) -> int:
    """The WAIT commands the Redis of ``client`` has run (its own server: only this test's)."""
    return int(client.info("commandstats").get("cmdstat_wait", {}).get("calls", 0))


def started(broker: RedisBroker, jobs: int) -> None:
    broker.put_tournament(tournament_spec("t1"))
    broker.set_tournament_state("t1", TournamentState.RUNNING, expect=TournamentState.CREATED)
    broker.enqueue_once("t1/round/1", [job(n) for n in range(jobs)])


def test_a_result_waits_for_its_replica_and_is_not_counted_while_the_replica_is_paused(
    tmp_path: Path,
) -> None:
    with primary_and_replica(tmp_path) as rs:
        primary, replica_port = rs.servers
        url = f"redis://127.0.0.1:{primary}/0"
        k = Keys()
        with RedisBroker(url, wait_replicas=1, wait_timeout_s=WAIT_S) as broker, \
                RedisBroker(url, wait_replicas=1, wait_timeout_s=30.0) as patient, \
                RedisBroker(url) as at_once, rs.client(replica_port) as replica, rs.client(primary) as own:
            started(broker, 3)
            first, second, third = broker.claim("n1", 3, lease_s=LEASE)
            # the replica answers: written, and on the replica by the time write_result returns (a
            # patient broker: on a loaded machine a replica just synced may take more than WAIT_S)
            assert patient.write_result(result(first.job))
            assert replica.exists(k.result(first.job.match_id)) == 1
            broker.ack(first)

            rs.pause(replica_port)
            try:
                began, asked = time.monotonic(), waits(own)
                with pytest.raises(NotReplicated, match=(
                        rf"match {second.job.match_id}'s result is on the Redis primary, but 0 of the 1 "
                        rf"replicas asked for had it after {WAIT_S:g} s: not counted yet")):
                    broker.write_result(result(second.job))
                waited = time.monotonic() - began
                # it waited its WAIT_S, once (Redis's WAIT ends at its timeout: no bound on the seconds
                # past it, which a loaded machine stretches)
                assert waited >= WAIT_S - 0.05 and waits(own) == asked + 1, (waited, waits(own) - asked)
                # written on the primary all the same (nothing is undone), its job not acked
                assert broker.has_result(second.job.match_id)
                assert broker.pending_count("t1") == 2
                # without the wait (a single Redis), the same write returns at once
                asked = waits(own)
                assert at_once.write_result(result(third.job))
                assert waits(own) == asked, "a broker asked for no replica waited for one"
            finally:
                rs.resume(replica_port)
            both = (k.result(second.job.match_id), k.result(third.job.match_id))
            wait_for("the replica to catch up", lambda: replica.exists(*both) == 2, 10)
            # the job left claimed is dropped by the claim that finds its result, after the lease
            at_once.ack(third)
            time.sleep(LEASE + 0.15)
            assert broker.claim("n2", 5, lease_s=LEASE) == []
            assert broker.pending_count("t1") == 0
            assert sorted(r.match_id for r in broker.results("t1")) == sorted(
                c.job.match_id for c in (first, second, third))


def test_wait_replicas_with_no_replica_at_all_says_so_after_its_timeout(tmp_path: Path) -> None:
    with primary_and_replica(tmp_path) as rs:
        rs.kill(rs.servers[1])
        url = f"redis://127.0.0.1:{rs.servers[0]}/0"
        with RedisBroker(url, wait_replicas=1, wait_timeout_s=0.2) as broker:
            started(broker, 1)
            [claim] = broker.claim("n1", 1, lease_s=LEASE)
            with pytest.raises(NotReplicated, match="0 of the 1 replicas"):
                broker.write_result(result(claim.job))


def test_bad_wait_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="wait_replicas must be 0 or more"):
        RedisBroker(wait_replicas=-1)
    with pytest.raises(ValueError, match="wait_timeout_s positive"):
        RedisBroker(wait_replicas=1, wait_timeout_s=0)


def test_sentinel_addresses_are_checked() -> None:
    assert SentinelSet.parse(" a:1, [::1]:2,b ,a:1", "m") == SentinelSet(
        (("a", 1), ("::1", 2), ("b", 26379)), "m")
    assert SentinelSet.parse("a:1,[::1]:2", "m").describe() == "sentinel://a:1,[::1]:2/m"
    for bad, why in ((",", "no sentinel given"), ("a:0", "port is 1-65535"), ("a:x", "port is 1-65535"),
                     ("a b:1", "HOST:PORT"), ("[::1]x", "HOST:PORT"), (":5", "HOST:PORT")):
        with pytest.raises(ValueError, match=why):
            SentinelSet.parse(bad, "m")
    for name in ("", "a b", "-x", "x" * 65):
        with pytest.raises(ValueError, match="primary's name"):
            SentinelSet.parse("a:1", name)


@pytest.mark.slow
def test_the_broker_follows_a_failover_and_the_promoted_replica_is_not_taken_for_lost_data(
    tmp_path: Path,
) -> None:
    with sentinel_set(tmp_path) as rs:
        old, replica_port = rs.servers
        sentinel = SentinelSet.parse(rs.sentinels, MASTER)
        broker = open_broker(None, None, sentinel=sentinel, wait_replicas=1, wait_timeout_s=2.0)
        assert isinstance(broker, RedisBroker)
        try:
            assert broker.url == f"sentinel://{rs.sentinels}/{MASTER}"
            started(broker, 2)
            done, held = broker.claim("n1", 2, lease_s=30)
            assert broker.write_result(result(done.job))  # on the replica too: it survives
            broker.ack(done)
            cursor = broker.notice_cursor()
            broker.publish_notice("before")

            rs.kill(old)
            wait_for("the sentinels to promote the replica", lambda: rs.primary_port() == replica_port, 30,
                     every=0.1)
            # the same broker now reads and writes the promoted replica
            wait_for("the broker to reach the new primary", lambda: _answers(broker), 30, every=0.1)
            broker.check_data()  # the epoch was replicated: not a lost database
            assert [r.match_id for r in broker.results("t1")] == [done.job.match_id]
            # the claim held when the primary died is still held, by the same node, at the same delivery
            assert broker.renew(held, 30).delivery == held.delivery
            # the blocking read of the notices follows too (a notice from before, then one after)
            batch = broker.notices(cursor, 1.0)
            assert [n.kind for n in batch.notices] == ["before"] and not batch.gap
            broker.publish_notice("after")
            assert [n.kind for n in broker.notices(batch.cursor, 1.0).notices] == ["after"]
            # no replica any more: a result is written, and not counted, until the old primary is back
            with pytest.raises(NotReplicated):
                broker.write_result(result(held.job))
            rs.start_server(old, replica_of=replica_port)
            with rs.client(old) as back:
                wait_for("the old primary to come back as a replica", lambda: back.exists(
                    Keys().result(held.job.match_id)) == 1, 20, every=0.1)
            assert broker.write_result(result(held.job)) is False  # there already, now replicated
            broker.ack(held)
            assert broker.pending_count("t1") == 0
        finally:
            broker.close()


def _answers(broker: RedisBroker) -> bool:
    try:
        broker.check_data()
    except BrokerDataLost:
        raise
    except Exception:
        return False
    return True
