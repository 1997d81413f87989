"""The JSON API under ``/api/v1/``: reads only, each a 4xx JSON error on bad input, never a traceback.

- ``pools``: the rating pools and methods;
- ``leaderboard?pool=&method=bt|elo|openskill&offset=&limit=``;
- ``bots?offset=&limit=``, ``bots/{name}`` (its ratings per pool, its recent matches);
- ``tournaments?offset=&limit=``, ``tournaments/{id}`` (progress, standings, crosstable);
- ``matches/{id}``: its status; its record and replay once it is over;
- ``matches/{id}/events``: server-sent events, the public events of the match as they are played
  (``event: public``), then its result (``event: result``), then ``event: end``. Spectators are
  bounded per match and in all, like ``WatchMatch``'s;
- ``session``: ``POST`` signs a browser in to a node with private reads (a cookie), ``DELETE`` out.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Awaitable, Callable

from aiohttp import web

from arena.ratings.leaderboard import METHODS
from arena.referee.replay_views import SSE_END, sse_frame
from arena.web.reads import MAX_LIMIT, ArenaReads, BadRequest, NotFound, Prepared, ReadError, TooMany

log = logging.getLogger("arena.web")

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class Watchers:
    """The event streams open at once, per match and in all (``Limits.max_watchers*``)."""

    def __init__(self, per_match: int, total: int) -> None:
        self.per_match = per_match
        self.total = total
        self.open: Counter[str] = Counter()

    def enter(self, match_id: str) -> None:
        if sum(self.open.values()) >= self.total:
            raise TooMany("too many spectators on this node; retry later")
        if self.open[match_id] >= self.per_match:
            raise TooMany(f"too many spectators of {match_id}; retry later")
        self.open[match_id] += 1

    def leave(self, match_id: str) -> None:
        self.open[match_id] -= 1
        if self.open[match_id] <= 0:
            del self.open[match_id]


READS = web.AppKey("reads", ArenaReads)
WATCHERS = web.AppKey("watchers", Watchers)


def error(status: int, message: str) -> web.Response:
    return web.json_response({"error": message, "status": status}, status=status)


@web.middleware
async def json_errors(request: web.Request, handler: Handler) -> web.StreamResponse:
    """A read's refusal is its JSON status; an unknown API path a JSON 404; any other failure a 500
    with one line, logged here, never a traceback to the caller."""
    try:
        return await handler(request)
    except ReadError as e:
        return error(e.status, str(e))
    except web.HTTPException as e:
        if request.path.startswith("/api/"):
            return error(e.status, e.reason)
        raise
    except Exception:
        log.exception("%s %s failed", request.method, request.path)
        return error(500, "internal error")


#: the cookie a browser holds its reader's credential in, once signed in (``POST /api/v1/session``)
READ_COOKIE = "belote_read"
#: how long a browser stays signed in
READ_COOKIE_S = 12 * 3600
#: no credential is longer (tokens are 43 characters): a longer one is refused unread
MAX_TOKEN = 256


def credential(request: web.Request) -> str:
    """The caller's credential: ``Authorization: Bearer``, else the signed-in browser's cookie."""
    auth = request.headers.get("Authorization", "")
    token = auth[7:].strip() if auth[:7].lower() == "bearer " else request.cookies.get(READ_COOKIE, "")
    return token if len(token) <= MAX_TOKEN else ""


@web.middleware
async def readers_only(request: web.Request, handler: Handler) -> web.StreamResponse:
    """The API needs a reader's credential on a node with private reads (the pages do not: they hold
    no data). Programs send it as a bearer token; the pages, which cannot set a header on an
    ``EventSource``, send the cookie that signing in (:func:`sign_in`) set."""
    if request.path.startswith("/api/") and request.path != SESSION:
        request.app[READS].authorize(credential(request), request.remote or "")
    return await handler(request)


SESSION = "/api/v1/session"


async def sign_in(request: web.Request) -> web.Response:
    """``POST /api/v1/session`` with ``{"token": ...}``: a browser signs in to a node with private
    reads. The credential is checked as any read's is, then kept in a cookie that scripts cannot
    read (``HttpOnly``), sent to this site only (``SameSite=Strict``), over TLS only when the page
    came over TLS. Every read is a GET, so a cross-site form can change nothing with it."""
    try:
        body = await request.json() if request.can_read_body else {}
    except ValueError:
        raise BadRequest("the body must be JSON: {\"token\": \"...\"}") from None
    token = body.get("token") if isinstance(body, dict) else None
    if not isinstance(token, str) or not token or len(token) > MAX_TOKEN:
        raise BadRequest("the body must be JSON: {\"token\": \"...\"}")
    request.app[READS].authorize(token, request.remote or "")
    reply = web.json_response({"signed_in": True})
    reply.set_cookie(READ_COOKIE, token, max_age=READ_COOKIE_S, path="/api/", httponly=True,
                     samesite="Strict", secure=request.secure)
    return reply


async def sign_out(request: web.Request) -> web.Response:
    """``DELETE /api/v1/session``: forget this browser's credential."""
    reply = web.json_response({"signed_in": False})
    reply.del_cookie(READ_COOKIE, path="/api/")
    return reply


