"""Scale, shown rather than claimed: how many referee nodes one Redis core feeds, then real runs.

Usage (from the repository root)::

    python bench/scale.py [--quick] [--think-ms MS] [--capacity N] [--deals D] [--nodes 1,2,4]
                          [--matches-per-slot K] [--idle-seconds S] [--redis-url URL] [--redis-db DB|auto]
                          [--shared-redis] [--json]

**The measures.** Three figures, each the way bench/cluster.py measures it (its helpers are reused:
the module is imported, not copied):

* Redis's work per job on a node's path (:func:`cluster.measure_round_trips`): a tournament's jobs
  enqueued 100 a stage, claimed ``--capacity`` at a time with the bots' seats given, finished together;
  round trips, Redis commands and redis-server CPU (``INFO cpu``) per job. Under a key prefix of its own
  on ``--redis-url``'s database; only those keys are deleted afterwards;
* a node's idle load on Redis: one real node (``python -m arena.cli serve --redis ...``) with its bots
  connected and nothing queued, over ``--idle-seconds``: its heartbeats (every 2 s, with the live
  nodes read back), the notices reader's ``XREAD BLOCK`` (every 0.25 s), the lease sweep (every
  lease/3: 10 s) and the absent sweep (every tenth of ``--absent-timeout``: 60 s). Redis's commands and
  CPU per second, less the same measured before any node of ours ran (other clients of a shared
  server; the server's own timers);
* a node's CPU per match, from the real runs below (``/proc/<pid>/stat``).

**The projection.** One node playing at the rate measured for one node (``m1`` matches/s) costs Redis
``idle + m1 x CPU per job`` seconds of CPU a second; one Redis core (Redis runs its commands on one
thread) feeds ``nodes_per_redis_core`` = 1 / that, nodes (target: at least 100), so ``m1 x`` that many
matches a second. A table gives the projected matches/s and Redis share for a few node counts, and the
same for a node at its CPU ceiling (one core over its CPU per match: bots that answer at once), the
worst case for Redis.

**The check.** Real runs of 1, 2 and 4 node processes (``--nodes``) on this machine, sharing Redis
database ``--redis-db`` (``auto``: the first empty one of 6-15, claimed and flushed at the end as
bench/cluster.py's ``Cluster`` does; the nodes use the arena's default prefix, so it must be empty), and
two bot processes (``python bench/scale.py --as-bot``: a bot that sleeps ``--think-ms`` a decision, then
plays a random legal action; it runs on the SDK's ``bot_main``, as the built-in bots do), each connected
to every node with ``2 x --capacity`` seats. Each run plays ``--matches-per-slot x nodes x capacity``
matches (a batch of a two-bot round-robin's jobs, ``--deals`` coinche deals each) after a warm-up.
Printed per run: matches/s, the node CPU per match, Redis's CPU per second (less the bench's own polls,
measured apart, and the baseline) against the projection's for that many nodes at that rate, and how
much of the machine the run used: on a machine of two cores the nodes, the bots and Redis share them,
so past some node count the machine, not Redis or the slots, bounds the rate, and the run says so.

Where ``redis-server`` is installed the bench runs one of its own on a free port (no persistence;
stopped by its pid at the end), so that no other client's work is in Redis's CPU: on a shared server
other sessions' thousands of commands a second drown a node's few. ``--shared-redis`` (or no
``redis-server`` on the PATH) measures on ``--redis-url``'s server instead (database claiming as above;
part 1's keys under a prefix of their own on its database), less the baseline, and the figures move with
whatever else uses it.

The last line is ``nodes_per_redis_core=<n>``. Nothing passes or fails on speed. ``--quick`` (CI:
tests/test_benches.py) plays 1-deal matches with 5 ms decisions, two slots a node, on 1 and 2 nodes (a
node added, as for 4), a 1 s idle window: 10-20 s here. It checks that every part runs; its figures
are no measure.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import os
import platform
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

_ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(_ROOT), str(_ROOT / "sdk")]  # run from a checkout


def _load_cluster() -> Any:
    """bench/cluster.py as a module (bench/ is no package), for its measures and its process helpers."""
    spec = importlib.util.spec_from_file_location("bench_cluster", Path(__file__).with_name("cluster.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


cluster: Any = _load_cluster()

from arena.tournament.spec import MAX_ROUNDS  # noqa: E402  (after the checkout is on sys.path)

BOT_FLAG = "--as-bot"
#: what a node's idle load is compared with: one core of Redis (it runs commands on one thread)
TARGET_NODES_PER_CORE = 100


# --------------------------------------------------------------------------- the bot of fixed think time
def bot_main(argv: Sequence[str]) -> int:
    """A bot that waits ``--think-ms`` per decision (on the event loop: no thread, no CPU), then plays a
    random legal action: its round trip is the think time plus the SDK's and the network's."""
    from belote_bot.bot import Bot
    from belote_bot.cli import bot_main as run_bot
    from belote_bot.types import Action, Observation

    class ThinkingBot(Bot):
        name = "thinking"

        def __init__(self, seed: str | None) -> None:
            self.rng = random.Random(seed)
            self.think_s = 0.0

        async def act(self, obs: Observation) -> Action:
            await asyncio.sleep(self.think_s)
            return self.rng.choice(obs.legal_actions)

    def options(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--think-ms", type=float, default=10.0, help="ms per decision (10)")

    def configure(bot: Bot, args: argparse.Namespace) -> None:
        assert isinstance(bot, ThinkingBot)
        bot.think_s = args.think_ms / 1e3

    return run_bot(ThinkingBot, f"bench/scale.py {BOT_FLAG}", "A bot of fixed think time.", argv,
                   options=options, configure=configure)


# --------------------------------------------------------------------------- the nodes and their bots
class ScaleCluster(cluster.Cluster):  # type: ignore[misc]
    """bench/cluster.py's cluster, with bots of fixed think time, Redis's commands read with its CPU, and
    the wait for a run's end read from the nodes' logs instead of Redis.

    The wait: ``Cluster.tournament`` polls the run's pending count every 20 ms, one Redis read each, and a
    read that wakes an idle Redis costs it tens of microseconds (against some 10 us back to back): as much
    as the node's own load. So the count is the run's matches less those the nodes' logs say were
    recorded (``match ID recorded``, logged once the result is written): no Redis call at all."""

    def __init__(self, args: argparse.Namespace, tmp: Path) -> None:
        super().__init__(args, tmp)
        #: (redis-server CPU s, commands run) at each of the cluster's reads of Redis's CPU
        self.marks: list[tuple[float, float]] = []
        #: the matches of the run being played, and what the nodes' logs said so far
        self.expect = 0
        self.recorded: set[str] = set()
        self._read: dict[Path, int] = {}

    def redis_cpu(self) -> float | None:
        cpu, calls = redis_stats(self)
        self.marks.append((cpu, calls))
        return cpu

    def start_bots(self) -> None:
        for k, name in enumerate(self.playing):
            argv = [sys.executable, str(Path(__file__).resolve()), BOT_FLAG, "--think-ms",
                    str(self.args.think_ms), "--address", self.set.addresses[0], "--concurrency",
                    str(self.concurrency), "--name", name, "--seed", str(k), "--log-level", "WARNING"]
            self.set.bots.append(cluster.Proc.start(f"bot-{name}", argv, self.logs,
                                                    BELOTE_TOKEN=self.tokens[name]))

    def wait_in_logs(self) -> None:
        """From now on the broker's ``pending_count(tournament)`` is read from the nodes' logs."""
        assert self.broker is not None

        def pending(tournament_id: str | None = None) -> int:
            assert tournament_id is not None
            self._scan()
            done = sum(1 for m in self.recorded if m.startswith(f"{tournament_id}-"))
            return max(0, self.expect - done)

        self.broker.pending_count = pending

    def _scan(self) -> None:
        for proc in self.set.procs:
            with proc.err.open("rb") as f:
                f.seek(self._read.get(proc.err, 0))
                text = f.read()
            end = text.rfind(b"\n") + 1  # a line still being written is read next time
            self._read[proc.err] = self._read.get(proc.err, 0) + end
            for line in text[:end].decode(errors="replace").splitlines():
                found = RECORDED.search(line)
                if found:
                    self.recorded.add(found[1])

    def play(self, matches: int) -> Any:
        """A batch of ``matches`` jobs played (cluster.py's ``tournament``): its ``ClusterRun``."""
        self.marks.clear()
        self.expect = matches
        return self.tournament(matches, "batch")


#: the line a node logs once a match's result is written (arena/node/worker.py)
RECORDED = re.compile(r"\bmatch (\S+) (?:was already )?recorded\b")


def redis_stats(c: Any) -> tuple[float, float]:
    """redis-server's CPU seconds (user + system) and the commands it has run, of the cluster's server."""
    r = c._redis()
    try:
        pipe = r.pipeline(transaction=False)
        pipe.info("cpu")
        pipe.info("commandstats")
        cpu, stats = pipe.execute()
        return (float(cpu["used_cpu_user"]) + float(cpu["used_cpu_sys"]),
                float(sum(v["calls"] for v in stats.values())))
    finally:
        r.close()


def redis_load(c: Any, seconds: float) -> tuple[float, float]:
    """Redis's CPU (cores) and commands per second over ``seconds``, whatever runs meanwhile."""
    cpu0, calls0 = redis_stats(c)
    t0 = time.perf_counter()
    time.sleep(seconds)
    elapsed = time.perf_counter() - t0
    cpu1, calls1 = redis_stats(c)
    return (cpu1 - cpu0) / elapsed, (calls1 - calls0 - 2) / elapsed  # less our own two INFO


# --------------------------------------------------------------------------- results
@dataclass
class Run:
    """One real run of ``nodes`` node processes."""

    nodes: int
    matches: int
    seconds: float
    matches_per_s: float
    decisions_per_match: float
    #: the nodes' CPU per match and per decision, all they do (gRPC, runner, records, queue calls)
    node_cpu_ms_per_match: float
    node_cpu_us_per_decision: float
    #: decision round trips over the slots' time: how busy the match slots were (a lower bound)
    slots_busy: float
    #: redis-server's CPU (cores) and commands per second, the baseline taken out
    redis_cpu_per_s: float
    redis_calls_per_s: float
    #: Redis's commands and CPU (us) a match, this many nodes' idle load taken out
    redis_calls_per_match: float
    redis_cpu_us_per_match: float
    #: the projection's Redis CPU for this many nodes at this run's rate (nodes x idle + rate x the one-node
    #: run's CPU a match), and measured over it
    projected_redis_cpu_per_s: float = float("nan")
    measured_vs_projected: float = float("nan")
    #: CPUs' worth used by this run's processes (nodes, bots, Redis, the bench) and by others meanwhile
    own_cpus: float = 0.0
    other_cpus: float | None = None
    p50_round_trip_us: float = float("nan")
    strikes: int = 0


@dataclass
class Results:
    python: str
    cpus: int
    think_ms: float
    capacity: int
    deals: int
    redis: str
    redis_db: int | None
    #: a node's path through Redis back to back (cluster.measure_round_trips), per job: Redis at its busiest
    jobs_measured: int
    round_trips_per_job: float
    path_redis_calls_per_job: float
    path_redis_cpu_us_per_job: float
    #: Redis's load before any node of ours ran (other clients, the server's timers), per second
    baseline_redis_cpu_per_s: float
    baseline_redis_calls_per_s: float
    #: one idle node's load on Redis, per second (the baseline taken out)
    idle_seconds: float
    idle_redis_cpu_per_s: float
    idle_redis_calls_per_s: float
    #: each node's CPU (cores) while idle
    idle_node_cpu: float
    runs: list[Run] = field(default_factory=list)
    #: Redis's CPU (cores) one node causes at the one-node run's rate, idle included, and how many such
    #: nodes one Redis core feeds
    node_redis_cpu_per_s: float | None = None
    nodes_per_redis_core: float | None = None
    #: the same with the back-to-back CPU a job (a Redis busy enough that no request wakes it)
    busy_nodes_per_redis_core: float | None = None
    #: a node at its CPU ceiling (one core over its CPU a match): its rate, and such nodes a Redis core feeds
    ceiling_matches_per_s: float | None = None
    ceiling_nodes_per_redis_core: float | None = None
    notes: list[str] = field(default_factory=list)


# --------------------------------------------------------------------------- the bench
def cluster_args(args: argparse.Namespace) -> argparse.Namespace:
    """What bench/cluster.py's ``Cluster`` reads of its options."""
    return argparse.Namespace(
        redis_db=args.redis_db, skip_redis=False, redis_url=args.redis_url, capacity=args.capacity,
        poll=None, deals=args.deals, quick=args.quick, think_ms=args.think_ms)


def start_own_redis(logs: Path) -> tuple[Any, str]:
    """A redis-server of the bench's own, on a free port, no persistence; (its process, its URL)."""
    import redis

    port = cluster.free_port()
    proc = cluster.Proc.start("redis", ["redis-server", "--port", str(port), "--bind", "127.0.0.1",
                                        "--save", "", "--appendonly", "no"], logs)
    url = f"redis://127.0.0.1:{port}/0"

    def up() -> bool:
        try:
            client = redis.Redis.from_url(url)
            try:
                return bool(client.ping())
            finally:
                client.close()
        except redis.RedisError:
            return False

    cluster.wait_for("redis-server answering", up, [proc], timeout=10)
    return proc, url


def one_run(c: ScaleCluster, n: int, args: argparse.Namespace, res: Results) -> Run:
    """Play ``matches-per-slot x n x capacity`` matches (at most 200: one two-bot round-robin) on the
    cluster's ``n`` nodes; the run's figures."""
    # a round-robin of two bots plays both seatings, and has at most MAX_ROUNDS rounds
    matches = min(args.matches_per_slot * n * args.capacity, 2 * MAX_ROUNDS)
    matches += matches % 2
    self0 = time.process_time()
    run = c.play(matches)
    own_bench = time.process_time() - self0
    (cpu0, calls0), (cpu1, calls1) = c.marks[0], c.marks[-1]
    wall = run.seconds
    redis_cpu = max(0.0, (cpu1 - cpu0) / wall - res.baseline_redis_cpu_per_s)
    # less our INFO reads (two a mark), the enqueue's one call being the run's
    calls = max(0.0, (calls1 - calls0 - 2) / wall - res.baseline_redis_calls_per_s)
    rate = run.matches_per_s
    node_cpu = sum(u.cpu_s for u in run.node_use)
    own = (node_cpu + run.bots_cpu_s) / wall + redis_cpu + res.baseline_redis_cpu_per_s + own_bench / wall
    return Run(
        nodes=n, matches=run.matches, seconds=wall, matches_per_s=rate,
        decisions_per_match=round(run.decisions / max(1, run.matches), 1),
        node_cpu_ms_per_match=round(node_cpu / max(1, run.matches) * 1e3, 2),
        node_cpu_us_per_decision=round(node_cpu / max(1, run.decisions) * 1e6, 1),
        slots_busy=run.slots_busy, redis_cpu_per_s=round(redis_cpu, 6), redis_calls_per_s=round(calls, 1),
        redis_calls_per_match=round(max(0.0, calls - n * res.idle_redis_calls_per_s) / rate, 1),
        redis_cpu_us_per_match=round(max(0.0, redis_cpu - n * res.idle_redis_cpu_per_s) / rate * 1e6, 1),
        own_cpus=round(own, 2), other_cpus=run.other_load, p50_round_trip_us=run.latency_p50_us,
        strikes=run.strikes,
    )


def build(args: argparse.Namespace, tmp: Path) -> Results:
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    logs = tmp / "bench-logs"
    logs.mkdir()
    own_redis = None
    if args.own_redis:
        own_redis, args.redis_url = start_own_redis(logs)
    try:
        return measure(args, tmp, cpus)
    finally:
        if own_redis is not None:
            own_redis.stop()


def measure(args: argparse.Namespace, tmp: Path, cpus: int) -> Results:
    result = cluster.sample_result(args.deals)
    trips = cluster.measure_round_trips(args.redis_url, result, args.path_jobs, slots=args.capacity)
    c = ScaleCluster(cluster_args(args), tmp)
    c.claim_database()
    try:
        baseline_cpu, baseline_calls = redis_load(c, args.baseline_seconds)
        c.add_node()
        c.start_bots()
        c.wait_bots()
        c.wait_in_logs()
        c.play(2 * args.capacity)  # warm-up: first claims, first records written
        node0 = cluster.cpu_seconds(c.set.procs[0].pid)
        t0 = time.perf_counter()
        idle_cpu, idle_calls = redis_load(c, args.idle_seconds)
        idle_node = (cluster.cpu_seconds(c.set.procs[0].pid) - node0) / (time.perf_counter() - t0)
        res = Results(
            python=platform.python_version(), cpus=cpus, think_ms=args.think_ms, capacity=args.capacity,
            deals=args.deals, redis="own" if args.own_redis else "shared", redis_db=c.db,
            jobs_measured=trips.jobs, round_trips_per_job=trips.round_trips_per_job,
            path_redis_calls_per_job=trips.redis_commands_per_job,
            path_redis_cpu_us_per_job=trips.redis_cpu_us_per_job,
            baseline_redis_cpu_per_s=round(baseline_cpu, 6),
            baseline_redis_calls_per_s=round(baseline_calls, 1),
            idle_seconds=args.idle_seconds, idle_redis_cpu_per_s=round(max(0.0, idle_cpu - baseline_cpu), 6),
            idle_redis_calls_per_s=round(max(0.0, idle_calls - baseline_calls), 1),
            idle_node_cpu=round(idle_node, 4),
        )
        for n in args.nodes:
            added = False
            while len(c.set.procs) < n:
                c.add_node()
                added = True
            if added:
                c.wait_bots()  # they hear of the new nodes from the first one's peers (its heartbeat)
                c.play(args.capacity * n)  # warm-up of the new nodes
            res.runs.append(one_run(c, n, args, res))
    finally:
        c.stop()
        c.release_database()
    project(res)
    return res


def project(res: Results) -> None:
    """Nodes per Redis core from the one-node run, each run's Redis CPU projected from it; the machine's
    bound."""
    one = next((r for r in res.runs if r.nodes == 1), None)
    if one is None:
        return
    res.node_redis_cpu_per_s = one.redis_cpu_per_s
    if one.redis_cpu_per_s > 0:
        res.nodes_per_redis_core = round(1 / one.redis_cpu_per_s, 1)
    else:  # a shared server whose other clients' load moved more than the node's: nothing measured
        res.notes.append("the one-node run's Redis CPU did not show above the baseline: no projection")
    busy = res.idle_redis_cpu_per_s + one.matches_per_s * res.path_redis_cpu_us_per_job / 1e6
    res.busy_nodes_per_redis_core = round(1 / busy, 1) if busy > 0 else float("inf")
    per_match = one.redis_cpu_us_per_match / 1e6
    if one.node_cpu_ms_per_match > 0:  # Redis is busy then: a job costs it what it does back to back
        ceiling = 1e3 / one.node_cpu_ms_per_match
        res.ceiling_matches_per_s = round(ceiling, 1)
        worst = res.idle_redis_cpu_per_s + ceiling * res.path_redis_cpu_us_per_job / 1e6
        res.ceiling_nodes_per_redis_core = round(1 / worst, 1) if worst > 0 else float("inf")
    for r in res.runs:
        projected = r.nodes * res.idle_redis_cpu_per_s + r.matches_per_s * per_match
        r.projected_redis_cpu_per_s = round(projected, 6)
        r.measured_vs_projected = round(r.redis_cpu_per_s / projected, 3) if projected > 0 else float("nan")
        if r.own_cpus + (r.other_cpus or 0.0) >= 0.8 * res.cpus:
            res.notes.append(
                f"{r.nodes} nodes: this run used {r.own_cpus:.2f} CPUs, others {r.other_cpus or 0.0:.2f}, of "
                f"{res.cpus}: the machine, not Redis nor the match slots, bounds its rate")
    if res.redis == "shared":
        res.notes.append("Redis is shared with other clients (baseline "
                         f"{res.baseline_redis_cpu_per_s:.2%} of a core taken out): its CPU figures move "
                         "with them; without --shared-redis the bench runs a redis-server of its own")


def report(res: Results) -> None:
    print(f"scale bench: Python {res.python}, {res.cpus} CPUs; bots think {res.think_ms:g} ms a decision; "
          f"{res.capacity} match slots a node; {res.deals} coinche deals a match; Redis: {res.redis} server, "
          f"nodes' database {res.redis_db} (flushed at the end)")
    print(f"a node's path through Redis, back to back ({res.jobs_measured} jobs, claimed {res.capacity} at a "
          f"time): {res.round_trips_per_job:.2f} round trips, {res.path_redis_calls_per_job:.1f} commands, "
          f"{res.path_redis_cpu_us_per_job:.0f} us of redis-server CPU a job")
    print(f"Redis before any node: {res.baseline_redis_cpu_per_s * 1e6:.0f} us/s of CPU, "
          f"{res.baseline_redis_calls_per_s:.1f} commands/s (taken out of what follows)")
    print(f"one idle node ({res.idle_seconds:g} s): {res.idle_redis_calls_per_s:.1f} commands/s, "
          f"{res.idle_redis_cpu_per_s * 1e6:.0f} us/s of Redis CPU ({res.idle_redis_cpu_per_s:.3%} of a "
          f"core); the node itself {res.idle_node_cpu:.2%} of a core")
    print("real runs (Redis CPU as a share of one core; projected = nodes x idle + matches/s x the one-node "
          "run's CPU a match):")
    for r in res.runs:
        other = "" if r.other_cpus is None else f", others {r.other_cpus:.2f}"
        pad = " " * 10
        print(f"  {r.nodes} node{'s' if r.nodes > 1 else ' '} {r.matches_per_s:7.2f} matches/s  "
              f"({r.matches} in {r.seconds:.2f} s, {r.decisions_per_match:.0f} decisions a match, round trip "
              f"p50 {r.p50_round_trip_us / 1e3:.1f} ms, slots busy >= {r.slots_busy:.0%}, "
              f"{r.strikes} strikes)")
        print(f"{pad}node CPU {r.node_cpu_ms_per_match:.1f} ms a match ({r.node_cpu_us_per_decision:.0f} us "
              f"a decision); Redis {r.redis_calls_per_s:,.0f} commands/s ({r.redis_calls_per_match:.1f} and "
              f"{r.redis_cpu_us_per_match:.0f} us a match, idle out); machine: ours {r.own_cpus:.2f} "
              f"CPUs{other}")
        print(f"{pad}Redis CPU {r.redis_cpu_per_s:.3%} measured vs {r.projected_redis_cpu_per_s:.3%} "
              f"projected (x{r.measured_vs_projected:.2f})")
    if res.nodes_per_redis_core is not None and res.node_redis_cpu_per_s is not None:
        one = next(r for r in res.runs if r.nodes == 1)
        print(f"projection, one Redis core: a node at {one.matches_per_s:.2f} matches/s costs Redis "
              f"{res.node_redis_cpu_per_s * 1e6:.0f} us/s (measured, {res.idle_redis_cpu_per_s * 1e6:.0f} of "
              f"them idle), so:")
        for n in sorted({1, 10, 100, int(res.nodes_per_redis_core)}):
            print(f"  {n:>6} nodes: {n * one.matches_per_s:9,.1f} matches/s, Redis "
                  f"{n * res.node_redis_cpu_per_s:.1%} of a core")
        print(f"  with a job's back-to-back cost instead ({res.path_redis_cpu_us_per_job:.0f} us: a Redis "
              f"too busy to sleep between requests): {res.busy_nodes_per_redis_core:.0f} nodes")
        if res.ceiling_nodes_per_redis_core is not None and res.ceiling_matches_per_s is not None:
            print(f"  nodes at their CPU ceiling (bots that answer at once: {res.ceiling_matches_per_s:.1f} "
                  f"matches/s, one core over {one.node_cpu_ms_per_match:.1f} ms a match; Redis then busy, a "
                  f"job at its back-to-back cost): {res.ceiling_nodes_per_redis_core:.0f} nodes a Redis core")
    for note in res.notes:
        print(f"note: {note}")
    figure = "n/a" if res.nodes_per_redis_core is None else f"{res.nodes_per_redis_core:.1f}"
    print(f"nodes_per_redis_core={figure}")


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--quick", action="store_true",
                   help="what CI runs (tests/test_benches.py), about 15 s: --think-ms 5 --capacity 2 "
                        "--deals 1 --nodes 1,2 --matches-per-slot 2 --idle-seconds 1 --redis-db auto "
                        "(options given win)")
    p.add_argument("--think-ms", type=float, default=None, help="the bots' time per decision, ms (10)")
    p.add_argument("--capacity", type=int, default=None, help="match slots a node (8)")
    p.add_argument("--deals", type=int, default=None, help="coinche deals a match (2)")
    p.add_argument("--nodes", default=None, help="node counts of the real runs, in order (1,2,4)")
    p.add_argument("--matches-per-slot", type=int, default=None,
                   help="a run's matches: this x nodes x capacity (6)")
    p.add_argument("--idle-seconds", type=float, default=None,
                   help="how long one idle node's load is measured (12: past a lease sweep)")
    p.add_argument("--redis-url", default=cluster.REDIS_URL, help=f"the Redis server ({cluster.REDIS_URL})")
    p.add_argument("--redis-db", default=None,
                   help="the nodes' database: it must be empty; flushed after (auto: the first empty one of "
                        f"{cluster.AUTO_DBS[0]}-{cluster.AUTO_DBS[-1]}, the default)")
    p.add_argument("--shared-redis", action="store_true",
                   help="measure on --redis-url's server even when redis-server is installed (the default "
                        "then is a server of the bench's own, on a free port, with no other client's load)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    args = p.parse_args(argv)
    quick = args.quick
    for name, full, small in (("think_ms", 10.0, 5.0), ("capacity", 8, 2), ("deals", 2, 1),
                              ("nodes", "1,2,4", "1,2"), ("matches_per_slot", 6, 2),
                              ("idle_seconds", 12.0, 1.0)):
        if getattr(args, name) is None:
            setattr(args, name, small if quick else full)
    args.own_redis = not args.shared_redis and shutil.which("redis-server") is not None
    args.baseline_seconds = 0.5 if quick else 3.0
    args.path_jobs = 200 if quick else 1000
    try:
        args.nodes = [int(x) for x in args.nodes.split(",") if x.strip()]
    except ValueError:
        p.error(f"--nodes must be whole numbers separated by commas, not {args.nodes!r}")
    if not args.nodes or min(args.nodes) < 1 or args.nodes != sorted(args.nodes) or 1 not in args.nodes:
        p.error("--nodes must start at 1 and grow (e.g. 1,2,4)")
    for name in ("capacity", "deals", "matches_per_slot"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    if args.think_ms < 0 or args.idle_seconds <= 0:
        p.error("--think-ms must be at least 0 and --idle-seconds more than 0")
    if args.redis_db in (None, "auto"):
        args.redis_db = None
    else:
        try:
            args.redis_db = int(args.redis_db)
        except ValueError:
            p.error(f"--redis-db must be 0-15 or auto, not {args.redis_db!r}")
        if not 0 <= args.redis_db <= 15:
            p.error("--redis-db must be 0-15 or auto")
    return args


def _no_nan(value: Any) -> Any:
    if isinstance(value, float) and value != value:
        return None
    if isinstance(value, dict):
        return {k: _no_nan(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_no_nan(v) for v in value]
    return value


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == [BOT_FLAG]:
        return bot_main(argv[1:])
    args = parse_args(argv)
    # a SIGTERM unwinds like Ctrl-C, so that the finally blocks stop every child process
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if importlib.util.find_spec("redis") is None:
        print("redis-py is not installed (pip install redis)", file=sys.stderr)
        return 2
    from arena.queue import BrokerError
    from arena.tournament import TournamentError

    cluster.POLL_S = 0.05  # the bench's wait for a run's end: its polls are counted and taken out
    try:
        with tempfile.TemporaryDirectory(prefix="bench-scale-") as d:
            res = build(args, Path(d))
    except (BrokerError, TournamentError, RuntimeError, subprocess.SubprocessError, OSError) as e:
        print(f"bench/scale.py: {e}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(_no_nan(asdict(res)), indent=2))
    else:
        report(res)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:  # every child was stopped on the way out
        sys.exit(130)
