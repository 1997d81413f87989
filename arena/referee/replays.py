"""Replays of finished matches: each view built once, off the loop, kept within a bound, read a few at a time.

Anyone may read a finished match (``WatchMatch``, the web's events and match
pages), and a 1,000-deal match is 49,000 public events: rebuilt for each read,
on the event loop, one reader looping stalled every match of the node. Here:

* **Built once, off the loop.** A view (:mod:`arena.referee.replay_views`) is
  built in the build process (:mod:`arena.referee.builds`) from the record's
  JSON text, read in a thread from the first of :attr:`Replays.sources` that
  has it (the node's store, then the queue's results). Readers who ask for a
  view being built wait for that one build (single flight), and a build whose
  readers all left before it began never runs. A match that ends on this node
  hands its events over (:meth:`Replays.hand_over`): they were serialized as
  they were published, and its WatchMatch view costs no build.
* **Kept within a bound.** :class:`PreparedCache` keeps views up to a number
  of bytes in all, dropping the least recently read first. A cache rather than
  views stored with the record: a view is a function of the record and of this
  code's formats, so a cache needs no migration when they change, costs no disk
  and no queue memory for the matches nobody reads, and the records already
  stored (or played on nodes of an older version) are served the same way. The
  bound holds whatever the number of matches; a view larger than the whole
  bound is served once and not kept.
* **Read a few at a time.** :class:`ReplayGate` bounds the replays running at
  once per address (an IPv6 one by its /64) and in all; one more is refused
  (held first, as the node's other refusals are, so that a client asking again
  at once slows down). A read
  sends prepared bytes, a bounded piece at a time, waiting for the reader.

The seal rules are the callers' (a duplicate leg is shown once its deals are
no longer in play): they check them before asking for a view, keyed by match id.
"""

from __future__ import annotations

import asyncio
import collections
import logging
from collections.abc import Awaitable, Callable, Hashable, Sequence
from typing import Any, Protocol, TypeVar

from arena.edge.guard import OpenCount, Tarpit, TokenBucket, host_key
from arena.edge.quietlog import quiet
from arena.engine import RecordError
from arena.referee.builds import Builder
from arena.referee.replay_views import RecordSource, WatchReplay
from arena.referee.store import UnreadableRecordError

__all__ = ["EVENTS", "FACTS", "MATCH", "RECORD", "WATCH", "Measured", "PreparedCache", "ReplayFull",
           "ReplayGate", "ReplaySlot", "Replays", "SendTimeout", "Source", "Stalled"]

log = logging.getLogger("arena.referee")


class Measured(Protocol):
    """A view that says what it costs to keep."""

    @property
    def nbytes(self) -> int: ...


_V = TypeVar("_V", bound=Measured)

#: where a finished match's record may be found: its source, or None (called in a thread)
Source = Callable[[str], RecordSource | None]

#: the views of a finished match
WATCH = "watch"
EVENTS = "events"
MATCH = "match"
RECORD = "record"
FACTS = "facts"


class NoRecord(Exception):
    """No source has the match's record."""


class _Flight:
    """One build under way, and how many readers wait for it."""

    __slots__ = ("task", "waiting")

    def __init__(self, task: asyncio.Task[Any]) -> None:
        self.task = task
        self.waiting = 0


class PreparedCache:
    """Prepared views by key, at most ``max_bytes`` in all (each value's ``nbytes``), the least
    recently read dropped first; a view is built once however many readers ask for it at once."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.nbytes = 0
        self._kept: collections.OrderedDict[Hashable, Any] = collections.OrderedDict()
        self._flights: dict[Hashable, _Flight] = {}

    def __len__(self) -> int:
        return len(self._kept)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._kept

    def get(self, key: Hashable) -> Any | None:
        value = self._kept.get(key)
        if value is not None:
            self._kept.move_to_end(key)
        return value

    def put(self, key: Hashable, value: Measured) -> None:
        """Keep ``value`` (dropping the least recently read until it fits); not kept if it is larger
        than the whole bound."""
        old = self._kept.pop(key, None)
        if old is not None:
            self.nbytes -= old.nbytes
        size = value.nbytes
        if size > self.max_bytes:
            return
        while self.nbytes + size > self.max_bytes:
            _, dropped = self._kept.popitem(last=False)
            self.nbytes -= dropped.nbytes
        self._kept[key] = value
        self.nbytes += size

    async def get_or_build(self, key: Hashable, build: Callable[[], Awaitable[_V]]) -> _V:
        """The view kept under ``key``, or the one ``build()`` makes: one build for all the readers
        asking at once; its error, if it fails, goes to each of them and nothing is kept. A build
        whose readers have all left before it finished is cancelled."""
        kept: _V | None = self.get(key)
        if kept is not None:
            return kept
        flight = self._flights.get(key)
        if flight is None:
            flight = self._flights[key] = _Flight(asyncio.ensure_future(self._build(key, build)))
            flight.task.add_done_callback(_retrieved)
        flight.waiting += 1
        try:
            built: _V = await asyncio.shield(flight.task)
            return built
        finally:
            flight.waiting -= 1
            if flight.waiting == 0 and not flight.task.done():
                flight.task.cancel()  # nobody wants it now (a build already running ends unread)

    async def _build(self, key: Hashable, build: Callable[[], Awaitable[_V]]) -> _V:
        try:
            value = await build()
            self.put(key, value)
            return value
        finally:
            self._flights.pop(key, None)


def _retrieved(task: asyncio.Task[Any]) -> None:
    """A build's error was given to its readers (or they left): it is not 'never retrieved'."""
    if not task.cancelled():
        task.exception()


