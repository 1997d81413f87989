"""The gRPC edge of a node: BotService, ArenaService, health and reflection.

Node errors become gRPC status codes here and nowhere else; a malformed
message gets INVALID_ARGUMENT, a bad token UNAUTHENTICATED, and no input
crashes the node.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import NoReturn

import grpc
from belote.arena.v1 import arena_service_pb2 as apb
from belote.arena.v1 import arena_service_pb2_grpc as agrpc
from belote.arena.v1 import bot_service_pb2 as bpb
from belote.arena.v1 import bot_service_pb2_grpc as bgrpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from arena.edge.guard import (
    ADMIN_CALLS,
    CALLS,
    HEALTH_CHECKS,
    HEALTH_WATCHES,
    OTHER_STREAMS,
    SPECTATORS,
    CallBounds,
    Lenient,
    Malformed,
    RequestGuard,
    Tarpit,
    bot_streams,
    open_calls,
    receive_cap,
    spectators,
)
from arena.edge.quietlog import quiet, quiet_grpc_logs
from arena.edge.rpc_metrics import RpcMetrics
from arena.referee.access import AccessError
from arena.referee.arena_service import ArenaServicer
from arena.referee.calls import Context, address_of, status_of, token_of
from arena.referee.node import Limits, Node, NodeError
from arena.referee.sessions import IDLE_MESSAGES_PER_S, BotLink
from arena.referee.standard import HealthServicer, add_reflection
from arena.referee.versions import VERSION_RULE, player_key, valid_version

log = logging.getLogger("arena.referee")


#: the longest Hello.name and Hello.version the node takes (characters)
MAX_HELLO_TEXT = 256
#: answers after which the stream's reader lets the event loop run others before its next message
YIELD_AFTER = 32


class Refused(Exception):
    """Why a bot stream is ended: its status, a sentence for the bot, and the kind of problem
    (one quiet log line per kind)."""

    def __init__(self, code: grpc.StatusCode, why: str, kind: str = "", hold: float | None = None) -> None:
        super().__init__(why)
        self.code = code
        self.kind = kind or code.name
        #: seconds the refusal is held before its status is sent (the tarpit's own when None)
        self.hold = hold


class BotServicer(bgrpc.BotServiceServicer):
    """``BotService.Connect``: one long-lived stream per bot process, bounded against hostile bots.

    Per address and in all, the streams open at once are bounded; a stream
    must send its Hello within ``hello_timeout``; its concurrency is capped; it
    may send no more answers than it was asked for, and few messages without
    one (:mod:`arena.referee.sessions`); a bot may open a stream about once a
    second. Each refusal ends the stream with its status and one quiet log line.
    """

    def __init__(self, node: Node, tarpit: Tarpit | None = None) -> None:
        self.node = node
        limits = node.config.limits
        self.streams = bot_streams(limits.max_streams_per_peer, limits.max_streams)
        #: where refusals wait before their status
        self.tarpit = tarpit or tarpit_of(limits)
        #: the registry writes of versions seen, under way (kept so that none is collected unfinished)
        self._notes: set[asyncio.Task[None]] = set()

    async def Connect(  # type: ignore[override]  # reads and writes through the context
        self, request_iterator: AsyncIterator[bpb.ConnectRequest], context: Context,
    ) -> None:
        peer = address_of(context)
        full = self.streams.open(peer)
        if full is not None:
            await self._refuse(context, Refused(grpc.StatusCode.RESOURCE_EXHAUSTED, full, "too many streams"))
        counted = True

        def uncount(_: object = None) -> None:
            nonlocal counted
            if counted:
                counted = False
                self.streams.close(peer)

        # counted until the call is over for grpc too (a cut stream's last write may still block),
        # or until it is refused: the tarpit bounds the refused streams it holds by itself
        context.add_done_callback(uncount)  # type: ignore[arg-type]  # stubs: a class
        try:
            hello = await self._hello(context)
            await self._serve(context, hello)
        except Refused as e:
            uncount()
            await self._refuse(context, e)

    async def _refuse(self, context: Context, refusal: Refused) -> NoReturn:
        """End the stream with ``refusal``'s status, after the tarpit's hold (but a stream refused
        for a late Hello has waited already)."""
        quiet.warning(("refused", refusal.kind), "ended a bot stream from %s: %s (%s)",
                      context.peer(), refusal, refusal.code.name)
        if refusal.kind != "late Hello":
            await self.tarpit.hold(context, refusal.hold)
        try:
            await context.abort(refusal.code, str(refusal))
        except grpc.aio.AbortError:
            raise
        except Exception:  # grpc could not send the status: the bot has gone meanwhile
            raise asyncio.CancelledError() from None
        raise AssertionError("context.abort returns only by raising")

    async def _hello(self, context: Context) -> bpb.Hello:
        timeout = self.node.config.limits.hello_timeout
        try:
            first = await asyncio.wait_for(context.read(), timeout)
        except TimeoutError:
            raise Refused(grpc.StatusCode.INVALID_ARGUMENT,
                          f"no Hello within {timeout:g} s of the stream's start", "late Hello") from None
        if type(first) is Malformed:
            raise Refused(grpc.StatusCode.INVALID_ARGUMENT,
                          f"undecodable ConnectRequest: {first.reason}", "undecodable")
        if first is grpc.aio.EOF or not first.HasField("hello"):
            raise Refused(grpc.StatusCode.INVALID_ARGUMENT, "the first message on the stream must be Hello",
                          "no Hello")
        hello: bpb.Hello = first.hello
        for field in ("name", "version"):
            if len(getattr(hello, field)) > MAX_HELLO_TEXT:
                raise Refused(grpc.StatusCode.INVALID_ARGUMENT,
                              f"Hello.{field} is longer than {MAX_HELLO_TEXT} characters", "long Hello")
        if hello.bot_version and not valid_version(hello.bot_version):
            raise Refused(grpc.StatusCode.INVALID_ARGUMENT,
                          f"bad Hello.bot_version {hello.bot_version[:40]!r}: {VERSION_RULE}", "bad version")
        return hello

    async def _serve(self, context: Context, hello: bpb.Hello) -> None:
        try:
            entry = await self.node.gate.bot_stream(hello.token or token_of(context), address_of(context))
        except AccessError as e:
            raise Refused(status_of(e), str(e), "credential") from None
        budget = self.node.link_for(entry).stream_budget
        if not budget.take():
            # held until the bot may open its next one (the tarpit's hold at most)
            raise Refused(grpc.StatusCode.RESOURCE_EXHAUSTED,
                          f"bot {entry.name} opens streams too often: wait a second", "stream rate",
                          hold=budget.wait())
        concurrency = min(hello.concurrency or 1, self.node.config.limits.max_concurrency)
        # the headers go now, alone: a status sent while the link's first write is in flight would
        # carry them too, and grpc refuses a second batch of headers (the bot would get no status)
        await context.send_initial_metadata(())
        # the link writes ConnectResponse bytes it assembled (see _add_bot_service)
        try:
            link, stream_id, resumed = self.node.attach_stream(
                entry, context.write, name=hello.name, version=hello.version, concurrency=concurrency,
                ladder=hello.ladder, bot_version=hello.bot_version)
        except (NodeError, AccessError) as e:
            raise Refused(status_of(e), str(e)) from None
        if hello.bot_version:
            note = asyncio.get_running_loop().create_task(self.node.note_version(entry, hello.bot_version))
            self._notes.add(note)
            note.add_done_callback(self._notes.discard)
        shown = player_key(entry.name, hello.bot_version)
        fields = {"bot": shown, "node": self.node.node_id, "stream": stream_id}
        quiet.info(("connected", entry.bot_id, hello.bot_version), "bot %s connected (stream %d, %d seats)",
                   shown, stream_id, link.concurrency, extra={"event": "bot_connected", **fields})
        promoted = entry.promoted_version
        if promoted and hello.bot_version != promoted:  # never seated as the bot: say why (now and then)
            where = f"under {shown} only (its tests)" if hello.bot_version else "nowhere (it says no version)"
            quiet.info(("not the bot", entry.bot_id, hello.bot_version),
                       "bot %s: stream %d plays %s: only the promoted version %s plays as %s", entry.name,
                       stream_id, where, promoted, entry.name,
                       extra={"event": "bot_not_seated_as_itself", **fields})
        try:
            link.post(bpb.ConnectResponse(welcome=bpb.Welcome(
                bot_id=entry.bot_id, bot_name=entry.name, node_id=self.node.node_id,
                resumed=resumed, peer_addresses=self.node.peer_addresses,
            )))
            await self._read(context, link)
        except (asyncio.CancelledError, grpc.aio.AioRpcError):
            pass
        finally:
            link.detach(stream_id)
            quiet.info(("disconnected", entry.bot_id, hello.bot_version), "bot %s disconnected (stream %d)",
                       shown, stream_id, extra={"event": "bot_disconnected", **fields})

    @staticmethod
    async def _read(context: Context, link: BotLink) -> None:
        """Read the bot's messages until it closes its side; :class:`Refused` for one it may not send."""
        read, resolve = context.read, link.resolve
        while True:
            msg = await read()
            if msg is grpc.aio.EOF:
                return
            if type(msg) is Malformed:
                raise Refused(grpc.StatusCode.INVALID_ARGUMENT, f"undecodable ConnectRequest: {msg.reason}",
                              "undecodable")
            link.messages_received += 1
            # an answer comes alone (action_reply) or in a batch (action_replies), or both
            kind = msg.WhichOneof("message")
            replies = msg.action_replies
            n = len(replies) + (kind == "action_reply")
            if n == 0:
                if not link.idle_budget.take():
                    raise Refused(grpc.StatusCode.RESOURCE_EXHAUSTED,
                                  f"too many messages without an answer (more than "
                                  f"{IDLE_MESSAGES_PER_S:g} a second)", "idle messages")
            elif not link.take_answers(n):
                raise Refused(grpc.StatusCode.INVALID_ARGUMENT,
                              f"more answers than requests: {n} in one message, "
                              f"{link.answer_credit} more expected at most", "too many answers")
            if kind == "action_reply":
                reply = msg.action_reply
                resolve(reply.request_id, reply.action)
            elif kind == "ping":
                link.post_pong(msg.ping.nonce)
            # a second Hello or an empty message is ignored
            for reply in replies:
                resolve(reply.request_id, reply.action)
            if n > YIELD_AFTER:
                await asyncio.sleep(0)  # one stream's batch never holds the others up for long


