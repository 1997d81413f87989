"""The node's HTTP server: the JSON API, and the pages with their static files.

:func:`start_web` starts it on the running event loop (the node's, beside
grpc.aio); :func:`web_for` runs it for the life of a running node. Every page
is the same small HTML shell naming its page; ``app.js`` draws it from the
JSON API. Pages are sent with a Content-Security-Policy that allows this
origin's script and style only, so even a mistake in the page's escaping
could not run a script a bot's name or version carried.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from aiohttp import web

from arena.metrics import CONTENT_TYPE, NodeMetrics
from arena.node.run import RunningNode
from arena.referee.node import Limits
from arena.web.api import READS, WATCHERS, Watchers, add_routes, json_errors, readers_only
from arena.web.node_reads import NodeReads
from arena.web.reads import ArenaReads

log = logging.getLogger("arena.web")

STATIC = Path(__file__).parent / "static"

#: page route -> the page app.js draws there
PAGES = {
    "/": "leaderboard",
    "/bots": "bots",
    "/bots/{name}": "bot",
    "/tournaments": "tournaments",
    "/tournaments/{id}": "tournament",
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


def _page_handler(page: str) -> Callable[[web.Request], Awaitable[web.Response]]:
    html = (STATIC / "page.html").read_text().replace("__PAGE__", page)

    async def handler(request: web.Request) -> web.Response:
        return web.Response(text=html, content_type="text/html", headers=SECURITY_HEADERS)

    return handler


def _metrics_handler(metrics: NodeMetrics) -> Callable[[web.Request], Awaitable[web.Response]]:
    async def handler(request: web.Request) -> web.Response:
        # what needs the broker is sampled in a thread; the rest is read on the node's loop
        await asyncio.to_thread(metrics.refresh)
        return web.Response(body=metrics.exposition(), headers={"Content-Type": CONTENT_TYPE})

    return handler


def make_app(reads: ArenaReads, limits: Limits | None = None, metrics: NodeMetrics | None = None,
             ) -> web.Application:
    """The whole site over ``reads``: the API, the pages, their static files; and ``metrics`` at
    ``/metrics`` (Prometheus's text format) when given."""
    limits = limits or Limits()
    # the API takes no body but a sign-in's few bytes (api.sign_in)
    app = web.Application(middlewares=[json_errors, readers_only], client_max_size=4096)
    app[READS] = reads
    app[WATCHERS] = Watchers(limits.max_watchers_per_match, limits.max_watchers)
    add_routes(app)
    if metrics is not None:
        app.router.add_get("/metrics", _metrics_handler(metrics))
    for route, page in PAGES.items():
        app.router.add_get(route, _page_handler(page))
    app.router.add_static("/static/", STATIC, append_version=False)
    return app


@dataclass
class WebServer:
    runner: web.AppRunner
    host: str
    port: int

    @property
    def url(self) -> str:
        host = "127.0.0.1" if self.host in ("0.0.0.0", "", "::", "[::]") else self.host
        return f"http://{host}:{self.port}"

    async def stop(self) -> None:
        # open event streams end with the server (a spectator's browser reconnects elsewhere)
        await self.runner.cleanup()


async def start_web(reads: ArenaReads, listen: str, limits: Limits | None = None,
                    metrics: NodeMetrics | None = None) -> WebServer:
    """Serve the site on ``listen`` (HOST:PORT, port 0 for a free one) on the running loop."""
    host, _, port = listen.rpartition(":")
    host = host.strip("[]")
    runner = web.AppRunner(make_app(reads, limits, metrics), access_log=None, shutdown_timeout=1.0)
    await runner.setup()
    site = web.TCPSite(runner, host or "127.0.0.1", int(port))
    await site.start()
    bound = int(runner.addresses[0][1])  # the port bound when 0 was asked
    return WebServer(runner, host, bound)


@contextlib.asynccontextmanager
async def web_for(running: RunningNode, listen: str) -> AsyncIterator[WebServer]:
    """The site of a running node, for as long as the block runs."""
    reads = NodeReads(running.node, running.worker.broker, running.tournaments, running.rankings)
    server = await start_web(reads, listen, running.node.config.limits, running.node.metrics)
    log.info("web pages and JSON API on %s", server.url)
    try:
        yield server
    finally:
        await server.stop()
