"""Cluster throughput: queue jobs/s of both brokers, then matches/s of one and of two referee nodes.

Usage (from the repository root)::

    python bench/cluster.py [--quick] [--seconds S] [--repeats K] [--matches M] [--deals D] [--capacity N]
                            [--jobs batch|round-robin] [--redis-url URL] [--redis-db DB|auto]
                            [--skip-redis] [--skip-nodes] [--json]

**Part 1, the queue.** One job's whole life in the queue, one at a time:
``enqueue([job])``, ``claim(node, 1, lease)``, ``finish([(claim, result)])`` (the result written and
the job removed in one step), in a loop, on each backend:

* ``RedisBroker`` against ``--redis-url`` (default ``redis://127.0.0.1:6379/0``) under a key
  prefix of this run's own (``bench-cluster-<random>``); afterwards only the keys under that
  prefix are deleted (SCAN MATCH prefix:*);
* ``EmbeddedBroker`` on a sqlite file in a temporary directory (WAL, synchronous=FULL, as
  ``belote-arena serve`` opens it without ``--redis``).

The jobs belong to a tournament stored in the broker first (``put_tournament``), as a node's
jobs do: a result of a tournament the store does not hold would cost two more round trips (the
spec looked for again, then the data mark checked). One client, then ``THREADS`` threads sharing
one broker object (as a node's ``asyncio.to_thread`` calls do), each thread with its own node
id. The result written carries a real match record (``--deals`` coinche deals played by the
engine, with latencies), so its bytes are a real result's. Rate: jobs done in a ``--seconds``
window, best of ``--repeats`` windows after a short warm-up. Also printed: the mean time of each
of the three calls (one client), the CPU per job of this process and of redis-server (``INFO
cpu``), what ``MatchResult.to_json`` alone costs, and the reference, the round trip of a Redis
``PING`` through redis-py: a job costs so many PINGs.

Then a node's own path through Redis, counted (:func:`measure_round_trips`): a tournament's jobs
enqueued 100 a stage, claimed 4 at a time (a node's free slots, its bots' seats given) and finished
together (one pipeline), until none is left; the round trips (every request redis-py sends, a
pipeline being one), Redis's commands and redis-server's CPU per job. Against the floor, the same
scripts 10 jobs a call: ``round_trips_per_job`` (target: at most 2) and ``redis_cpu_vs_floor``
(target: at most 1.5).

**Part 2, the nodes.** Real processes, as a cluster runs on one machine:

* each node is ``python -m arena.cli serve --redis redis://HOST:PORT/<--redis-db> --listen
  127.0.0.1:<port> --capacity N`` (``arena.cli`` is what the ``belote-arena`` script runs), with
  the two bots registered in the queue's shared registry by the bench itself. The nodes' keys have the arena's
  default prefix, so the database must be empty (default 6, one no test here uses); the
  bench refuses a database with keys in it, marks it (key ``bench-cluster:owner``), stops if a
  node that is not its own sends heartbeats there, and flushes it (``FLUSHDB``, that database
  only) at the end. With ``--skip-redis`` the
  nodes share one embedded sqlite file (``--data-dir``) instead;
* two bots, each one ``BELOTE_TOKEN=T python -m belote_bot.bots.random --address <node 1>
  --concurrency 2N`` process; the SDK connects each to every live node it is told of, with 2N
  seats on each, so every node can fill its N match slots (a match takes two seats of each bot);
* the matches: the jobs of a ``round-robin`` of the two bots (``rounds`` = M/2: M matches, both
  seatings), ``--deals`` deals of ``coinche`` each (fixed deals, seeds from the schedule).
  ``--jobs batch`` (the default) enqueues them under a tournament id with no stored tournament,
  so after each match a node has nothing to advance; ``--jobs round-robin`` stores the
  tournament the way ``belote-arena tournament create`` does (``put_tournament`` +
  ``Tournaments.advance``) and the nodes advance it after every match. A warm-up round-robin of
  2N matches a node comes first (node start, bots connecting, first claims), then ``--repeats``
  measured runs; the best is kept. One node, then a second node is started and both run.

Rate: M matches over the time from the enqueue until no job of the run is pending (polled every
20 ms); the tail, when fewer than N matches are left, is included. Decisions are counted from
the records' ``latencies_us`` (one entry per action request), per node by the results'
``node_id``. CPU: user + system time of each node process and of the bot processes over the run
(``/proc/<pid>/stat``; psutil when there is no /proc), and redis-server's (``INFO cpu``: the
whole server). A node's CPU per decision or per match is all it does: gRPC, runner, rules,
records on disk, queue calls, heartbeats. Also printed: how busy the match slots were (the
decisions' round trips summed over nodes x N x time: a lower bound, the runner's own work
between decisions left out), each node's CPU when idle, and what other processes used of the
machine meanwhile (``/proc/stat``'s busy time less ours): a run on a busy machine says so.

The projection. This machine runs the nodes, the bots and Redis on the same cores (two here),
so the measured two-node rate says little about two machines. On a machine of its own, with
the bots and Redis elsewhere, a node is bound by its own CPU: its Python code (event loop,
runner, protobuf) holds the GIL, so a node's ceiling is one core over its CPU per match.
``projected_two_node_speedup`` is the two nodes' ceilings summed (each node's CPU per match in
the two-node run) over the one node's ceiling (its CPU per match alone): 2 less whatever a node
spends more per match once it has a peer, which on a shared machine includes the cost of the
contention itself (more processes than cores, fewer replies ready per wake-up). It is a
ceiling: a node with N slots and real bots over a network is also bound by N / latency.

``queue_share_of_match_cost`` is the queue's wall time per job (part 1, Redis, one client; the
embedded broker's with ``--skip-redis``) over the one-node run's node CPU per match: the queue
should cost little beside the referee's work (docs/architecture.md#what-things-cost). The same
in CPU (this process's and redis-server's per job) is
printed next to it. The cost of advancing a tournament after a match is measured apart, in this
process, per result: as it was (every result read, the tournament checked), and as
``Tournaments.advance`` does it now (the result summaries, all of them for a process new to them,
then only those written since, and the next jobs worked out), with the run's spec, stored or not.

Every process started is stopped in a ``finally`` (SIGTERM, then SIGKILL after 5 s). Default
run: 45-65 s here; ``--quick`` (what CI runs: ``tests/test_benches.py``), about 20 s, with
``--redis-db auto`` (the first empty database of 6-15). Nothing passes or fails on speed.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.util
import json
import os
import platform
import random
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

_ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(_ROOT), str(_ROOT / "sdk")]  # run from a checkout

from arena.engine import Match, Ruleset  # noqa: E402
from arena.queue import Broker, EmbeddedBroker, open_broker  # noqa: E402
from arena.records import MatchEnd, MatchRecord, ResultReason, SeatBot, TimeControl  # noqa: E402
from arena.tournament import MatchJob, MatchResult, Tournament, Tournaments, TournamentSpec  # noqa: E402

REDIS_URL = "redis://127.0.0.1:6379/0"
RULESET = "coinche"
THREADS = 4
QUEUE_WARMUP_S = 0.3
LEASE_S = 30.0
POLL_S = 0.02
BOTS = ("alpha", "beta")
#: the tournament of part 1's jobs, stored in each broker first as a node finds its jobs' tournaments (a
#: tournament the store does not hold costs a write_result two more round trips: the spec looked for
#: again, then Redis's data mark checked)
QUEUE_TOURNAMENT = "bench-queue"
#: the nodes' time control and drain, on the command line of `serve`
DEADLINE_S, TIME_BANK_S, GRACE_S, DRAIN_S = 10.0, 60.0, 30.0, 2.0
NODE_FLAG = "--as-node"
#: set in the nodes' Redis database while the bench uses it
OWNER_KEY = "bench-cluster:owner"
#: the databases ``--redis-db auto`` looks through for an empty one (no test uses them)
AUTO_DBS = tuple(range(6, 16))


# --------------------------------------------------------------------------- CPU of a process
_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process (every thread); /proc, else psutil."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / _TICK  # utime, stime: fields 14 and 15
    except FileNotFoundError:
        if os.path.isdir("/proc"):
            raise
    psutil: Any = importlib.import_module("psutil")  # no /proc: pip install psutil
    times = psutil.Process(pid).cpu_times()
    return float(times.user + times.system)


def machine_busy() -> float | None:
    """CPU seconds the whole machine spent busy (every process, every CPU) since boot; None without /proc."""
    try:
        with open("/proc/stat", "rb") as f:
            ticks = [int(x) for x in f.readline().split()[1:]]
    except OSError:
        return None
    user, nice, system, _idle, _iowait, irq, softirq, steal = (ticks + [0] * 8)[:8]
    return (user + nice + system + irq + softirq + steal) / _TICK


def pct(sorted_values: Sequence[int], q: float) -> float:
    if not sorted_values:
        return float("nan")
    return float(sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))])


# --------------------------------------------------------------------------- part 1: the queue
@dataclass
class QueueResult:
    backend: str
    threads: int
    jobs_per_s: float
    windows: list[float]
    #: wall time of one job's four calls for one client: threads / rate (the figures below are the
    #: best window's)
    ms_per_job: float
    #: CPU of this (the client) process per job, every thread; embedded: the whole queue's work
    client_cpu_us_per_job: float
    #: redis-server's CPU per job (INFO cpu; the whole server); None for the embedded broker
    server_cpu_us_per_job: float | None
    #: CPUs' worth of work done meanwhile by other processes than this one and redis-server
    other_load: float | None = None
    #: single client: mean us of each call
    call_us: dict[str, float] = field(default_factory=dict)


def sample_result(deals: int) -> MatchResult:
    """A finished match's result with a real record: ``deals`` random coinche deals and their latencies."""
    rules = Ruleset.from_spec(RULESET).with_options(deals=deals)
    match = Match(rules, seed="bench-cluster")
    rng = random.Random(7)
    latencies: list[list[int]] = []
    while not match.is_over:
        deal = match.new_deal()
        lat: list[int] = []
        while not deal.is_over:
            deal.apply(rng.choice(deal.legal_actions()))
            lat.append(rng.randrange(300, 3000))
        match.add(deal)
        latencies.append(lat)
    players = [BOTS[i & 1] for i in range(4)]
    end = MatchEnd(totals=(match.totals[0], match.totals[1]), winner=match.winner,
                   reason=ResultReason.FINISHED)
    record = MatchRecord.of_match(
        "", match, players, bots=[SeatBot(i, f"bot-{name}", name) for i, name in enumerate(players)],
        time_control=TimeControl(), latencies_us=latencies, strikes=[], result=end,
    )
    job = MatchJob("", QUEUE_TOURNAMENT, BOTS[0], BOTS[1], RULESET, "bench-cluster", deals=deals)
    return MatchResult.of_record(job, record)


