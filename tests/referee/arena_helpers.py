"""What the referee tests share: a fast clock, bots that misbehave on cue, raw streams.

Everything runs over real gRPC on loopback against the real node (the
harness's :func:`arena.harness.local_arena`, or :func:`node_server` when a test
needs its own :class:`NodeConfig`) and the real SDK.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

import grpc
import grpc.aio
from belote.arena.v1 import arena_service_pb2_grpc as agrpc
from belote.arena.v1 import bot_service_pb2 as bpb
from belote.arena.v1 import bot_service_pb2_grpc as bgrpc
from belote.arena.v1 import game_pb2 as gpb
from belote_bot import Action, Bot, HeuristicBot, MatchResult, Observation, RandomBot, Strike
from belote_bot.client import Client

from arena.harness import LocalArena
from arena.records import MatchRecord, TimeControl
from arena.referee.convert import result_to_proto
from arena.referee.node import Limits, Node, NodeConfig
from arena.referee.service import start_server, stop_server
from arena.referee.sessions import BotLink

#: a clock small enough that a late bot costs a fraction of a second, and loose enough that a
#: prompt bot on a loaded two-core machine is never late
FAST = TimeControl(deadline=0.2, time_bank=0.5, max_strikes=3, grace=0.5)
#: the default limits, but refusals answered at once: for a test that is refused many times in a
#: row to check the status, not the tarpit (test_limits tests the hold)
NO_HOLD = Limits(refusal_hold=0.0)


def arun(coro: Coroutine[Any, Any, Any], timeout: float = 30.0) -> Any:
    """Run one test's coroutine on a fresh loop; a hang fails instead of blocking the suite."""
    return asyncio.run(asyncio.wait_for(coro, timeout))


#: the event loops a node runs on: uvloop's (``belote-arena serve`` installs it when it can), and
#: asyncio's own (a node without uvloop installed)
LOOPS = ("asyncio", "uvloop")


def run_on(loop: str, coro: Coroutine[Any, Any, Any], timeout: float = 30.0) -> Any:
    """:func:`arun` on a fresh event loop of the kind ``loop`` names (one of :data:`LOOPS`)."""
    factory: Callable[[], asyncio.AbstractEventLoop] | None = None
    if loop == "uvloop":
        import uvloop

        factory = uvloop.new_event_loop
    with asyncio.Runner(loop_factory=factory) as runner:
        return runner.run(asyncio.wait_for(coro, timeout))


async def until(predicate: Callable[[], bool], timeout: float = 5.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.005)


def link_of(node: Node, name: str) -> BotLink:
    """The link of the bot registered as ``name``."""
    entry = node.bot_named(name)
    assert entry is not None, f"no bot {name}"
    return node.link_for(entry)


def result_pb(record: MatchRecord) -> gpb.MatchResult:
    """The MatchResult message that bots and spectators get at the end of ``record``'s match."""
    return result_to_proto(record.result, record.deals_played)


@contextlib.asynccontextmanager
async def node_server(config: NodeConfig) -> AsyncIterator[tuple[Node, str]]:
    """A node with its own config on an ephemeral loopback port."""
    node = Node(config)
    server, port = await start_server(node, "127.0.0.1:0")
    try:
        yield node, f"127.0.0.1:{port}"
    finally:
        await stop_server(server, node, grace=0.2)


async def collect(call: Any) -> list[Any]:
    """Read a server stream (a WatchMatch call) to its end."""
    out = []
    while (msg := await call.read()) is not grpc.aio.EOF:
        out.append(msg)
    return out


@contextlib.asynccontextmanager
async def arena_stub(address: str, token: str = "") -> AsyncIterator[agrpc.ArenaServiceAsyncStub]:
    """ArenaService at ``address``, each call showing ``token`` (the admin credential, say) if given."""
    interceptors = [Bearer(token)] if token else []
    async with grpc.aio.insecure_channel(address, interceptors=interceptors) as channel:
        yield agrpc.ArenaServiceStub(channel)


class Bearer(grpc.aio.UnaryUnaryClientInterceptor, grpc.aio.UnaryStreamClientInterceptor):
    """Adds ``authorization: Bearer <token>`` to every call."""

    def __init__(self, token: str) -> None:
        self.metadata = (("authorization", f"Bearer {token}"),)

    def _with_token(self, details: Any) -> Any:
        return details._replace(metadata=tuple(details.metadata or ()) + self.metadata)

    async def intercept_unary_unary(self, continuation: Any, details: Any, request: Any) -> Any:
        return await continuation(self._with_token(details), request)

    async def intercept_unary_stream(self, continuation: Any, details: Any, request: Any) -> Any:
        return await continuation(self._with_token(details), request)


# ------------------------------------------------------------------ bots
class RecordingBot(Bot):
    """Plays like ``inner`` and keeps what it saw: observations, strikes, match ends."""

    def __init__(self, inner: Bot | None = None) -> None:
        self.inner = inner or HeuristicBot(0)
        self.seen: list[Observation] = []
        self.strikes: list[Strike] = []
        self.strike_times: list[float] = []
        self.results: list[MatchResult] = []

    def act(self, obs: Observation) -> Any:
        self.seen.append(obs)
        return self.inner.act(obs)

    def on_strike(self, strike: Strike) -> None:
        self.strikes.append(strike)
        self.strike_times.append(time.monotonic())

    def on_match_end(self, result: MatchResult) -> None:
        self.results.append(result)


