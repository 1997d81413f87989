"""Version tests inside the ladder's share (issue 24): what bots' version tests cost the ladder and the
tournaments of a node, and how often one bot's versions are tested.

    python bench/version_tests.py            # about 9 minutes here (2 shared cores)
    python bench/version_tests.py --quick    # about 20 s (CI)
    python bench/version_tests.py --json     # one JSON object instead of name=value lines

One node of ``--slots`` match slots (8; ``running_node`` on an embedded queue, in this process), its
ladder on in the coinche pool, four honest built-in bots opted in (random and heuristic, four seats
each), and SDK bots over gRPC in the same process. Four phases, each on a node of its own:

- ``idle``: the honest bots alone, for a window (90 s; ``--quick`` 2 s): the ladder games they play
  (the reference), then an admin's round-robin of two other bots, timed from its creation to its
  first match's start (the reference wait);
- ``one``: one more bot on the ladder, version 1 first (answering at once), then version 2, which
  answers in ``--slow-ms`` (400) each decision, and whose test starts; over the window, the test
  matches running (mean, peak) and the ladder's games. (``--both-slow``: version 1 slow
  too, as in the issue; its own ladder games then hold the ladder's slots for minutes each, which is
  its right, and the ladder's games measure that more than the tests);
- ``three``: three such bots, the same figures over a longer window (120 s), then the admin's
  round-robin, timed the same way;
- ``labels``: a bot that connects a new version label each time its last one is decided (version 1
  the heuristic bot, each new one the random bot, rejected within its test's first pairs), for 185 s
  (``--quick``: until its candidate waits for its day's one test, 20 s at most): the tests it made,
  and what its candidate says once it waits.

Before (issue 24, on main): one bot's test held 3.2 of 8 slots on average (peak 4) and the honest
ladder games fell from 366 to 4 in 90 s; three bots' tests held 6.4 (peak 8), the ladder made none in
120 s, and the round-robin's first match waited 55.9 s instead of 0.5 s; the labels bot made 40 tests
in 185 s (about 780 an hour). The bench runs on main's code too (copy it into an export of main):
what it cannot set there it leaves.

Before the last line: the test matches running on average (``tests_mean_one``, ``tests_mean_three``),
the ladder's games a second over the idle phase's (``ladder_games_one_vs_idle``, ``..._three_...``),
the round-robin's first match's wait with three bots' tests and idle (``first_match_wait_s``,
``first_match_wait_idle_s``) and the labels bot's tests an hour at its pace (``label_tests_per_hour``:
past its day's tests, it makes no more that day). The last line is ``tests_peak_vs_room=R``: the most
test matches running at once in any phase over the node's room for them (half the ladder's share of
its slots): the target is R <= 1.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import random
import sys
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

_ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(_ROOT), str(_ROOT / "sdk")]  # run from a checkout

from belote_bot import Action, Bot, HeuristicBot, Observation, RandomBot, run_async  # noqa: E402

from arena.node.ladder import Ladders  # noqa: E402
from arena.node.run import NodeSettings, RunningNode, running_node  # noqa: E402
from arena.queue import EmbeddedBroker  # noqa: E402
from arena.referee.versions import find  # noqa: E402
from arena.tournament import MatchJob, TournamentSpec  # noqa: E402

POOL = "coinche"
HONEST = ("h-rand-a", "h-rand-b", "h-heur-a", "h-heur-b")
PLAYERS = ("t-one", "t-two")
TEST_PREFIX = "vt:"


class Slow(Bot):
    """A version that thinks ``slow_s`` before each answer (awaited: its other seats go on meanwhile)."""

    def __init__(self, version: str, seed: int, slow_s: float) -> None:
        self.version = version
        self.rng = random.Random(seed)
        self.slow_s = slow_s

    async def act(self, obs: Observation) -> Action:
        await asyncio.sleep(self.slow_s)
        return self.rng.choice(obs.legal_actions)


def versioned(bot: Bot, version: str) -> Bot:
    bot.version = version
    return bot


@dataclasses.dataclass
class Arena:
    """A running node, its bots' tokens and tasks, and what its worker saw end."""

    running: RunningNode
    tokens: dict[str, str]
    stop: asyncio.Event
    tasks: list[asyncio.Task[None]]
    #: the ladder's games, as they end (the matches of the ladder, no test's)
    ladder_games: int = 0

    def connect(self, name: str, bot: Bot, seats: int, *, ladder: bool) -> asyncio.Event:
        """Run ``bot`` as ``name``; set the event returned to stop that stream alone."""
        own = asyncio.Event()

        async def play() -> None:
            stream = asyncio.create_task(run_async(bot, self.running.address, self.tokens[name], seats,
                                                   name=name, stop=own, ladder=ladder, verbose=False))
            ended = asyncio.create_task(self.stop.wait())
            await asyncio.wait([stream, ended], return_when=asyncio.FIRST_COMPLETED)
            own.set()
            await asyncio.gather(stream, return_exceptions=True)
            ended.cancel()

        self.tasks.append(asyncio.create_task(play()))
        return own

    def state(self, name: str, version: str) -> str:
        entry = self.running.node.bot_named(name)
        v = None if entry is None else find(entry.versions, version)
        return "" if v is None else v.state

    def tests_running(self) -> int:
        return sum(1 for r in self.running.worker.running.values()
                   if r.claim.job.tournament_id.startswith(TEST_PREFIX))


