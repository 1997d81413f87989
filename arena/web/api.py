"""The JSON API under ``/api/v1/``: reads only, each a 4xx JSON error on bad input, never a traceback.

- ``pools``: the rating pools and methods;
- ``leaderboard?pool=&method=bt|elo|openskill&offset=&limit=&q=``: ``q`` keeps the bots whose name
  holds it (any case), each at its rank in the pool; each row says whether its bot is ``connected``
  now (to any node) and whether its rating is ``provisional`` (too few games or too wide an interval);
- ``bots?offset=&limit=``, ``bots/{name}`` (its ratings per pool, its recent matches),
  ``bots/{name}/history?pool=&method=elo|bt`` (its online Elo in a pool as it went, or its
  Bradley-Terry rating as the pool was fitted now and then), ``bots/{name}/versions`` (the
  versions it connected with, newest first, and its latest SPRT of a new version: docs/web.md),
  ``bots/{name}/matches?opponent=&result=&pool=&version=&tournament=&ladder=&since=&until=&cursor=&limit=``
  (its history, newest first, paged by a cursor) and ``bots/{name}/stats`` (its statistics and
  head-to-head): docs/web.md#a-bots-history-and-statistics;
- ``tournaments?offset=&limit=&tests=``, the latest first: the tournaments, or with ``tests=1`` the
  version tests (the arena's own, listed apart), each page saying how many of the other kind there are
  (``apart``); ``tournaments/{id}`` (progress, standings, crosstable),
  ``tournaments/{id}/matches?offset=&limit=`` (its finished matches in schedule order);
  ``tournaments/{id}/standings.csv`` (its standings, a file safe in a spreadsheet),
  ``tournaments/{id}/records.jsonl`` and ``records.zip`` (every finished match's record, a sealed
  table's once it is no longer sealed, in one file sent a record at a time);
- ``ladders`` (each pool's ladder: its setting and bot count), ``ladders/{pool}?offset=&limit=``
  (its setting, bots, matches in progress, and the pool's standings with intervals);
- ``schedules?offset=&limit=``: the scheduled tournaments, each with its next occurrence and what to
  know of its bots (``why``), never its seed;
- ``matches/{id}``: its status; its record and replay once it is over;
- ``matches/{id}/record``: its record (docs/records.md) as a file to save, once it is over and no
  longer sealed (a 409 before: it holds every hand and the seed);
- ``matches/{id}/analysis``: every decision of a finished match analysed (docs/analysis.md), once it
  is over and no longer sealed (a 409 before); a 202 ``{"state": "pending", "position": N}`` while it
  is made or waits its turn (the first read asks for it);
- ``matches/{id}/events``: server-sent events, the public events of the match as they are played
  (``event: public``), then its result (``event: result``), then ``event: end``. Spectators are
  bounded per match and in all, like ``WatchMatch``'s, and per address;
- ``session``: ``POST`` signs a browser in to a node with private reads (a cookie holding a session
  id, :mod:`arena.web.sessions`), ``DELETE`` out; both only from the node's own pages.

Bad input is a 4xx with one JSON line saying why; what a client did that the
node could not serve (it hung up, say) and any failure of the node's own is
logged as one quiet line per kind, never a traceback.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections import Counter
from collections.abc import Awaitable, Callable

from aiohttp import web

from arena.edge.guard import Tarpit, host_key
from arena.edge.quietlog import QuietLog
from arena.node.history import HistoryError, parse_query
from arena.ratings.leaderboard import METHODS
from arena.referee.replay_views import SSE_END, sse_frame
from arena.referee.replays import SendTimeout, Stalled
from arena.tournament.export import ZipStream, jsonl_line, record_file_name
from arena.web.reads import (
    MAX_LIMIT,
    MAX_OFFSET,
    ArenaReads,
    BadRequest,
    Forbidden,
    NotFound,
    Prepared,
    ReadError,
    RecordsExport,
    TooMany,
    TooSlow,
    Unauthorized,
    row_json,
)
from arena.web.sessions import Sessions

log = logging.getLogger("arena.web")
quiet = QuietLog(log)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
#: where a refused request waits before its answer (arena.web.bounds sizes it)
REFUSALS = web.AppKey("refusals", Tarpit)


class Watchers:
    """The event streams open at once, per match, per address and in all (``Limits.max_watchers*``,
    ``WebLimits.watchers_per_address``)."""

    def __init__(self, per_match: int, total: int, per_address: int | None = None) -> None:
        self.per_match = per_match
        self.total = total
        self.per_address = total if per_address is None else per_address
        self.open: Counter[str] = Counter()
        self.by_address: Counter[str] = Counter()

    def enter(self, match_id: str, address: str = "") -> None:
        if sum(self.open.values()) >= self.total:
            raise TooMany("too many spectators on this node; retry later")
        if self.open[match_id] >= self.per_match:
            raise TooMany(f"too many spectators of {match_id}; retry later")
        if self.by_address[address] >= self.per_address:
            raise TooMany(f"{self.per_address} event streams are open from this address, its limit; "
                          "close one or retry later")
        self.open[match_id] += 1
        self.by_address[address] += 1

    def leave(self, match_id: str, address: str = "") -> None:
        for table, key in ((self.open, match_id), (self.by_address, address)):
            table[key] -= 1
            if table[key] <= 0:
                del table[key]


READS = web.AppKey("reads", ArenaReads)
WATCHERS = web.AppKey("watchers", Watchers)
SESSIONS = web.AppKey("sessions", Sessions)
#: the origin the pages are reached at (``serve --http-origin``: behind a proxy that terminates TLS);
#: "" for the request's own scheme and Host
ORIGIN = web.AppKey("origin", str)
#: seconds a write to a reader of a match may wait for it (``Limits.send_timeout``)
SEND_TIMEOUT = web.AppKey("send_timeout", float)
#: seconds a sign-in's body may take to arrive once its head has
BODY_S = 5.0


def error(status: int, message: str) -> web.Response:
    return web.json_response({"error": message, "status": status}, status=status)


@web.middleware
async def json_errors(request: web.Request, handler: Handler) -> web.StreamResponse:
    """A read's refusal is its JSON status; an unknown API path a JSON 404; a client that hung up
    nothing; any other failure a 500 and one quiet line per kind, never a traceback."""
    try:
        return await handler(request)
    except ReadError as e:
        return error(e.status, str(e))
    except web.HTTPException as e:
        if request.path.startswith("/api/"):
            return error(e.status, e.reason)
        raise
    except ConnectionError:
        # the client left before its answer (a spectator closing the page): there is no one to tell
        return web.Response(status=499)
    except Exception as e:
        if isinstance(e, OSError) and request.path.startswith("/static/"):
            return web.Response(status=404, text="404: Not Found")  # a name no file has (too long, say)
        route = request.match_info.route.resource
        where = route.canonical if route is not None else "?"
        quiet.warning(("failed", where, type(e).__name__), "%s %s failed: %s: %s", request.method,
                      where, type(e).__name__, str(e)[:200])
        return error(500, "internal error")


#: the cookie a signed-in browser holds its session id in (``POST /api/v1/session``), for
#: :data:`arena.web.sessions.SESSION_S`
READ_COOKIE = "belote_read"
#: no credential is longer (tokens are 43 characters): a longer one is refused unread
MAX_TOKEN = 256


def bearer(request: web.Request) -> str:
    """The credential of ``Authorization: Bearer`` ("" for none, or one too long to be one)."""
    auth = request.headers.get("Authorization", "")
    token = auth[7:].strip() if auth[:7].lower() == "bearer " else ""
    return token if len(token) <= MAX_TOKEN else ""


@web.middleware
async def readers_only(request: web.Request, handler: Handler) -> web.StreamResponse:
    """The API needs a reader on a node with private reads (the pages do not: they hold no data).
    Programs send their credential as a bearer token; the pages, which cannot set a header on an
    ``EventSource``, send the session cookie that signing in (:func:`sign_in`) set."""
    if request.path.startswith("/api/") and request.path != SESSION:
        token = bearer(request)
        if token or not request.app[SESSIONS].valid(request.cookies.get(READ_COOKIE, "")):
            await authorize(request, token)
    return await handler(request)


async def authorize(request: web.Request, token: str) -> None:
    """May ``token`` read here? A refusal (a wrong credential, none where one is needed, an address
    throttled for guessing) waits the node's refusal hold first, as the gRPC edge's do: a guesser
    asking again at once asks once a second a connection."""
    try:
        await request.app[READS].authorize(token, request.remote or "")
    except (Unauthorized, TooMany):
        await request.app[REFUSALS].hold_key(host_key(request.remote or ""))
        raise


SESSION = "/api/v1/session"


def own_origin(request: web.Request) -> str:
    """The origin this node's pages are served from: ``serve --http-origin``, else this request's
    scheme and Host."""
    return request.app[ORIGIN] or f"{request.scheme}://{request.host}"


def from_own_pages(request: web.Request) -> None:
    """Raise :class:`Forbidden` unless the request came from this node's own pages: its ``Origin``
    is the node's (a browser sends it with every POST and DELETE, and no page can forge it), and
    its body JSON (which a cross-site form cannot send without the node's leave). So another site
    cannot sign a visitor's browser in to an account of its choosing (login CSRF), nor out."""
    origin, own = request.headers.get("Origin", ""), own_origin(request)
    if origin.lower() != own.lower():
        came = f"its Origin is {origin[:80]!r}" if origin else "it has no Origin header"
        raise Forbidden(f"the session changes from this site's own pages only ({own[:80]}): {came}")
    if request.method == "POST" and request.content_type != "application/json":
        raise Forbidden(f"signing in needs Content-Type: application/json, not {request.content_type[:80]!r}")


async def _json_body(request: web.Request) -> object:
    """The request's body as JSON, read within :data:`BODY_S` (its size is bounded by the app)."""
    try:
        async with asyncio.timeout(BODY_S):
            raw = await request.read()
    except TimeoutError:
        raise TooSlow(f"the body did not arrive within {BODY_S:g} s") from None
    try:
        return json.loads(raw) if raw else {}
    except (ValueError, RecursionError):  # not JSON, not UTF-8, or nested past Python's stack
        raise BadRequest("the body must be JSON: {\"token\": \"...\"}") from None


async def sign_in(request: web.Request) -> web.Response:
    """``POST /api/v1/session`` with ``{"token": ...}``: a browser signs in to a node with private
    reads. The credential is checked as any read's is, then forgotten: the browser's cookie holds a
    random session id, read-only whatever the credential (an admin's too), which scripts cannot read
    (``HttpOnly``), sent to this site only (``SameSite=Strict``, path ``/api/``), over TLS only
    (``Secure``) when the pages are served over TLS. Only the node's own pages may sign in."""
    from_own_pages(request)
    body = await _json_body(request)
    token = body.get("token") if isinstance(body, dict) else None
    if not isinstance(token, str) or not token or len(token) > MAX_TOKEN:
        raise BadRequest("the body must be JSON: {\"token\": \"...\"}")
    await authorize(request, token)
    sessions = request.app[SESSIONS]
    sessions.close(request.cookies.get(READ_COOKIE, ""))  # signing in again replaces the session
    reply = web.json_response({"signed_in": True})
    reply.set_cookie(READ_COOKIE, sessions.open(token), max_age=int(sessions.ttl), path="/api/",
                     httponly=True, samesite="Strict",
                     secure=request.secure or own_origin(request).lower().startswith("https://"))
    return reply


async def sign_out(request: web.Request) -> web.Response:
    """``DELETE /api/v1/session``: the node forgets this browser's session, and the browser its cookie."""
    from_own_pages(request)
    request.app[SESSIONS].close(request.cookies.get(READ_COOKIE, ""))
    reply = web.json_response({"signed_in": False})
    reply.del_cookie(READ_COOKIE, path="/api/")
    return reply


def _whole(request: web.Request, name: str, default: int, low: int, high: int) -> int:
    text = request.query.get(name)
    if text is None or text == "":
        return default
    # ASCII digits only (str.isdigit() takes "²", which int() refuses), and no more of them than
    # ``high`` has (int() refuses thousands of digits)
    digits = text.isascii() and text.isdigit() and len(text) <= len(str(high))
    if not digits or not low <= int(text) <= high:
        raise BadRequest(f"{name} must be a whole number from {low} to {high}, not {text[:40]!r}")
    return int(text)


def page_of(request: web.Request, default_limit: int = 50) -> tuple[int, int]:
    return (_whole(request, "offset", 0, 0, MAX_OFFSET),
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
    search = request.query.get("q", "").strip()
    if len(search) > MAX_SEARCH:
        raise BadRequest(f"q (a part of a bot's name) is at most {MAX_SEARCH} characters, not {len(search)}")
    return web.json_response((await reads.leaderboard(pool, method, offset, limit, search)).to_json())


#: the longest search of the leaderboard: a bot's name's
MAX_SEARCH = 64


#: why a node may have no rating pool, and what to do about it
NO_POOL_YET = ("there is no rating pool yet: ratings come from tournaments (belote-arena tournament create), "
               "and single matches (match start) are unrated")


async def rating_history(request: web.Request) -> web.Response:
    reads = request.app[READS]
    name = request.match_info["name"]
    await reads.bot(name)  # an unknown bot is a 404
    pools = await reads.pools()
    if not pools:
        raise NotFound(NO_POOL_YET)
    pool = request.query.get("pool") or pools[0]
    if pool not in pools:
        raise NotFound(f"no rating pool {pool[:80]!r}")
    method = request.query.get("method") or "elo"
    if method == "bt":
        return web.json_response((await reads.bt_history(pool, name)).to_json())
    if method != "elo":
        raise BadRequest(f"method must be elo or bt, not {method[:40]!r}")
    return web.json_response((await reads.rating_history(pool, name)).to_json())


async def bot_matches(request: web.Request) -> web.Response:
    try:
        query = parse_query(dict(request.query))
    except HistoryError as e:
        raise BadRequest(str(e)) from None
    page = await request.app[READS].bot_matches(request.match_info["name"], query)
    return web.json_response(page.to_json())


async def bot_stats(request: web.Request) -> web.Response:
    return web.json_response(await request.app[READS].bot_stats(request.match_info["name"]))


async def bots(request: web.Request) -> web.Response:
    offset, limit = page_of(request)
    return web.json_response((await request.app[READS].bots(offset, limit)).to_json())


async def bot(request: web.Request) -> web.Response:
    return web.json_response((await request.app[READS].bot(request.match_info["name"])).to_json())


async def bot_versions(request: web.Request) -> web.Response:
    return web.json_response((await request.app[READS].versions(request.match_info["name"])).to_dict())


async def tournaments(request: web.Request) -> web.Response:
    """The tournaments, or with ``?tests=1`` the version tests (the arena's own, listed apart)."""
    offset, limit = page_of(request)
    tests = _whole(request, "tests", 0, 0, 1)
    page = await request.app[READS].tournaments(offset, limit, tests == 1)
    return web.json_response(page.to_json())


async def tournament(request: web.Request) -> web.Response:
    return web.json_response((await request.app[READS].tournament(request.match_info["id"])).to_json())


async def tournament_matches(request: web.Request) -> web.Response:
    offset, limit = page_of(request)
    page = await request.app[READS].tournament_matches(request.match_info["id"], offset, limit)
    return web.json_response(page.to_json())


async def ladders(request: web.Request) -> web.Response:
    return web.json_response({"ladders": [row_json(r) for r in await request.app[READS].ladders()]})


async def ladder(request: web.Request) -> web.Response:
    offset, limit = page_of(request)
    detail = await request.app[READS].ladder(request.match_info["pool"], offset, limit)
    return web.json_response(detail.to_json())


async def schedules(request: web.Request) -> web.Response:
    offset, limit = page_of(request)
    return web.json_response((await request.app[READS].schedules(offset, limit)).to_json())


#: a prepared answer goes out this many bytes at a time, each write waiting for the reader to take
#: what it was sent (the memory one reader holds, however large the answer)
CHUNK = 16 * 1024


def send_timeout(request: web.Request) -> SendTimeout:
    """The send timeout of the reader of ``request`` (a finished match's page or events, a live event
    stream): aiohttp's writes would wait for a reader that takes nothing as long as its connection
    lives, holding its place (a replay's, a spectator's)."""
    return SendTimeout(request.app[SEND_TIMEOUT])


def cut(request: web.Request, why: Stalled) -> None:
    """End the connection of a reader who took nothing for the send timeout."""
    quiet.info("stalled reader", "cut an HTTP reader from %s: %s", request.remote, why)
    if request.transport is not None:
        request.transport.abort()


async def send_prepared(request: web.Request, prepared: Prepared, headers: dict[str, str],
                        ) -> web.StreamResponse:
    """Send a prepared answer a chunk at a time, then give its reader's place back."""
    try:
        response = web.StreamResponse(headers=headers)
        response.content_length = len(prepared.body)
        await response.prepare(request)
        with send_timeout(request) as timeout:
            try:
                async for chunk in prepared.chunks(CHUNK):
                    if request.transport is None or request.transport.is_closing():
                        break  # the reader left: its place goes back now, not at the next write
                    await timeout.send(response.write(chunk))
                await timeout.send(response.write_eof())
            except ConnectionError:
                pass  # the reader left
            except Stalled as e:
                cut(request, e)
        return response
    finally:
        prepared.close()


async def match(request: web.Request) -> web.StreamResponse:
    view = await request.app[READS].match(request.match_info["id"], request.remote or "")
    if isinstance(view, Prepared):
        return await send_prepared(request, view, {"Content-Type": "application/json; charset=utf-8"})
    return web.json_response(view.to_json())


#: what a downloaded record's file name keeps of its match id (ids are short and plain already)
UNSAFE_IN_FILE_NAME = re.compile(r"[^A-Za-z0-9._-]")


async def match_record(request: web.Request) -> web.StreamResponse:
    """The record as a file to save (``Content-Disposition: attachment``), the replay page's download."""
    match_id = request.match_info["id"]
    prepared = await request.app[READS].match_record(match_id, request.remote or "")
    name = UNSAFE_IN_FILE_NAME.sub("_", match_id)[:100] or "match"
    return await send_prepared(request, prepared, {
        "Content-Type": "application/json; charset=utf-8",
        "Content-Disposition": f'attachment; filename="{name}.json"'})


def file_name(text: str, suffix: str) -> str:
    """A downloaded file's name: ``text`` in plain characters, then ``suffix``."""
    return (UNSAFE_IN_FILE_NAME.sub("_", text)[:100] or "tournament") + suffix


async def tournament_standings_csv(request: web.Request) -> web.Response:
    """The standings as a CSV file (safe to open in a spreadsheet: :mod:`arena.tournament.export`)."""
    tid = request.match_info["id"]
    text = await request.app[READS].tournament_standings_csv(tid)
    return web.Response(body=text.encode(), headers={
        "Content-Type": "text/csv; charset=utf-8",
        "Content-Disposition": f'attachment; filename="{file_name(tid, "-standings.csv")}"'})


#: a tournament's records as a file: its type and name's end, by the route's last part
RECORD_FILES = {"records.jsonl": ("application/x-ndjson", "-records.jsonl"),
                "records.zip": ("application/zip", "-records.zip")}


async def tournament_records(request: web.Request) -> web.StreamResponse:
    """Every finished match's record as one JSON Lines file or one zip, sent a record at a time (one
    in memory), built off the event loop, at the pace of the reader's place among the replays. The
    tables still sealed and the aborted matches are left out, and counted in ``X-Records-Sealed`` and
    ``X-Records-Aborted``; a record that cannot be read once the file has begun cuts it short (a
    broken download, never a file that looks whole)."""
    tid = request.match_info["id"]
    kind = request.path.rpartition("/")[2]
    content_type, suffix = RECORD_FILES[kind]
    export = await request.app[READS].tournament_records(tid, request.remote or "")
    try:
        response = web.StreamResponse(headers={
            "Content-Type": content_type,
            "Content-Disposition": f'attachment; filename="{file_name(tid, suffix)}"',
            "X-Records": str(len(export.match_ids)), "X-Records-Sealed": str(export.sealed),
            "X-Records-Aborted": str(export.aborted)})
        await response.prepare(request)
        zipped = ZipStream() if kind == "records.zip" else None
        with send_timeout(request) as timeout:
            try:
                async for match_id, record in export.records:
                    if request.transport is None or request.transport.is_closing():
                        break  # the reader left
                    piece = (jsonl_line(record) if zipped is None else
                             await asyncio.to_thread(zipped.add, record_file_name(match_id), record))
                    await _send(request, response, timeout, export, piece)
                else:
                    if zipped is not None:
                        await _send(request, response, timeout, export, zipped.close())
                    await timeout.send(response.write_eof())
            except ConnectionError:
                pass  # the reader left
            except Stalled as e:
                cut(request, e)
            except ReadError as e:  # begun: its status is sent; the file is cut short
                quiet.warning(("export", type(e).__name__), "the records of %s cut short: %s", tid[:80], e)
                if request.transport is not None:
                    request.transport.abort()
        return response
    finally:
        await export.close()


async def _send(request: web.Request, response: web.StreamResponse, timeout: SendTimeout,
                export: RecordsExport, data: bytes) -> None:
    """``data`` to the reader a chunk at a time, at the pace of its place among the replays."""
    view = memoryview(data)
    for at in range(0, len(view), CHUNK):
        chunk = view[at:at + CHUNK]
        if export.place is not None:
            await export.place.send(len(chunk))
        await timeout.send(response.write(chunk))


async def match_analysis(request: web.Request) -> web.StreamResponse:
    """The match's analysis (docs/analysis.md), or ``{"state": "pending", "position": N}`` (a 202)
    while it is made (0) or waits its turn (N from 1): the first read asks for it."""
    found = await request.app[READS].match_analysis(request.match_info["id"], request.remote or "")
    if isinstance(found, int):
        return web.json_response({"state": "pending", "position": found}, status=202,
                                 headers={"Retry-After": "5"})
    return await send_prepared(request, found, {"Content-Type": "application/json; charset=utf-8"})


EVENT_STREAM = {"Content-Type": "text/event-stream", "Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


async def match_events(request: web.Request) -> web.StreamResponse:
    match_id = request.match_info["id"]
    watchers = request.app[WATCHERS]
    address = host_key(request.remote or "")
    watchers.enter(match_id, address)
    try:
        events = await request.app[READS].match_events(match_id, request.remote or "")
        if isinstance(events, Prepared):  # a finished match: its whole stream, prepared
            return await send_prepared(request, events, EVENT_STREAM)
        response = web.StreamResponse(headers=EVENT_STREAM)
        await response.prepare(request)
        with send_timeout(request) as timeout:
            try:
                async for event in events:
                    kind = "result" if event.get("kind") == "result" else "public"
                    await timeout.send(response.write(sse_frame(kind, event)))
                await timeout.send(response.write(SSE_END))
            except ConnectionError:
                pass  # the spectator left
            except Stalled as e:
                cut(request, e)
            except ReadError as e:  # the stream has begun: its status is sent; the error ends it
                await response.write(f"event: error\ndata: {json.dumps({'error': str(e)})}\n\n".encode())
        return response
    finally:
        watchers.leave(match_id, address)


def add_routes(app: web.Application) -> None:
    app.router.add_get("/api/v1/pools", pools)
    app.router.add_get("/api/v1/leaderboard", leaderboard)
    app.router.add_get("/api/v1/bots", bots)
    app.router.add_get("/api/v1/bots/{name}", bot)
    app.router.add_get("/api/v1/bots/{name}/history", rating_history)
    app.router.add_get("/api/v1/bots/{name}/versions", bot_versions)
    app.router.add_get("/api/v1/bots/{name}/matches", bot_matches)
    app.router.add_get("/api/v1/bots/{name}/stats", bot_stats)
    app.router.add_get("/api/v1/tournaments", tournaments)
    app.router.add_get("/api/v1/tournaments/{id}", tournament)
    app.router.add_get("/api/v1/tournaments/{id}/matches", tournament_matches)
    app.router.add_get("/api/v1/tournaments/{id}/standings.csv", tournament_standings_csv)
    for kind in RECORD_FILES:
        app.router.add_get(f"/api/v1/tournaments/{{id}}/{kind}", tournament_records)
    app.router.add_get("/api/v1/ladders", ladders)
    app.router.add_get("/api/v1/ladders/{pool}", ladder)
    app.router.add_get("/api/v1/schedules", schedules)
    app.router.add_get("/api/v1/matches/{id}", match)
    app.router.add_get("/api/v1/matches/{id}/events", match_events)
    app.router.add_get("/api/v1/matches/{id}/record", match_record)
    app.router.add_get("/api/v1/matches/{id}/analysis", match_analysis)
    app.router.add_post(SESSION, sign_in)
    app.router.add_delete(SESSION, sign_out)


__all__ = ["ORIGIN", "READS", "READ_COOKIE", "SEND_TIMEOUT", "SESSIONS", "WATCHERS", "Watchers", "add_routes",
           "bearer", "json_errors", "readers_only"]
