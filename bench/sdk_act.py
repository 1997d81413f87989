"""SDK act threads: the other seats' round trips while one seat's ``act`` sleeps 0.5 s.

Usage (from the repository root)::

    python bench/sdk_act.py [--quick] [--seconds S] [--matches M] [--sleep SECONDS] [--busy] [--inline]
                            [--uvloop] [--switch-interval S] [--no-pin] [--json]

``--quick`` (what CI runs: ``tests/test_benches.py``) is ``--seconds 1 --sleep 0.2`` with a 0.3 s
warm-up, about 6 s; options given with it win.

One bot, written as a bot author would (a plain, non-async ``act``), plays many
seats at once over one ``BotService.Connect`` stream, in a child process
("spawn"; pinned to its own CPU when there are two or more) against the real
referee node (``Node`` + ``start_server``) in this process. Two measures:

* **reference**: ``--matches`` M fast matches (the bot at all four seats,
  coinche, 2 deals, a new one started as soon as one ends), every seat
  answered at once;
* **slow seat**: the same fast matches, plus one match of the bot (seats 0
  and 2) against "sleeper-foil" (a built-in ``HeuristicBot`` in the child
  process) where the bot's seat 0 sleeps ``--sleep`` (0.5) seconds in ``act``
  at every one of its decisions (that match is restarted until the window
  ends), so one act is asleep nearly all the time.

Measured at the referee, the same way for both: the round trip of every
decision of the fast matches started in the window (``--seconds`` after a one
second warm-up), from the match records' ``latencies_us`` (the runner times
each request from just before it is written until the answer is back), as the
node gives them at each match's end (reading them back over gRPC once the window
is over hit the node's bounds: its last 100 records kept without a data folder, its
reads a second per address). The fast seats answer "at once"
with the instant choice (the first legal action; in the bidding, while nobody
has bid, the first one after pass, so that deals get played), so their round
trip is the SDK's and the referee's own time, including the hop to the act
thread and back. p50, p99 and max of each; the slow match's own latencies are
left out (how many of its decisions took at least ``--sleep`` is printed, as a
check that the sleeper slept).

The last lines are ``p99_us=`` (fast seats with the slow seat),
``reference_p99_us=`` and ``ratio=`` (p99 over reference p99); the target is
p99 under 5 ms. For information: ``--inline`` runs the bot's ``act`` on the
event loop (``Bot.act_inline``), which is what a plain act did before the
threads (the fast seats then wait for the sleeper); ``--busy`` makes the slow
act spin in Python for the same time instead of sleeping (a CPU-bound search,
which shares the interpreter lock with the bot's event loop); ``--uvloop``
runs the bot's loop on uvloop (``run(loop_factory=uvloop.new_event_loop)``; by
default the bot has asyncio's loop, as ``run()`` gives); ``--switch-interval``
sets the bot process's ``sys.setswitchinterval`` (how long a thread holding
the interpreter lock keeps it from a waiting one; Python's default 5 ms).
Default run: about 20 s.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing as mp
import os
import platform
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

_ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(_ROOT), str(_ROOT / "sdk")]  # run from a checkout

import grpc  # noqa: E402

from arena.records import MatchRecord  # noqa: E402

TARGET_P99_US = 5000.0
WARMUP_S = 1.0
SUBJECT, SLEEPER_FOIL = "subject", "sleeper-foil"


# --------------------------------------------------------------------------- the bot process
@dataclass(frozen=True)
class BotPlan:
    address: str
    #: name -> token
    tokens: dict[str, str]
    concurrency: int
    sleep_s: float
    busy: bool
    inline: bool
    uvloop: bool
    switch_interval: float | None
    cpus: list[int] | None


def bot_main(plan: BotPlan, stop: Any) -> None:
    """Entry point of the bot process: the subject and the two foils, until ``stop`` is set."""
    if plan.cpus:
        os.sched_setaffinity(0, plan.cpus)
    if plan.switch_interval is not None:
        sys.setswitchinterval(plan.switch_interval)
    import logging

    from belote_bot import Action, Bot, HeuristicBot, MatchInfo, Observation, run_async

    logging.getLogger("belote_bot").setLevel(logging.ERROR)  # no "lost the stream" as the bench ends

    def instant(obs: Observation) -> Action:
        legal = obs.legal_actions
        if legal[0].is_pass and len(legal) > 1 and all(a.is_pass for _, a in obs.bids):
            return legal[1]
        return legal[0]

    class Subject(Bot):
        """Answers at once, except seat 0 of a match against the sleeper foil: ``sleep_s`` first."""

        act_inline = plan.inline

        def __init__(self) -> None:
            self.slow_matches: set[str] = set()

        def on_match_start(self, info: MatchInfo) -> None:
            if SLEEPER_FOIL in info.players:
                self.slow_matches.add(info.match_id)

        def act(self, obs: Observation) -> Action:
            if obs.seat == 0 and obs.match_id in self.slow_matches:
                if plan.busy:
                    end = time.perf_counter() + plan.sleep_s
                    while time.perf_counter() < end:
                        pass
                else:
                    time.sleep(plan.sleep_s)
            return instant(obs)

    class Foil(HeuristicBot):
        act_inline = True

    async def main() -> None:
        done = asyncio.Event()
        threading.Thread(target=lambda: (stop.wait(), loop.call_soon_threadsafe(done.set)),
                         daemon=True).start()
        bots = {SUBJECT: (Subject(), plan.concurrency), SLEEPER_FOIL: (Foil(0), 2)}
        await asyncio.gather(*(
            run_async(bot, plan.address, plan.tokens[name], concurrency, name=name, stop=done,
                      all_nodes=False, verbose=False)
            for name, (bot, concurrency) in bots.items()
        ))

    factory: Callable[[], asyncio.AbstractEventLoop] | None = None
    if plan.uvloop:
        try:
            import uvloop

            factory = uvloop.new_event_loop
        except ImportError:
            pass
    with asyncio.Runner(loop_factory=factory) as runner:
        loop = runner.get_loop()
        runner.run(main())


# --------------------------------------------------------------------------- the referee side
@dataclass
class Measure:
    name: str
    decisions: int
    matches: int
    p50_us: float
    p99_us: float
    max_us: int
    #: the foil match's decisions of at least the sleep (the slow seat's, in the slow measure)
    slow_decisions: int
    strikes: int


def pct(sorted_values: Sequence[int], q: float) -> float:
    """The ``q`` quantile (linear interpolation) of sorted values, rounded to 0.1."""
    if not sorted_values:
        return float("nan")
    k = (len(sorted_values) - 1) * q
    lo = int(k)
    hi = min(lo + 1, len(sorted_values) - 1)
    return round(sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (k - lo), 1)


async def measure(node: Any, name: str, foil: str | None, args: argparse.Namespace) -> Measure:
    """Fast matches, and one foil match if ``foil``, kept running; the fast ones started in the window
    measured."""
    stop = False
    measuring_from = float("inf")
    measured: list[MatchRecord] = []
    foils: list[MatchRecord] = []

    async def fast(w: int) -> None:
        k = 0
        while not stop:
            started = time.perf_counter()
            match_id = node.start_match(SUBJECT, SUBJECT, "coinche", seed=f"{name}/{w}/{k}", deals=2)
            k += 1
            record = await node.wait(match_id)
            if started >= measuring_from:
                measured.append(record)

    async def foil_matches() -> None:
        k = 0
        while not stop:
            assert foil is not None
            match_id = node.start_match(SUBJECT, foil, "coinche", seed=f"{name}/foil/{k}", deals=1)
            k += 1
            foils.append(await node.wait(match_id))

    workers = [asyncio.ensure_future(fast(w)) for w in range(args.matches)]
    if foil is not None:
        workers.append(asyncio.ensure_future(foil_matches()))
    await asyncio.sleep(args.warmup)
    measuring_from = time.perf_counter()
    await asyncio.sleep(args.seconds)
    stop = True  # no new match; those running finish (the slow foil match within ~10 x --sleep)
    await asyncio.wait_for(asyncio.gather(*workers), 60 + 20 * args.sleep)
    strikes = sum(len(rec.strikes) for rec in measured + foils)
    lat = [x for rec in measured for deal in rec.latencies_us for x in deal]
    slow = sum(x >= args.sleep * 1e6 for rec in foils for deal in rec.latencies_us for x in deal)
    lat.sort()
    if lat and lat[0] < 0:
        raise RuntimeError(f"{name}: a fast seat got a fallback")
    return Measure(name, len(lat), len(measured), pct(lat, 0.5), pct(lat, 0.99), lat[-1] if lat else -1,
                   slow, strikes)


@dataclass
class Results:
    python: str
    grpcio: str
    bot_uvloop: bool
    cpus: int
    server_cpus: list[int] | None
    bot_cpus: list[int] | None
    seconds: float
    #: the warm-up before each window, seconds
    warmup_s: float
    matches: int
    sleep_s: float
    busy: bool
    inline: bool
    #: the bot process's sys.setswitchinterval (None: Python's 0.005 s)
    switch_interval: float | None
    reference: Measure
    slow: Measure
    ratio: float
    target_p99_us: float = TARGET_P99_US


async def run_all(args: argparse.Namespace, cpus: int, server_cpus: list[int] | None,
                  bot_cpus: list[int] | None) -> Results:
    from arena.referee.node import Node, NodeConfig
    from arena.referee.runner import TimeControl
    from arena.referee.service import start_server, stop_server

    # generous time: a busy machine must not turn the sleeper into strikes
    node = Node(NodeConfig(time=TimeControl(deadline=30.0, time_bank=120.0, grace=60.0)))
    server, port = await start_server(node)
    address = f"127.0.0.1:{port}"
    tokens = {name: node.register_bot(name)[1] for name in (SUBJECT, SLEEPER_FOIL)}
    concurrency = 4 * args.matches + 2
    plan = BotPlan(address, tokens, concurrency, args.sleep, args.busy, args.inline, args.uvloop,
                   args.switch_interval, bot_cpus)
    ctx = mp.get_context("spawn")
    stop = ctx.Event()
    proc = ctx.Process(target=bot_main, args=(plan, stop), daemon=True, name="bench-bot")
    proc.start()
    try:
        deadline = time.monotonic() + 30
        while not all(b.connected for b in node.bots()):
            if not proc.is_alive():
                raise RuntimeError(f"the bot process died (exit code {proc.exitcode})")
            if time.monotonic() > deadline:
                raise RuntimeError("the bots did not connect within 30 s")
            await asyncio.sleep(0.02)
        reference = await measure(node, "reference", None, args)
        slow = await measure(node, "slow seat", SLEEPER_FOIL, args)
    finally:
        stop.set()
        await stop_server(server, node, grace=0.2)
        proc.join(5)
        if proc.is_alive():
            proc.terminate()
            proc.join(5)
    return Results(
        python=platform.python_version(), grpcio=grpc.__version__, bot_uvloop=plan.uvloop and _has_uvloop(),
        cpus=cpus, server_cpus=server_cpus, bot_cpus=bot_cpus, seconds=args.seconds, warmup_s=args.warmup,
        matches=args.matches,
        sleep_s=args.sleep, busy=args.busy, inline=args.inline, switch_interval=args.switch_interval,
        reference=reference, slow=slow,
        ratio=round(slow.p99_us / reference.p99_us, 3),
    )


def _has_uvloop() -> bool:
    try:
        import uvloop  # noqa: F401
    except ImportError:
        return False
    return True


def report(res: Results) -> None:
    pin = f"referee on CPU {res.server_cpus}, bot on CPU {res.bot_cpus}" if res.server_cpus else "not pinned"
    print(f"sdk act bench: Python {res.python}, grpcio {res.grpcio}, bot loop "
          f"{'uvloop' if res.bot_uvloop else 'asyncio'}, {res.cpus} CPUs ({pin}); act "
          f"{'inline on the loop' if res.inline else 'in worker threads'}"
          f"{'' if res.switch_interval is None else f', switch interval {res.switch_interval:g} s'}; "
          f"{res.seconds:g} s windows after {res.warmup_s:g} s warm-up")
    slow_what = f"{'spins' if res.busy else 'sleeps'} {res.sleep_s:g} s"
    print(f"one bot, {res.matches} fast matches at once (all four seats, coinche, 2 deals); the slow measure "
          f"adds a match against a foil where its seat 0 {slow_what} in act at every decision")
    for m in (res.reference, res.slow):
        foil = f"foil matches: {m.slow_decisions} decisions >= {res.sleep_s:g} s; " if m is res.slow else ""
        print(f"{m.name:<10} {m.decisions:>6} fast decisions in {m.matches} matches: "
              f"p50 {m.p50_us:>7,.0f} us  p99 {m.p99_us:>7,.0f} us  max {m.max_us:>9,} us; "
              f"{foil}strikes {m.strikes}")
    verdict = "met" if res.slow.p99_us < res.target_p99_us else "NOT met"
    print(f"target p99_us < {res.target_p99_us:,.0f}: {verdict}")
    print(f"p99_us={res.slow.p99_us:.0f}")
    print(f"reference_p99_us={res.reference.p99_us:.0f}")
    print(f"ratio={res.ratio:.3f}")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--quick", action="store_true",
                   help="--seconds 1 --sleep 0.2, a 0.3 s warm-up (what CI runs)")
    p.add_argument("--seconds", type=float, default=None, help="length of each measured window (8)")
    p.add_argument("--matches", type=int, default=4, help="fast matches at once (4)")
    p.add_argument("--sleep", type=float, default=None, help="the slow seat's act, seconds (0.5)")
    p.add_argument("--busy", action="store_true", help="the slow act spins in Python instead of sleeping")
    p.add_argument("--inline", action="store_true", help="run the bot's act on the loop (act_inline)")
    p.add_argument("--uvloop", action="store_true",
                   help="the bot process runs uvloop (run()'s loop_factory); default: asyncio's, as run()")
    p.add_argument("--switch-interval", type=float, default=None,
                   help="the bot process's sys.setswitchinterval, seconds (default: Python's 0.005)")
    p.add_argument("--no-pin", action="store_true", help="do not pin the referee and the bot to CPUs")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    args = p.parse_args(argv)
    if args.seconds is None:
        args.seconds = 1.0 if args.quick else 8.0
    if args.sleep is None:
        args.sleep = 0.2 if args.quick else 0.5
    args.warmup = 0.3 if args.quick else WARMUP_S
    if args.matches < 1 or args.seconds <= 0 or args.sleep <= 0:
        p.error("--matches, --seconds and --sleep must be positive")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    server_cpus = bot_cpus = None
    if not args.no_pin and hasattr(os, "sched_getaffinity"):
        allowed = sorted(os.sched_getaffinity(0))
        if len(allowed) >= 2:
            server_cpus, bot_cpus = allowed[:1], allowed[1:]
            os.sched_setaffinity(0, server_cpus)  # before any gRPC thread exists: they inherit it
    from arena.referee.serve import install_uvloop

    install_uvloop()
    res = asyncio.run(run_all(args, cpus, server_cpus, bot_cpus))
    if args.json:
        print(json.dumps(asdict(res), indent=2))
    else:
        report(res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
