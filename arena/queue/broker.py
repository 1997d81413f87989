"""The Broker: how match jobs and their results move between referee nodes.

One interface, two backends: Redis (many machines) and embedded (one process,
sqlite on disk). A node *claims* a job with a lease, *renews* the lease while
the match runs, writes the result and *acks*. A node that dies leaves its jobs
claimed; once the lease expires another node *reclaims* them and replays the
match from its seed. The result is written with the match id as the
idempotency key, in one atomic step with the rating update, so a replayed job
is never counted twice.

The ratings a result updates, in that same step, are per pool (see
:mod:`arena.ratings.pools`): each pool's online Elo, its pair counts (wins,
draws and losses per pair of bots) and each bot's rating history, and, for
the sides whose bot played as one of its versions (the record says which),
the versioned games of :mod:`arena.ratings.versions` (that version's games
against each opponent player, its bot's versions in order, the oldest folded
into the bot's name past 16). A mirror duplicate pair counts as one game,
when its second leg is written; a field duplicate quartet its one or two
games, when its fourth table is written, by whichever node writes it, exactly
once (:class:`RatingPlan`).

With the result, in the same step, the store keeps its
:class:`~arena.tournament.summary.ResultSummary` twice: at the end of its
tournament's log of summaries (``summaries``: a tournament advances and shows
its standings from them, reading only those it has not seen yet, never the
records) and at the head of each of its bots' lists of recent matches
(``bot_matches``: the newest :data:`BOT_MATCHES_KEPT` of each bot; a mixed
result goes to each of its up to four distinct bots, once a bot). A result
written twice is summarized once.

In the same step too, each of its distinct bots gets what the result adds to
its own history and statistics (:mod:`arena.tournament.botstats`): an entry at
the head of its history (``bot_history``, the newest
:data:`~arena.tournament.botstats.HISTORY_KEPT`), with the rating change the
step made in each pool (a duplicate leg's or table's: none until its pair's or
quartet's game counts), and its counters added to its aggregates and
head-to-head (``bot_counters``), kept forever. A pool's Bradley-Terry history
is kept apart, a point a fit (:meth:`Broker.note_bt_history`, a
compare-and-set on the pool's games).

A game of mixed partnerships (a side of two different bots) is rated with
openskill instead, which is sequential: each game in order, from the ratings
the one before left. It cannot run inside the atomic write (a Lua script), so
that write appends the game to each of its pools' *to-rate queue*, and
:meth:`Broker.apply_mixed` (any node, any time: after a write, before a read)
applies a pool's pending games in order, exactly once: the ratings and the
removal of the games they count change together or not at all (Redis
WATCH/MULTI on the pool's rating hash, which every applier writes; a sqlite
transaction). A node that dies between the two loses nothing.

A job delivered ``max_deliveries`` times without an ack goes to the
dead-letter list.

Notices
-------
A node tells every node (itself included) that something changed with
:meth:`Broker.publish_notice` (``kind``, a short word, and ``data``, a short
text), and each node reads them in order with :meth:`Broker.notices`, which
blocks (in a thread of the node's, never its event loop) until one comes or
its timeout passes. A reader keeps a cursor: it starts from
:meth:`Broker.notice_cursor` (now), reads everything after it, and never
misses one silently: the store keeps the latest :data:`NOTICES_KEPT`, every
notice carries a number one more than the one before, and a batch says
``gap`` when some were lost to the reader (it fell that far behind, or the
store lost its data), so the reader re-reads whatever the notices are about.
Redis keeps them in a stream, read with a blocking XREAD: a notice reaches
every node's reader at once. The embedded backend keeps them in a table and
wakes the readers of its file in the same process at once, those of other
processes within :data:`~arena.queue.embedded.NOTICE_POLL_S`.

A notice says *what* changed, never the change itself (the reader reads that
from the store), and never a secret. Kinds in use:

- :data:`BOT_NOTICE` (``data``: the bot's name): its registry entry was added or
  changed (a rotated token, a revocation). :meth:`Broker.add_bot` and
  :meth:`Broker.replace_bot` publish it themselves, in the same atomic step as
  the write, so no change goes unannounced even if the node dies right after.
  Every node applies it to its copy of the registry and cuts the streams of a
  revoked bot or of a rotated token (:mod:`arena.node.notices`).
- :data:`CANCEL_NOTICE` (``data``: the tournament's id): it was cancelled. The
  node that took the cancel publishes it right after (not in the same step:
  each node also polls the states of its running matches' tournaments, which
  catches a notice lost meanwhile); every node stops its running matches of
  that tournament at once (:meth:`arena.node.worker.Worker.stop_tournament`).

- :data:`SCHEDULE_NOTICE` (``data``: the schedule's id): a schedule was made or
  cancelled; every node's schedule loop reads the schedules again (it also reads
  them at least every minute, for a notice lost).

- :data:`LADDER_NOTICE` (``data``: the pool): a pool's ladder was started or
  stopped, or a bot joined or left it; every node's ladder loop reads the
  ladders again (also at least every minute, for a notice lost).

- :data:`FORGOTTEN_NOTICE` (``data``: the tournament's id): a version test was
  forgotten (:meth:`Broker.forget_tournament`); every node deletes its own
  records of its matches (also at its start and after a gap in the notices,
  for a notice missed).

Another kind is one more word and a handler on the node's
:class:`~arena.node.notices.NoticeWatcher`: ``publish_notice("tournament",
tournament_id)``, say, for "re-read this tournament".
"""

