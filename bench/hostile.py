"""Hostile clients against an honest match: the honest decisions' round trips, quiet and under attack.

Usage (from the repository root)::

    python bench/hostile.py [--quick] [--phases quiet,flood,idle,storm,garbage,worst] [--matches M]
                            [--deals D] [--attackers K] [--replies R] [--idle-streams N] [--ramp S]
                            [--phase-timeout S] [--no-pin] [--json]

``--quick`` (what CI runs: ``tests/test_benches.py``) is ``--matches 1 --deals 1 --ramp 0.25
--idle-streams 200`` and 0.3 s between phases instead of 1 s, every phase, about 5 s here;
options given with it win. It checks that every phase runs and prints; its ratios are no measure.

The real node (``Node`` + ``start_server``, the default time control: 1 s a
decision and a 10 s bank, the default limits) runs in this process, pinned to
CPU 0 when there are two or more. Two honest SDK bots (``HeuristicBot`` and
``RandomBot``) run in a child process pinned to the other CPUs; the attackers
in another child process on those CPUs at the lowest priority (``nice 19``), so
that what they cost is the node's cost, as if they ran on machines of their
own, and not CPU taken from the honest bots.

After a warm-up match, each phase plays ``--matches`` honest matches (coinche,
``--deals`` deals each), one after the other, while its attack runs (from
``--ramp`` seconds before the first), and reports the honest decisions'
round trips as the referee measured them (the records' ``latencies_us``: p50,
p99 and max), the honest strikes, how long each match took, what the node
logged (lines at WARNING and above, tracebacks, bytes), its resident memory,
and how the attackers' calls ended.

The phases:

* ``quiet``: no attack (the reference);
* ``flood``: ``--attackers`` K registered bots, each with its own token, send
  messages of ``--replies`` R answers (an unknown request id, 6 bytes each) as
  fast as the node takes them, opening a new stream at once whenever the node
  ends one. With the default R = 400,000 (2.4 MB a message) this is the attack
  of issue 8; ``--replies 256`` is the largest batch a stream may send now;
* ``idle``: ``--idle-streams`` N streams that never send Hello, held open
  (the other attack of the issue: 1,300);
* ``storm``: the same streams, each opened again as soon as the node ends it;
* ``garbage``: K clients sending random bytes to ``BotService.Connect`` and to
  every ``ArenaService`` method, one call after another;
* ``worst``: the hostile clients of the test suite
  (``tests/referee/hostile_clients.py``): K hostile bots going round the worst
  messages the protocol allows, strangers never saying Hello, garbage to
  ArenaService, all reconnecting at once.

The last lines are ``ratio_<phase>=``: each attack's honest p99 over the quiet
one. Numbers move with the machine's other load: compare phases of one run.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import logging
import multiprocessing as mp
import os
import random
import sys
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

_ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(_ROOT), str(_ROOT / "sdk")]  # run from a checkout

import grpc  # noqa: E402
import grpc.aio  # noqa: E402
from belote.arena.v1 import bot_service_pb2 as bpb  # noqa: E402

from tests.referee.hostile_clients import (  # noqa: E402
    ARENA_METHODS,
    CONNECT,
    OPTIONS,
    Attackers,
    InChild,
    Plan,
)

RAW: dict[str, Any] = {"request_serializer": None, "response_deserializer": None}
PHASES = ("quiet", "flood", "idle", "storm", "garbage", "worst")


# --------------------------------------------------------------------------- the honest bots
def honest_main(address: str, tokens: dict[str, str], cpus: list[int] | None) -> None:
    if cpus:
        os.sched_setaffinity(0, cpus)
    from belote_bot import HeuristicBot, RandomBot, run_async

    async def main() -> None:
        await asyncio.gather(
            run_async(HeuristicBot(1), address, tokens["honest-a"], 4, name="honest-a", verbose=False),
            run_async(RandomBot(2), address, tokens["honest-b"], 4, name="honest-b", verbose=False),
        )

    asyncio.run(main())


# --------------------------------------------------------------------------- the issue's attacks
@dataclass(frozen=True)
class Attack:
    address: str
    #: flood: one registered bot each
    tokens: tuple[str, ...] = ()
    replies: int = 0
    idle_streams: int = 0
    #: open an idle stream again as soon as the node ends it (a reconnect storm)
    reopen: bool = False
    garbage: int = 0


def attacker_main(attack: Attack, cpus: list[int] | None, stop: Any, out: Any) -> None:
    if cpus:
        os.sched_setaffinity(0, cpus)
    os.nice(19)
    logging.disable(logging.CRITICAL)
    tally: Counter[str] = Counter()
    asyncio.run(_attack(attack, stop, tally))
    out.put(dict(tally))


async def _attack(attack: Attack, stop: Any, tally: Counter[str]) -> None:
    tasks = [asyncio.ensure_future(_flood(attack.address, t, attack.replies, tally)) for t in attack.tokens]
    channels = [grpc.aio.insecure_channel(attack.address, options=OPTIONS)
                for _ in range(-(-attack.idle_streams // 100))]  # 100 streams a connection
    tasks += [asyncio.ensure_future(_idle(channels[i // 100], attack.reopen, tally))
              for i in range(attack.idle_streams)]
    tasks += [asyncio.ensure_future(_garbage(attack.address, i, tally)) for i in range(attack.garbage)]
    while not stop.is_set():
        await asyncio.sleep(0.05)
    for t in tasks:
        t.cancel()
    # a stream still being opened (the node holds the ones past its bound) ignores the cancel until
    # it is open, which could be never: the child then outlived the phase by the minute its parent
    # waits for the tally. Closing its channel cancels every call on it.
    if tasks:
        await asyncio.wait(tasks, timeout=1)
    for ch in channels:
        await ch.close(grace=None)
    await asyncio.gather(*tasks, return_exceptions=True)


async def _drain(call: Any) -> None:
    with contextlib.suppress(Exception):
        while await call.read() is not grpc.aio.EOF:
            pass


async def _ended(call: Any, tally: Counter[str], kind: str) -> None:
    code = await call.code()
    key = f"{kind} ended {code.name}"
    if not tally[key]:
        tally[f"{key}: {(await call.details() or '')[:70]}"] = 1
    tally[key] += 1


async def _flood(address: str, token: str, replies: int, tally: Counter[str]) -> None:
    # one unknown request id, the same in every answer: a repeated field is its entries end to end
    entry = bpb.ConnectRequest(action_replies=[
        bpb.ActionReply(request_id=random.Random(token).randrange(1 << 14, 1 << 21))]).SerializeToString()
    batch = entry * replies
    hello = bpb.ConnectRequest(hello=bpb.Hello(token=token, concurrency=1 << 20)).SerializeToString()
    async with grpc.aio.insecure_channel(address, options=OPTIONS) as channel:
        connect: Any = channel.stream_stream(CONNECT, **RAW)
        while True:
            call = connect()
            reader = asyncio.ensure_future(_drain(call))
            try:
                await call.write(hello)
                while True:
                    await call.write(batch)
                    tally["flood messages written"] += 1
            except asyncio.CancelledError:
                call.cancel()
                raise
            except Exception:
                await _ended(call, tally, "flood stream")
            finally:
                reader.cancel()


async def _idle(channel: grpc.aio.Channel, reopen: bool, tally: Counter[str]) -> None:
    connect: Any = channel.stream_stream(CONNECT, **RAW)
    opened = False
    while True:
        if opened and not reopen:
            await asyncio.Event().wait()  # the stream ended; this attack does not open another
        opened = True
        call = connect()
        tally["idle streams opened"] += 1
        try:
            await _drain(call)
        except asyncio.CancelledError:
            call.cancel()
            raise
        await _ended(call, tally, "idle stream")


async def _garbage(address: str, seed: int, tally: Counter[str]) -> None:
    rng = random.Random(seed)
    async with grpc.aio.insecure_channel(address, options=OPTIONS) as channel:
        while True:
            junk = rng.randbytes(rng.randrange(1, 200))
            method = rng.choice([CONNECT, *ARENA_METHODS])
            call: Any
            if method == CONNECT:
                call = channel.stream_stream(method, **RAW)()
                with contextlib.suppress(Exception):
                    await call.write(junk)
            elif method.endswith("WatchMatch"):
                call = channel.unary_stream(method, **RAW)(junk, timeout=5)
            else:
                call = channel.unary_unary(method, **RAW)(junk, timeout=5)
                with contextlib.suppress(grpc.aio.AioRpcError):
                    await call
            await _drain(call)
            await _ended(call, tally, "garbage call")


# --------------------------------------------------------------------------- the node's logs
class LogCount(logging.Handler):
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


# --------------------------------------------------------------------------- phases
@dataclass
class Phase:
    name: str
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
    attackers: dict[str, int] = field(default_factory=dict)
    #: the node process's resident memory at the end of the matches, MB
    rss_mb: float = 0.0


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def pct(values: list[int], q: float) -> float:
    if not values:
        return float("nan")
    k = (len(values) - 1) * q
    lo = int(k)
    hi = min(lo + 1, len(values) - 1)
    return round(values[lo] + (values[hi] - values[lo]) * (k - lo), 1)


class IssueAttack(InChild):
    """One of the issue's attacks in a child process, an async context manager like ``Attackers``."""

    def __init__(self, attack: Attack, cpus: list[int] | None) -> None:
        super().__init__(attacker_main, (attack, cpus), "issue-attack")


