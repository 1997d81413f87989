"""Fixtures for the Broker contract: one store per test, on each backend.

The Redis backend runs against the server at 127.0.0.1:6379 under a random
prefix of its own, and deletes only its own keys afterwards (SCAN MATCH
prefix*); it is skipped, with the reason, when no server answers there.
"""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from arena.queue.broker import Broker
from arena.queue.embedded import EmbeddedBroker

REDIS_URL = "redis://127.0.0.1:6379/0"
BACKENDS = ["embedded", "redis"]

_redis_down: str | None = None
_redis_checked = False


def redis_unavailable() -> str | None:
    """Why the Redis backend cannot be tested here (None if it can); asked once per session."""
    global _redis_down, _redis_checked
    if not _redis_checked:
        _redis_checked = True
        try:
            import redis
        except ImportError:
            _redis_down = "redis-py is not installed (pip install redis)"
        else:
            client = redis.Redis.from_url(REDIS_URL, socket_connect_timeout=1.0, socket_timeout=1.0)
            try:
                client.ping()
            except redis.exceptions.RedisError as e:
                _redis_down = (
                    f"no Redis server answers at {REDIS_URL} ({e}); start one with "
                    "`redis-server --bind 127.0.0.1 --port 6379 --save ''` to test the Redis backend"
                )
            finally:
                client.close()
    return _redis_down


@dataclass
class Store:
    """Where one test's queue lives; ``open()`` gives as many brokers on it as the test needs."""

    kind: str
    path: Path
    prefix: str
    opened: list[Broker] = field(default_factory=list)

    def open(self, **options: Any) -> Broker:
        broker: Broker
        if self.kind == "embedded":
            broker = EmbeddedBroker(self.path, **options)
        else:
            from arena.queue.redis_broker import RedisBroker

            broker = RedisBroker(REDIS_URL, prefix=self.prefix, **options)
        self.opened.append(broker)
        return broker

    def spec(self) -> tuple[str, str, str]:
        """What another process needs to open the same store (see ``procs.open_store``)."""
        return self.kind, str(self.path), self.prefix

    def stored_jobs(self) -> int:
        """Jobs physically kept: the jobs' hashes, or the jobs table's rows."""
        if self.kind == "embedded":
            with sqlite3.connect(self.path) as db:
                return int(db.execute("SELECT COUNT(*) FROM jobs").fetchone()[0])
        import redis

        from arena.queue.keys import Keys

        client = redis.Redis.from_url(REDIS_URL)
        try:
            return sum(1 for _ in client.scan_iter(match=Keys(self.prefix).job("*"), count=1000))
        finally:
            client.close()

    def cleanup(self) -> None:
        for broker in self.opened:
            broker.close()
        if self.kind == "redis":
            import redis

            from arena.queue.keys import Keys

            client = redis.Redis.from_url(REDIS_URL)
            try:
                own = list(client.scan_iter(match=Keys(self.prefix).pattern(), count=500))
                if own:
                    client.delete(*own)
            finally:
                client.close()


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    if request.param == "redis":
        why = redis_unavailable()
        if why:
            pytest.skip(why)
    s = Store(request.param, tmp_path / "arena.sqlite3", f"test-arena-{uuid.uuid4().hex[:12]}")
    try:
        yield s
    finally:
        s.cleanup()


@pytest.fixture
def broker(store: Store) -> Broker:
    return store.open()
