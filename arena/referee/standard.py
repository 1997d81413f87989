"""The standard gRPC services a node serves beside its own: health and server reflection.

grpcio-health-checking's servicer leaves ``grpc.health.v1.Health/List``
UNIMPLEMENTED although the service's descriptor (which reflection shows)
declares it: :class:`HealthServicer` answers it. grpcio-reflection ships the
``v1alpha`` reflection service only, and the ``v1`` one is what current tools
(grpcurl, buf curl) ask first: :func:`add_reflection` serves both, each listed
and each described (``file_containing_symbol``), from one servicer.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from grpc_health.v1 import health, health_pb2
from grpc_reflection.v1alpha import reflection, reflection_pb2

__all__ = ["REFLECTION_V1", "REFLECTION_V1ALPHA", "HealthServicer", "add_reflection"]

#: the reflection services: v1 (current tools ask it first) and v1alpha (older ones)
REFLECTION_V1 = "grpc.reflection.v1.ServerReflection"
REFLECTION_V1ALPHA = reflection.SERVICE_NAME

SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING

#: Health/List's messages, from the descriptor (the grpc_health type stubs do not declare them)
_find = descriptor_pool.Default().FindMessageTypeByName
HealthListRequest: Any = message_factory.GetMessageClass(_find("grpc.health.v1.HealthListRequest"))
HealthListResponse: Any = message_factory.GetMessageClass(_find("grpc.health.v1.HealthListResponse"))


class HealthServicer(health.aio.HealthServicer):
    """grpcio-health-checking's servicer (Check, Watch), with List: each service's status.

    The statuses List gives are those :meth:`set` was told (the overall one,
    ``""``, SERVING from the start), as Check gives them; all NOT_SERVING
    after :meth:`enter_graceful_shutdown`, after which :meth:`set` changes
    nothing, as in the servicer it extends.
    """

    def __init__(self) -> None:
        super().__init__()
        self.statuses: dict[str, int] = {"": SERVING}
        self._shutting_down = False

    async def set(self, service: str, status: int) -> None:
        if self._shutting_down:
            return
        self.statuses[service] = status
        await super().set(service, status)

    async def enter_graceful_shutdown(self) -> None:
        self._shutting_down = True
        for service in self.statuses:
            self.statuses[service] = NOT_SERVING
        await super().enter_graceful_shutdown()

    async def List(self, request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        """A snapshot of every service's status (a node has three: no RESOURCE_EXHAUSTED)."""
        return HealthListResponse(statuses={
            name: health_pb2.HealthCheckResponse(status=status) for name, status in self.statuses.items()})


def add_reflection(services: Iterable[str], server: grpc.aio.Server) -> list[str]:
    """Serve reflection on ``server``, ``v1`` and ``v1alpha``, for ``services`` and itself; the
    names it lists (``services`` and both reflection services).

    v1 is v1alpha's protocol under another package: the same messages, the
    same fields with the same numbers. So the v1alpha servicer answers v1
    calls byte for byte, and v1's file, made from v1alpha's (:func:`_v1_file`),
    is in the default descriptor pool that the servicer describes symbols
    from.
    """
    _v1_file()
    names = [*services, REFLECTION_V1, REFLECTION_V1ALPHA]
    servicer = reflection.aio.ReflectionServicer(names)
    handler = grpc.stream_stream_rpc_method_handler(
        servicer.ServerReflectionInfo,
        request_deserializer=reflection_pb2.ServerReflectionRequest.FromString,
        response_serializer=reflection_pb2.ServerReflectionResponse.SerializeToString,
    )
    server.add_generic_rpc_handlers(tuple(
        grpc.method_handlers_generic_handler(name, {"ServerReflectionInfo": handler})
        for name in (REFLECTION_V1, REFLECTION_V1ALPHA)))
    return names


#: grpc-proto's name for the v1 file, and the options it declares (the rest is v1alpha's, renamed)
V1_FILE = "grpc/reflection/v1/reflection.proto"
_V1_OPTIONS = {"go_package": "google.golang.org/grpc/reflection/grpc_reflection_v1",
               "java_package": "io.grpc.reflection.v1", "java_outer_classname": "ServerReflectionProto",
               "java_multiple_files": True}


def _v1_file() -> None:
    """Add ``grpc/reflection/v1/reflection.proto`` to the default descriptor pool (once), made from
    grpcio-reflection's v1alpha file: its package and its messages' references renamed, and v1's
    file options (v1alpha's says it is deprecated)."""
    pool = descriptor_pool.Default()
    try:
        pool.FindFileByName(V1_FILE)
        return  # there already (another library, or an earlier server in this process)
    except KeyError:
        pass
    old, new = reflection_pb2.DESCRIPTOR.package, "grpc.reflection.v1"
    proto = descriptor_pb2.FileDescriptorProto()
    reflection_pb2.DESCRIPTOR.CopyToProto(proto)
    proto.name, proto.package = V1_FILE, new
    proto.options.Clear()
    for option, value in _V1_OPTIONS.items():
        setattr(proto.options, option, value)

    def rename(type_name: str) -> str:
        prefix = f".{old}."
        return f".{new}.{type_name[len(prefix):]}" if type_name.startswith(prefix) else type_name

    messages = list(proto.message_type)
    while messages:
        message = messages.pop()
        messages.extend(message.nested_type)
        for field in message.field:
            if field.type_name:
                field.type_name = rename(field.type_name)
    for service in proto.service:
        for method in service.method:
            method.input_type = rename(method.input_type)
            method.output_type = rename(method.output_type)
    pool.AddSerializedFile(proto.SerializeToString())
