"""What the node tests share: a queue on each backend."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.queue import Broker
from tests.queue.conftest import BACKENDS, Store, redis_unavailable


@pytest.fixture(params=BACKENDS)
def broker(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Broker]:
    """A broker on the embedded queue, then on Redis under a key prefix of the test's own (removed after)."""
    if request.param == "redis" and (why := redis_unavailable()):
        pytest.skip(why)
    store = Store(request.param, tmp_path / "queue.sqlite3", f"test-node-{uuid.uuid4().hex[:12]}")
    try:
        yield store.open()
    finally:
        store.cleanup()


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """Where a test's queue lives, on each backend: ``store.open()`` as many brokers on it as the test
    needs (nodes of a cluster, or one restarted)."""
    if request.param == "redis" and (why := redis_unavailable()):
        pytest.skip(why)
    store = Store(request.param, tmp_path / "queue.sqlite3", f"test-node-{uuid.uuid4().hex[:12]}")
    try:
        yield store
    finally:
        store.cleanup()
