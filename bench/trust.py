"""Anonymous readers and hostile callers against an honest match on a node of a queue (issue 16).

Usage (from the repository root)::

    python bench/trust.py [--phases quiet,...] [--matches M] [--deals D] [--broker redis|embedded]
                          [--ramp S] [--phase-timeout S] [--no-pin] [--quick] [--json]

A node as deployed (``running_node`` with its web server, :func:`arena.web.web_for`) runs in this
process, pinned to CPU 0 when there are two or more; its queue is a Redis server of the bench's own
(started on a free port, nothing kept on disk, stopped at the end) when ``redis-server`` is
installed, else an embedded queue in a temporary folder (``--broker`` chooses). Two honest SDK bots
(``HeuristicBot`` and ``RandomBot``) run in a child process pinned to the other CPUs; each attack
runs in another child process on those CPUs at the lowest priority (``nice 19``), so that what it
costs is the node's cost, as if the attacker ran on a machine of its own.

Each phase first prepares what its attack needs, in the node's process (a finished match of many
deals, thousands of registered bots: ``prepare``), then starts its attack, waits ``--ramp``
seconds, and plays ``--matches`` honest matches one after the other (coinche, ``--deals`` deals
each) while the attack runs. It reports the honest decisions' round trips as the referee measured
them (the records' ``latencies_us``: p50, p99, max), the honest strikes, how long each match took,
what the node logged (lines at WARNING and above, tracebacks, bytes) and what the attacker's calls
got (its tally).

The phases:

* ``quiet``: no attack, the reference every other phase is compared with.
* ``registry``: 5,000 bots registered (1,000 with ``--quick``); two anonymous readers loop on
  ``ListBots`` (no page, as an old client asks), ``GetBot``, ``/api/v1/bots`` pages and
  ``/api/v1/bots/NAME``.
* ``cheap-reads``: two anonymous readers loop on calls that read nothing that grows, each a
  fraction of a millisecond of the node's time: one on gRPC (``ListMatches``, then ``GetMatch`` of
  the latest match listed), one on HTTP (``/api/v1/leaderboard`` of 20 rated bots). Before the
  node bounded each address's reads a second, the honest p99 went to 2.7-4.1x the quiet one's
  (three runs), the matches to 2.8-3.8x their time: what was left was the readers' share of the
  node's one process, not any read's size. With the bound (20 reads a second, 200 at once), 1.1-1.7x
  and 1.0-1.3x; the registry's readers from 3.3-3.6x to 0.9-1.1x.
* ``paused-redis`` (Redis only): Redis paused for 2 s every 3 s, and in each pause one call of each
  of those reads.
* ``slowloris``: 1,000 connections (200 with ``--quick``) to the web port from one address, half
  sending a request head a byte a second, half nothing, each opened again once the node closes it;
  a reader from a second loopback address asks for a page meanwhile. The tally says how long the
  node let a connection stay (``longest held s``, ``open at the end`` as the attacker saw it), how
  many it refused at once, and what the reader got. Before the bounds (``--ramp 8``): all 1,000
  held for the whole phase (8 s, and aiohttp's keep-alive would have kept them an hour), honest
  p99 1.6x quiet; after: 64 at once, none held past the 5 s head timeout, 4,900 refused as they
  came, the reader answered 19 times in 46 ms at most, honest p99 1.4-1.9x quiet.
* ``health-watch``: 3,200 anonymous ``Health/Watch`` streams (400 with ``--quick``) from one
  address, held, 200 of the refused ones opened again every second; from the same address a
  health check, a ListBots and a new bot stream are tried every second (the attack runs 5 s before
  the matches, even with ``--quick``). The tally says how many streams the node held and why it
  refused the others, and what the probes got. Before the bounds by kind (``--ramp 12``): 3,070
  held, grpc's limit of 3,072 calls full, three probes of four refused ("Concurrent RPC limit
  exceeded!"); after: 8 held, the rest refused for the address's limit, every probe answered,
  honest p99 1.4x quiet.
* ``sse-replay``, ``match-get``, ``watch-replay``: one anonymous address keeps four reads of a
  finished match of 1,000 deals going (200 with ``--quick``), each asking again as soon as it has
  its answer: its server-sent events, ``GET /api/v1/matches/ID``, gRPC ``WatchMatch``. Before the
  fix each read rebuilt the whole match from its record (on the event loop for the events, in a
  thread for the record): a 20-deal honest match went from 0.64 s to 102.8 s with the events, its
  p99 from 1.0 ms to 2,079 ms and its bot forfeited on strikes; 14.8x slower with the record, 1.4-2.5x
  with WatchMatch. Now each view is built once in a low-priority build process and kept, and the
  node serves two replays at once per address, paced (``arena.referee.replays``).

Adding a phase: an attacker coroutine ``async def attack_NAME(target: Target, stop: Stop, tally:
Counter[str]) -> None``, which runs in the attacker's child process until ``stop()`` is true and
counts what its calls got in ``tally``; optionally ``async def prepare_NAME(ctx: Prepared) -> dict[str,
str]`` run once in the node's process before the attack starts, whose values reach the attacker as
``target.extra``; and one entry in :data:`PHASES`. The attacker imports nothing of the server's
(it is a stranger on the network): grpc, aiohttp, redis and the generated protocol only.

The last lines are ``ratio_<phase>=`` (each attack's honest p99 over the quiet one's) and
``slowdown_<phase>=`` (its mean honest match time over the quiet one's). Nothing passes or fails
here; ``tests/test_trust_bench.py`` runs ``--quick`` and checks what must hold of every phase
(no honest strike, the attack refused as it should be). Numbers move with the machine's other load:
compare the phases of one run.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import multiprocessing as mp
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

_ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(_ROOT), str(_ROOT / "sdk")]  # run from a checkout

#: the admin credential of the bench's node (the attackers never get it)
ADMIN = "adm_bench-trust-not-a-secret-0123456789abcdef"
HONEST = ("honest-a", "honest-b")


# --------------------------------------------------------------------------- what an attacker gets
@dataclass(frozen=True)
class Target:
    """What an attacker knows of the node: its public addresses, and what ``prepare`` made."""

    #: the gRPC address (HOST:PORT)
    address: str
    #: the web server's base URL (http://HOST:PORT)
    url: str
    #: the Redis URL of the node's queue ("" with an embedded queue); only attacks that stand for a
    #: slow or failing Redis (not for a stranger) use it
    redis_url: str = ""
    #: ``--quick``: a smaller attack, for CI
    quick: bool = False
    extra: dict[str, str] = field(default_factory=dict)


#: ``stop()`` is true once the phase's honest matches are over
Stop = Callable[[], bool]
Attack = Callable[[Target, Stop, Counter[str]], Awaitable[None]]


@dataclass
class Prepared:
    """What a phase's ``prepare`` may use: the running node, its broker, its web server."""

    running: Any  # arena.node.run.RunningNode
    broker: Any  # arena.queue.Broker
    target: Target


