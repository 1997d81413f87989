"""Bot sessions: one long-lived stream per bot, requests answered by id.

A :class:`BotLink` outlives the streams of its bot: when a bot reconnects
within the grace period its new stream takes over the link, so the matches it
sits in go on. Nothing waits on a write: what the referee sends to a bot goes
into the link's outbox, and one writer task per stream drains it. Each time its
previous write completes, the writer takes everything pending and sends it as
few messages as it can: every pending action request in one
``ConnectResponse.action_requests`` (a lone one in ``action_request``), the
public events queued before them in front, the other messages (welcome, match
start and end, strikes, pongs, peers) in order (:func:`wire.encode_outbox`). An idle
writer woken by a message lets two passes of the event loop go by first, so
that the requests which the replies already read lead to go out with it. Public
events never wake the writer: they ride on the next message (see
``ConnectResponse.events``), or on a ``Flush`` at the end of each deal. The
messages are assembled from bytes serialized once (:mod:`arena.referee.wire`).
Replies resolve the futures of pending requests.

A bot that stops reading its stream fills the HTTP/2 window and the writer's
current write blocks: a watchdog (a timer per stream, every half second at
most) cuts a stream whose write has been blocked for more than
``write_timeout`` seconds, as if the bot had disconnected. As with the
requests' limits, the node's own stalls seen while requests are pending
(:mod:`arena.referee.deadlines`) do not count: a write that completed during a
stall of the node is not taken for a bot that stopped reading.

What a bot may send is bounded by what it was asked: a stream earns one
answer per request posted to it, beside its concurrency to start with, and
holds at most twice its concurrency (:meth:`BotLink.take_answers`); a ping
gets a pong only when none is already waiting to go out; the messages that
carry no answer and the streams a bot opens are rate-limited per bot
(:attr:`BotLink.idle_budget`, :attr:`BotLink.stream_budget`), across its
reconnections.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

from belote.arena.v1 import bot_service_pb2 as bpb
from belote.arena.v1 import game_pb2 as pb

from arena.edge.guard import TokenBucket
from arena.edge.quietlog import quiet
from arena.referee import wire
from arena.referee.deadlines import Deadlines, LoopStalls, Mark
from arena.referee.wire import FLUSH_MARK, OutboxItem, RequestBytes, encode_outbox

#: seconds a write to a bot's stream may block before the stream is cut (default)
WRITE_TIMEOUT = 10.0
#: the longest time between two looks of the watchdog at a stream's current write
WATCH_INTERVAL = 0.5
#: passes of the event loop an idle writer lets go by before it writes what was posted: the
#: requests that replies read in the meantime lead to join the same message (measured: one
#: pass saves a sixth of the messages, two a third, more no further)
COALESCE_PASSES = 2

#: messages without an answer (pings, empty messages, a second Hello) a bot may send: a second on
#: average, and at once (the SDK pings after 20 s of silence)
IDLE_MESSAGES_PER_S = 10.0
IDLE_MESSAGES_BURST = 100.0
#: streams a bot may open: a second on average, and at once (the SDK waits 0.1-0.2 s to reconnect)
STREAMS_PER_S = 1.0
STREAMS_BURST = 10.0


class BotDisconnected(Exception):
    """The bot's stream closed while a request was pending."""


#: writes one serialized ConnectResponse to the stream (the BotService handler's
#: response serializer passes bytes through; see :mod:`arena.referee.wire`)
Writer = Callable[[bytes], Awaitable[None]]