@contextlib.asynccontextmanager
async def arena(args: argparse.Namespace, names: list[str]) -> AsyncIterator[Arena]:
    """A node with ``names`` registered, the ladder on with the honest bots connected, and the two
    players of the admin's round-robin connected (not on the ladder)."""
    broker = EmbeddedBroker()
    settings: dict[str, Any] = {"poll_s": 10.0, "heartbeat_s": 0.5, "lease_s": 60.0, "drain_s": 0.5,
                                "capacity": args.slots, "absent_timeout_s": 3600.0}
    fields = {f.name for f in dataclasses.fields(NodeSettings)}
    if "version_tests_a_day" in fields and args.a_day:  # not on main: no such bound there
        settings["version_tests_a_day"] = args.a_day
    async with running_node(broker, NodeSettings(**settings), asyncio.Event()) as running:
        node = running.node
        tokens = {name: node.register_bot(name)[1] for name in [*HONEST, *PLAYERS, *names]}
        made = Arena(running, tokens, asyncio.Event(), [])

        def ended(job: MatchJob) -> None:
            if job.tournament_id == f"ladder:{POOL}":
                made.ladder_games += 1

        running.worker.done_hooks.append(ended)
        try:
            await asyncio.to_thread(Ladders(broker).start, POOL, args.deals)
            for i, name in enumerate(HONEST):
                made.connect(name, RandomBot(i) if "rand" in name else HeuristicBot(i), 4, ladder=True)
            for i, name in enumerate(PLAYERS):
                made.connect(name, RandomBot(10 + i), 2, ladder=False)
            await until(lambda: set(HONEST) | set(PLAYERS) <= set(node.connected_bots()), 30, "the bots")
            yield made
        finally:
            made.stop.set()
            await asyncio.gather(*made.tasks, return_exceptions=True)
    broker.close()


async def until(predicate: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)


async def window(made: Arena, seconds: float) -> dict[str, float]:
    """Sample the test matches running every 50 ms for ``seconds``; the ladder's games meanwhile."""
    samples: list[int] = []
    before = made.ladder_games
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        samples.append(made.tests_running())
        await asyncio.sleep(0.05)
    return {"tests_mean": sum(samples) / max(1, len(samples)), "tests_peak": max(samples, default=0),
            "ladder_games": made.ladder_games - before, "seconds": seconds}