Prepare = Callable[[Prepared], Awaitable[dict[str, str]]]


@dataclass(frozen=True)
class Phase:
    attack: Attack | None = None
    prepare: Prepare | None = None
    #: the phase needs the node's queue on Redis (skipped, saying so, on an embedded queue)
    needs_redis: bool = False
    #: seconds the attack runs before the matches at least, whatever ``--ramp`` (even ``--quick``'s)
    ramp: float = 0.0


async def _no_attack(target: Target, stop: Stop, tally: Counter[str]) -> None:
    while not stop():
        await asyncio.sleep(0.05)


# --------------------------------------------------------------------------- the bot registry (item 1)
#: the bots ``registry`` registers (--quick: a fifth)
REGISTRY_BOTS = 5000


async def prepare_registry(ctx: Prepared) -> dict[str, str]:
    """REGISTRY_BOTS bots registered in the node's queue (as other nodes would have), never connected."""
    import secrets

    count = REGISTRY_BOTS // 5 if ctx.target.quick else REGISTRY_BOTS

    def register() -> None:
        for i in range(count):
            name = f"reg-{i:05d}"
            ctx.broker.add_bot(name, json.dumps({"bot_id": f"bot-r{i:05d}", "name": name,
                                                 "token_sha256": secrets.token_hex(32), "revoked": False}))

    await asyncio.to_thread(register)
    await asyncio.sleep(1.0)  # a node that keeps a copy of the registry has it by now
    return {"bots": str(count)}


Reads = list[Callable[[], Awaitable[None]]]


@contextlib.asynccontextmanager
async def _registry_reads(target: Target, tally: Counter[str], rng: Any) -> AsyncIterator[Reads]:
    """One call each of the registry's reads: ListBots as an old client asks it (no page), GetBot, a
    page of /api/v1/bots, /api/v1/bots/NAME; each counts what it got."""
    import aiohttp
    import grpc
    from belote.arena.v1 import arena_service_pb2_grpc as agrpc

    bots = int(target.extra.get("bots", "1"))
    async with grpc.aio.insecure_channel(target.address) as channel, aiohttp.ClientSession() as http:
        stub = agrpc.ArenaServiceStub(channel)
        yield _reads(target, tally, rng, bots, stub, http)


