"""Soak: a referee node's memory and open files over many finished matches.

Usage (from the repository root)::

    python bench/soak.py [--matches N] [--quick] [--warmup W] [--deals D] [--ruleset R]
                         [--parallel K] [--memory-store] [--watch-every E] [--json]

A real node (``Node`` + ``start_server``) in this process, with a data
folder in a temporary directory (``--memory-store``: none, the node keeps its
bounded in-memory store); two built-in random bots, each one ``python -m
belote_bot.bots.random`` process connected over real gRPC with ``2 K`` seats.
The bench starts ``--matches`` matches (1,000; ``--quick``: 100) with
``ArenaService.StartMatch`` over gRPC, ``K`` (``--parallel``, 4) at once, a
new one as soon as one ends: ``--deals`` (1) deals of ``--ruleset``
(coinche) each, the bots answering at once. Every ``E``-th finished match
(``--watch-every``, 10) is also watched to its end with ``WatchMatch`` after
it is over (the late watcher's events are rebuilt from the record) and its
record fetched with ``GetMatchRecord``: the paths that read records back.

Measured in this process (the node's), as it is (no ``gc.collect()`` forced: a
node never forces one, and garbage waiting for the collector is memory too): the resident
set (``VmRSS`` of ``/proc/self/status``) and the open file descriptors (the
entries of ``/proc/self/fd``), at the start (node up, bots connected), after
the warm-up (``--warmup`` matches, 50; ``--quick``: 20) and at the end. The
growth is the end less the warm-up: what the node keeps per finished match
once its caches, gRPC's buffers and the allocator's pools have settled. It
also counts the descriptors open on files of the data folder at the end (0:
a record is written and read without keeping its file open).

The target (issue 8): growth under 50 MB over 1,000 matches, and the open
files flat. The last lines are ``rss_growth_mb=`` and ``fds_growth=``. To see
what a long match costs, ``--deals 100 --matches 80 --warmup 0 --parallel 4``
plays the issue's measure (100-deal matches; growth from the start). Linux
only (``/proc``). Nothing passes or fails here: the figures are printed.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import asdict, dataclass
from pathlib import Path

_ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(_ROOT), str(_ROOT / "sdk")]  # run from a checkout

import grpc  # noqa: E402
import grpc.aio  # noqa: E402
from belote.arena.v1 import arena_service_pb2 as apb  # noqa: E402
from belote.arena.v1 import arena_service_pb2_grpc as agrpc  # noqa: E402
from belote_bot.client import TOKEN_ENV  # noqa: E402

from arena.records import TimeControl  # noqa: E402
from arena.referee.access import AccessPolicy  # noqa: E402
from arena.referee.node import Node, NodeConfig  # noqa: E402
from arena.referee.registry import digest, new_token  # noqa: E402
from arena.referee.service import start_server, stop_server  # noqa: E402

#: a prompt bot is never late, even on a loaded machine: the bench is about memory, not strikes
CLOCK = TimeControl(deadline=5.0, time_bank=10.0, max_strikes=3, grace=5.0)
#: the node's admin credential, made per run: StartMatch is an admin's call
ADMIN = new_token("adm")


@dataclass
class Sample:
    """The process's resident set and open descriptors at one moment."""

    matches: int
    rss_mb: float
    fds: int


@dataclass
class Soak:
    matches: int
    deals: int
    ruleset: str
    parallel: int
    store: str
    seconds: float
    start: Sample
    warm: Sample
    #: after each tenth of the matches past the warm-up (the last one is ``end``)
    trend: list[Sample]
    end: Sample
    peak_rss_mb: float
    watched: int
    data_files_open: int
    records_on_disk: int
    rss_growth_mb: float
    fds_growth: int


def rss_mb() -> float:
    return _status_kb("VmRSS") / 1024


def peak_rss_mb() -> float:
    return _status_kb("VmHWM") / 1024


def _status_kb(field: str) -> int:
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


def open_fds() -> list[str]:
    """What each open descriptor of this process points at."""
    out = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            out.append(os.readlink(f"/proc/self/fd/{fd}"))
        except OSError:  # closed meanwhile (the listing's own descriptor)
            continue
    return out