def _whole(request: web.Request, name: str, default: int, low: int, high: int) -> int:
    text = request.query.get(name)
    if text is None or text == "":
        return default
    if not text.isdigit() or not low <= int(text) <= high:
        raise BadRequest(f"{name} must be a whole number from {low} to {high}, not {text[:40]!r}")
    return int(text)


def page_of(request: web.Request, default_limit: int = 50) -> tuple[int, int]:
    return (_whole(request, "offset", 0, 0, 1 << 31),
            _whole(request, "limit", default_limit, 1, MAX_LIMIT))


async def pools(request: web.Request) -> web.Response:
    return web.json_response({"pools": await request.app[READS].pools(), "methods": list(METHODS)})


async def leaderboard(request: web.Request) -> web.Response:
    reads = request.app[READS]
    method = request.query.get("method", "bt")
    if method not in METHODS:
        raise BadRequest(f"method must be one of {', '.join(METHODS)}, not {method[:40]!r}")
    offset, limit = page_of(request)
    pool = request.query.get("pool", "")  # "": the preset pool with the most games
    return web.json_response((await reads.leaderboard(pool, method, offset, limit)).to_json())


async def rating_history(request: web.Request) -> web.Response:
    reads = request.app[READS]
    name = request.match_info["name"]
    await reads.bot(name)  # an unknown bot is a 404
    pools = await reads.pools()
    pool = request.query.get("pool") or (pools[0] if pools else "")
    if pool not in pools:
        raise NotFound(f"no rating pool {pool[:80]!r}")
    points = await reads.rating_history(pool, name)
    return web.json_response({"pool": pool, "bot": name, "history": [list(p) for p in points]})


async def bots(request: web.Request) -> web.Response:
    offset, limit = page_of(request)
    return web.json_response((await request.app[READS].bots(offset, limit)).to_json())


async def bot(request: web.Request) -> web.Response:
    return web.json_response((await request.app[READS].bot(request.match_info["name"])).to_json())


async def tournaments(request: web.Request) -> web.Response:
    offset, limit = page_of(request)
    return web.json_response((await request.app[READS].tournaments(offset, limit)).to_json())


async def tournament(request: web.Request) -> web.Response:
    return web.json_response((await request.app[READS].tournament(request.match_info["id"])).to_json())


#: a prepared answer goes out this many bytes at a time, each write waiting for the reader to take
#: what it was sent (the memory one reader holds, however large the answer)
CHUNK = 16 * 1024


async def send_prepared(request: web.Request, prepared: Prepared, headers: dict[str, str],
                        ) -> web.StreamResponse:
    """Send a prepared answer a chunk at a time, then give its reader's place back."""
    try:
        response = web.StreamResponse(headers=headers)
        response.content_length = len(prepared.body)
        await response.prepare(request)
        try:
            async for chunk in prepared.chunks(CHUNK):
                if request.transport is None or request.transport.is_closing():
                    break  # the reader left: its place goes back now, not at the next write
                await response.write(chunk)
            await response.write_eof()
        except ConnectionError:
            pass  # the reader left
        return response
    finally:
        prepared.close()


async def match(request: web.Request) -> web.StreamResponse:
    view = await request.app[READS].match(request.match_info["id"], request.remote or "")
    if isinstance(view, Prepared):
        return await send_prepared(request, view, {"Content-Type": "application/json; charset=utf-8"})
    return web.json_response(view.to_json())


EVENT_STREAM = {"Content-Type": "text/event-stream", "Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


async def match_events(request: web.Request) -> web.StreamResponse:
    match_id = request.match_info["id"]
    watchers = request.app[WATCHERS]
    watchers.enter(match_id)
    try:
        events = await request.app[READS].match_events(match_id, request.remote or "")
        if isinstance(events, Prepared):  # a finished match: its whole stream, prepared
            return await send_prepared(request, events, EVENT_STREAM)
        response = web.StreamResponse(headers=EVENT_STREAM)
        await response.prepare(request)
        try:
            async for event in events:
                kind = "result" if event.get("kind") == "result" else "public"
                await response.write(sse_frame(kind, event))
            await response.write(SSE_END)
        except ConnectionError:
            pass  # the spectator left
        except ReadError as e:  # the stream has begun: its status is sent; the error ends it
            await response.write(f"event: error\ndata: {json.dumps({'error': str(e)})}\n\n".encode())
        return response
    finally:
        watchers.leave(match_id)


def add_routes(app: web.Application) -> None:
    app.router.add_get("/api/v1/pools", pools)
    app.router.add_get("/api/v1/leaderboard", leaderboard)
    app.router.add_get("/api/v1/bots", bots)
    app.router.add_get("/api/v1/bots/{name}", bot)
    app.router.add_get("/api/v1/bots/{name}/history", rating_history)
    app.router.add_get("/api/v1/tournaments", tournaments)
    app.router.add_get("/api/v1/tournaments/{id}", tournament)
    app.router.add_get("/api/v1/matches/{id}", match)
    app.router.add_get("/api/v1/matches/{id}/events", match_events)
    app.router.add_post(SESSION, sign_in)
    app.router.add_delete(SESSION, sign_out)


__all__ = ["READS", "READ_COOKIE", "WATCHERS", "Watchers", "add_routes", "credential", "json_errors",
           "readers_only"]
