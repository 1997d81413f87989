"""Connect a bot to a referee node and answer its requests: :func:`run`, :func:`run_async`.

One bidirectional ``BotService.Connect`` stream carries everything: the bot's
Hello (token, name, version, concurrency), then the referee's action requests
for every seat the bot plays, interleaved, each answered by request id as soon
as ``act`` returns. Requests come one per message or several in one (a
batch); the answers ready at the same moment go out together in one message.
A dropped stream or an unreachable node is retried with exponential backoff
and jitter (0.2 s doubling to 30 s); a refused token stops for good with
:class:`AuthenticationError`. The logger is ``logging.getLogger("belote_bot")``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import random
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import grpc
import grpc.aio
from belote.arena.v1 import bot_service_pb2 as bs
from belote.arena.v1 import bot_service_pb2_grpc

from belote_bot.bot import ActResult, Bot
from belote_bot.events import MatchInfo, MatchResult, Strike, event_from_proto
from belote_bot.types import INVALID_ACTION, Action, Observation, legal_texts

__all__ = [
    "DEFAULT_ADDRESS",
    "SDK_VERSION",
    "AuthenticationError",
    "BotError",
    "Client",
    "IllegalAnswerError",
    "backoff_delay",
    "run",
    "run_async",
]

log = logging.getLogger("belote_bot")

SDK_VERSION = "0.1.0"
DEFAULT_ADDRESS = "localhost:50051"
TOKEN_ENV = "BELOTE_TOKEN"
INITIAL_BACKOFF = 0.2
MAX_BACKOFF = 30.0

StopEvent = asyncio.Event | threading.Event
_T = TypeVar("_T")
_M = TypeVar("_M")


class BotError(Exception):
    """Base class of the SDK's errors."""


class AuthenticationError(BotError):
    """The referee refused the token (UNAUTHENTICATED): the client stops for good."""


class IllegalAnswerError(BotError, ValueError):
    """``act`` returned something that is not one of the legal actions."""


def backoff_delay(attempt: int, rng: random.Random) -> float:
    """Seconds to wait before reconnection ``attempt`` (0, 1, ...): 0.2 s doubling to 30 s, jittered.

    The jitter draws from the upper half of the step, so many bots dropped at
    once do not come back at once, and a delay never exceeds 30 s.
    """
    step = min(MAX_BACKOFF, INITIAL_BACKOFF * 2.0 ** min(attempt, 16))
    return step * rng.uniform(0.5, 1.0)


async def _wait_stop(stop: StopEvent) -> None:
    if isinstance(stop, asyncio.Event):
        await stop.wait()
        return
    while not stop.is_set():
        await asyncio.sleep(0.05)


def _reply(request_id: int, code: int) -> bs.ActionReply:
    return bs.ActionReply(request_id=request_id, action=code)


#: what waits to be written: whole messages (Hello, Ping) and answers, batched when written
_Outgoing = bs.ConnectRequest | bs.ActionReply


def _messages(items: list[_Outgoing]) -> list[bs.ConnectRequest]:
    """The messages that carry ``items``, in order: consecutive answers share one message."""
    out: list[bs.ConnectRequest] = []
    replies: list[bs.ActionReply] = []
    for item in items:
        if isinstance(item, bs.ActionReply):
            replies.append(item)
            continue
        if replies:
            out.append(_answers(replies))
            replies = []
        out.append(item)
    if replies:
        out.append(_answers(replies))
    return out


def _answers(replies: list[bs.ActionReply]) -> bs.ConnectRequest:
    if len(replies) == 1:
        return bs.ConnectRequest(action_reply=replies[0])
    return bs.ConnectRequest(action_replies=replies)


class _SessionEnd(Exception):
    """Why a stream ended (internal)."""


