"""What the gRPC edge holds against hostile peers: bad bytes, too many streams, too many messages.

Every caller is a stranger. What one message, one stream or one peer may cost
the node is bounded here, and bad input ends its call with a clear status and
one quiet log line, never a traceback:

* **Undecodable requests.** grpc turns a request deserializer that raises into
  UNKNOWN and an ERROR line with a traceback. :class:`Lenient` deserializers
  never raise: bytes that do not decode become a :class:`Malformed` value, and
  :class:`RequestGuard` (a server interceptor, so every service of the server
  is covered) ends the call with INVALID_ARGUMENT before the servicer sees it.
  A handler built with a :class:`Lenient` deserializer of its own (the bot
  stream) checks for :class:`Malformed` itself.
* **Calls open at once.** :class:`OpenCount` bounds the calls of one kind open
  at once per peer address (an IPv6 peer counts by its /64) and in all: the
  bot streams (:func:`bot_streams`, counted by the bot service), and every
  other kind (:class:`CallBounds`, counted by :class:`RequestGuard`):
  spectators (per match too: :func:`spectators`), health watches, other
  streams, short calls, health checks, admin calls. grpc's own bound on the
  calls open at once lies above all their totals (``Limits.concurrent_rpcs``),
  so that no kind, whoever holds it, leaves another without room.
* **Rates.** :class:`TokenBucket` bounds what a bot may send that no request
  asked for (pings, empty messages) and how often it may open a stream; the
  node's :class:`arena.edge.rates.ReadRates` what one address may read a
  second by short calls (:class:`CallBounds` charges each by its answer's size).
* **Message size.** :func:`receive_cap` sizes the largest request the server
  reads from the protocol (see its docstring).
* **Retry storms.** A refusal is cheap, but a client that calls again at once
  whenever it is refused makes hundreds a second, each a full call for grpc.
  :class:`Tarpit` holds each refusal a second before its status (as many per
  address as it may open streams; refused at once past those), so such a
  client costs the node about one call a second.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import ipaddress
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, NoReturn
from urllib.parse import unquote

import grpc
import grpc.aio

from arena.edge.quietlog import quiet
from arena.edge.rates import ReadRates, retry_after

#: what one ActionReply costs on the wire at most: a request id of 10 bytes and a code of 5, tagged and framed
REPLY_BYTES = 19
#: room for a Hello (token, name and version of up to 256 characters each) and a Ping
HELLO_BYTES = 4096
#: the smallest receive cap, whatever the concurrency
MIN_RECEIVE_CAP = 16 * 1024


def receive_cap(max_concurrency: int) -> int:
    """The largest request the node reads, in bytes.

    A bot stream may carry at most twice its concurrency in answers in one
    message (see ``BotLink.take_answers``), each at most :data:`REPLY_BYTES`,
    beside a Hello; the ArenaService requests are names, ids and a ruleset of a
    few hundred bytes. So 4 KiB + 2 x 19 B x ``max_concurrency``, and never under
    16 KiB: 16 KiB with the default 256 seats a stream, against grpc's 4 MB.
    """
    return max(MIN_RECEIVE_CAP, HELLO_BYTES + 2 * REPLY_BYTES * max_concurrency)


# ------------------------------------------------------------ bad bytes
class Malformed:
    """A request whose bytes did not decode, as a :class:`Lenient` deserializer hands it over."""

    __slots__ = ("reason", "type_name")

    def __init__(self, type_name: str, reason: str) -> None:
        self.type_name = type_name
        self.reason = reason

    def __repr__(self) -> str:
        return f"Malformed({self.type_name!r}, {self.reason!r})"


class Lenient:
    """A request deserializer that never raises: bytes that do not decode become a :class:`Malformed`."""

    __slots__ = ("parse", "type_name")

    def __init__(self, parse: Callable[[bytes], Any]) -> None:
        self.parse = parse
        owner = getattr(parse, "__self__", None)  # Message.FromString is bound to its class
        descriptor = getattr(owner, "DESCRIPTOR", None)
        self.type_name: str = getattr(descriptor, "name", "") or "request"

    def __call__(self, data: bytes) -> Any:
        try:
            return self.parse(data)
        except Exception as e:  # DecodeError, and whatever else a parser may raise on hostile bytes
            return Malformed(self.type_name, str(e) or type(e).__name__)


def peer_host(peer: str) -> str:
    """The address a call came from, without its port (``ipv4:10.0.0.7:51234`` -> ``10.0.0.7``);
    an IPv6 address by its /64, which one machine usually holds whole."""
    scheme, _, rest = unquote(peer).partition(":")
    if scheme not in ("ipv4", "ipv6"):
        return peer
    return host_key(rest.rsplit(":", 1)[0])


def host_key(host: str) -> str:
    """What a peer's host counts as: an IPv4 address as it is (also one mapped into IPv6), an IPv6
    one by its /64."""
    host = host.strip("[]")
    if ":" not in host:
        return host
    try:
        address = ipaddress.IPv6Address(host.split("%", 1)[0])
    except ValueError:
        return host
    if address.ipv4_mapped is not None:
        return str(address.ipv4_mapped)
    return str(ipaddress.IPv6Network((address, 64), strict=False))


async def refuse_malformed(context: grpc.aio.ServicerContext[Any, Any], bad: Malformed,
                           tarpit: Tarpit | None = None) -> None:
    """End the call: INVALID_ARGUMENT (after the ``tarpit``'s hold), and one quiet log line per kind
    of message."""
    quiet.warning(("undecodable", bad.type_name), "refused an undecodable %s from %s: %s",
                bad.type_name, context.peer(), bad.reason)
    if tarpit is not None:
        await tarpit.hold(context)
    await context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                        f"the {bad.type_name} message did not decode: {bad.reason}")


async def _checked(requests: AsyncIterator[Any], context: grpc.aio.ServicerContext[Any, Any],
                   tarpit: Tarpit | None) -> Any:
    async for request in requests:
        if type(request) is Malformed:
            await refuse_malformed(context, request, tarpit)
        yield request


#: what charges a call's answer (its size in bytes) to the caller: see :meth:`CallBounds.admission`
Charge = Callable[[int], None]
#: what lets a call in, or refuses it (ending it), and what its answer is charged to, if anything
Admit = Callable[[grpc.aio.ServicerContext[Any, Any]], Awaitable[Charge | None]]


def _guarded_behavior(behavior: Any, streaming_request: bool, tarpit: Tarpit | None,
                      admit: Admit | None = None, serialize: Callable[[Any], bytes] | None = None) -> Any:
    """``behavior`` that lets the call in by ``admit`` (if given) and refuses a Malformed request
    first, of the same kind (coroutine or async generator) as grpc tells them apart; None for a
    synchronous one. With ``serialize`` (a unary answer), the answer is serialized here, and its
    size charged as ``admit`` said (grpc is then given the bytes)."""
    if inspect.isasyncgenfunction(behavior):
        async def stream(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
            if admit is not None:
                await admit(context)
            if streaming_request:
                request = _checked(request, context, tarpit)
            elif type(request) is Malformed:
                await refuse_malformed(context, request, tarpit)
            async for item in behavior(request, context):
                yield item
        return stream
    if inspect.iscoroutinefunction(behavior):
        async def unary(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
            charge = None if admit is None else await admit(context)
            if streaming_request:
                request = _checked(request, context, tarpit)
            elif type(request) is Malformed:
                await refuse_malformed(context, request, tarpit)
            answer = await behavior(request, context)
            if serialize is None:
                return answer
            data = serialize(answer)
            if charge is not None:
                charge(len(data))
            return data
        return unary
    return None


_BEHAVIORS = ("unary_unary", "unary_stream", "stream_unary", "stream_stream")


def guard_handler(handler: Any, tarpit: Tarpit | None = None, bounds: CallBounds | None = None,
                  method: str = "") -> Any:
    """``handler`` (an ``RpcMethodHandler``) with a lenient deserializer and a behavior that
    refuses what did not decode (after the ``tarpit``'s hold), each call of ``method`` counted by
    ``bounds`` if given (a short call's answer serialized by the guard, so that its size is charged
    to the caller's reads); as it is if it is lenient already (the bot stream, which counts its own),
    or synchronous."""
    parse = handler.request_deserializer
    if parse is None or isinstance(parse, Lenient):
        return handler
    changes: dict[str, Any] = {}
    for name in _BEHAVIORS:
        behavior = getattr(handler, name)
        if behavior is not None:
            streaming = name != "unary_unary"
            admit = None if bounds is None else bounds.admission(method, streaming)
            serialize = None
            if bounds is not None and bounds.charges_answers(method, streaming):
                serialize = handler.response_serializer
                if serialize is not None:
                    changes["response_serializer"] = None  # the guard's wrapper hands grpc the bytes
            guarded = _guarded_behavior(behavior, name.startswith("stream"), tarpit, admit, serialize)
            if guarded is None:
                return handler
            changes[name] = guarded
    return handler._replace(request_deserializer=Lenient(parse), **changes)


def _watch_limited(handler: Any, watching: OpenCount, tarpit: Tarpit | None) -> Any:
    """A WatchMatch handler that counts its calls in ``watching`` (per match); over the limits,
    RESOURCE_EXHAUSTED after the ``tarpit``'s hold. The handler writes through its context (a
    coroutine) or yields its messages (an async generator), and this one does the same."""
    behavior = handler.unary_stream

    def enter(request: Any) -> str | None:
        """Count the call among its match's spectators: None, or why it is refused."""
        return watching.open(getattr(request, "match_id", ""))  # a Malformed one is refused inside

    if inspect.iscoroutinefunction(behavior):
        async def writes(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> None:
            full = enter(request)
            if full is not None:
                await refuse_full(context, "spectators", full, tarpit)
            try:
                await behavior(request, context)
            finally:
                watching.close(getattr(request, "match_id", ""))

        return handler._replace(unary_stream=writes)

    async def watch(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        full = enter(request)
        if full is not None:
            await refuse_full(context, "spectators", full, tarpit)
        try:
            async for item in behavior(request, context):
                yield item
        finally:
            watching.close(getattr(request, "match_id", ""))

    return handler._replace(unary_stream=watch)


async def refuse_full(context: grpc.aio.ServicerContext[Any, Any], kind: str, why: str,
                      tarpit: Tarpit | None) -> NoReturn:
    """End a call over a limit of its ``kind``: RESOURCE_EXHAUSTED saying ``why``, after the
    ``tarpit``'s hold, and one quiet log line per kind."""
    quiet.warning(("full", kind), "refused a call (%s) from %s: %s", kind, context.peer(), why)
    if tarpit is not None:
        await tarpit.hold(context)
    await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, why)
    raise AssertionError("context.abort returns only by raising")


async def refuse_rate(context: grpc.aio.ServicerContext[Any, Any], key: str, wait: float, rates: ReadRates,
                      tarpit: Tarpit | None) -> NoReturn:
    """End a call past its address's reads a second: RESOURCE_EXHAUSTED saying when to retry (also
    as ``retry-after`` seconds and grpc's ``grpc-retry-pushback-ms`` in its trailers), after the
    ``tarpit``'s hold, and one quiet log line."""
    why = rates.refusal(key, wait)
    quiet.warning(("full", "reads"), "refused a call from %s: %s", context.peer(), why)
    if tarpit is not None:
        await tarpit.hold(context)
    seconds = retry_after(wait)
    await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, why, trailing_metadata=(
        ("retry-after", str(seconds)), ("grpc-retry-pushback-ms", str(seconds * 1000))))
    raise AssertionError("context.abort returns only by raising")


#: the method whose calls :class:`RequestGuard` counts as spectators
WATCH_MATCH = "/belote.arena.v1.ArenaService/WatchMatch"


class WrappedHandlers:
    """What an interceptor made of each handler grpc gave it, made once per (handler, key).

    grpc hands an interceptor the same registered handler object on every call;
    wrapping it anew each call would cost a wrapper a call. The table holds the
    registered handlers only in practice, and is emptied if it ever grows past
    :attr:`MAX_HANDLERS`.
    """

    MAX_HANDLERS = 256

    def __init__(self) -> None:
        self._made: dict[tuple[int, str], tuple[Any, Any]] = {}

    def get(self, handler: Any, key: str, make: Callable[[], Any]) -> Any:
        hit = self._made.get((id(handler), key))
        if hit is None or hit[0] is not handler:  # an id reused by another object
            if len(self._made) >= self.MAX_HANDLERS:
                self._made.clear()
            hit = self._made[(id(handler), key)] = (handler, make())
        return hit[1]


class RequestGuard(grpc.aio.ServerInterceptor):
    """A server interceptor that gives every method :func:`guard_handler`'s protection (holding
    its refusals in ``tarpit``), counts its calls in ``bounds`` (per address and in all, by kind),
    and the spectators of each match in ``watching`` (nothing counted without them)."""

    def __init__(self, watching: OpenCount | None = None, tarpit: Tarpit | None = None,
                 bounds: CallBounds | None = None) -> None:
        self.watching = watching
        self.tarpit = tarpit
        self.bounds = bounds
        self._guarded = WrappedHandlers()

    async def intercept_service(
        self, continuation: Callable[[grpc.HandlerCallDetails], Any],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> Any:
        handler = await continuation(handler_call_details)
        if handler is None:
            return None
        method = handler_call_details.method

        def guarded() -> Any:
            out = guard_handler(handler, self.tarpit, self.bounds, method)
            if self.watching is not None and method == WATCH_MATCH:
                out = _watch_limited(out, self.watching, self.tarpit)
            return out

        return self._guarded.get(handler, method, guarded)


# ------------------------------------------------------------ limits
class OpenCount:
    """Calls open now, per key (a peer's address, a match) and in all; one over either limit is refused.

    Only the keys with a call open are kept, so the table is bounded by ``total``.
    """

    def __init__(self, per_key: int, total: int, *, per_key_full: str, total_full: str) -> None:
        self.per_key = per_key
        self.total = total
        #: why a call is refused, with ``{key}`` and ``{limit}`` in them
        self.per_key_full = per_key_full
        self.total_full = total_full
        self.open_calls = 0
        self._by_key: dict[str, int] = {}

    def open(self, key: str) -> str | None:
        """Count a new call for ``key``; None, or why it is refused (and not counted)."""
        if self.open_calls >= self.total:
            return self.total_full.format(limit=self.total)
        held = self._by_key.get(key, 0)
        if held >= self.per_key:
            return self.per_key_full.format(key=key, limit=self.per_key)
        self._by_key[key] = held + 1
        self.open_calls += 1
        return None

    def close(self, key: str) -> None:
        held = self._by_key.get(key, 0)
        if held <= 1:
            self._by_key.pop(key, None)
        else:
            self._by_key[key] = held - 1
        self.open_calls = max(0, self.open_calls - 1)


def bot_streams(per_peer: int, total: int) -> OpenCount:
    """The bot streams open at once, per peer address and in all."""
    return OpenCount(per_peer, total,
                     per_key_full="{limit} bot streams are open from {key}, the limit per address",
                     total_full="the node holds its limit of {limit} bot streams")


class Tarpit:
    """Refusals held ``seconds`` before their status is sent, at most ``per_key`` at once per
    address and ``total`` in all (past those, :meth:`hold` returns at once).

    A refusal costs the node a whole call, so a client that retries at once
    whenever it is refused (a retry storm, by malice or by a careless loop)
    would cost it hundreds of calls a second. Held, it costs a timer, and such a
    client's pace falls to one call a second per loop. An honest client waits a
    second longer for an error it would back off from anyway.
    """

    def __init__(self, seconds: float, per_key: int, total: int) -> None:
        self.seconds = seconds
        self._held = OpenCount(per_key, total, per_key_full="", total_full="")

    async def hold(self, context: grpc.aio.ServicerContext[Any, Any], seconds: float | None = None) -> None:
        """Wait ``seconds`` (the tarpit's own by default) if the caller's address has room."""
        await self.hold_key(peer_host(context.peer() or ""), seconds)

    async def hold_key(self, key: str, seconds: float | None = None) -> None:
        """:meth:`hold` for a caller known by its address (``key``), whatever its protocol."""
        wait = self.seconds if seconds is None else min(seconds, self.seconds)
        if wait <= 0:
            return
        if self._held.open(key) is not None:
            return
        try:
            await asyncio.sleep(wait)
        finally:
            self._held.close(key)


def spectators(per_match: int, total: int) -> OpenCount:
    """The WatchMatch calls open at once, per match and in all."""
    return OpenCount(per_match, total, per_key_full="match {key!r} has its limit of {limit} spectators",
                     total_full="the node has its limit of {limit} spectators")


#: the methods whose calls :class:`CallBounds` counts as a kind of their own
HEALTH_CHECK = "/grpc.health.v1.Health/Check"
HEALTH_WATCH = "/grpc.health.v1.Health/Watch"

#: the kinds of call :class:`CallBounds` counts (the bot streams count their own)
SPECTATORS = "spectators"
HEALTH_WATCHES = "health watches"
OTHER_STREAMS = "streams"
CALLS = "calls"
HEALTH_CHECKS = "health checks"
ADMIN_CALLS = "admin calls"


def call_kind(method: str, streaming: bool) -> str:
    """The kind a call of ``method`` counts as (a call with the admin credential aside)."""
    if method == WATCH_MATCH:
        return SPECTATORS
    if method == HEALTH_WATCH:
        return HEALTH_WATCHES
    if method == HEALTH_CHECK:
        return HEALTH_CHECKS
    return OTHER_STREAMS if streaming else CALLS


def open_calls(kind: str, per_peer: int, total: int) -> OpenCount:
    """The calls of ``kind`` open at once, per peer address and in all."""
    return OpenCount(per_peer, total,
                     per_key_full=f"{{limit}} {kind} are open from {{key}}, the limit per address",
                     total_full=f"the node holds its limit of {{limit}} {kind}")


class CallBounds:
    """The calls open at once, by kind, per peer address and in all, and the short calls' reads a
    second per address (docs/protocol.md#limits).

    A call is counted from its start until grpc is done with it (the moment
    grpc's own count lets it go too); one over a bound of its kind ends with
    RESOURCE_EXHAUSTED, after the tarpit's hold, and one quiet log line per
    kind. A short call showing the admin credential (``is_admin`` of its
    context) counts as an admin call, bounded in all only, so that what
    strangers hold never keeps an admin out. Any other short call draws on
    its address's ``rates`` (if given): one read to be let in, and its
    answer's size once it is made, but for the ``paced`` methods (whose
    answers the replays' pace bounds); past them, RESOURCE_EXHAUSTED too.
    """

    def __init__(self, kinds: dict[str, OpenCount],
                 is_admin: Callable[[grpc.aio.ServicerContext[Any, Any]], bool],
                 tarpit: Tarpit | None = None, rates: ReadRates | None = None,
                 paced: frozenset[str] = frozenset()) -> None:
        missing = {SPECTATORS, HEALTH_WATCHES, OTHER_STREAMS, CALLS, HEALTH_CHECKS, ADMIN_CALLS} - set(kinds)
        if missing:
            raise ValueError(f"no bound for {sorted(missing)}")
        self.kinds = kinds
        self.is_admin = is_admin
        self.tarpit = tarpit
        self.rates = rates
        self.paced = paced

    def charges_answers(self, method: str, streaming: bool) -> bool:
        """Are the answers of ``method`` charged to their callers' reads by their size?"""
        return (self.rates is not None and call_kind(method, streaming) == CALLS
                and method not in self.paced)

    def admission(self, method: str, streaming: bool) -> Admit:
        """What lets a call of ``method`` in, counting it, or ends it over its kind's bounds (or its
        address's reads); what its answer is charged to (None: nothing)."""
        kind = call_kind(method, streaming)
        counts = self.kinds[kind]
        admins = self.kinds[ADMIN_CALLS] if kind == CALLS else None
        rates = self.rates if kind == CALLS else None
        by_size = self.charges_answers(method, streaming)

        async def admit(context: grpc.aio.ServicerContext[Any, Any]) -> Charge | None:
            held, name = counts, kind
            key = peer_host(context.peer() or "")
            charge: Charge | None = None
            if admins is not None and self.is_admin(context):
                held, name = admins, ADMIN_CALLS
            elif rates is not None:
                wait = rates.admit(key)
                if wait > 0:
                    await refuse_rate(context, key, wait, rates, self.tarpit)
                if by_size:
                    charge = functools.partial(rates.charge, key)
            full = held.open(key)
            if full is not None:
                await refuse_full(context, name, full, self.tarpit)
            context.add_done_callback(lambda _: held.close(key))  # type: ignore[arg-type]  # stubs: a class
            return charge

        return admit


class TokenBucket:
    """At most ``rate`` events a second on average, ``burst`` at once."""

    __slots__ = ("_at", "_clock", "_tokens", "burst", "rate")

    def __init__(self, rate: float, burst: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.rate = rate
        self.burst = burst
        self._clock = clock
        self._tokens = burst
        self._at = clock()

    def take(self, n: float = 1.0) -> bool:
        """Spend ``n`` if there are that many; False (spending nothing) if not."""
        now = self._clock()
        tokens = min(self.burst, self._tokens + (now - self._at) * self.rate)
        self._at = now
        if tokens < n:
            self._tokens = tokens
            return False
        self._tokens = tokens - n
        return True

    def wait(self, n: float = 1.0) -> float:
        """The seconds until ``n`` could be taken (0 when they can now)."""
        tokens = min(self.burst, self._tokens + (self._clock() - self._at) * self.rate)
        if tokens >= n:
            return 0.0
        return (n - tokens) / self.rate if self.rate > 0 else float("inf")
