"""The node's HTTP server: the JSON API, and the pages with their static files.

:func:`start_web` starts it on the running event loop (the node's, beside
grpc.aio); :func:`web_for` runs it for the life of a running node. Every page
is the same small HTML shell naming its page, and the optional reads the node serves
(:data:`OPTIONAL_READS`); its scripts (``static/*.js``, ``app.js`` last) draw it from the
JSON API. Pages are sent with a Content-Security-Policy that allows this origin's script and
style only, so even a mistake in the page's escaping could not run a script a bot's name or
version carried.

Every connection passes :mod:`arena.web.bounds` first (a head timeout, so many
connections per address and in all); with a certificate the site is served
over TLS (``serve --http-tls-cert/--http-tls-key``). What aiohttp itself logs
about a bad request (a head too large, a broken one) goes to ``arena.web.http``
as one quiet line per kind, never a traceback.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

from aiohttp import web

from arena.edge.guard import Tarpit
from arena.edge.quietlog import QuietFilter
from arena.edge.rates import ReadRates
from arena.edge.tls import server_context
from arena.metrics import CONTENT_TYPE, NodeMetrics
from arena.node.run import RunningNode
from arena.referee.node import Limits
from arena.web.api import (
    ORIGIN,
    READS,
    REFUSALS,
    SEND_TIMEOUT,
    SESSIONS,
    WATCHERS,
    Handler,
    Watchers,
    add_routes,
    json_errors,
    readers_only,
)
from arena.web.bounds import READ_RATES, BoundedSite, ConnectionBounds, WebLimits, read_rate
from arena.web.node_reads import NodeReads
from arena.web.reads import ArenaReads
from arena.web.sessions import Sessions

log = logging.getLogger("arena.web")
#: what aiohttp logs about a connection or a request it could not parse
http_log = logging.getLogger("arena.web.http")

STATIC = Path(__file__).parent / "static"

#: page route -> the page the scripts draw there
PAGES = {
    "/": "leaderboard",
    "/bots": "bots",
    "/bots/{name}": "bot",
    "/bots/{name}/versions": "versions",
    "/tournaments": "tournaments",
    "/tournaments/{id}": "tournament",
    "/ladders": "ladders",
    "/ladders/{pool}": "ladder",
    "/schedules": "schedules",
    "/matches/{id}": "live",
    "/matches/{id}/replay": "replay",
}

SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
        "object-src 'none'; base-uri 'none'; frame-ancestors 'none'"),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


#: reads a page asks for only when the node serves them (its shell's ``data-serves`` names them): a
#: request a node does not serve is a 404, which a browser logs as an error
OPTIONAL_READS = {"analysis": "/api/v1/matches/{id}/analysis"}


def optional_reads(app: web.Application) -> list[str]:
    """Which of :data:`OPTIONAL_READS` ``app`` serves (a route there)."""
    served = {resource.canonical for resource in app.router.resources()}
    return [name for name, path in OPTIONAL_READS.items() if path in served]


def _page_handler(page: str, serves: list[str]) -> Callable[[web.Request], Awaitable[web.Response]]:
    html = (STATIC / "page.html").read_text().replace("__PAGE__", page)
    html = html.replace("__SERVES__", " ".join(serves))

    async def handler(request: web.Request) -> web.Response:
        return web.Response(text=html, content_type="text/html", headers=SECURITY_HEADERS)

    return handler


def _metrics_handler(metrics: NodeMetrics) -> Callable[[web.Request], Awaitable[web.Response]]:
    async def handler(request: web.Request) -> web.Response:
        # what needs the broker is sampled in a thread; the rest is read on the node's loop
        await asyncio.to_thread(metrics.refresh)
        return web.Response(body=metrics.exposition(), headers={"Content-Type": CONTENT_TYPE})

    return handler


def _health_handler(serving: Callable[[], bool]) -> Callable[[web.Request], Awaitable[web.Response]]:
    async def handler(request: web.Request) -> web.Response:
        # the node's own answer, on its loop: what its gRPC health check says, for probes that cannot
        # speak gRPC over TLS (Kubernetes' grpc probes before 1.37's mode: TLS)
        if serving():
            return web.Response(text="SERVING\n")
        return web.Response(text="NOT_SERVING\n", status=503, headers={"Retry-After": "5"})

    return handler


@dataclass(frozen=True)
class WebConfig:
    """How a node serves its site, beyond where (``serve --http-*``)."""

    limits: WebLimits = field(default_factory=WebLimits)
    #: serve TLS with this certificate (PEM, the server's first) and its unencrypted key; None: plaintext
    tls_cert: Path | None = None
    tls_key: Path | None = None
    #: the origin browsers reach the pages at, when a proxy in front terminates TLS
    #: (``https://arena.example.org``): sign-ins must come from it, and its cookie is Secure.
    #: "": the request's own scheme and Host
    origin: str = ""


CONNECTIONS = web.AppKey("connections", ConnectionBounds)


@web.middleware
async def head_arrived(request: web.Request, handler: Handler) -> web.StreamResponse:
    """A request's head is whole: its connection's head timeout is over."""
    request.app[CONNECTIONS].begun(request)
    return await handler(request)


def make_app(reads: ArenaReads, limits: Limits | None = None, metrics: NodeMetrics | None = None,
             config: WebConfig | None = None, rates: ReadRates | None = None,
             serving: Callable[[], bool] | None = None) -> web.Application:
    """The whole site over ``reads``: the API, the pages, their static files; and ``metrics`` at
    ``/metrics`` (Prometheus's text format) when given. Each address reads the API within ``rates``
    (the node's, which its gRPC edge shares; by default, the site's own, from ``limits``). With
    ``serving``, ``/healthz`` answers 200 while it says True, 503 once the node drains."""
    limits = limits or Limits()
    config = config or WebConfig()
    # the API takes no body but a sign-in's few bytes (api.sign_in)
    app = web.Application(middlewares=[head_arrived, read_rate, json_errors, readers_only],
                          client_max_size=4096)
    app[READ_RATES] = rates if rates is not None else ReadRates(limits.read_rate_per_peer,
                                                                 limits.read_burst_per_peer)
    # a refusal held holds one of its address's connections, which are bounded already
    app[REFUSALS] = Tarpit(limits.refusal_hold, config.limits.connections_per_address,
                           config.limits.connections)
    app[READS] = reads
    app[WATCHERS] = Watchers(limits.max_watchers_per_match, limits.max_watchers,
                             config.limits.watchers_per_address)
    app[SESSIONS] = Sessions(opens=reads.still_opens)  # a session ends with its credential
    app[ORIGIN] = config.origin.rstrip("/")
    app[SEND_TIMEOUT] = limits.send_timeout
    app[CONNECTIONS] = ConnectionBounds(config.limits)
    add_routes(app)
    if metrics is not None:
        app.router.add_get("/metrics", _metrics_handler(metrics))
    if serving is not None:
        app.router.add_get("/healthz", _health_handler(serving))
    serves = [name for name in optional_reads(app) if name != "analysis" or reads.serves_analyses]
    for route, page in PAGES.items():
        app.router.add_get(route, _page_handler(page, serves))
    app.router.add_static("/static/", STATIC, append_version=False)
    return app


@dataclass
class WebServer:
    runner: web.AppRunner
    host: str
    port: int
    tls: bool = False

    @property
    def url(self) -> str:
        host = "127.0.0.1" if self.host in ("0.0.0.0", "", "::", "[::]") else self.host
        host = f"[{host}]" if ":" in host else host
        return f"{'https' if self.tls else 'http'}://{host}:{self.port}"

    async def stop(self) -> None:
        # open event streams end with the server (a spectator's browser reconnects elsewhere)
        await self.runner.cleanup()


def quiet_http_log() -> logging.Logger:
    """``arena.web.http``, each of its problems one line without traceback, rate-limited per kind."""
    if not any(isinstance(f, QuietFilter) for f in http_log.filters):
        http_log.addFilter(QuietFilter())
    return http_log


async def start_web(reads: ArenaReads, listen: str, limits: Limits | None = None,
                    metrics: NodeMetrics | None = None, config: WebConfig | None = None,
                    rates: ReadRates | None = None, serving: Callable[[], bool] | None = None) -> WebServer:
    """Serve the site on ``listen`` (HOST:PORT, port 0 for a free one) on the running loop."""
    config = config or WebConfig()
    host, _, port = listen.rpartition(":")
    host = host.strip("[]")
    tls = None
    if config.tls_cert is not None and config.tls_key is not None:
        tls = server_context(config.tls_cert, config.tls_key)
    app = make_app(reads, limits, metrics, config, rates, serving)
    # keepalive_timeout: an idle keep-alive connection, or one slow to send its next head, is closed
    # after the head timeout; lingering_time: as long to read what is left of a refused body
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0, logger=quiet_http_log(),
                           keepalive_timeout=config.limits.head_timeout,
                           lingering_time=config.limits.head_timeout)
    await runner.setup()
    site = BoundedSite(runner, host or "127.0.0.1", int(port), app[CONNECTIONS], tls)
    await site.start()
    bound = int(runner.addresses[0][1])  # the port bound when 0 was asked
    return WebServer(runner, host, bound, tls is not None)


@contextlib.asynccontextmanager
async def web_for(running: RunningNode, listen: str, config: WebConfig | None = None,
                  ) -> AsyncIterator[WebServer]:
    """The site of a running node, for as long as the block runs."""
    tests = running.ladder.tests
    reads = NodeReads(running.node, running.worker.broker, running.tournaments, running.rankings,
                      worker=running.worker, version_reasons=None if tests is None else tests.reasons)
    node = running.node
    server = await start_web(reads, listen, node.config.limits, node.metrics, config, node.read_rates,
                             serving=lambda: not node.draining)
    log.info("web pages and JSON API on %s", server.url)
    try:
        yield server
    finally:
        await server.stop()