def _reads(target: Target, tally: Counter[str], rng: Any, bots: int, stub: Any, http: Any) -> Reads:
    import aiohttp
    import grpc
    from belote.arena.v1 import arena_service_pb2 as apb

    def name() -> str:
        return f"reg-{rng.randrange(bots):05d}"

    async def rpc(call: Callable[[], Awaitable[Any]], what: str) -> None:
        try:
            await call()
            tally[f"{what} OK"] += 1
        except grpc.aio.AioRpcError as e:
            tally[f"{what} {e.code().name}"] += 1

    async def get(path: str, what: str) -> None:
        try:
            async with http.get(target.url + path, timeout=aiohttp.ClientTimeout(total=60)) as reply:
                await reply.read()
                tally[f"{what} {reply.status}"] += 1
        except (aiohttp.ClientError, TimeoutError) as e:
            tally[f"{what} {type(e).__name__}"] += 1

    return [
        lambda: rpc(lambda: stub.ListBots(apb.ListBotsRequest(), timeout=60), "ListBots"),
        lambda: rpc(lambda: stub.GetBot(apb.GetBotRequest(name=name()), timeout=60), "GetBot"),
        lambda: get(f"/api/v1/bots?offset={rng.randrange(bots)}&limit=200", "GET bots"),
        lambda: get(f"/api/v1/bots/{name()}", "GET bots/NAME"),
    ]


async def attack_registry(target: Target, stop: Stop, tally: Counter[str]) -> None:
    """Two anonymous readers, each waiting for its answer before its next call: one on gRPC
    (ListBots, GetBot), one on HTTP (a page of bots, a bot)."""
    import random

    async def reader(calls: Reads) -> None:
        while not stop():
            for call in calls:
                await call()

    async with _registry_reads(target, tally, random.Random(1)) as reads:
        await asyncio.gather(reader(reads[:2]), reader(reads[2:]))


# --------------------------------------------------------------------------- cheap reads (item 1)
#: the rated bots of the leaderboard ``cheap-reads`` reads, and the results they have
LEADERBOARD_BOTS, LEADERBOARD_RESULTS = 20, 100


async def prepare_cheap_reads(ctx: Prepared) -> dict[str, str]:
    """LEADERBOARD_RESULTS results between LEADERBOARD_BOTS bots in the node's queue, as other nodes
    would have written them: a leaderboard to read."""
    from arena.tournament import MatchJob, MatchResult
    from tests.factories import synthetic_record

    def write() -> None:
        for i in range(LEADERBOARD_RESULTS):
            a, b = f"rated-{i % LEADERBOARD_BOTS:02d}", f"rated-{(i + 1) % LEADERBOARD_BOTS:02d}"
            record = synthetic_record(f"cheap-{i:03d}", a, b, (1000, 500), 0, ruleset="coinche")
            job = MatchJob(record.match_id, "", a, b, "coinche", "1")
            ctx.broker.write_result(MatchResult.of_record(job, record, "node-elsewhere"))

    if not await asyncio.to_thread(ctx.broker.has_result, "cheap-000"):
        await asyncio.to_thread(write)
    return {"rated": str(LEADERBOARD_BOTS)}


async def attack_cheap_reads(target: Target, stop: Stop, tally: Counter[str]) -> None:
    """Two anonymous readers, each waiting for its answer before its next call: one on gRPC
    (ListMatches, GetMatch of the latest match listed), one on HTTP (the leaderboard)."""
    import aiohttp
    import grpc
    from belote.arena.v1 import arena_service_pb2 as apb
    from belote.arena.v1 import arena_service_pb2_grpc as agrpc

    async def on_grpc(stub: Any) -> None:
        latest = ""
        while not stop():
            try:
                matches = (await stub.ListMatches(apb.ListMatchesRequest(), timeout=60)).matches
                latest = matches[-1].match_id if matches else latest
                tally["ListMatches OK"] += 1
                await stub.GetMatch(apb.GetMatchRequest(match_id=latest), timeout=60)
                tally["GetMatch OK"] += 1
            except grpc.aio.AioRpcError as e:
                tally[f"grpc {e.code().name}"] += 1

    async def on_http(http: Any) -> None:
        while not stop():
            try:
                async with http.get(f"{target.url}/api/v1/leaderboard",
                                    timeout=aiohttp.ClientTimeout(total=60)) as reply:
                    await reply.read()
                    tally[f"GET leaderboard {reply.status}"] += 1
            except (aiohttp.ClientError, TimeoutError) as e:
                tally[f"GET leaderboard {type(e).__name__}"] += 1

    async with grpc.aio.insecure_channel(target.address) as channel, aiohttp.ClientSession() as http:
        await asyncio.gather(on_grpc(agrpc.ArenaServiceStub(channel)), on_http(http))


# --------------------------------------------------------------------------- a slow Redis (item 1)
#: how long each pause of ``paused-redis`` lasts, and how often one begins (seconds)
PAUSE_S = 2.0
PAUSE_EVERY_S = 3.0


