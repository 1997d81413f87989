"""Referee throughput: decisions/s of the real referee against raw gRPC round trips, in one run.

Usage (from the repository root)::

    python bench/referee.py [--quick] [--seconds S] [--repeats K] [--matches M] [--streams N] [--deals D]
                            [--ruleset NAME] [--sdk-bots] [--no-pin] [--half all|raw|mux|referee|floor]
                            [--batch B] [--json]

``--quick`` (what CI runs: ``tests/test_benches.py``) is ``--seconds 0.25 --repeats 1 --deals 2``
with a 0.15 s warm-up: the four measures in about 4-8 s; options given with it win. A window still
holds thousands of decisions, but its figures are no measure: it checks that every measure runs.

Each measure runs a server in this process and its clients in a child process
(``multiprocessing``, "spawn"), the same layout for all, so that clients and server
never share one core:

* **raw gRPC** (the reference): a ``grpc.aio`` server that registers the real
  ``BotService.Connect`` method (same serializers, same server options as
  ``arena.referee.service.start_server``) with a handler that only ping-pongs: per
  stream it writes a ``ConnectResponse(action_request=...)``, reads the
  ``ConnectRequest(action_reply=...)``, writes the next one. The messages are the
  referee's own: before the measures, ``--matches`` matches are played through the
  real ``MatchRunner`` and ``Hub`` over in-memory links, and every action request
  they sent (a ``ConnectResponse`` with the public events that rode on it; a batch
  is split into one message per request, the events on the first) is kept; each
  stream cycles through them. So the bytes on the wire and the protobuf
  work per message are the referee's, without its rules, observations, events,
  matches and sessions. ``--streams`` streams (default: ``--matches``), one round
  trip in flight on each, spread over two channels (two TCP connections).
* **raw mux** (for information): the same ping-pong over two streams only, with the
  same number of round trips in flight shared between them, writes serialized by a
  lock and replies matched by request id: the referee's layout (one stream per bot
  carrying all its seats) without the referee.
* **referee**: the real node (``Node`` + ``start_server``) with two bots registered,
  each on one ``Connect`` stream with ``concurrency`` = 2 x ``--matches`` seats, and
  ``--matches`` matches kept running (a new one starts as soon as one ends; team 0
  is bot 0; ``--deals`` deals each, ``--ruleset`` rules). The requests pending for a
  bot at the same moment go out in one message (``action_requests``).
* **floor** (the target's reference, run after the referee): what grpc.aio costs for the
  referee's traffic at its own batching, and nothing more. As many streams as the referee has
  (two, one per bot, each on its own channel); each message carries as many requests on average
  as the referee's did in this run (its requests over the messages its bots answered: ``--batch``
  to set it), the referee's own requests and the events that rode on them, assembled beforehand
  as the referee assembles them; one message in flight per stream. The server writes bytes through
  the node's pass-through serializer and parses each answer with the real ``ConnectRequest``
  parser (reading every reply's id and action): real protobuf where the node must parse, bytes
  where the node writes bytes, so the floor does exactly the gRPC and protobuf work any referee
  must do per message. The referee's messages that carry no request (match start and end,
  end-of-deal flushes) are not in the floor: they are the referee's own cost.

Also printed: the referee's own CPU per decision without gRPC (the in-memory
matches above, timed, each message serialized as for gRPC) and how many messages
it sends per decision there (request batches, plus the end-of-deal flushes and match
start/end), and for the real node how many messages it sent and received per decision.

The clients are the same code for all four (unless ``--sdk-bots``): each stream
sends its Hello, then reads, and answers each action request at once on the same
stream with the *instant* choice: the first legal action, except in the bidding
while nobody has bid, where it is the first one after pass (classic: take; coinche:
the lowest bid), since with pass first every deal would be thrown in and no card
ever played. A batch of requests (``action_requests``) is answered in one message
(``action_replies``). ``--sdk-bots`` runs the bots through the SDK (``belote_bot.Client``),
which adds the SDK's own work per message on the client side.

Comparable load: a match has one seat to act at a time, so ``--matches`` M keeps M
decisions in flight; the raw half keeps one round trip in flight per stream, hence
the default ``--streams`` = ``--matches``. (Raw throughput is about the same with 10
or 40 streams, but the latency grows with the round trips in flight.)

Measured at the server, the same way for all:

* latency, from just before the request is written to when the reply is back in
  the waiting code: raw, around ``context.write`` + ``context.read``; referee, the
  records' ``latencies_us``, which the runner measures around ``Hub.ask``. p50 and
  p99 over every decision after the warm-up (referee: of the matches started after it);
* rate: raw, replies received; referee, action requests sent (the node's request
  counter: the records only arrive at the end of each match), in each of
  ``--repeats`` windows of ``--seconds`` after a one-second warm-up, every stream or
  match busy throughout; the best window is kept. The referee's requests are checked
  against the decisions in all its records (no strike is expected; any is reported);
* CPU: user + system time of the server process (every thread) and of the client
  process over each window, and the server's CPU per round trip or decision.

uvloop is used in both processes when installed (the server through
``arena.referee.serve.install_uvloop``). With two CPUs or more the server process is
pinned to one CPU and the clients to the others (``--no-pin``: left to the OS).
The line before the last is ``node_cpu_vs_floor=F``, the referee's server CPU per decision
over the floor's, the least of each one's windows (target F <= 2.0, issue 18); the last is
``ratio_vs_raw_grpc=R``, referee decisions/s over raw round trips/s (target R >= 0.85).
Default run: about 45 s.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing as mp
import os
import platform
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

_ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(_ROOT), str(_ROOT / "sdk")]  # run from a checkout

import grpc  # noqa: E402
import grpc.aio  # noqa: E402
from belote.arena.v1 import bot_service_pb2 as bpb  # noqa: E402
from belote.arena.v1 import bot_service_pb2_grpc as bgrpc  # noqa: E402

from arena.engine import Ruleset  # noqa: E402
from arena.engine.actions import PASS  # noqa: E402

TARGET_RATIO = 0.85
#: the referee's CPU per decision at most this many times the floor's (issue 18)
TARGET_CPU_VS_FLOOR = 2.0
WARMUP_S = 1.0
#: what ``arena.referee.service.start_server`` gives its server
SERVER_OPTIONS: list[tuple[str, Any]] = [
    ("grpc.keepalive_time_ms", 20_000),
    ("grpc.keepalive_timeout_ms", 10_000),
    ("grpc.http2.min_ping_interval_without_data_ms", 5_000),
    ("grpc.keepalive_permit_without_calls", 1),
]
CHANNELS = 2  # client connections: the two bots; the raw streams are spread over as many


# --------------------------------------------------------------------------- the instant choice
def instant_action(request: bpb.ActionRequest) -> int:
    """The first legal action; the first after pass while nobody has bid (so deals get played)."""
    legal = request.legal_actions
    first: int = legal[0]
    if first == PASS and len(legal) > 1 and all(b == PASS for b in request.observation.bids):
        return int(legal[1])
    return first


def _reply(request: bpb.ActionRequest) -> bpb.ConnectRequest:
    return bpb.ConnectRequest(action_reply=bpb.ActionReply(
        request_id=request.request_id, action=instant_action(request)))


def _replies(requests: Sequence[bpb.ActionRequest]) -> bpb.ConnectRequest:
    """The answers to a batch of requests, in one message (as the SDK sends them)."""
    return bpb.ConnectRequest(action_replies=[
        bpb.ActionReply(request_id=r.request_id, action=instant_action(r)) for r in requests])


# --------------------------------------------------------------------------- client process
@dataclass(frozen=True)
class ClientPlan:
    address: str
    #: one Hello per stream: (token, name, concurrency)
    hellos: list[tuple[str, str, int]]
    sdk: bool = False
    cpus: list[int] | None = None


def _loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    try:
        import uvloop
    except ImportError:
        return None
    factory: Callable[[], asyncio.AbstractEventLoop] = uvloop.new_event_loop
    return factory


def client_main(plan: ClientPlan) -> None:
    """Entry point of the client process: answer on every stream until the server ends them."""
    if plan.cpus:
        os.sched_setaffinity(0, plan.cpus)
    with asyncio.Runner(loop_factory=_loop_factory()) as runner:
        runner.run(_sdk_clients(plan) if plan.sdk else _raw_clients(plan))


async def _answer(channel: grpc.aio.Channel, hello: bpb.Hello) -> None:
    call = bgrpc.BotServiceStub(channel).Connect()
    await call.write(bpb.ConnectRequest(hello=hello))
    read, write = call.read, call.write
    while True:
        msg = await read()
        if not isinstance(msg, bpb.ConnectResponse):  # EOF: the server ended the stream
            return
        if msg.WhichOneof("message") == "action_request":
            await write(_reply(msg.action_request))
        elif msg.action_requests:  # the referee's batch: answered in one message
            await write(_replies(msg.action_requests))


async def _raw_clients(plan: ClientPlan) -> None:
    channels = [grpc.aio.insecure_channel(plan.address) for _ in range(CHANNELS)]
    try:
        await asyncio.gather(*(
            _answer(channels[i % CHANNELS], bpb.Hello(token=token, name=name, concurrency=concurrency))
            for i, (token, name, concurrency) in enumerate(plan.hellos)
        ), return_exceptions=True)
    finally:
        for ch in channels:
            await ch.close(grace=None)


async def _sdk_clients(plan: ClientPlan) -> None:
    import logging

    from belote_bot import Bot, Observation
    from belote_bot.client import Client

    logging.getLogger("belote_bot").setLevel(logging.ERROR)  # no "lost the stream" as the bench ends

    class InstantBot(Bot):
        act_inline = True  # microseconds: no thread hop, as the built-in bots

        def act(self, obs: Observation) -> int:
            return instant_action(obs.raw)

    clients = [Client(InstantBot(), plan.address, token, concurrency, name=name, ping_interval=0)
               for token, name, concurrency in plan.hellos]
    # Client.run reconnects forever: stop when every stream has been lost once after its Welcome
    tasks = [asyncio.ensure_future(c.run()) for c in clients]
    while not all(c.welcome is not None for c in clients):
        await asyncio.sleep(0.05)
    while all(c._welcomed for c in clients):
        await asyncio.sleep(0.05)
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


class ClientProcess:
    """The clients of one half, in a child process started with "spawn"."""

    def __init__(self, plan: ClientPlan) -> None:
        self.proc = mp.get_context("spawn").Process(target=client_main, args=(plan,), daemon=True,
                                                    name="bench-clients")

    def __enter__(self) -> ClientProcess:
        self.proc.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.proc.join(5)
        if self.proc.is_alive():
            self.proc.terminate()
            self.proc.join(5)


# --------------------------------------------------------------------------- shared measuring
@dataclass
class Window:
    rate_per_s: float
    #: CPU seconds per second of the server process and of the client process (1.0: one CPU busy)
    server_cpu: float
    client_cpu: float | None
    #: server CPU per round trip or decision, microseconds
    server_cpu_us: float


@dataclass
class HalfResult:
    name: str
    rate_per_s: float
    windows: list[Window]
    p50_us: float
    p99_us: float
    samples: int
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def best(self) -> Window:
        return max(self.windows, key=lambda w: w.rate_per_s)

    @property
    def least_cpu_us(self) -> float:
        """The server's CPU per round trip or decision, the least of the windows: another process
        on the machine only adds to it (caches, migrations), never takes from it."""
        return min(w.server_cpu_us for w in self.windows)


def pct(sorted_values: Sequence[int], q: float) -> float:
    """The ``q`` quantile (linear interpolation) of sorted values, rounded to 0.1."""
    if not sorted_values:
        return float("nan")
    k = (len(sorted_values) - 1) * q
    lo = int(k)
    hi = min(lo + 1, len(sorted_values) - 1)
    return round(sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (k - lo), 1)


def process_cpu_s(pid: int | None) -> float | None:
    """CPU seconds (user + system, every thread) of this process or of child ``pid`` (Linux)."""
    if pid is None:
        return time.process_time()
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def measure_windows(count: Callable[[], int], seconds: float, repeats: int,
                          child: int | None) -> list[Window]:
    """``count()`` per second, and CPU use, over ``repeats`` consecutive windows of ``seconds``."""
    out = []
    for _ in range(repeats):
        c0, t0, s0, k0 = count(), time.perf_counter(), process_cpu_s(None), process_cpu_s(child)
        await asyncio.sleep(seconds)
        c1, t1, s1, k1 = count(), time.perf_counter(), process_cpu_s(None), process_cpu_s(child)
        assert s0 is not None and s1 is not None
        dt, n = t1 - t0, max(1, c1 - c0)
        out.append(Window(
            round(n / dt, 1), round((s1 - s0) / dt, 3),
            None if k0 is None or k1 is None else round((k1 - k0) / dt, 3), round((s1 - s0) / n * 1e6, 1),
        ))
    return out


async def wait_until(cond: Callable[[], bool], timeout: float, what: str,
                     child: mp.process.BaseProcess | None = None) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if child is not None and not child.is_alive():
            raise RuntimeError(f"the client process died (exit code {child.exitcode}) before {what}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out waiting for {what}")
        await asyncio.sleep(0.01)


# --------------------------------------------------------------------------- the referee's messages
@dataclass
class Sample:
    """What the referee sends per decision, from matches played over in-memory links."""

    #: the action requests of the first round, serialized ConnectResponses with their events
    requests: list[bytes]
    #: the same requests as parts: (the framed public events that rode in front of it, the
    #: serialized ActionRequest), from which the floor assembles batches like the referee's
    parts: list[tuple[bytes, bytes]]
    events_per_request: float
    request_bytes: float
    reply_bytes: float
    #: every message the referee sent (requests, flushes, match start and end) per decision
    messages_per_decision: float
    #: the referee's own CPU per decision without gRPC (runner, rules, protobuf, sessions), us
    in_memory_us: float


async def in_memory(rules: Ruleset, matches: int, rounds: int = 3) -> Sample:
    """Play ``rounds`` x ``matches`` matches (``matches`` at once) through the real runner and hub
    over in-memory links: each link writes the serialized messages it would give gRPC, and each
    request is answered at once with the instant choice. The first round's requests are kept; the
    others are timed (without the time spent parsing the messages to answer them)."""
    from arena.referee import wire
    from arena.referee.runner import MatchRunner, MatchSpec, Seat
    from arena.referee.sessions import BotLink, Hub

    hub = Hub()
    links = [hub.link(f"bot-{i}", f"instant{i}") for i in range(2)]
    requests: list[bytes] = []
    parts: list[tuple[bytes, bytes]] = []
    replies: list[int] = []
    keep = True
    counts = {"requests": 0, "messages": 0, "events": 0}
    parsing = [0.0]  # seconds spent by the in-memory bots parsing what they got
    loop = asyncio.get_running_loop()
    clock = time.perf_counter

    def writer_for(link: BotLink) -> Callable[[bytes], Awaitable[None]]:
        async def write(data: bytes) -> None:
            t0 = clock()
            msg = bpb.ConnectResponse.FromString(data)
            parsing[0] += clock() - t0
            counts["messages"] += 1
            if msg.WhichOneof("message") == "action_request":
                reqs: Sequence[bpb.ActionRequest] = [msg.action_request]
            else:
                reqs = msg.action_requests  # a batch (or no request at all)
            counts["requests"] += len(reqs)
            if keep and reqs:
                counts["events"] += len(msg.events)
                if len(reqs) == 1:
                    requests.append(data)
                else:  # the raw reference sends one request a message: the events on the first
                    for i, req in enumerate(reqs):
                        requests.append(bpb.ConnectResponse(
                            events=msg.events if i == 0 else (), action_request=req).SerializeToString())
                replies.extend(_reply(req).ByteSize() for req in reqs)
                events = b"".join(wire.event_field(e.SerializeToString()) for e in msg.events)
                parts.extend((events if i == 0 else b"", req.SerializeToString())
                             for i, req in enumerate(reqs))
            for req in reqs:
                loop.call_soon(link.resolve, req.request_id, instant_action(req))
        return write

    for link in links:
        link.attach(writer_for(link), name=link.name, version="", concurrency=2 * matches)
    seats = [Seat(links[i & 1].bot_id, links[i & 1].name, links[i & 1]) for i in range(4)]

    async def play(r: int, w: int) -> None:
        spec = MatchSpec(f"m-{r:06x}{w:06x}", rules, f"bench/{r}/{w}", seats)
        record = await MatchRunner(hub, spec).run()
        assert record.result.reason == "finished", record.result

    await asyncio.gather(*(play(0, w) for w in range(matches)))
    keep = False
    kept = len(requests)
    before = {**counts}
    parsing[0] = 0.0
    cpu0 = time.process_time()
    for r in range(1, rounds):
        await asyncio.gather(*(play(r, w) for w in range(matches)))
    cpu = time.process_time() - cpu0 - parsing[0]
    decided = counts["requests"] - before["requests"]
    return Sample(
        requests, parts, counts["events"] / kept, sum(map(len, requests)) / kept, sum(replies) / kept,
        (counts["messages"] - before["messages"]) / decided, cpu / decided * 1e6,
    )


# --------------------------------------------------------------------------- half (a): raw gRPC
class PingPong(bgrpc.BotServiceServicer):
    """``BotService.Connect`` that only ping-pongs the referee's messages, measuring each round trip."""

    def __init__(self, sample: Sample) -> None:
        self.sample = sample
        self.streams = 0
        self.round_trips = 0
        self.latencies: list[int] | None = None  # a list once the warm-up is over
        self.stopping = False

    async def Connect(  # type: ignore[override]  # reads and writes through the context, like the referee
        self, request_iterator: Any, context: grpc.aio.ServicerContext[Any, Any],
    ) -> None:
        hello = await context.read()
        if hello is grpc.aio.EOF:
            return
        offset = self.streams * 7
        self.streams += 1
        msgs = [bpb.ConnectResponse.FromString(b) for b in self.sample.requests]
        msgs = msgs[offset % len(msgs):] + msgs[:offset % len(msgs)]
        n = len(msgs)
        i = 0
        rid = 0
        read, write, perf = context.read, context.write, time.perf_counter
        while not self.stopping:
            msg = msgs[i]
            i = i + 1 if i + 1 < n else 0
            rid += 1
            msg.action_request.request_id = rid
            t0 = perf()
            await write(msg)
            reply = await read()
            t1 = perf()
            if reply is grpc.aio.EOF:
                return
            self.round_trips += 1
            if self.latencies is not None:
                self.latencies.append(int((t1 - t0) * 1e6))