class ScriptedBot(RecordingBot):
    """Plays like ``inner``, except that ``script(n, obs)`` (n counts this bot's decisions from 0)
    may return an awaitable answer, used instead: a delay, an illegal answer, an error, silence."""

    def __init__(
        self, script: Callable[[int, Observation], Awaitable[Any] | None], inner: Bot | None = None,
    ) -> None:
        super().__init__(inner)
        self.script = script
        self.act_times: list[float] = []

    async def act(self, obs: Observation) -> Any:
        n = len(self.seen)
        self.seen.append(obs)
        self.act_times.append(time.monotonic())
        special = self.script(n, obs)
        if special is not None:
            return await special
        return self.inner.act(obs)


class DelayBot(Bot):
    """A legal player that takes ``delay`` seconds a decision (without blocking the loop)."""

    def __init__(self, delay: float, inner: Bot | None = None) -> None:
        self.delay = delay
        self.inner = inner or RandomBot(1)

    async def act(self, obs: Observation) -> Action:
        await asyncio.sleep(self.delay)
        result: Action = self.inner.act(obs)  # type: ignore[assignment]
        return result


async def never() -> Any:
    await asyncio.Event().wait()


async def after(delay: float, value: Any) -> Any:
    await asyncio.sleep(delay)
    return value


async def fail(message: str = "the bot's own bug") -> Any:
    raise RuntimeError(message)


@dataclass
class Connected:
    """A bot connected with its own stop event, so a test can cut it alone."""

    bot_id: str
    token: str
    client: Client
    task: asyncio.Task[None]
    stop: asyncio.Event = field(default_factory=asyncio.Event)

    async def disconnect(self) -> None:
        self.stop.set()
        await asyncio.wait_for(self.task, 5)


async def connect_client(
    node: Node, address: str, bot: Bot, name: str, *, token: str | None = None, concurrency: int = 8,
) -> Connected:
    """Connect ``bot`` (registering ``name`` unless a token is given) and wait for its Welcome."""
    if token is None:
        entry, token = node.register_bot(name)
    else:
        found = node.authenticate(token)
        assert found is not None
        entry = found
    client = Client(bot, address, token, concurrency, name=name)
    stop = asyncio.Event()
    task = asyncio.get_running_loop().create_task(client.run(stop), name=f"client-{name}")
    await until(lambda: client.welcome is not None or task.done(), what=f"{name}'s Welcome")
    if task.done():
        task.result()
    return Connected(entry.bot_id, token, client, task, stop)


async def connect_pair(
    arena: LocalArena, first: Bot | None = None, second: Bot | None = None, concurrency: int = 8,
) -> tuple[str, str]:
    """Two bots named "alpha" and "beta" on the arena (heuristic unless given)."""
    await arena.connect("alpha", first or HeuristicBot(1), concurrency)
    await arena.connect("beta", second or RandomBot(2), concurrency)
    return "alpha", "beta"


# ----------------------------------------------------------- raw streams
class RawStream:
    """A hand-driven ``BotService.Connect`` stream: send what a test wants, read what comes."""

    def __init__(self, address: str, metadata: tuple[tuple[str, str], ...] = ()) -> None:
        self.channel = grpc.aio.insecure_channel(address)
        self.call = bgrpc.BotServiceStub(self.channel).Connect(metadata=metadata)

    async def send(self, msg: bpb.ConnectRequest) -> None:
        await self.call.write(msg)

    async def hello(self, token: str = "", concurrency: int = 8, name: str = "") -> None:
        await self.send(bpb.ConnectRequest(hello=bpb.Hello(token=token, concurrency=concurrency, name=name)))

    async def read(self, timeout: float = 5.0) -> bpb.ConnectResponse:
        msg = await asyncio.wait_for(self.call.read(), timeout)
        assert msg is not grpc.aio.EOF, "the referee closed the stream"
        assert isinstance(msg, bpb.ConnectResponse)
        return msg

    async def status(self, timeout: float = 5.0) -> grpc.StatusCode:
        """Read to the end of the stream; its final status."""
        with contextlib.suppress(grpc.aio.AioRpcError):
            while await asyncio.wait_for(self.call.read(), timeout) is not grpc.aio.EOF:
                pass
        return await self.call.code()

    async def close(self) -> None:
        self.call.cancel()
        await self.channel.close(grace=None)


async def raw_player(
    stream: RawStream, answer: Callable[[bpb.ActionRequest], int], log: list[bpb.ConnectResponse],
) -> None:
    """Answer every action request of ``stream`` with ``answer(request)`` until the stream ends."""
    while True:
        msg = await stream.call.read()
        if not isinstance(msg, bpb.ConnectResponse):  # grpc.aio.EOF
            return
        log.append(msg)
        if msg.WhichOneof("message") == "action_request":
            req = msg.action_request
            await stream.send(bpb.ConnectRequest(action_reply=bpb.ActionReply(
                request_id=req.request_id, action=answer(req))))
