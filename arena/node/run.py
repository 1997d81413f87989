"""Run a whole node: the referee's gRPC server, the queue worker, the heartbeat.

``belote-arena serve`` runs one of these (:func:`serve_forever`), the demo
and the tests too (:func:`running_node`). Every node is the same: the state
that must outlive a node (jobs, leases, results, ratings, tournaments, the bot
registry, who is alive) is in the broker (Redis, or sqlite on one machine).
Each node sends a heartbeat with the address bots should use for it, and tells
its bots the other live nodes so they connect to every node.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.datadir import private_dir
from arena.edge.tls import TlsError, server_credentials
from arena.node import DEFAULT_CAPACITY
from arena.node.bots import BrokerRegistryBackend, keep_current
from arena.node.history import KeptAnalyses
from arena.node.ladder import DEFAULT_SHARE, Capacity, LadderLoop
from arena.node.notices import NoticeWatcher
from arena.node.pauses import PausePolicy
from arena.node.rankings import MAX_LIMIT, Rankings
from arena.node.schedules import ScheduleLoop
from arena.node.seals import still_sealed
from arena.node.service import ClusterArenaServicer
from arena.node.versions import (
    TESTS_A_DAY,
    TESTS_PER_OWNER,
    Here,
    VersionTestLimits,
    VersionTests,
    forget_records,
    slots_for_tests,
    sweep_records,
)
from arena.node.worker import Worker, quiet, stop_on_cancel_notices, wake_on_jobs
from arena.queue import FORGOTTEN_NOTICE, LADDER_NOTICE, SCHEDULE_NOTICE, Broker, BrokerError
from arena.ratings.pools import TOURNAMENT_PREFIX
from arena.records import TimeControl
from arena.referee.access import AccessPolicy
from arena.referee.analyses import Analyses
from arena.referee.node import Limits, Node, NodeConfig, Unavailable
from arena.referee.registry import BotRegistry
from arena.referee.replay_views import RecordSource
from arena.referee.service import start_server, stop_server
from arena.referee.store import MatchStore
from arena.tournament import Tournaments
from arena.tournament.jobs import record_of_result
from arena.tournament.schedule import MIN_EVERY_S

log = logging.getLogger("arena.node")


def results_source(broker: Broker) -> Callable[[str], RecordSource | None]:
    """Where a node finds the records of matches played on other nodes: the queue's results."""
    def source(match_id: str) -> RecordSource | None:
        try:
            text = broker.get_result_json(match_id)
        except BrokerError as e:
            raise Unavailable(f"the tournament queue: {e}") from None
        return None if text is None else RecordSource(text, record_of_result)

    return source


@dataclass(frozen=True)
class NodeSettings:
    listen: str = "127.0.0.1:0"
    #: the address bots use for this node (default: the listen address)
    advertise: str = ""
    data_dir: Path | None = None
    time: TimeControl = field(default_factory=TimeControl)
    capacity: int = DEFAULT_CAPACITY
    lease_s: float = 30.0
    drain_s: float = 60.0
    #: the longest the queue worker sleeps with no wake-up (a safety net: jobs wake it)
    poll_s: float = 10.0
    heartbeat_s: float = 2.0
    replace_streams: bool = False
    node_id: str = ""
    #: what one bot, address or match may hold of the node
    limits: Limits = field(default_factory=Limits)
    #: who may call what
    access: AccessPolicy = field(default_factory=AccessPolicy)
    #: the secret this node derives its own matches' seeds from ("": a fresh one); a tournament's
    #: secret is fresh randomness of its own, drawn when it is created
    secret: str = ""
    #: seconds a tournament's bot may stay connected to no node before it forfeits its matches
    absent_timeout_s: float = 600.0
    #: how often the node reads whether its running matches' tournaments were cancelled: a match of
    #: a tournament cancelled through another node stops on the cancel's notice, within milliseconds,
    #: or within about this if the notice was missed
    cancel_check_s: float = 1.0
    #: the shortest period a tournament schedule may have (``tournament schedule --every``): a minute,
    #: so that a typo does not fill the queue with tournaments; tests run with seconds
    schedule_min_every_s: int = MIN_EVERY_S
    #: the share of the match slots the ladder may fill (``--ladder-share``; see arena.node.ladder)
    ladder_share: float = DEFAULT_SHARE
    #: a bot's version tests in 24 hours at most, and those under way at once among one owner's bots
    #: (``--version-tests-a-day``, ``--version-tests-per-owner``; see arena.node.versions)
    version_tests_a_day: int = TESTS_A_DAY
    version_tests_per_owner: int = TESTS_PER_OWNER
    #: when a bot whose ladder matches end in its forfeit is paused from the ladder (arena.node.pauses)
    ladder_pauses: PausePolicy = field(default_factory=PausePolicy)
    #: TLS for the gRPC port: the server's certificate (PEM, with any intermediates) and its key;
    #: both or neither (neither: plaintext, for loopback)
    tls_cert: Path | None = None
    tls_key: Path | None = None
    #: the share of one core the node spends analysing every match that ends on it (``serve
    #: --analysis-budget``, 0 < b <= 1); None: a match is analysed only when someone asks
    #: (arena.referee.analyses)
    analysis_budget: float | None = None
    #: False: this node analyses no match (``serve --no-analyses``): its API answers 404 and its
    #: pages ask for none, saying so; the CPU an analysis takes (seconds to minutes a match) is kept
    #: for the matches
    analyses: bool = True

    def __post_init__(self) -> None:
        if (self.tls_cert is None) != (self.tls_key is None):
            raise TlsError("TLS needs both a certificate and its key (--tls-cert and --tls-key)")


