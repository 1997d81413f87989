"""Every Prometheus metric of a node, defined once (docs: docs/how-to/operate.md, docs/reference/metrics.md).

One :class:`NodeMetrics` per node, on its own ``CollectorRegistry`` (the tests
run several nodes in one process); the node's HTTP server exposes it at
``/metrics``. No metric has a ``node`` label: Prometheus's ``instance`` label
tells the nodes apart. Labels stay bounded: bot names, pools, result reasons,
strike reasons and gRPC methods, never a match id, a token or a card.

What a bot or a user chooses is bounded by the metric, never by trust: a
``bot`` label is the bot's name without its version (a bot may connect a new
version label for every match: ``delta@1``, ``delta@2`` would each be a
series), and names the first :data:`MAX_BOT_LABELS` bots a node sees (names
are cheap where registration is open); the others count together under
:data:`OTHER_BOTS`, so every sum stays right (:class:`BotLabels`). The ratings
are the preset pools' top entries (their number fixed by the sampler), the
ladder's pools the presets, and the gRPC methods those the server registered
(a call to another is not counted).

What the referee counts on its hot path (every decision, every gRPC call) is
kept in plain Python numbers, not in prometheus_client's locked values: a node
runs all of it on one event loop, and the scrape (on the same loop) turns them
into metric families (:class:`DecisionStats`, :class:`RpcStats`). The rest
changes a few times a match and uses prometheus_client's own objects; what a
scrape can read from the node (bots connected, matches running, free slots) is
read then (``Gauge.set_function``), and what needs the broker (jobs waiting,
live nodes, ratings) is sampled before each scrape (:meth:`NodeMetrics.refresh`).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Iterator

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    GCCollector,
    PlatformCollector,
    ProcessCollector,
    disable_created_metrics,
    generate_latest,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector

from arena.records import TimeControl

__all__ = ["CONTENT_TYPE", "DecisionStats", "NodeMetrics", "RpcStats", "StallStats", "decision_buckets"]

# no belote_arena_*_created series beside each counter: a node's start time is process_start_time_seconds
disable_created_metrics()  # type: ignore[no-untyped-call]  # untyped in prometheus_client

PREFIX = "belote_arena_"
#: the content type of the text exposition format
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
#: the decision latency buckets below the deadline (seconds)
FAST_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 0.75)
#: go-grpc-prometheus's (Prometheus's default) buckets for grpc_server_handling_seconds
RPC_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0)


#: the most bots a metric's ``bot`` label names one by one; the others are counted under OTHER_BOTS
MAX_BOT_LABELS = 1000
#: the ``bot`` label of the bots past MAX_BOT_LABELS (no bot's name: they start with a letter or digit)
OTHER_BOTS = "_other"
#: joins a bot's name and a version in the name of a seat (arena.referee.versions.SEP); never in a name
VERSION_SEP = "@"


class BotLabels:
    """The ``bot`` label of a seat's name: the bot's name without its version, for the first ``limit``
    bots seen, :data:`OTHER_BOTS` for those after. One for all of a node's metrics, so a bot is named
    in all or in none. Its memory is ``limit`` names."""

    __slots__ = ("_named", "limit")

    def __init__(self, limit: int = MAX_BOT_LABELS) -> None:
        self.limit = limit
        self._named: set[str] = set()

    def __call__(self, seat: str) -> str:
        name = seat.partition(VERSION_SEP)[0]
        named = self._named
        if name in named:
            return name
        if len(named) < self.limit:
            named.add(name)
            return name
        return OTHER_BOTS


def decision_buckets(time: TimeControl) -> tuple[float, ...]:
    """Buckets placed around what a bot may use: 1 ms ... the deadline, 1.5x, 2x, deadline + bank."""
    d = time.deadline
    return tuple(sorted({*FAST_BUCKETS, d, 1.5 * d, 2 * d, d + time.time_bank}))


class _Histogram:
    """A histogram in plain numbers (one event loop adds to it; no lock)."""

    __slots__ = ("bounds", "count", "counts", "sum")

    def __init__(self, bounds: Iterable[float]) -> None:
        self.bounds = list(bounds)
        self.counts = [0] * (len(self.bounds) + 1)  # the last: above every bound
        self.sum = 0.0
        self.count = 0

    def observe(self, value: float) -> None:
        self.counts[bisect.bisect_left(self.bounds, value)] += 1
        self.sum += value
        self.count += 1

    def buckets(self) -> list[tuple[str, float]]:
        out: list[tuple[str, float]] = []
        acc = 0
        for bound, n in zip(self.bounds, self.counts, strict=False):
            acc += n
            out.append((_float(bound), acc))
        out.append(("+Inf", self.count))
        return out


def _float(value: float) -> str:
    return repr(float(value))


class DecisionStats(Collector):
    """``belote_arena_decisions_total{bot}`` and ``belote_arena_decision_seconds``.

    Every decision asked of a bot's seat counts: those played by fallback too,
    and the one that forfeits a match (a last strike, or a seat away past the
    grace), which the record does not play. So the count is the records'
    latencies plus one per match forfeited on a decision, and a bot's strikes
    never outnumber its decisions. The histogram holds the round trips the
    referee measured, the answers it got (a late or absent one is a strike, or
    a fallback, and counts there).
    """

    def __init__(self, time: TimeControl, labels: BotLabels | None = None) -> None:
        self.by_bot: dict[str, int] = {}
        self.seconds = _Histogram(decision_buckets(time))
        self.labels = labels or BotLabels()
        #: each seat's label, as worked out (a dict lookup a decision: the hot path), for as many
        #: seats as four times the labels at most (past those, worked out each time)
        self._label_of: dict[str, str] = {}

    def decision(self, bot: str, latency_us: int) -> None:
        """One decision of ``bot``'s seat (a seat's name: ``name@version`` counts as ``name``);
        ``latency_us`` its round trip (negative: not answered)."""
        label = self._label_of.get(bot)
        if label is None:
            label = self.labels(bot)
            if len(self._label_of) < 4 * self.labels.limit:
                self._label_of[bot] = label
        by_bot = self.by_bot
        by_bot[label] = by_bot.get(label, 0) + 1
        if latency_us >= 0:
            self.seconds.observe(latency_us * 1e-6)

    def collect(self) -> Iterator[Metric]:
        decisions = CounterMetricFamily(PREFIX + "decisions", "Decisions played, by bot (fallbacks too)",
                                        labels=["bot"])
        for bot, n in sorted(self.by_bot.items()):
            decisions.add_metric([bot], n)
        yield decisions
        h = self.seconds
        seconds = HistogramMetricFamily(
            PREFIX + "decision_seconds", "Round trip of an answered action request, as the referee times it",
            unit="seconds")
        seconds.add_metric([], h.buckets(), h.sum)
        yield seconds


class RpcStats(Collector):
    """The gRPC server's calls, with go-grpc-prometheus's names and labels.

    :class:`arena.edge.rpc_metrics.RpcMetrics` (a server interceptor) adds
    to it; the bot streams' messages are counted by their own loops (``streams``:
    a callable giving (received, sent) per (type, service, method) at scrape).
    """

    LABELS = ("grpc_type", "grpc_service", "grpc_method")

    def __init__(self) -> None:
        self.started: dict[tuple[str, str, str], int] = {}
        self.handled: dict[tuple[str, str, str, str], int] = {}
        self.received: dict[tuple[str, str, str], int] = {}
        self.sent: dict[tuple[str, str, str], int] = {}
        self.seconds: dict[tuple[str, str, str], _Histogram] = {}
        #: messages counted elsewhere (the bot streams), added at scrape
        self.streams: Callable[[], dict[tuple[str, str, str], tuple[int, int]]] | None = None

    def start(self, key: tuple[str, str, str]) -> None:
        self.started[key] = self.started.get(key, 0) + 1

    def finish(self, key: tuple[str, str, str], code: str, seconds: float) -> None:
        handled = (*key, code)
        self.handled[handled] = self.handled.get(handled, 0) + 1
        h = self.seconds.get(key)
        if h is None:
            h = self.seconds[key] = _Histogram(RPC_BUCKETS)
        h.observe(seconds)

    def collect(self) -> Iterator[Metric]:
        started = CounterMetricFamily("grpc_server_started", "RPCs started on the server",
                                      labels=self.LABELS)
        for key, n in sorted(self.started.items()):
            started.add_metric(key, n)
        yield started
        handled = CounterMetricFamily("grpc_server_handled", "RPCs completed on the server, by status code",
                                      labels=[*self.LABELS, "grpc_code"])
        for hkey, n in sorted(self.handled.items()):
            handled.add_metric(hkey, n)
        yield handled
        received, sent = dict(self.received), dict(self.sent)
        if self.streams is not None:
            for key, (r, s) in self.streams().items():
                received[key] = received.get(key, 0) + r
                sent[key] = sent.get(key, 0) + s
        for name, what, counts in (("grpc_server_msg_received", "received", received),
                                   ("grpc_server_msg_sent", "sent", sent)):
            family = CounterMetricFamily(name, f"Stream messages {what} on the server", labels=self.LABELS)
            for key, n in sorted(counts.items()):
                family.add_metric(key, n)
            yield family
        seconds = HistogramMetricFamily(
            "grpc_server_handling_seconds", "Time from the start of an RPC to its end on the server",
            labels=self.LABELS)
        for key, h in sorted(self.seconds.items()):
            seconds.add_metric(key, h.buckets(), h.sum)
        yield seconds


#: the lengths of the node's stalls (seconds): a GC pause, a burst of work, a stopped process
STALL_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


class StallStats(Collector):
    """``belote_arena_loop_stall_seconds`` and ``belote_arena_deadline_extensions_total``.

    A stall is a time the node's event loop could not run while bots' requests were pending, as its
    beats saw it (:mod:`arena.referee.deadlines`); no bot is charged for it: each pending limit it
    would have ended is extended by it (an extension), so the bot's answer is still read.
    """

    def __init__(self) -> None:
        self.seconds = _Histogram(STALL_BUCKETS)
        #: pending limits pushed back by the node's stalls
        self.extended = 0

    def stall(self, seconds: float) -> None:
        self.seconds.observe(seconds)

    def collect(self) -> Iterator[Metric]:
        h = self.seconds
        seconds = HistogramMetricFamily(
            PREFIX + "loop_stall_seconds", "Stalls of the node's event loop while bots' requests were "
            "pending (not counted against any bot)", unit="seconds")
        seconds.add_metric([], h.buckets(), h.sum)
        yield seconds
        yield CounterMetricFamily(PREFIX + "deadline_extensions", "Pending requests' time limits pushed "
                                  "back by the node's own stalls", value=self.extended)


class Ratings(Collector):
    """``belote_arena_rating{pool,bot}``: the Bradley-Terry rating of each bot in each preset pool, as
    last sampled (:meth:`NodeMetrics.refresh`)."""

    def __init__(self) -> None:
        self.values: dict[tuple[str, str], float] = {}

    def collect(self) -> Iterator[Metric]:
        family = GaugeMetricFamily(PREFIX + "rating", "Bradley-Terry rating of a bot in a preset pool",
                                   labels=["pool", "bot"])
        for key, value in sorted(self.values.items()):
            family.add_metric(key, value)
        yield family


class NodeMetrics:
    """A node's metrics, on ``registry`` (a new one by default) with the process collectors."""

    def __init__(self, time: TimeControl | None = None, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry = registry or CollectorRegistry()
        time = time or TimeControl()
        #: the ``bot`` label of each seat's name, the same in every metric
        self.bot_labels = BotLabels()
        self.decisions = DecisionStats(time, self.bot_labels)
        self.rpc = RpcStats()
        self.ratings = Ratings()
        self.stalls = StallStats()
        for collector in (self.decisions, self.rpc, self.ratings, self.stalls):
            registry.register(collector)
        ProcessCollector(registry=registry)
        PlatformCollector(registry=registry)
        GCCollector(registry=registry)

        def counter(name: str, doc: str, labels: tuple[str, ...] = ()) -> Counter:
            return Counter(PREFIX + name, doc, labels, registry=registry)

        def gauge(name: str, doc: str) -> Gauge:
            return Gauge(PREFIX + name, doc, registry=registry)

        # bots
        self.strikes = counter("strikes_total", "Strikes given, by bot and reason (late, illegal, no_action)",
                               ("bot", "reason"))
        self.forfeits = counter("forfeits_total", "Matches forfeited, by the bot whose team forfeited",
                                ("bot",))
        self.connected_bots = gauge("connected_bots", "Bots with a stream open to this node")
        self.bot_streams = gauge("bot_streams", "Bot streams open on this node (refused ones included)")
        # matches
        self.matches_running = gauge("matches_running", "Matches running on this node")
        self.matches_finished = counter("matches_finished_total",
                                        "Matches over on this node, by how they ended", ("outcome",))
        self.deals_played = counter("deals_played_total", "Deals played to their end on this node")
        # queue
        self.jobs_waiting = gauge("queue_jobs_waiting", "Jobs enqueued or claimed and not yet acked")
        self.jobs_claimed = counter("queue_jobs_claimed_total",
                                    "Jobs this node claimed and started (a match, or a result it already "
                                    "held or an absent bot's forfeit to write)")
        self.jobs_released = counter("queue_jobs_released_total",
                                     "Jobs this node claimed and gave back at once, unstarted (their bots "
                                     "not connected here, or busy)")
        self.jobs_reclaimed = counter("queue_jobs_reclaimed_total",
                                      "Jobs this node claimed after another claim's lease was lost")
        self.claim_calls = counter("queue_claim_calls_total",
                                   "Claims this node asked the broker for (each for all its free slots at "
                                   "once), whatever they gave")
        self.leases_expired = counter("queue_leases_expired_total",
                                      "Jobs this node's claims gave back to the queue because the lease of "
                                      "the node that held them ran out")
        self.dead_letters = counter("queue_dead_letters_total", "Jobs this node moved to the dead letters")
        self.results_written = counter("results_written_total", "Match results this node wrote")
        self.ladder_matches = counter("ladder_matches_total",
                                      "Ladder matches this node enqueued, by pool (its ladder thread pairs "
                                      "the bots connected here)", ("pool",))
        self.version_tests = counter("version_tests_total",
                                     "Bot version tests (SPRTs) this node started, and those it saw end: "
                                     "accepted (the version promoted), rejected (H0) or undecided (no "
                                     "verdict); each counted by one node of a cluster", ("outcome",))
        self.version_tests_running = gauge("version_tests_running",
                                           "Bot version tests (SPRTs) under way among the bots connected "
                                           "here, as this node last looked")
        self.results_duplicate = counter("results_duplicate_total",
                                         "Match results refused as already written (the exactly-once guard)")
        # node
        self.capacity = gauge("node_capacity", "Matches this node runs at once at most")
        self.free_slots = gauge("node_free_slots", "Match slots free on this node")
        self.live_nodes = gauge("live_nodes", "Nodes whose heartbeat this node sees alive")
        #: what refresh samples, each in a thread (they may call the broker)
        self.samplers: list[Callable[[], None]] = []

    def strike(self, bot: str, reason: str) -> None:
        """A strike of ``bot``'s seat (``name@version`` counts as ``name``)."""
        self.strikes.labels(self.bot_labels(bot), reason).inc()

    def forfeit(self, bot: str) -> None:
        """A match forfeited by ``bot``'s seat (``name@version`` counts as ``name``)."""
        self.forfeits.labels(self.bot_labels(bot)).inc()

    def refresh(self) -> None:
        """Sample what needs the broker (blocking: run it in a thread); a sampler that fails keeps
        its last values."""
        for sample in self.samplers:
            try:
                sample()
            except Exception:  # a broker away: the scrape still answers with what it has
                continue

    def exposition(self) -> bytes:
        """The text exposition of every metric."""
        return generate_latest(self.registry)
