"""The embedded backend of the Broker: one process, sqlite on disk (or in memory).

The same contract as the Redis backend, with wall-clock leases: a claimed job
carries its owner, its delivery number and ``lease_until``; once that time has
passed, the next claim puts it back in the queue at its place (a node of this
process that hung). ``job_bots`` indexes the jobs by the bots they name, so a
claim with seats looks only at the jobs of the bots that have a free one. Each
operation is one transaction (BEGIN IMMEDIATE for writes), so a result and its
rating updates (each pool's Elo, pair counts and history, a mirror duplicate
pair's first leg kept for its second, a field quartet's tables kept for its
fourth) are written together or not at all, and a file
survives a restart: results, ratings, tournaments and unfinished jobs are all
still there. The same transaction keeps the result's summary in its
tournament's log (``summaries``, numbered 0, 1, ... in the order written) and
in each of its bots' recent matches (``bot_matches``: each distinct bot of its
seats, up to four for a mixed match; trimmed to
:data:`~arena.queue.broker.BOT_MATCHES_KEPT` a bot), each bot's history entry
and counters (``bot_history``, ``bot_counters``), and appends a game of
mixed partnerships to its pools' to-rate queue (``mixed_queue``, rated later by
``apply_mixed``). A result whose tournament was cancelled first is refused in that
transaction (:class:`~arena.queue.broker.TournamentCancelled`). An ended
tournament's ``tournament_endings`` row says when and why, and, set by the
transaction that removed its last job (or ended it with none left), when its
secret was revealed.

A file of an older version (``PRAGMA user_version`` below :data:`SCHEMA_VERSION`)
kept no summaries: opening it summarizes its results once, from their records,
in one transaction, then marks the file (see :meth:`EmbeddedBroker._migrate`).
Either older version's file qualifies: one from before the summaries, and one
from before the summaries that already holds mixed matches (its ``mixed_queue``
and ``mixed_ratings`` are kept as they are; their summaries name all four seats).

Notices (:mod:`arena.queue.broker`) are rows numbered in order (``notices``,
the latest ``NOTICES_KEPT`` kept), written in the same transaction as what
they announce (a bot's entry). A reader waiting for one is woken at once by
a notice of any broker of the same file in this process, and looks for those
of other processes every :data:`NOTICE_POLL_S`.

One connection is shared under a lock, so one ``EmbeddedBroker`` is safe to use
from several threads (an asyncio node calls it through ``asyncio.to_thread``).
Several processes may open the same file: sqlite's own locking serializes them.
"""

from __future__ import annotations

import collections
import contextlib
import itertools
import json
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from arena.datadir import create_private, private_file
from arena.queue.broker import (
    ANY_BOT,
    BOT_MATCHES_KEPT,
    BOT_NOTICE,
    BT_HISTORY_KEPT,
    JOBS_NOTICE,
    LADDER_PICKS_KEPT,
    MIXED_BATCH,
    NOTICES_KEPT,
    NOTICES_READ,
    SCAN_PER_BOT,
    Broker,
    BrokerError,
    BrokerUnavailable,
    Claim,
    ClaimBatch,
    Finished,
    LeaseLost,
    Notice,
    NoticeBatch,
    RatingPlan,
    TournamentCancelled,
    Write,
    history_entries,
    history_group,
    quartet_game_id,
    stored_tournament,
    summary_of,
)
from arena.ratings import PairCount, counts_from_rows, pair_key, tournament_pool
from arena.ratings.elo import INITIAL_RATING, elo_update
from arena.ratings.mixed import MixedGame, MixedRatings, MixedState
from arena.ratings.online import (
    Leg,
    Part,
    duplicate_players,
    duplicate_score,
    history_points,
    quartet_players,
    quartet_scores,
)
from arena.ratings.versions import MAX_POOL_VERSIONS, VersionCounts
from arena.records import VERSION_JOIN
from arena.tournament import MatchJob, MatchResult, TournamentError, TournamentSpec, TournamentState
from arena.tournament.botstats import HISTORY_KEPT, BotGame, counters_json, counters_of_json
from arena.tournament.jobs import REVEALED_AT_ONCE, REVEALED_ONCE_OVER, Ending
from arena.tournament.summary import ResultSummary

log = logging.getLogger(__name__)