#: the bot streams' method (their messages are counted by the node's links: see arena.edge.rpc_metrics)
BOT_CONNECT = "/belote.arena.v1.BotService/Connect"


def _add_bot_service(servicer: BotServicer, server: grpc.aio.Server) -> None:
    """``bgrpc.add_BotServiceServicer_to_server`` with a pass-through response serializer.

    The bot links write each ConnectResponse already serialized: they assemble it
    from parts serialized once (:mod:`arena.referee.wire`), so that an event
    shared by several streams or a batch of requests is never copied from
    message to message. The requests from the bots are parsed leniently:
    undecodable bytes reach ``Connect`` as a :class:`Malformed`, which it refuses.
    """
    handlers: dict[str, grpc.RpcMethodHandler[bpb.ConnectRequest, bytes]] = {
        "Connect": grpc.stream_stream_rpc_method_handler(
            servicer.Connect, request_deserializer=Lenient(bpb.ConnectRequest.FromString),
            response_serializer=None,
        ),
    }
    name = bpb.DESCRIPTOR.services_by_name["BotService"].full_name
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(name, handlers),))
    server.add_registered_method_handlers(name, handlers)


def tarpit_of(limits: Limits) -> Tarpit:
    """Where a node's refusals wait before their status."""
    return Tarpit(limits.refusal_hold, limits.max_streams_per_peer, limits.max_held_refusals)