async def run_phase(node: Any, name: str, attack: Any, args: argparse.Namespace, logs: LogCount) -> Phase:
    phase = Phase(name)
    logs.reset()
    latencies: list[int] = []
    async with attack or contextlib.nullcontext():
        if attack is not None:
            await asyncio.sleep(args.ramp)  # the attack under way
        for i in range(args.matches):
            t0 = time.monotonic()
            mid = node.start_match("honest-a", "honest-b", "coinche", seed=f"hostile/{i}", deals=args.deals)
            try:
                record = await asyncio.wait_for(asyncio.shield(node.wait(mid)), args.phase_timeout)
            except TimeoutError:
                node.cancel_match(mid)
                record = await node.wait(mid)
                phase.unfinished += 1
            phase.match_seconds.append(round(time.monotonic() - t0, 2))
            latencies += [v for deal in record.latencies_us for v in deal if v >= 0]
            phase.honest_strikes += len(record.strikes)
        phase.rss_mb = rss_mb()
    latencies.sort()
    phase.decisions = len(latencies)
    phase.p50_us, phase.p99_us = pct(latencies, 0.5), pct(latencies, 0.99)
    phase.max_us = latencies[-1] if latencies else 0
    phase.attackers = dict(attack.tally) if attack is not None else {}
    phase.log_lines, phase.log_tracebacks, phase.log_bytes = logs.lines, logs.tracebacks, logs.bytes
    phase.log_first = logs.first
    await asyncio.sleep(args.settle)  # the node forgets the attack's streams
    return phase