async def attack_paused_redis(target: Target, stop: Stop, tally: Counter[str]) -> None:
    """Redis paused (CLIENT PAUSE: every command waits) for PAUSE_S every PAUSE_EVERY_S seconds, and
    in each pause one anonymous call of each of the registry's reads: what stands for a slow Redis
    and a reader who happens to call then."""
    import random

    import redis.asyncio

    client: Any = redis.asyncio.Redis.from_url(target.redis_url)
    async with _registry_reads(target, tally, random.Random(2)) as reads:
        while not stop():
            began = time.monotonic()
            await client.execute_command("CLIENT", "PAUSE", int(PAUSE_S * 1000))
            tally["pauses"] += 1
            await asyncio.sleep(0.05)
            await asyncio.gather(*(call() for call in reads))
            await asyncio.sleep(max(0.0, PAUSE_EVERY_S - (time.monotonic() - began)))
    await client.aclose()
async def attack_slowloris(target: Target, stop: Stop, tally: Counter[str]) -> None:
    from urllib.parse import urlsplit

    url = urlsplit(target.url)
    host, port = url.hostname or "127.0.0.1", url.port or 80
    count = 200 if target.quick else 1000
    head = b"GET / HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 100_000

    def held(seconds: float, key: str = "longest held s") -> None:
        tally[key] = max(tally[key], int(seconds))

    async def slow(k: int) -> None:
        while not stop():
            try:
                reader, writer = await asyncio.open_connection(host, port)
            except OSError:
                tally["connect failed"] += 1
                await asyncio.sleep(1.0)
                continue
            t0 = time.monotonic()
            tally["opened"] += 1
            sent, closed = 0, False
            try:
                while not stop():
                    if k % 2:  # half of them dribble their head; the others send nothing
                        writer.write(head[sent:sent + 1])
                        sent += 1
                    with contextlib.suppress(TimeoutError):
                        if not await asyncio.wait_for(reader.read(4096), 1.0):
                            closed = True  # by the node
                            break
            except OSError:
                closed = True  # reset by the node
            finally:
                writer.close()
            lived = time.monotonic() - t0
            held(lived)
            if not closed:
                tally["open at the end"] += 1
                held(lived, "oldest open at the end s")
                return
            tally["refused at once" if lived < 0.5 else "closed by the node"] += 1
            await asyncio.sleep(0.5)  # then again

    def reader_elsewhere() -> None:
        """An honest reader from a second address of this machine, in a thread of its own (the
        attack's loop is busy with its own thousand connections)."""
        request = f"GET /api/v1/pools HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode()
        while not stop():
            t0 = time.monotonic()
            try:
                with socket.create_connection((host, port), 10, source_address=("127.0.0.2", 0)) as s:
                    s.sendall(request)
                    answered = s.recv(12) == b"HTTP/1.1 200"
            except OSError:
                answered = False
            tally["reader answered" if answered else "reader not answered"] += 1
            held(1000 * (time.monotonic() - t0), "reader slowest ms")
            time.sleep(0.5)

    await asyncio.gather(asyncio.to_thread(reader_elsewhere), *(slow(k) for k in range(count)))


