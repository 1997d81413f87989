"""Choosing the backend: open_broker, and the keys under one prefix."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from arena.queue import DATABASE_NAME, BrokerError, EmbeddedBroker, open_broker
from arena.queue.keys import DEFAULT_PREFIX, Keys
from tests.factories import tournament_spec
from tests.queue.conftest import REDIS_URL, redis_unavailable


def test_no_url_opens_the_embedded_backend_in_the_data_directory(tmp_path: Path) -> None:
    data = tmp_path / "data" / "arena"
    with open_broker(None, data) as broker:
        assert isinstance(broker, EmbeddedBroker)
        assert broker.put_tournament(tournament_spec("t1"))
    assert (data / DATABASE_NAME).is_file()
    with open_broker(None, data) as broker:
        assert broker.list_tournaments() == ["t1"]


def test_no_url_and_no_data_directory_keeps_the_queue_in_memory() -> None:
    with open_broker(None, None) as broker:
        assert isinstance(broker, EmbeddedBroker) and broker.path is None
        assert broker.put_tournament(tournament_spec("t1"))
    with open_broker(None, None) as broker:
        assert broker.list_tournaments() == []


def test_unsupported_url_scheme_is_refused() -> None:
    with pytest.raises(BrokerError, match="unsupported broker URL scheme 'postgres'"):
        open_broker("postgres://localhost/arena", None)


def test_redis_url_opens_the_redis_backend() -> None:
    why = redis_unavailable()
    if why:
        pytest.skip(why)
    import redis

    from arena.queue.redis_broker import RedisBroker

    prefix = f"test-arena-{uuid.uuid4().hex[:12]}"
    try:
        with open_broker(REDIS_URL, None, prefix=prefix, max_deliveries=3) as broker:
            assert isinstance(broker, RedisBroker)
            assert (broker.keys.prefix, broker.max_deliveries) == (prefix, 3)
            assert broker.pending_count() == 0
    finally:
        client = redis.Redis.from_url(REDIS_URL)
        own = list(client.scan_iter(match=f"{prefix}:*"))
        if own:
            client.delete(*own)
        client.close()


def test_every_key_is_under_the_prefix() -> None:
    k = Keys("arena-x")
    built = [
        k.jobs, k.dead_letters, k.pending("t"), k.enqueue_marker("t/round/1"), k.result("m"),
        k.results_index("t"), k.pools, k.elo("classic"), k.pairs("tournament:t"), k.history("p"),
        k.leg("t-r1-0"), k.tournament("t"), k.tournaments,
    ]
    assert all(key.startswith("arena-x:") for key in built)
    assert len(set(built)) == len(built)
    assert k.group.startswith("arena-x:")
    assert k.pattern() == "arena-x:*"
    assert Keys().jobs == f"{DEFAULT_PREFIX}:jobs"


@pytest.mark.parametrize("bad", ["", "a*", "a b", "x[1]"])
def test_a_prefix_with_glob_characters_is_refused(bad: str) -> None:
    with pytest.raises(ValueError):
        Keys(bad)