@dataclass
class RunningNode:
    node: Node
    worker: Worker
    #: this node's view of the broker's tournaments (the worker advances them)
    tournaments: Tournaments
    address: str
    port: int
    #: the leaderboards of the broker's pools, shared by the gRPC API and the web pages
    rankings: Rankings
    #: the node's reader of the broker's notices (another kind of notice: ``notices.on(kind, ...)``)
    notices: NoticeWatcher
    #: the node's schedule thread (the tournaments it made: ``schedules.made``)
    schedules: ScheduleLoop
    #: the node's ladder thread (the matches it enqueued: ``ladder.enqueued``)
    ladder: LadderLoop
    #: what must outlive the drain (the web pages: live views and /metrics while matches finish);
    #: closed once the running matches are done, before the gRPC server stops
    until_drained: contextlib.AsyncExitStack = field(default_factory=contextlib.AsyncExitStack)


def _promoted_of(registry: BotRegistry) -> Callable[[str], str | None]:
    """The version a bot plays as, from the registry's copy (memory): what a leaderboard row rates."""
    def promoted(name: str) -> str | None:
        entry = registry.by_name(name)
        return None if entry is None else entry.promoted_version

    return promoted


async def _heartbeat(node: Node, broker: Broker, address: str, every: float) -> None:
    while True:
        try:
            connected = node.connected_bots()
            await asyncio.to_thread(broker.heartbeat, node.node_id, address, every * 5, connected)
            peers = await asyncio.to_thread(broker.live_nodes)
            await node.set_peers([a for nid, a in peers.items() if nid != node.node_id])
        except BrokerError as e:  # every few seconds while it lasts: one line every 10 s
            quiet.warning("heartbeat", "heartbeat failed: %s", e)
        await asyncio.sleep(every)


def _analyses(node: Node, broker: Broker, config: NodeSettings) -> Analyses:
    """The node's analyses of finished matches: kept under the data folder, a table's made only once
    no table dealing its cards is sealed (arena.referee.analyses)."""
    folder = config.data_dir / "analyses" if config.data_dir is not None else None
    analyses = Analyses(node.replays.source, folder=folder, budget=config.analysis_budget)
    tournaments = Tournaments(broker)

    async def sealed(match_id: str) -> bool:
        return await asyncio.to_thread(still_sealed, broker, tournaments, match_id)

    analyses.sealed = sealed
    return analyses