class BotLink:
    """A registered bot as the referee sees it: its current stream, if any."""

    def __init__(self, bot_id: str, name: str, write_timeout: float = WRITE_TIMEOUT,
                 bot_version: str = "", stalls: LoopStalls | None = None) -> None:
        self.bot_id = bot_id
        self.name = name
        #: the bot's own version this link plays ("": the streams that say none): a bot has a link a
        #: version it connected with (arena.referee.versions)
        self.bot_version = bot_version
        self.write_timeout = write_timeout
        self.version = ""
        #: its stream's Hello asked to play the ladder (read by a node with a queue: arena.node.ladder)
        self.ladder = False
        self.concurrency = 0
        self.seats_in_use = 0
        #: the digest of the token the current stream was opened with (a rotation or a revocation
        #: cuts the streams of the old token: see Node.enforce_registry)
        self.token_sha256 = ""
        #: the notices this link's current stream was told (kind and end): each once a stream
        self.notices_told: set[tuple[str, int]] = set()
        #: messages written to and read from this bot's streams (the writer and the reader count)
        self.messages_sent = 0
        self.messages_received = 0
        self._writer: Writer | None = None
        self._handler: asyncio.Task[Any] | None = None
        self._stream_id = 0
        self._pending: dict[int, asyncio.Future[int]] = {}
        #: what waits for the writer, in order: events, requests, messages, flush marks
        self._out: list[OutboxItem] = []
        #: something in the outbox other than events (the writer has work)
        self._ready = False
        #: set by whoever gives the idle writer work
        self._wakeup: asyncio.Future[None] | None = None
        self._write_task: asyncio.Task[None] | None = None
        #: the event loop of the current stream
        self._loop: asyncio.AbstractEventLoop | None = None
        #: when the writer's current write began (and the node's stalls by then); None when it is idle
        self._write_started: Mark | None = None
        #: the node's stalls, which a blocked write's time does not count
        self._stalls = stalls or LoopStalls()
        self._watchdog: asyncio.TimerHandle | None = None
        #: messages posted to this stream so far, and how many of them the writer has written
        self._posted = 0
        self._written = 0
        #: (posted count to reach, future) of the callers of drained()
        self._drain_waiters: list[tuple[int, asyncio.Future[None]]] = []
        #: answers the current stream may still send (earned by the requests posted to it)
        self.answer_credit = 0
        #: a pong is in the outbox, not yet written
        self._pong_queued = False
        #: what the bot's streams may send without an answer, and how often it may open one
        self.idle_budget = TokenBucket(IDLE_MESSAGES_PER_S, IDLE_MESSAGES_BURST)
        self.stream_budget = TokenBucket(STREAMS_PER_S, STREAMS_BURST)
        self.disconnected_at: float | None = time.monotonic()
        #: time.monotonic() when its current (or last) stream attached
        self.attached_at = 0.0
        self.connected_event = asyncio.Event()

    @property
    def connected(self) -> bool:
        return self._writer is not None

    @property
    def free_seats(self) -> int:
        return self.concurrency - self.seats_in_use if self.connected else 0

    def attach(
        self, writer: Writer, *, name: str, version: str, concurrency: int, token_sha256: str = "",
        ladder: bool = False,
    ) -> int:
        """A stream takes over this link; returns its stream id.

        A stream still attached is cut (its handler task cancelled) and its
        pending requests fail as if it had disconnected. The new stream's
        writer task and watchdog start here.
        """
        if self._writer is not None:
            self.cut(self._stream_id, "a new stream took over")
        loop = self._loop = asyncio.get_running_loop()
        self._handler = asyncio.current_task()
        self._writer = writer
        self._stream_id += 1
        self.notices_told.clear()  # a new stream (a bot restarted, perhaps) hears them again
        self.token_sha256 = token_sha256
        self.version = version
        self.ladder = ladder
        self.concurrency = max(1, concurrency)
        self.answer_credit = self.concurrency
        self._pong_queued = False
        self.disconnected_at = None
        self.attached_at = time.monotonic()
        self.connected_event.set()
        self._out = []
        self._ready = False
        self._write_started = None
        self._write_task = loop.create_task(self._write_loop(writer), name=f"writer-{self.name}")
        self._watchdog = loop.call_later(self._watch_interval(), self._watch, self._stream_id)
        return self._stream_id

    def detach(self, stream_id: int) -> None:
        """The stream ``stream_id`` ended: pending requests fail, what was not sent is dropped."""
        if stream_id != self._stream_id or self._writer is None:
            return
        self._writer = None
        self.disconnected_at = time.monotonic()
        self.connected_event.clear()
        self._out = []
        self._ready = False
        self._write_started = None
        self._wakeup = None
        self._written = self._posted  # what was not written is dropped
        waiters, self._drain_waiters = self._drain_waiters, []
        for _, waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)
        task, self._write_task = self._write_task, None
        if task is not None and task is not asyncio.current_task():
            task.cancel()
        if self._watchdog is not None:
            self._watchdog.cancel()
            self._watchdog = None
        pending, self._pending = self._pending, {}
        for fut in pending.values():
            if not fut.done():
                fut.set_exception(BotDisconnected())

    def cut(self, stream_id: int, why: str) -> None:
        """End stream ``stream_id`` from the referee's side."""
        if stream_id != self._stream_id:
            return
        handler = self._handler
        self.detach(stream_id)
        quiet.warning(("cut", self.bot_id, why), "cut the stream of bot %s: %s", self.name, why)
        if handler is not None and handler is not asyncio.current_task():
            handler.cancel()

    def disconnect(self, why: str) -> None:
        """End the current stream, if any, from the referee's side (a revoked bot)."""
        if self._writer is not None:
            self.cut(self._stream_id, why)

    # ---------------------------------------------------------------- outbox
    def queue_event(self, event: pb.PublicEvent | bytes) -> None:
        """A public event for this bot: it rides on the next message (it wakes no writer).

        ``event`` may come already serialized and framed (:func:`wire.event_field`),
        as the runner does once for all the links of a match.
        """
        if self._writer is not None:
            self._out.append(event if type(event) is bytes
                             else wire.event_field(event.SerializeToString()))  # type: ignore[union-attr]

    def post(self, msg: bpb.ConnectResponse) -> None:
        """Queue a message (not an action request: see :meth:`post_request`) for the writer."""
        if self._writer is not None:
            self._out.append(msg)
            self._posted += 1
            if not self._ready:
                self._wake()

    def post_request(self, request: bpb.ActionRequest | bytes) -> None:
        """Queue an action request (or its serialized bytes): it goes out with the others
        pending at the next write. The stream earns the right to one more answer."""
        if self._writer is not None:
            self._out.append(RequestBytes(
                request if isinstance(request, bytes) else request.SerializeToString()))
            self._posted += 1
            if self.answer_credit < 2 * self.concurrency:
                self.answer_credit += 1
            if not self._ready:
                self._wake()

    def post_pong(self, nonce: int) -> None:
        """Answer a ping, unless a pong is already waiting to go out (a ping flood gets one pong
        per write, not one each)."""
        if not self._pong_queued and self._writer is not None:
            self._pong_queued = True
            self.post(bpb.ConnectResponse(pong=bpb.Pong(nonce=nonce)))

    def take_answers(self, n: int) -> bool:
        """The stream sends ``n`` answers: False if that is more than it was asked for (its
        concurrency to start with, one more per request posted to it, at most twice its
        concurrency in hand), else they are counted."""
        if n > self.answer_credit:
            return False
        self.answer_credit -= n
        return True

    def flush(self) -> None:
        """Send the events queued so far even if no other message follows them soon."""
        if self._writer is not None and self._out:
            self._out.append(FLUSH_MARK)
            self._posted += 1
            if not self._ready:
                self._wake()

    async def drained(self) -> None:
        """Wait until what was posted so far is written (or the stream is gone).

        No longer than ``write_timeout`` and a watchdog interval: a stream whose
        write blocks that long is cut.
        """
        if self._writer is None or self._written >= self._posted:
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._drain_waiters.append((self._posted, waiter))
        await waiter

    def _wake(self) -> None:
        self._ready = True
        wakeup = self._wakeup
        if wakeup is not None:
            self._wakeup = None
            if not wakeup.done():
                wakeup.set_result(None)

    async def _write_loop(self, write: Writer) -> None:
        """The stream's only writer: drain the outbox, a write at a time, until cancelled."""
        loop = asyncio.get_running_loop()
        mark = self._stalls.mark
        try:
            while True:
                if not self._ready:
                    self._write_started = None
                    wakeup = self._wakeup = loop.create_future()
                    await wakeup
                    # two passes of the event loop (no timer): the replies already read and
                    # the runners they wake queue their requests too, and share this write
                    for _ in range(COALESCE_PASSES):
                        await asyncio.sleep(0)
                    continue
                msgs, self._out = encode_outbox(self._out)
                self._ready = self._pong_queued = False
                upto = self._posted
                for msg in msgs:
                    self._write_started = mark()
                    await write(msg)
                self.messages_sent += len(msgs)
                self._written = upto
                if self._drain_waiters:
                    self._wake_drained(upto)
        except asyncio.CancelledError:
            raise
        except Exception:  # the stream broke under us; its handler detaches it
            self._write_started = None
            return

    def _wake_drained(self, written: int) -> None:
        still = []
        for target, waiter in self._drain_waiters:
            if target > written:
                still.append((target, waiter))
            elif not waiter.done():
                waiter.set_result(None)
        self._drain_waiters = still

    def _watch_interval(self) -> float:
        return max(0.01, min(WATCH_INTERVAL, self.write_timeout))

    def _watch(self, stream_id: int) -> None:
        """Cut the stream if its current write has been blocked for more than ``write_timeout``."""
        if stream_id != self._stream_id or self._writer is None:
            return
        started = self._write_started
        if started is not None and self._stalls.since(started)[1] > self.write_timeout:
            self.cut(stream_id, "it stopped reading its stream")
            return
        assert self._loop is not None
        self._watchdog = self._loop.call_later(self._watch_interval(), self._watch, stream_id)

    # -------------------------------------------------------------- replies
    def expect(self, request_id: int) -> asyncio.Future[int]:
        # the stream's loop: asyncio.get_running_loop() costs a getpid() system call in 3.11
        fut: asyncio.Future[int] = (self._loop or asyncio.get_running_loop()).create_future()
        self._pending[request_id] = fut
        return fut

    def forget(self, request_id: int) -> None:
        self._pending.pop(request_id, None)

    def resolve(self, request_id: int, action: int) -> bool:
        """A reply arrived; False if nothing waits for it (late or unknown)."""
        fut = self._pending.pop(request_id, None)
        if fut is None or fut.done():
            return False
        fut.set_result(action)
        return True