class PingPongMux(PingPong):
    """The same ping-pong with the referee's stream layout: one stream per client, several round
    trips in flight on it (the Hello's ``concurrency``), writes serialized, replies matched by id."""

    async def Connect(  # type: ignore[override]
        self, request_iterator: Any, context: grpc.aio.ServicerContext[Any, Any],
    ) -> None:
        hello = await context.read()
        if not isinstance(hello, bpb.ConnectRequest):
            return
        self.streams += 1
        lock = asyncio.Lock()
        pending: dict[int, asyncio.Future[int]] = {}
        loop = asyncio.get_running_loop()
        write = context.write
        next_rid = 0

        async def slot(k: int) -> None:
            nonlocal next_rid
            msgs = [bpb.ConnectResponse.FromString(b) for b in self.sample.requests]
            n, i, perf = len(msgs), (k * 7) % len(msgs), time.perf_counter
            while not self.stopping:
                msg = msgs[i]
                i = i + 1 if i + 1 < n else 0
                next_rid += 1
                rid = msg.action_request.request_id = next_rid
                fut = pending[rid] = loop.create_future()
                t0 = perf()
                async with lock:
                    await write(msg)
                await fut
                t1 = perf()
                self.round_trips += 1
                if self.latencies is not None:
                    self.latencies.append(int((t1 - t0) * 1e6))

        slots = [asyncio.ensure_future(slot(k)) for k in range(max(1, hello.hello.concurrency))]
        try:
            while not self.stopping:
                reply = await context.read()
                if not isinstance(reply, bpb.ConnectRequest):
                    break
                fut = pending.pop(reply.action_reply.request_id, None)
                if fut is not None:
                    fut.set_result(reply.action_reply.action)
        finally:
            for t in slots:
                t.cancel()
            await asyncio.gather(*slots, return_exceptions=True)


