"""What one connection and one address may hold of the node's HTTP server, for how long, and how often.

aiohttp bounds a request head in size (8 KiB a line, 128 lines) but not in
time, and it counts no connections: a client that opened a connection and sent
its head a byte at a time, or nothing (slowloris), held a socket and a file
descriptor for an hour (aiohttp's keep-alive default), and one address could
open them until the node had none left. So the site accepts its connections
itself (:class:`BoundedSite`), and each passes a gate before aiohttp sees it:

- :class:`ConnectionBounds` counts the connections open per address (an IPv6
  one by its /64) and in all; one past either bound is closed as it is
  accepted, before any transport, parser, task or TLS state is made for it,
  and logged as one quiet line;
- a connection has :attr:`WebLimits.head_timeout` seconds from its accept to
  finish its TLS handshake and send its first request head, or it is aborted.
  Once a request is under way, aiohttp's own keep-alive timer, set to the same
  seconds, closes the connection when it idles, or dawdles over its next head,
  after a response.

And one connection is enough to take the node's time: a reader that asks
again as soon as it has its answer. :func:`read_rate` charges every request to
the API (but event streams, bounded by their number) to its address's reads,
the node's :class:`arena.edge.rates.ReadRates` that its gRPC short calls
draw on too: one read to be let in, then one more per whole 8 KiB of its answer (a
finished match's page, paced by the replays' budget, counts one). Past them
the request is a 429 with ``Retry-After``, held a while first
(:class:`arena.edge.guard.Tarpit`, as many as the address's connections),
so that a client asking again at once slows to a request a second per
connection, and costs a timer meanwhile.

Why this and not an option of aiohttp: aiohttp has no header timeout (its
keep-alive timer starts at the accept only in its newest releases: 3.14.5 has
it, 3.14.3 not, and this package allows older ones) and no connection count,
and the ``web.Server`` factory that makes its ``RequestHandler`` per
connection never sees the peer's address. Wrapping that factory (:class:`_Gated`
hands every byte and event on to the handler it makes) keeps aiohttp's
handler, parser and shutdown as they are, on any version. The accept loop is
the site's own so that a TLS connection is counted and timed from its accept,
not only after its handshake: under the event loop's
own ``create_server(ssl=...)`` the protocol first hears of a connection when
its handshake is over, and a ``loop.start_tls`` from the protocol races the
first read under uvloop. ``loop.connect_accepted_socket`` does the TLS.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import ssl
from dataclasses import dataclass
from typing import Any, cast

from aiohttp import web
from aiohttp.web_protocol import RequestHandler
from yarl import URL

from arena.edge.guard import OpenCount, host_key
from arena.edge.quietlog import QuietLog
from arena.edge.rates import ReadRates, retry_after
from arena.web.api import REFUSALS, Handler

quiet = QuietLog(logging.getLogger("arena.web"))

#: seconds the accept loop rests when the process has no file descriptor left (EMFILE)
ACCEPT_BACKOFF_S = 0.1


@dataclass(frozen=True, slots=True)
class WebLimits:
    """What one connection or address may hold of the HTTP server (``serve --http-*`` flags)."""

    #: seconds a new connection has to finish its TLS handshake and send its first request head, and
    #: that an idle keep-alive connection is kept
    head_timeout: float = 5.0
    #: connections open at once from one address (an IPv6 /64), and in all: room for a few dozen
    #: browsers behind one address (six connections each at most), and for the node's other files
    connections_per_address: int = 64
    connections: int = 512
    #: server-sent event streams open at once from one address (per match and in all: ``Limits``)
    watchers_per_address: int = 16


#: what each address may read a second (the node's, shared with its gRPC edge), and where a request
#: refused for it waits
READ_RATES = web.AppKey("read_rates", ReadRates)
#: the API's routes that are not reads of the rate: event streams, bounded by their number
UNRATED = frozenset({"/api/v1/matches/{id}/events"})


@web.middleware
async def read_rate(request: web.Request, handler: Handler) -> web.StreamResponse:
    """A request to the API is one read of its address, and each whole 8 KiB of its answer one more; past
    the address's reads, a 429 saying when to retry (``Retry-After``), held first."""
    if not request.path.startswith("/api/"):
        return await handler(request)
    route = request.match_info.route.resource
    if route is not None and route.canonical in UNRATED:
        return await handler(request)
    rates = request.app[READ_RATES]
    key = host_key(request.remote or "")
    wait = rates.admit(key)
    if wait > 0:
        why = rates.refusal(key, wait)
        quiet.warning(("http reads", "per address"), "refused an HTTP request from %s: %s", key, why)
        await request.app[REFUSALS].hold_key(key)
        return web.json_response({"error": why, "status": 429}, status=429,
                                 headers={"Retry-After": str(retry_after(wait))})
    response = await handler(request)
    body = response.body if isinstance(response, web.Response) else None
    if isinstance(body, bytes):  # a finished match's page is a StreamResponse, paced on its own
        rates.charge(key, len(body))
    return response