def queue_tournament(deals: int) -> TournamentSpec:
    """The stored tournament part 1's jobs and results belong to."""
    return TournamentSpec.from_dict({"tournament_id": QUEUE_TOURNAMENT, "format": "round-robin",
                                     "bots": list(BOTS), "ruleset": RULESET, "deals": deals})


def to_json_us(result: MatchResult, n: int = 50, repeats: int = 5) -> float:
    """``MatchResult.to_json``'s time, best of ``repeats`` batches of ``n``."""
    result.to_json()
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(n):
            result.to_json()
        best = min(best, (time.perf_counter() - t0) / n * 1e6)
    return best


def _job(match_id: str, deals: int) -> MatchJob:
    return MatchJob(match_id=match_id, tournament_id=QUEUE_TOURNAMENT, team0=BOTS[0], team1=BOTS[1],
                    ruleset=RULESET, seed=match_id, deals=deals)


class QueueLoop:
    """One client's loop: enqueue, claim, then the result written and the job removed in one step
    (``finish``); counts jobs, times each call.

    The jobs and results are of :data:`QUEUE_TOURNAMENT`, which :func:`queue_loops` stores in the broker
    first (``put_tournament``), as every job a node claims has its tournament stored."""

    def __init__(self, broker: Broker, node_id: str, result: MatchResult, timed: bool) -> None:
        self.broker = broker
        self.node_id = node_id
        self.result = result
        self.timed = timed
        self.jobs = 0
        self.k = 0
        self.call_s = {"enqueue": 0.0, "claim": 0.0, "finish": 0.0}

    def one(self) -> None:
        b, perf = self.broker, time.perf_counter
        self.k += 1
        t0 = perf()
        b.enqueue([_job(f"{self.node_id}-{self.k}", len(self.result.record.deals))])
        t1 = perf()
        claims = b.claim(self.node_id, 1, LEASE_S)
        t2 = perf()
        b.finish([(c, replace(self.result, match_id=c.job.match_id, node_id=self.node_id)) for c in claims])
        t3 = perf()
        self.jobs += len(claims)
        if self.timed:
            s = self.call_s
            s["enqueue"] += t1 - t0
            s["claim"] += t2 - t1
            s["finish"] += t3 - t2

    def run_until(self, stop: threading.Event) -> None:
        while not stop.is_set():
            self.one()


def queue_loops(broker: Broker, threads: int, result: MatchResult) -> list[QueueLoop]:
    """``threads`` clients' loops on ``broker``, their tournament stored first (once per broker)."""
    broker.put_tournament(queue_tournament(len(result.record.deals)))  # False: stored already
    tag = secrets.token_hex(3)
    return [QueueLoop(broker, f"n{tag}-{i}", result, timed=threads == 1) for i in range(threads)]


def measure_queue(name: str, broker: Broker, threads: int, seconds: float, repeats: int,
                  result: MatchResult, server_cpu: Callable[[], float] | None = None) -> QueueResult:
    loops = queue_loops(broker, threads, result)

    def window(length: float) -> int:
        stop = threading.Event()
        before = sum(lp.jobs for lp in loops)
        ts = [threading.Thread(target=lp.run_until, args=(stop,), daemon=True) for lp in loops]
        for t in ts:
            t.start()
        time.sleep(length)
        stop.set()
        for t in ts:
            t.join()
        return sum(lp.jobs for lp in loops) - before

    window(QUEUE_WARMUP_S)
    measured: list[tuple[float, QueueResult]] = []
    for _ in range(repeats):
        for lp in loops:
            lp.call_s = dict.fromkeys(lp.call_s, 0.0)
        cpu0, server0, busy0 = time.process_time(), server_cpu() if server_cpu else 0.0, machine_busy()
        t0 = time.perf_counter()
        n = max(1, window(seconds))
        wall = time.perf_counter() - t0
        cpu = time.process_time() - cpu0
        server_s = server_cpu() - server0 if server_cpu else 0.0
        busy1 = machine_busy()
        other = (None if busy0 is None or busy1 is None
                 else round(max(0.0, (busy1 - busy0 - cpu - server_s) / wall), 2))
        rate = n / wall
        calls = {k: round(v / n * 1e6, 1) for k, v in loops[0].call_s.items()} if threads == 1 else {}
        measured.append((rate, QueueResult(
            name, threads, round(rate, 1), [], round(threads / rate * 1e3, 3), round(cpu / n * 1e6, 1),
            None if server_cpu is None else round(server_s / n * 1e6, 1), other, calls)))
    best = max(measured, key=lambda m: m[0])[1]
    best.windows = [round(r, 1) for r, _ in measured]
    return best


@dataclass
class RoundTrips:
    """A node's path through the Redis queue, counted: round trips and redis-server CPU per job."""

    #: jobs a claim asks for (a node's free slots), and so finished together at most
    slots: int
    jobs: int
    round_trips_per_job: float
    redis_commands_per_job: float
    redis_cpu_us_per_job: float
    #: the same scripts, 10 jobs a call (enqueue, claim and finish alike): the floor
    floor_redis_cpu_us_per_job: float
    floor_round_trips_per_job: float


class _Counted:
    """Counts the round trips of every redis-py connection of this process (a pipeline is one) while on."""

    def __init__(self) -> None:
        import redis.connection

        self.n = 0
        self._cls: Any = redis.connection.AbstractConnection
        self._send: Any = self._cls.send_packed_command

    def __enter__(self) -> _Counted:
        send = self._send

        def counted(conn: Any, command: Any, check_health: bool = True) -> None:
            self.n += 1
            send(conn, command, check_health)

        self._cls.send_packed_command = counted
        return self

    def __exit__(self, *exc: object) -> None:
        self._cls.send_packed_command = self._send


