"""A real node with its web site, bots over real gRPC and a finished round-robin, in a thread.

The node runs on its own event loop in a background thread (as ``belote-arena
serve --http`` runs it), so a test may talk to it over real HTTP, with a
blocking client or a browser, from the main thread.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any

from belote_bot import Action, Bot, HeuristicBot, Observation, RandomBot, run_async

from arena.engine import Ruleset
from arena.node.ladder import Ladders
from arena.node.run import NodeSettings, RunningNode, running_node
from arena.queue import Broker, EmbeddedBroker
from arena.ratings import ladder_id
from arena.referee.access import AccessPolicy
from arena.referee.node import Limits
from arena.referee.registry import digest, new_token
from arena.tournament import TournamentSpec
from arena.tournament.schedule import Schedule, Schedules
from arena.web import WebConfig, WebServer, web_for
from tests.processes import OWNER

XSS = "<img src=x onerror=alert(1)>"
TOURNAMENT = "web-round-robin"
ADMIN = new_token("adm")
#: how long a site's build process is kept without a build: the whole life of the site
KEEP_BUILDS_S = 24 * 3600.0


class SlowBot(RandomBot):
    """A random bot that takes a moment over each decision, so a match lasts long enough to watch."""

    async def act(self, obs: Observation) -> Action:  # type: ignore[override]
        await asyncio.sleep(0.02)
        return super().act(obs)


def bots() -> dict[str, Bot]:
    xss = RandomBot(seed=2)
    xss.version = XSS
    return {"alpha": HeuristicBot(seed=1), "beta": HeuristicBot(seed=2), "gamma": RandomBot(seed=1),
            "xss": xss, "slow-a": SlowBot(seed=3), "slow-b": SlowBot(seed=4)}


def round_robin() -> TournamentSpec:
    """The site's tournament: four of :func:`bots`, two deals a match, a given seed (so unrated)."""
    return TournamentSpec(tournament_id=TOURNAMENT, format="round-robin",
                          bots=("alpha", "beta", "gamma", "xss"), ruleset=Ruleset.from_spec("classic"),
                          deals=2, rounds=1, seed="web/1", unrated_reason="a test's seed")


#: how long a site may take to start, its tournaments played (a hang's bound: the demo's took 35 s on a
#: quiet two-core machine, more than 120 beside two CPU-bound processes and the rest of the suite)
START_S = 600.0


