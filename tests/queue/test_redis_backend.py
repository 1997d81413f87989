"""What only the Redis backend has: its server, its connection errors, its AOF."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.queue.broker import BrokerUnavailable
from arena.tournament import MatchResult, TournamentState
from tests.factories import result_of_job, tournament_spec
from tests.queue.conftest import REDIS_URL, redis_unavailable
from tests.queue.test_broker_contract import LEASE, job, result

pytest.importorskip("redis")

from arena.queue.redis_broker import RedisBroker, redact


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_no_server_raises_broker_unavailable_with_a_clear_message() -> None:
    url = f"redis://127.0.0.1:{free_port()}/0"
    with pytest.raises(BrokerUnavailable, match=f"no Redis at {url}: connection refused"):
        RedisBroker(url)


def test_bad_url_is_a_broker_error() -> None:
    from arena.queue.broker import BrokerError

    with pytest.raises(BrokerError, match="bad Redis URL"):
        RedisBroker("redis://127.0.0.1:notaport/0")


def test_messages_never_show_the_password() -> None:
    assert redact("redis://user:s3cret@host:6379/0") == "redis://user:***@host:6379/0"
    assert redact("redis://:s3cret@host:6379/0") == "redis://:***@host:6379/0"
    assert redact("redis://host:6379/0") == "redis://host:6379/0"
    assert redact("rediss://host:6380/0?password=s3cret&ssl_cert_reqs=none") == \
        "rediss://host:6380/0?password=***&ssl_cert_reqs=none"


@pytest.mark.reliability
def test_a_redis_that_lost_the_arena_s_data_is_named_not_taken_for_an_empty_one() -> None:
    why = redis_unavailable()
    if why:
        pytest.skip(why)
    import redis

    from arena.queue import BrokerDataLost

    prefix = f"test-arena-{uuid.uuid4().hex[:12]}"
    client = redis.Redis.from_url(REDIS_URL)
    try:
        with RedisBroker(REDIS_URL, prefix=prefix) as broker:
            broker.put_tournament(tournament_spec("t1"))
            assert broker.get_tournament("nope") is None  # unknown, and nothing was lost
            # Redis restarts empty: every key of the arena is gone
            client.delete(*client.scan_iter(match=f"{prefix}:*"))
            with pytest.raises(BrokerDataLost, match="lost the arena's data"):
                broker.get_tournament("t1")
            with pytest.raises(BrokerDataLost):
                broker.heartbeat("n1", "127.0.0.1:1", 5.0)
            # a node started now, on the empty Redis, begins afresh
            with RedisBroker(REDIS_URL, prefix=prefix) as fresh:
                assert fresh.get_tournament("t1") is None
    finally:
        own = list(client.scan_iter(match=f"{prefix}:*"))
        if own:
            client.delete(*own)
        client.close()


def test_the_queue_of_an_older_version_moves_in_with_its_deliveries() -> None:
    """An older version kept its jobs in a stream read through a consumer group: a broker that opens on
    it moves them into its queue, in their order, a job a node of the old version held with the
    deliveries that counted, and removes the stream (its nodes are stopped first: DEPLOY)."""
    why = redis_unavailable()
    if why:
        pytest.skip(why)
    import redis

    from arena.queue.keys import Keys

    prefix = f"test-arena-{uuid.uuid4().hex[:12]}"
    k = Keys(prefix)
    client = redis.Redis.from_url(REDIS_URL, decode_responses=True)
    try:
        client.xgroup_create(k.jobs, k.group, id="0", mkstream=True)
        for n in range(3):
            client.xadd(k.jobs, {"job": job(n).to_json(), "deliveries": "1" if n == 2 else "0"})
        client.xadd(k.jobs, {"job": "not a job", "deliveries": "0"})
        client.xreadgroup(k.group, "old-node", {k.jobs: ">"}, count=1)  # job 0, held by an old node
        client.incrby(k.pending("t1"), 3)
        with RedisBroker(REDIS_URL, prefix=prefix) as broker:
            assert not client.exists(k.jobs)
            claims = broker.claim("n1", 5, LEASE)
            assert [(c.job, c.delivery) for c in claims] == [(job(0), 2), (job(1), 1), (job(2), 2)]
            assert broker.pending_count("t1") == 3
            assert [d for d in broker.dead_letters()] == []  # the unreadable entry: kept raw, unparsed
            assert client.xlen(k.dead_letters) == 1
    finally:
        own = list(client.scan_iter(match=f"{prefix}:*"))
        if own:
            client.delete(*own)
        client.close()


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[tuple[int, Path]]:
    """A redis-server of this test's own, on a free port, keeping an append-only file in tmp_path."""
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not on PATH")
    yield free_port(), tmp_path


def start_redis(port: int, data: Path) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [
            "redis-server", "--port", str(port), "--bind", "127.0.0.1",
            "--save", "", "--appendonly", "yes", "--dir", str(data),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 10
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2) as s:
                s.sendall(b"PING\r\n")
                if s.recv(16).startswith(b"+PONG"):
                    return proc
        except OSError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise RuntimeError(f"redis-server on port {port} did not start")
        time.sleep(0.05)