from __future__ import annotations

import abc
import json
import logging
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Self

from arena.ratings import PairCount, ladder_pool, pools_of, tournament_pool
from arena.ratings.counts import pair_key
from arena.ratings.mixed import MixedGame, MixedState, team_of
from arena.ratings.online import HISTORY_EVERY, HISTORY_MAX, Leg, Part
from arena.ratings.versions import VersionCounts, player_of
from arena.records import ResultReason
from arena.tournament import MatchJob, MatchResult, TournamentError, TournamentSpec, TournamentState
from arena.tournament.botstats import HISTORY_KEPT, BotGame, bot_games
from arena.tournament.jobs import Ending
from arena.tournament.summary import ResultSummary
from arena.tournament.tables import duplicate_legs, is_duplicate_match, quartet_table

log = logging.getLogger(__name__)

#: the most queued mixed games one rating step reads at once (a step repeats until none is left)
MIXED_BATCH = 200
#: the newest results kept in each bot's list of recent matches (older ones are trimmed as new come)
BOT_MATCHES_KEPT = 200
#: the Bradley-Terry history points kept per bot and pool (a point every BT_HISTORY_EVERY games of the pool)
BT_HISTORY_KEPT = 200
#: the pool's games between two Bradley-Terry history points, at least
BT_HISTORY_EVERY = 10
#: the latest notices a store keeps for readers that fall behind (about, on Redis: it trims lazily)
NOTICES_KEPT = 10_000
#: the notices one read returns at most (the rest come with the next read)
NOTICES_READ = 1000
#: the kind of notice that says a bot's registry entry was added or changed (``data``: its name)
BOT_NOTICE = "bot"
#: the kind of notice that says a tournament was cancelled (``data``: its id)
CANCEL_NOTICE = "cancel"
#: the kind of notice that says a schedule was made or cancelled (``data``: its id): each node's
#: schedule loop reads the schedules again
SCHEDULE_NOTICE = "schedule"
#: the kind of notice that says a pool's ladder changed (``data``: the pool): each node's ladder loop
#: reads the ladders again
LADDER_NOTICE = "ladder"
#: the kind of notice that says jobs wait in the queue that were not waiting a moment ago (enqueued,
#: given back, or their lease ran out): ``data``, their bots' names, space-separated, or ``*``
#: (too many to name); a node that can seat one of them claims at once
JOBS_NOTICE = "jobs"
#: what a ``jobs`` notice says when it names no bot: any node may look
ANY_BOT = "*"
#: the kind of notice that says a tournament was forgotten (``data``: its id; a version test past those
#: kept): each node deletes its own records of its matches
FORGOTTEN_NOTICE = "forgotten"

__all__ = [
    "ANY_BOT",
    "BOT_MATCHES_KEPT",
    "BOT_NOTICE",
    "BT_HISTORY_EVERY",
    "BT_HISTORY_KEPT",
    "CANCEL_NOTICE",
    "FORGOTTEN_NOTICE",
    "JOBS_NOTICE",
    "LADDER_NOTICE",
    "MIXED_BATCH",
    "NOTICES_KEPT",
    "NOTICES_READ",
    "SCAN_PER_BOT",
    "SCHEDULE_NOTICE",
    "Broker",
    "BrokerDataLost",
    "BrokerError",
    "BrokerUnavailable",
    "Claim",
    "ClaimBatch",
    "Finished",
    "LeaseLost",
    "NotReplicated",
    "Notice",
    "NoticeBatch",
    "RatingPlan",
    "TournamentCancelled",
    "Write",
    "history_entries",
    "history_group",
    "quartet_game_id",
    "rating_plan",
    "stored_tournament",
    "summary_of",
]

#: the jobs a claim with seats looks at, at most, among those waiting for each bot with a free seat
#: (the first ones: first come, first served): a job behind that many of a bot's that cannot sit
#: here now waits for one of them to go
SCAN_PER_BOT = 32


#: the matchmaking's latest picks a pool's ladder keeps, with why (its page shows them)
LADDER_PICKS_KEPT = 20

class BrokerError(Exception):
    """Base of the queue layer's errors (mapped to gRPC statuses at the edge)."""


class LeaseLost(BrokerError):
    """The claim's lease expired and another node took the job."""


class BrokerDataLost(BrokerError):
    """The backend forgot the arena's data under this node (a Redis restarted empty)."""


class BrokerUnavailable(BrokerError):
    """The backend cannot be reached (no Redis at the URL, an unreadable sqlite file)."""


class NotReplicated(BrokerUnavailable):
    """A write is on the primary but not yet on as many replicas as asked for: not to be counted yet
    (a failover now could roll it back). Nothing is undone: the write stays, and replicates later."""


class TournamentCancelled(BrokerError):
    """A result refused: its tournament was cancelled before it was written. Nothing of it is
    recorded or rated (the check and the write are one atomic step); its job is to be dropped."""


