"""The broker's notices, on both backends: in order, at once, never missed silently.

A node tells every node what changed (``publish_notice``) and each reads them
from its cursor (``notices``), blocking in a thread of its own; the registry's
writes announce themselves in the same step. Two brokers on one store stand
for two nodes.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from arena.queue.broker import BOT_NOTICE, Broker, Notice
from tests.queue.conftest import Store

pytestmark = pytest.mark.reliability


def test_a_reader_gets_every_notice_after_its_cursor_in_order(store: Store) -> None:
    one, two = store.open(), store.open()
    cursor = two.notice_cursor()
    one.publish_notice("tournament", "t1")
    one.publish_notice("tournament", "t2")
    two.publish_notice("other", "")
    batch = two.notices(cursor, 1.0)
    assert batch.notices == (Notice("tournament", "t1"), Notice("tournament", "t2"), Notice("other", ""))
    assert not batch.gap
    after = one.notices(batch.cursor, 0.05)  # nothing new: an empty batch once the wait is over
    assert after.notices == () and after.cursor == batch.cursor and not after.gap
    assert one.notices(cursor, 0.05).notices == batch.notices  # the same cursor reads the same again


def test_a_waiting_reader_wakes_as_soon_as_another_node_publishes(store: Store) -> None:
    reader, writer = store.open(), store.open()
    cursor = reader.notice_cursor()
    got: list[tuple[float, tuple[Notice, ...]]] = []

    def read() -> None:
        batch = reader.notices(cursor, 5.0)
        got.append((time.monotonic(), batch.notices))

    thread = threading.Thread(target=read)
    thread.start()
    time.sleep(0.3)  # the reader is waiting
    published = time.monotonic()
    writer.publish_notice("tournament", "t9")
    thread.join(5.0)
    [(woke, notices)] = got
    assert notices == (Notice("tournament", "t9"),)
    # far sooner than its 5 s wait (the embedded queue wakes the readers of its file at once)
    assert woke - published < 1.0


def test_the_registry_s_writes_announce_themselves(store: Store) -> None:
    one, two = store.open(), store.open()
    cursor = two.notice_cursor()
    assert one.add_bot("alpha", '{"v": 1}')
    assert not one.add_bot("alpha", '{"v": 2}')  # taken: nothing written, nothing announced
    assert one.replace_bot("alpha", '{"v": 3}')
    batch = two.notices(cursor, 1.0)
    assert batch.notices == (Notice(BOT_NOTICE, "alpha"), Notice(BOT_NOTICE, "alpha"))
    assert two.get_bots(["alpha", "nobody"]) == {"alpha": '{"v": 3}'}


def test_a_compare_and_set_writes_only_over_the_entry_it_read(store: Store) -> None:
    broker = store.open()
    broker.add_bot("alpha", '{"v": 1}')
    cursor = broker.notice_cursor()
    assert not broker.replace_bot("alpha", '{"v": 3}', expect='{"v": 2}')  # another write came between
    assert not broker.replace_bot("nobody", '{"v": 1}', expect='{"v": 0}')
    assert broker.get_bots(["alpha"]) == {"alpha": '{"v": 1}'}
    assert broker.notices(cursor, 0.05).notices == ()  # nothing written, nothing announced
    assert broker.replace_bot("alpha", '{"v": 2}', expect='{"v": 1}')
    assert broker.get_bots(["alpha"]) == {"alpha": '{"v": 2}'}


def _lose_the_oldest(store: Store, broker: Broker, count: int) -> None:
    """Drop the ``count`` oldest notices, as trimming does for a reader that fell behind."""
    if store.kind == "embedded":
        import sqlite3

        with sqlite3.connect(store.path) as db:
            db.execute("DELETE FROM notices WHERE seq IN (SELECT seq FROM notices ORDER BY seq LIMIT ?)",
                       (count,))
        return
    import redis

    from arena.queue.keys import Keys
    from tests.queue.conftest import REDIS_URL

    client: Any = redis.Redis.from_url(REDIS_URL, decode_responses=True)
    try:
        key = Keys(store.prefix).notices
        for entry_id, _ in client.xrange(key, count=count):
            client.xdel(key, entry_id)
    finally:
        client.close()


def test_a_reader_that_missed_notices_is_told_so(store: Store) -> None:
    broker = store.open()
    cursor = broker.notice_cursor()
    for i in range(5):
        broker.publish_notice("tournament", f"t{i}")
    _lose_the_oldest(store, broker, 2)
    batch = broker.notices(cursor, 1.0)
    assert batch.gap  # so it re-reads what the notices are about
    assert [n.data for n in batch.notices] == ["t2", "t3", "t4"]
    assert not broker.notices(batch.cursor, 0.05).gap
