"""Hostile clients: registered bots and strangers that send the worst the protocol allows.

They run in a child process of their own (:func:`start`), at the lowest
priority, so that what they cost is the node's cost as if they ran on other
machines, not the CPU they take from the honest bots beside them. Each hostile
bot (its own registered token) goes round these moves, one stream each,
reconnecting at once whenever the node ends a stream (a reconnect storm):

* ``answers``: a Hello asking for every seat, then messages of as many answers
  as the node takes (its concurrency's worth at first), with the largest ids
  and codes, none of them asked for;
* ``trickle``: the same, one answer a message;
* ``pings``: a ping a message, as fast as the stream takes them;
* ``garbage``: bytes that do not decode, after a Hello;
* ``silent``: a stream that never sends its Hello.

Beside them, ``never_hello`` strangers keep streams open without a Hello and
open new ones as fast as the node ends them, and ``arena_garbage`` strangers
send random bytes to every ArenaService method. The tally says how each call
ended (the status the node sent), so a test can check that the attack
reached every limit.
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing as mp
import os
import random
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Self

import grpc
import grpc.aio
from belote.arena.v1 import arena_service_pb2 as apb
from belote.arena.v1 import bot_service_pb2 as bpb

CONNECT = "/belote.arena.v1.BotService/Connect"
ARENA_METHODS = [f"/belote.arena.v1.ArenaService/{m.name}"
                 for m in apb.DESCRIPTOR.services_by_name["ArenaService"].methods]
#: the largest request id and action code: an answer of 19 bytes, the most one may take
BIG_REPLY = bpb.ActionReply(request_id=2**64 - 1, action=2**32 - 1)
MOVES = ("answers", "trickle", "pings", "garbage", "silent")
#: the details of a status the client made up: a call the node ended while the client was writing
#: (grpc's client then loses the node's status; the node never sends this)
LOST = "Internal error from Core"
#: own connections: a local subchannel pool, so no stream queues behind another client's
OPTIONS = [("grpc.use_local_subchannel_pool", 1), ("grpc.max_send_message_length", 64 << 20)]


@dataclass(frozen=True)
class Plan:
    address: str
    #: one hostile bot per token
    tokens: tuple[str, ...]
    #: the seats a hostile bot asks for (the node caps it), and the answers it sends in a message:
    #: the node's default cap, what a stream may send at first
    concurrency: int = 1 << 20
    answers_per_message: int = 256
    never_hello: int = 12
    arena_garbage: int = 2
    seed: int = 0
    #: the CPUs the attackers' process may run on (all when empty)
    cpus: tuple[int, ...] = ()
    #: the moves each hostile bot goes round
    moves: tuple[str, ...] = MOVES


Tally = Counter[str]


def _raw(channel: grpc.aio.Channel) -> Any:
    return channel.stream_stream(CONNECT, request_serializer=None, response_deserializer=None)()


async def _drain(call: Any) -> None:
    with contextlib.suppress(Exception):
        while await call.read() is not grpc.aio.EOF:
            pass


async def _until_ended(call: Any, send: Callable[[], Awaitable[None]] | None) -> grpc.StatusCode:
    """Send with ``send`` (reading all the while) until the node ends the call; its status."""
    reader = asyncio.ensure_future(_drain(call))
    try:
        while send is not None and not call.done():
            try:
                await send()
            except (grpc.aio.AioRpcError, asyncio.InvalidStateError):
                break
            await asyncio.sleep(0)
        code: grpc.StatusCode = await call.code()
        return code
    finally:
        reader.cancel()


async def hostile_bot(plan: Plan, token: str, rng: random.Random, tally: Tally) -> None:
    hello = bpb.ConnectRequest(hello=bpb.Hello(token=token, concurrency=plan.concurrency)).SerializeToString()
    batch = bpb.ConnectRequest(action_replies=[BIG_REPLY] * plan.answers_per_message).SerializeToString()
    one = bpb.ConnectRequest(action_reply=BIG_REPLY).SerializeToString()
    ping = bpb.ConnectRequest(ping=bpb.Ping(nonce=2**64 - 1)).SerializeToString()
    async with grpc.aio.insecure_channel(plan.address, options=OPTIONS) as channel:
        for turn in range(1 << 62):
            move = plan.moves[turn % len(plan.moves)]
            call = _raw(channel)
            try:
                if move == "silent":
                    code = await _until_ended(call, None)
                else:
                    await call.write(hello)

                    async def send(move: str = move, call: Any = call) -> None:
                        if move == "answers":
                            await call.write(batch)
                        elif move == "trickle":
                            await call.write(one)
                        elif move == "pings":
                            await call.write(ping)
                        else:
                            await call.write(rng.randbytes(rng.randrange(1, 64)) + b"\xff")

                    code = await _until_ended(call, send)
            except asyncio.CancelledError:
                call.cancel()
                raise
            except (grpc.aio.AioRpcError, asyncio.InvalidStateError):  # the Hello came too late
                code = await call.code()
            tally[f"{move}: {code.name}"] += 1
            if code in (grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN):
                tally[f"{move}: {code.name}: {await call.details()}"] += 1


async def never_hello(channel: grpc.aio.Channel, tally: Tally) -> None:
    while True:
        call = _raw(channel)
        try:
            code = await _until_ended(call, None)
        except asyncio.CancelledError:
            call.cancel()
            raise
        tally[f"never_hello: {code.name}"] += 1


async def arena_garbage(address: str, rng: random.Random, tally: Tally) -> None:
    async with grpc.aio.insecure_channel(address, options=OPTIONS) as channel:
        raw: dict[str, Any] = {"request_serializer": None, "response_deserializer": None}
        while True:
            method = rng.choice(ARENA_METHODS)
            junk = rng.randbytes(rng.randrange(1, 200))
            try:
                if method.endswith("WatchMatch"):
                    call: Any = channel.unary_stream(method, **raw)
                    stream = call(junk, timeout=10)
                    await _drain(stream)
                    code = await stream.code()
                else:
                    unary: Any = channel.unary_unary(method, **raw)
                    await unary(junk, timeout=10)
                    code = grpc.StatusCode.OK
            except grpc.aio.AioRpcError as e:
                code = e.code()
            tally[f"arena_garbage: {code.name}"] += 1


async def attack(plan: Plan, stop: Callable[[], bool], tally: Tally, progress: Any = None) -> None:
    """Run every attacker of ``plan`` until ``stop()``; ``progress.value`` counts the calls ended."""
    rng = random.Random(plan.seed)
    tasks = [asyncio.ensure_future(hostile_bot(plan, token, random.Random(rng.random()), tally))
             for token in plan.tokens]
    strangers = grpc.aio.insecure_channel(plan.address, options=OPTIONS)
    tasks += [asyncio.ensure_future(never_hello(strangers, tally)) for _ in range(plan.never_hello)]
    tasks += [asyncio.ensure_future(arena_garbage(plan.address, random.Random(rng.random()), tally))
              for _ in range(plan.arena_garbage)]
    try:
        while not stop():
            if progress is not None:
                progress.value = sum(tally.values())
            await asyncio.sleep(0.02)
    finally:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await strangers.close(grace=None)


def _child(plan: Plan, progress: Any, ready: Any, go: Any, stop: Any, out: Any) -> None:
    if plan.cpus:
        os.sched_setaffinity(0, plan.cpus)
    with contextlib.suppress(OSError):
        os.nice(19)
    ready.set()  # started, its modules imported: it waits for ``go`` doing nothing
    while not go.wait(0.05):
        if stop.is_set():
            out.put({})
            return
    tally: Tally = Counter()
    asyncio.run(attack(plan, stop.is_set, tally, progress))
    out.put(dict(tally))


class InChild:
    """A process that attacks until told to stop, as an async context manager; ``tally`` once it is over
    (what the child put on its queue)."""

    def __init__(self, target: Any, args: tuple[Any, ...], name: str) -> None:
        ctx = mp.get_context("spawn")
        self._stop = ctx.Event()
        self._out: Any = ctx.Queue()
        self._proc = ctx.Process(target=target, args=(*args, self._stop, self._out), daemon=True, name=name)
        self.tally: dict[str, int] = {}

    @property
    def alive(self) -> bool:
        return self._proc.is_alive()

    async def __aenter__(self) -> Self:
        self._proc.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._stop.set()
        await asyncio.to_thread(self._end)  # the node's loop goes on serving meanwhile

    def _end(self) -> None:
        with contextlib.suppress(Exception):
            self.tally = self._out.get(timeout=60)
        self._proc.join(10)
        if self._proc.is_alive():
            self._proc.terminate()
            self._proc.join(5)


class Attackers(InChild):
    """The attack of ``plan`` in a child process: ``async with Attackers(plan) as a: ...; a.tally``.

    With ``gated``, the child starts idle and attacks once :meth:`go` is called: a quiet run measured
    meanwhile (after :meth:`ready`) has the same processes on the machine as the attack, so that
    the two differ only by what the attackers send.
    """

    def __init__(self, plan: Plan, gated: bool = False) -> None:
        ctx = mp.get_context("spawn")
        self._progress = ctx.Value("q", 0)
        self._ready = ctx.Event()
        self._go = ctx.Event()
        if not gated:
            self._go.set()
        super().__init__(_child, (plan, self._progress, self._ready, self._go), "hostile-clients")

    async def ready(self, timeout: float = 60.0) -> None:
        """Wait until the child has started (and imported what it needs)."""
        if not await asyncio.to_thread(self._ready.wait, timeout):
            raise TimeoutError("the attackers' process did not start")

    def go(self) -> None:
        self._go.set()

    @property
    def calls_ended(self) -> int:
        value: int = self._progress.value
        return value
