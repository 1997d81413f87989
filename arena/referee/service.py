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

import grpc
from belote.arena.v1 import arena_service_pb2 as apb
from belote.arena.v1 import arena_service_pb2_grpc as agrpc
from belote.arena.v1 import bot_service_pb2 as bpb
from belote.arena.v1 import bot_service_pb2_grpc as bgrpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from arena.referee.access import AccessError
from arena.referee.arena_service import ArenaServicer
from arena.referee.edge import Context, abort, address_of, token_of
from arena.referee.node import Node, NodeError

log = logging.getLogger("arena.referee")


class BotServicer(bgrpc.BotServiceServicer):
    def __init__(self, node: Node) -> None:
        self.node = node

    async def Connect(  # type: ignore[override]  # reads and writes through the context
        self, request_iterator: AsyncIterator[bpb.ConnectRequest], context: Context,
    ) -> None:
        first = await context.read()
        if first is grpc.aio.EOF or not first.HasField("hello"):
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                                "the first message on the stream must be Hello")
            return
        hello = first.hello
        try:
            entry = self.node.gate.bot_stream(hello.token or token_of(context), address_of(context))
        except AccessError as e:
            await abort(context, e)
        # the link writes ConnectResponse bytes it assembled (see _add_bot_service)
        try:
            link, stream_id, resumed = self.node.attach_stream(
                entry, context.write, name=hello.name, version=hello.version,
                concurrency=hello.concurrency or 1)
        except NodeError as e:
            await abort(context, e)
        log.info("bot %s connected (stream %d, %d seats)", entry.name, stream_id, link.concurrency)
        try:
            link.post(bpb.ConnectResponse(welcome=bpb.Welcome(
                bot_id=entry.bot_id, bot_name=entry.name, node_id=self.node.node_id,
                resumed=resumed, peer_addresses=self.node.peer_addresses,
            )))
            read, resolve = context.read, link.resolve
            while True:
                msg = await read()
                if msg is grpc.aio.EOF:
                    break
                link.messages_received += 1
                # an answer comes alone (action_reply) or in a batch (action_replies), or both
                kind = msg.WhichOneof("message")
                if kind == "action_reply":
                    reply = msg.action_reply
                    resolve(reply.request_id, reply.action)
                elif kind == "ping":
                    link.post(bpb.ConnectResponse(pong=bpb.Pong(nonce=msg.ping.nonce)))
                # a second Hello or an empty message is ignored
                for reply in msg.action_replies:
                    resolve(reply.request_id, reply.action)
        except (asyncio.CancelledError, grpc.aio.AioRpcError):
            pass
        finally:
            link.detach(stream_id)
            log.info("bot %s disconnected (stream %d)", entry.name, stream_id)


def _add_bot_service(servicer: BotServicer, server: grpc.aio.Server) -> None:
    """``bgrpc.add_BotServiceServicer_to_server`` with a pass-through response serializer.

    The bot links write each ConnectResponse already serialized: they assemble it
    from parts serialized once (:mod:`arena.referee.wire`), so that an event
    shared by several streams or a batch of requests is never copied from
    message to message. The requests from the bots are parsed as usual.
    """
    handlers: dict[str, grpc.RpcMethodHandler[bpb.ConnectRequest, bytes]] = {
        "Connect": grpc.stream_stream_rpc_method_handler(
            servicer.Connect, request_deserializer=bpb.ConnectRequest.FromString,
            response_serializer=None,
        ),
    }
    name = bpb.DESCRIPTOR.services_by_name["BotService"].full_name
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(name, handlers),))
    server.add_registered_method_handlers(name, handlers)


async def start_server(
    node: Node, address: str = "127.0.0.1:0", *, arena: ArenaServicer | None = None,
    credentials: grpc.ServerCredentials | None = None,
) -> tuple[grpc.aio.Server, int]:
    """Start a gRPC server for ``node`` (with ``arena`` as its ArenaService, or the node's own);
    returns it and the bound port.

    With ``credentials`` (:func:`arena.referee.tls.server_credentials`) the port
    speaks TLS only; without, plaintext (for loopback).
    """
    server = grpc.aio.server(options=[
        ("grpc.keepalive_time_ms", 20_000),
        ("grpc.keepalive_timeout_ms", 10_000),
        ("grpc.http2.min_ping_interval_without_data_ms", 5_000),
        ("grpc.keepalive_permit_without_calls", 1),
    ])
    _add_bot_service(BotServicer(node), server)
    agrpc.add_ArenaServiceServicer_to_server(arena or ArenaServicer(node), server)
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    names = [
        bpb.DESCRIPTOR.services_by_name["BotService"].full_name,
        apb.DESCRIPTOR.services_by_name["ArenaService"].full_name,
        health_pb2.DESCRIPTOR.services_by_name["Health"].full_name,
        reflection.SERVICE_NAME,
    ]
    reflection.enable_server_reflection(names, server)
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
    for name in names[:2]:
        await health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    await health_servicer.set("", health_pb2.HealthCheckResponse.SERVING)
    return server, port


async def stop_server(server: grpc.aio.Server, node: Node, grace: float = 1.0) -> None:
    await node.shutdown()
    with contextlib.suppress(Exception):
        await server.stop(grace)
