"""The node answers the standard gRPC health check and server reflection."""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
import grpc.aio
import pytest
from google.protobuf.descriptor_pool import DescriptorPool
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import ProtoReflectionDescriptorDatabase

from arena.harness import local_arena

from .arena_helpers import FAST, arun

BOT_SERVICE = "belote.arena.v1.BotService"
ARENA_SERVICE = "belote.arena.v1.ArenaService"


def health_stub(channel: grpc.aio.Channel) -> Any:
    """The Health client (the grpc_health type stubs list none of its methods)."""
    return health_pb2_grpc.HealthStub(channel)


@pytest.mark.parametrize("service", ["", BOT_SERVICE, ARENA_SERVICE])
def test_the_health_check_reports_serving(service: str) -> None:
    async def main() -> int:
        async with local_arena(time=FAST) as arena, grpc.aio.insecure_channel(arena.address) as channel:
            request = health_pb2.HealthCheckRequest(service=service)
            reply = await health_stub(channel).Check(request, timeout=5)
            status: int = reply.status
            return status

    assert arun(main()) == health_pb2.HealthCheckResponse.SERVING


def test_the_health_check_of_an_unknown_service_is_not_found() -> None:
    async def main() -> grpc.StatusCode:
        async with local_arena(time=FAST) as arena, grpc.aio.insecure_channel(arena.address) as channel:
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await health_stub(channel).Check(
                    health_pb2.HealthCheckRequest(service="no.such.Service"), timeout=5)
            return info.value.code()

    assert arun(main()) == grpc.StatusCode.NOT_FOUND


def test_reflection_lists_the_bot_and_arena_services() -> None:
    async def main() -> list[str]:
        async with local_arena(time=FAST) as arena, grpc.aio.insecure_channel(arena.address) as channel:
            stub: Any = reflection_pb2_grpc.ServerReflectionStub(channel)  # type: ignore[arg-type]  # typed: sync channels
            call = stub.ServerReflectionInfo(
                iter([reflection_pb2.ServerReflectionRequest(list_services="")]), timeout=5)
            replies = [reply async for reply in call]
        return [s.name for r in replies for s in r.list_services_response.service]

    names = arun(main())
    assert BOT_SERVICE in names
    assert ARENA_SERVICE in names


def test_reflection_describes_the_methods_of_the_services() -> None:
    """A generic client (grpcurl, Postman) learns every RPC from the node alone."""
    def describe(address: str) -> dict[str, list[str]]:
        with grpc.insecure_channel(address) as channel:
            database = ProtoReflectionDescriptorDatabase(channel)
            pool = DescriptorPool(database)
            services = set(database.get_services())
            assert {BOT_SERVICE, ARENA_SERVICE} <= services
            return {
                name: [m.name for m in pool.FindServiceByName(name).methods]
                for name in (BOT_SERVICE, ARENA_SERVICE)
            }

    async def main() -> dict[str, list[str]]:
        async with local_arena(time=FAST) as arena:
            # the blocking client runs in a thread: the node serves on this loop
            return await asyncio.to_thread(describe, arena.address)

    methods = arun(main())
    assert methods[BOT_SERVICE] == ["Connect"]
    assert set(methods[ARENA_SERVICE]) == {
        "RegisterBot", "RotateBotToken", "RevokeBot", "CreateInvite", "ListBots", "StartMatch", "CancelMatch",
        "ListMatches", "GetMatch", "GetMatchRecord", "WatchMatch", "CreateTournament", "GetTournament",
        "ListTournaments", "CancelTournament", "ResumeTournament", "GetLeaderboard", "GetBot", "AuditTournament",
    }


def test_reflection_answers_on_v1_as_current_tools_ask_first() -> None:
    """grpcurl and buf curl ask ``grpc.reflection.v1`` first; its messages are v1alpha's, renamed."""
    async def main() -> tuple[list[str], int]:
        async with local_arena(time=FAST) as arena, grpc.aio.insecure_channel(arena.address) as channel:
            call: Any = channel.stream_stream(
                "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
                request_serializer=reflection_pb2.ServerReflectionRequest.SerializeToString,
                response_deserializer=reflection_pb2.ServerReflectionResponse.FromString)()
            await call.write(reflection_pb2.ServerReflectionRequest(list_services=""))
            listed = await call.read()
            await call.write(reflection_pb2.ServerReflectionRequest(file_containing_symbol=ARENA_SERVICE))
            described = await call.read()
            await call.done_writing()
            return ([s.name for s in listed.list_services_response.service],
                    len(described.file_descriptor_response.file_descriptor_proto))

    services, files = arun(main())
    assert {BOT_SERVICE, ARENA_SERVICE, "grpc.health.v1.Health"} <= set(services)
    assert files >= 1
