"""The node answers the standard gRPC health check and server reflection."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
import pytest
from google.protobuf.descriptor_pb2 import FileDescriptorProto
from google.protobuf.descriptor_pool import DescriptorPool
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import ProtoReflectionDescriptorDatabase

from arena.harness import local_arena
from arena.referee.standard import REFLECTION_V1, REFLECTION_V1ALPHA, HealthListRequest, HealthListResponse

from .arena_helpers import FAST, arun

BOT_SERVICE = "belote.arena.v1.BotService"
ARENA_SERVICE = "belote.arena.v1.ArenaService"
HEALTH = "grpc.health.v1.Health"
ROOT = Path(__file__).resolve().parents[2]


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
        "ListTournaments", "CancelTournament", "ResumeTournament", "GetLeaderboard", "GetBot",
        "AuditTournament", "CreateSchedule", "ListSchedules", "CancelSchedule", "StartLadder", "StopLadder",
        "GetLadder", "ListLadders", "AddLadderBot", "RemoveLadderBot", "GetBotVersions", "PromoteBotVersion",
        "GetBotReport",
    }


def reflection_call(channel: grpc.aio.Channel, service: str) -> Any:
    """A reflection stream on ``service`` (v1's messages are v1alpha's under another package: the same
    bytes)."""
    return channel.stream_stream(
        f"/{service}/ServerReflectionInfo",
        request_serializer=reflection_pb2.ServerReflectionRequest.SerializeToString,
        response_deserializer=reflection_pb2.ServerReflectionResponse.FromString)()


@pytest.mark.parametrize("version", [REFLECTION_V1, REFLECTION_V1ALPHA])
def test_reflection_lists_and_describes_both_its_versions(version: str) -> None:
    """grpcurl and buf curl ask ``grpc.reflection.v1`` first, older tools v1alpha: whichever a client
    asks lists both, and describes each (grpcurl's ``describe`` of a listed service)."""
    async def main() -> tuple[list[str], dict[str, Any]]:
        async with local_arena(time=FAST) as arena, grpc.aio.insecure_channel(arena.address) as channel:
            call = reflection_call(channel, version)
            await call.write(reflection_pb2.ServerReflectionRequest(list_services=""))
            listed = await call.read()
            described = {}
            for symbol in (REFLECTION_V1, REFLECTION_V1ALPHA, "grpc.reflection.v1.ServerReflectionResponse",
                           HEALTH, ARENA_SERVICE):
                await call.write(reflection_pb2.ServerReflectionRequest(file_containing_symbol=symbol))
                described[symbol] = await call.read()
            await call.done_writing()
            return [s.name for s in listed.list_services_response.service], described

    services, described = arun(main())
    assert set(services) == {BOT_SERVICE, ARENA_SERVICE, HEALTH, REFLECTION_V1, REFLECTION_V1ALPHA}
    for symbol, reply in described.items():
        assert reply.WhichOneof("message_response") == "file_descriptor_response", (symbol, reply)
        proto = FileDescriptorProto.FromString(reply.file_descriptor_response.file_descriptor_proto[0])
        assert proto.package == symbol.rsplit(".", 1)[0]
    v1 = FileDescriptorProto.FromString(
        described[REFLECTION_V1].file_descriptor_response.file_descriptor_proto[0])
    assert v1.name == "grpc/reflection/v1/reflection.proto"
    (method,) = v1.service[0].method
    assert (method.input_type, method.output_type) == (".grpc.reflection.v1.ServerReflectionRequest",
                                                       ".grpc.reflection.v1.ServerReflectionResponse")
    assert all(f.type_name.startswith(".grpc.reflection.v1.") for m in v1.message_type for f in m.field
               if f.type_name)
    assert not v1.options.deprecated


def test_grpcio_reflections_client_describes_every_listed_service() -> None:
    """grpcio-reflection's own client (v1alpha) builds a descriptor pool from the node alone, every
    listed service in it: v1's reflection and Health with its three methods too."""
    def describe(address: str) -> dict[str, list[str]]:
        with grpc.insecure_channel(address) as channel:
            database = ProtoReflectionDescriptorDatabase(channel)
            pool = DescriptorPool(database)
            return {name: [m.name for m in pool.FindServiceByName(name).methods]
                    for name in database.get_services()}

    async def main() -> dict[str, list[str]]:
        async with local_arena(time=FAST) as arena:
            return await asyncio.to_thread(describe, arena.address)

    methods = arun(main())
    assert methods[REFLECTION_V1] == methods[REFLECTION_V1ALPHA] == ["ServerReflectionInfo"]
    assert sorted(methods[HEALTH]) == ["Check", "List", "Watch"]
    assert set(methods) == {BOT_SERVICE, ARENA_SERVICE, HEALTH, REFLECTION_V1, REFLECTION_V1ALPHA}


def health_list(channel: grpc.aio.Channel) -> Any:
    return channel.unary_unary("/grpc.health.v1.Health/List",
                               request_serializer=HealthListRequest.SerializeToString,
                               response_deserializer=HealthListResponse.FromString)


def test_health_list_gives_each_services_status_and_not_serving_once_draining() -> None:
    """Reflection advertises ``Health/List`` (the standard's snapshot of every status): it answers,
    with what Check says of each service."""
    async def main() -> tuple[dict[str, int], dict[str, int], int]:
        async with local_arena(time=FAST) as arena, grpc.aio.insecure_channel(arena.address) as channel:
            serving = await health_list(channel)(HealthListRequest(), timeout=5)
            await arena.node.begin_drain()
            draining = await health_list(channel)(HealthListRequest(), timeout=5)
            check = await health_stub(channel).Check(health_pb2.HealthCheckRequest(service=BOT_SERVICE),
                                                     timeout=5)
            return ({k: v.status for k, v in serving.statuses.items()},
                    {k: v.status for k, v in draining.statuses.items()}, check.status)

    serving, draining, check = arun(main())
    names = {"", BOT_SERVICE, ARENA_SERVICE}
    assert serving == dict.fromkeys(names, health_pb2.HealthCheckResponse.SERVING)
    assert draining == dict.fromkeys(names, health_pb2.HealthCheckResponse.NOT_SERVING)
    assert check == health_pb2.HealthCheckResponse.NOT_SERVING


#: the methods a node alone answers UNIMPLEMENTED: a queue's (docs/protocol.md, ArenaService)
QUEUE_ONLY = frozenset(f"/{ARENA_SERVICE}/{m}" for m in (
    "CreateTournament", "GetTournament", "ListTournaments", "CancelTournament", "ResumeTournament",
    "GetLeaderboard", "AuditTournament", "CreateSchedule", "ListSchedules", "CancelSchedule", "StartLadder",
    "StopLadder", "GetLadder", "ListLadders", "AddLadderBot", "RemoveLadderBot", "GetBotReport"))


async def advertised_unary_codes(address: str, admin_token: str) -> dict[str, grpc.StatusCode]:
    """Each unary method of each service reflection lists, called with an empty request and the admin
    credential (so that the method itself answers, not the access check): its status code."""
    def advertised() -> list[str]:
        with grpc.insecure_channel(address) as channel:
            database = ProtoReflectionDescriptorDatabase(channel)
            pool = DescriptorPool(database)
            return [f"/{name}/{m.name}" for name in database.get_services()
                    for m in pool.FindServiceByName(name).methods
                    if not (m.client_streaming or m.server_streaming)]

    codes = {}
    async with grpc.aio.insecure_channel(address) as channel:
        for path in await asyncio.to_thread(advertised):
            call: Any = channel.unary_unary(path)
            try:
                await call(b"", timeout=5, metadata=(("authorization", f"Bearer {admin_token}"),))
                codes[path] = grpc.StatusCode.OK
            except grpc.aio.AioRpcError as e:
                codes[path] = e.code()
    return codes


def test_every_unary_method_reflection_advertises_is_implemented_but_a_queues() -> None:
    """Called with an empty request, each advertised unary method answers with its own verdict (OK, or
    a missing argument...), never UNIMPLEMENTED: Health/List included. A node alone has no queue: its
    tournament and leaderboard calls are UNIMPLEMENTED, as the protocol says (tests/node: a node of a
    queue has them all)."""
    async def main() -> dict[str, grpc.StatusCode]:
        async with local_arena(time=FAST) as arena:
            return await advertised_unary_codes(arena.address, arena.admin_token)

    codes = arun(main())
    assert {"/grpc.health.v1.Health/Check", "/grpc.health.v1.Health/List",
            f"/{ARENA_SERVICE}/ListBots"} | QUEUE_ONLY <= set(codes)
    assert codes["/grpc.health.v1.Health/List"] == grpc.StatusCode.OK
    unimplemented = {path for path, code in codes.items() if code == grpc.StatusCode.UNIMPLEMENTED}
    assert unimplemented == QUEUE_ONLY


# ------------------------------------------------------------------ buf curl, a reflection client of v1
def buf() -> str:
    """buf (npm's @bufbuild/buf, which .ci/run installs into .ci/buf); skips, saying so, without it."""
    local = ROOT / ".ci" / "buf" / "node_modules" / ".bin" / "buf"
    exe = str(local) if local.is_file() else shutil.which("buf")
    if exe is None:
        pytest.skip("buf is not installed (npm install --prefix .ci/buf @bufbuild/buf@1, as .ci/run does): "
                    "buf curl's reflection was not tried")
    return exe


async def buf_curl(address: str, *args: str) -> str:
    done = await asyncio.to_thread(
        subprocess.run, [buf(), "curl", "--protocol", "grpc", "--http2-prior-knowledge", *args],
        capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, f"buf curl {' '.join(args)}: {done.stderr}"
    return done.stdout


@pytest.mark.parametrize("protocol", ["grpc-v1", "grpc-v1alpha"])
def test_buf_curl_lists_every_method_by_reflection(protocol: str) -> None:
    """buf curl lists the services, then asks each one's file by symbol (``file_containing_symbol``),
    on the reflection protocol it is told: both reflection services, and Health/List, among them."""
    buf()

    async def main() -> tuple[str, str]:
        async with local_arena(time=FAST) as arena:
            url = f"http://{arena.address}"
            services = await buf_curl(arena.address, "--reflect-protocol", protocol, "--list-services", url)
            methods = await buf_curl(arena.address, "--reflect-protocol", protocol, "--list-methods", url)
            return services, methods

    services, methods = arun(main())
    assert set(services.split()) == {BOT_SERVICE, ARENA_SERVICE, HEALTH, REFLECTION_V1, REFLECTION_V1ALPHA}
    assert {f"{REFLECTION_V1}/ServerReflectionInfo", f"{REFLECTION_V1ALPHA}/ServerReflectionInfo",
            f"{HEALTH}/List", f"{HEALTH}/Check", f"{ARENA_SERVICE}/ListBots"} <= set(methods.split())


def test_buf_curl_calls_health_list() -> None:
    """A call as a person makes it: buf curl learns Health/List from reflection (v1 first) and the
    node answers it."""
    buf()

    async def main() -> str:
        async with local_arena(time=FAST) as arena:
            return await buf_curl(arena.address, "-d", "{}", f"http://{arena.address}/{HEALTH}/List")

    reply = json.loads(arun(main()))
    assert reply == {"statuses": {name: {"status": "SERVING"} for name in ("", BOT_SERVICE, ARENA_SERVICE)}}