def stored_tournament(
    tournament_id: str, spec_json: str | bytes, state: str | bytes,
) -> tuple[TournamentSpec, TournamentState]:
    """A tournament as a backend stored it: its spec's JSON and its state's word."""
    try:
        text = state.decode() if isinstance(state, bytes) else state
        return TournamentSpec.from_dict(json.loads(spec_json)), TournamentState(text)
    except (ValueError, TournamentError) as e:
        raise BrokerError(f"tournament {tournament_id} is stored unreadable: {e}") from None


@dataclass(frozen=True)
class Notice:
    """Something a node told every node: what kind of thing changed, and which (see the module)."""

    kind: str
    data: str = ""


@dataclass(frozen=True)
class NoticeBatch:
    """What one :meth:`Broker.notices` read gives: the notices after the cursor, in order."""

    #: where the next read starts (opaque: give it back as it is)
    cursor: str
    notices: tuple[Notice, ...] = ()
    #: some notices after the cursor given are lost to this reader (it fell more than
    #: NOTICES_KEPT behind, or the store lost its data): re-read what they are about
    gap: bool = False


@dataclass(frozen=True)
class Claim:
    """A job held by one node until ``lease_until`` (unix seconds)."""

    job: MatchJob
    node_id: str
    delivery: int  # 1 on the first claim, 2 after one reclaim, ...
    lease_until: float
    #: backend-specific handle (Redis stream entry id, sqlite row id)
    handle: str


@dataclass(frozen=True)
class ClaimBatch:
    """What one claim gives: the jobs taken, and when to look again if nothing else happens."""

    claims: list[Claim]
    #: seconds until the earliest lease any node holds runs out (None: no job is held): the next
    #: claim after that gives the job back to the queue (its node died or hung)
    next_expiry_s: float | None = None
    #: jobs whose lease had run out that this call gave back to the queue (their bots' nodes are told)
    requeued: int = 0


class Write(StrEnum):
    """What writing a result did."""

    #: written now, and counted in its pools
    WRITTEN = "written"
    #: written before (a replay of a job whose node was thought dead): nothing changed
    DUPLICATE = "duplicate"
    #: refused: its tournament was cancelled first; nothing of it is recorded
    CANCELLED = "cancelled"


@dataclass(frozen=True)
class Finished:
    """A claim's result written and its job removed, in one step (:meth:`Broker.finish`)."""

    claim: Claim
    write: Write
    #: the jobs of its tournament still queued or held after it (-1: not known, or the job was gone)
    left: int


@dataclass(frozen=True)
class RatingPlan:
    """What writing one result does to the ratings, worked out before the atomic step.

    One game between bots ``a`` and ``b`` in each of ``pools``, which ``a``
    scored ``score_a``; or, for a leg of a mirror duplicate pair (``leg`` is
    its pair id and the leg from ``a``'s side, ``a`` being team 0 of leg 0),
    nothing if the other leg is not written yet, else the pair's one game,
    scored by :func:`arena.ratings.online.duplicate_score` over both legs; or,
    for a table of a field duplicate quartet (``quartet``: its id, the table
    0..3, whether R vs S is scored, and the table as a :class:`Part`), nothing
    until the other three tables are written, then the quartet's games, scored
    by :func:`arena.ratings.online.quartet_scores` (``a`` and ``b`` are then
    this table's sides, and ``score_a`` its team 0's match score: unused).
    """

    pools: tuple[str, ...]
    a: str
    b: str
    score_a: float
    leg: tuple[str, Leg] | None = None
    quartet: tuple[str, int, bool, Part] | None = None
    #: a game of mixed partnerships: ``a`` and ``b`` are side names (``"alice+bob"``), and the
    #: game goes to the pools' to-rate queues (openskill) rather than to their Elo and counts
    mixed: bool = False
    #: the players of ``a`` and ``b`` (:func:`arena.ratings.versions.player_of`: the version of the bot
    #: that played, as the record says, or the name itself); a duplicate leg's or table's are kept with
    #: it, and its pair's or quartet's game counts for the players that played all of it
    players: tuple[str, str] = ("", "")

    @property
    def played_by(self) -> tuple[str, str]:
        """The players of a single game's ``a`` and ``b``."""
        return self.players[0] or self.a, self.players[1] or self.b

    @property
    def counted_pools(self) -> tuple[str, ...]:
        """The pools whose Elo, pair counts and history the game moves."""
        return () if self.mixed else self.pools

    @property
    def mixed_pools(self) -> tuple[str, ...]:
        """The pools whose to-rate queue the game joins."""
        return self.pools if self.mixed else ()

    def mixed_game(self, game_id: str, score_a: float, a: str = "", b: str = "") -> MixedGame:
        """The game of sides ``a`` and ``b`` (default: the plan's) as a to-rate queue keeps it."""
        return MixedGame(game_id, team_of(a or self.a), team_of(b or self.b), score_a)

    @property
    def pair(self) -> tuple[tuple[str, str], bool]:
        """The pair counts' key of (a, b), and whether ``a`` is its first bot."""
        return pair_key(self.a, self.b)