async def main(args: argparse.Namespace) -> list[Phase]:
    from arena.referee.node import Node, NodeConfig
    from arena.referee.service import start_server, stop_server

    two = (os.cpu_count() or 1) >= 2 and not args.no_pin
    if two:
        os.sched_setaffinity(0, [0])
    others = sorted(set(range(os.cpu_count() or 1)) - {0}) if two else None
    logs = LogCount()
    logging.basicConfig(level=logging.INFO, handlers=[logs])
    node = Node(NodeConfig())
    server, port = await start_server(node, "127.0.0.1:0")
    address = f"127.0.0.1:{port}"
    tokens = {name: node.register_bot(name)[1] for name in ("honest-a", "honest-b")}
    hostile = tuple(node.register_bot(f"hostile-{i}")[1] for i in range(args.attackers))
    honest = mp.get_context("spawn").Process(target=honest_main, args=(address, tokens, others), daemon=True)
    honest.start()
    try:
        deadline = time.monotonic() + 30
        while not all(b.connected for b in node.bots() if b.name.startswith("honest")):
            if time.monotonic() > deadline:
                raise RuntimeError("the honest bots did not connect")
            await asyncio.sleep(0.05)
        await node.wait(node.start_match("honest-a", "honest-b", "coinche", seed="warm-up", deals=args.deals))
        idle = Attack(address, idle_streams=args.idle_streams)
        attacks: dict[str, Any] = {
            "quiet": lambda: None,
            "flood": lambda: IssueAttack(Attack(address, tokens=hostile, replies=args.replies), others),
            "idle": lambda: IssueAttack(idle, others),
            "storm": lambda: IssueAttack(dataclasses.replace(idle, reopen=True), others),
            "garbage": lambda: IssueAttack(Attack(address, garbage=args.attackers), others),
            "worst": lambda: Attackers(Plan(address, hostile, cpus=tuple(others or ()))),
        }
        phases = []
        for name in args.phases.split(","):
            phase = await run_phase(node, name, attacks[name](), args, logs)
            phases.append(phase)
            if not args.json:
                print(f"{name:8} p50 {phase.p50_us / 1000:7.2f} ms  p99 {phase.p99_us / 1000:7.2f} ms  "
                      f"max {phase.max_us / 1000:7.1f} ms  strikes {phase.honest_strikes}  "
                      f"matches {phase.match_seconds} s  unfinished {phase.unfinished}", flush=True)
                print(f"         log: {phase.log_lines} lines, {phase.log_tracebacks} tracebacks, "
                      f"{phase.log_bytes} B; RSS {phase.rss_mb} MB")
                for line in phase.log_first:
                    print(f"         log: {line}")
                if phase.attackers:
                    print(f"         attackers: {phase.attackers}", flush=True)
        return phases
    finally:
        honest.terminate()
        honest.join(5)
        await stop_server(server, node, grace=0.5)