class ConnectionBounds:
    """The connections open per address and in all, and those not yet past their first head."""

    def __init__(self, limits: WebLimits) -> None:
        self.limits = limits
        self.open = OpenCount(limits.connections_per_address, limits.connections,
                              per_key_full="{limit} connections are open from {key}, the limit per address",
                              total_full="the node holds its limit of {limit} HTTP connections")
        #: aiohttp's handler of each connection served now -> its gate
        self.gates: dict[RequestHandler, _Gated] = {}
        #: every connection counted now
        self.counted: set[_Gated] = set()

    def admit(self, key: str) -> bool:
        """Count a new connection from ``key``, or refuse it (a quiet line per kind)."""
        full = self.open.open(key)
        if full is None:
            return True
        kind = "in all" if self.open.open_calls >= self.open.total else "per address"
        quiet.warning(("http connections", kind), "refused an HTTP connection from %s: %s", key, full)
        return False

    def begun(self, request: web.BaseRequest) -> None:
        """A request's head has arrived on its connection: its head timeout is over."""
        gate = self.gates.get(request.protocol)
        if gate is not None:
            gate.stop_timer()

    def abort_all(self) -> None:
        """The server is stopping: every connection still counted ends (aiohttp's at its own pace)."""
        for gate in list(self.counted):
            if gate.handler is None:
                gate.abort()