def rating_plan(result: MatchResult, spec: TournamentSpec | None) -> RatingPlan:
    """The plan for ``result`` of the tournament ``spec`` (None: a tournament the store does not
    hold, whose results count in their tournament's own pool only, or a pool's ladder, whose results
    count in that pool)."""
    tid = result.tournament_id
    ladder = ladder_pool(tid)
    if spec is None and ladder is not None:
        pools: tuple[str, ...] = (ladder,)  # a ladder match: its pool's game (arena.ratings.pools)
    elif spec is None:
        pools = (tournament_pool(tid),)
    else:
        pools = pools_of(tid, spec.ruleset.to_spec(), rated=spec.unrated_reason == "")
    # partners that are different bots are not one player of Bradley-Terry and the Elo: openskill
    mixed = result.is_mixed
    p0, p1 = players_of(result)
    table = quartet_table(result.match_id) if spec is not None and spec.duplicate == "field" else None
    if table is not None:
        quartet, k, scored = table
        part = Part(result.team0, result.team1, result.totals[0], result.totals[1], result.score0(),
                    result.reason is ResultReason.FORFEIT, (p0, p1))
        return RatingPlan(pools, result.team0, result.team1, result.score0(),
                          quartet=(quartet, k, scored, part), mixed=mixed)
    legs = duplicate_legs(result.match_id) if spec is not None and spec.duplicate == "mirror" else None
    if legs is None:
        return RatingPlan(pools, result.team0, result.team1, result.score0(), mixed=mixed, players=(p0, p1))
    (t0, t1), forfeit = result.totals, result.reason is ResultReason.FORFEIT
    pair = legs[0].removesuffix("-leg0")
    if result.match_id == legs[0]:
        return RatingPlan(pools, result.team0, result.team1, result.score0(),
                          (pair, Leg(t0, t1, result.score0(), forfeit, (p0, p1))), mixed=mixed)
    return RatingPlan(pools, result.team1, result.team0, 1.0 - result.score0(),
                      (pair, Leg(t1, t0, 1.0 - result.score0(), forfeit, (p1, p0))), mixed=mixed)


def players_of(result: MatchResult) -> tuple[str, str]:
    """The players of team 0 and team 1 (:func:`arena.ratings.versions.player_of`): the version of its
    bot that played both its seats, as the record keeps it, or the team's name (no version said, a
    mixed side, seats of two versions, a record of before versions)."""
    versions = {b.seat: b.version for b in result.record.bots}
    if result.is_mixed or len(versions) != 4:
        return result.team0, result.team1
    v0 = versions[0] if versions[0] == versions[2] else ""
    v1 = versions[1] if versions[1] == versions[3] else ""
    return player_of(result.team0, v0), player_of(result.team1, v1)


def history_entries(bot: str, texts: Sequence[str]) -> list[dict[str, Any]]:
    """History entries from their JSON texts; an unreadable one is left out and logged."""
    out: list[dict[str, Any]] = []
    for text in texts:
        try:
            entry = json.loads(text)
        except ValueError as e:
            log.error("a history entry of bot %r is unreadable: %s", bot[:80], e)
            continue
        if isinstance(entry, dict):
            out.append(entry)
    return out


def history_group(plan: RatingPlan) -> str | None:
    """The group whose last table counts a result's bots' statistics (:mod:`arena.tournament.botstats`):
    its mirror pair or its field quartet, as its ratings; None for a result counted at once."""
    if plan.leg is not None:
        return f"pair/{plan.leg[0]}"
    if plan.quartet is not None:
        return f"quartet/{plan.quartet[0]}"
    return None


def quartet_game_id(quartet: str, game: int) -> str:
    """The id of a quartet's game 0 (P vs Q) or 1 (R vs S) in a mixed to-rate queue."""
    return f"{quartet}/{'PQ' if game == 0 else 'RS'}"


def summary_of(result: MatchResult, spec: TournamentSpec | None) -> ResultSummary:
    """What the store keeps of ``result`` beside it; a duplicate leg's or table's deal difference with it."""
    return ResultSummary.of_result(
        result, deals=spec is not None and bool(spec.duplicate) and is_duplicate_match(result.match_id))