def _redis_stats(url: str) -> tuple[float, float]:
    """redis-server's CPU seconds (user + system) and its commands run so far."""
    import redis

    client = redis.Redis.from_url(url, decode_responses=True)
    try:
        cpu = client.info("cpu")
        stats = client.info("commandstats")
        return (float(cpu["used_cpu_user"]) + float(cpu["used_cpu_sys"]),
                float(sum(v["calls"] for v in stats.values())))
    finally:
        client.close()


def measure_round_trips(url: str, result: MatchResult, jobs: int, slots: int = 4) -> RoundTrips:
    """A node's path, on a Redis prefix of its own: a tournament's ``jobs`` enqueued in stages of 100
    (one call each, as a tournament's stage is), claimed ``slots`` at a time (a node claims for all its
    free slots at once) and finished together (their results written and jobs removed, one pipeline).
    Then the floor: the same scripts, 10 jobs a call. The bots' seats are given, as a node gives them."""
    from arena.queue.redis_broker import RedisBroker

    def path(batch: int) -> tuple[int, float, float, float]:
        seats = {BOTS[0]: 2 * batch, BOTS[1]: 2 * batch}  # a match seats each bot twice
        prefix = f"bench-rt-{secrets.token_hex(6)}"
        broker = RedisBroker(url, prefix=prefix)
        try:
            broker.put_tournament(queue_tournament(len(result.record.deals)))
            broker.tournament_spec(QUEUE_TOURNAMENT)  # read once, as a node does at its first result
            node, tag = f"n-{secrets.token_hex(3)}", secrets.token_hex(3)
            done = 0
            cpu0, calls0 = _redis_stats(url)
            with _Counted() as rt:
                for start in range(0, jobs, 100):
                    broker.enqueue([_job(f"{tag}-{k}", len(result.record.deals))
                                    for k in range(start, min(jobs, start + 100))])
                    while claims := broker.claim(node, batch, LEASE_S, seats):
                        broker.finish([(c, replace(result, match_id=c.job.match_id, node_id=node))
                                       for c in claims])
                        done += len(claims)
            cpu1, calls1 = _redis_stats(url)
            # the empty claim that ends each stage is counted: a node makes one when its seats free
            per = max(1, done)
            return done, rt.n / per, (calls1 - calls0 - 2) / per, (cpu1 - cpu0) / per
        finally:
            broker.close()
            delete_prefix(url, prefix)

    path(slots)  # warm-up: scripts loaded, connections open
    n, rt, commands, cpu = path(slots)
    _, floor_rt, _, floor_cpu = path(10)
    return RoundTrips(slots, n, round(rt, 3), round(commands, 1), round(cpu * 1e6, 1),
                      round(floor_cpu * 1e6, 1), round(floor_rt, 3))


def redis_ping_us(url: str, n: int = 2000) -> float:
    import redis

    client = redis.Redis.from_url(url)
    try:
        client.ping()
        t0 = time.perf_counter()
        for _ in range(n):
            client.ping()
        return (time.perf_counter() - t0) / n * 1e6
    finally:
        client.close()


def redis_server_cpu(url: str) -> Callable[[], float]:
    """A function reading redis-server's user + system CPU seconds (INFO cpu)."""
    import redis

    def read() -> float:
        client = redis.Redis.from_url(url, decode_responses=True)
        try:
            info = client.info("cpu")
            return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])
        finally:
            client.close()

    return read


def delete_prefix(url: str, prefix: str) -> int:
    """Delete the keys of one arena prefix (and nothing else); how many."""
    import redis

    from arena.queue.keys import Keys

    client = redis.Redis.from_url(url)
    try:
        own = list(client.scan_iter(match=Keys(prefix).pattern(), count=1000))
        for i in range(0, len(own), 500):
            client.delete(*own[i : i + 500])
        return len(own)
    finally:
        client.close()


def run_queue(
    args: argparse.Namespace, result: MatchResult, tmp: Path,
) -> tuple[list[QueueResult], float | None, RoundTrips | None]:
    out: list[QueueResult] = []
    ping = None
    trips = None
    if not args.skip_redis:
        # 200 jobs in --quick: two stages of 100 enqueued, 50 claims and finishes of 4, the same path
        trips = measure_round_trips(args.redis_url, result, 200 if args.quick else 2000)
        from arena.queue.redis_broker import RedisBroker

        prefix = f"bench-cluster-{secrets.token_hex(6)}"
        broker = RedisBroker(args.redis_url, prefix=prefix)  # BrokerUnavailable when no server answers
        try:
            ping = round(redis_ping_us(args.redis_url), 1)
            for threads in (1, THREADS):
                out.append(measure_queue("redis", broker, threads, args.seconds, args.repeats, result,
                                         redis_server_cpu(args.redis_url)))
        finally:
            broker.close()
            delete_prefix(args.redis_url, prefix)
    with EmbeddedBroker(tmp / "queue-bench.sqlite3") as eb:
        for threads in (1, THREADS):
            out.append(measure_queue("embedded", eb, threads, args.seconds, args.repeats, result))
    return out, ping, trips


# --------------------------------------------------------------------------- part 2: the nodes
def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@dataclass
class Proc:
    """A child process, its output in files (no pipe to fill)."""

    name: str
    popen: subprocess.Popen[bytes]
    out: Path
    err: Path

    @classmethod
    def start(cls, name: str, argv: list[str], logs: Path, **extra: str) -> Proc:
        env = {**os.environ, **extra, "PYTHONPATH": os.pathsep.join(
            [str(_ROOT), str(_ROOT / "sdk"), *filter(None, [os.environ.get("PYTHONPATH")])])}
        out, err = logs / f"{name}.out", logs / f"{name}.err"
        with out.open("wb") as o, err.open("wb") as e:
            popen = subprocess.Popen(argv, stdout=o, stderr=e, stdin=subprocess.DEVNULL, env=env, cwd=_ROOT)
        return cls(name, popen, out, err)

    @property
    def pid(self) -> int:
        return self.popen.pid

    def alive(self) -> bool:
        return self.popen.poll() is None

    def check(self) -> None:
        if not self.alive():
            raise RuntimeError(f"{self.name} exited ({self.popen.returncode}):\n"
                               f"{self.err.read_text(errors='replace')[-3000:]}")

    def stop(self) -> None:
        if self.alive():
            with contextlib.suppress(ProcessLookupError):
                self.popen.send_signal(signal.SIGTERM)
            try:
                self.popen.wait(5)
                return
            except subprocess.TimeoutExpired:
                pass
            with contextlib.suppress(ProcessLookupError):
                self.popen.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(5)


def wait_for(what: str, cond: Callable[[], bool], procs: Sequence[Proc], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        for p in procs:
            p.check()
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what}: not after {timeout:g} s")
        time.sleep(0.05)


@dataclass
class NodeUse:
    node_id: str
    address: str
    matches: int
    decisions: int
    cpu_s: float
    #: the node's CPU over the run over the run's wall time: 1.0 is one core all the time
    cpu_share: float
    cpu_us_per_decision: float
    cpu_ms_per_match: float


@dataclass
class ClusterRun:
    #: "batch" (the jobs alone) or "round-robin" (a stored tournament the nodes advance)
    kind: str
    #: CPUs' worth of work done meanwhile by processes that are not this run's (other users)
    other_load: float | None
    nodes: int
    matches: int
    decisions: int
    seconds: float
    matches_per_s: float
    decisions_per_s: float
    node_use: list[NodeUse]
    bots_cpu_s: float
    bots_cpu_share: float
    bots_cpu_us_per_decision: float
    #: redis-server's CPU (whole server, other clients included); None with the embedded broker
    redis_cpu_us_per_decision: float | None
    latency_p50_us: float
    latency_p99_us: float
    strikes: int
    fallbacks: int
    #: the decisions' round trips summed over the match slots' time (nodes x capacity x seconds):
    #: a lower bound of how busy the slots were (the runner's own work between decisions is left out)
    slots_busy: float
    #: mean size of a result as written (JSON), bytes
    result_bytes: int
    #: one end-of-tournament advance in the bench process, as it was: read every result and check the
    #: tournament
    advance_ms: float
    #: the same from the result summaries: a process that has read none (every summary read once), then
    #: the next read of its progress (only the summaries written since: none), schedule rebuilt each time
    advance_cold_ms: float = 0.0
    advance_warm_ms: float = 0.0
    #: each node's CPU per second of wall time with nothing to play (polls, heartbeats), before the runs
    idle_cpu_share: list[float] = field(default_factory=list)