def stop_redis(proc: subprocess.Popen[bytes]) -> None:
    os.kill(proc.pid, signal.SIGTERM)  # a clean shutdown: the append-only file is flushed
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)


@pytest.mark.slow
def test_redis_restart_with_aof_keeps_results_and_reclaims_jobs(own_redis: tuple[int, Path]) -> None:
    port, data = own_redis
    url = f"redis://127.0.0.1:{port}/0"
    proc = start_redis(port, data)
    try:
        with RedisBroker(url) as broker:
            broker.put_tournament(tournament_spec("t1"))
            broker.set_tournament_state("t1", TournamentState.RUNNING, expect=TournamentState.CREATED)
            broker.enqueue_once("t1/round/1", [job(0), job(1)])
            [done, running] = broker.claim("n1", 2, LEASE)
            assert broker.write_result(result(done.job))
            broker.ack(done)
            # "running" stays claimed by n1 when Redis goes down
        stop_redis(proc)
        with pytest.raises(BrokerUnavailable, match="connection refused"):
            RedisBroker(url)

        proc = start_redis(port, data)
        with RedisBroker(url) as broker:
            assert broker.get_result(done.job.match_id) == result(done.job)
            assert broker.results("t1") == [result(done.job)]
            assert broker.pool_ratings("classic") == {"alpha": (1508.0, 1), "beta": (1492.0, 1)}
            assert broker.get_tournament("t1") == (tournament_spec("t1"), "running")
            assert broker.write_result(result(done.job, winner=1)) is False  # still exactly once
            assert broker.enqueue_once("t1/round/1", [job(0), job(1)]) is False
            assert broker.pending_count() == broker.pending_count("t1") == 1
            time.sleep(0.35)  # n1's lease on the unfinished job runs out: it is reclaimed
            [replay] = broker.claim("n2", 5, LEASE)
            assert (replay.job, replay.delivery) == (running.job, 2)
    finally:
        if proc.poll() is None:
            stop_redis(proc)


def test_both_backends_compute_the_very_same_ratings() -> None:
    why = redis_unavailable()
    if why:
        pytest.skip(why)
    import random

    import redis

    from arena.engine import Ruleset
    from arena.queue.embedded import EmbeddedBroker
    from arena.tournament import MatchJob

    prefix = f"test-arena-{uuid.uuid4().hex[:12]}"
    rng = random.Random(7)
    bots = ["alpha", "beta", "gamma", "delta", "epsilon"]
    specs = [tournament_spec("t1"),
             tournament_spec("t2", duplicate="mirror", deals=4, ruleset=Ruleset.from_spec("coinche")),
             tournament_spec("t3", unrated_reason="its seed was chosen")]
    try:
        with RedisBroker(REDIS_URL, prefix=prefix) as in_redis, EmbeddedBroker(None) as in_sqlite:
            for broker in (in_redis, in_sqlite):
                broker.history_every, broker.history_max = 3, 4  # the window slides within the test
                for spec in specs:
                    broker.put_tournament(spec)
            written: list[MatchResult] = []
            for n in range(300):
                team0, team1 = rng.sample(bots, 2)
                tid = rng.choice(["t1", "t2", "t3"])
                totals = (rng.randrange(0, 900), rng.randrange(0, 900))
                reason = rng.choice(["finished"] * 5 + ["forfeit"])
                winner = rng.choice([0, 1, None])
                if tid == "t2":
                    legs = [MatchJob(f"t2-r1-{n}-leg0", "t2", team0, team1, "coinche", "s"),
                            MatchJob(f"t2-r1-{n}-leg1", "t2", team1, team0, "coinche", "s")]
                    rng.shuffle(legs)  # either leg may be written first
                    written += [result_of_job(j, totals, winner, reason=reason) for j in legs]
                else:
                    written.append(result_of_job(MatchJob(f"{tid}-r1-{n}", tid, team0, team1, "classic", "s"),
                                                 totals, winner, reason=reason))
            for r in written:
                assert in_redis.write_result(r) and in_sqlite.write_result(r)
            assert in_redis.pools() == in_sqlite.pools() == ["classic", "coinche", "tournament:t1",
                                                             "tournament:t2", "tournament:t3"]
            for pool in in_sqlite.pools():
                # Lua and Python agree to the last bit
                assert in_redis.pool_ratings(pool) == in_sqlite.pool_ratings(pool)
                assert in_redis.pair_counts(pool) == in_sqlite.pair_counts(pool)
                for bot in bots:
                    assert in_redis.rating_history(pool, bot) == in_sqlite.rating_history(pool, bot)
                    history = in_sqlite.rating_history(pool, bot)
                    assert 0 < len(history) <= 5  # 4 points kept, and the latest
    finally:
        client = redis.Redis.from_url(REDIS_URL)
        own = list(client.scan_iter(match=f"{prefix}:*"))
        if own:
            client.delete(*own)
        client.close()
