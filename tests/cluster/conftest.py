"""Fixtures of the cluster tests: a Redis database of the test's own, and its processes.

Each multi-process test owns one Redis database (``belote-arena serve`` and the
CLI take no key prefix, so the database number is what keeps tests apart). It
takes the first empty one of :data:`CANDIDATE_DBS`, marking it with a key so
that a concurrent run takes another (it is empty but for that mark), and
flushes it when it ends; nothing else on the server is touched. The tests are skipped,
saying why, when no Redis answers.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cluster.procs import REDIS_HOST, REDIS_PORT, Procs

#: databases these tests may take, the least likely to be somebody else's first
CANDIDATE_DBS = (13, 14, 15, 12, 11, 10)
OWNER_KEY = "tests-cluster:owner"

_down: list[str | None] = []


def redis_down() -> str | None:
    """Why the Redis tests cannot run here (None if they can); asked once per session."""
    if not _down:
        try:
            import redis

            client = redis.Redis(host=REDIS_HOST, port=REDIS_PORT, socket_connect_timeout=1.0)
            try:
                client.ping()
                _down.append(None)
            finally:
                client.close()
        except Exception as e:  # no server, or no redis-py
            _down.append(f"no Redis at {REDIS_HOST}:{REDIS_PORT} ({e})")
    return _down[0]


def claim_db() -> tuple[Any, int]:
    """A client on an empty database now marked as ours, and its number; skips without Redis."""
    why = redis_down()
    if why:
        pytest.skip(why)
    import redis

    for db in CANDIDATE_DBS:
        client = redis.Redis(host=REDIS_HOST, port=REDIS_PORT, db=db, decode_responses=True)
        if client.dbsize() == 0 and client.set(OWNER_KEY, str(os.getpid()), nx=True):
            if client.dbsize() == 1:  # empty but for our mark (kept, so no other run takes it)
                return client, db
            client.delete(OWNER_KEY)
        client.close()
    raise AssertionError(f"no empty Redis database among {CANDIDATE_DBS} for the cluster tests")


def release_db(client: Any) -> None:
    try:
        client.flushdb()
    finally:
        client.close()


@pytest.fixture
def procs(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Procs]:
    """The test's processes, stopped at its end: before its Redis database is flushed, when it has
    one (``own_db``, set up first whatever the order of the test's arguments). Flushed first, the
    database got its job stream back from a node still running (each run left one database
    dirty, until none was free)."""
    if "own_db" in request.fixturenames:
        request.getfixturevalue("own_db")
    p = Procs(tmp_path)
    try:
        yield p
    finally:
        p.close()


@pytest.fixture
def own_db() -> Iterator[tuple[Any, int]]:
    """(client, number) of a Redis database of this test's own, flushed at its start and end."""
    client, db = claim_db()
    try:
        yield client, db
    finally:
        release_db(client)