async def attack_health_watch(target: Target, stop: Stop, tally: Counter[str]) -> None:
    """Anonymous ``grpc.health.v1.Health/Watch`` streams from one address, 3,200 (400 with
    ``--quick``) opened 200 at a time and held, and 200 of those refused opened again every second;
    meanwhile, from the same address, a health check, a ListBots and a new bot stream (with a token
    the node does not know: let in, it is UNAUTHENTICATED) are tried every second, as a probe, a
    reader and a bot would."""
    import grpc
    from belote.arena.v1 import arena_service_pb2 as apb
    from belote.arena.v1 import arena_service_pb2_grpc as agrpc
    from belote.arena.v1 import bot_service_pb2 as bpb
    from belote.arena.v1 import bot_service_pb2_grpc as bgrpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    channels = [grpc.aio.insecure_channel(target.address) for _ in range(8)]
    in_flight = asyncio.Semaphore(200)  # all at once, grpc's client cancels some of them itself
    held: list[Any] = []

    def refused(what: str, e: grpc.aio.AioRpcError) -> None:
        tally[f"{what} refused: {e.code().name}: {(e.details() or '')[:70]}"] += 1

    async def watch(k: int) -> bool:
        """Open one stream and read its first message: True if the node holds it."""
        stub: Any = health_pb2_grpc.HealthStub(channels[k % len(channels)])  # stubs list no methods
        call = stub.Watch(health_pb2.HealthCheckRequest())
        try:
            await asyncio.wait_for(call.read(), 30)
        except grpc.aio.AioRpcError as e:
            refused("watch", e)
        except TimeoutError:
            tally["watch unanswered"] += 1
        else:
            held.append(call)
            tally["watches held"] = len(held)
            return True
        call.cancel()
        return False

    async def first(k: int) -> bool:
        async with in_flight:
            return stop() or await watch(k)

    async def again(k: int) -> None:
        """A refused stream opened again every second, as long as the phase lasts: the attacker
        takes any place that frees."""
        while not stop() and not await watch(k):
            await asyncio.sleep(1.0)

    async def probe() -> None:
        async with grpc.aio.insecure_channel(target.address) as channel:
            health: Any = health_pb2_grpc.HealthStub(channel)
            arena = agrpc.ArenaServiceStub(channel)
            bots = bgrpc.BotServiceStub(channel)
            while not stop():
                await asyncio.sleep(1.0)
                try:
                    await health.Check(health_pb2.HealthCheckRequest(), timeout=10)
                    tally["probe check answered"] += 1
                except grpc.aio.AioRpcError as e:
                    refused("probe check", e)
                try:
                    await arena.ListBots(apb.ListBotsRequest(), timeout=10)
                    tally["probe list answered"] += 1
                except grpc.aio.AioRpcError as e:
                    refused("probe list", e)
                stream = bots.Connect()
                try:
                    await stream.write(bpb.ConnectRequest(hello=bpb.Hello(token="bt_probe-not-a-token")))
                    await asyncio.wait_for(stream.read(), 10)
                except grpc.aio.AioRpcError as e:
                    # let in, and told the token is wrong (or, past 20 a minute, that it shows too many)
                    why = e.details() or ""
                    if e.code() == grpc.StatusCode.UNAUTHENTICATED or "wrong credentials" in why:
                        tally["probe stream let in"] += 1
                    else:
                        refused("probe stream", e)
                except TimeoutError:
                    tally["probe stream unanswered"] += 1
                finally:
                    stream.cancel()

    async def hold() -> None:
        opened = await asyncio.gather(*(first(k) for k in range(400 if target.quick else 3200)))
        await asyncio.gather(*(again(k) for k in [k for k, ok in enumerate(opened) if not ok][:200]))
        while not stop():
            await asyncio.sleep(0.1)

    try:
        await asyncio.gather(hold(), probe())
    finally:
        for call in held:
            call.cancel()
        await asyncio.gather(*(c.close(grace=None) for c in channels))


# --------------------------------------------------------------------------- replays of a finished match
#: the deals of the finished match the replay readers loop on: the largest there is (MAX_DEALS), or a
#: smaller one for --quick
REPLAY_DEALS, REPLAY_DEALS_QUICK = 1000, 200
#: requests each replay reader keeps going at once, all from its one address
REPLAY_LOOPS = 4


async def prepare_replay(ctx: Prepared) -> dict[str, str]:
    """A finished match of REPLAY_DEALS deals, as a node writes it: in the queue's results (played on
    another node: the web reads it there) and in this node's store (played here, before a restart:
    WatchMatch reads it there). Written once, for every replay phase."""
    from arena.tournament import MatchJob, MatchResult
    from tests.factories import played_record

    match_id = "replayed-quick" if ctx.target.quick else "replayed"
    if not await asyncio.to_thread(ctx.broker.has_result, match_id):
        record = played_record(match_id, REPLAY_DEALS_QUICK if ctx.target.quick else REPLAY_DEALS)
        job = MatchJob(match_id, "", "alpha", "beta", "coinche", str(record.seed))
        await asyncio.to_thread(ctx.broker.write_result, MatchResult.of_record(job, record, "node-elsewhere"))
        ctx.running.node._store.put(record)  # the node's own store, as its _run writes a record
    return {"match_id": match_id}


async def _loops(stop: Stop, tally: Counter[str], once: Callable[[], Awaitable[None]]) -> None:
    """REPLAY_LOOPS readers, each asking again as soon as it has its answer, whatever the answer."""
    async def loop() -> None:
        while not stop():
            try:
                await once()
            except Exception as e:  # a reset connection: counted, and asked again at once
                tally[type(e).__name__] += 1

    await asyncio.gather(*(loop() for _ in range(REPLAY_LOOPS)))


async def attack_sse_replay(target: Target, stop: Stop, tally: Counter[str]) -> None:
    """``GET /api/v1/matches/ID/events`` of the finished match, each read to its end."""
    import aiohttp

    url = f"{target.url}/api/v1/matches/{target.extra['match_id']}/events"
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=REPLAY_LOOPS)) as session:
        async def once() -> None:
            async with session.get(url) as reply:
                async for chunk in reply.content.iter_any():
                    tally["bytes"] += len(chunk)
                    if stop():
                        return
                tally[f"http {reply.status}"] += 1

        await _loops(stop, tally, once)