class Site:
    """The running node and its site; :meth:`close` stops them."""

    def __init__(self, data_dir: Path, *, private_reads: bool = False, tournament: bool = True,
                 web: WebConfig | None = None, limits: Limits | None = None,
                 players: dict[str, Bot] | None = None, tournaments: Sequence[TournamentSpec] | None = None,
                 broker: Callable[[], Broker] | None = None, analyses: bool = True) -> None:
        """The node with ``players`` connected (by default :func:`bots`; ``{}``: none registered), once
        ``tournaments`` are over (by default the round-robin :data:`TOURNAMENT`, with ``tournament``);
        its queue ``broker()`` (closed with the site), by default an embedded one in ``data_dir``;
        ``analyses=False``: a node that analyses no match (``serve --no-analyses``), for the sites
        whose tests read no analysis: a replay page asks for its match's, which costs 10 to 20 s of
        CPU a two-deal match, and a test's run is mostly CPU-bound."""
        self.data_dir = data_dir
        self.private_reads = private_reads
        self.players = bots() if players is None else players
        self.specs = list(tournaments) if tournaments is not None else [round_robin()] if tournament else []
        self.web_config = web
        self.open_broker = broker or (lambda: EmbeddedBroker(data_dir / "queue.sqlite3"))
        self.limits = limits or Limits()
        self.analyses = analyses
        self.ready = threading.Event()
        self.failed: BaseException | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.running: RunningNode | None = None
        self.web: WebServer | None = None
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=self._thread_main, name="web-site", daemon=True)
        self._thread.start()
        if not self.ready.wait(START_S):
            self.close()
            raise RuntimeError(f"the site did not start within {START_S:.0f} s")
        if self.failed is not None:
            raise RuntimeError(f"the site failed to start: {self.failed!r}")

    @property
    def url(self) -> str:
        assert self.web is not None
        return self.web.url

    def _thread_main(self) -> None:
        try:
            asyncio.run(self._main())
        except BaseException as e:  # reported to the test through ready
            self.failed = e
            self.ready.set()

    async def _main(self) -> None:
        self.loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        broker = self.open_broker()
        access = AccessPolicy(admin_sha256=digest(ADMIN), private_reads=self.private_reads)
        settings = NodeSettings(poll_s=0.05, heartbeat_s=0.2, capacity=8, drain_s=1.0, access=access,
                                limits=self.limits, analyses=self.analyses)
        stop = asyncio.Event()
        tasks = []
        try:
            async with (running_node(broker, settings, stop) as running,
                        web_for(running, "127.0.0.1:0", self.web_config) as web):
                self.running, self.web = running, web
                if not os.environ.get(OWNER, "").endswith(":call"):  # one a test makes ends in it
                    tasks += self._keep_builds(running)
                for name, bot in self.players.items():
                    entry, token = running.node.register_bot(name)
                    tasks.append(asyncio.create_task(run_async(
                        bot, running.address, token, 16, name=name, stop=stop, all_nodes=False,
                        verbose=False)))
                    await asyncio.wait_for(running.node.link_for(entry).connected_event.wait(), 10)
                for spec in self.specs:
                    running.tournaments.create(spec)
                for spec in self.specs:
                    while running.tournaments.progress(spec.tournament_id).state.is_open:
                        await asyncio.sleep(0.05)
                self.ready.set()
                await self._stop.wait()
        finally:
            stop.set()
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            broker.close()

    @staticmethod
    def _keep_builds(running: RunningNode) -> list[asyncio.Task[Any]]:
        """Start the node's build processes now, kept until the site closes.

        A process a test starts may not outlive it (tests/processes.py): a build process started
        lazily by a test's first replay or analysis read, on a site a module shares, outlived that
        test and failed it; and one stopped when idle was started again, cold, by a later test.
        Started here, by a trivial build, each carries the token of whoever made the site (a
        module's setup), and lives until the site closes. A site a test makes while it runs needs
        none of this (its processes end with it, in the test): its processes start as they are
        needed (0.4 s of CPU saved when none is)."""
        builders = [running.node.replays.builder]
        if running.node.analyses is not None:
            builders.append(running.node.analyses.builder)
        tasks = []
        for builder in builders:
            builder.idle_s = KEEP_BUILDS_S
            # the process is made as the task starts (a loop turn, long before the site is ready)
            tasks.append(asyncio.create_task(builder.run(os.getpid)))
        return tasks

    def call(self, coro: Coroutine[Any, Any, Any], timeout: float = 60.0) -> Any:
        assert self.loop is not None
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def blocking(self, call: Callable[..., Any], *args: Any) -> Any:
        """``call(*args)``, a blocking broker call, in a thread of the node's loop (as the node makes
        them)."""
        return self.call(asyncio.to_thread(call, *args))

    def start_ladder(self, pool: str, bots: Sequence[str], deals: int = 1) -> None:
        """Start ``pool``'s ladder (``deals`` a match) with ``bots`` opted in, as ``ladder start`` and
        ``ladder add`` do; the node's ladder thread is woken, as the RPCs wake it."""
        assert self.running is not None
        ladders = Ladders(self.running.worker.broker)
        self.blocking(ladders.start, pool, deals)
        for bot in bots:
            self.blocking(ladders.add, pool, bot)
        self.running.ladder.wake()

    def stop_ladder(self, pool: str) -> None:
        """Stop ``pool``'s ladder, and wait until none of its matches is queued or played."""
        assert self.running is not None
        broker = self.running.worker.broker
        self.blocking(Ladders(broker).stop, pool)
        deadline = time.monotonic() + 60
        quiet = 0  # a pass of the ladder loop under way at the stop may still enqueue its picks: none
        while quiet < 5:  # may be left for a whole second
            quiet = 0 if self.blocking(broker.pending_count, ladder_id(pool)) else quiet + 1
            assert time.monotonic() < deadline, f"the ladder of {pool} still had matches after 60 s"
            time.sleep(0.2)

    def add_schedule(self, schedule: Schedule) -> None:
        assert self.running is not None
        self.blocking(Schedules(self.running.worker.broker).create, schedule)

    def start_match(self, team0: str = "slow-a", team1: str = "slow-b", deals: int = 1,
                    ruleset: str = "classic", seed: str | None = None) -> str:
        """Start a match on the node (the slow bots by default: about a second a deal)."""
        assert self.running is not None
        node = self.running.node

        async def start() -> str:
            return node.start_match(team0, team1, ruleset, deals=deals, seed=seed)

        match_id: str = self.call(start())
        return match_id

    def wait_match(self, match_id: str) -> None:
        assert self.running is not None
        self.call(self.running.node.wait(match_id))

    def close(self) -> None:
        if self.loop is not None and self._stop is not None:
            self.loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(30)