class Client:
    """One bot's connection to one referee node, reconnecting until stopped.

    :func:`run_async` is ``Client(...).run(stop)``. What the node said in its
    Welcome is kept: :attr:`bot_id`, :attr:`node_id`, :attr:`peer_addresses`
    (the other nodes, for multi-node work to come).
    """

    def __init__(
        self, bot: Bot, address: str = DEFAULT_ADDRESS, token: str | None = None, concurrency: int = 4,
        *, name: str | None = None, credentials: grpc.ChannelCredentials | None = None,
        ping_interval: float = 20.0, silence_timeout: float = 65.0, rng: random.Random | None = None,
    ) -> None:
        if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
            raise ValueError(
                f"concurrency is how many seats are played at once (at least 1), not {concurrency!r}"
            )
        self.bot = bot
        self.address = address
        self.token = os.environ.get(TOKEN_ENV, "") if token is None else token
        self.concurrency = concurrency
        self.name = name or bot.name or type(bot).__name__
        self.version = bot.version or f"belote_bot/{SDK_VERSION}"
        self.credentials = credentials
        self.ping_interval = ping_interval
        self.silence_timeout = silence_timeout
        self.rng = rng or random.Random()
        self.bot_id = ""
        self.node_id = ""
        self.peer_addresses: tuple[str, ...] = ()
        #: called with the other nodes' addresses on Welcome and when they change
        self.on_peers: Callable[[tuple[str, ...]], None] | None = None
        self.welcome: bs.Welcome | None = None
        self._welcomed = False
        self._last_received = 0.0
        self._outbox: asyncio.Queue[_Outgoing] = asyncio.Queue()
        self._act_tasks: set[asyncio.Task[None]] = set()

    # ------------------------------------------------------------- the loop
    async def run(self, stop: StopEvent | None = None) -> None:
        """Connect, answer, reconnect, until ``stop`` is set (or the task is cancelled).

        Raises :class:`AuthenticationError` if the referee refuses the token.
        """
        stop_task = asyncio.ensure_future(_wait_stop(stop)) if stop is not None else None
        session: asyncio.Task[str] | None = None
        attempt = 0
        try:
            while True:
                session = asyncio.ensure_future(self._session())
                waiting: set[asyncio.Future[Any]] = {session}
                if stop_task is not None:
                    waiting.add(stop_task)
                await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
                if not session.done():
                    log.info("stopping")
                    return
                reason = session.result()  # AuthenticationError propagates
                if self._welcomed:
                    attempt = 0
                delay = backoff_delay(attempt, self.rng)
                attempt += 1
                log.warning("%s; reconnecting to %s in %.1f s", reason, self.address, delay)
                if stop_task is None:
                    await asyncio.sleep(delay)
                else:
                    done, _ = await asyncio.wait({stop_task}, timeout=delay)
                    if done:
                        log.info("stopping")
                        return
        finally:
            for task in (session, stop_task):
                if task is not None and not task.done():
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError, Exception):
                        await task

    def _metadata(self) -> tuple[tuple[str, str], ...]:
        return (("authorization", f"Bearer {self.token}"),) if self.token else ()

    def _channel(self) -> grpc.aio.Channel:
        if self.credentials is not None:
            return grpc.aio.secure_channel(self.address, self.credentials)
        return grpc.aio.insecure_channel(self.address)

    async def _session(self) -> str:
        """One stream from Hello to its end; returns why it ended."""
        self._welcomed = False
        self._outbox = asyncio.Queue()
        self._last_received = time.monotonic()
        channel = self._channel()
        helpers: list[asyncio.Task[None]] = []
        try:
            stub = bot_service_pb2_grpc.BotServiceStub(channel)
            call = stub.Connect(metadata=self._metadata())
            self._outbox.put_nowait(bs.ConnectRequest(hello=bs.Hello(
                token=self.token, name=self.name, version=self.version, concurrency=self.concurrency,
            )))
            reader = asyncio.ensure_future(self._read(call))
            writer = asyncio.ensure_future(self._write(call))
            helpers = [reader, writer]
            if self.ping_interval > 0:
                helpers.append(asyncio.ensure_future(self._keepalive()))
            done, _ = await asyncio.wait(helpers, return_when=asyncio.FIRST_COMPLETED)
            return await self._why_ended(call, reader, writer, done)
        finally:
            tasks = [*helpers, *self._act_tasks]
            for task in tasks:
                task.cancel()
            if self._act_tasks:
                log.info("dropping %d unanswered requests of the lost stream", len(self._act_tasks))
            await asyncio.gather(*tasks, return_exceptions=True)
            self._act_tasks.clear()
            await channel.close(grace=None)

    async def _why_ended(
        self, call: grpc.aio.StreamStreamCall[bs.ConnectRequest, bs.ConnectResponse],
        reader: asyncio.Task[None], writer: asyncio.Task[None], done: set[asyncio.Task[None]],
    ) -> str:
        code: grpc.StatusCode | None = None
        details = ""
        for task in done:
            if task.cancelled():
                continue
            exc = task.exception()
            if isinstance(exc, _SessionEnd):
                call.cancel()
                return str(exc)
            if isinstance(exc, grpc.aio.AioRpcError):
                code, details = exc.code(), exc.details() or ""
            elif exc is not None and not isinstance(exc, asyncio.InvalidStateError):
                log.error("the connection failed", exc_info=exc)
                call.cancel()
                return f"internal error ({exc!r})"
        if code is None:
            if reader in done and not reader.cancelled() and reader.exception() is None:
                code, details = grpc.StatusCode.OK, ""
            else:
                if not call.done():
                    call.cancel()
                code, details = await call.code(), await call.details() or ""
        if code == grpc.StatusCode.UNAUTHENTICATED:
            hint = "" if self.token else f" (no token was given: pass token= or set {TOKEN_ENV})"
            raise AuthenticationError(f"the referee at {self.address} refused the token: {details}{hint}")
        if code == grpc.StatusCode.OK:
            return "the referee closed the stream"
        if self._welcomed:
            return f"lost the stream ({code.name}: {details})"
        if code == grpc.StatusCode.UNAVAILABLE:
            return f"cannot reach the referee at {self.address} ({code.name}: {details})"
        return f"the referee at {self.address} refused the stream ({code.name}: {details})"

    async def _write(self, call: grpc.aio.StreamStreamCall[bs.ConnectRequest, bs.ConnectResponse]) -> None:
        """Write what is queued; the answers pending at each write go out in one message."""
        outbox = self._outbox
        while True:
            items = [await outbox.get()]
            await asyncio.sleep(0)  # one pass of the loop: the answers already due join this write
            while not outbox.empty():
                items.append(outbox.get_nowait())
            for message in _messages(items):
                await call.write(message)

    async def _keepalive(self) -> None:
        """Ping when the stream is quiet; give up on a referee silent for ``silence_timeout``."""
        nonce = 0
        while True:
            await asyncio.sleep(self.ping_interval)
            quiet = time.monotonic() - self._last_received
            if quiet >= self.silence_timeout:
                raise _SessionEnd(f"no message from the referee for {quiet:.0f} s")
            if quiet >= self.ping_interval:
                nonce += 1
                self._outbox.put_nowait(bs.ConnectRequest(ping=bs.Ping(nonce=nonce)))

    async def _read(self, call: grpc.aio.StreamStreamCall[bs.ConnectRequest, bs.ConnectResponse]) -> None:
        while True:
            message = await call.read()
            if not isinstance(message, bs.ConnectResponse):  # grpc.aio.EOF: the referee closed the stream
                return
            self._last_received = time.monotonic()
            await self.handle(message)

    # ------------------------------------------------------------ messages
    async def handle(self, message: bs.ConnectResponse) -> None:
        """Deliver one message from the referee: its events first, then its main part, then
        its batch of action requests (``action_requests``), in order."""
        for event in message.events:
            await self._hook("on_event", self.bot.on_event, event_from_proto, event)
        kind = message.WhichOneof("message")
        if kind == "action_request":
            self._request(message.action_request)
        elif kind == "welcome":
            self._welcome(message.welcome)
        elif kind == "match_started":
            m = message.match_started
            log.info("match %s started: seat %d, players %s", m.match_id, m.seat, ", ".join(m.players))
            await self._hook("on_match_start", self.bot.on_match_start, MatchInfo.from_proto, m)
        elif kind == "match_ended":
            e = message.match_ended
            r = e.result
            log.info("match %s ended for seat %d: %s %s%s", e.match_id, e.seat, r.reason,
                     "-".join(map(str, r.totals)), f" ({r.detail})" if r.detail else "")
            await self._hook("on_match_end", self.bot.on_match_end, MatchResult.from_proto, e)
        elif kind == "strike":
            s = message.strike
            log.warning("strike %d of %d in match %s, seat %d, request %d: %s (fallback %s played)",
                        s.strikes, s.max_strikes, s.match_id, s.seat, s.request_id, s.reason,
                        _text(s.fallback_action))
            await self._hook("on_strike", self.bot.on_strike, Strike.from_proto, s)
        elif kind == "peers":
            self._peers(tuple(message.peers.addresses))
        for request in message.action_requests:
            self._request(request)

    def _peers(self, addresses: tuple[str, ...]) -> None:
        self.peer_addresses = addresses
        if self.on_peers is not None:
            self.on_peers(addresses)

    def _welcome(self, w: bs.Welcome) -> None:
        self._welcomed = True
        self.welcome = w
        self.bot_id, self.node_id = w.bot_id, w.node_id
        self._peers(tuple(w.peer_addresses))
        log.info("connected to %s as %r (bot %s, node %s)%s", self.address, w.bot_name or self.name,
                 w.bot_id, w.node_id, "; seats resumed" if w.resumed else "")

    async def _hook(
        self, name: str, hook: Callable[[_T], Awaitable[None] | None], convert: Callable[[_M], _T], msg: _M,
    ) -> None:
        """Call ``hook(convert(msg))``, awaiting it if it is async; log what it raises."""
        try:
            result = hook(convert(msg))
            if isinstance(result, Awaitable):
                await result
        except Exception:
            log.exception("%s.%s raised", type(self.bot).__name__, name)

    def _request(self, request: bs.ActionRequest) -> None:
        received = time.monotonic()
        obs: Observation | None = None
        try:
            obs = Observation(request, received)
            result = self.bot.act(obs)
        except Exception:
            log.exception("act failed for match %s, seat %d, request %d; answered as illegal",
                          request.match_id, request.seat, request.request_id)
            self._outbox.put_nowait(_reply(request.request_id, INVALID_ACTION))
            return
        if isinstance(result, Awaitable):
            task = asyncio.ensure_future(self._act_later(obs, result))
            self._act_tasks.add(task)
            task.add_done_callback(self._act_tasks.discard)
            return
        self._outbox.put_nowait(_reply(request.request_id, self._code(obs, result)))

    async def _act_later(self, obs: Observation, pending: Awaitable[ActResult]) -> None:
        try:
            result = await pending
        except Exception:
            log.exception("act failed for match %s, seat %d, request %d; answered as illegal",
                          obs.match_id, obs.seat, obs.request_id)
            code = INVALID_ACTION
        else:
            code = self._code(obs, result)
        self._outbox.put_nowait(_reply(obs.request_id, code))

    def _code(self, obs: Observation, result: object) -> int:
        """The code of what ``act`` returned, or :data:`INVALID_ACTION` (logged) if it is not legal."""
        try:
            return legal_code(obs, result)
        except Exception:
            log.exception("act gave no legal action for match %s, seat %d, request %d; answered as illegal",
                          obs.match_id, obs.seat, obs.request_id)
            return INVALID_ACTION