async def attack_match_get(target: Target, stop: Stop, tally: Counter[str]) -> None:
    """``GET /api/v1/matches/ID`` of the finished match (its record and each deal's outcome)."""
    import aiohttp

    url = f"{target.url}/api/v1/matches/{target.extra['match_id']}"
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=REPLAY_LOOPS)) as session:
        async def once() -> None:
            async with session.get(url) as reply:
                tally["bytes"] += len(await reply.read())
                tally[f"http {reply.status}"] += 1

        await _loops(stop, tally, once)


async def attack_watch_replay(target: Target, stop: Stop, tally: Counter[str]) -> None:
    """gRPC ``WatchMatch`` of the finished match, each read to its end."""
    import grpc
    import grpc.aio
    from belote.arena.v1 import arena_service_pb2 as apb
    from belote.arena.v1 import arena_service_pb2_grpc as agrpc

    async with grpc.aio.insecure_channel(target.address) as channel:
        stub = agrpc.ArenaServiceStub(channel)

        async def once() -> None:
            call = stub.WatchMatch(apb.WatchMatchRequest(match_id=target.extra["match_id"]))
            try:
                async for _ in call:
                    tally["messages"] += 1
                    if stop():
                        call.cancel()
                        return
                tally["OK"] += 1
            except grpc.aio.AioRpcError as e:
                tally[e.code().name] += 1

        await _loops(stop, tally, once)


#: every phase, by name, in the order they run by default
PHASES: dict[str, Phase] = {
    "quiet": Phase(),
    "registry": Phase(attack_registry, prepare_registry),
    "cheap-reads": Phase(attack_cheap_reads, prepare_cheap_reads),
    "paused-redis": Phase(attack_paused_redis, prepare_registry, needs_redis=True),
    "slowloris": Phase(attack_slowloris, ramp=2.0),  # its connections opened, those past 64 refused
    "health-watch": Phase(attack_health_watch, ramp=5.0),  # the child starts, opens its streams, probes
    "sse-replay": Phase(attack_sse_replay, prepare_replay),
    "match-get": Phase(attack_match_get, prepare_replay),
    "watch-replay": Phase(attack_watch_replay, prepare_replay),
}


# --------------------------------------------------------------------------- child processes
def _pin(cpus: list[int] | None) -> None:
    if cpus:
        with contextlib.suppress(OSError):
            os.sched_setaffinity(0, cpus)


def honest_main(address: str, tokens: dict[str, str], cpus: list[int] | None) -> None:
    _pin(cpus)
    from belote_bot import HeuristicBot, RandomBot, run_async

    async def main() -> None:
        await asyncio.gather(
            run_async(HeuristicBot(1), address, tokens[HONEST[0]], 4, name=HONEST[0], verbose=False),
            run_async(RandomBot(2), address, tokens[HONEST[1]], 4, name=HONEST[1], verbose=False),
        )

    asyncio.run(main())


def attacker_main(name: str, target: Target, cpus: list[int] | None, stop: Any, out: Any,
                  ready: Any) -> None:
    _pin(cpus)
    os.nice(19)
    logging.disable(logging.CRITICAL)
    tally: Counter[str] = Counter()
    attack = PHASES[name].attack or _no_attack

    async def main() -> None:
        ready.set()  # imported and under way: the phase's ramp counts from here
        try:
            await attack(target, stop.is_set, tally)
        except Exception as e:  # the attacker's own failure is a figure too, not a hang
            tally[f"attacker failed: {type(e).__name__}: {str(e)[:100]}"] += 1

    asyncio.run(main())
    out.put(dict(tally))


class InChild:
    """An attack in a child process, for the life of an ``async with``; its tally afterwards."""

    def __init__(self, name: str, target: Target, cpus: list[int] | None) -> None:
        ctx = mp.get_context("spawn")
        self._stop = ctx.Event()
        self._out: Any = ctx.Queue()
        self._ready = ctx.Event()
        self._proc = ctx.Process(target=attacker_main,
                                 args=(name, target, cpus, self._stop, self._out, self._ready),
                                 daemon=True, name=f"attack-{name}")
        self.tally: dict[str, int] = {}

    async def __aenter__(self) -> InChild:
        """Once the child runs its attack: a spawned child takes a second or more to import (much
        more on a loaded machine), which a short ramp counted from its start did not cover (the
        quick slowloris once had its 200 connections opened after the honest match was over)."""
        self._proc.start()
        await asyncio.get_running_loop().run_in_executor(None, self._ready.wait, 60)
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._stop.set()
        loop = asyncio.get_running_loop()
        try:
            self.tally = await loop.run_in_executor(None, lambda: self._out.get(timeout=60))
        except Exception:
            self.tally = {"attacker gave no tally": 1}
        await loop.run_in_executor(None, self._proc.join, 10)
        if self._proc.is_alive():
            self._proc.kill()