@contextlib.asynccontextmanager
async def running_node(
    broker: Broker, config: NodeSettings, stop: asyncio.Event,
) -> AsyncIterator[RunningNode]:
    """Run a node until the block exits; then drain its matches and stop it.

    Raises :class:`~arena.edge.tls.TlsError` for a TLS certificate or key it cannot use.
    """
    credentials = None
    if config.tls_cert is not None and config.tls_key is not None:
        credentials = server_credentials(config.tls_cert, config.tls_key)
    registry = BotRegistry(BrokerRegistryBackend(broker), load=False)  # the watcher loads it, in a thread
    if config.data_dir is not None:
        private_dir(config.data_dir)
    store = MatchStore(config.data_dir / "matches" if config.data_dir else None)
    secret = config.secret or secrets.token_hex(32)
    node = Node(NodeConfig(data_dir=None, time=config.time, replace_streams=config.replace_streams,
                           node_id=config.node_id, access=config.access, secret=secret,
                           limits=config.limits),
                registry=registry, store=store)
    node.replays.sources.append(results_source(broker))
    node.analyses = _analyses(node, broker, config) if config.analyses else None
    #: the other nodes' changes (and this one's): the registry kept current, old tokens' streams cut
    watcher = NoticeWatcher(broker, name=f"notices-{node.node_id}")
    keep_current(watcher, registry, node, asyncio.get_running_loop())
    # the version tests the arena forgot: their records here go too (at the start and after a gap, any
    # this node missed)
    watcher.on(FORGOTTEN_NOTICE, lambda tids: _quietly(forget_records, store, tids))
    watcher.on_gap(lambda: _quietly(sweep_records, store, broker))
    await watcher.start()
    try:  # results of an older version: summarized once, so the bots' recent matches list them
        await asyncio.to_thread(broker.complete_summaries)
    except BrokerError as e:
        log.warning("could not summarize the results stored without a summary: %s", e,
                    extra={"event": "summaries_incomplete"})
    tournaments = Tournaments(broker)
    rankings = Rankings(broker, promoted=_promoted_of(registry))
    node.metrics.samplers.append(lambda: _sample_ratings(node, rankings))
    arena = ClusterArenaServicer(node, broker, tournaments, rankings)
    if node.analyses is not None:  # a bot's report: its matches' accuracy, a loss's worst decisions
        arena.kept_analyses = KeptAnalyses(node.analyses.kept)
    try:
        server, port = await start_server(node, config.listen, arena=arena, credentials=credentials)
    except BaseException:
        await watcher.stop()
        raise
    host = config.listen.rsplit(":", 1)[0]
    address = config.advertise or f"{'127.0.0.1' if host in ('0.0.0.0', '[::]', '') else host}:{port}"
    worker = Worker(node, broker, capacity=config.capacity, lease_s=config.lease_s,
                    poll_s=config.poll_s, drain_s=config.drain_s, tournaments=tournaments,
                    absent_timeout_s=config.absent_timeout_s, cancel_check_s=config.cancel_check_s)
    arena.on_cancel = worker.stop_tournament  # the node that took a cancel stops its matches at once,
    schedule_loop = ScheduleLoop(broker, tournaments, name=f"schedules-{node.node_id}")
    arena.min_every_s = config.schedule_min_every_s
    arena.on_schedule = schedule_loop.wake  # a schedule made or cancelled here: read again at once
    watcher.on(SCHEDULE_NOTICE, schedule_loop.wake)  # ...and through another node, on its notice
    watcher.on_gap(schedule_loop.wake)
    schedule_loop.start()
    def capacity() -> Capacity:  # read on the loop (the ladder thread calls it through on_loop)
        return Capacity(node.free_seats(), worker.capacity, frozenset(worker.running), node.ladder_bots(),
                        tuple(Here(entry, on) for entry, on in node.versioned_here()))

    limits = VersionTestLimits(at_once=max(1, slots_for_tests(config.capacity, config.ladder_share)),
                               per_owner=config.version_tests_per_owner, a_day=config.version_tests_a_day)
    tests = VersionTests(broker, tournaments, registry.update_entry, limits=limits,
                         counted=lambda kind: node.metrics.version_tests.labels(kind).inc())
    node.metrics.version_tests_running.set_function(lambda: tests.running)
    loop = asyncio.get_running_loop()

    def tell(bot: str, kind: str, text: str, until: int) -> None:  # from the ladder thread: on the loop
        loop.call_soon_threadsafe(node.tell, bot, kind, text, until)

    ladder_loop = LadderLoop(broker, LadderLoop.on_loop(asyncio.get_running_loop(), capacity),
                             node_id=node.node_id, share=config.ladder_share, name=f"ladder-{node.node_id}",
                             counted=lambda pool, n: node.metrics.ladder_matches.labels(pool).inc(n),
                             tests=tests, pauses=config.ladder_pauses, tell=tell)
    worker.test_room = ladder_loop.test_room  # the version tests' matches only within their room
    arena.version_reasons = tests.reasons  # why a candidate waits, on its versions page
    arena.on_ladder = ladder_loop.wake  # a ladder changed through this node: look again at once
    watcher.on(LADDER_NOTICE, ladder_loop.wake)  # ...and through another node, on its notice
    watcher.on_gap(ladder_loop.wake)
    node.seat_hooks.append(ladder_loop.wake)  # a bot connected, a match ended: seats to pair
    worker.done_hooks.append(ladder_loop.wake)  # a match's result written: a ladder slot may be free
    worker.before_write = ladder_loop.before_write  # a ladder result: its bots' forfeits counted, or refused
    ladder_loop.start()
    stop_on_cancel_notices(watcher, worker, asyncio.get_running_loop())  # the others on its notice
    wake_on_jobs(watcher, worker, asyncio.get_running_loop())  # jobs its bots can play came to wait
    worker_task = asyncio.create_task(worker.run(stop), name="worker")
    beat = asyncio.create_task(_heartbeat(node, broker, address, config.heartbeat_s), name="heartbeat")
    fields = {"event": "node_start", "node": node.node_id, "address": address}
    log.info("node %s serving on %s (advertised %s, %s), %d match slots", node.node_id, config.listen,
             address, "TLS" if credentials else "plaintext", config.capacity, extra=fields)
    running = RunningNode(node, worker, tournaments, address, port, rankings, watcher, schedule_loop,
                          ladder_loop)
    try:
        yield running
    finally:
        await node.begin_drain()  # health says NOT_SERVING while the matches drain
        await asyncio.to_thread(schedule_loop.stop)
        await asyncio.to_thread(ladder_loop.stop)
        stop.set()
        with contextlib.suppress(Exception):
            await worker_task  # drains: each running match finishes or is released
        try:
            await running.until_drained.aclose()
        except Exception:
            log.exception("node %s: stopping what ran beside it failed", node.node_id)
        beat.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await beat
        await stop_server(server, node, grace=1.0)
        await watcher.stop()
        # every match played to its end here: the queue's jobs and the matches an admin started
        # (``match start``), which the worker never sees (its count alone said 0 after one of those)
        done, written = node.matches_completed, worker.completed
        log.info("node %s stopped (%d match%s completed here; %d result%s written to the queue)",
                 node.node_id, done, "" if done == 1 else "es", written, "" if written == 1 else "s",
                 extra={**fields, "event": "node_stop", "matches": done, "results": written})


