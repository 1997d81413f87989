"""The gRPC server's metrics, with go-grpc-prometheus's names and labels, for ``grpc.aio``.

py-grpc-prometheus does not accept ``grpc.aio`` servers, so :class:`RpcMetrics`
is our own server interceptor. Per call it counts ``grpc_server_started_total``,
``grpc_server_handled_total{grpc_code}`` and times ``grpc_server_handling_seconds``;
per message of a unary or server-streaming call ``grpc_server_msg_received_total``
and ``grpc_server_msg_sent_total``. The bot streams (``BotService.Connect``, the
hot path) read and write through their context, not through the handler: their
messages are counted by the stream's own loops (``BotLink.messages_received`` and
``messages_sent``), added at scrape (:attr:`arena.metrics.RpcStats.streams`), so
they cost the referee nothing per message here.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Callable
from typing import Any

import grpc
import grpc.aio

from arena.edge.guard import WrappedHandlers
from arena.metrics import RpcStats

#: the grpc_type label of each kind of handler
_TYPES = {"unary_unary": "unary", "unary_stream": "server_stream", "stream_unary": "client_stream",
          "stream_stream": "bidi_stream"}


def split_method(method: str) -> tuple[str, str]:
    """``/pkg.Service/Method`` -> (``pkg.Service``, ``Method``)."""
    service, _, name = method.lstrip("/").rpartition("/")
    return service, name


def _code(context: Any, error: BaseException | None) -> str:
    if isinstance(error, asyncio.CancelledError):
        return "CANCELLED"
    code = None
    try:
        code = context.code()
    except Exception:
        code = None
    if isinstance(code, grpc.StatusCode):
        return code.name
    if isinstance(code, int):  # cygrpc gives the status as its number
        for status in grpc.StatusCode:
            if status.value[0] == code:
                return status.name
    if error is not None and not isinstance(error, grpc.aio.AbortError):
        return "UNKNOWN"
    return "OK"


def _counted(behavior: Any, kind: str, key: tuple[str, str, str], stats: RpcStats, messages: bool) -> Any:
    """``behavior`` counted and timed; its messages counted too when ``messages`` (a handler that
    reads and writes through its context counts its own)."""
    streaming_request = kind.startswith("stream")
    clock = time.perf_counter

    def received_from(requests: Any) -> Any:
        async def counting() -> Any:
            async for request in requests:
                stats.received[key] = stats.received.get(key, 0) + 1
                yield request
        return counting()

    def begin(request: Any) -> tuple[Any, float]:
        """Count the call started and its request (or wrap its stream of requests); the request
        to hand on, and when the call started."""
        stats.start(key)
        if messages:
            if streaming_request:
                request = received_from(request)
            else:
                stats.received[key] = stats.received.get(key, 0) + 1
        return request, clock()

    if inspect.isasyncgenfunction(behavior):
        async def stream(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
            request, start = begin(request)
            error: BaseException | None = None
            try:
                async for item in behavior(request, context):
                    if messages:
                        stats.sent[key] = stats.sent.get(key, 0) + 1
                    yield item
            except BaseException as e:
                error = e
                raise
            finally:
                stats.finish(key, _code(context, error), clock() - start)
        return stream

    async def unary(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        request, start = begin(request)
        error: BaseException | None = None
        try:
            response = await behavior(request, context)
            if messages and response is not None and kind.endswith("unary"):
                stats.sent[key] = stats.sent.get(key, 0) + 1
            return response
        except BaseException as e:
            error = e
            raise
        finally:
            stats.finish(key, _code(context, error), clock() - start)
    return unary


def counted_handler(handler: Any, method: str, stats: RpcStats, own_messages: frozenset[str]) -> Any:
    """``handler`` (an ``RpcMethodHandler``) counted in ``stats``; as it is if synchronous."""
    service, name = split_method(method)
    changes: dict[str, Any] = {}
    for attr, kind in _TYPES.items():
        behavior = getattr(handler, attr)
        if behavior is None:
            continue
        if not (inspect.isasyncgenfunction(behavior) or inspect.iscoroutinefunction(behavior)):
            return handler
        changes[attr] = _counted(behavior, attr, (kind, service, name), stats, method not in own_messages)
    return handler._replace(**changes) if changes else handler


class RpcMetrics(grpc.aio.ServerInterceptor):
    """Counts every call of the server in ``stats``; the methods in ``own_messages`` count their
    messages themselves."""

    def __init__(self, stats: RpcStats, own_messages: frozenset[str] = frozenset()) -> None:
        self.stats = stats
        self.own_messages = own_messages
        self._counted = WrappedHandlers()

    async def intercept_service(
        self, continuation: Callable[[grpc.HandlerCallDetails], Any],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> Any:
        handler = await continuation(handler_call_details)
        if handler is None:
            return None
        method = handler_call_details.method
        return self._counted.get(
            handler, method, lambda: counted_handler(handler, method, self.stats, self.own_messages))