def legal_code(obs: Observation, result: object) -> int:
    """The wire code of ``result`` (an Action, its text or its code) if it is legal for ``obs``.

    Raises :class:`IllegalAnswerError` (or the parse error of a malformed text).
    """
    if isinstance(result, Action):
        code = result.code
    elif isinstance(result, str):
        code = Action.parse(result).code
    elif isinstance(result, int) and not isinstance(result, bool):
        code = int(result)
    else:
        raise IllegalAnswerError(
            f"act returned {result!r}; expected an Action, its text (such as 'JH') or its code"
        )
    if code not in obs.legal_codes:
        legal = legal_texts(obs.legal_actions)
        raise IllegalAnswerError(f"act returned {_text(code)!r}, illegal for seat {obs.seat}; legal: {legal}")
    return code


def _text(code: int) -> str:
    try:
        return str(Action.of(code))
    except ValueError:
        return f"code {code}"


async def run_async(
    bot: Bot, address: str = DEFAULT_ADDRESS, token: str | None = None, concurrency: int = 4, *,
    name: str | None = None, stop: StopEvent | None = None,
    credentials: grpc.ChannelCredentials | None = None, all_nodes: bool = True,
) -> None:
    """Play ``bot`` on the referee at ``address`` until ``stop`` is set or the task is cancelled.

    ``token`` defaults to the ``BELOTE_TOKEN`` environment variable;
    ``concurrency`` is how many seats this process plays at once; ``name``
    overrides ``bot.name``; ``credentials`` makes the channel TLS. With
    ``all_nodes`` (the default) the bot also connects to every other node the
    first one names, so any node of a cluster can seat it. Raises
    :class:`AuthenticationError` when the referee refuses the token.
    """
    if not all_nodes:
        await Client(bot, address, token, concurrency, name=name, credentials=credentials).run(stop)
        return
    fleet = Fleet(bot, token, concurrency, name=name, credentials=credentials)
    await fleet.run(address, stop)