def _quietly(forget: Callable[..., int], *args: Any) -> None:
    """Delete records of forgotten version tests (in the notice reader's thread); a failure is logged."""
    try:
        gone = forget(*args)
    except (BrokerError, OSError) as e:
        log.warning("could not delete the records of forgotten version tests: %s", e)
        return
    if gone:
        log.info("%d records of forgotten version tests deleted here", gone,
                 extra={"event": "test_records_deleted", "records": gone})


def _sample_ratings(node: Node, rankings: Rankings) -> None:
    """The Bradley-Terry ratings of the preset pools (not the tournaments' own: bounded labels)."""
    values: dict[tuple[str, str], float] = {}
    for pool in rankings.pools():
        if pool.startswith(TOURNAMENT_PREFIX):
            continue
        board = rankings.leaderboard(pool, "bt", 0, MAX_LIMIT)
        for entry in board.entries:
            values[(pool, entry.bot)] = entry.rating
    node.metrics.ratings.values = values


#: something that runs beside a node for its whole life (the web pages), given the running node
Beside = Callable[[RunningNode], contextlib.AbstractAsyncContextManager[object]]


async def serve_forever(broker: Broker, config: NodeSettings, beside: Beside | None = None) -> None:
    """``belote-arena serve``: run a node until SIGINT or SIGTERM, then drain it.

    ``beside``, if given, runs for the node's life on the same loop (the web server of
    ``--http``; this layer knows nothing of it).
    """
    import signal

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    async with running_node(broker, config, stop) as running:
        if beside is not None:
            # it stops after the drain, so pages, live views and /metrics watch the last matches end
            await running.until_drained.enter_async_context(beside(running))
        tls = " with TLS" if config.tls_cert is not None else ""
        print(f"belote-arena node {running.node.node_id} listening on port {running.port}{tls} "
              f"(bots connect to {running.address})", flush=True)
        await stop.wait()
        log.info("stopping: draining %d running matches", len(running.worker.running))