class Hub:
    """Every bot link of this node, by bot id."""

    def __init__(self, write_timeout: float = WRITE_TIMEOUT) -> None:
        #: every link: a bot's streams that say no version, by bot id; a version's, by ``id@version``
        self.links: dict[str, BotLink] = {}
        #: the links of each bot (its unversioned one first, when it has one), by bot id
        self.by_bot: dict[str, list[BotLink]] = {}
        self.write_timeout = write_timeout
        self._next_request = 0
        self.deadlines = Deadlines()

    def link(self, bot_id: str, name: str, bot_version: str = "") -> BotLink:
        key = f"{bot_id}@{bot_version}" if bot_version else bot_id
        link = self.links.get(key)
        if link is None:
            link = self.links[key] = BotLink(bot_id, name, self.write_timeout, bot_version,
                                             self.deadlines.stalls)
            self.by_bot.setdefault(bot_id, []).append(link)
        return link

    def version_links(self, bot_id: str) -> list[BotLink]:
        return [link for link in self.by_bot.get(bot_id, ()) if link.bot_version]

    def drop(self, link: BotLink) -> None:
        """Forget a version's link (disconnected, no seat in use): a bot's links stay bounded."""
        self.links.pop(f"{link.bot_id}@{link.bot_version}", None)
        kept = [x for x in self.by_bot.get(link.bot_id, ()) if x is not link]
        self.by_bot[link.bot_id] = kept

    def next_request_id(self) -> int:
        self._next_request += 1
        return self._next_request

    @property
    def requests_sent(self) -> int:
        return self._next_request

    async def ask(
        self, link: BotLink, request: bpb.ActionRequest, timeout: float,
    ) -> int:
        """Send an action request and wait for its answer.

        Raises :class:`arena.referee.deadlines.BotTimeout` once ``timeout`` seconds of the node's
        running time have passed (its own stalls are not counted), and :class:`BotDisconnected` if
        the stream is or goes down.
        """
        return await self.ask_encoded(link, request.request_id, request.SerializeToString(), timeout)

    async def ask_encoded(self, link: BotLink, request_id: int, request: bytes, timeout: float) -> int:
        """:meth:`ask` with the request already serialized (``request_id`` is its id)."""
        if not link.connected:
            raise BotDisconnected()
        fut = link.expect(request_id)
        deadlines = self.deadlines
        key = deadlines.add(fut, timeout)
        try:
            link.post_request(request)
            return await fut
        finally:
            deadlines.remove(key)
            link.forget(request_id)