#: a versioned player's games against an opponent player, added to what the pool holds
_ADD_VERSION_GAMES = (
    "INSERT INTO version_games (pool, player, opponent, wins, draws, losses) VALUES (?, ?, ?, ?, ?, ?)"
    " ON CONFLICT (pool, player, opponent) DO UPDATE SET wins = wins + excluded.wins,"
    " draws = draws + excluded.draws, losses = losses + excluded.losses")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,  -- never reused: a claim's handle names one row for good
    match_id TEXT NOT NULL,
    tournament_id TEXT NOT NULL,
    body TEXT NOT NULL,                    -- the MatchJob's JSON
    state TEXT NOT NULL CHECK (state IN ('queued', 'claimed')),
    owner TEXT,
    lease_until REAL,
    deliveries INTEGER NOT NULL DEFAULT 0  -- deliveries that counted (releases do not)
);
CREATE INDEX IF NOT EXISTS jobs_by_state ON jobs (state, id);
CREATE INDEX IF NOT EXISTS jobs_by_tournament ON jobs (tournament_id);
CREATE INDEX IF NOT EXISTS jobs_by_match ON jobs (match_id);
CREATE TABLE IF NOT EXISTS job_bots (      -- each distinct bot a job names (its seats'), for claims by seats
    bot TEXT NOT NULL,
    job_id INTEGER NOT NULL,
    PRIMARY KEY (bot, job_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS job_bots_by_job ON job_bots (job_id);
CREATE TABLE IF NOT EXISTS dead_letters (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    body TEXT NOT NULL,
    deliveries INTEGER NOT NULL,
    reason TEXT NOT NULL,
    node_id TEXT NOT NULL,
    at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS results (
    match_id TEXT PRIMARY KEY,
    tournament_id TEXT NOT NULL,
    body TEXT NOT NULL,
    written_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS results_by_tournament ON results (tournament_id, match_id);
CREATE TABLE IF NOT EXISTS summaries (     -- each result's summary, written with it
    tournament_id TEXT NOT NULL,
    seq INTEGER NOT NULL,                  -- 0, 1, ... in the order written within the tournament
    match_id TEXT NOT NULL UNIQUE,
    body TEXT NOT NULL,                    -- arena.tournament.summary.ResultSummary's JSON
    PRIMARY KEY (tournament_id, seq)
);
CREATE TABLE IF NOT EXISTS bot_matches (   -- each bot's newest results' summaries, BOT_MATCHES_KEPT a bot
    id INTEGER PRIMARY KEY AUTOINCREMENT,  -- the order written
    bot TEXT NOT NULL,
    match_id TEXT NOT NULL,
    body TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS bot_matches_by_bot ON bot_matches (bot, id);
CREATE TABLE IF NOT EXISTS bot_history (   -- each bot's newest history entries (botstats), HISTORY_KEPT a bot
    id INTEGER PRIMARY KEY AUTOINCREMENT,  -- the order written
    bot TEXT NOT NULL,
    body TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS bot_history_by_bot ON bot_history (bot, id);
CREATE TABLE IF NOT EXISTS bot_counters (  -- each bot's aggregates ('s') and head-to-head ('h'), forever
    bot TEXT NOT NULL,
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    value INTEGER NOT NULL,
    PRIMARY KEY (bot, kind, name)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS bot_pending (   -- a duplicate group's tables' counters, until its last table
    grp TEXT NOT NULL,
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    body TEXT NOT NULL                     -- botstats.counters_json
);
CREATE INDEX IF NOT EXISTS bot_pending_by_group ON bot_pending (grp);
CREATE TABLE IF NOT EXISTS bt_history (    -- each bot's Bradley-Terry rating in a pool, fitted now and then
    pool TEXT NOT NULL,
    bot TEXT NOT NULL,
    games INTEGER NOT NULL,                -- the pool's games at the fit
    bot_games INTEGER NOT NULL,
    rating REAL NOT NULL,
    low REAL NOT NULL,
    high REAL NOT NULL,
    PRIMARY KEY (pool, bot, games)
);
CREATE TABLE IF NOT EXISTS bt_marks (      -- the pool's games at its last Bradley-Terry history point
    pool TEXT PRIMARY KEY,
    games INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS pool_ratings (  -- the online Elo of each bot in each pool
    pool TEXT NOT NULL,
    bot TEXT NOT NULL,
    rating REAL NOT NULL,
    games INTEGER NOT NULL,
    PRIMARY KEY (pool, bot)
);
CREATE TABLE IF NOT EXISTS pair_counts (   -- games per pair of bots a < b, from a's side
    pool TEXT NOT NULL,
    a TEXT NOT NULL,
    b TEXT NOT NULL,
    wins INTEGER NOT NULL,
    draws INTEGER NOT NULL,
    losses INTEGER NOT NULL,
    PRIMARY KEY (pool, a, b)
);
CREATE TABLE IF NOT EXISTS version_games (  -- each versioned player's games against each opponent player
    pool TEXT NOT NULL,                     -- (arena.ratings.versions), from its own side
    player TEXT NOT NULL,
    opponent TEXT NOT NULL,
    wins INTEGER NOT NULL,
    draws INTEGER NOT NULL,
    losses INTEGER NOT NULL,
    PRIMARY KEY (pool, player, opponent)
);
CREATE TABLE IF NOT EXISTS pool_versions (  -- each bot's versions in a pool, in the order they first played
    pool TEXT NOT NULL,
    bot TEXT NOT NULL,
    seq INTEGER NOT NULL,
    version TEXT NOT NULL,
    PRIMARY KEY (pool, bot, version)
);
CREATE TABLE IF NOT EXISTS rating_history (
    pool TEXT NOT NULL,
    bot TEXT NOT NULL,
    games INTEGER NOT NULL,
    rating REAL NOT NULL,
    PRIMARY KEY (pool, bot, games)
);
CREATE TABLE IF NOT EXISTS duplicate_legs (  -- a duplicate pair's first leg written, until its second
    pair TEXT PRIMARY KEY,
    leg TEXT NOT NULL                        -- arena.ratings.online.Leg.to_text()
);
CREATE TABLE IF NOT EXISTS quartet_tables (  -- a field duplicate quartet's tables written, until its fourth
    quartet TEXT NOT NULL,
    tbl INTEGER NOT NULL,                    -- 0..3
    part TEXT NOT NULL,                      -- arena.ratings.online.Part.to_text()
    PRIMARY KEY (quartet, tbl)
);
CREATE TABLE IF NOT EXISTS mixed_queue (     -- mixed-partnership games written, not yet rated
    seq INTEGER PRIMARY KEY AUTOINCREMENT,     -- the order they are rated in
    pool TEXT NOT NULL,
    game TEXT NOT NULL                         -- arena.ratings.mixed.MixedGame.to_text()
);
CREATE INDEX IF NOT EXISTS mixed_queue_pool ON mixed_queue (pool, seq);
CREATE TABLE IF NOT EXISTS mixed_ratings (   -- openskill, each bot of mixed partnerships in a pool
    pool TEXT NOT NULL,
    bot TEXT NOT NULL,
    state TEXT NOT NULL,                       -- arena.ratings.mixed.MixedState.to_text()
    PRIMARY KEY (pool, bot)
);
CREATE TABLE IF NOT EXISTS tournaments (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,  -- creation order
    id TEXT NOT NULL UNIQUE,
    spec TEXT NOT NULL,
    state TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS tournament_endings (  -- a tournament that ended: when and why, and when its
    id TEXT PRIMARY KEY,                        -- secret was revealed (NULL: not yet)
    ended_at REAL NOT NULL,
    ended_reason TEXT NOT NULL,
    revealed_at REAL,
    revealed_reason TEXT
);
CREATE TABLE IF NOT EXISTS schedules (          -- scheduled tournaments (arena.tournament.schedule)
    id TEXT PRIMARY KEY,
    spec TEXT NOT NULL,                         -- the schedule's JSON
    last INTEGER NOT NULL DEFAULT 0             -- its last occurrence made (unix seconds, 0: none)
);
CREATE TABLE IF NOT EXISTS ladders (            -- a pool's ladder (arena.tournament.ladder)
    pool TEXT PRIMARY KEY,
    setting TEXT NOT NULL                       -- its JSON
);
CREATE TABLE IF NOT EXISTS ladder_bots (        -- the bots opted in to a pool's ladder
    pool TEXT NOT NULL,
    bot TEXT NOT NULL,
    PRIMARY KEY (pool, bot)
);
CREATE TABLE IF NOT EXISTS ladder_removed (     -- the bots an admin took out of a pool's ladder
    pool TEXT NOT NULL,                         -- (their Hello's ladder flag does not put them back)
    bot TEXT NOT NULL,
    PRIMARY KEY (pool, bot)
);
CREATE TABLE IF NOT EXISTS ladder_picks (       -- the matchmaking's latest picks of a pool (JSON each)
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    pool TEXT NOT NULL,
    text TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS ladder_picks_pool ON ladder_picks (pool, seq);
CREATE TABLE IF NOT EXISTS ladder_conduct (     -- a bot's ladder forfeits and pauses (arena.node.pauses)
    bot TEXT PRIMARY KEY,
    text TEXT NOT NULL                          -- its JSON
);
CREATE TABLE IF NOT EXISTS enqueue_markers (
    key TEXT PRIMARY KEY,
    at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS nodes (
    id TEXT PRIMARY KEY,
    address TEXT NOT NULL,
    expires REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS node_bots (
    node_id TEXT NOT NULL,
    bot TEXT NOT NULL,
    PRIMARY KEY (node_id, bot)
);
CREATE TABLE IF NOT EXISTS bot_presence (
    bot TEXT PRIMARY KEY,
    seen REAL NOT NULL                     -- last seen connected, or first missed
);
CREATE TABLE IF NOT EXISTS bots (
    name TEXT PRIMARY KEY,
    entry TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS invites (
    code_sha256 TEXT PRIMARY KEY
);
CREATE TABLE IF NOT EXISTS notices (       -- the latest NOTICES_KEPT notices, numbered in order
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL,
    data TEXT NOT NULL
);
"""

#: how often a reader of notices looks for those of another process on the same file (seconds);
#: those of this process wake it at once
NOTICE_POLL_S = 0.25


class _Wake:
    """Wakes the readers of notices of one file (or of one in-memory store) in this process."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.generation = 0

    def bump(self) -> None:
        with self.cond:
            self.generation += 1
            self.cond.notify_all()


_wakes: dict[str, _Wake] = {}
_wakes_lock = threading.Lock()


def _wake_for(key: str) -> _Wake:
    with _wakes_lock:
        wake = _wakes.get(key)
        if wake is None:
            wake = _wakes[key] = _Wake()
        return wake


#: ``PRAGMA user_version`` of a file of this version: 1, its results all have their summaries; 2,
#: its jobs are indexed by bot too (0: an older file)
SCHEMA_VERSION = 2


class EmbeddedBroker(Broker):
    """The Broker on sqlite: a file at ``path`` (kept across restarts), or memory if None."""

    def __init__(
        self,
        path: Path | None = None,
        max_deliveries: int = 5,
        elo_k: float = 16.0,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if max_deliveries < 1:
            raise ValueError(f"max_deliveries must be at least 1, not {max_deliveries}")
        super().__init__()
        self.path = path
        self.max_deliveries = max_deliveries
        self.elo_k = elo_k
        self._clock = clock
        self._lock = threading.Lock()
        self._closed = False
        #: the transaction under way published a notice: wake the readers once it commits
        self._woken = False
        where = ":memory:" if path is None else str(path)
        # the brokers of one file in this process share it: a notice wakes all their readers
        self._wake = _Wake() if path is None else _wake_for(str(path.resolve()))
        try:
            if path is not None:  # sqlite gives the -wal and -shm it makes the database's mode
                create_private(path)
                for companion in ("-wal", "-shm", "-journal"):
                    private_file(path.with_name(path.name + companion))
            self._db = sqlite3.connect(where, timeout=30.0, isolation_level=None, check_same_thread=False)
            if path is not None:
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA synchronous=FULL")
            self._db.executescript(_SCHEMA)
            self._migrate()
        except (sqlite3.Error, OSError) as e:
            raise BrokerUnavailable(f"cannot open the queue database {where}: {e}") from e

    def _migrate(self) -> None:
        """Bring a file of an older version up to :data:`SCHEMA_VERSION`: summarize, once, the
        results it holds without a summary (in the order written), index its jobs by bot, then mark
        the file. One transaction: a crash leaves the file as it was, and the next open does it again."""
        if self._db.execute("PRAGMA user_version").fetchone()[0] >= SCHEMA_VERSION:
            return
        with self._tx() as db:
            version = db.execute("PRAGMA user_version").fetchone()[0]
            if version >= SCHEMA_VERSION:
                return  # another process did it meanwhile
            if version < 1:
                self._summarize_all(db)
            for row_id, body in db.execute("SELECT id, body FROM jobs").fetchall():
                try:
                    bots = MatchJob.from_json(body).seat_bots
                except (ValueError, TypeError, KeyError):
                    continue  # unreadable: dead-lettered when it is claimed (by no seat)
                db.executemany("INSERT OR IGNORE INTO job_bots (bot, job_id) VALUES (?, ?)",
                               [(bot, row_id) for bot in dict.fromkeys(bots)])
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    def _summarize_all(self, db: sqlite3.Connection) -> None:
        """Summarize the results of a file from before the summaries, in the order written."""
        rows = db.execute(
            "SELECT r.body FROM results r WHERE NOT EXISTS"
            " (SELECT 1 FROM summaries s WHERE s.match_id = r.match_id) ORDER BY r.written_at, r.match_id"
        ).fetchall()
        specs: dict[str, TournamentSpec | None] = {}
        for (body,) in rows:
            try:
                result = MatchResult.from_json(body)
            except (ValueError, TypeError, KeyError) as e:
                log.error("a stored result is unreadable, left without a summary: %s", e)
                continue
            tid = result.tournament_id
            if tid not in specs:
                found = db.execute("SELECT spec, state FROM tournaments WHERE id = ?", (tid,)).fetchone()
                specs[tid] = None if found is None else stored_tournament(tid, found[0], found[1])[0]
            self._keep_summary(db, summary_of(result, specs[tid]))
        if rows:
            log.info("%d results of an older version summarized", len(rows),
                     extra={"event": "summaries_added"})

    def __repr__(self) -> str:
        return f"EmbeddedBroker({str(self.path) if self.path else ':memory:'!r})"

    # plumbing
    @contextmanager
    def _tx(self, write: bool = True) -> Iterator[sqlite3.Connection]:
        """One transaction under the lock; sqlite errors become BrokerError."""
        with self._lock:
            if self._closed:
                raise BrokerError(f"{self!r} is closed")
            db = self._db
            try:
                db.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            except sqlite3.Error as e:
                raise BrokerUnavailable(f"{self!r}: cannot begin a transaction: {e}") from e
            try:
                yield db
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise

    @contextmanager
    def _errors(self) -> Iterator[None]:
        try:
            yield
        except sqlite3.Error as e:
            raise BrokerError(f"{self!r}: {e}") from e

    # jobs
    def _insert_jobs(self, db: sqlite3.Connection, jobs: Sequence[MatchJob]) -> None:
        bots: list[str] = []
        for j in jobs:
            cur = db.execute(
                "INSERT INTO jobs (match_id, tournament_id, body, state, deliveries)"
                " VALUES (?, ?, ?, 'queued', 0)",
                (j.match_id, j.tournament_id, j.to_json()),
            )
            named = list(dict.fromkeys(j.seat_bots))
            db.executemany("INSERT INTO job_bots (bot, job_id) VALUES (?, ?)",
                           [(bot, cur.lastrowid) for bot in named])
            bots += named
        self._jobs_notice(db, bots)

    def _jobs_notice(self, db: sqlite3.Connection, bots: Sequence[str]) -> None:
        """A ``jobs`` notice naming ``bots`` (they have jobs waiting now), in the transaction that made
        them wait; the readers are woken once it commits."""
        if bots:
            named = list(dict.fromkeys(bots))
            self._keep_notice(db, JOBS_NOTICE, ANY_BOT if len(named) > 64 else " ".join(named))
            self._woken = True

    def _woke(self) -> None:
        """Wake the readers of notices if the transaction just committed published one."""
        if self._woken:
            self._woken = False
            self._wake.bump()

    def enqueue(self, jobs: Sequence[MatchJob]) -> None:
        with self._errors(), self._tx() as db:
            self._insert_jobs(db, jobs)
        self._woke()

    def enqueue_once(self, key: str, jobs: Sequence[MatchJob]) -> bool:
        with self._errors(), self._tx() as db:
            cur = db.execute(
                "INSERT OR IGNORE INTO enqueue_markers (key, at) VALUES (?, ?)", (key, self._clock())
            )
            if cur.rowcount == 0:
                return False
            self._insert_jobs(db, jobs)
        self._woke()
        return True

    def enqueue_ladder(self, pool: str, setting: str, jobs: Sequence[MatchJob]) -> bool:
        with self._errors(), self._tx() as db:
            row = db.execute("SELECT setting FROM ladders WHERE pool = ?", (pool,)).fetchone()
            if row is None or str(row[0]) != setting:
                return False
            self._insert_jobs(db, jobs)
        self._woke()
        return True

    def claim_batch(self, node_id: str, count: int, lease_s: float, seats: Mapping[str, int] | None = None,
                    *, absent: Sequence[str] = (), matches: Sequence[str] = (),
                    capped: tuple[str, int] | None = None) -> ClaimBatch:
        if lease_s <= 0:
            raise ValueError(f"lease_s must be positive, not {lease_s}")
        if not node_id:
            raise ValueError("node_id must not be empty")
        claims: list[Claim] = []
        with self._errors(), self._tx() as db:
            now = self._clock()
            lease_until = now + lease_s
            requeued = self._requeue_expired(db, now)
            for match_id in dict.fromkeys(matches):
                if len(claims) >= count:
                    break
                row = db.execute("SELECT id, body, deliveries FROM jobs"
                                 " WHERE match_id = ? AND state = 'queued'", (match_id,)).fetchone()
                if row is not None:
                    self._accept(db, node_id, lease_until, row, claims)
            by_seats = seats is not None and not absent
            prefix, cap = capped if capped is not None and capped[0] and by_seats else ("", 0)
            free = {bot: n for bot, n in (seats or {}).items() if n > 0}
            bots = list(absent) or list(free)
            while len(claims) < count and (bots or not by_seats):
                rows = self._candidates(db, count - len(claims), by_seats, bots)
                for row in rows:
                    if len(claims) >= count:
                        break
                    need = self._seats_needed(row[1]) if by_seats else collections.Counter()
                    if by_seats and any(free.get(bot, 0) < n for bot, n in need.items()):
                        continue  # it waits for a seat here or elsewhere
                    is_capped = bool(prefix) and self._tournament_of(row[1]).startswith(prefix)
                    if is_capped and cap <= 0:
                        continue  # past the node's room for such jobs: another look, or another node
                    if self._accept(db, node_id, lease_until, row, claims) and by_seats:
                        for bot, n in need.items():
                            free[bot] -= n
                        cap -= is_capped
                # without seats every row looked at was taken or dropped: look again while some came;
                # with seats, every job of the bots' first SCAN_PER_BOT was looked at once
                if by_seats or not rows:
                    break
            first = db.execute("SELECT MIN(lease_until) FROM jobs WHERE state = 'claimed'").fetchone()[0]
        self._woke()
        return ClaimBatch(claims, None if first is None else max(0.0, first - now), requeued)

    def _requeue_expired(self, db: sqlite3.Connection, now: float) -> int:
        """The claims whose lease ran out (their node died or hung) wait again at their place, or go
        to the dead letters once delivered ``max_deliveries`` times; how many wait again."""
        rows = db.execute(
            "SELECT id, body, deliveries, owner FROM jobs"
            " WHERE state = 'claimed' AND lease_until < ? ORDER BY id",
            (now,),
        ).fetchall()
        bots: list[str] = []
        back = 0
        for row_id, body, deliveries, owner in rows:
            if deliveries >= self.max_deliveries:
                tid = self._dead_letter(db, row_id, body, deliveries, "max_deliveries", owner or "")
                log.warning("job %d delivered %d times without an ack: dead-lettered", row_id, deliveries,
                            extra={"event": "dead_letter", "node": owner or ""})
                self.dead_lettered += 1
                if tid is not None:
                    self._reveal_if_over(db, tid)
                continue
            db.execute("UPDATE jobs SET state = 'queued', owner = NULL, lease_until = NULL WHERE id = ?",
                       (row_id,))
            bots += [b for (b,) in db.execute("SELECT bot FROM job_bots WHERE job_id = ?", (row_id,))]
            back += 1
        self._jobs_notice(db, bots)
        return back

    @staticmethod
    def _tournament_of(body: str) -> str:
        """A job's tournament id ("" for an unreadable job)."""
        try:
            return MatchJob.from_json(body).tournament_id
        except (ValueError, TypeError, KeyError):
            return ""

    @staticmethod
    def _seats_needed(body: str) -> collections.Counter[str]:
        """The seats a job's bots need (a team match: two of each of its bots); an unreadable job none
        (taken, it is dead-lettered)."""
        try:
            return collections.Counter(MatchJob.from_json(body).seat_bots)
        except (ValueError, TypeError, KeyError):
            return collections.Counter()

    @staticmethod
    def _candidates(db: sqlite3.Connection, count: int, by_seats: bool,
                    bots: Sequence[str]) -> list[tuple[int, str, int]]:
        """Waiting jobs to look at, first come first served: (id, body, deliveries)."""
        select = "SELECT j.id, j.body, j.deliveries"
        if not bots and by_seats:
            return []
        if not bots:
            return db.execute(f"{select} FROM jobs j WHERE j.state = 'queued' ORDER BY j.id LIMIT ?",
                              (count,)).fetchall()
        found: dict[int, tuple[int, str, int]] = {}
        limit = SCAN_PER_BOT if by_seats else count
        for bot in dict.fromkeys(bots):
            rows = db.execute(
                f"{select} FROM job_bots b JOIN jobs j ON j.id = b.job_id"
                " WHERE b.bot = ? AND j.state = 'queued' ORDER BY j.id LIMIT ?", (bot, limit)).fetchall()
            for row in rows:
                found[row[0]] = row
        return [found[i] for i in sorted(found)]

    def _accept(
        self,
        db: sqlite3.Connection,
        node_id: str,
        lease_until: float,
        row: tuple[int, str, int],
        claims: list[Claim],
    ) -> bool:
        """Claim one row (True), or dead-letter it, or drop it when it need not be played."""
        row_id, body, deliveries = row
        delivery = deliveries + 1
        try:
            job = MatchJob.from_json(body)
        except (ValueError, TypeError, KeyError) as e:
            log.error("job row %d is unreadable (%s): dead-lettered", row_id, e,
                      extra={"event": "dead_letter", "node": node_id})
            self._dead_letter(db, row_id, body, deliveries, "unreadable", node_id)
            self.dead_lettered += 1
            return False
        if delivery > self.max_deliveries:
            log.warning("match %s delivered %d times without an ack: dead-lettered", job.match_id, deliveries,
                        extra={"event": "dead_letter", "match_id": job.match_id, "node": node_id})
            self._dead_letter(db, row_id, body, deliveries, "max_deliveries", node_id)
            self._reveal_if_over(db, job.tournament_id)
            self.dead_lettered += 1
            return False
        cancelled = db.execute(
            "SELECT 1 FROM tournaments WHERE id = ? AND state = ?",
            (job.tournament_id, TournamentState.CANCELLED),
        ).fetchone()
        done = db.execute("SELECT 1 FROM results WHERE match_id = ?", (job.match_id,)).fetchone()
        if cancelled or done:
            self._delete_job(db, row_id)
            self._reveal_if_over(db, job.tournament_id)
            return False
        db.execute(
            "UPDATE jobs SET state = 'claimed', owner = ?, lease_until = ?, deliveries = ? WHERE id = ?",
            (node_id, lease_until, delivery, row_id),
        )
        claims.append(Claim(job, node_id, delivery, lease_until, str(row_id)))
        return True

    @staticmethod
    def _delete_job(db: sqlite3.Connection, row_id: int) -> str | None:
        """Remove a job row for good; its tournament's id (None: it was gone)."""
        row = db.execute("DELETE FROM jobs WHERE id = ? RETURNING tournament_id", (row_id,)).fetchone()
        db.execute("DELETE FROM job_bots WHERE job_id = ?", (row_id,))
        return None if row is None else str(row[0])

    def _dead_letter(
        self, db: sqlite3.Connection, row_id: int, body: str, deliveries: int, reason: str, node_id: str
    ) -> str | None:
        tid = self._delete_job(db, row_id)
        db.execute(
            "INSERT INTO dead_letters (body, deliveries, reason, node_id, at) VALUES (?, ?, ?, ?, ?)",
            (body, deliveries, reason, node_id, self._clock()),
        )
        return tid

    def waiting_bots(self) -> set[str]:
        with self._errors(), self._tx(write=False) as db:
            return {bot for (bot,) in db.execute(
                "SELECT DISTINCT b.bot FROM job_bots b JOIN jobs j ON j.id = b.job_id"
                " WHERE j.state = 'queued'")}

    def held(self) -> list[Claim]:
        with self._errors(), self._tx(write=False) as db:
            rows = db.execute("SELECT id, body, owner, deliveries, lease_until FROM jobs"
                              " WHERE state = 'claimed' ORDER BY id").fetchall()
        claims = []
        for row_id, body, owner, delivery, until in rows:
            with contextlib.suppress(ValueError, TypeError, KeyError):
                claims.append(Claim(MatchJob.from_json(body), owner, delivery, until, str(row_id)))
        return claims

    @staticmethod
    def _held(claim: Claim) -> tuple[int, str, int]:
        """The WHERE arguments naming the row as this claim holds it."""
        try:
            return int(claim.handle), claim.node_id, claim.delivery
        except ValueError as e:
            raise LeaseLost(f"match {claim.job.match_id}: {claim.handle!r} is no embedded claim") from e

    def renew(self, claim: Claim, lease_s: float) -> Claim:
        held = self._held(claim)
        with self._errors(), self._tx() as db:
            lease_until = self._clock() + lease_s
            cur = db.execute(
                "UPDATE jobs SET lease_until = ?"
                " WHERE id = ? AND state = 'claimed' AND owner = ? AND deliveries = ?",
                (lease_until, *held),
            )
            if cur.rowcount == 0:
                raise LeaseLost(
                    f"match {claim.job.match_id}: node {claim.node_id}"
                    f" no longer holds delivery {claim.delivery}"
                )
        return replace(claim, lease_until=lease_until)

    def ack(self, claim: Claim) -> None:
        with self._errors(), self._tx() as db:
            self._delete_job(db, self._held(claim)[0])
            self._reveal_if_over(db, claim.job.tournament_id)

    def _reveal_if_over(self, db: sqlite3.Connection, tournament_id: str,
                        reason: str = REVEALED_ONCE_OVER, at: float | None = None) -> None:
        """In the step that removed one of its jobs (or ended it): reveal the tournament's secret now
        if it has ended and none of its jobs is left. Only an ended tournament has an ending row."""
        if db.execute("SELECT 1 FROM jobs WHERE tournament_id = ? LIMIT 1", (tournament_id,)).fetchone():
            return
        db.execute("UPDATE tournament_endings SET revealed_at = ?, revealed_reason = ?"
                   " WHERE id = ? AND revealed_at IS NULL",
                   (self._clock() if at is None else at, reason, tournament_id))

    def release(self, claim: Claim) -> None:
        """Give the job back at its place in the queue; a release is not a failed delivery."""
        held = self._held(claim)
        with self._errors(), self._tx() as db:
            cur = db.execute(
                "UPDATE jobs SET state = 'queued', owner = NULL, lease_until = NULL, deliveries = ?"
                " WHERE id = ? AND state = 'claimed' AND owner = ? AND deliveries = ?",
                (claim.delivery - 1, *held),
            )
            if cur.rowcount == 0:
                return  # another node holds it now: nothing of ours to give back
            self._jobs_notice(db, [b for (b,) in db.execute("SELECT bot FROM job_bots WHERE job_id = ?",
                                                             (held[0],))])
        self._woke()

    def dead_letters(self) -> list[MatchJob]:
        with self._errors(), self._tx(write=False) as db:
            rows = db.execute("SELECT id, body FROM dead_letters ORDER BY id").fetchall()
        jobs = []
        for row_id, body in rows:
            try:
                jobs.append(MatchJob.from_json(body))
            except (ValueError, TypeError, KeyError):
                log.error("dead letter %d is unreadable: %r", row_id, body)
        return jobs

    # results and ratings
    def write_result(self, result: MatchResult) -> bool:
        plan = self._write_plan(result, self._clock())
        with self._errors(), self._tx() as db:
            written = self._write(db, result, *plan)
        if written is Write.CANCELLED:
            raise TournamentCancelled(f"match {result.match_id}: tournament {result.tournament_id} was "
                                      "cancelled before its result was written: not recorded")
        return written is Write.WRITTEN

    def finish(self, done: Sequence[tuple[Claim, MatchResult]]) -> list[Finished]:
        finished = []
        plans = [self._write_plan(result, self._clock()) for _, result in done]  # specs read outside the tx
        with self._errors(), self._tx() as db:
            for (claim, result), plan in zip(done, plans, strict=True):
                written = self._write(db, result, *plan)
                tid = self._delete_job(db, self._held(claim)[0])
                left = -1
                if tid is not None:
                    self._reveal_if_over(db, tid)
                    left = int(db.execute("SELECT COUNT(*) FROM jobs WHERE tournament_id = ?",
                                          (tid,)).fetchone()[0])
                finished.append(Finished(claim, written, left))
        return finished

    def _write(self, db: sqlite3.Connection, result: MatchResult, plan: RatingPlan,
               summary: ResultSummary, games: Sequence[BotGame] = ()) -> Write:
        """Write ``result`` in the transaction ``db``, with its rating plan and summary; refused (written
        before, or its tournament cancelled), it writes nothing."""
        if db.execute("SELECT 1 FROM results WHERE match_id = ?", (result.match_id,)).fetchone():
            return Write.DUPLICATE
        if db.execute("SELECT 1 FROM tournaments WHERE id = ? AND state = ?",
                      (result.tournament_id, TournamentState.CANCELLED)).fetchone():
            return Write.CANCELLED
        db.execute("INSERT INTO results (match_id, tournament_id, body, written_at) VALUES (?, ?, ?, ?)",
                   (result.match_id, result.tournament_id, result.to_json(), self._clock()))
        self._keep_summary(db, summary)
        moved: dict[str, dict[str, float]] = {}  # bot -> pool -> its rating's change
        counted = self._games(db, plan, result.match_id)
        for a, b, score_a, game_id, players in counted:
            for pool in plan.counted_pools:
                for bot, change in self._count_game(db, pool, a, b, score_a).items():
                    per_pool = moved.setdefault(bot, {})
                    per_pool[pool] = per_pool.get(pool, 0.0) + change
                self._count_versions(db, pool, a, b, score_a, players)
            for pool in plan.mixed_pools:  # rated in order by apply_mixed
                db.execute("INSERT INTO mixed_queue (pool, game) VALUES (?, ?)",
                           (pool, plan.mixed_game(game_id, score_a, a, b).to_text()))
        self._keep_history(db, games, moved, history_group(plan), waiting=not counted)
        return Write.WRITTEN

    @staticmethod
    def _keep_history(db: sqlite3.Connection, games: Sequence[BotGame],
                      moved: Mapping[str, Mapping[str, float]], group: str | None, *, waiting: bool) -> None:
        """Each bot's history entry (with the rating changes ``moved``) at the head of its history, and
        its counters added to its aggregates and head-to-head: at once, or, for a table of a duplicate
        ``group``, held until the group's last table (``waiting``: not this one), then the group's all."""
        for g in games:
            change = json.dumps(dict(moved.get(g.bot, {})), sort_keys=True, separators=(",", ":"))
            db.execute("INSERT INTO bot_history (bot, body) VALUES (?, ?)",
                       (g.bot, f'{g.entry_json()},"rating_change":{change}}}'))
            db.execute("DELETE FROM bot_history WHERE bot = ? AND id <= (SELECT id FROM bot_history"
                       " WHERE bot = ? ORDER BY id DESC LIMIT 1 OFFSET ?)", (g.bot, g.bot, HISTORY_KEPT))
        if group is not None and waiting:
            db.execute("INSERT INTO bot_pending (grp, body) VALUES (?, ?)", (group, counters_json(games)))
            return
        counters = [(g.bot, g.stats, g.h2h) for g in games]
        if group is not None:
            held = db.execute("SELECT body FROM bot_pending WHERE grp = ? ORDER BY id", (group,)).fetchall()
            for (body,) in held:
                counters += counters_of_json(body)
            db.execute("DELETE FROM bot_pending WHERE grp = ?", (group,))
        db.executemany("INSERT INTO bot_counters (bot, kind, name, value) VALUES (?, ?, ?, ?)"
                       " ON CONFLICT (bot, kind, name) DO UPDATE SET value = value + excluded.value",
                       [(bot, kind, name, n) for bot, stats, h2h in counters
                        for kind, table in (("s", stats), ("h", h2h)) for name, n in table.items()])

    @staticmethod
    def _games(db: sqlite3.Connection, plan: RatingPlan,
               match_id: str) -> list[tuple[str, str, float, str, tuple[str, str]]]:
        """The games writing this result counts, in the write's transaction: ``(a, b, a's score, game
        id, the players of a and b)``. None yet for a duplicate leg or table whose others are not all
        written (it is kept for them); the pair's game with the second leg; the quartet's games with
        its fourth table."""
        if plan.quartet is not None:
            quartet, k, scored, part = plan.quartet
            db.execute("INSERT OR REPLACE INTO quartet_tables (quartet, tbl, part) VALUES (?, ?, ?)",
                       (quartet, k, part.to_text()))
            rows = db.execute("SELECT part FROM quartet_tables WHERE quartet = ? ORDER BY tbl",
                              (quartet,)).fetchall()
            if len(rows) < 4:
                return []
            db.execute("DELETE FROM quartet_tables WHERE quartet = ?", (quartet,))
            parts = [Part.from_text(row[0]) for row in rows]
            scores = quartet_scores(parts, scored)
            players = quartet_players(parts, scored)
            return [(a, b, s, quartet_game_id(quartet, i), players[i]) for i, (a, b, s) in enumerate(scores)]
        if plan.leg is not None:
            pair, leg = plan.leg
            row = db.execute("SELECT leg FROM duplicate_legs WHERE pair = ?", (pair,)).fetchone()
            if row is None:  # the first leg written: kept until the other one
                db.execute("INSERT INTO duplicate_legs (pair, leg) VALUES (?, ?)", (pair, leg.to_text()))
                return []
            db.execute("DELETE FROM duplicate_legs WHERE pair = ?", (pair,))
            first = Leg.from_text(row[0])
            return [(plan.a, plan.b, duplicate_score(first, leg), match_id,
                     duplicate_players(first, leg, plan.a, plan.b))]
        return [(plan.a, plan.b, plan.score_a, match_id, plan.played_by)]

    @staticmethod
    def _count_versions(db: sqlite3.Connection, pool: str, a: str, b: str, score_a: float,
                        players: tuple[str, str]) -> None:
        """One game in the pool's version tables, as :func:`arena.ratings.versions.add_game` counts it."""
        if a == b:
            return
        for bot, me, other, score in ((a, players[0], players[1], score_a),
                                      (b, players[1], players[0], 1.0 - score_a)):
            if me == bot:
                continue  # no version: the bot's pair counts hold the game
            db.execute(_ADD_VERSION_GAMES, (pool, me, other, int(score > 0.5), int(score == 0.5),
                                            int(score < 0.5)))
            version = me[len(bot) + len(VERSION_JOIN):]
            if db.execute("SELECT 1 FROM pool_versions WHERE pool = ? AND bot = ? AND version = ?",
                          (pool, bot, version)).fetchone():
                continue
            db.execute("INSERT INTO pool_versions (pool, bot, seq, version) VALUES (?, ?, (SELECT"
                       " COALESCE(MAX(seq) + 1, 0) FROM pool_versions WHERE pool = ? AND bot = ?), ?)",
                       (pool, bot, pool, bot, version))
            kept = db.execute("SELECT version FROM pool_versions WHERE pool = ? AND bot = ? ORDER BY seq",
                              (pool, bot)).fetchall()
            if len(kept) > MAX_POOL_VERSIONS:  # the oldest one's games go to the bot's name
                EmbeddedBroker._fold(db, pool, bot, kept[0][0])

    @staticmethod
    def _fold(db: sqlite3.Connection, pool: str, bot: str, version: str) -> None:
        """:func:`arena.ratings.versions.fold`: the version's games leave the pool's version tables."""
        gone = f"{bot}{VERSION_JOIN}{version}"
        db.execute("DELETE FROM pool_versions WHERE pool = ? AND bot = ? AND version = ?",
                   (pool, bot, version))
        db.execute("DELETE FROM version_games WHERE pool = ? AND player = ?", (pool, gone))
        rows = db.execute("SELECT player, wins, draws, losses FROM version_games"
                          " WHERE pool = ? AND opponent = ?", (pool, gone)).fetchall()
        db.execute("DELETE FROM version_games WHERE pool = ? AND opponent = ?", (pool, gone))
        db.executemany(_ADD_VERSION_GAMES, [(pool, player, bot, w, d, l_) for player, w, d, l_ in rows])

    @staticmethod
    def _keep_summary(db: sqlite3.Connection, summary: ResultSummary) -> None:
        """The summary at the end of its tournament's log and at the head of its bots' recent matches."""
        body = summary.to_json()
        (seq,) = db.execute("SELECT COALESCE(MAX(seq) + 1, 0) FROM summaries WHERE tournament_id = ?",
                            (summary.tournament_id,)).fetchone()
        db.execute("INSERT INTO summaries (tournament_id, seq, match_id, body) VALUES (?, ?, ?, ?)",
                   (summary.tournament_id, seq, summary.match_id, body))
        for bot in dict.fromkeys(summary.seat_bots):  # a mixed result: each of its (up to 4) bots, once
            db.execute("INSERT INTO bot_matches (bot, match_id, body) VALUES (?, ?, ?)",
                       (bot, summary.match_id, body))
            db.execute("DELETE FROM bot_matches WHERE bot = ? AND id <= (SELECT id FROM bot_matches"
                       " WHERE bot = ? ORDER BY id DESC LIMIT 1 OFFSET ?)", (bot, bot, BOT_MATCHES_KEPT))

    def _count_game(self, db: sqlite3.Connection, pool: str, a: str, b: str,
                    score_a: float) -> dict[str, float]:
        """One game of ``a`` against ``b`` in ``pool``: the Elo, the pair counts and the history points;
        how each bot's rating moved."""
        ra, rb = (self._rating(db, pool, bot) for bot in (a, b))
        before = {a: ra, b: rb}
        if a == b:
            updates = [(a, ra)]  # a mirror match: one game, no rating change, no pair
        else:
            new_a, new_b = elo_update(ra, rb, score_a, self.elo_k)
            updates = [(b, new_b), (a, new_a)]
            (first, second), a_first = pair_key(a, b)
            score = score_a if a_first else 1.0 - score_a
            won, drawn, lost = int(score > 0.5), int(score == 0.5), int(score < 0.5)
            db.execute(
                "INSERT INTO pair_counts (pool, a, b, wins, draws, losses) VALUES (?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (pool, a, b) DO UPDATE SET wins = wins + excluded.wins,"
                " draws = draws + excluded.draws, losses = losses + excluded.losses",
                (pool, first, second, won, drawn, lost),
            )
        for bot, rating in updates:
            db.execute(
                "INSERT INTO pool_ratings (pool, bot, rating, games) VALUES (?, ?, ?, 1)"
                " ON CONFLICT (pool, bot) DO UPDATE SET rating = excluded.rating, games = games + 1",
                (pool, bot, rating),
            )  # (no RETURNING: it needs sqlite 3.35, and some Pythons bring an older one)
            (games,) = db.execute(
                "SELECT games FROM pool_ratings WHERE pool = ? AND bot = ?", (pool, bot)
            ).fetchone()
            if games % self.history_every == 0:
                db.execute("INSERT OR REPLACE INTO rating_history (pool, bot, games, rating)"
                           " VALUES (?, ?, ?, ?)", (pool, bot, games, rating))
                db.execute("DELETE FROM rating_history WHERE pool = ? AND bot = ? AND games <= ?",
                           (pool, bot, games - self.history_every * self.history_max))
        return {bot: rating - before[bot] for bot, rating in updates}

    @staticmethod
    def _rating(db: sqlite3.Connection, pool: str, bot: str) -> float:
        row = db.execute("SELECT rating FROM pool_ratings WHERE pool = ? AND bot = ?", (pool, bot)).fetchone()
        return INITIAL_RATING if row is None else float(row[0])

    def get_result_json(self, match_id: str) -> str | None:
        with self._errors(), self._tx(write=False) as db:
            row = db.execute("SELECT body FROM results WHERE match_id = ?", (match_id,)).fetchone()
        return None if row is None else str(row[0])

    def has_result(self, match_id: str) -> bool:
        with self._errors(), self._tx(write=False) as db:
            return db.execute("SELECT 1 FROM results WHERE match_id = ?", (match_id,)).fetchone() is not None

    def results_written(self, match_ids: Sequence[str]) -> set[str]:
        wanted = list(dict.fromkeys(match_ids))
        found: set[str] = set()
        with self._errors(), self._tx(write=False) as db:
            for at in range(0, len(wanted), 500):  # below sqlite's bound on a statement's parameters
                part = wanted[at:at + 500]
                found.update(row[0] for row in db.execute(
                    f"SELECT match_id FROM results WHERE match_id IN ({', '.join('?' * len(part))})", part))
        return found

    def results(self, tournament_id: str) -> list[MatchResult]:
        """The tournament's results, ordered by match id."""
        with self._errors(), self._tx(write=False) as db:
            rows = db.execute(
                "SELECT body FROM results WHERE tournament_id = ? ORDER BY match_id", (tournament_id,)
            ).fetchall()
        return [MatchResult.from_json(body) for (body,) in rows]

    def summaries(self, tournament_id: str, start: int = 0) -> list[ResultSummary]:
        if start < 0:
            raise ValueError(f"start must be 0 or more, not {start}")
        with self._errors(), self._tx(write=False) as db:
            rows = db.execute("SELECT body FROM summaries WHERE tournament_id = ? AND seq >= ? ORDER BY seq",
                              (tournament_id, start)).fetchall()
        return [ResultSummary.from_json(body) for (body,) in rows]

    def bot_matches(self, bot: str, limit: int) -> list[ResultSummary]:
        limit = min(limit, BOT_MATCHES_KEPT)
        if limit <= 0:
            return []
        with self._errors(), self._tx(write=False) as db:
            rows = db.execute("SELECT body FROM bot_matches WHERE bot = ? ORDER BY id DESC LIMIT ?",
                              (bot, limit)).fetchall()
        out = []
        for (body,) in rows:
            try:
                out.append(ResultSummary.from_json(body))
            except TournamentError as e:
                log.error("a recent match of bot %r is unreadable: %s", bot[:80], e)
        return out

    def bot_history(self, bot: str, start: int = 0, count: int = HISTORY_KEPT) -> list[dict[str, Any]]:
        if start < 0 or count <= 0:
            return []
        with self._errors(), self._tx(write=False) as db:
            rows = db.execute("SELECT body FROM bot_history WHERE bot = ? ORDER BY id DESC LIMIT ? OFFSET ?",
                              (bot, min(count, HISTORY_KEPT), start)).fetchall()
        return history_entries(bot, [body for (body,) in rows])

    def bot_counters(self, bot: str) -> tuple[dict[str, int], dict[str, int]]:
        with self._errors(), self._tx(write=False) as db:
            rows = db.execute("SELECT kind, name, value FROM bot_counters WHERE bot = ?", (bot,)).fetchall()
        stats = {name: int(v) for kind, name, v in rows if kind == "s"}
        return stats, {name: int(v) for kind, name, v in rows if kind == "h"}

    def note_bt_history(self, pool: str, games: int, points: Mapping[str, tuple[int, float, float, float]],
                        every: int) -> bool:
        with self._errors(), self._tx() as db:
            row = db.execute("SELECT games FROM bt_marks WHERE pool = ?", (pool,)).fetchone()
            if row is not None and games - int(row[0]) < every:
                return False
            db.execute("INSERT OR REPLACE INTO bt_marks (pool, games) VALUES (?, ?)", (pool, games))
            for bot, (bot_games, rating, low, high) in points.items():
                db.execute("INSERT OR REPLACE INTO bt_history (pool, bot, games, bot_games, rating, low,"
                           " high) VALUES (?, ?, ?, ?, ?, ?, ?)",
                           (pool, bot, games, bot_games, rating, low, high))
                db.execute("DELETE FROM bt_history WHERE pool = ? AND bot = ? AND games <= (SELECT games FROM"
                           " bt_history WHERE pool = ? AND bot = ? ORDER BY games DESC LIMIT 1 OFFSET ?)",
                           (pool, bot, pool, bot, BT_HISTORY_KEPT))
        return True

    def bt_history(self, pool: str, bot: str) -> list[tuple[int, int, float, float, float]]:
        with self._errors(), self._tx(write=False) as db:
            rows = db.execute("SELECT games, bot_games, rating, low, high FROM bt_history"
                              " WHERE pool = ? AND bot = ? ORDER BY games", (pool, bot)).fetchall()
        return [(int(g), int(n), float(r), float(lo), float(hi)) for g, n, r, lo, hi in rows]

    def result_counts(self, ids: Sequence[str]) -> dict[str, int]:
        wanted = list(dict.fromkeys(ids))
        counts = dict.fromkeys(wanted, 0)
        with self._errors(), self._tx(write=False) as db:
            for at in range(0, len(wanted), 500):  # under SQLite's oldest limit of 999 parameters
                chunk = wanted[at:at + 500]
                marks = ",".join("?" * len(chunk))
                counts.update(db.execute(f"SELECT tournament_id, COUNT(*) FROM results WHERE tournament_id "
                                         f"IN ({marks}) GROUP BY tournament_id", chunk).fetchall())
        return counts

    def pools(self) -> list[str]:
        with self._errors(), self._tx(write=False) as db:
            return [p for (p,) in db.execute(
                "SELECT pool FROM pool_ratings UNION SELECT pool FROM mixed_ratings ORDER BY pool")]

    # mixed partnerships
    def apply_mixed(self, pool: str) -> int:
        """Rate the pool's queued games, in order, in transactions that also delete them."""
        rated = 0
        while True:
            with self._errors(), self._tx() as db:
                rows = db.execute("SELECT seq, game FROM mixed_queue WHERE pool = ? ORDER BY seq LIMIT ?",
                                  (pool, MIXED_BATCH)).fetchall()
                if not rows:
                    return rated
                games = [MixedGame.from_text(text) for _, text in rows]
                bots = sorted({bot for g in games for bot in (*g.side_a, *g.side_b)})
                marks = ",".join("?" * len(bots))
                kept = dict(db.execute(
                    f"SELECT bot, state FROM mixed_ratings WHERE pool = ? AND bot IN ({marks})",
                    (pool, *bots)).fetchall())
                ratings = MixedRatings(states={bot: MixedState.from_text(text) for bot, text in kept.items()})
                for game in games:
                    try:
                        ratings.apply(game)
                    except ValueError as e:  # a game no openskill can rate must not hold up the others
                        log.error("pool %s: mixed game %r skipped: %s", pool, game.game_id, e)
                db.executemany(
                    "INSERT INTO mixed_ratings (pool, bot, state) VALUES (?, ?, ?)"
                    " ON CONFLICT (pool, bot) DO UPDATE SET state = excluded.state",
                    [(pool, bot, ratings.state(bot).to_text()) for bot in bots])
                db.execute("DELETE FROM mixed_queue WHERE pool = ? AND seq <= ?", (pool, rows[-1][0]))
                rated += len(games)

    def mixed_ratings(self, pool: str) -> dict[str, MixedState]:
        with self._errors(), self._tx(write=False) as db:
            rows = db.execute("SELECT bot, state FROM mixed_ratings WHERE pool = ? ORDER BY bot", (pool,))
            return {bot: MixedState.from_text(text) for bot, text in rows}

    def mixed_pending(self, pool: str) -> int:
        with self._errors(), self._tx(write=False) as db:
            (n,) = db.execute("SELECT COUNT(*) FROM mixed_queue WHERE pool = ?", (pool,)).fetchone()
            return int(n)

    def pool_ratings(self, pool: str) -> dict[str, tuple[float, int]]:
        with self._errors(), self._tx(write=False) as db:
            rows = db.execute(
                "SELECT bot, rating, games FROM pool_ratings WHERE pool = ? ORDER BY bot", (pool,)
            ).fetchall()
        return {bot: (float(rating), int(games)) for bot, rating, games in rows}

    def pair_counts(self, pool: str) -> dict[tuple[str, str], PairCount]:
        with self._errors(), self._tx(write=False) as db:
            rows = db.execute(
                "SELECT a, b, wins, draws, losses FROM pair_counts WHERE pool = ?", (pool,)
            ).fetchall()
        return counts_from_rows(rows)

    def version_counts(self, pool: str) -> VersionCounts:
        with self._errors(), self._tx(write=False) as db:
            rows = db.execute("SELECT player, opponent, wins, draws, losses FROM version_games"
                              " WHERE pool = ?", (pool,)).fetchall()
            order = db.execute("SELECT bot, version FROM pool_versions WHERE pool = ? ORDER BY bot, seq",
                               (pool,)).fetchall()
        games: dict[str, dict[str, PairCount]] = {}
        for player, opponent, w, d, l_ in rows:
            games.setdefault(player, {})[opponent] = PairCount(int(w), int(d), int(l_))
        versions: dict[str, tuple[str, ...]] = {}
        for bot, version in order:
            versions[bot] = (*versions.get(bot, ()), version)
        return VersionCounts(games, versions)

    def rating_history(self, pool: str, bot: str) -> list[tuple[int, float]]:
        with self._errors(), self._tx(write=False) as db:
            stored = db.execute(
                "SELECT games, rating FROM rating_history WHERE pool = ? AND bot = ? ORDER BY games",
                (pool, bot),
            ).fetchall()
            latest = db.execute(
                "SELECT games, rating FROM pool_ratings WHERE pool = ? AND bot = ?", (pool, bot)
            ).fetchone()
        return history_points([(int(g), float(r)) for g, r in stored],
                              None if latest is None else (int(latest[0]), float(latest[1])))

    # tournaments
    def put_tournament(self, spec: TournamentSpec) -> bool:
        with self._errors(), self._tx() as db:
            cur = db.execute(
                "INSERT OR IGNORE INTO tournaments (id, spec, state) VALUES (?, ?, ?)",
                (spec.tournament_id, json.dumps(spec.to_dict(), sort_keys=True), TournamentState.CREATED),
            )
            return cur.rowcount == 1

    def forget_tournament(self, tournament_id: str) -> bool:
        pool = tournament_pool(tournament_id)
        with self._errors(), self._tx() as db:
            row = db.execute("SELECT state FROM tournaments WHERE id = ?", (tournament_id,)).fetchone()
            if row is None or TournamentState(row[0]).is_open:
                return False
            if db.execute("SELECT 1 FROM jobs WHERE tournament_id = ? LIMIT 1", (tournament_id,)).fetchone():
                return False  # a match of it may still be written
            for table in ("results", "summaries"):
                db.execute(f"DELETE FROM {table} WHERE tournament_id = ?", (tournament_id,))
            for table in ("tournaments", "tournament_endings"):
                db.execute(f"DELETE FROM {table} WHERE id = ?", (tournament_id,))
            for table in ("pool_ratings", "pair_counts", "rating_history", "mixed_queue", "mixed_ratings"):
                db.execute(f"DELETE FROM {table} WHERE pool = ?", (pool,))
            # its pairs' first legs left waiting, and its enqueue markers: their names start with its id
            # (compared, not LIKE'd: an id may hold '_', LIKE's wildcard)
            db.execute("DELETE FROM duplicate_legs WHERE substr(pair, 1, ?) = ?",
                       (len(tournament_id) + 1, f"{tournament_id}-"))
            db.execute("DELETE FROM enqueue_markers WHERE substr(key, 1, ?) = ?",
                       (len(tournament_id) + 1, f"{tournament_id}/"))
            for group in (f"pair/{tournament_id}-", f"quartet/{tournament_id}-"):  # counters held for them
                db.execute("DELETE FROM bot_pending WHERE substr(grp, 1, ?) = ?", (len(group), group))
        return True

    # scheduled tournaments
    def put_schedule(self, schedule_id: str, text: str) -> bool:
        with self._errors(), self._tx() as db:
            cur = db.execute("INSERT OR IGNORE INTO schedules (id, spec) VALUES (?, ?)", (schedule_id, text))
            return cur.rowcount == 1

    def schedules(self) -> list[tuple[str, str, int]]:
        with self._errors(), self._tx(write=False) as db:
            rows = db.execute("SELECT id, spec, last FROM schedules ORDER BY id").fetchall()
        return [(str(sid), str(text), int(last)) for sid, text, last in rows]

    def delete_schedule(self, schedule_id: str) -> bool:
        with self._errors(), self._tx() as db:
            return db.execute("DELETE FROM schedules WHERE id = ?", (schedule_id,)).rowcount == 1

    # the ladders
    def put_ladder(self, pool: str, text: str) -> None:
        with self._errors(), self._tx() as db:
            db.execute("INSERT INTO ladders (pool, setting) VALUES (?, ?) "
                       "ON CONFLICT (pool) DO UPDATE SET setting = excluded.setting", (pool, text))

    def ladders(self) -> dict[str, str]:
        with self._errors(), self._tx(write=False) as db:
            rows = db.execute("SELECT pool, setting FROM ladders ORDER BY pool").fetchall()
        return {str(pool): str(text) for pool, text in rows}

    def ladder_add(self, pool: str, bot: str) -> bool:
        with self._errors(), self._tx() as db:
            db.execute("DELETE FROM ladder_removed WHERE pool = ? AND bot = ?", (pool, bot))
            cur = db.execute("INSERT OR IGNORE INTO ladder_bots (pool, bot) VALUES (?, ?)", (pool, bot))
            return cur.rowcount == 1

    def ladder_remove(self, pool: str, bot: str) -> bool:
        with self._errors(), self._tx() as db:
            db.execute("INSERT OR IGNORE INTO ladder_removed (pool, bot) VALUES (?, ?)", (pool, bot))
            cur = db.execute("DELETE FROM ladder_bots WHERE pool = ? AND bot = ?", (pool, bot))
            return cur.rowcount == 1

    def ladder_join(self, pool: str, bot: str) -> bool:
        with self._errors(), self._tx() as db:  # BEGIN IMMEDIATE: the mark read and the insert as one
            if db.execute("SELECT 1 FROM ladder_removed WHERE pool = ? AND bot = ?", (pool, bot)).fetchone():
                return False
            cur = db.execute("INSERT OR IGNORE INTO ladder_bots (pool, bot) VALUES (?, ?)", (pool, bot))
            return cur.rowcount == 1

    def ladder_bots(self, pool: str) -> list[str]:
        with self._errors(), self._tx(write=False) as db:
            rows = db.execute("SELECT bot FROM ladder_bots WHERE pool = ? ORDER BY bot", (pool,)).fetchall()
        return [str(bot) for (bot,) in rows]

    def note_ladder_picks(self, pool: str, picks: Sequence[str]) -> None:
        if not picks:
            return
        with self._errors(), self._tx() as db:
            db.executemany("INSERT INTO ladder_picks (pool, text) VALUES (?, ?)", [(pool, p) for p in picks])
            db.execute("DELETE FROM ladder_picks WHERE pool = ? AND seq NOT IN (SELECT seq FROM ladder_picks "
                       "WHERE pool = ? ORDER BY seq DESC LIMIT ?)", (pool, pool, LADDER_PICKS_KEPT))

    def ladder_picks(self, pool: str) -> list[str]:
        with self._errors(), self._tx(write=False) as db:
            rows = db.execute("SELECT text FROM ladder_picks WHERE pool = ? ORDER BY seq DESC LIMIT ?",
                              (pool, LADDER_PICKS_KEPT)).fetchall()
        return [str(text) for (text,) in rows]

    def ladder_conducts(self, bots: Sequence[str]) -> dict[str, str]:
        out: dict[str, str] = {}
        with self._errors(), self._tx(write=False) as db:
            for k in range(0, len(bots), 500):  # sqlite's bound on a statement's parameters
                chunk = list(bots[k:k + 500])
                marks = ",".join("?" * len(chunk))
                rows = db.execute(f"SELECT bot, text FROM ladder_conduct WHERE bot IN ({marks})", chunk)
                out.update((str(bot), str(text)) for bot, text in rows.fetchall())
        return out

    def swap_ladder_conduct(self, bot: str, text: str, expect: str) -> bool:
        with self._errors(), self._tx() as db:  # BEGIN IMMEDIATE: the read and the write as one
            row = db.execute("SELECT text FROM ladder_conduct WHERE bot = ?", (bot,)).fetchone()
            if (str(row[0]) if row else "") != expect:
                return False
            if text:
                db.execute("INSERT INTO ladder_conduct (bot, text) VALUES (?, ?) "
                           "ON CONFLICT (bot) DO UPDATE SET text = excluded.text", (bot, text))
            else:
                db.execute("DELETE FROM ladder_conduct WHERE bot = ?", (bot,))
            return True

    def add_occurrence(self, schedule_id: str, text: str, at: int, spec: TournamentSpec) -> bool:
        with self._errors(), self._tx() as db:  # BEGIN IMMEDIATE: one writer of the file at a time
            row = db.execute("SELECT spec, last FROM schedules WHERE id = ?", (schedule_id,)).fetchone()
            if row is None or row[0] != text or int(row[1]) >= at:
                return False
            db.execute("UPDATE schedules SET last = ? WHERE id = ?", (int(at), schedule_id))
            cur = db.execute(
                "INSERT OR IGNORE INTO tournaments (id, spec, state) VALUES (?, ?, ?)",
                (spec.tournament_id, json.dumps(spec.to_dict(), sort_keys=True), TournamentState.CREATED),
            )
            return cur.rowcount == 1

    def get_tournament(self, tournament_id: str) -> tuple[TournamentSpec, TournamentState] | None:
        with self._errors(), self._tx(write=False) as db:
            row = db.execute("SELECT spec, state FROM tournaments WHERE id = ?", (tournament_id,)).fetchone()
        return None if row is None else stored_tournament(tournament_id, row[0], row[1])

    def get_tournaments(self, ids: Sequence[str]) -> dict[str, tuple[TournamentSpec, TournamentState]]:
        wanted = list(dict.fromkeys(ids))
        rows = []
        with self._errors(), self._tx(write=False) as db:
            for at in range(0, len(wanted), 500):  # under SQLite's oldest limit of 999 parameters
                chunk = wanted[at:at + 500]
                marks = ",".join("?" * len(chunk))
                rows += db.execute(f"SELECT id, spec, state FROM tournaments WHERE id IN ({marks})",
                                   chunk).fetchall()
        return {tid: stored_tournament(tid, spec, state) for tid, spec, state in rows}

    def set_tournament_state(
        self, tournament_id: str, state: TournamentState, *, expect: TournamentState | None = None,
        reason: str = "",
    ) -> bool:
        state = TournamentState(state)
        with self._errors(), self._tx() as db:
            row = db.execute("SELECT state FROM tournaments WHERE id = ?", (tournament_id,)).fetchone()
            if row is None or (expect is not None and row[0] != TournamentState(expect)):
                return False
            db.execute("UPDATE tournaments SET state = ? WHERE id = ?", (state, tournament_id))
            if TournamentState(row[0]).is_open and not state.is_open:  # it ends now
                now = self._clock()
                if state is TournamentState.CANCELLED:  # its waiting jobs go; those held, with their nodes
                    for (row_id,) in db.execute("SELECT id FROM jobs WHERE tournament_id = ?"
                                                " AND state = 'queued'", (tournament_id,)).fetchall():
                        self._delete_job(db, row_id)
                db.execute("INSERT OR REPLACE INTO tournament_endings (id, ended_at, ended_reason)"
                           " VALUES (?, ?, ?)", (tournament_id, now, reason))
                self._reveal_if_over(db, tournament_id, REVEALED_AT_ONCE, now)
            return True

    def tournament_ending(self, tournament_id: str) -> Ending:
        with self._errors(), self._tx(write=False) as db:
            row = db.execute("SELECT ended_at, ended_reason, revealed_at, revealed_reason FROM"
                             " tournament_endings WHERE id = ?", (tournament_id,)).fetchone()
        if row is None:
            return Ending()
        return Ending(float(row[0]), str(row[1]), float(row[2] or 0.0), str(row[3] or ""))

    def tournament_states(self, ids: Sequence[str]) -> dict[str, TournamentState]:
        wanted = list(dict.fromkeys(ids))
        out: dict[str, TournamentState] = {}
        with self._errors(), self._tx(write=False) as db:
            for at in range(0, len(wanted), 500):  # under SQLite's oldest limit of 999 parameters
                chunk = wanted[at:at + 500]
                marks = ",".join("?" * len(chunk))
                rows = db.execute(f"SELECT id, state FROM tournaments WHERE id IN ({marks})", chunk)
                for tid, state in rows:
                    try:
                        out[tid] = TournamentState(state)
                    except ValueError:
                        log.error("tournament %r has an unknown state %r", tid[:80], state)
        return out

    def list_tournaments(self) -> list[str]:
        """Every tournament id, in creation order."""
        with self._errors(), self._tx(write=False) as db:
            return [tid for (tid,) in db.execute("SELECT id FROM tournaments ORDER BY seq").fetchall()]

    def pending_count(self, tournament_id: str | None = None) -> int:
        with self._errors(), self._tx(write=False) as db:
            if tournament_id is None:
                cur = db.execute("SELECT COUNT(*) FROM jobs")
            else:
                cur = db.execute("SELECT COUNT(*) FROM jobs WHERE tournament_id = ?", (tournament_id,))
            row = cur.fetchone()
        return int(row[0])

    # the cluster
    def heartbeat(self, node_id: str, address: str, ttl_s: float, bots: Sequence[str] = ()) -> None:
        now = self._clock()
        with self._errors(), self._tx() as db:
            db.execute(
                "INSERT INTO nodes (id, address, expires) VALUES (?, ?, ?) "
                "ON CONFLICT(id) DO UPDATE SET address = excluded.address, expires = excluded.expires",
                (node_id, address, now + ttl_s),
            )
            db.execute("DELETE FROM node_bots WHERE node_id = ?", (node_id,))
            db.executemany("INSERT OR IGNORE INTO node_bots (node_id, bot) VALUES (?, ?)",
                           [(node_id, b) for b in bots])
            db.executemany("INSERT OR REPLACE INTO bot_presence (bot, seen) VALUES (?, ?)",
                           [(b, now) for b in bots])

    def live_nodes(self) -> dict[str, str]:
        with self._errors(), self._tx() as db:
            self._forget_dead_nodes(db)
            return {i: a for i, a in db.execute("SELECT id, address FROM nodes ORDER BY id")}

    def _forget_dead_nodes(self, db: sqlite3.Connection) -> None:
        db.execute("DELETE FROM nodes WHERE expires < ?", (self._clock(),))
        db.execute("DELETE FROM node_bots WHERE node_id NOT IN (SELECT id FROM nodes)")

    def present_bots(self) -> set[str]:
        with self._errors(), self._tx() as db:
            self._forget_dead_nodes(db)
            return {b for (b,) in db.execute("SELECT DISTINCT bot FROM node_bots")}

    def absent_since(self, bot: str) -> float:
        with self._errors(), self._tx() as db:
            db.execute("INSERT OR IGNORE INTO bot_presence (bot, seen) VALUES (?, ?)", (bot, self._clock()))
            row = db.execute("SELECT seen FROM bot_presence WHERE bot = ?", (bot,)).fetchone()
        return float(row[0])

    def add_bot(self, name: str, entry_json: str) -> bool:
        with self._errors(), self._tx() as db:
            cur = db.execute("INSERT OR IGNORE INTO bots (name, entry) VALUES (?, ?)", (name, entry_json))
            added = cur.rowcount == 1
            if added:
                self._keep_notice(db, BOT_NOTICE, name)
        if added:
            self._wake.bump()
        return added

    def replace_bot(self, name: str, entry_json: str, expect: str | None = None) -> bool:
        with self._errors(), self._tx() as db:
            if expect is not None:
                row = db.execute("SELECT entry FROM bots WHERE name = ?", (name,)).fetchone()
                if row is None or row[0] != expect:
                    return False
            db.execute("INSERT OR REPLACE INTO bots (name, entry) VALUES (?, ?)", (name, entry_json))
            self._keep_notice(db, BOT_NOTICE, name)
        self._wake.bump()
        return True

    def get_bots(self, names: Sequence[str]) -> dict[str, str]:
        wanted = list(dict.fromkeys(names))
        out: dict[str, str] = {}
        with self._errors(), self._tx(write=False) as db:
            for i in range(0, len(wanted), 500):
                chunk = wanted[i:i + 500]
                marks = ",".join("?" * len(chunk))
                out.update(db.execute(f"SELECT name, entry FROM bots WHERE name IN ({marks})", chunk))
        return out

    def add_invite(self, code_sha256: str) -> None:
        with self._errors(), self._tx() as db:
            db.execute("INSERT OR IGNORE INTO invites (code_sha256) VALUES (?)", (code_sha256,))

    def take_invite(self, code_sha256: str) -> bool:
        with self._errors(), self._tx() as db:
            cur = db.execute("DELETE FROM invites WHERE code_sha256 = ?", (code_sha256,))
            return cur.rowcount == 1

    def bot_entries(self) -> list[str]:
        with self._errors(), self._tx(write=False) as db:
            return [row[0] for row in db.execute("SELECT entry FROM bots ORDER BY name")]

    # notices: a table numbered in order; a cursor is the number of the last notice read
    @staticmethod
    def _keep_notice(db: sqlite3.Connection, kind: str, data: str) -> None:
        cur = db.execute("INSERT INTO notices (kind, data) VALUES (?, ?)", (kind, data))
        db.execute("DELETE FROM notices WHERE seq <= ?", ((cur.lastrowid or 0) - NOTICES_KEPT,))

    def publish_notice(self, kind: str, data: str = "") -> None:
        with self._errors(), self._tx() as db:
            self._keep_notice(db, kind, data)
        self._wake.bump()

    def notice_cursor(self) -> str:
        with self._errors(), self._tx(write=False) as db:
            return str(db.execute("SELECT COALESCE(MAX(seq), 0) FROM notices").fetchone()[0])

    def notices(self, cursor: str, timeout: float) -> NoticeBatch:
        try:
            seq = int(cursor)
        except ValueError:
            raise ValueError(f"bad notice cursor {cursor[:80]!r}") from None
        wake = self._wake
        deadline = time.monotonic() + timeout
        while True:
            with wake.cond:
                seen = wake.generation
            with self._errors(), self._tx(write=False) as db:
                rows = db.execute("SELECT seq, kind, data FROM notices WHERE seq > ? ORDER BY seq LIMIT ?",
                                  (seq, NOTICES_READ)).fetchall()
            if rows:
                numbers = [seq] + [r[0] for r in rows]
                gap = any(b != a + 1 for a, b in itertools.pairwise(numbers))
                return NoticeBatch(str(rows[-1][0]), tuple(Notice(kind, data) for _, kind, data in rows), gap)
            left = deadline - time.monotonic()
            if left <= 0:
                return NoticeBatch(cursor)
            with wake.cond:  # a notice of this process wakes us at once; another process's, at the poll
                if wake.generation == seen:
                    wake.cond.wait(min(left, NOTICE_POLL_S))

    def close(self) -> None:
        with self._lock:
            if not self._closed:
                self._closed = True
                self._db.close()