async def run_raw(args: argparse.Namespace, sample: Sample, cpus: list[int] | None,
                  mux: bool = False) -> HalfResult:
    servicer = PingPongMux(sample) if mux else PingPong(sample)
    server = grpc.aio.server(options=SERVER_OPTIONS)
    bgrpc.add_BotServiceServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    if mux:  # like the bots: CHANNELS streams, the round trips in flight shared between them
        hellos = [("", f"mux-{i}", len(range(i, args.streams, CHANNELS))) for i in range(CHANNELS)]
    else:
        hellos = [("", f"pingpong-{i}", 1) for i in range(args.streams)]
    plan = ClientPlan(f"127.0.0.1:{port}", hellos, cpus=cpus)
    try:
        with ClientProcess(plan) as child:
            await wait_until(lambda: servicer.streams == len(hellos), 30, "the ping-pong streams",
                             child.proc)
            await asyncio.sleep(args.warmup)
            servicer.latencies = []
            windows = await measure_windows(lambda: servicer.round_trips, args.seconds, args.repeats,
                                            child.proc.pid)
            lat = sorted(servicer.latencies)
            servicer.stopping = True  # the handlers return: the streams end, the clients exit
            await server.stop(0.2)
    finally:
        servicer.stopping = True
        await server.stop(0.2)
    best = max(w.rate_per_s for w in windows)
    name = "raw mux" if mux else "raw gRPC"
    return HalfResult(name, best, windows, pct(lat, 0.5), pct(lat, 0.99), len(lat),
                      {"streams": len(hellos), "channels": CHANNELS, "in_flight": args.streams})