class Budget:
    """What the node's replays may send in all, ``rate`` units a second on average (a second's worth
    at once; None: no bound): the share of the event loop that readers of finished matches may take,
    however many they are."""

    def __init__(self, rate: float | None) -> None:
        self._bucket = None if rate is None else TokenBucket(rate, rate)

    async def spend(self, n: float) -> None:
        """Wait until ``n`` units may go (a second's worth at most at a time)."""
        bucket = self._bucket
        if bucket is None:
            return
        n = min(n, bucket.burst)
        while not bucket.take(n):
            await asyncio.sleep(bucket.wait(n))


class ReplaySlot:
    """A place among the replays running at once, and the pace they share; :meth:`close` gives the
    place back (once)."""

    __slots__ = ("_gate", "_key")

    def __init__(self, gate: ReplayGate, key: str) -> None:
        self._gate: ReplayGate | None = gate
        self._key = key

    async def send(self, nbytes: int) -> None:
        """Wait until ``nbytes`` of a prepared answer may go (the web's)."""
        if self._gate is not None:
            await self._gate.bytes.spend(nbytes)

    async def send_messages(self, count: int) -> None:
        """Wait until ``count`` messages of a replay may go (gRPC's: each costs the loop the same,
        whatever its size)."""
        if self._gate is not None:
            await self._gate.messages.spend(count)

    def close(self) -> None:
        gate, self._gate = self._gate, None
        if gate is not None:
            gate.leave(self._key)

    def __enter__(self) -> ReplaySlot:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Stalled(Exception):
    """A reader took nothing of what it was sent for the send timeout: it is cut."""


class SendTimeout:
    """Each send to a reader (:meth:`send`) waits for it ``seconds`` at most; past them,
    :class:`Stalled`, and the caller cuts the reader (its place, a replay's or a spectator's, is
    free again).

    Neither grpc's server streams nor aiohttp's writes have a timeout of their
    own: a send waits on the reader's flow-control window or the socket's
    buffer, and a reader that stopped reading (or announced a window of a few
    bytes) held its send, and its place, as long as its connection lived. The
    time between sends (the replays' pace, a live match's next event) does not
    count. One timer for all the sends of a reader, re-armed when it finds the
    send under way younger than ``seconds``, so that a send costs a clock read
    (a timer per send would cost one each); the timer interrupts a send by
    cancelling the sending task, which :meth:`send` turns into :class:`Stalled`.
    """

    __slots__ = ("_loop", "_since", "_task", "_timer", "expired", "seconds")

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.expired = False
        self._loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None, "a send timeout is for a task's sends"
        self._task = task
        self._since: float | None = None
        self._timer: asyncio.TimerHandle | None = None

    async def send(self, write: Awaitable[None]) -> None:
        """Await ``write``; :class:`Stalled` if it waits ``seconds`` for the reader."""
        self._since = self._loop.time()
        if self._timer is None:
            self._timer = self._loop.call_later(self.seconds, self._check)
        try:
            await write
        except asyncio.CancelledError:
            if self.expired and self._task.uncancel() == 0:  # ours, not the caller's leaving
                raise Stalled(self._why()) from None
            raise
        finally:
            self._since = None
        if self.expired:  # the timer fired as the write ended: its cancel is still to come
            try:
                await asyncio.sleep(0)
            except asyncio.CancelledError:
                if self._task.uncancel() > 0:
                    raise
            raise Stalled(self._why())

    def _why(self) -> str:
        return f"the reader took nothing of what it was sent for {self.seconds:g} s"

    def _check(self) -> None:
        self._timer = None
        since = self._since
        if since is None:
            return  # between sends: the next one arms the timer again
        waited = self._loop.time() - since
        if waited < self.seconds:
            self._timer = self._loop.call_later(self.seconds - waited, self._check)
            return
        self.expired = True
        self._task.cancel()

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def __enter__(self) -> SendTimeout:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class ReplayFull(Exception):
    """Too many replays at once, from the caller's address or in all: retry later."""