#: the short calls whose answers the replays' pace bounds: each counts as one read, whatever its size
PACED_CALLS = frozenset({"/belote.arena.v1.ArenaService/GetMatchRecord"})


def call_bounds(node: Node, tarpit: Tarpit) -> CallBounds:
    """The calls of each kind (but bot streams) that one address, and all, may hold open on ``node``,
    and the node's reads a second per address for the short ones."""
    limits = node.config.limits
    gate = node.gate
    return CallBounds({
        SPECTATORS: open_calls(SPECTATORS, limits.max_watchers_per_peer, limits.max_watchers),
        HEALTH_WATCHES: open_calls(HEALTH_WATCHES, limits.max_health_watches_per_peer,
                                   limits.max_health_watches),
        OTHER_STREAMS: open_calls(OTHER_STREAMS, limits.max_other_streams_per_peer, limits.max_other_streams),
        CALLS: open_calls(CALLS, limits.max_calls_per_peer, limits.max_calls),
        HEALTH_CHECKS: open_calls(HEALTH_CHECKS, limits.max_checks_per_peer, limits.max_checks),
        # the admin credential is the node's own: bounded in all only
        ADMIN_CALLS: open_calls(ADMIN_CALLS, limits.max_admin_calls, limits.max_admin_calls),
    }, lambda context: gate.is_admin(token_of(context)), tarpit, node.read_rates, PACED_CALLS)