# --------------------------------------------------------------------------- the floor
def floor_batches(parts: Sequence[tuple[bytes, bytes]], batch: float, offset: int) -> list[bytes]:
    """The referee's requests (from ``offset`` on, cyclically) assembled as it assembles them: each
    message a batch of ``batch`` requests on average (sizes ``floor(batch)`` and ``ceil(batch)``,
    spread evenly), the events that rode on them in front (:mod:`arena.referee.wire`)."""
    from arena.referee import wire

    n = len(parts)
    ordered = [parts[(offset + i) % n] for i in range(n)]
    out: list[bytes] = []
    j = i = 0
    while i < n:
        size = max(1, int((j + 1) * batch) - int(j * batch))
        chunk = ordered[i:i + size]
        out.append(b"".join([events for events, _ in chunk]
                            + wire.requests_fields([request for _, request in chunk])))
        i += size
        j += 1
    return out


class Floor:
    """``BotService.Connect`` at grpc.aio's floor for the referee's traffic: per stream, it writes
    a message of the referee's requests (bytes assembled beforehand, written through the same
    pass-through serializer as the node's), reads the bot's answer (parsed by the real
    ``ConnectRequest`` parser, as the node must, each reply's id and action read), and writes the
    next: what any referee must do per message, and nothing else."""

    def __init__(self, sample: Sample, batch: float) -> None:
        self.sample = sample
        self.batch = batch
        self.streams = 0
        self.decisions = 0
        self.stopping = False

    async def Connect(self, request_iterator: Any, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        hello = await context.read()
        if not isinstance(hello, bpb.ConnectRequest):
            return
        msgs = floor_batches(self.sample.parts, self.batch, self.streams * 7)
        self.streams += 1
        n, i = len(msgs), 0
        read, write = context.read, context.write
        while not self.stopping:
            await write(msgs[i])
            i = i + 1 if i + 1 < n else 0
            reply = await read()
            if not isinstance(reply, bpb.ConnectRequest):
                return
            answered = 0
            for r in reply.action_replies:
                answered += r.action >= 0 and r.request_id >= 0
            if reply.HasField("action_reply"):
                answered += 1
            self.decisions += answered


async def run_floor(args: argparse.Namespace, sample: Sample, cpus: list[int] | None,
                    batch: float) -> HalfResult:
    """The floor: :class:`Floor` over the referee's number of streams (one per bot, each on its own
    channel), ``batch`` requests per message."""
    from arena.edge.guard import receive_cap
    from arena.referee.limits import Limits

    servicer = Floor(sample, batch)
    cap = receive_cap(Limits().max_concurrency)
    server = grpc.aio.server(options=[*SERVER_OPTIONS, ("grpc.max_receive_message_length", cap),
                                      ("grpc.http2.lookahead_bytes", cap), ("grpc.http2.bdp_probe", 0)])
    handlers: dict[str, grpc.RpcMethodHandler[bpb.ConnectRequest, bytes]] = {
        "Connect": grpc.stream_stream_rpc_method_handler(
            servicer.Connect, request_deserializer=bpb.ConnectRequest.FromString, response_serializer=None),
    }
    name = bpb.DESCRIPTOR.services_by_name["BotService"].full_name
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(name, handlers),))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    hellos = [("", f"floor-{i}", max(1, round(batch))) for i in range(CHANNELS)]
    plan = ClientPlan(f"127.0.0.1:{port}", hellos, cpus=cpus)
    try:
        with ClientProcess(plan) as child:
            await wait_until(lambda: servicer.streams == len(hellos), 30, "the floor's streams", child.proc)
            await asyncio.sleep(args.warmup)
            windows = await measure_windows(lambda: servicer.decisions, args.seconds, args.repeats,
                                            child.proc.pid)
            servicer.stopping = True
            await server.stop(0.2)
    finally:
        servicer.stopping = True
        await server.stop(0.2)
    return HalfResult("floor", max(w.rate_per_s for w in windows), windows, float("nan"), float("nan"), 0,
                      {"streams": len(hellos), "requests_per_message": round(batch, 2)})