@dataclass
class NodeSet:
    procs: list[Proc] = field(default_factory=list)
    addresses: list[str] = field(default_factory=list)
    bots: list[Proc] = field(default_factory=list)


class Cluster:
    """The node and bot processes of part 2 and the broker the bench reads them through."""

    def __init__(self, args: argparse.Namespace, tmp: Path) -> None:
        self.args = args
        self.tmp = tmp
        self.logs = tmp / "logs"
        self.logs.mkdir()
        #: the bots' tokens, made when the shared bot registry is first opened (in add_node)
        self.tokens: dict[str, str] = {}
        self.set = NodeSet()
        self.url: str | None = None
        #: the nodes' Redis database: --redis-db, or with "auto" the first of AUTO_DBS found empty
        self.db: int = AUTO_DBS[0] if args.redis_db is None else args.redis_db
        self.base = ""  # the Redis URL without its database
        if args.skip_redis:
            self.data_dir = tmp / "shared"  # every node opens data_dir/arena.sqlite3
            self.data_dir.mkdir()
        else:
            self.base = args.redis_url.rsplit("/", 1)[0] if args.redis_url.count("/") >= 3 else args.redis_url
            self.url = f"{self.base}/{self.db}"
            self.data_dir = tmp
        self.broker: Broker | None = None
        self.runs = 0
        self.claimed = False
        self.foreign = False
        #: the bots registered, those of them started (one process each), the seats each offers a node
        self.bot_names: tuple[str, ...] = BOTS
        self.playing: tuple[str, ...] = BOTS
        self.concurrency = 2 * args.capacity
        #: more `serve` options (part 3: --http, for the nodes' metrics), and each node's --http address
        self.node_flags: list[str] = []
        self.http: list[str] = []

    # ------------------------------------------------------------ the Redis database
    def _redis(self) -> Any:
        import redis

        return redis.Redis.from_url(self.url or "", decode_responses=True)

    def claim_database(self) -> None:
        """Use ``--redis-db`` only if it is empty: the nodes' keys have the default prefix, so another
        arena (or a test) on the same database would share our jobs and we would flush its data. With
        ``--redis-db auto``, the first of :data:`AUTO_DBS` that is empty (two benches at once take two)."""
        if self.url is None:
            return
        auto = self.args.redis_db is None
        for db in AUTO_DBS if auto else (self.db,):
            self.db, self.url = db, f"{self.base}/{db}"
            r = self._redis()
            try:
                n = int(r.dbsize())
                # a mark, so that whoever looks for an empty database next sees this one taken
                if not n and not r.set(OWNER_KEY, str(os.getpid()), nx=True):
                    n = 1
            finally:
                r.close()
            if not n:
                self.claimed = True
                return
        if auto:
            raise RuntimeError(f"no empty Redis database among {AUTO_DBS[0]}-{AUTO_DBS[-1]}: other arenas or "
                               "benches use them all; pick one with --redis-db")
        raise RuntimeError(
            f"Redis database {self.db} is not empty ({n} keys): another arena or a test may "
            f"be using it; pick an empty one with --redis-db (or flush it yourself if it is yours)")

    def check_alone(self) -> None:
        """Raise if a node that is not ours sends heartbeats on our database (it would take our jobs)."""
        assert self.broker is not None
        foreign = {nid: a for nid, a in self.broker.live_nodes().items() if a not in self.set.addresses}
        if foreign:
            self.foreign = True
            where = f"Redis database {self.db}" if self.url else "the shared sqlite file"
            raise RuntimeError(f"nodes that are not this bench's use {where}: {foreign}; its jobs would be "
                               "shared with them: pick another --redis-db")

    def release_database(self) -> None:
        """Flush the database we used, unless someone else turned up on it (then leave it be)."""
        if self.url is None or not self.claimed:
            return
        if self.foreign:
            print(f"bench: Redis database {self.db} was shared with other nodes: not flushed",
                  file=sys.stderr)
            return
        r = self._redis()
        try:
            r.flushdb()
        finally:
            r.close()

    def redis_cpu(self) -> float | None:
        if self.url is None:
            return None
        r = self._redis()
        try:
            info = r.info("cpu")
            return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])
        finally:
            r.close()

    # ------------------------------------------------------------ processes
    def add_node(self) -> None:
        a = self.args
        i = len(self.set.procs)
        address = f"127.0.0.1:{free_port()}"
        data_dir = str(self.data_dir if self.url is None else self.tmp / f"node{i}")
        if self.broker is None:  # the bots are registered in the queue the nodes share, before any node
            from arena.node.bots import BrokerRegistryBackend
            from arena.referee.registry import BotRegistry

            self.broker = open_broker(self.url, None if self.url else self.data_dir)
            registry = BotRegistry(BrokerRegistryBackend(self.broker))
            self.tokens = {name: registry.register(name)[1] for name in self.bot_names}
        argv: list[str]
        if a.poll is None:
            http = f"127.0.0.1:{free_port()}"
            self.http.append(http)
            argv = [sys.executable, "-m", "arena.cli", "serve", "--listen", address, "--http", http,
                    *self.node_flags, "--capacity", str(a.capacity), "--drain", str(DRAIN_S),
                    # generous time: a loaded 2-core machine must not turn slow answers into strikes
                    "--deadline", str(DEADLINE_S), "--time-bank", str(TIME_BANK_S), "--grace", str(GRACE_S)]
            argv += ["--redis", self.url] if self.url else []
            argv += ["--data-dir", data_dir]
        else:  # the CLI has no option for the worker's poll interval: serve_forever with our config
            plan = {"url": self.url, "listen": address, "data_dir": data_dir, "capacity": a.capacity,
                    "poll_s": a.poll}
            argv = [sys.executable, str(Path(__file__).resolve()), NODE_FLAG, json.dumps(plan)]
        proc = Proc.start(f"node{i}", argv, self.logs)
        self.set.procs.append(proc)
        self.set.addresses.append(address)
        wait_for(f"node {i} serving", lambda: "listening on port" in proc.out.read_text(errors="replace"),
                 [proc])

    def start_bots(self) -> None:
        for k, name in enumerate(self.playing):
            argv = [sys.executable, "-m", "belote_bot.bots.random", "--address", self.set.addresses[0],
                    "--concurrency", str(self.concurrency),
                    "--name", name, "--seed", str(k), "--log-level", "WARNING"]
            self.set.bots.append(Proc.start(f"bot-{name}", argv, self.logs, BELOTE_TOKEN=self.tokens[name]))

    def wait_bots(self) -> None:
        """Until both bots are connected to every node."""
        from arena.remote import Remote

        def connected(address: str) -> bool:
            try:
                with Remote(address) as remote:
                    return {b.name for b in remote.list_bots() if b.connected} >= set(self.playing)
            except Exception:
                return False

        wait_for("the bots connected to every node",
                 lambda: all(connected(a) for a in self.set.addresses),
                 [*self.set.procs, *self.set.bots], timeout=60)

    def stop(self) -> None:
        for p in [*self.set.bots, *self.set.procs]:
            p.stop()
        if self.broker is not None:
            self.broker.close()

    # ------------------------------------------------------------ one tournament
    def tournament(self, matches: int, kind: str) -> ClusterRun:
        """Play ``matches`` matches: a stored round-robin the nodes advance, or its jobs as a bare batch."""
        assert self.broker is not None
        broker = self.broker
        self.runs += 1
        tid = f"bench-{self.runs}-{secrets.token_hex(3)}"
        spec = TournamentSpec.from_dict({
            "tournament_id": tid, "format": "round-robin", "bots": list(BOTS), "ruleset": RULESET,
            "deals": self.args.deals, "rounds": max(1, matches // 2),
        })
        procs = self.set.procs
        self.check_alone()
        jobs = Tournament(spec).jobs_for([])[1]
        cpu_nodes0 = [cpu_seconds(p.pid) for p in procs]
        cpu_bots0 = [cpu_seconds(p.pid) for p in self.set.bots]
        redis0 = self.redis_cpu()
        busy0, self0 = machine_busy(), time.process_time()
        t0 = time.perf_counter()
        if kind == "round-robin":
            Tournaments(broker).create(spec)  # enqueue every match, mark it running: as the CLI does
        else:  # the same jobs under a tournament id with no stored tournament: nothing to advance
            broker.enqueue(jobs)
        deadline = time.monotonic() + 60 + matches * 2.0
        while broker.pending_count(tid) > 0:
            for p in [*procs, *self.set.bots]:
                p.check()
            if time.monotonic() > deadline:
                raise RuntimeError(f"tournament {tid}: {broker.pending_count(tid)} jobs still pending")
            time.sleep(POLL_S)
        elapsed = time.perf_counter() - t0
        self.check_alone()
        cpu_nodes = [cpu_seconds(p.pid) - c for p, c in zip(procs, cpu_nodes0, strict=True)]
        cpu_bots = sum(cpu_seconds(p.pid) - c for p, c in zip(self.set.bots, cpu_bots0, strict=True))
        redis1 = self.redis_cpu()
        busy1, self1 = machine_busy(), time.process_time()
        other = None
        if busy0 is not None and busy1 is not None:
            own = sum(cpu_nodes) + cpu_bots + (self1 - self0)
            if redis0 is not None and redis1 is not None:
                own += redis1 - redis0
            other = round(max(0.0, (busy1 - busy0 - own) / elapsed), 2)

        a0 = time.perf_counter()  # what advancing the tournament did with the results, but the writes
        results = broker.results(tid)
        tour = Tournament(spec)
        tour.is_finished(results)
        tour.jobs_for(results)
        advance_ms = (time.perf_counter() - a0) * 1e3
        a1 = time.perf_counter()  # what it does now: the summaries, all of them in a process new to them
        readers = Tournaments(broker)
        advance_reads(readers, spec)
        a2 = time.perf_counter()
        advance_reads(readers, spec)  # then only those written since (none), the schedule rebuilt in memory
        advance_cold_ms, advance_warm_ms = (a2 - a1) * 1e3, (time.perf_counter() - a2) * 1e3

        live = broker.live_nodes()  # node id -> address
        by_address = {addr: nid for nid, addr in live.items()}
        per_node: dict[str, list[int]] = {}
        lat: list[int] = []
        strikes = fallbacks = 0
        busy_us = 0
        for r in results:
            n = [0, 0]
            for deal in r.record.latencies_us:
                for x in deal:
                    n[0] += 1
                    if x < 0:
                        fallbacks += 1
                    else:
                        lat.append(x)
                        busy_us += x
            strikes += len(r.record.strikes)
            mine = per_node.setdefault(r.node_id, [0, 0])
            mine[0] += 1
            mine[1] += n[0]
        decisions = sum(v[1] for v in per_node.values())
        uses = []
        for address, cpu in zip(self.set.addresses, cpu_nodes, strict=True):
            nid = by_address.get(address, "?")
            m, d = per_node.get(nid, [0, 0])
            uses.append(NodeUse(nid, address, m, d, round(cpu, 3), round(cpu / elapsed, 3),
                                round(cpu / d * 1e6, 1) if d else float("nan"),
                                round(cpu / m * 1e3, 2) if m else float("nan")))
        lat.sort()
        return ClusterRun(
            kind=kind, other_load=other, nodes=len(procs), matches=len(results), decisions=decisions,
            seconds=round(elapsed, 3),
            matches_per_s=round(len(results) / elapsed, 2), decisions_per_s=round(decisions / elapsed, 1),
            node_use=uses, bots_cpu_s=round(cpu_bots, 3), bots_cpu_share=round(cpu_bots / elapsed, 3),
            bots_cpu_us_per_decision=round(cpu_bots / decisions * 1e6, 1) if decisions else float("nan"),
            redis_cpu_us_per_decision=(round((redis1 - redis0) / decisions * 1e6, 1)
                                       if redis0 is not None and redis1 is not None and decisions else None),
            latency_p50_us=pct(lat, 0.5), latency_p99_us=pct(lat, 0.99), strikes=strikes,
            fallbacks=fallbacks,
            slots_busy=round(busy_us / 1e6 / (len(procs) * self.args.capacity * elapsed), 3),
            result_bytes=round(sum(len(r.to_json()) for r in results) / max(1, len(results))),
            advance_ms=round(advance_ms, 2), advance_cold_ms=round(advance_cold_ms, 2),
            advance_warm_ms=round(advance_warm_ms, 2),
        )

    def idle(self, seconds: float = 1.0) -> list[float]:
        """Each node's CPU share over ``seconds`` with no job queued."""
        before = [cpu_seconds(p.pid) for p in self.set.procs]
        t0 = time.perf_counter()
        time.sleep(seconds)
        elapsed = time.perf_counter() - t0
        procs = self.set.procs
        return [round((cpu_seconds(p.pid) - c) / elapsed, 4) for p, c in zip(procs, before, strict=True)]


def advance_reads(readers: Tournaments, spec: TournamentSpec) -> None:
    """What :meth:`Tournaments.advance` reads and works out after a match: the tournament's result
    summaries (those written since this process's last read) and its next jobs, the schedule rebuilt
    in memory. The spec is the bench's own, so that a batch (a tournament id the store does not hold:
    ``--jobs batch``) is timed the same way as a stored round-robin."""
    readers.tournament(spec).jobs_for(readers.summaries(spec.tournament_id))


def best_of(runs: list[ClusterRun]) -> ClusterRun:
    return max(runs, key=lambda r: r.matches_per_s)


def run_nodes(args: argparse.Namespace, tmp: Path) -> tuple[list[ClusterRun], list[ClusterRun], int | None]:
    """One node's runs, two nodes' runs, and the Redis database they used (None: embedded)."""
    cluster = Cluster(args, tmp)
    cluster.claim_database()
    try:
        cluster.add_node()
        cluster.start_bots()
        cluster.wait_bots()
        cluster.tournament(2 * args.capacity, "round-robin")  # warm-up
        idle = cluster.idle(args.idle_seconds)
        one = [replace(cluster.tournament(args.matches, args.jobs), idle_cpu_share=idle)
               for _ in range(args.repeats)]
        cluster.add_node()
        cluster.wait_bots()  # they learn of the new node from the first one's peers (heartbeat)
        cluster.tournament(4 * args.capacity, "round-robin")  # warm-up of the second node
        idle = cluster.idle(args.idle_seconds)
        two = [replace(cluster.tournament(args.matches, args.jobs), idle_cpu_share=idle)
               for _ in range(args.repeats)]
        return one, two, None if cluster.url is None else cluster.db
    finally:
        cluster.stop()
        cluster.release_database()



# --------------------------------------------------------------------------- part 3: the waiting queue
#: part 3's bots: a round-robin of these has more matches than the nodes can seat at once
WAIT_BOTS = tuple(f"w{i}" for i in range(1, 9))
#: bots registered and never started: their jobs wait (connected nowhere) for the whole run
GHOSTS = ("ghost-a", "ghost-b", "ghost-c", "ghost-d")
#: the queue worker's counters a node's /metrics gives, by short name
WORKER_COUNTERS = {"claimed": "belote_arena_queue_jobs_claimed_total",
                   "released": "belote_arena_queue_jobs_released_total",
                   "reclaimed": "belote_arena_queue_jobs_reclaimed_total",
                   "claim_calls": "belote_arena_queue_claim_calls_total"}


@dataclass
class WaitingRun:
    """Part 3: two nodes, a round-robin of eight bots with more matches than seats; jobs of absent bots."""

    nodes: int
    capacity: int
    bots: int
    #: seats each bot offers each node (a match takes two of each of its bots)
    seats_per_node: int
    matches: int
    seconds: float
    matches_per_s: float
    #: jobs claimed (started or given back at once) per result written
    claims_per_result: float
    #: the broker's claim calls per result (n/a: a node that does not count them)
    claim_calls_per_result: float | None
    released: int
    #: every command redis-server ran (INFO commandstats: the whole server) per result
    redis_commands_per_result: float
    redis_cpu_us_per_result: float
    #: each node's CPU share (1.0: a core) idle, and then with only jobs of absent bots queued
    idle_cpu_share: list[float]
    waiting_cpu_share: list[float]
    #: redis-server's commands per second, idle and then with only jobs of absent bots queued
    idle_redis_calls_per_s: float
    waiting_redis_calls_per_s: float
    waiting_jobs: int


def _scrape(http: str) -> dict[str, float]:
    """The queue worker's counters of a node (:data:`WORKER_COUNTERS`), from its /metrics."""
    import urllib.request

    with urllib.request.urlopen(f"http://{http}/metrics", timeout=10) as reply:
        text = reply.read().decode()
    found: dict[str, float] = {}
    for line in text.splitlines():
        name, _, value = line.partition(" ")
        for short, full in WORKER_COUNTERS.items():
            if name == full:
                found[short] = float(value)
    return found


def _redis_calls(cluster: Cluster) -> float:
    """Commands redis-server has run since it started (INFO commandstats, every command summed)."""
    r = cluster._redis()
    try:
        return float(sum(v["calls"] for v in r.info("commandstats").values()))
    finally:
        r.close()


def run_waiting(args: argparse.Namespace, tmp: Path) -> WaitingRun:
    """Part 3 (Redis only): two nodes, eight bots with two seats a node each (one match of a bot a node
    at once), a round-robin of them (56 matches, 2 deals each; 1 in --quick) with 4 match slots a
    node: more matches than seats, the arena's usual state. Then the nodes' CPU and Redis's calls with
    only jobs of two registered bots never connected queued (their absent timeout far away), against
    the same idle. ``--quick``: four of the bots (12 matches, still more than the two a node they can
    play at once) and half-second idle windows: 4 fewer processes to start on a 2-core machine."""
    playing = WAIT_BOTS[:4] if args.quick else WAIT_BOTS
    wait_args = argparse.Namespace(**{**vars(args), "capacity": 4})
    (tmp / "waiting").mkdir(exist_ok=True)
    cluster = Cluster(wait_args, tmp / "waiting")
    cluster.bot_names = (*playing, *GHOSTS)
    cluster.playing = playing
    cluster.concurrency = 2
    cluster.node_flags = ["--absent-timeout", "3600"]
    cluster.claim_database()
    deals = 1 if args.quick else 2
    try:
        cluster.add_node()
        cluster.add_node()
        cluster.start_bots()
        cluster.wait_bots()
        broker = cluster.broker
        assert broker is not None
        cluster.check_alone()
        spec = TournamentSpec.from_dict({
            "tournament_id": f"bench-wait-{secrets.token_hex(3)}", "format": "round-robin",
            "bots": list(playing), "ruleset": RULESET, "deals": deals})
        tid = spec.tournament_id
        counts0 = [_scrape(h) for h in cluster.http]
        calls0, redis0 = _redis_calls(cluster), cluster.redis_cpu()
        t0 = time.perf_counter()
        Tournaments(broker).create(spec)
        matches = broker.pending_count(tid)
        deadline = time.monotonic() + 120 + matches * 2.0
        while broker.pending_count(tid) > 0:
            for p in [*cluster.set.procs, *cluster.set.bots]:
                p.check()
            if time.monotonic() > deadline:
                raise RuntimeError(f"tournament {tid}: {broker.pending_count(tid)} jobs still pending")
            time.sleep(POLL_S)
        elapsed = time.perf_counter() - t0
        calls1, redis1 = _redis_calls(cluster), cluster.redis_cpu()
        counts1 = [_scrape(h) for h in cluster.http]
        results = len(broker.results(tid))

        def total(name: str) -> float | None:
            if any(name not in c for c in counts1):
                return None
            return sum(c1[name] - c0.get(name, 0.0) for c0, c1 in zip(counts0, counts1, strict=True))

        claimed, released = total("claimed") or 0.0, total("released") or 0.0
        calls = total("claim_calls")
        seconds = 0.5 if args.quick else 3.0

        def watch() -> tuple[list[float], float]:
            c0 = _redis_calls(cluster)
            share = cluster.idle(seconds)
            return share, (_redis_calls(cluster) - c0) / seconds

        idle, idle_calls = watch()
        ghosts = TournamentSpec.from_dict({
            "tournament_id": f"bench-ghosts-{secrets.token_hex(3)}", "format": "round-robin",
            "bots": list(GHOSTS), "ruleset": RULESET, "deals": 1, "rounds": 10 if args.quick else 50})
        Tournaments(broker).create(ghosts)
        waiting_jobs = broker.pending_count(ghosts.tournament_id)
        time.sleep(0.25 if args.quick else 0.5)  # the nodes hear of the jobs and look at them
        waiting, waiting_calls = watch()
        return WaitingRun(
            nodes=len(cluster.set.procs), capacity=wait_args.capacity, bots=len(playing),
            seats_per_node=cluster.concurrency, matches=results, seconds=round(elapsed, 3),
            matches_per_s=round(results / elapsed, 2),
            claims_per_result=round((claimed + released) / max(1, results), 3),
            claim_calls_per_result=None if calls is None else round(calls / max(1, results), 3),
            released=int(released),
            redis_commands_per_result=round((calls1 - calls0) / max(1, results), 1),
            redis_cpu_us_per_result=round(((redis1 or 0.0) - (redis0 or 0.0)) / max(1, results) * 1e6, 1),
            idle_cpu_share=idle, waiting_cpu_share=waiting, idle_redis_calls_per_s=round(idle_calls, 1),
            waiting_redis_calls_per_s=round(waiting_calls, 1), waiting_jobs=waiting_jobs,
        )
    finally:
        cluster.stop()
        cluster.release_database()

# --------------------------------------------------------------------------- main
@dataclass
class Results:
    python: str
    cpus: int
    backend: str
    seconds: float
    repeats: int
    deals: int
    capacity: int
    matches: int
    jobs: str
    quick: bool
    #: the nodes' Redis database (flushed at the end); None: the embedded broker, or no nodes run
    redis_db: int | None
    result_bytes: int
    #: MatchResult.to_json of that result (part of write_result's client CPU), us
    result_to_json_us: float
    redis_ping_us: float | None
    queue: list[QueueResult]
    one_node: ClusterRun | None
    two_nodes: ClusterRun | None
    one_node_runs: list[ClusterRun]
    two_node_runs: list[ClusterRun]
    measured_two_node_speedup: float | None
    #: matches/s: one node's ceiling on a machine of its own, and two nodes' on two machines
    projected_one_node_matches_per_s: float | None
    projected_two_node_matches_per_s: float | None
    projected_two_node_speedup: float | None
    queue_ms_per_job: float | None
    node_cpu_ms_per_match: float | None
    queue_share_of_match_cost: float | None
    #: the same with the client process's CPU per job (redis-server's added) instead of the wall time
    queue_cpu_share_of_match_cost: float | None
    #: reading a tournament's results and checking it, per result (the bench process, best run's tournament)
    advance_us_per_result: float | None
    #: the same from the summaries, read all at once (a process that starts), and read from the cursor
    advance_cold_us_per_result: float | None
    advance_warm_us_per_result: float | None
    #: part 1's node path through Redis, counted (None: the embedded broker)
    round_trips: RoundTrips | None
    #: part 3, the waiting queue (None: skipped, or the embedded broker)
    waiting: WaitingRun | None
    notes: list[str]


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--quick", action="store_true",
                   help="what CI runs (tests/test_benches.py), about 20 s: --seconds 0.2 --repeats 1 "
                        "--matches 8 --deals 2 --capacity 2 --redis-db auto, the nodes idle 0.3 s, part 3 "
                        "with four bots (options given win)")
    p.add_argument("--seconds", type=float, default=None, help="queue: length of one timed window (1)")
    p.add_argument("--repeats", type=int, default=None,
                   help="queue windows per measure and tournaments per node count, best kept (3)")
    p.add_argument("--matches", type=int, default=None, help="nodes: matches per measured run (100)")
    p.add_argument("--deals", type=int, default=None, help="coinche deals per match (4; --quick 2)")
    p.add_argument("--jobs", choices=("batch", "round-robin"), default="batch",
                   help="nodes: a round-robin's jobs alone (default), or the stored tournament, which "
                        "the nodes advance after every match")
    p.add_argument("--capacity", type=int, default=None,
                   help="matches a node plays at once; each bot offers twice as many seats per node (8)")
    p.add_argument("--poll", type=float, default=None, metavar="S",
                   help="nodes: run them through arena.node.run.serve_forever with the queue worker "
                        "polling every S seconds (default: `belote-arena serve`, which polls every 0.25 s)")
    p.add_argument("--redis-url", default=REDIS_URL, help=f"the Redis server ({REDIS_URL})")
    p.add_argument("--redis-db", default=None,
                   help=f"the database the nodes use: it must be empty; flushed after (6); auto: the first "
                        f"empty one of {AUTO_DBS[0]}-{AUTO_DBS[-1]}")
    p.add_argument("--skip-redis", action="store_true",
                   help="embedded broker only (the nodes share one sqlite file)")
    p.add_argument("--skip-nodes", action="store_true", help="no node runs (parts 2 and 3)")
    p.add_argument("--skip-waiting", action="store_true",
                   help="no part 3 (the waiting queue: two nodes, eight bots, more matches than seats)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    args = p.parse_args(argv)
    quick = args.quick
    for name, full, small in (("seconds", 1.0, 0.2), ("repeats", 3, 1), ("matches", 100, 8), ("deals", 4, 2),
                              ("capacity", 8, 2), ("redis_db", "6", "auto")):
        if getattr(args, name) is None:
            setattr(args, name, small if quick else full)
    #: each node's CPU with nothing to do is measured over this many seconds
    args.idle_seconds = 0.3 if quick else 1.0
    if args.redis_db == "auto":
        args.redis_db = None
    else:
        try:
            args.redis_db = int(args.redis_db)
        except ValueError:
            p.error(f"--redis-db must be 0-15 or auto, not {args.redis_db!r}")
        if not 0 <= args.redis_db <= 15:
            p.error("--redis-db must be 0-15 or auto")
    for name in ("repeats", "matches", "deals", "capacity"):
        if getattr(args, name) < 1:
            p.error(f"--{name} must be at least 1")
    if args.matches % 2:
        args.matches += 1  # a round-robin of two bots plays both seatings
    if args.seconds <= 0:
        p.error("--seconds must be positive")
    if args.poll is not None and args.poll <= 0:
        p.error("--poll must be positive")
    return args


def project(one: ClusterRun, two: ClusterRun) -> tuple[float, float, float] | None:
    """(one node's matches/s ceiling, two nodes', speedup): one core per node over its CPU per match."""
    c1 = one.node_use[0].cpu_ms_per_match
    cs = [u.cpu_ms_per_match for u in two.node_use]
    if not c1 or any(not c or c != c for c in [c1, *cs]):
        return None
    r1 = 1e3 / c1
    r2 = sum(1e3 / c for c in cs)
    return round(r1, 2), round(r2, 2), round(r2 / r1, 3)


def build(args: argparse.Namespace) -> Results:
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    result = sample_result(args.deals)
    notes: list[str] = []
    with tempfile.TemporaryDirectory(prefix="bench-cluster-") as d:
        tmp = Path(d)
        queue, ping, trips = run_queue(args, result, tmp)
        one_runs: list[ClusterRun] = []
        two_runs: list[ClusterRun] = []
        redis_db = None
        waiting = None
        if not args.skip_nodes:
            one_runs, two_runs, redis_db = run_nodes(args, tmp)
            if not args.skip_waiting and not args.skip_redis:
                waiting = run_waiting(args, tmp)
    one = best_of(one_runs) if one_runs else None
    two = best_of(two_runs) if two_runs else None
    measured = proj = None
    if one is not None and two is not None:
        measured = round(two.matches_per_s / one.matches_per_s, 3)
        proj = project(one, two)
    backend = "embedded" if args.skip_redis else "redis"
    single = next((q for q in queue if q.backend == backend and q.threads == 1), None)
    cpu_match = one.node_use[0].cpu_ms_per_match if one is not None else None
    share = (round(single.ms_per_job / cpu_match, 4)
             if single is not None and cpu_match and cpu_match == cpu_match else None)
    cpu_share = None
    if single is not None and cpu_match and cpu_match == cpu_match:
        cpu_share = round((single.client_cpu_us_per_job + (single.server_cpu_us_per_job or 0.0)) / 1e3
                          / cpu_match, 4)
    advance = cold = warm = None
    if one is not None and one.matches:
        runs = [*one_runs, *two_runs]
        advance = round(min(r.advance_ms / max(1, r.matches) for r in runs) * 1e3, 1)
        cold = round(min(r.advance_cold_ms / max(1, r.matches) for r in runs) * 1e3, 1)
        warm = round(min(r.advance_warm_ms / max(1, r.matches) for r in runs) * 1e3, 1)
    if cpus <= 2 and two is not None:
        notes.append(f"this machine has {cpus} CPUs: the two nodes, the two bots and the broker share them, "
                     "so the measured two-node rate is not what two machines give (see the projection)")
    busy = max([r.other_load or 0.0 for r in [*one_runs, *two_runs]]
               + [q.other_load or 0.0 for q in queue], default=0.0)
    if busy >= 0.2:
        notes.append(f"other processes used up to {busy:.2f} CPUs during the measures: the numbers are "
                     "disturbed; compare runs on a quiet machine")
    return Results(
        python=platform.python_version(), cpus=cpus, backend=backend, seconds=args.seconds,
        repeats=args.repeats, deals=args.deals, capacity=args.capacity, matches=args.matches,
        jobs=args.jobs, quick=args.quick, redis_db=redis_db,
        result_bytes=len(result.to_json()), result_to_json_us=round(to_json_us(result), 1),
        redis_ping_us=ping, queue=queue, one_node=one, two_nodes=two,
        one_node_runs=one_runs, two_node_runs=two_runs, measured_two_node_speedup=measured,
        projected_one_node_matches_per_s=proj[0] if proj else None,
        projected_two_node_matches_per_s=proj[1] if proj else None,
        projected_two_node_speedup=proj[2] if proj else None,
        queue_ms_per_job=single.ms_per_job if single else None, node_cpu_ms_per_match=cpu_match,
        queue_share_of_match_cost=share, queue_cpu_share_of_match_cost=cpu_share,
        advance_us_per_result=advance, advance_cold_us_per_result=cold, advance_warm_us_per_result=warm,
        round_trips=trips, waiting=waiting, notes=notes,
    )


def report(res: Results) -> None:
    print(f"cluster bench: Python {res.python}, {res.cpus} CPUs; queue: best of {res.repeats} x "
          f"{res.seconds:g} s windows; nodes: {res.backend} broker, {res.jobs} of {res.matches} matches "
          f"({res.deals} {RULESET} deals each), best of {res.repeats}, {res.capacity} match slots a node")
    if res.redis_db is not None:
        print(f"nodes' Redis database: {res.redis_db} (flushed at the end)")
    print(f"queue: one job = enqueue + claim + finish (its result written, {res.result_bytes:,} B of JSON, "
          f"and the job removed in one step; MatchResult.to_json alone takes {res.result_to_json_us:.0f} us)")
    if res.redis_ping_us is not None:
        print(f"{'':<2}reference: Redis PING round trip {res.redis_ping_us:.0f} us (redis-py, same machine)")
    for q in res.queue:
        extra = ""
        if q.call_us:
            extra = "  (" + ", ".join(f"{k} {v:.0f}" for k, v in q.call_us.items()) + " us)"
            if q.backend == "redis" and res.redis_ping_us:
                extra += f" = {q.ms_per_job * 1e3 / res.redis_ping_us:.1f} PINGs"
        who = "1 client " if q.threads == 1 else f"{q.threads} threads"
        print(f"{'':<2}{q.backend:<9} {who}  {q.jobs_per_s:>8,.0f} jobs/s  {q.ms_per_job:6.3f} ms/job "
              f"a client{extra}")
        server = ("" if q.server_cpu_us_per_job is None
                  else f", redis-server {q.server_cpu_us_per_job:,.0f} us")
        other = "" if q.other_load is None else f"; other processes {q.other_load:.2f} CPUs"
        print(f"{'':<4}CPU per job: this process {q.client_cpu_us_per_job:,.0f} us{server}; "
              f"windows {', '.join(f'{w:,.0f}' for w in q.windows)} jobs/s{other}")
    t = res.round_trips
    if t is not None:
        print(f"{'':<2}a node's path ({t.jobs} jobs enqueued 100 a stage, claimed {t.slots} at a time, "
              f"finished together): {t.round_trips_per_job:.2f} round trips, {t.redis_commands_per_job:.1f} "
              f"Redis commands and {t.redis_cpu_us_per_job:.0f} us of redis-server CPU a job; the same "
              f"scripts 10 jobs a call: {t.floor_round_trips_per_job:.2f} round trips, "
              f"{t.floor_redis_cpu_us_per_job:.0f} us a job")
    for run, label in ((res.one_node, "1 node "), (res.two_nodes, "2 nodes")):
        if run is None:
            continue
        print(f"{label} {run.matches_per_s:>7.2f} matches/s {run.decisions_per_s:>8,.0f} decisions/s  "
              f"({run.matches} matches, {run.decisions:,} decisions in {run.seconds:.2f} s; decision "
              f"round trip p50 {run.latency_p50_us:,.0f} us, p99 {run.latency_p99_us:,.0f} us; "
              f"{run.strikes} strikes, {run.fallbacks} fallbacks)")
        for u in run.node_use:
            print(f"{'':<8}node {u.node_id}: {u.matches} matches, {u.decisions:,} decisions, "
                  f"CPU {u.cpu_us_per_decision:,.0f} us/decision = {u.cpu_ms_per_match:.1f} ms/match, "
                  f"{u.cpu_share:.0%} of a core")
        redis = (f"; redis-server {run.redis_cpu_us_per_decision:.0f} us/decision (whole server)"
                 if run.redis_cpu_us_per_decision is not None else "")
        other = "" if run.other_load is None else f"; other processes {run.other_load:.2f} CPUs"
        print(f"{'':<8}bots: CPU {run.bots_cpu_us_per_decision:,.0f} us/decision, "
              f"{run.bots_cpu_share:.0%} of a core{redis}{other}")
        idle = ", ".join(f"{x:.1%}" for x in run.idle_cpu_share)
        print(f"{'':<8}match slots busy >= {run.slots_busy:.0%} (decision round trips / slots x time); "
              f"idle node CPU {idle} of a core; results {run.result_bytes:,} B")
        runs = res.one_node_runs if run is res.one_node else res.two_node_runs
        print(f"{'':<8}runs: {', '.join(f'{r.matches_per_s:.2f}' for r in runs)} matches/s")
    if res.advance_us_per_result is not None:
        per = res.advance_us_per_result
        print(f"advancing a tournament by reading all its results (as it was): {per:.0f} us a result here, "
              f"so {per:.0f} ms per advance at 1,000 results")
    if res.advance_cold_us_per_result is not None and res.advance_warm_us_per_result is not None:
        cold, warm = res.advance_cold_us_per_result, res.advance_warm_us_per_result
        print(f"from the result summaries: {cold:.0f} us a result for a process that reads them all "
              f"(once, at its first advance), then {warm:.0f} us a result for each later advance "
              f"(only the summaries written since are read; the schedule is rebuilt in memory)")
    for note in res.notes:
        print(f"note: {note}")
    if res.measured_two_node_speedup is not None:
        print(f"measured_two_node_speedup={res.measured_two_node_speedup:.3f} "
              f"(both nodes on this one {res.cpus}-CPU machine, with the bots and the broker)")
    if res.projected_two_node_speedup is not None:
        print(f"projection, each node alone on a machine of its own (one core: the GIL), the bots and the "
              f"broker elsewhere: 1 node {res.projected_one_node_matches_per_s:.1f} matches/s, "
              f"2 nodes {res.projected_two_node_matches_per_s:.1f} matches/s (1,000 ms over each node's "
              f"CPU ms per match, summed)")
        print(f"projected_two_node_speedup={res.projected_two_node_speedup:.3f}")
    if res.queue_share_of_match_cost is not None:
        cpu = ("" if res.queue_cpu_share_of_match_cost is None
               else f"; in CPU: {res.queue_cpu_share_of_match_cost:.4f}")
        print(f"queue ({res.backend}, 1 client, wall) {res.queue_ms_per_job:.3f} ms/job against node CPU "
              f"{res.node_cpu_ms_per_match:.1f} ms/match{cpu}")
        print(f"queue_share_of_match_cost={res.queue_share_of_match_cost:.4f}")
    if t is not None:
        print(f"round_trips_per_job={t.round_trips_per_job:.3f}")
        print(f"redis_cpu_vs_floor={t.redis_cpu_us_per_job / max(1e-9, t.floor_redis_cpu_us_per_job):.3f}")
    w = res.waiting
    if w is not None:
        calls = "n/a" if w.claim_calls_per_result is None else f"{w.claim_calls_per_result:.2f}"
        print(f"waiting queue: {w.nodes} nodes x {w.capacity} slots, round-robin of {w.bots} bots with "
              f"{w.seats_per_node} seats a node each: {w.matches} matches in {w.seconds:.2f} s "
              f"({w.matches_per_s:.2f} matches/s); {w.released} jobs given back; claim calls {calls} "
              "a result")
        print(f"{'':<2}redis-server: {w.redis_commands_per_result:.1f} commands and "
              f"{w.redis_cpu_us_per_result:,.0f} us CPU per result (whole server)")
        idle = ", ".join(f"{x:.1%}" for x in w.idle_cpu_share)
        wait = ", ".join(f"{x:.1%}" for x in w.waiting_cpu_share)
        print(f"{'':<2}with {w.waiting_jobs} jobs of bots connected nowhere queued: nodes {wait} of a core "
              f"(idle: {idle}); redis-server {w.waiting_redis_calls_per_s:,.0f} commands/s "
              f"(idle: {w.idle_redis_calls_per_s:,.0f})")
        print(f"redis_commands_per_result={w.redis_commands_per_result:.1f}")
        print(f"claims_per_result={w.claims_per_result:.3f}")


def node_main(plan_json: str) -> int:
    """A node as ``belote-arena serve`` runs it, but with ``--poll``'s worker poll interval."""
    import asyncio
    import logging

    from arena.node.run import NodeSettings, serve_forever
    from arena.referee.serve import install_uvloop

    plan = json.loads(plan_json)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    install_uvloop()
    data_dir = Path(plan["data_dir"])
    config = NodeSettings(
        listen=plan["listen"], data_dir=data_dir, capacity=plan["capacity"], poll_s=plan["poll_s"],
        drain_s=DRAIN_S, time=TimeControl(deadline=DEADLINE_S, time_bank=TIME_BANK_S, grace=GRACE_S),
    )
    broker = open_broker(plan["url"], data_dir)
    try:
        asyncio.run(serve_forever(broker, config))
    finally:
        broker.close()
    return 0


def _no_nan(value: Any) -> Any:
    """NaN (nothing measured) as null, so that the output is strict JSON."""
    if isinstance(value, float) and value != value:
        return None
    if isinstance(value, dict):
        return {k: _no_nan(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_no_nan(v) for v in value]
    return value


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == [NODE_FLAG]:
        return node_main(argv[1])
    args = parse_args(argv)
    # a SIGTERM unwinds like Ctrl-C, so that the finally blocks stop every child process
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if not args.skip_redis and importlib.util.find_spec("redis") is None:
        print("redis-py is not installed (pip install redis); use --skip-redis", file=sys.stderr)
        return 2
    from arena.queue import BrokerError

    try:
        res = build(args)
    except (BrokerError, RuntimeError) as e:
        print(f"bench/cluster.py: {e}", file=sys.stderr)
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