class _Gated(asyncio.Protocol):
    """One accepted connection, counted under ``key``: timed until its first head, then handed
    whole to the request handler aiohttp's ``server`` makes for it."""

    def __init__(self, bounds: ConnectionBounds, key: str, server: web.Server) -> None:
        self.bounds = bounds
        self.key: str | None = key  # None once released
        self.server = server
        self.transport: asyncio.Transport | None = None
        self.handler: RequestHandler | None = None
        #: the connect (and TLS handshake) under way, until the transport is made
        self.connecting: asyncio.Task[Any] | None = None
        self.timer: asyncio.TimerHandle | None = asyncio.get_running_loop().call_later(
            bounds.limits.head_timeout, self._late)
        bounds.counted.add(self)

    # ------------------------------------------------------------ from the transport
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        transport = self.transport = cast(asyncio.Transport, transport)  # uvloop's is not a subclass
        handler = self.handler = self.server()
        self.bounds.gates[handler] = self
        handler.connection_made(transport)

    def data_received(self, data: bytes) -> None:
        if self.handler is not None:
            self.handler.data_received(data)

    def eof_received(self) -> None:
        if self.handler is not None:  # aiohttp closes a half-closed connection
            self.handler.eof_received()

    def pause_writing(self) -> None:
        if self.handler is not None:
            self.handler.pause_writing()

    def resume_writing(self) -> None:
        if self.handler is not None:
            self.handler.resume_writing()

    def connection_lost(self, exc: BaseException | None) -> None:
        self.release()
        if self.handler is not None:
            self.bounds.gates.pop(self.handler, None)
            self.handler.connection_lost(exc)

    # ------------------------------------------------------------ the gate's own
    def stop_timer(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None

    def _late(self) -> None:
        """No request head within the head timeout (nor a whole handshake, on TLS): aborted."""
        self.timer = None
        quiet.info("http head timeout", "closed an HTTP connection from %s: no request head within %g s",
                   self.key, self.bounds.limits.head_timeout)
        self.abort()

    def abort(self) -> None:
        if self.transport is not None:
            self.transport.abort()
        elif self.connecting is not None:
            self.connecting.cancel()  # mid-handshake: the loop closes the socket

    def release(self) -> None:
        """Uncount the connection (once, whichever way it ended)."""
        self.stop_timer()
        if self.key is not None:
            self.bounds.open.close(self.key)
            self.key = None
            self.bounds.counted.discard(self)


class _Listener(asyncio.AbstractServer):
    """A listening socket whose connections pass ``bounds`` as they are accepted, then are served by
    aiohttp's ``server`` (over TLS with ``tls``)."""

    def __init__(self, sock: socket.socket, bounds: ConnectionBounds, server: web.Server,
                 tls: ssl.SSLContext | None, backlog: int) -> None:
        self.sock = sock
        self.backlog = backlog
        self.bounds = bounds
        self.server = server
        self.tls = tls
        self._loop = asyncio.get_running_loop()
        self._accepting = self._loop.create_task(self._accept())

    @property
    def sockets(self) -> tuple[socket.socket, ...]:  # as asyncio.Server's (aiohttp's runner reads it)
        return () if self.sock.fileno() < 0 else (self.sock,)

    async def _accept(self) -> None:
        while True:
            try:
                conn, peer = await self._loop.sock_accept(self.sock)
                self._take(conn, peer)
                # then the others waiting, without a turn of the loop each (as asyncio's own
                # server does): a flood of connections must not fill the kernel's queue
                for _ in range(self.backlog):
                    try:
                        conn, peer = self.sock.accept()
                    except (BlockingIOError, InterruptedError):
                        break
                    self._take(conn, peer)
            except OSError as e:  # no file descriptor left, or the peer gone before its accept
                quiet.warning(("http accept", e.errno), "could not accept an HTTP connection: %s", e)
                await asyncio.sleep(ACCEPT_BACKOFF_S)

    def _take(self, conn: socket.socket, peer: Any) -> None:
        key = host_key(str(peer[0])) if isinstance(peer, tuple) else ""
        if not self.bounds.admit(key):
            conn.close()  # refused as it came: a refusal costs an accept and a close
            return
        conn.setblocking(False)
        gate = _Gated(self.bounds, key, self.server)
        gate.connecting = self._loop.create_task(self._connect(gate, conn))

    async def _connect(self, gate: _Gated, conn: socket.socket) -> None:
        timeout = self.bounds.limits.head_timeout
        try:
            await self._loop.connect_accepted_socket(
                lambda: gate, conn, ssl=self.tls,
                ssl_handshake_timeout=timeout if self.tls else None,
                ssl_shutdown_timeout=timeout if self.tls else None)
        except BaseException as e:
            # a stranger's failed handshake (not TLS, no certificate it trusts, too slow), or the
            # server stopping: nothing to log, as on the gRPC port; the loop has closed the socket
            if gate.transport is None:
                gate.release()
            if not isinstance(e, Exception):
                raise
        finally:
            gate.connecting = None

    def close(self) -> None:
        self._accepting.cancel()
        self.sock.close()
        self.bounds.abort_all()

    def get_loop(self) -> asyncio.AbstractEventLoop:
        return self._loop

    def is_serving(self) -> bool:
        return not self._accepting.done()

    async def start_serving(self) -> None:
        pass  # serving from its creation

    async def serve_forever(self) -> None:
        await asyncio.shield(self._accepting)

    async def wait_closed(self) -> None:
        await asyncio.gather(self._accepting, return_exceptions=True)


class BoundedSite(web.BaseSite):
    """aiohttp's ``TCPSite``, its connections accepted through :class:`ConnectionBounds` (and served
    over TLS with ``ssl_context``)."""

    def __init__(self, runner: web.BaseRunner, host: str, port: int, bounds: ConnectionBounds,
                 ssl_context: ssl.SSLContext | None = None) -> None:
        super().__init__(runner, ssl_context=ssl_context)
        self._host = host
        self._port = port
        self._bounds = bounds

    @property
    def name(self) -> str:
        scheme = "https" if self._ssl_context else "http"
        return str(URL.build(scheme=scheme, host=self._host, port=self._port))

    async def start(self) -> None:
        await super().start()
        server = self._runner.server
        assert server is not None
        family, _, _, _, address = (await asyncio.get_running_loop().getaddrinfo(
            self._host, self._port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE))[0]
        sock = socket.create_server(address[:2], family=family, backlog=self._backlog)
        sock.setblocking(False)
        self._server = _Listener(sock, self._bounds, server, self._ssl_context, self._backlog)
