"""What the gRPC services share about a call: its errors' status codes, the caller's credential and address.

The node and the access gate raise typed errors; here, and nowhere else, each
type becomes its gRPC status code (a subclass takes its nearest listed base's).
"""

from __future__ import annotations

from typing import Any, NoReturn

import grpc

from arena.edge.guard import peer_host
from arena.referee.access import AccessError, PermissionDenied, Throttled, Unauthenticated
from arena.referee.node import (
    AlreadyExists,
    FailedPrecondition,
    InvalidArgument,
    NodeError,
    NotFound,
    ResourceExhausted,
    Unavailable,
)
from arena.referee.registry import RegistryUnavailable

__all__ = ["EDGE_ERRORS", "STATUS_OF", "Context", "abort", "address_of", "status_of", "token_of"]

Context = grpc.aio.ServicerContext[Any, Any]

#: the status of each kind of error raised behind the edge
STATUS_OF: dict[type[Exception], grpc.StatusCode] = {
    NotFound: grpc.StatusCode.NOT_FOUND,
    InvalidArgument: grpc.StatusCode.INVALID_ARGUMENT,
    FailedPrecondition: grpc.StatusCode.FAILED_PRECONDITION,
    ResourceExhausted: grpc.StatusCode.RESOURCE_EXHAUSTED,
    Unavailable: grpc.StatusCode.UNAVAILABLE,
    AlreadyExists: grpc.StatusCode.ALREADY_EXISTS,
    Unauthenticated: grpc.StatusCode.UNAUTHENTICATED,
    PermissionDenied: grpc.StatusCode.PERMISSION_DENIED,
    Throttled: grpc.StatusCode.RESOURCE_EXHAUSTED,
    RegistryUnavailable: grpc.StatusCode.UNAVAILABLE,
}

#: the errors whose message may go to the caller as it is
EDGE_ERRORS: tuple[type[Exception], ...] = (NodeError, AccessError, RegistryUnavailable)


def status_of(err: Exception) -> grpc.StatusCode:
    for cls in type(err).__mro__:
        code = STATUS_OF.get(cls)
        if code is not None:
            return code
    return grpc.StatusCode.INTERNAL


async def abort(context: Context, err: Exception) -> NoReturn:
    """End the call with ``err``'s status and message."""
    await context.abort(status_of(err), str(err))
    raise AssertionError("context.abort returns only by raising")


def token_of(context: Context) -> str:
    """The credential in the call's metadata: ``authorization: Bearer <token>`` (or ``x-bot-token``)."""
    for key, value in context.invocation_metadata() or ():
        if key == "authorization" and isinstance(value, str) and value.lower().startswith("bearer "):
            return value[7:].strip()
        if key == "x-bot-token" and isinstance(value, str):
            return value.strip()
    return ""


def address_of(context: Context) -> str:
    """The caller's address without its port (an IPv6 one by its /64): what throttles count by."""
    return peer_host(context.peer() or "")
