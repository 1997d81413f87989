"""A node's reader of the broker's notices: one thread, for the node's whole life.

Nodes tell each other what changed through the broker's notices
(:mod:`arena.queue.broker`, "Notices"). Each node runs one
:class:`NoticeWatcher`: a thread of its own (never the event loop: reading
blocks on the broker, and a slow or paused Redis must not hold the loop) that
reads the notices in order and hands each kind to its handlers, in that
thread. A handler may call the broker; what it changes for the loop it posts
there (``loop.call_soon_threadsafe``).

- At start, and whenever some notices may have been missed (the reader fell
  more than the store keeps behind, or the store lost its data), the *gap*
  handlers run: they re-read everything the notices are about.
- About once a second the reader checks that the store still holds the
  arena's data; if it lost it, the *lost* handlers run, once, and the gap
  handlers no longer do (a node does not take an empty store for the truth:
  it says the data is lost until it is restarted).
- :meth:`NoticeWatcher.caught_up` waits, on the loop, until a whole round of
  reading has begun and ended since the call: whatever was published before
  the call has then been handled.

A notice published on Redis reaches every node's handlers within a few
milliseconds while Redis answers (a blocking read wakes at once); on the
embedded queue, the nodes of the same process at once and those of other
processes within :data:`~arena.queue.embedded.NOTICE_POLL_S`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from arena.edge.quietlog import RateLimit
from arena.queue import Broker, BrokerDataLost, BrokerError, NoticeBatch

log = logging.getLogger("arena.node")

#: how long one read waits for a notice (seconds): the idle round, what caught_up may wait for
BLOCK_S = 0.25
#: how often the reader checks that the store still holds the arena's data (seconds)
CHECK_EVERY_S = 1.0
#: the longest pause after the broker failed, before reading again (seconds)
MAX_BACKOFF_S = 2.0
#: how long caught_up waits at most (seconds): a paused or unreachable store must not hold a call
CATCH_UP_S = 2.0

Handler = Callable[[list[str]], None]


class NoticeWatcher:
    """Reads the broker's notices in a thread of its own and runs each kind's handlers there."""

    def __init__(self, broker: Broker, *, block_s: float = BLOCK_S, check_every_s: float = CHECK_EVERY_S,
                 name: str = "notices") -> None:
        self.broker = broker
        self.block_s = block_s
        self.check_every_s = check_every_s
        self.name = name
        self._handlers: dict[str, list[Handler]] = {}
        self._gap: list[Callable[[], None]] = []
        self._lost: list[Callable[[BrokerError], None]] = []
        self._cursor = ""
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        #: rounds begun and ended (a round: one read and its handlers)
        self._begun = 0
        self._waiters: list[tuple[int, asyncio.Future[None]]] = []
        self._resync = False
        self.lost: BrokerError | None = None
        self._quiet = RateLimit()  # this thread's own (the loop's quiet log is the loop's)

    # ----------------------------------------------------------------- set up
    def on(self, kind: str, handler: Handler) -> None:
        """``handler(data)`` with the data of the notices of ``kind`` a read brought, in order."""
        self._handlers.setdefault(kind, []).append(handler)

    def on_gap(self, handler: Callable[[], None]) -> None:
        """``handler()`` at start and whenever notices may have been missed: re-read everything."""
        self._gap.append(handler)

    def on_lost(self, handler: Callable[[BrokerError], None]) -> None:
        """``handler(error)`` once, when the store is found to have lost the arena's data."""
        self._lost.append(handler)

    async def start(self) -> None:
        """Read where the notices are now and run the gap handlers (in a thread), then start reading.
        Raises :class:`~arena.queue.BrokerError` if the broker cannot be read."""
        self._loop = asyncio.get_running_loop()
        await asyncio.to_thread(self._begin)
        self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
        self._thread.start()

    def _begin(self) -> None:
        self._cursor = self.broker.notice_cursor()  # first: a change after it is read again below
        self._reread()

    async def stop(self) -> None:
        self._stop.set()
        thread, self._thread = self._thread, None
        if thread is not None:
            await asyncio.to_thread(thread.join, 5.0)
        for _, waiter in self._waiters:
            if not waiter.done():
                waiter.set_result(None)
        self._waiters = []

    async def caught_up(self, timeout: float = CATCH_UP_S) -> None:
        """Wait (at most ``timeout`` seconds) until a round of reading begun after this call is over:
        every notice published before the call has then been handled."""
        if self._thread is None or self._loop is None:
            return
        waiter = self._loop.create_future()
        self._waiters.append((self._begun + 1, waiter))
        try:
            await asyncio.wait_for(waiter, timeout)
        except TimeoutError:
            with contextlib.suppress(ValueError):
                self._waiters.remove(next(w for w in self._waiters if w[1] is waiter))

    def _round_over(self, number: int) -> None:
        """On the loop: round ``number`` is over; wake who waited for it."""
        kept = []
        for target, waiter in self._waiters:
            if target <= number:
                if not waiter.done():
                    waiter.set_result(None)
            else:
                kept.append((target, waiter))
        self._waiters = kept

    # ----------------------------------------------------------------- the thread
    def _run(self) -> None:
        backoff = 0.0
        next_check = time.monotonic() + self.check_every_s
        while not self._stop.is_set():
            self._begun += 1
            number = self._begun
            try:
                if self._resync:
                    self._reread()
                batch = self.broker.notices(self._cursor, self.block_s)
                self._handle(batch)
                if time.monotonic() >= next_check:
                    next_check = time.monotonic() + self.check_every_s
                    self._check()
                backoff = 0.0
            except BrokerError as e:
                self._warn("broker", "reading the nodes' notices failed: %s (retrying)", e)
                self._resync = True  # what was missed meanwhile is read again
                backoff = min(MAX_BACKOFF_S, max(0.1, backoff * 2))
                self._stop.wait(backoff)
            except Exception as e:  # a handler's bug must not end the reader (nor log a traceback)
                self._warn(("handler", type(e).__name__), "a notice handler failed: %s: %s (re-reading)",
                           type(e).__name__, e)
                self._resync = True
                self._stop.wait(0.5)
            loop = self._loop
            if loop is not None:
                with contextlib.suppress(RuntimeError):  # the loop is closed: the node is gone
                    loop.call_soon_threadsafe(self._round_over, number)

    def _handle(self, batch: NoticeBatch) -> None:
        self._cursor = batch.cursor
        if batch.gap:
            self._reread()
            return
        by_kind: dict[str, list[str]] = {}
        for notice in batch.notices:
            by_kind.setdefault(notice.kind, []).append(notice.data)
        for kind, data in by_kind.items():
            for handler in self._handlers.get(kind, ()):
                handler(data)

    def _check(self) -> None:
        try:
            self.broker.check_data()
        except BrokerDataLost as e:
            self._found_lost(e)

    def _reread(self) -> None:
        """The gap handlers, unless the store lost the arena's data (then the lost ones, once)."""
        self._resync = True
        try:
            self.broker.check_data()
        except BrokerDataLost as e:
            self._found_lost(e)
            self._resync = False
            return
        for handler in self._gap:
            handler()
        self._resync = False

    def _found_lost(self, error: BrokerDataLost) -> None:
        if self.lost is not None:
            return
        self.lost = error
        log.error("%s", error, extra={"event": "data_lost"})
        for handler in self._lost:
            handler(error)

    def _warn(self, key: Any, message: str, *args: object) -> None:
        held = self._quiet.admit(key)
        if held is not None:
            log.warning(message + (f" ({held} more since)" if held else ""), *args)
