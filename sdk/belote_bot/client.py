"""One bot's stream to one referee node: :class:`Client`.

One bidirectional ``BotService.Connect`` stream carries everything: the bot's
Hello (token, name, version, concurrency, and whether it asks to play the
ladder), then the referee's action requests
for every seat the bot plays, interleaved, each answered by request id as soon
as ``act`` returns. Requests come one per message or several in one (a
batch); the answers ready at the same moment go out together in one message.
A dropped stream or an unreachable node is retried with exponential backoff
and jitter (0.2 s doubling to 30 s); a refused token stops for good with
:class:`AuthenticationError`.

Where ``act`` runs is :mod:`belote_bot.acting`'s business; the hooks run on
the event loop, in message order. The logger is
``logging.getLogger("belote_bot")``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import random
import re
import threading
import time
from collections.abc import Awaitable, Callable, Collection
from typing import Any, TypeVar

import grpc
import grpc.aio
from belote.arena.v1 import bot_service_pb2 as bs
from belote.arena.v1 import bot_service_pb2_grpc

from belote_bot.acting import MODE_TEXT, Acts, act_mode, legal_code
from belote_bot.bot import Bot
from belote_bot.errors import AuthenticationError, BotError, IllegalAnswerError
from belote_bot.events import MatchInfo, MatchResult, Strike, event_from_proto
from belote_bot.tls import unreachable_hint
from belote_bot.types import Observation

__all__ = [
    "DEFAULT_ADDRESS",
    "SDK_VERSION",
    "AuthenticationError",
    "BotError",
    "Client",
    "IllegalAnswerError",
    "legal_code",
]

log = logging.getLogger("belote_bot")

SDK_VERSION = "0.1.0"
DEFAULT_ADDRESS = "localhost:50051"
TOKEN_ENV = "BELOTE_TOKEN"
INITIAL_BACKOFF = 0.2
MAX_BACKOFF = 30.0
#: match ids remembered to log a match end once when the bot holds several seats of it
_REMEMBERED_MATCHES = 1024
#: the referee's notices already logged by this process (each is logged once: every node a bot is
#: connected to may send it, and again at each reconnection), the latest this many
_REMEMBERED_NOTICES = 256
_NOTICES_LOGGED: dict[tuple[str, str, int], None] = {}
_NOTICES_LOCK = threading.Lock()

StopEvent = asyncio.Event | threading.Event
_T = TypeVar("_T")
_M = TypeVar("_M")


def _backoff_delay(attempt: int, rng: random.Random) -> float:
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


#: what a version label may be (the referee's rule: arena.referee.versions, which the SDK cannot import)
VERSION_LABEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,31}")


def bot_version_of(bot: Bot) -> str:
    """The version the Hello gives as the bot's own: ``bot.version`` if it is a label the registry
    keeps (1 to 32 letters, digits, ``_``, ``.`` or ``-``), else "" (said once in the log: the text
    is still shown as free text, but no version of the bot is kept or tested)."""
    version = bot.version
    if not version:
        return ""
    if VERSION_LABEL.fullmatch(version):
        return version
    log.warning("Bot.version %r is not a version label (1 to 32 letters, digits, '_', '.' or '-'): "
                "it is shown as text, but the arena keeps and tests no version of this bot", version[:40])
    return ""


class Client:
    """One bot's connection to one referee node, reconnecting until stopped.

    :func:`belote_bot.run_async` with ``all_nodes=False`` is
    ``Client(...).run(stop)``. What the node said in its Welcome is kept:
    :attr:`welcome`, :attr:`bot_id`, :attr:`node_id`, :attr:`peer_addresses`
    (the other nodes, for multi-node work to come). A plain ``act`` runs in
    the stream's pool of ``2 * concurrency`` threads (each started only when
    no idle one is left): every seat can act at once, and acts the referee
    stopped waiting for do not hold up the next ones.
    """

    def __init__(
        self, bot: Bot, address: str = DEFAULT_ADDRESS, token: str | None = None, concurrency: int = 4,
        *, name: str | None = None, credentials: grpc.ChannelCredentials | None = None,
        ping_interval: float = 20.0, silence_timeout: float = 65.0, rng: random.Random | None = None,
        verbose: bool = True, ladder: bool = False,
    ) -> None:
        if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
            raise ValueError(
                f"concurrency is how many seats are played at once (at least 1), not {concurrency!r}"
            )
        self.bot = bot
        self.address = address
        self.token = os.environ.get(TOKEN_ENV, "") if token is None else token
        self.concurrency = concurrency
        #: the Hello asks to play the ladder (a node with a queue opts the bot in to the ladders on)
        self.ladder = bool(ladder)
        self.name = name or bot.name or type(bot).__name__
        self.version = bot.version or f"belote_bot/{SDK_VERSION}"
        #: the bot's own version in the Hello (a label the registry keeps; "" when it says none)
        self.bot_version = bot_version_of(bot)
        self.credentials = credentials
        self.ping_interval = ping_interval
        self.silence_timeout = silence_timeout
        self.rng = rng or random.Random()
        #: the level of the connection and match-end lines: INFO, or DEBUG when not verbose
        self.info_level = logging.INFO if verbose else logging.DEBUG
        self.bot_id = ""
        self.node_id = ""
        self.peer_addresses: tuple[str, ...] = ()
        #: called with the other nodes' addresses on Welcome and when they change
        self.on_peers: Callable[[tuple[str, ...]], None] | None = None
        self.welcome: bs.Welcome | None = None
        self._welcomed = False
        self._last_received = 0.0
        self._mode = act_mode(bot)
        self._acts: Acts | None = None
        #: this bot's seats of each match it heard start, and the matches whose end was logged
        self._seats: dict[str, set[int]] = {}
        self._ended: dict[str, None] = {}

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
                    log.debug("stopping the stream to %s", self.address)
                    return
                reason = session.result()  # AuthenticationError propagates
                if self._welcomed:
                    attempt = 0
                delay = _backoff_delay(attempt, self.rng)
                attempt += 1
                log.warning("%s; reconnecting to %s in %.1f s", reason, self.address, delay)
                if stop_task is None:
                    await asyncio.sleep(delay)
                else:
                    done, _ = await asyncio.wait({stop_task}, timeout=delay)
                    if done:
                        log.debug("stopping the stream to %s", self.address)
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
        outbox: asyncio.Queue[_Outgoing] = asyncio.Queue()
        # a plain act may run in as many threads as twice the seats: every seat can act at once, and
        # acts the referee stopped waiting for (late answers) do not hold up the next ones
        acts = self._acts = Acts(self.bot, self._mode, outbox, 2 * self.concurrency,
                                 f"belote_bot-act-{self.name}")
        self._last_received = time.monotonic()
        channel = self._channel()
        helpers: list[asyncio.Task[None]] = []
        try:
            stub = bot_service_pb2_grpc.BotServiceStub(channel)
            call = stub.Connect(metadata=self._metadata())
            outbox.put_nowait(bs.ConnectRequest(hello=bs.Hello(
                token=self.token, name=self.name, version=self.version, concurrency=self.concurrency,
                ladder=self.ladder, bot_version=self.bot_version,
            )))
            reader = asyncio.ensure_future(self._read(call))
            writer = asyncio.ensure_future(self._write(call, outbox))
            helpers = [reader, writer]
            if self.ping_interval > 0:
                helpers.append(asyncio.ensure_future(self._keepalive(outbox)))
            done, _ = await asyncio.wait(helpers, return_when=asyncio.FIRST_COMPLETED)
            reason = await self._why_ended(call, reader, writer, done)
            dropped = acts.pending
            return f"{reason}; {dropped} unanswered requests dropped" if dropped else reason
        finally:
            for task in helpers:
                task.cancel()
            await asyncio.gather(*helpers, return_exceptions=True)
            await acts.close()
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
            hint = unreachable_hint(self.address, details, self.credentials is not None)
            why = f": {hint}" if hint else ""
            details = " ".join(details.split())  # one log line, whatever gRPC wrote
            return f"cannot reach the referee at {self.address}{why} ({code.name}: {details})"
        return f"the referee at {self.address} refused the stream ({code.name}: {details})"

    async def _write(
        self, call: grpc.aio.StreamStreamCall[bs.ConnectRequest, bs.ConnectResponse],
        outbox: asyncio.Queue[_Outgoing],
    ) -> None:
        """Write what is queued; the answers pending at each write go out in one message."""
        while True:
            items = [await outbox.get()]
            await asyncio.sleep(0)  # one pass of the loop: the answers already due join this write
            while not outbox.empty():
                items.append(outbox.get_nowait())
            for message in _messages(items):
                await call.write(message)

    async def _keepalive(self, outbox: asyncio.Queue[_Outgoing]) -> None:
        """Ping when the stream is quiet; give up on a referee silent for ``silence_timeout``."""
        nonce = 0
        while True:
            await asyncio.sleep(self.ping_interval)
            quiet = time.monotonic() - self._last_received
            if quiet >= self.silence_timeout:
                raise _SessionEnd(f"no message from the referee for {quiet:.0f} s")
            if quiet >= self.ping_interval:
                nonce += 1
                outbox.put_nowait(bs.ConnectRequest(ping=bs.Ping(nonce=nonce)))

    async def _read(self, call: grpc.aio.StreamStreamCall[bs.ConnectRequest, bs.ConnectResponse]) -> None:
        while True:
            message = await call.read()
            if not isinstance(message, bs.ConnectResponse):  # grpc.aio.EOF: the referee closed the stream
                return
            self._last_received = time.monotonic()
            await self._handle(message)

    # ------------------------------------------------------------ messages
    async def _handle(self, message: bs.ConnectResponse) -> None:
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
            self._remember_seat(m.match_id, m.seat)
            log.debug("match %s started: seat %d, players %s", m.match_id, m.seat, ", ".join(m.players))
            await self._hook("on_match_start", self.bot.on_match_start, MatchInfo.from_proto, m)
        elif kind == "match_ended":
            result = MatchResult.from_proto(message.match_ended)
            self._log_match_end(result)
            await self._hook("on_match_end", self.bot.on_match_end, lambda r: r, result)
        elif kind == "strike":
            strike = Strike.from_proto(message.strike)
            log.warning("strike %d of %d in match %s, seat %d, request %d (%s): %s%s; fallback %s played",
                        strike.strikes, strike.max_strikes, strike.match_id, strike.seat, strike.request_id,
                        strike.kind, strike.reason, f" ({strike.detail})" if strike.detail else "",
                        strike.fallback_action or "none")
            await self._hook("on_strike", self.bot.on_strike, lambda s: s, strike)
        elif kind == "peers":
            self._peers(tuple(message.peers.addresses))
        elif kind == "notice":
            log_notice(message.notice)
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
        log.log(self.info_level, "%r (bot %s) connected to node %s at %s: %d seats at once, %s%s",
                w.bot_name or self.name, w.bot_id, w.node_id, self.address, self.concurrency,
                MODE_TEXT[self._mode], "; seats resumed" if w.resumed else "")

    def _remember_seat(self, match_id: str, seat: int) -> None:
        self._seats.setdefault(match_id, set()).add(seat)
        while len(self._seats) > _REMEMBERED_MATCHES:  # matches whose end never came (a lost stream)
            del self._seats[next(iter(self._seats))]

    def _log_match_end(self, result: MatchResult) -> None:
        """One line per match, however many of its seats this bot holds."""
        if result.match_id in self._ended:
            return
        self._ended[result.match_id] = None
        while len(self._ended) > _REMEMBERED_MATCHES:
            del self._ended[next(iter(self._ended))]
        seats = self._seats.pop(result.match_id, None) or {result.seat}
        log.log(self.info_level, "match %s ended: %s", result.match_id,
                _match_end_text(result, {s & 1 for s in seats}))

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
        assert self._acts is not None
        self._acts.request(Observation(request, time.monotonic()))


def log_notice(notice: bs.Notice) -> bool:
    """Log a referee's notice to the bot's author, as a warning, once per process however many nodes
    or reconnections repeat it (the same kind, text and end); True if it was logged now."""
    key = (notice.kind, notice.text, notice.until)
    with _NOTICES_LOCK:  # a fleet's streams may run in several threads
        if key in _NOTICES_LOGGED:
            return False
        _NOTICES_LOGGED[key] = None
        while len(_NOTICES_LOGGED) > _REMEMBERED_NOTICES:
            del _NOTICES_LOGGED[next(iter(_NOTICES_LOGGED))]
    log.warning("the referee says (%s): %s", notice.kind or "notice", notice.text)
    return True


def _match_end_text(result: MatchResult, teams: Collection[int]) -> str:
    """How a match ended, from the side of the bot's team (both sides: from team 0's)."""
    both = len(teams) > 1
    team = 0 if both else next(iter(teams))
    totals = list(result.totals) + [0] * (2 - len(result.totals))
    score = f"{totals[team]}-{totals[1 - team]}"
    if result.reason == "aborted":
        outcome = f"aborted at {score}"
    elif result.winner is None:
        outcome = f"drawn {score}"
    elif both:
        outcome = f"team {result.winner} won, {score}"
    else:
        outcome = f"{'won' if result.winner == team else 'lost'} {score}"
    if result.reason == "forfeit" and result.forfeit_seat is not None:
        outcome += f" by forfeit of seat {result.forfeit_seat}"
    notes = [f"{result.deals} deals"]
    if result.detail:
        notes.append(result.detail)
    if both:
        notes.append("this bot played both sides; team 0's score first")
    return f"{outcome} ({'; '.join(notes)})"