async def start_server(
    node: Node, address: str = "127.0.0.1:0", *, arena: ArenaServicer | None = None,
    credentials: grpc.ServerCredentials | None = None,
) -> tuple[grpc.aio.Server, int]:
    """Start a gRPC server for ``node`` (with ``arena`` as its ArenaService, or the node's own);
    returns it and the bound port.

    With ``credentials`` (:func:`arena.edge.tls.server_credentials`) the port
    speaks TLS only; without, plaintext (for loopback).

    Every method of every service is guarded (:class:`RequestGuard`): a request
    that does not decode ends its call with INVALID_ARGUMENT. No request may be
    larger than :func:`receive_cap` (16 KiB with the default limits:
    RESOURCE_EXHAUSTED). The calls open at once are bounded by kind, per address
    and in all (:func:`call_bounds`; the bot streams by :class:`BotServicer`),
    and grpc's own bound lies above the sum of those (``Limits.concurrent_rpcs``):
    whatever strangers hold, a health check, an admin's call and a new bot stream
    get in. grpc's own log lines become one line each, without traceback,
    rate-limited.
    """
    limits = node.config.limits
    quiet_grpc_logs()
    tarpit = tarpit_of(limits)
    guard = RequestGuard(spectators(limits.max_watchers_per_match, limits.max_watchers), tarpit,
                         call_bounds(node, tarpit))
    # first: the calls the guard refuses are counted too
    counted = RpcMetrics(node.metrics.rpc, own_messages=frozenset({BOT_CONNECT}))
    server = grpc.aio.server(interceptors=[counted, guard], options=[
        ("grpc.keepalive_time_ms", 20_000),
        ("grpc.keepalive_timeout_ms", 10_000),
        ("grpc.http2.min_ping_interval_without_data_ms", 5_000),
        ("grpc.keepalive_permit_without_calls", 1),
        ("grpc.max_receive_message_length", receive_cap(limits.max_concurrency)),
        ("grpc.http2.lookahead_bytes", receive_cap(limits.max_concurrency)),
        ("grpc.http2.bdp_probe", 0),
    ], maximum_concurrent_rpcs=limits.concurrent_rpcs)
    bots = BotServicer(node, tarpit)
    node.metrics.bot_streams.set_function(lambda: bots.streams.open_calls)
    _add_bot_service(bots, server)
    agrpc.add_ArenaServiceServicer_to_server(arena or ArenaServicer(node), server)
    health_servicer = HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    names = [
        bpb.DESCRIPTOR.services_by_name["BotService"].full_name,
        apb.DESCRIPTOR.services_by_name["ArenaService"].full_name,
        health_pb2.DESCRIPTOR.services_by_name["Health"].full_name,
    ]
    add_reflection(names, server)
    try:
        if credentials is None:
            port = server.add_insecure_port(address)
        else:
            port = server.add_secure_port(address, credentials)
    except RuntimeError:  # grpc's "Failed to bind": the address is taken or not ours
        port = 0
    if port == 0:
        raise OSError(f"cannot listen on {address}")
    await server.start()
    for name in ("", *names[:2]):
        await health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)

    async def not_serving() -> None:  # a draining node: load balancers and probes stop sending
        for name in ("", *names[:2]):
            await health_servicer.set(name, health_pb2.HealthCheckResponse.NOT_SERVING)

    node.drain_hooks.append(not_serving)
    return server, port


async def stop_server(server: grpc.aio.Server, node: Node, grace: float = 1.0) -> None:
    await node.shutdown()
    with contextlib.suppress(Exception):
        await server.stop(grace)