# --------------------------------------------------------------------------- half (b): the referee
async def run_referee(args: argparse.Namespace, cpus: list[int] | None) -> HalfResult:
    from arena.records import MatchRecord, ResultReason, TimeControl
    from arena.referee.node import Node, NodeConfig
    from arena.referee.service import start_server, stop_server

    # generous time: an instant bot is never late, but a profiler or a busy machine may slow the node
    node = Node(NodeConfig(time=TimeControl(deadline=30.0, time_bank=60.0, grace=60.0)))
    server, port = await start_server(node)
    seats_per_bot = 2 * args.matches
    entries = [node.register_bot(f"instant{i}") for i in range(2)]
    plan = ClientPlan(f"127.0.0.1:{port}", [(tok, e.name, seats_per_bot) for e, tok in entries],
                      sdk=args.sdk_bots, cpus=cpus)
    links = [node.link_for(e) for e, _ in entries]
    stop = False
    measuring_from = float("inf")
    every: list[MatchRecord] = []
    measured: list[MatchRecord] = []  # the matches started after the warm-up
    other_end: list[str] = []

    async def worker(w: int) -> None:
        k = 0
        while not stop:
            started = time.perf_counter()
            match_id = node.start_match(entries[0][0].bot_id, entries[1][0].bot_id, args.ruleset,
                                        seed=f"bench/{w}/{k}", deals=args.deals)
            k += 1
            record = await node.wait(match_id)
            every.append(record)
            if record.result.reason is not ResultReason.FINISHED:
                other_end.append(f"{match_id}: {record.result.reason}")
            elif started >= measuring_from:
                measured.append(record)

    try:
        with ClientProcess(plan) as child:
            await wait_until(lambda: all(link.connected for link in links), 30, "the bots", child.proc)
            workers = [asyncio.ensure_future(worker(w)) for w in range(args.matches)]
            await asyncio.sleep(args.warmup)
            measuring_from = time.perf_counter()
            # the node's request counter (one per action request sent): the records only come at
            # the end of each match, this counts the decisions of a window exactly
            windows = await measure_windows(lambda: node.requests_sent, args.seconds, args.repeats,
                                            child.proc.pid)
            stop = True  # no new match; let those running finish
            done, _ = await asyncio.wait(workers, timeout=30)
            for t in done:
                t.result()
            requests = node.requests_sent
            # every message of the run, warm-up included: requests come batched, replies too
            sent = sum(link.messages_sent for link in links)
            received = sum(link.messages_received for link in links)
            await stop_server(server, node, grace=0.2)  # the streams end, the clients exit
    finally:
        stop = True
        await stop_server(server, node, grace=0.2)
    if other_end:
        raise RuntimeError(f"matches did not finish: {other_end[:3]}")

    def decisions(records: list[MatchRecord]) -> list[int]:
        return [x for record in records for deal in record.latencies_us for x in deal]

    lat = sorted(x for x in decisions(measured) if x >= 0)  # -1: a fallback (none expected)
    strikes = sum(len(record.strikes) for record in every)
    best = max(w.rate_per_s for w in windows)
    return HalfResult("referee", best, windows, pct(lat, 0.5), pct(lat, 0.99), len(lat), {
        "matches": args.matches, "bots": 2, "seats_per_bot": seats_per_bot, "deals_per_match": args.deals,
        "ruleset": args.ruleset, "sdk_bots": args.sdk_bots, "matches_measured": len(measured),
        "decisions_measured": len(lat), "requests_sent": requests,
        "decisions_in_records": len(decisions(every)), "strikes": strikes,
        "messages_sent_per_decision": round(sent / max(1, requests), 3),
        "messages_received_per_decision": round(received / max(1, requests), 3),
        # the bots answer each message of requests in one message: requests per message that has any
        "requests_per_message": round(requests / max(1, received), 3),
        "writes_without_request": round(1 - received / max(1, sent), 3),
    })