async def first_match_wait(made: Arena, tid: str) -> float:
    """Create an admin's round-robin of the two players; seconds until its first match starts."""
    spec = TournamentSpec(tournament_id=tid, format="round-robin", bots=PLAYERS, deals=1)
    worker = made.running.worker
    start = time.monotonic()
    await asyncio.to_thread(made.running.tournaments.create, spec)
    while not any(r.claim.job.tournament_id == tid for r in worker.running.values()):
        if worker.broker.result_counts([tid]).get(tid, 0):
            break
        if time.monotonic() - start > 600:
            raise SystemExit("the tournament's first match never started")
        await asyncio.sleep(0.005)
    return time.monotonic() - start


async def slow_bots(made: Arena, names: list[str], slow_s: float, both: bool, settle_s: float) -> None:
    """Each of ``names`` with version 1 (answering at once, or with ``both`` in ``slow_s`` too), then
    version 2, answering in ``slow_s``: their tests, ``settle_s`` after the first started."""
    for i, name in enumerate(names):
        made.connect(name, Slow("1", 20 + i, slow_s) if both else versioned(RandomBot(20 + i), "1"), 8,
                     ladder=True)
    await until(lambda: all(made.state(n, "1") == "promoted" for n in names), 60, "version 1 kept")
    for i, name in enumerate(names):
        made.connect(name, Slow("2", 30 + i, slow_s), 8, ladder=True)
    # the first test under way; the others start as their turns come (at once on main: no turns there)
    await until(lambda: any(made.state(n, "2") == "testing" for n in names), 120, "a test to start")
    await asyncio.sleep(settle_s)


async def phase_idle(args: argparse.Namespace) -> dict[str, Any]:
    async with arena(args, []) as made:
        await asyncio.sleep(args.settle / 2)  # the ladder under way
        out = await window(made, args.window)
        out["first_match_wait_s"] = await first_match_wait(made, "league-idle")
        return out


async def phase_slow(args: argparse.Namespace, count: int, seconds: float) -> dict[str, Any]:
    names = [f"slow-{i}" for i in range(count)]
    async with arena(args, names) as made:
        await slow_bots(made, names, args.slow_ms / 1000, args.both_slow, args.settle)
        out = await window(made, seconds)
        if count > 1:
            out["first_match_wait_s"] = await first_match_wait(made, "league-busy")
        return out


async def phase_labels(args: argparse.Namespace) -> dict[str, Any]:
    """The bot ``labels`` connects version n+1 as soon as version n is decided; its tests are counted."""
    async with arena(args, ["labels"]) as made:
        made.connect("labels", versioned(HeuristicBot(7), "1"), 4, ladder=True)
        await until(lambda: made.state("labels", "1") == "promoted", 60, "version 1 kept")
        broker = made.running.worker.broker
        start = time.monotonic()
        label = 2
        current = made.connect("labels", versioned(RandomBot(100), "2"), 4, ladder=True)
        seen: set[str] = set()  # the test ids its versions were ever under (looked at every 50 ms)
        waiting = ""
        while time.monotonic() - start < args.labels_window:
            entry = made.running.node.bot_named("labels")
            seen |= {v.test for v in (entry.versions if entry else ()) if v.test}
            if made.state("labels", str(label)) in ("rejected", "promoted"):
                current.set()  # decided: the next label, at once
                label += 1
                current = made.connect("labels", versioned(RandomBot(100 + label), str(label)), 4,
                                       ladder=True)
            tests = getattr(made.running.ladder.tests, "waiting", {})
            waiting = tests.get("labels", "") if isinstance(tests, dict) else ""
            if waiting and args.quick:  # what the quick run is there to see; the rest of the window waits
                break
            await asyncio.sleep(0.05)
        elapsed = time.monotonic() - start
        kept = [t for t in await asyncio.to_thread(broker.list_tournaments) if t.startswith(TEST_PREFIX)]
        return {"tests": len(seen), "seconds": elapsed, "tests_per_hour": len(seen) * 3600 / elapsed,
                "kept": len(kept), "forgotten": len(seen - set(kept)), "waiting": waiting}