class ReplayGate:
    """The replays running at once, per address and in all; one more is refused, once ``tarpit``
    has held it (none: at once). What they send, together, goes at ``bytes_per_s`` (the web's
    answers) and ``messages_per_s`` (gRPC's), a second's worth at once (None: unpaced)."""

    def __init__(self, per_address: int, total: int, tarpit: Tarpit | None = None, *,
                 bytes_per_s: float | None = None, messages_per_s: float | None = None) -> None:
        self.bytes = Budget(bytes_per_s)
        self.messages = Budget(messages_per_s)
        self._open = OpenCount(
            per_address, total,
            per_key_full="{limit} replays of finished matches are running for {key}, the limit per "
                          "address; retry once one is over",
            total_full="the node is running its limit of {limit} replays of finished matches; retry later")
        self._tarpit = tarpit

    @property
    def running(self) -> int:
        return self._open.open_calls

    async def enter(self, address: str) -> ReplaySlot:
        """A place for a replay read from ``address``; :class:`ReplayFull` if there is none."""
        key = host_key(address)
        full = self._open.open(key)
        if full is not None:
            quiet.warning("replays", "refused a replay to %s: %s", key, full)
            if self._tarpit is not None:
                await self._tarpit.hold_key(key)
            raise ReplayFull(full)
        return ReplaySlot(self, key)

    def leave(self, key: str) -> None:
        self._open.close(key)


class Replays:
    """A node's replays of finished matches: where records are found, the views kept, the gate."""

    def __init__(self, sources: Sequence[Source], *, max_bytes: int, per_address: int, total: int,
                 bytes_per_s: float | None = None, messages_per_s: float | None = None,
                 builds_at_once: int = 1, tarpit: Tarpit | None = None) -> None:
        #: looked up in order, in a thread; the node of a queue adds the queue's results
        self.sources = list(sources)
        self.cache = PreparedCache(max_bytes)
        self.gate = ReplayGate(per_address, total, tarpit, bytes_per_s=bytes_per_s,
                               messages_per_s=messages_per_s)
        self.builder = Builder(builds_at_once)

    async def source(self, match_id: str) -> RecordSource | None:
        """The record of ``match_id`` from the first source that has it (read in a thread)."""
        def find() -> RecordSource | None:
            for source in self.sources:
                found = source(match_id)
                if found is not None:
                    return found
            return None

        return await asyncio.to_thread(find)

    async def view(self, match_id: str, kind: str,
                   build: Callable[[RecordSource], tuple[_V, str]]) -> _V | None:
        """The ``kind`` view of a finished match (``build`` makes it from the record in the build
        process), kept, or built once; None if no source has the match's record.
        :class:`UnreadableRecordError` for a record that is not one, :class:`BuildFailed` if the
        build process stopped."""
        async def make() -> _V:
            source = await self.source(match_id)
            if source is None:
                raise NoRecord(match_id)
            try:
                value, error = await self.builder.run(build, source)
            except RecordError as e:  # not a record at all: nothing to show
                raise UnreadableRecordError(f"the record of match {match_id} is damaged: {e}") from None
            if error:
                log.error("match %s: %s", match_id, error)
            return value

        try:
            return await self.cache.get_or_build((match_id, kind), make)
        except NoRecord:
            return None

    def watch_view(self, match_id: str) -> WatchReplay | None:
        """The WatchMatch view of ``match_id`` if it is kept (None: :meth:`view` builds it)."""
        found: WatchReplay | None = self.cache.get((match_id, WATCH))
        return found

    def hand_over(self, match_id: str, events: Sequence[bytes], result: bytes) -> None:
        """A match that ended here: its events, serialized as they were published, and its result
        (serialized) are its WatchMatch view, kept without a build."""
        self.cache.put((match_id, WATCH), WatchReplay(events, result))

    def close(self) -> None:
        self.builder.close()