def cli() -> None:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    p.add_argument("--quick", action="store_true",
                   help="--matches 1 --deals 1 --ramp 0.25 --idle-streams 200, 0.3 s between phases "
                        "(what CI runs)")
    p.add_argument("--phases", default=",".join(PHASES))
    p.add_argument("--matches", type=int, default=None, help="honest matches per phase (5)")
    p.add_argument("--deals", type=int, default=None, help="coinche deals per honest match (4)")
    p.add_argument("--attackers", type=int, default=4)
    p.add_argument("--replies", type=int, default=400_000, help="answers per flood message")
    p.add_argument("--idle-streams", type=int, default=None,
                   help="streams of the idle and storm phases (1300)")
    p.add_argument("--ramp", type=float, default=None, help="seconds the attack runs before the matches (2)")
    p.add_argument("--phase-timeout", type=float, default=180.0, help="seconds per honest match at most")
    p.add_argument("--no-pin", action="store_true")
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    for name, full, small in (("matches", 5, 1), ("deals", 4, 1), ("idle_streams", 1300, 200),
                              ("ramp", 2.0, 0.25)):
        if getattr(args, name) is None:
            setattr(args, name, small if args.quick else full)
    args.settle = 0.3 if args.quick else 1.0  # seconds between two phases
    unknown = set(args.phases.split(",")) - set(PHASES)
    if unknown:
        p.error(f"unknown phase {', '.join(sorted(unknown))}; known: {', '.join(PHASES)}")
    phases = asyncio.run(main(args))
    if args.json:
        print(json.dumps([asdict(p) for p in phases]))
        return
    quiet = next((p for p in phases if p.name == "quiet"), None)
    for phase in phases:
        if quiet is not None and phase is not quiet and quiet.p99_us:
            print(f"ratio_{phase.name}={phase.p99_us / quiet.p99_us:.2f}")


if __name__ == "__main__":
    cli()
