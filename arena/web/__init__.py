"""The arena over HTTP: a read-only JSON API, server-sent events of live matches, and web pages.

Every node can serve it beside its gRPC port (``belote-arena serve --http
HOST:PORT``). The server is **aiohttp**, on the node's own asyncio event loop,
next to grpc.aio: aiohttp is asyncio-native, so it needs no separate ASGI
server, no second thread and no second loop, and its handlers read the node's
live matches (their event feeds) directly.

The web layer reads through one small typed interface, :class:`ArenaReads`
(:mod:`arena.web.reads`), which :class:`NodeReads` implements over a node and
its broker. Nothing that changes state is exposed: the JSON API under
``/api/v1/`` and the pages are reads, public unless the node requires a
credential for reads (then the API needs ``Authorization: Bearer <token>``,
as the gRPC ``ArenaService`` does, or a browser signs in for a session
cookie). The pages are plain HTML, one small vanilla JS file and one CSS file
(``arena/web/static/``): no build step, no CDN. What one connection or address
may hold of the server is bounded (:mod:`arena.web.bounds`), and it serves TLS
when given a certificate.
"""

from arena.web.bounds import WebLimits
from arena.web.node_reads import NodeReads
from arena.web.reads import ArenaReads
from arena.web.server import WebConfig, WebServer, start_web, web_for

__all__ = ["ArenaReads", "NodeReads", "WebConfig", "WebLimits", "WebServer", "start_web", "web_for"]