# --------------------------------------------------------------------------- the node and its logs
class LogCount(logging.Handler):
    """What the node logs at WARNING and above: lines, tracebacks, bytes, the first two lines."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.reset()

    def reset(self) -> None:
        self.lines = 0
        self.tracebacks = 0
        self.bytes = 0
        self.first: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        text = self.format(record)
        self.lines += 1
        self.bytes += len(text)
        if record.exc_info or "Traceback" in text:
            self.tracebacks += 1
        if len(self.first) < 2:
            self.first.append(text.splitlines()[0][:150])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def own_redis() -> Any:
    """A redis-server of the bench's own on a free port, keeping nothing on disk; its URL."""
    port = _free_port()
    proc = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                             "--appendonly", "no"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
                break
            if time.monotonic() > deadline or proc.poll() is not None:
                raise RuntimeError(f"redis-server on port {port} did not start")
            time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        proc.wait(10)


@contextlib.asynccontextmanager
async def a_node(folder: Path, redis_url: str) -> AsyncIterator[tuple[Any, Any, Any]]:
    """The node (RunningNode), its broker and its web server, for the life of the block."""
    from arena.node.run import NodeSettings, running_node
    from arena.queue import EmbeddedBroker
    from arena.queue.redis_broker import RedisBroker
    from arena.referee.access import AccessPolicy
    from arena.referee.registry import digest
    from arena.web import web_for

    broker = (RedisBroker(redis_url, prefix="bench-trust") if redis_url
              else EmbeddedBroker(folder / "queue.sqlite3"))
    settings = NodeSettings(poll_s=0.05, heartbeat_s=0.5, lease_s=10.0, drain_s=1.0,
                            access=AccessPolicy(admin_sha256=digest(ADMIN)))
    try:
        async with running_node(broker, settings, asyncio.Event()) as running, \
                web_for(running, "127.0.0.1:0") as web:
            yield running, broker, web
    finally:
        broker.close()


# --------------------------------------------------------------------------- phases
@dataclass
class Result:
    name: str
    skipped: str = ""
    decisions: int = 0
    p50_us: float = 0.0
    p99_us: float = 0.0
    max_us: int = 0
    honest_strikes: int = 0
    match_seconds: list[float] = field(default_factory=list)
    unfinished: int = 0
    log_lines: int = 0
    log_tracebacks: int = 0
    log_bytes: int = 0
    log_first: list[str] = field(default_factory=list)
    attacker: dict[str, int] = field(default_factory=dict)
    prepared: dict[str, str] = field(default_factory=dict)


def pct(values: list[int], q: float) -> float:
    if not values:
        return float("nan")
    k = (len(values) - 1) * q
    lo = int(k)
    hi = min(lo + 1, len(values) - 1)
    return round(values[lo] + (values[hi] - values[lo]) * (k - lo), 1)


async def run_phase(name: str, prepared: Prepared, args: argparse.Namespace, logs: LogCount,
                    cpus: list[int] | None) -> Result:
    phase = PHASES[name]
    result = Result(name)
    if phase.needs_redis and not prepared.target.redis_url:
        result.skipped = "needs the queue on Redis (--broker redis, with redis-server installed)"
        return result
    target = prepared.target
    if phase.prepare is not None:
        result.prepared = await phase.prepare(prepared)
        target = Target(target.address, target.url, target.redis_url, target.quick, dict(result.prepared))
    node = prepared.running.node
    latencies: list[int] = []
    logs.reset()
    attack = InChild(name, target, cpus) if phase.attack is not None else None
    async with attack or contextlib.nullcontext():
        if attack is not None:
            await asyncio.sleep(max(args.ramp, phase.ramp))  # the attack under way
        for _ in range(args.matches):
            t0 = time.monotonic()
            mid = node.start_match(*HONEST, "coinche", deals=args.deals)
            try:
                record = await asyncio.wait_for(asyncio.shield(node.wait(mid)), args.phase_timeout)
            except TimeoutError:
                node.cancel_match(mid)
                record = await node.wait(mid)
                result.unfinished += 1
            result.match_seconds.append(round(time.monotonic() - t0, 2))
            latencies += [v for deal in record.latencies_us for v in deal if v >= 0]
            result.honest_strikes += len(record.strikes)
    latencies.sort()
    result.decisions = len(latencies)
    result.p50_us, result.p99_us = pct(latencies, 0.5), pct(latencies, 0.99)
    result.max_us = latencies[-1] if latencies else 0
    result.attacker = attack.tally if attack is not None else {}
    result.log_lines, result.log_tracebacks, result.log_bytes = logs.lines, logs.tracebacks, logs.bytes
    result.log_first = logs.first
    await asyncio.sleep(1.0)  # the node forgets the attack's calls before the next phase
    return result