class Fleet:
    """One :class:`Client` per referee node: the first address, then every peer it names.

    Any node can then seat the bot. Each node gets ``concurrency`` seats.
    """

    def __init__(
        self, bot: Bot, token: str | None, concurrency: int, *, name: str | None = None,
        credentials: grpc.ChannelCredentials | None = None,
    ) -> None:
        self.bot = bot
        self.token = token
        self.concurrency = concurrency
        self.name = name
        self.credentials = credentials
        self.clients: dict[str, Client] = {}
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._stop: StopEvent | None = None

    def _add(self, address: str) -> None:
        if address in self.clients:
            return
        client = Client(self.bot, address, self.token, self.concurrency, name=self.name,
                        credentials=self.credentials)
        client.on_peers = self._on_peers
        self.clients[address] = client
        self._tasks[address] = asyncio.ensure_future(client.run(self._stop))
        if len(self.clients) > 1:
            log.info("also connecting to node %s", address)

    def _on_peers(self, addresses: tuple[str, ...]) -> None:
        for address in addresses:
            self._add(address)

    async def run(self, address: str, stop: StopEvent | None = None) -> None:
        self._stop = stop
        self._add(address)
        try:
            first = self._tasks[address]
            await first  # AuthenticationError on the first node propagates
            await asyncio.gather(*self._tasks.values(), return_exceptions=True)
        finally:
            for task in self._tasks.values():
                if not task.done():
                    task.cancel()
            await asyncio.gather(*self._tasks.values(), return_exceptions=True)


def _loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    if sys.platform == "win32":
        return None
    try:
        import uvloop
    except ImportError:
        return None
    factory: Callable[[], asyncio.AbstractEventLoop] = uvloop.new_event_loop
    return factory


def run(
    bot: Bot, address: str = DEFAULT_ADDRESS, token: str | None = None, concurrency: int = 4, *,
    name: str | None = None, stop: StopEvent | None = None,
    credentials: grpc.ChannelCredentials | None = None,
) -> None:
    """Play ``bot`` on the referee at ``address`` until Ctrl-C or ``stop`` (see :func:`run_async`).

    Blocks. Ctrl-C stops cleanly (no traceback); uses uvloop when installed.
    """
    coro = run_async(bot, address, token, concurrency, name=name, stop=stop, credentials=credentials)
    try:
        with asyncio.Runner(loop_factory=_loop_factory()) as runner:
            runner.run(coro)
    except KeyboardInterrupt:
        log.info("stopped (interrupted)")
