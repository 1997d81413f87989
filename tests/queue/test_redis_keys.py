"""The queue's Lua scripts build the job keys from the prefix themselves (a claim reads the jobs of the
bots it is given; a job's keys follow from its hash): they must be exactly the names arena.queue.keys
gives, or a reader in Python (pending_count, held, waiting_bots, a test) would look at nothing."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.queue.keys import Keys
from arena.queue.redis_broker import RedisBroker
from arena.tournament import TournamentState
from tests.factories import tournament_spec
from tests.queue.conftest import Store, redis_unavailable
from tests.queue.test_broker_contract import job, result


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[RedisBroker]:
    if why := redis_unavailable():
        pytest.skip(why)
    store = Store("redis", tmp_path / "unused.sqlite3", f"test-keys-{uuid.uuid4().hex[:12]}")
    try:
        broker = store.open()
        assert isinstance(broker, RedisBroker)
        yield broker
    finally:
        store.cleanup()


def keys_now(broker: RedisBroker) -> set[str]:
    return set(broker._redis.scan_iter(match=broker.keys.pattern(), count=1000))


def test_the_scripts_keys_are_the_names_keys_py_gives(broker: RedisBroker) -> None:
    k: Keys = broker.keys
    broker.put_tournament(tournament_spec("t1"))
    broker.enqueue([job(0), job(1, team0="gamma", team1="beta")])
    [held] = broker.claim("n1", 1, 30.0, {"alpha": 2, "beta": 2})
    expected = {
        k.epoch, k.tournament("t1"), k.tournaments, k.notices, k.notice_seq, k.jobs_seq,
        k.job(held.handle), k.job(str(int(held.handle) + 1)), k.jobs_ready, k.jobs_waiting,
        k.jobs_leased, k.jobs_by_match, k.jobs_of("t1"), k.pending("t1"),
        k.jobs_ready_for("gamma"), k.jobs_ready_for("beta"),
    }
    assert keys_now(broker) == expected
    assert broker.waiting_bots() == {"gamma", "beta"}
    assert [c.job.match_id for c in broker.held()] == ["t1-m0"]
    assert broker._redis.hget(k.jobs_by_match, "t1-m0") == held.handle

    # the job finished and the other dropped by a cancel: nothing of the queue is left behind
    broker.finish([(held, result(held.job))])
    broker.set_tournament_state("t1", TournamentState.CANCELLED)
    left = {key for key in keys_now(broker) if key.startswith(f"{k.prefix}:job")}
    assert left == {k.jobs_seq}
    assert broker.pending_count() == 0 and broker.pending_count("t1") == 0