def sample(matches: int) -> Sample:
    # no gc.collect(): a node never forces one, and garbage waiting for the collector is memory too
    return Sample(matches=matches, rss_mb=round(rss_mb(), 1), fds=len(open_fds()))


@asynccontextmanager
async def bot_processes(node: Node, address: str, seats: int) -> AsyncIterator[None]:
    """The two random bots, each in a process of its own, connected to the node."""
    procs: list[subprocess.Popen[bytes]] = []
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    try:
        for name in ("soak-a", "soak-b"):
            _, token = node.register_bot(name)
            # the token in the environment, as the SDK reads it: never on a command line
            procs.append(subprocess.Popen(
                [sys.executable, "-m", "belote_bot.bots.random", "--address", address,
                 "--concurrency", str(seats), "--seed", name, "--log-level", "WARNING"],
                env={**env, TOKEN_ENV: token}, stdin=subprocess.DEVNULL,
            ))
        deadline = time.monotonic() + 60
        while not all(b.connected for b in node.bots()):
            ended = [p.returncode for p in procs if p.poll() is not None]
            if ended:
                raise RuntimeError(f"a bot process exited ({ended[0]}) before it connected")
            if time.monotonic() > deadline:
                raise RuntimeError("the bots did not connect within 60 s")
            await asyncio.sleep(0.05)
        yield
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


async def watch(stub: agrpc.ArenaServiceAsyncStub, match_id: str) -> int:
    """Watch a finished match to its end, then fetch its record; the events seen. The node replays
    so many finished matches at once per address (a record fetched is one) and refuses the others
    for a moment: a refusal is tried again, as the node asks."""
    for _ in range(200):
        try:
            events = 0
            async for msg in stub.WatchMatch(apb.WatchMatchRequest(match_id=match_id)):
                events += msg.HasField("event")
            await stub.GetMatchRecord(apb.GetMatchRecordRequest(match_id=match_id))
            return events
        except grpc.aio.AioRpcError as e:
            if e.code() is not grpc.StatusCode.RESOURCE_EXHAUSTED:
                raise
            await asyncio.sleep(0.05)
    raise RuntimeError(f"{match_id}: its replay refused 200 times for the replays per address")


async def play(stub: agrpc.ArenaServiceAsyncStub, node: Node, args: argparse.Namespace, count: int,
               first: int) -> int:
    """Play ``count`` matches, ``args.parallel`` at once; how many were watched after their end."""
    watched = 0
    next_index = first
    left = count
    admin = (("authorization", f"Bearer {ADMIN}"),)
    # the node replays so many finished matches at once per address and refuses the others (retry
    # later): the bench's watchers, all from one address, take turns
    replays = asyncio.Semaphore(node.config.limits.max_replays_per_address)

    async def one() -> None:
        nonlocal next_index, watched
        while True:
            index = next_index
            if index >= first + count:
                return
            next_index += 1
            started = await stub.StartMatch(apb.StartMatchRequest(
                team0_bot="soak-a" if index % 2 == 0 else "soak-b",
                team1_bot="soak-b" if index % 2 == 0 else "soak-a",
                ruleset=args.ruleset, seed=f"soak/{index}", deals=args.deals), metadata=admin)
            record = await node.wait(started.match_id)
            if record.result.reason != "finished":
                raise RuntimeError(f"match {started.match_id} ended {record.result.reason}: "
                                   f"{record.result.detail}")
            if args.watch_every and index % args.watch_every == 0:
                async with replays:
                    events = await watch(stub, started.match_id)
                if events == 0:
                    raise RuntimeError(f"a late watcher of {started.match_id} saw no event")
                watched += 1

    await asyncio.gather(*(one() for _ in range(min(args.parallel, left))))
    return watched


