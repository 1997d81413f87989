"""Bot sessions: one long-lived stream per bot, requests answered by id.

A :class:`BotLink` outlives the streams of its bot: when a bot reconnects
within the grace period its new stream takes over the link, so the matches it
sits in go on. Writes to a stream are serialized by a lock; replies resolve the
futures of pending requests. Public events are buffered per link and ride on
the next message to it (see ``ConnectResponse.events``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from belote.arena.v1 import bot_service_pb2 as bpb
from belote.arena.v1 import game_pb2 as pb

#: the code a bot sends when it has no action (the SDK after an error in act)
NO_ACTION = 0xFFFFFFFF
#: seconds a write to a bot's stream may block before the stream is cut (default)
WRITE_TIMEOUT = 10.0

log = logging.getLogger("arena.referee")


class BotDisconnected(Exception):
    """The bot's stream closed while a request was pending."""


class BotTimeout(Exception):
    """The bot did not answer in time."""


Writer = Callable[[bpb.ConnectResponse], Awaitable[None]]


class BotLink:
    """A registered bot as the referee sees it: its current stream, if any."""

    def __init__(self, bot_id: str, name: str, write_timeout: float = WRITE_TIMEOUT) -> None:
        self.bot_id = bot_id
        self.name = name
        self.write_timeout = write_timeout
        self.version = ""
        self.concurrency = 0
        self.seats_in_use = 0
        self._writer: Writer | None = None
        self._handler: asyncio.Task[Any] | None = None
        self._stream_id = 0
        self._lock = asyncio.Lock()
        self._pending: dict[int, asyncio.Future[int]] = {}
        self._events: list[pb.PublicEvent] = []
        self.disconnected_at: float | None = time.monotonic()
        self.connected_event = asyncio.Event()

    @property
    def connected(self) -> bool:
        return self._writer is not None

    @property
    def free_seats(self) -> int:
        return self.concurrency - self.seats_in_use if self.connected else 0

    def attach(self, writer: Writer, *, name: str, version: str, concurrency: int) -> int:
        """A stream takes over this link; returns its stream id.

        A stream still attached is cut (its handler task cancelled) and its
        pending requests fail as if it had disconnected.
        """
        if self._writer is not None:
            self.cut(self._stream_id, "a new stream took over")
        self._handler = asyncio.current_task()
        self._writer = writer
        self._stream_id += 1
        self.version = version
        self.concurrency = max(1, concurrency)
        self.disconnected_at = None
        self.connected_event.set()
        return self._stream_id

    def detach(self, stream_id: int) -> None:
        """The stream ``stream_id`` ended: pending requests fail, events are dropped."""
        if stream_id != self._stream_id or self._writer is None:
            return
        self._writer = None
        self.disconnected_at = time.monotonic()
        self.connected_event.clear()
        self._events.clear()
        pending, self._pending = self._pending, {}
        for fut in pending.values():
            if not fut.done():
                fut.set_exception(BotDisconnected())

    def queue_event(self, event: pb.PublicEvent) -> None:
        if self._writer is not None:
            self._events.append(event)

    async def send(self, msg: bpb.ConnectResponse) -> None:
        """Write a message with the buffered events in front of it.

        A bot that stops reading its stream fills the HTTP/2 window and the
        write blocks: after ``write_timeout`` seconds the stream is cut, as if
        the bot had disconnected, so no match ever hangs on it.
        """
        writer = self._writer
        if writer is None:
            return
        stream_id = self._stream_id
        try:
            async with asyncio.timeout(self.write_timeout), self._lock:
                if self._writer is not writer:
                    return
                if self._events:
                    msg.events.extend(self._events)
                    self._events.clear()
                await writer(msg)
        except TimeoutError:
            self.cut(stream_id, "it stopped reading its stream")
        except Exception:  # the stream broke under us; its handler detaches it
            return

    def cut(self, stream_id: int, why: str) -> None:
        """End stream ``stream_id`` from the referee's side."""
        if stream_id != self._stream_id:
            return
        handler = self._handler
        self.detach(stream_id)
        log.warning("cut the stream of bot %s: %s", self.name, why)
        if handler is not None and handler is not asyncio.current_task():
            handler.cancel()

    async def flush(self) -> None:
        if self._events and self._writer is not None:
            await self.send(bpb.ConnectResponse(flush=bpb.Flush()))

    def expect(self, request_id: int) -> asyncio.Future[int]:
        fut: asyncio.Future[int] = asyncio.get_running_loop().create_future()
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
        self.links: dict[str, BotLink] = {}
        self.write_timeout = write_timeout
        self._next_request = 0

    def link(self, bot_id: str, name: str) -> BotLink:
        link = self.links.get(bot_id)
        if link is None:
            link = self.links[bot_id] = BotLink(bot_id, name, self.write_timeout)
        return link

    def next_request_id(self) -> int:
        self._next_request += 1
        return self._next_request

    async def ask(
        self, link: BotLink, request: bpb.ActionRequest, timeout: float,
    ) -> int:
        """Send an action request and wait for its answer.

        Raises :class:`BotTimeout` after ``timeout`` seconds and
        :class:`BotDisconnected` if the stream is or goes down.
        """
        if not link.connected:
            raise BotDisconnected()
        rid = request.request_id
        fut = link.expect(rid)
        loop = asyncio.get_running_loop()
        handle = loop.call_later(timeout, _expire, fut)
        try:
            await link.send(bpb.ConnectResponse(action_request=request))
            return await fut
        finally:
            handle.cancel()
            link.forget(rid)

    def describe(self) -> list[dict[str, Any]]:
        return [
            {"bot_id": b.bot_id, "name": b.name, "connected": b.connected,
             "concurrency": b.concurrency, "seats_in_use": b.seats_in_use}
            for b in self.links.values()
        ]


def _expire(fut: asyncio.Future[int]) -> None:
    if not fut.done():
        fut.set_exception(BotTimeout())