def room(slots: int, share: float = 0.5) -> int:
    """The node's room for test matches (arena.node.versions.slots_for_tests; 0 on main: no such room)."""
    ladder = int(share * slots + 1e-9)
    return 0 if ladder <= 0 else max(1, ladder // 2)


async def run(args: argparse.Namespace) -> dict[str, Any]:
    idle = await phase_idle(args)
    one = await phase_slow(args, 1, args.window)
    three = await phase_slow(args, 3, args.window * 4 / 3)
    labels = await phase_labels(args)
    peak = max(one["tests_peak"], three["tests_peak"])
    return {"idle": idle, "one": one, "three": three, "labels": labels, "slots": args.slots,
            "room": room(args.slots), "tests_peak_vs_room": peak / room(args.slots)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="short windows, 2-deal matches (for CI)")
    parser.add_argument("--slots", type=int, default=8, help="the node's match slots (8)")
    parser.add_argument("--slow-ms", type=float, default=400.0, help="the slow versions' answer time (400)")
    parser.add_argument("--both-slow", action="store_true",
                        help="version 1 slow too (its own ladder games then hold ladder slots as long)")
    parser.add_argument("--deals", type=int, default=None, help="the ladder's deals a match (8; --quick 2)")
    parser.add_argument("--window", type=float, default=None,
                        help="seconds of a phase's window (90; --quick 2)")
    parser.add_argument("--labels-window", type=float, default=None,
                        help="seconds the labels bot cycles at most (185; --quick 20, ended once it waits)")
    parser.add_argument("--a-day", type=int, default=None,
                        help="the node's --version-tests-a-day (its default, 12; --quick 1, to see it bound)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    args.deals = args.deals or (2 if args.quick else 8)
    # --quick only checks that every phase runs and prints: 2 s windows sample the tests running
    # 40 times, enough to see them under their room; with one test a day, the label the labels bot
    # connects once its first test is decided already waits for the bound (its version 1 is no test)
    args.window = args.window or (2.0 if args.quick else 90.0)
    args.labels_window = args.labels_window or (20.0 if args.quick else 185.0)
    args.a_day = args.a_day if args.a_day is not None else (1 if args.quick else 0)
    #: seconds the ladder runs before a window (the idle phase waits half): the tests' turns under way
    args.settle = 0.5 if args.quick else 2.0
    out = asyncio.run(run(args))
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    idle, one, three, labels = out["idle"], out["one"], out["three"], out["labels"]
    print(f"idle: {idle['ladder_games']} ladder games in {idle['seconds']:.0f} s; an admin's "
          f"tournament's first match waited {idle['first_match_wait_s']:.2f} s")
    for name, phase in (("one slow bot", one), ("three slow bots", three)):
        print(f"{name}: test matches running {phase['tests_mean']:.2f} on average, {phase['tests_peak']} at "
              f"peak, of {out['slots']} slots (their room: {out['room']}); {phase['ladder_games']} "
              f"ladder games in {phase['seconds']:.0f} s"
              + (f"; the tournament's first match waited {phase['first_match_wait_s']:.2f} s"
                 if "first_match_wait_s" in phase else ""))
    print(f"labels: {labels['tests']} tests in {labels['seconds']:.0f} s ({labels['tests_per_hour']:.0f} an "
          f"hour at that pace), {labels['kept']} kept, {labels['forgotten']} forgotten"
          + (f"; then its candidate waits: {labels['waiting']}" if labels["waiting"] else ""))
    print(f"tests_mean_one={one['tests_mean']:.2f}")
    print(f"tests_mean_three={three['tests_mean']:.2f}")
    idle_rate = max(1, idle["ladder_games"]) / idle["seconds"]  # the ladder's games a second, alone
    print(f"ladder_games_one_vs_idle={one['ladder_games'] / one['seconds'] / idle_rate:.3f}")
    print(f"ladder_games_three_vs_idle={three['ladder_games'] / three['seconds'] / idle_rate:.3f}")
    print(f"first_match_wait_s={three['first_match_wait_s']:.3f}")
    print(f"first_match_wait_idle_s={idle['first_match_wait_s']:.3f}")
    print(f"label_tests_per_hour={labels['tests_per_hour']:.0f}")
    print(f"tests_peak_vs_room={out['tests_peak_vs_room']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