async def soak(args: argparse.Namespace) -> Soak:
    with tempfile.TemporaryDirectory(prefix="belote-soak-") as tmp:
        data = None if args.memory_store else Path(tmp)
        node = Node(NodeConfig(data_dir=data, time=CLOCK, access=AccessPolicy(admin_sha256=digest(ADMIN))))
        server, port = await start_server(node, "127.0.0.1:0")
        address = f"127.0.0.1:{port}"
        try:
            async with bot_processes(node, address, 2 * args.parallel), \
                    grpc.aio.insecure_channel(address) as channel:
                stub: agrpc.ArenaServiceAsyncStub = agrpc.ArenaServiceStub(channel)
                await channel.channel_ready()  # its socket counts from the start
                start = sample(0)
                began = time.perf_counter()
                watched = await play(stub, node, args, args.warmup, 0)
                warm = sample(args.warmup)
                # the rest in ten parts, sampled after each: the trend, not only its ends
                steps = [args.warmup + (args.matches - args.warmup) * i // 10 for i in range(11)]
                trend = []
                for lo, hi in itertools.pairwise(steps):
                    if hi > lo:
                        watched += await play(stub, node, args, hi - lo, lo)
                        trend.append(sample(hi))
                seconds = time.perf_counter() - began
                end = trend[-1]
                in_data = sum(1 for target in open_fds() if target.startswith(tmp))
                on_disk = len(list((Path(tmp) / "matches").glob("*.json"))) if data else 0
        finally:
            await stop_server(server, node, grace=0.5)
    return Soak(
        matches=args.matches, deals=args.deals, ruleset=args.ruleset, parallel=args.parallel,
        store="memory" if args.memory_store else "data folder", seconds=round(seconds, 1),
        start=start, warm=warm, trend=trend, end=end, peak_rss_mb=round(peak_rss_mb(), 1), watched=watched,
        data_files_open=in_data, records_on_disk=on_disk,
        rss_growth_mb=round(end.rss_mb - warm.rss_mb, 1), fds_growth=end.fds - warm.fds,
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--matches", type=int, default=None, help="matches in all (default 1,000; --quick 100)")
    ap.add_argument("--quick", action="store_true", help="100 matches, 20 of them warm-up")
    ap.add_argument("--warmup", type=int, default=None, help="matches before the second sample")
    ap.add_argument("--deals", type=int, default=1, help="deals per match")
    ap.add_argument("--ruleset", default="coinche")
    ap.add_argument("--parallel", type=int, default=4, help="matches at once")
    ap.add_argument("--memory-store", action="store_true", help="no data folder: the in-memory store")
    ap.add_argument("--watch-every", type=int, default=10,
                    help="watch every E-th match after its end and fetch its record (0: never)")
    ap.add_argument("--json", action="store_true", help="one JSON object instead of text")
    args = ap.parse_args(argv)
    if args.matches is None:
        args.matches = 100 if args.quick else 1000
    if args.warmup is None:
        args.warmup = min(20 if args.quick else 50, args.matches // 2)
    if not (0 <= args.warmup < args.matches and args.deals >= 1 and args.parallel >= 1):
        ap.error("need 0 <= --warmup < --matches, --deals >= 1 and --parallel >= 1")

    result = asyncio.run(soak(args))
    if args.json:
        print(json.dumps(asdict(result)))
        return 0
    print(f"soak: {result.matches} matches of {result.deals} {result.ruleset} deal(s), {result.parallel} at "
          f"once, store: {result.store}; {result.seconds} s "
          f"({result.matches / max(result.seconds, 1e-9):.1f} matches/s)")
    for label, s in (("start", result.start), ("after warm-up", result.warm), ("end", result.end)):
        print(f"  {label:14} {s.matches:>6} matches  RSS {s.rss_mb:8.1f} MB  open fds {s.fds}")
    print("  trend (matches: RSS MB): " + ", ".join(f"{s.matches}: {s.rss_mb:.0f}" for s in result.trend))
    print(f"  peak RSS {result.peak_rss_mb} MB; growth since the start "
          f"{result.end.rss_mb - result.start.rss_mb:.1f} MB, {result.end.fds - result.start.fds} fds")
    print(f"  {result.watched} finished matches watched late and their records fetched; "
          f"{result.records_on_disk} records on disk, {result.data_files_open} of their files open "
          "at the end")
    print(f"rss_growth_mb={result.rss_growth_mb}")
    print(f"fds_growth={result.fds_growth}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