class Broker(abc.ABC):
    """The contract both backends keep; tests/queue runs one suite against both."""

    max_deliveries: int = 5
    #: the online Elo's K (each result moves a rating by at most K)
    elo_k: float = 16.0
    #: a rating history point after every this many games of a bot in a pool, this many kept
    history_every: int = HISTORY_EVERY
    history_max: int = HISTORY_MAX

    def __init__(self) -> None:
        #: jobs this broker's claims moved to the dead letters (a node's metric counts them)
        self.dead_lettered = 0
        # the specs behind the rating plans, by tournament id (a spec never changes)
        self._specs: dict[str, TournamentSpec] = {}
        self._specs_lock = threading.Lock()

    def _rating_plan(self, result: MatchResult) -> RatingPlan:
        """The result's plan, its tournament's spec read from the store once per process."""
        return rating_plan(result, self._spec(result.tournament_id))

    def _write_plan(self, result: MatchResult, at: float) -> tuple[RatingPlan, ResultSummary, list[BotGame]]:
        """What writing ``result`` at ``at`` (unix seconds) does: its rating plan, the summary kept
        beside it, and what it adds to each of its bots' history and statistics
        (:mod:`arena.tournament.botstats`)."""
        spec = self._spec(result.tournament_id)
        plan = rating_plan(result, spec)
        games = bot_games(result, plan.pools, at)
        if history_group(plan) is not None:  # counted with its group's last table (botstats)
            games = [g.grouped() for g in games]
        return plan, summary_of(result, spec), games

    def tournament_spec(self, tid: str) -> TournamentSpec | None:
        """The tournament's spec (None: not stored), read from the store once per process: a spec
        never changes."""
        return self._spec(tid)

    def _spec(self, tid: str) -> TournamentSpec | None:
        """The tournament's spec, read from the store once per process (None: not stored)."""
        if ladder_pool(tid) is not None:
            return None  # a ladder's matches: no tournament holds them (no read for each result)
        with self._specs_lock:
            spec = self._specs.get(tid)
        if spec is None:
            found = self.get_tournament(tid)
            if found is not None:
                spec = found[0]
                with self._specs_lock:
                    if len(self._specs) >= 4096:
                        self._specs.clear()
                    self._specs[tid] = spec
        return spec

    # jobs
    @abc.abstractmethod
    def enqueue(self, jobs: Sequence[MatchJob]) -> None: ...

    def claim(self, node_id: str, count: int, lease_s: float,
              seats: Mapping[str, int] | None = None) -> list[Claim]:
        """Up to ``count`` jobs, first come first served (:meth:`claim_batch`'s claims)."""
        return self.claim_batch(node_id, count, lease_s, seats).claims

    @abc.abstractmethod
    def claim_batch(self, node_id: str, count: int, lease_s: float, seats: Mapping[str, int] | None = None,
                    *, absent: Sequence[str] = (), matches: Sequence[str] = (),
                    capped: tuple[str, int] | None = None) -> ClaimBatch:
        """Up to ``count`` jobs for ``node_id``, each leased for ``lease_s``, in one step.

        First the leases that ran out (their node died or hung) give their jobs back to the queue, at
        their place (or to the dead letters, once delivered ``max_deliveries`` times). Then the jobs
        are taken first come, first served: with ``seats`` (bot name -> its free seats on this node)
        only those whose bots all have a free seat here (a bot at two seats needs two), among the
        first :data:`SCAN_PER_BOT` waiting for each of those bots; with ``absent``, only jobs of those
        bots (they forfeit: ``seats`` is not looked at); with neither, any job. A job whose
        tournament was cancelled, or whose result is written already, is dropped, not taken. Before
        any of those, the waiting jobs of ``matches``, whatever the seats: the node holds their records
        (played to the end here, their results not written: it died, and restarted on its data).
        ``capped`` (prefix, n), with ``seats``: at most n of the jobs taken belong to tournaments whose id
        starts with the prefix (a node's room for version tests, :mod:`arena.node.versions`); the others
        are taken as if those were not there. ``count`` 0 gives back the leases run out and says when
        the next one does."""

    @abc.abstractmethod
    def waiting_bots(self) -> set[str]:
        """The bots some waiting job (queued, not held) names: in one read whatever the queue's length."""

    @abc.abstractmethod
    def held(self) -> list[Claim]:
        """The jobs nodes hold now (their ``lease_until`` as the store counts it): what an operator or
        a test looks at, a cost that grows with them."""

    @abc.abstractmethod
    def renew(self, claim: Claim, lease_s: float) -> Claim:
        """Extend the lease; raises :class:`LeaseLost` if another node took the job."""

    def renew_many(self, claims: Sequence[Claim], lease_s: float) -> list[Claim | None]:
        """:meth:`renew` each, at once where the backend can (None: that lease is lost)."""
        renewed: list[Claim | None] = []
        for claim in claims:
            try:
                renewed.append(self.renew(claim, lease_s))
            except LeaseLost:
                renewed.append(None)
        return renewed

    @abc.abstractmethod
    def ack(self, claim: Claim) -> None:
        """The job is done (its result is written, or it is not to be played): remove it for good."""

    @abc.abstractmethod
    def release(self, claim: Claim) -> None:
        """Give a job back unplayed (its bots cannot sit here after all, a draining node): it waits again
        at its place in the queue, claimable at once, and the nodes that can seat its bots are told."""

    @abc.abstractmethod
    def finish(self, done: Sequence[tuple[Claim, MatchResult]]) -> list[Finished]:
        """Write each claim's result and remove its job, each pair in one atomic step, all of them at
        once where the backend can (one round trip): a result is never written with its job left
        queued, nor its job gone without it. A job goes whatever the write said: written, written
        before, or refused for its tournament was cancelled first (nothing of it recorded)."""

    @abc.abstractmethod
    def dead_letters(self) -> list[MatchJob]: ...

    # results and ratings
    @abc.abstractmethod
    def write_result(self, result: MatchResult) -> bool:
        """Write the result and update ratings atomically; False if it was already written.

        Raises :class:`TournamentCancelled`, writing nothing, if its tournament was cancelled
        first: a match that ended after the cancel (before its node stopped it) is not recorded,
        so a cancel freezes the tournament's results and moves no pool."""

    def get_result(self, match_id: str) -> MatchResult | None:
        text = self.get_result_json(match_id)
        return None if text is None else MatchResult.from_json(text)

    @abc.abstractmethod
    def get_result_json(self, match_id: str) -> str | None:
        """The result's JSON text as written, unread (a reader that parses it elsewhere: a replay's
        build), or None."""

    def has_result(self, match_id: str) -> bool:
        """Whether the match's result is written, without reading it (what the seal rule asks:
        :func:`arena.tournament.tables.is_sealed`)."""
        return self.get_result(match_id) is not None

    def results_written(self, match_ids: Sequence[str]) -> set[str]:
        """Those of ``match_ids`` whose result is written, in one read whatever their number (the seal
        rule asked of a whole list of matches at once: a bot's recent matches)."""
        return {m for m in dict.fromkeys(match_ids) if self.has_result(m)}

    @abc.abstractmethod
    def results(self, tournament_id: str) -> list[MatchResult]: ...

    @abc.abstractmethod
    def summaries(self, tournament_id: str, start: int = 0) -> list[ResultSummary]:
        """The tournament's result summaries in the order written, from the ``start``-th on (0 is
        the first): a reader that kept the first ``start`` reads only the new ones, in one read.

        Results written by an older version, which kept no summaries, are summarized the first
        time they are missed (each backend says how)."""

    @abc.abstractmethod
    def bot_matches(self, bot: str, limit: int) -> list[ResultSummary]:
        """The bot's newest ``limit`` results (at most :data:`BOT_MATCHES_KEPT`), newest first, in
        one read whatever the number of its tournaments."""

    @abc.abstractmethod
    def bot_history(self, bot: str, start: int = 0, count: int = HISTORY_KEPT) -> list[dict[str, Any]]:
        """Entries ``start`` to ``start + count`` of the bot's history (newest first, the newest
        :data:`~arena.tournament.botstats.HISTORY_KEPT` kept; :class:`~arena.tournament.botstats.BotGame`'s
        entry with the ``rating_change`` its write made in each pool), in one read; an unreadable entry
        is left out (and logged)."""

    @abc.abstractmethod
    def bot_counters(self, bot: str) -> tuple[dict[str, int], dict[str, int]]:
        """The bot's aggregate counters and its head-to-head counters (``"<opponent> <counter>"``), as
        every result written so far added them, in one consistent read."""

    @abc.abstractmethod
    def note_bt_history(self, pool: str, games: int, points: Mapping[str, tuple[int, float, float, float]],
                        every: int) -> bool:
        """In one atomic step: if the pool's last Bradley-Terry history point was taken at fewer than
        ``games - every + 1`` games (or none was), keep ``points`` (bot -> its games, rating, low, high),
        one a bot, the latest :data:`BT_HISTORY_KEPT` a bot in the pool, and mark ``games``; True if this
        call did (one of any number of nodes fitting the same pool at once)."""

    @abc.abstractmethod
    def bt_history(self, pool: str, bot: str) -> list[tuple[int, int, float, float, float]]:
        """The bot's Bradley-Terry history points in the pool, oldest first: ``(the pool's games,
        the bot's games, rating, low, high)``."""

    def complete_summaries(self) -> int:
        """Summarize every stored result that has no summary yet (results of an older version);
        how many tournaments had some. A node calls it once as it starts, so that the bots'
        recent matches list those results too; a tournament's own summaries are completed
        anyway the first time they are read. The embedded backend does it when it opens a file."""
        return 0

    @abc.abstractmethod
    def result_counts(self, ids: Sequence[str]) -> dict[str, int]:
        """How many results each of these tournaments has, in one read and without reading them."""

    @abc.abstractmethod
    def pools(self) -> list[str]:
        """The rating pools with at least one game counted, sorted."""

    @abc.abstractmethod
    def pool_ratings(self, pool: str) -> dict[str, tuple[float, int]]:
        """The pool's online Elo per bot name: (rating, games)."""

    @abc.abstractmethod
    def pair_counts(self, pool: str) -> dict[tuple[str, str], PairCount]:
        """The pool's games per pair of bots ``(a, b)``, ``a < b``, from ``a``'s side."""

    @abc.abstractmethod
    def version_counts(self, pool: str) -> VersionCounts:
        """The pool's versioned games (:mod:`arena.ratings.versions`): each versioned player's games
        against each opponent player, and each bot's versions in the order they first played there,
        in one consistent read."""

    # mixed partnerships (openskill): see the module's docstring
    @abc.abstractmethod
    def apply_mixed(self, pool: str) -> int:
        """Rate the pool's pending mixed games, in order, each exactly once (however many nodes
        call this at once); how many this call rated."""

    @abc.abstractmethod
    def mixed_ratings(self, pool: str) -> dict[str, MixedState]:
        """The pool's openskill ratings of the bots of mixed partnerships, as last applied."""

    @abc.abstractmethod
    def mixed_pending(self, pool: str) -> int:
        """The pool's mixed games written and not yet rated."""

    def rate_mixed(self, result: MatchResult) -> int:
        """Rate the pending mixed games of ``result``'s pools (none if it is not mixed)."""
        return sum(self.apply_mixed(pool) for pool in self._rating_plan(result).mixed_pools)

    @abc.abstractmethod
    def rating_history(self, pool: str, bot: str) -> list[tuple[int, float]]:
        """The bot's Elo in the pool after every ``history_every`` of its games there (the latest
        ``history_max`` of them), then its latest: ``(games played in the pool, rating)``."""

    # tournaments (their spec and state live with the jobs, so any node can see them);
    # with results, enqueue_once and pending_count, this is arena.tournament.TournamentStore
    @abc.abstractmethod
    def put_tournament(self, spec: TournamentSpec) -> bool:
        """Store it in state ``created``; False if its id is taken."""

    @abc.abstractmethod
    def get_tournament(self, tournament_id: str) -> tuple[TournamentSpec, TournamentState] | None: ...

    @abc.abstractmethod
    def get_tournaments(self, ids: Sequence[str]) -> dict[str, tuple[TournamentSpec, TournamentState]]:
        """The stored ones of ``ids``, in one read (a page of a list, not one read a row)."""

    @abc.abstractmethod
    def set_tournament_state(
        self, tournament_id: str, state: TournamentState, *, expect: TournamentState | None = None,
        reason: str = "",
    ) -> bool:
        """Move to ``state``; with ``expect``, only from that state (compare-and-set).

        Ending it (finished, cancelled) keeps the time and ``reason`` (its :class:`Ending`), and,
        in the same step, reveals its secret then if none of its jobs is queued or claimed; else
        the step that removes its last job (an ack, a drop) does."""

    @abc.abstractmethod
    def tournament_ending(self, tournament_id: str) -> Ending:
        """When and why it ended, and when and why its secret was revealed (empty: not yet)."""

    @abc.abstractmethod
    def tournament_states(self, ids: Sequence[str]) -> dict[str, TournamentState]:
        """The states of the stored ones of ``ids``, in one read (a node asks every second or so
        whether the tournaments of its running matches were cancelled)."""

    @abc.abstractmethod
    def list_tournaments(self) -> list[str]: ...

    @abc.abstractmethod
    def forget_tournament(self, tournament_id: str) -> bool:
        """Forget an ended tournament whole, in one step: its spec and state, its results and their
        summaries, its own pool's ratings, counts and history, its mirror pairs' first legs left waiting,
        and its enqueue markers. Used for the version tests past those the arena keeps
        (:mod:`arena.node.versions`): their evidence stays in the bot's entry. Only once it ended and
        none of its jobs is left, queued or held, so that no match of it can be written after: False
        (nothing changed) for one still open, with jobs left, or unknown. The nodes' own records of
        its matches are theirs to delete (:data:`FORGOTTEN_NOTICE`)."""

    @abc.abstractmethod
    def enqueue_once(self, key: str, jobs: Sequence[MatchJob]) -> bool:
        """Enqueue ``jobs`` only if ``key`` was never used (e.g. "t1/round/3"); True if enqueued.

        Lets any node advance a tournament (the next Swiss round) without two
        nodes enqueueing it twice.
        """

    @abc.abstractmethod
    def enqueue_ladder(self, pool: str, setting: str, jobs: Sequence[MatchJob]) -> bool:
        """Enqueue a ladder's batch only if the pool's ladder setting stored is still ``setting`` (the
        JSON the ladder read before it picked them), in one atomic step; False (nothing enqueued) once
        the ladder was stopped or changed meanwhile. So ``ladder stop`` stops every node's ladder at
        once, even one whose look was under way."""

    @abc.abstractmethod
    def pending_count(self, tournament_id: str | None = None) -> int:
        """Jobs enqueued or claimed and not yet acked (all tournaments if None)."""

    # scheduled tournaments (arena.tournament.schedule): with tournament_states, its ScheduleStore
    @abc.abstractmethod
    def put_schedule(self, schedule_id: str, text: str) -> bool:
        """Store a schedule's JSON under its id; False if the id is taken."""

    @abc.abstractmethod
    def schedules(self) -> list[tuple[str, str, int]]:
        """Every schedule: its id, its JSON and its last occurrence made (unix seconds, 0: none), in one
        read (an admin's few: the nodes read them all at each occurrence)."""

    @abc.abstractmethod
    def delete_schedule(self, schedule_id: str) -> bool:
        """Forget the schedule (its tournaments stay); False if there was none."""

    @abc.abstractmethod
    def add_occurrence(self, schedule_id: str, text: str, at: int, spec: TournamentSpec) -> bool:
        """In one atomic step: if the schedule stored under ``schedule_id`` is ``text`` still (not
        cancelled, nor made again since), its last occurrence is before ``at``, and no tournament has
        ``spec``'s id, store ``spec`` as :meth:`put_tournament` does and ``at`` as the schedule's last
        occurrence; True if this call did (exactly one of any number of nodes asking at once)."""

    # the ladders (arena.tournament.ladder): a setting per pool and the bots opted in
    @abc.abstractmethod
    def put_ladder(self, pool: str, text: str) -> None:
        """Store the pool's ladder setting (its JSON), replacing the one stored: every node's ladder loop
        follows it."""

    @abc.abstractmethod
    def ladders(self) -> dict[str, str]:
        """Every pool's ladder setting (pool -> JSON), in one read (a few pools: one a ruleset preset)."""

    @abc.abstractmethod
    def ladder_add(self, pool: str, bot: str) -> bool:
        """Opt ``bot`` in to the pool's ladder (an admin's word: it clears the mark
        :meth:`ladder_remove` left); False if it was in already."""

    @abc.abstractmethod
    def ladder_remove(self, pool: str, bot: str) -> bool:
        """Take ``bot`` out of the pool's ladder and mark it removed by an admin, so that
        :meth:`ladder_join` no longer puts it back; False if it was not in (marked all the same)."""

    @abc.abstractmethod
    def ladder_join(self, pool: str, bot: str) -> bool:
        """In one atomic step: opt ``bot`` in to the pool's ladder unless an admin removed it
        (:meth:`ladder_remove`, and no :meth:`ladder_add` since). The bot's own asking, from its
        Hello: the admin's word wins. True if this call put it in."""

    @abc.abstractmethod
    def ladder_bots(self, pool: str) -> list[str]:
        """The bots opted in to the pool's ladder, sorted, in one read."""

    @abc.abstractmethod
    def note_ladder_picks(self, pool: str, picks: Sequence[str]) -> None:
        """Keep the matchmaking's latest picks of the pool (each a JSON text, in the order picked),
        :data:`LADDER_PICKS_KEPT` at most: the oldest go, in the same step."""

    @abc.abstractmethod
    def ladder_picks(self, pool: str) -> list[str]:
        """The pool's latest picks kept, newest first, in one read."""

    @abc.abstractmethod
    def ladder_conducts(self, bots: Sequence[str]) -> dict[str, str]:
        """The ladder conduct stored for each of ``bots`` that has one (a JSON text each: its recent
        forfeits and pauses, :mod:`arena.node.pauses`), in one read."""

    @abc.abstractmethod
    def swap_ladder_conduct(self, bot: str, text: str, expect: str) -> bool:
        """In one atomic step: if the conduct stored for ``bot`` is ``expect`` ("": none), store ``text``
        ("": forget it); True if this call did (a node recording a ladder result: compare and swap)."""

    # the cluster: live nodes (for the bots' discovery) and the shared bot registry
    @abc.abstractmethod
    def heartbeat(self, node_id: str, address: str, ttl_s: float, bots: Sequence[str] = ()) -> None:
        """This node is alive at ``address`` for ``ttl_s`` seconds more, with ``bots`` connected:
        they are seen now."""

    @abc.abstractmethod
    def present_bots(self) -> set[str]:
        """The bots connected to some live node."""

    @abc.abstractmethod
    def absent_since(self, bot: str) -> float:
        """When ``bot`` was last seen connected (unix seconds); a bot never seen counts from the
        first time this is asked of it."""

    @abc.abstractmethod
    def live_nodes(self) -> dict[str, str]:
        """node id -> address of the nodes whose heartbeat has not expired."""

    @abc.abstractmethod
    def add_bot(self, name: str, entry_json: str) -> bool:
        """Store a bot registry entry under its name; False if the name is taken. With the entry, in the
        same step, a :data:`BOT_NOTICE` of the name."""

    @abc.abstractmethod
    def replace_bot(self, name: str, entry_json: str, expect: str | None = None) -> bool:
        """Overwrite the entry stored under ``name`` (a rotated token, a revocation), with a
        :data:`BOT_NOTICE` of the name in the same step. With ``expect``, only if the stored entry is
        that text still (compare-and-set): False if it is not, and nothing is written."""

    @abc.abstractmethod
    def get_bots(self, names: Sequence[str]) -> dict[str, str]:
        """The stored entries (JSON) of those of ``names`` that are registered, in one read."""

    @abc.abstractmethod
    def add_invite(self, code_sha256: str) -> None:
        """Keep an invite code's hash, good for one registration."""

    @abc.abstractmethod
    def take_invite(self, code_sha256: str) -> bool:
        """Use an invite: True once (atomically, across nodes), then False."""

    @abc.abstractmethod
    def bot_entries(self) -> list[str]:
        """Every stored bot registry entry (JSON): a cost that grows with the registry, so a node reads
        it once as it starts and again only after a gap in the notices."""

    # notices between the nodes (see the module's docstring)
    @abc.abstractmethod
    def publish_notice(self, kind: str, data: str = "") -> None:
        """Tell every node's reader of :meth:`notices` that ``kind`` of thing, ``data``, changed."""

    @abc.abstractmethod
    def notice_cursor(self) -> str:
        """The cursor of now: :meth:`notices` from it gives the notices published from now on."""

    @abc.abstractmethod
    def notices(self, cursor: str, timeout: float) -> NoticeBatch:
        """The notices after ``cursor`` (at most :data:`NOTICES_READ`), in the order published; if there
        is none yet, wait up to ``timeout`` seconds for one (an empty batch then). Blocking: call it
        from a thread of its own, never an event loop."""

    def check_data(self) -> None:  # noqa: B027  (a backend that cannot lose its data has nothing to check)
        """Raise :class:`BrokerDataLost` if the store no longer holds the data this broker started on
        (a Redis that restarted empty); a backend that cannot lose it under a running node has
        nothing to check."""

    @abc.abstractmethod
    def close(self) -> None: ...

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