async def main_async(args: argparse.Namespace, redis_url: str) -> list[Result]:
    from belote.arena.v1 import bot_service_pb2  # noqa: F401  (the protocol loads before the pin)

    two = (os.cpu_count() or 1) >= 2 and not args.no_pin
    if two:
        os.sched_setaffinity(0, [0])
    others = sorted(set(range(os.cpu_count() or 1)) - {0}) if two else None
    logs = LogCount()
    logging.basicConfig(level=logging.INFO, handlers=[logs], force=True)
    with tempfile.TemporaryDirectory(prefix="belote-trust-") as tmp:
        async with a_node(Path(tmp), redis_url) as (running, broker, web):
            node = running.node
            tokens = {name: node.register_bot(name)[1] for name in HONEST}
            honest = mp.get_context("spawn").Process(
                target=honest_main, args=(running.address, tokens, others), daemon=True, name="honest-bots")
            honest.start()
            try:
                deadline = time.monotonic() + 30
                while sum(b.connected for b in node.bots() if b.name in HONEST) < len(HONEST):
                    if time.monotonic() > deadline:
                        raise RuntimeError("the honest bots did not connect")
                    await asyncio.sleep(0.05)
                await node.wait(node.start_match(*HONEST, "coinche", deals=args.deals))  # warm-up
                prepared = Prepared(running, broker, Target(running.address, web.url, redis_url, args.quick))
                results = []
                for name in args.phases.split(","):
                    result = await run_phase(name, prepared, args, logs, others)
                    results.append(result)
                    if not args.json:
                        _print(result)
                return results
            finally:
                honest.terminate()
                honest.join(5)


def _print(r: Result) -> None:
    if r.skipped:
        print(f"{r.name:14} skipped: {r.skipped}", flush=True)
        return
    print(f"{r.name:14} p50 {r.p50_us / 1000:7.2f} ms  p99 {r.p99_us / 1000:7.2f} ms  "
          f"max {r.max_us / 1000:7.1f} ms  strikes {r.honest_strikes}  matches {r.match_seconds} s  "
          f"unfinished {r.unfinished}", flush=True)
    print(f"{'':14} log: {r.log_lines} lines, {r.log_tracebacks} tracebacks, {r.log_bytes} B", flush=True)
    for line in r.log_first:
        print(f"{'':14} log: {line}", flush=True)
    if r.prepared:
        print(f"{'':14} prepared: {r.prepared}", flush=True)
    if r.attacker:
        print(f"{'':14} attacker: {r.attacker}", flush=True)


def summary_lines(results: list[Result]) -> list[str]:
    """``ratio_<phase>=`` and ``slowdown_<phase>=`` of every attacked phase against the quiet one."""
    quiet = next((r for r in results if r.name == "quiet" and not r.skipped), None)
    lines = []
    for r in results:
        if quiet is None or r is quiet or r.skipped or not quiet.p99_us or not quiet.match_seconds:
            continue
        mean = sum(r.match_seconds) / len(r.match_seconds) if r.match_seconds else float("nan")
        quiet_mean = sum(quiet.match_seconds) / len(quiet.match_seconds)
        lines.append(f"ratio_{r.name}={r.p99_us / quiet.p99_us:.2f}")
        lines.append(f"slowdown_{r.name}={mean / quiet_mean:.2f}")
    return lines


def cli() -> None:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    p.add_argument("--phases", default=",".join(PHASES))
    p.add_argument("--matches", type=int, default=3, help="honest matches per phase")
    p.add_argument("--deals", type=int, default=20, help="coinche deals per honest match")
    p.add_argument("--broker", choices=("redis", "embedded"), default="redis",
                   help="the node's queue: a Redis server of the bench's own (when redis-server is "
                        "installed), or an embedded one")
    p.add_argument("--ramp", type=float, default=2.0, help="seconds the attack runs before the matches")
    p.add_argument("--phase-timeout", type=float, default=180.0, help="seconds per honest match at most")
    p.add_argument("--no-pin", action="store_true")
    p.add_argument("--quick", action="store_true",
                   help="CI's run: one honest match of 4 deals a phase, a short ramp, smaller attacks")
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    if args.quick:
        args.matches, args.deals, args.ramp = 1, 4, 0.5
    unknown = [n for n in args.phases.split(",") if n not in PHASES]
    if unknown:
        p.error(f"unknown phase {', '.join(unknown)}; known: {', '.join(PHASES)}")
    with contextlib.ExitStack() as stack:
        redis_url = ""
        if args.broker == "redis" and shutil.which("redis-server"):
            redis_url = stack.enter_context(own_redis())
        results = asyncio.run(main_async(args, redis_url))
    if args.json:
        print(json.dumps({"quick": args.quick, "broker": "redis" if redis_url else "embedded",
                          "phases": [asdict(r) for r in results]}))
        return
    for line in summary_lines(results):
        print(line)


if __name__ == "__main__":
    cli()