# --------------------------------------------------------------------------- main
@dataclass
class Results:
    python: str
    grpcio: str
    uvloop: bool
    cpus: int
    server_cpus: list[int] | None
    client_cpus: list[int] | None
    seconds: float
    #: the warm-up before a measure's first window, seconds
    warmup_s: float
    repeats: int
    request_bytes: float
    events_per_request: float
    reply_bytes: float
    messages_per_decision: float
    referee_in_memory_us: float
    raw: HalfResult | None
    raw_mux: HalfResult | None
    referee: HalfResult | None
    floor: HalfResult | None
    #: raw server CPU per round trip over referee server CPU per decision (best windows), for information
    cpu_ratio_vs_raw_grpc: float | None
    ratio_vs_raw_grpc: float | None
    #: the referee's server CPU per decision over the floor's (the least of each one's windows)
    node_cpu_vs_floor: float | None
    target_ratio: float = TARGET_RATIO
    target_cpu_vs_floor: float = TARGET_CPU_VS_FLOOR


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--quick", action="store_true",
                   help="--seconds 0.25 --repeats 1 --deals 2, a 0.15 s warm-up (what CI runs)")
    p.add_argument("--seconds", type=float, default=None, help="length of one timed window (2)")
    p.add_argument("--repeats", type=int, default=None, help="timed windows per measure, best kept (5)")
    p.add_argument("--streams", type=int, default=None,
                   help="raw half: ping-pong streams, one round trip in flight each (default: --matches)")
    p.add_argument("--matches", type=int, default=10,
                   help="referee half: matches at once, one decision in flight each (10)")
    p.add_argument("--deals", type=int, default=None, help="deals per referee match (4)")
    p.add_argument("--ruleset", default="classic", help="referee preset (classic)")
    p.add_argument("--sdk-bots", action="store_true", help="run the referee's bots through belote_bot")
    p.add_argument("--no-pin", action="store_true", help="do not pin the server and the clients to CPUs")
    p.add_argument("--half", choices=("all", "raw", "mux", "referee", "floor"), default="all",
                   help="run one measure only, e.g. to profile it (default: all four)")
    p.add_argument("--batch", type=float, default=None,
                   help="floor: requests per message (default: the referee's, as measured in the same "
                        "run; 4 when the referee is not run)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    args = p.parse_args(argv)
    if args.seconds is None:
        args.seconds = 0.25 if args.quick else 2.0
    if args.repeats is None:
        args.repeats = 1 if args.quick else 5
    if args.deals is None:
        args.deals = 2 if args.quick else 4
    args.warmup = 0.15 if args.quick else WARMUP_S
    if args.streams is None:
        args.streams = args.matches
    for name in ("repeats", "streams", "matches", "deals"):
        if getattr(args, name) < 1:
            p.error(f"--{name} must be at least 1")
    if args.seconds <= 0:
        p.error("--seconds must be positive")
    if args.batch is not None and args.batch < 1:
        p.error("--batch must be at least 1")
    try:
        Ruleset.from_spec(args.ruleset)
    except Exception as e:
        p.error(str(e))
    return args


def cpu_plan(no_pin: bool) -> tuple[list[int] | None, list[int] | None]:
    """(server CPUs, client CPUs): one CPU for the server, the others for the clients."""
    if no_pin or not hasattr(os, "sched_getaffinity"):
        return None, None
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        return None, None
    return cpus[:1], cpus[1:]


async def run_async(args: argparse.Namespace, cpus: int, server_cpus: list[int] | None,
                    client_cpus: list[int] | None, with_uvloop: bool) -> Results:
    rules = Ruleset.from_spec(args.ruleset).with_options(deals=args.deals)
    sample = await in_memory(rules, args.matches)
    raw = await run_raw(args, sample, client_cpus) if args.half in ("all", "raw") else None
    mux = await run_raw(args, sample, client_cpus, mux=True) if args.half in ("all", "mux") else None
    ref = await run_referee(args, client_cpus) if args.half in ("all", "referee") else None
    batch = args.batch or (ref.extra["requests_per_message"] if ref is not None else 4.0)
    floor = await run_floor(args, sample, client_cpus, batch) if args.half in ("all", "floor") else None
    ratio = cpu_ratio = vs_floor = None
    if raw is not None and ref is not None:
        ratio = round(ref.rate_per_s / raw.rate_per_s, 3)
        cpu_ratio = round(raw.best.server_cpu_us / ref.best.server_cpu_us, 3)
    if floor is not None and ref is not None:
        vs_floor = round(ref.least_cpu_us / floor.least_cpu_us, 3)
    return Results(
        python=platform.python_version(), grpcio=grpc.__version__, uvloop=with_uvloop, cpus=cpus,
        server_cpus=server_cpus, client_cpus=client_cpus, seconds=args.seconds, warmup_s=args.warmup,
        repeats=args.repeats,
        request_bytes=round(sample.request_bytes, 1), events_per_request=round(sample.events_per_request, 2),
        reply_bytes=round(sample.reply_bytes, 1),
        messages_per_decision=round(sample.messages_per_decision, 3),
        referee_in_memory_us=round(sample.in_memory_us, 1),
        raw=raw, raw_mux=mux, referee=ref, floor=floor, cpu_ratio_vs_raw_grpc=cpu_ratio,
        ratio_vs_raw_grpc=ratio, node_cpu_vs_floor=vs_floor,
    )


def report(res: Results) -> None:
    pin = (f"server on CPU {res.server_cpus}, clients on CPU {res.client_cpus}" if res.server_cpus
           else "not pinned")
    print(f"referee bench: Python {res.python}, grpcio {res.grpcio}, uvloop {'on' if res.uvloop else 'OFF'}, "
          f"{res.cpus} CPUs ({pin}); best of {res.repeats} x {res.seconds:g} s windows after "
          f"{res.warmup_s:g} s warm-up")
    print(f"messages: action request {res.request_bytes:.0f} B on average ({res.events_per_request:.2f} "
          f"public events riding on it), reply {res.reply_bytes:.0f} B; "
          f"{res.messages_per_decision:.3f} messages sent per decision")
    print(f"referee work without gRPC (runner, rules, protobuf, sessions over in-memory links): "
          f"{res.referee_in_memory_us:.1f} us CPU per decision")
    for half, unit in ((res.raw, "round trips/s"), (res.raw_mux, "round trips/s"),
                       (res.referee, "decisions/s"), (res.floor, "decisions/s")):
        if half is None:
            continue
        x = half.extra
        if half is res.raw:
            what = f"{x['streams']} streams over {x['channels']} channels, 1 round trip in flight each"
        elif half is res.floor:
            what = (f"{x['streams']} streams, one per channel, {x['requests_per_message']:.2f} requests "
                    "per message as the referee's, one message in flight each")
        elif half is res.raw_mux:
            what = (f"info: {x['in_flight']} round trips in flight over {x['streams']} streams, "
                    "as the referee multiplexes its bots' seats")
        else:
            what = (f"{x['matches']} matches ({x['ruleset']}, {x['deals_per_match']} deals) at once, "
                    f"2 bots x {x['seats_per_bot']} seats{', SDK bots' if x['sdk_bots'] else ''}; "
                    f"{x['decisions_measured']} latencies from {x['matches_measured']} records; "
                    f"{x['requests_sent']} requests, {x['decisions_in_records']} decisions in all records, "
                    f"{x['strikes']} strikes; {x['messages_sent_per_decision']:.2f} messages sent and "
                    f"{x['messages_received_per_decision']:.2f} received per decision, "
                    f"{x['requests_per_message']:.2f} requests per message that has any, "
                    f"{x['writes_without_request']:.0%} of the writes without a request")
        best = half.best
        client = "?" if best.client_cpu is None else f"{best.client_cpu:.0%}"
        lat = "" if half is res.floor else f"p50 {half.p50_us:>6,.0f} us  p99 {half.p99_us:>6,.0f} us  "
        print(f"{half.name:<10}{half.rate_per_s:>9,.0f} {unit:<14} {lat}"
              f"server CPU {best.server_cpu_us:>5.1f} us each")
        print(f"{'':<10}({what}; windows {', '.join(f'{w.rate_per_s:,.0f}' for w in half.windows)}; "
              f"best window: server process {best.server_cpu:.0%} CPU, clients {client})")
    if res.node_cpu_vs_floor is not None:
        verdict = "met" if res.node_cpu_vs_floor <= res.target_cpu_vs_floor else "NOT met"
        assert res.referee is not None and res.floor is not None
        print(f"referee CPU per decision {res.referee.least_cpu_us:.1f} us, floor "
              f"{res.floor.least_cpu_us:.1f} us (the least of each one's windows)")
        print(f"target node_cpu_vs_floor <= {res.target_cpu_vs_floor:g} (referee CPU per decision over "
              f"the floor's): {verdict}")
    print(f"node_cpu_vs_floor={'n/a' if res.node_cpu_vs_floor is None else f'{res.node_cpu_vs_floor:.3f}'}")
    if res.ratio_vs_raw_grpc is None:
        print("ratio_vs_raw_grpc=n/a")
        return
    print(f"server CPU ratio (raw per round trip / referee per decision): {res.cpu_ratio_vs_raw_grpc:.3f}")
    verdict = "met" if res.ratio_vs_raw_grpc >= res.target_ratio else "NOT met"
    print(f"target ratio_vs_raw_grpc >= {res.target_ratio:g}: {verdict}")
    print(f"ratio_vs_raw_grpc={res.ratio_vs_raw_grpc:.3f}")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    server_cpus, client_cpus = cpu_plan(args.no_pin)
    if server_cpus is not None:
        os.sched_setaffinity(0, server_cpus)  # before any gRPC thread exists: they inherit it
    from arena.referee.serve import install_uvloop

    with_uvloop = install_uvloop()
    res = asyncio.run(run_async(args, cpus, server_cpus, client_cpus, with_uvloop))
    if args.json:
        print(json.dumps(asdict(res), indent=2))
    else:
        report(res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