def get(site: Site, path: str, token: str = "") -> tuple[int, Any]:
    """GET ``path`` of the site: (status, parsed JSON body)."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    request = urllib.request.Request(site.url + path, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as reply:
            return reply.status, json.loads(reply.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def events(site: Site, match_id: str, timeout: float = 60.0) -> list[tuple[str, Any, float]]:
    """Read a match's server-sent events to their end: (event name, data, arrival time)."""
    out: list[tuple[str, Any, float]] = []
    with urllib.request.urlopen(f"{site.url}/api/v1/matches/{match_id}/events", timeout=timeout) as reply:
        assert reply.headers["Content-Type"].startswith("text/event-stream")
        name, data = "message", ""
        for raw in reply:
            line = raw.decode().rstrip("\n")
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: "):
                data = line[6:]
            elif line == "":
                out.append((name, json.loads(data), time.monotonic()))
                if name == "end":
                    break
                name, data = "message", ""
    return out


def wait_standings(site: Site, pool: str, bots: int, timeout: float = 90.0) -> dict[str, Any]:
    """The ladder of ``pool`` once its standings rank ``bots`` bots, each with two games or more."""
    deadline = time.monotonic() + timeout
    while True:
        _, ladder = get(site, f"/api/v1/ladders/{pool}")
        entries = ladder["standings"]["entries"]
        if len(entries) == bots and all(e["games"] >= 2 for e in entries):
            return dict(ladder)
        assert time.monotonic() < deadline, f"the ladder of {pool} ranked {entries} after {timeout} s"
        time.sleep(0.2)


def nightly(schedule_id: str, bots: Sequence[str], seed: str = "") -> Schedule:
    """A schedule of a daily round-robin whose first occurrence is about two hours ahead."""
    at = time.gmtime(time.time() + 2 * 3600)
    return Schedule.make(schedule_id, 86_400, f"{at.tm_hour:02d}:{at.tm_min:02d}", list(bots),
                         {"format": "round-robin", "ruleset": "coinche", "deals": 2}, seed=seed)


class HeldAt(Bot):
    """Plays at once, except at table ``held``, where it waits until ``gate`` is set."""

    act_inline = True

    def __init__(self, held: str, gate: threading.Event, seed: int) -> None:
        self.held, self.gate = held, gate
        self.inner = RandomBot(seed)

    async def act(self, obs: Observation) -> Any:
        while obs.match_id == self.held and not self.gate.is_set():
            await asyncio.sleep(0.02)
        return self.inner.act(obs)


def held_field_duplicate(data_dir: Path, tid: str) -> tuple[Site, threading.Event, str, str]:
    """A node playing ``tid``, a field-duplicate round-robin of four random bots (coinche, 2 deals),
    whose first quartet's table 1 waits until the gate is set: (the site, the gate, table 0, table 1),
    tables 0 and 1 dealing the same cards."""
    t0, t1 = f"{tid}-r1-0-t0", f"{tid}-r1-0-t1"
    gate = threading.Event()
    site = Site(data_dir, players={n: HeldAt(t1, gate, i) for i, n in enumerate("abcd")}, tournament=False)
    assert site.running is not None
    tournaments = site.running.tournaments

    async def create() -> None:
        tournaments.create(TournamentSpec(tournament_id=tid, format="round-robin", bots=tuple("abcd"),
                                          ruleset=Ruleset.from_spec("coinche"), deals=2, duplicate="field"))

    try:
        site.call(create())
    except BaseException:
        site.close()
        raise
    return site, gate, t0, t1
