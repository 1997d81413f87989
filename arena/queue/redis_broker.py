"""The Redis backend of the Broker: what lets many referee nodes share one queue.

Jobs wait in sorted sets, one of all jobs waiting and one per bot, scored by
their place in the queue; a job's JSON, its bots and its deliveries are a hash
of its own; a job a node holds is in the sorted set of leases, scored by when
its lease runs out (Redis's own clock). :mod:`arena.queue.redis_scripts` says
each key. Every step on the jobs is one script:

- ``claim_batch``: the leases run out go back to the queue (or to the dead
  letters, past ``max_deliveries``), then the jobs this node can seat now
  (its bots' free seats given) are taken, first come first served, for all its
  free slots at once; a job whose tournament is cancelled or whose result
  exists is dropped. It says when the earliest lease runs out, so that an idle
  node sleeps until then, or until a ``jobs`` notice (published by the same
  scripts that make jobs wait: enqueue, release, a lease run out) or one of its
  own bots' seats frees (:mod:`arena.node.worker`).
- ``renew_many``: the leases still held by the same node at the same delivery
  run ``lease_s`` from now; one script for every running match of a node.
- ``finish``: the result's write (below) and the job's removal, one script a
  result, the results of a node that finish together in one pipeline: one
  round trip.
- ``ack``: the job removed for good (a cancelled tournament's, a forfeit's).
- ``release``: the job waits again at its place; a release is not a failed
  delivery, so the next claim gets the same delivery number (a node that lacks
  the bots does not push the job toward the dead letters).
- A queue an older version kept (a stream read through a consumer group) is
  moved into these keys when a broker opens on it.
- ``write_result``: one Lua script writes the result, indexes it and counts
  its game in each of its rating pools (the Elo, the pair counts, the history
  points), or does nothing if the result exists. The pools and the bots'
  sides are worked out in Python first (:class:`~arena.queue.broker.RatingPlan`,
  from the tournament's spec, which never changes). A mirror duplicate pair's
  first leg written is kept under ``leg:<pair>``; the second finds it, counts
  the pair's one game and deletes it, in the same script, so two nodes writing
  the two legs at once count the pair once. A field duplicate quartet's tables
  are kept in the hash ``quartet:<quartet>``; the script that adds the fourth
  counts the quartet's games and deletes it, so four nodes writing the four
  tables at once count them once. The same script appends the
  result's summary to its tournament's log and pushes it on its bots' lists
  of recent matches (each distinct bot of its four seats once), and appends a
  game of mixed partnerships to its pools' to-rate queues instead of counting
  it (:mod:`arena.queue.broker`): one script call a result. A result whose
  tournament was cancelled first is refused by the same script, writing
  nothing (:class:`~arena.queue.broker.TournamentCancelled`).
- ``set_tournament_state``: one script; ending a tournament keeps when and why
  in its hash, and reveals its secret there and then if its pending counter is
  0; otherwise the drop (ack, cancelled or dead-lettered job) that takes the
  counter to 0 does.
- Data loss: a random mark (``epoch``) is set once; a node that finds it gone
  (its heartbeat looks every few seconds, and a read of tournaments, results or
  ratings that comes back empty looks at once) raises
  :class:`~arena.queue.broker.BrokerDataLost` from then on for every such read. A
  tournament is stored only where the mark is the one the node started on (the
  same script looks), so a create refused for the loss leaves nothing behind.
- ``apply_mixed``: rates a pool's queued mixed games under WATCH of its rating
  hash, then writes the ratings and trims the queue in one MULTI.
- ``summaries``: LRANGE of the log from the reader's cursor, with the log's
  length and the results index's size in the same round trip. A tournament
  with more results than summaries has results written by an older version,
  which kept none: they are summarized from their records once (per process),
  appended by a script that checks the log did not move meanwhile.
- notices (:mod:`arena.queue.broker`): a stream of entries numbered by a
  counter (``seq``, ``kind``, ``data``), trimmed to about ``NOTICES_KEPT``,
  each read with a blocking XREAD from the reader's cursor (its last entry id
  and number: a number that does not follow is a gap). ``add_bot`` and
  ``replace_bot`` (a compare-and-set with ``expect``) are one script each,
  writing the entry and its notice together.

Leases run out by Redis's own clock, so the nodes' clocks do not matter; each
claim's ``lease_s`` is the holder's own. Every method blocks on the network: an asyncio node
calls them through ``asyncio.to_thread``. One ``RedisBroker`` is safe to share
between threads (redis-py's pool hands each command its own connection).
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import secrets
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import replace
from typing import Any, NoReturn, cast
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import redis
import redis.exceptions

from arena.queue.broker import (
    BOT_MATCHES_KEPT,
    BOT_NOTICE,
    BT_HISTORY_KEPT,
    LADDER_PICKS_KEPT,
    MIXED_BATCH,
    NOTICES_KEPT,
    NOTICES_READ,
    SCAN_PER_BOT,
    Broker,
    BrokerDataLost,
    BrokerError,
    BrokerUnavailable,
    Claim,
    ClaimBatch,
    Finished,
    LeaseLost,
    Notice,
    NoticeBatch,
    TournamentCancelled,
    Write,
    history_entries,
    history_group,
    stored_tournament,
    summary_of,
)
from arena.queue.keys import DEFAULT_PREFIX, GAMES_FIELD, H2H_FIELD, MIXED_APPLIED, RATING_FIELD, Keys
from arena.queue.redis_scripts import (
    LUA_ADD_BOT,
    LUA_ADD_OCCURRENCE,
    LUA_ADD_SUMMARIES,
    LUA_CLAIM,
    LUA_DELETE_SCHEDULE,
    LUA_DROP,
    LUA_ENQUEUE,
    LUA_FORGET_TOURNAMENT,
    LUA_LADDER_JOIN,
    LUA_MIGRATE,
    LUA_NOTE_BT,
    LUA_NOTICE,
    LUA_PUT_SCHEDULE,
    LUA_PUT_TOURNAMENT,
    LUA_RELEASE,
    LUA_RENEW,
    LUA_REPLACE_BOT,
    LUA_SET_STATE,
    LUA_SWAP_CONDUCT,
    LUA_WRITE_RESULT,
)
from arena.queue.sentinel import WAIT_TIMEOUT_S, SentinelSet, connect, replicated
from arena.ratings import PairCount, counts_from_rows, history_points, tournament_pool
from arena.ratings.elo import INITIAL_RATING
from arena.ratings.mixed import MixedGame, MixedRatings, MixedState
from arena.ratings.versions import VersionCounts, player_of
from arena.tournament import MatchJob, MatchResult, TournamentError, TournamentSpec, TournamentState
from arena.tournament.botstats import HISTORY_KEPT, counters_json
from arena.tournament.jobs import REVEALED_AT_ONCE, REVEALED_ONCE_OVER, Ending
from arena.tournament.summary import ResultSummary

log = logging.getLogger(__name__)

DEFAULT_URL = "redis://127.0.0.1:6379/0"

_ENQUEUE_CHUNK = 1000  # jobs per script call for plain enqueue (enqueue_once is one call)
_READ_CHUNK = 500  # results fetched per MGET
_MIGRATE_CHUNK = 500  # jobs of an older version's queue moved per script call
#: what the result script's first answer says
_WRITES = {0: Write.DUPLICATE, 1: Write.WRITTEN, 2: Write.CANCELLED}


def redact(url: str) -> str:
    """The URL without its password, for messages and logs: in its user part, or given as the
    ``password`` query parameter (redis-py takes either)."""
    parts = urlsplit(url)
    if parts.password is not None:
        host = parts.netloc.rpartition("@")[2]
        parts = parts._replace(netloc=f"{parts.username or ''}:***@{host}")
    if parts.query:
        query = [(k, "***" if k.lower() == "password" else v)
                 for k, v in parse_qsl(parts.query, keep_blank_values=True)]
        parts = parts._replace(query=urlencode(query, safe="*"))
    return urlunsplit(parts)


def _reason(error: Exception) -> str:
    text = str(error)
    if "refused" in text.lower():
        return "connection refused"
    if isinstance(error, redis.exceptions.TimeoutError) or "timed out" in text.lower():
        return "timed out"
    return re.sub(r"^Error \d+ ", "", text).rstrip(".") or type(error).__name__


class RedisBroker(Broker):
    """The Broker on a Redis server (7 or later): see the module docstring."""

    def __init__(
        self,
        url: str = DEFAULT_URL,
        prefix: str = DEFAULT_PREFIX,
        max_deliveries: int = 5,
        elo_k: float = 16.0,
        *,
        socket_timeout: float = 10.0,
        sentinel: SentinelSet | None = None,
        wait_replicas: int = 0,
        wait_timeout_s: float = WAIT_TIMEOUT_S,
    ) -> None:
        """On the server at ``url``, or on the primary the sentinels of ``sentinel`` name (``url``
        is then unused). ``wait_replicas``: a result counts once that many replicas hold it
        (:func:`~arena.queue.sentinel.replicated`), waiting ``wait_timeout_s`` at most."""
        if max_deliveries < 1:
            raise ValueError(f"max_deliveries must be at least 1, not {max_deliveries}")
        if wait_replicas < 0 or wait_timeout_s <= 0:
            raise ValueError(f"wait_replicas must be 0 or more and wait_timeout_s positive, not "
                             f"{wait_replicas} and {wait_timeout_s}")
        super().__init__()
        self.url = url if sentinel is None else sentinel.describe()
        self.wait_replicas = wait_replicas
        self.wait_timeout_s = wait_timeout_s
        self.keys = Keys(prefix)
        self.max_deliveries = max_deliveries
        self.elo_k = elo_k
        self._closed = False
        #: what check_data said once it found the data lost ("": not lost): a loss is for good, so
        #: every later read says so at once, without asking Redis (restart the node)
        self._lost = ""
        try:
            self._redis = connect(
                url,
                sentinel,
                decode_responses=True,
                socket_timeout=socket_timeout,
                socket_connect_timeout=min(socket_timeout, 5.0),
            )
        except ValueError as e:
            raise BrokerError(f"bad Redis URL {redact(url)!r}: {e}") from e
        r = self._redis
        self._enqueue = r.register_script(LUA_ENQUEUE)
        self._claim = r.register_script(LUA_CLAIM)
        self._migrate = r.register_script(LUA_MIGRATE)
        self._drop = r.register_script(LUA_DROP)
        self._renew = r.register_script(LUA_RENEW)
        self._release = r.register_script(LUA_RELEASE)
        self._write_result = r.register_script(LUA_WRITE_RESULT)
        self._put_tournament = r.register_script(LUA_PUT_TOURNAMENT)
        self._forget_tournament = r.register_script(LUA_FORGET_TOURNAMENT)
        self._put_schedule = r.register_script(LUA_PUT_SCHEDULE)
        self._delete_schedule = r.register_script(LUA_DELETE_SCHEDULE)
        self._add_occurrence = r.register_script(LUA_ADD_OCCURRENCE)
        self._set_state = r.register_script(LUA_SET_STATE)
        self._add_summaries = r.register_script(LUA_ADD_SUMMARIES)
        self._notice = r.register_script(LUA_NOTICE)
        self._add_bot = r.register_script(LUA_ADD_BOT)
        self._replace_bot = r.register_script(LUA_REPLACE_BOT)
        self._ladder_join = r.register_script(LUA_LADDER_JOIN)
        self._swap_conduct = r.register_script(LUA_SWAP_CONDUCT)
        self._note_bt = r.register_script(LUA_NOTE_BT)
        # per tournament, its results count when this process last completed its summaries from
        # them (tried again only once more results are written: a node of an older version writes)
        self._summarized: dict[str, int] = {}
        with self._errors():
            r.ping()
            self._migrate_stream()
            # a mark of this arena's data in this Redis: a Redis restarted empty loses it, and a
            # node that saw it says so instead of answering as if nothing had ever been there
            r.set(self.keys.epoch, secrets.token_hex(8), nx=True)
            self._epoch = cast("str", r.get(self.keys.epoch))

    def check_data(self) -> None:
        """Raise :class:`BrokerDataLost` if Redis no longer holds the data this broker started on
        (and from then on, every read of tournaments, results and ratings raises it too)."""
        if self._lost:
            raise BrokerDataLost(self._lost)
        with self._errors():
            now = self._redis.get(self.keys.epoch)
        if now != self._epoch:
            self._found_lost()

    def _found_lost(self) -> NoReturn:
        """The data this broker started on is gone: say so, now and on every read from then on."""
        self._lost = (f"Redis at {redact(self.url)} lost the arena's data (it restarted empty, or was "
                      "flushed): restart the nodes on it, then resume the tournaments")
        raise BrokerDataLost(self._lost)

    @contextmanager
    def _reading(self) -> Iterator[None]:
        """A read of tournaments, results or ratings: :class:`BrokerDataLost` once the data is known
        lost. A read whose answer is empty calls :meth:`check_data` as well, so that "nothing" is
        never said of an arena whose data was lost (its heartbeat notices within seconds anyway)."""
        if self._lost:
            raise BrokerDataLost(self._lost)
        with self._errors():
            yield

    def __repr__(self) -> str:
        return f"RedisBroker({redact(self.url)!r}, prefix={self.keys.prefix!r})"

    # plumbing
    @contextmanager
    def _errors(self) -> Iterator[None]:
        """Turn redis-py's errors into the queue layer's, naming the server."""
        if self._closed:
            raise BrokerError(f"{self!r} is closed")
        try:
            yield
        except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError) as e:
            raise BrokerUnavailable(f"no Redis at {redact(self.url)}: {_reason(e)}") from e
        except redis.exceptions.RedisError as e:
            raise BrokerError(f"Redis at {redact(self.url)} failed: {e}") from e

    def _migrate_stream(self) -> None:
        """Move the jobs an older version queued (a stream and its consumer group) into this queue."""
        moved = 0
        while n := int(self._migrate(args=[self.keys.prefix, NOTICES_KEPT, _MIGRATE_CHUNK])):
            moved += n
        if moved:
            log.info("%d queued jobs moved from the queue of an older version", moved,
                     extra={"event": "queue_migrated", "jobs": moved})

    def _enqueue_jobs(self, marker: str | None, jobs: Sequence[MatchJob],
                      ladder: tuple[str, str] = ("", "")) -> bool:
        args: list[str | int] = [self.keys.prefix, marker or "", NOTICES_KEPT, *ladder]
        for j in jobs:
            args += [j.tournament_id, j.match_id, " ".join(j.seat_bots), j.to_json()]
        return bool(self._enqueue(args=args))

    # jobs
    def enqueue(self, jobs: Sequence[MatchJob]) -> None:
        with self._errors():
            for i in range(0, len(jobs), _ENQUEUE_CHUNK):
                self._enqueue_jobs(None, jobs[i : i + _ENQUEUE_CHUNK])

    def enqueue_once(self, key: str, jobs: Sequence[MatchJob]) -> bool:
        with self._errors():
            return self._enqueue_jobs(self.keys.enqueue_marker(key), jobs)

    def enqueue_ladder(self, pool: str, setting: str, jobs: Sequence[MatchJob]) -> bool:
        if not pool:
            raise ValueError("a ladder's batch needs its pool")
        with self._errors():
            return self._enqueue_jobs(None, jobs, (pool, setting))

    def claim_batch(self, node_id: str, count: int, lease_s: float, seats: Mapping[str, int] | None = None,
                    *, absent: Sequence[str] = (), matches: Sequence[str] = (),
                    capped: tuple[str, int] | None = None) -> ClaimBatch:
        if lease_s <= 0:
            raise ValueError(f"lease_s must be positive, not {lease_s}")
        if not node_id:
            raise ValueError("node_id must not be empty")
        count = max(0, count)
        args: list[str | int] = [self.keys.prefix, node_id, max(1, round(lease_s * 1000)), count,
                                 self.max_deliveries, NOTICES_KEPT, REVEALED_ONCE_OVER, repr(time.time())]
        kept = " ".join(matches)
        prefix, cap = capped if capped is not None and capped[0] else ("", 0)
        if absent:
            args += ["absent", count, kept, "", 0, *dict.fromkeys(absent)]
        elif seats is not None:
            args += ["seats", SCAN_PER_BOT, kept, prefix, max(0, cap)]
            for bot, free in seats.items():
                if free > 0:
                    args += [bot, free]
        else:
            args += ["any", count, kept, "", 0]
        with self._errors():
            out, next_ms, now_ms, dead, _dropped, back = self._claim(args=args)
        claims: list[Claim] = []
        lease_until = time.time() + lease_s
        for job_id, body, delivery in out:
            try:
                job = MatchJob.from_json(body)
            except (ValueError, TypeError, KeyError) as e:
                # a job that is no job (written by hand, or by another program): it cannot be played;
                # held, its lease runs out each time, until it lands in the dead letters
                log.error("job %s is unreadable (%s): it will be dead-lettered", job_id, e,
                          extra={"event": "dead_letter", "node": node_id})
                continue
            claims.append(Claim(job, node_id, int(delivery), lease_until, str(job_id)))
        self.dead_lettered += int(dead)
        if int(dead):
            log.warning("%d jobs delivered %d times without an ack: dead-lettered", int(dead),
                        self.max_deliveries, extra={"event": "dead_letter", "node": node_id})
        next_s = None if int(next_ms) < 0 else max(0.0, (int(next_ms) - int(now_ms)) / 1000)
        return ClaimBatch(claims, next_s, int(back))

    def waiting_bots(self) -> set[str]:
        with self._errors():
            return set(cast("list[str]", self._redis.hkeys(self.keys.jobs_waiting)))

    def held(self) -> list[Claim]:
        k = self.keys
        with self._errors():
            leased = cast("list[tuple[str, float]]",
                          self._redis.zrange(k.jobs_leased, 0, -1, withscores=True))
            pipe = self._redis.pipeline(transaction=False)
            for job_id, _ in leased:
                pipe.hmget(k.job(job_id), "job", "owner", "delivery")
            rows = cast("list[list[str | None]]", pipe.execute())
            now_ms = self._server_ms()
        claims = []
        for (job_id, until_ms), (body, owner, delivery) in zip(leased, rows, strict=True):
            if body is None or owner is None:
                continue
            with contextlib.suppress(ValueError, TypeError, KeyError):
                claims.append(Claim(MatchJob.from_json(body), owner, int(delivery or 0),
                                    time.time() + (until_ms - now_ms) / 1000, job_id))
        return claims

    def _server_ms(self) -> float:
        sec, usec = self._redis.time()
        return sec * 1000 + usec / 1000

    def renew(self, claim: Claim, lease_s: float) -> Claim:
        (renewed,) = self.renew_many([claim], lease_s)
        if renewed is None:
            raise LeaseLost(
                f"match {claim.job.match_id}: node {claim.node_id} no longer holds delivery {claim.delivery}"
            )
        return renewed

    def renew_many(self, claims: Sequence[Claim], lease_s: float) -> list[Claim | None]:
        if not claims:
            return []
        args: list[str | int] = [self.keys.prefix, max(1, round(lease_s * 1000))]
        for c in claims:
            args += [c.handle, c.node_id, c.delivery]
        with self._errors():
            held = self._renew(args=args)
        until = time.time() + lease_s
        return [replace(c, lease_until=until) if ok else None for c, ok in zip(claims, held, strict=True)]

    def ack(self, claim: Claim) -> None:
        with self._errors():
            self._drop(args=[self.keys.prefix, claim.handle, repr(time.time()), REVEALED_ONCE_OVER])

    def release(self, claim: Claim) -> None:
        with self._errors():
            self._release(args=[self.keys.prefix, NOTICES_KEPT, claim.handle, claim.node_id, claim.delivery])

    def dead_letters(self) -> list[MatchJob]:
        with self._errors():
            entries = cast("list[Any]", self._redis.xrange(self.keys.dead_letters))
        jobs = []
        for entry_id, fields in entries:
            try:
                jobs.append(MatchJob.from_json(fields["job"]))
            except (ValueError, TypeError, KeyError):
                log.error("dead letter %s is unreadable: %r", entry_id, fields)
        return jobs

    # results and ratings
    def _result_call(self, result: MatchResult, job: str) -> tuple[list[str], list[Any]]:
        """The result script's keys and arguments: ``result`` written, and job ``job`` removed ('': none)."""
        plan, summary, games = self._write_plan(result, time.time())
        group = history_group(plan)
        k = self.keys
        (first, second), a_first = plan.pair
        held = (k.quartet(plan.quartet[0]) if plan.quartet else k.leg(plan.leg[0]) if plan.leg
                else k.pools)  # where a duplicate leg or table waits for the others
        keys = [k.result(result.match_id), k.results_index(result.tournament_id), k.pools,
                held, k.summaries(result.tournament_id),
                *(k.bot_matches(bot) for bot in summary.seat_bots)]  # 6..9: the script pushes a bot once
        for pool in plan.counted_pools:
            keys += [k.elo(pool), k.pairs(pool), k.history(pool)]
        keys += [k.mixed_queue(pool) for pool in plan.mixed_pools]  # after the counted pools' keys
        keys.append(k.tournament(result.tournament_id))  # last: a cancelled tournament refuses it
        args = [
            result.to_json(),
            result.match_id,
            repr(float(self.elo_k)),
            repr(INITIAL_RATING),
            self.history_every,
            self.history_max,
            plan.a,
            plan.b,
            str(plan.quartet[1]) if plan.quartet else json.dumps([first, second]),
            ("2" if plan.quartet[2] else "1") if plan.quartet else "1" if a_first else "0",
            "quartet" if plan.quartet else "leg" if plan.leg else "game",
            (plan.quartet[3].to_text() if plan.quartet else plan.leg[1].to_text() if plan.leg
             else repr(plan.score_a)),
            summary.to_json(),
            BOT_MATCHES_KEPT,
            plan.quartet[0] if plan.quartet else "",
            k.prefix,
            job,
            REVEALED_ONCE_OVER,
            repr(time.time()),
            *plan.played_by,
            json.dumps({"kept": HISTORY_KEPT, "bots": [
                {"bot": g.bot, "entry": g.entry_json(), "stats": g.stats, "h2h": g.h2h} for g in games],
                "pending": "" if group is None else k.bot_pending(group),
                "counters": "" if group is None else counters_json(games)}),
            *plan.counted_pools,
        ]
        return keys, args

    def write_result(self, result: MatchResult) -> bool:
        keys, args = self._result_call(result, "")
        with self._errors(), self._wait_replicas(f"match {result.match_id}'s result") as client:
            written, _ = self._write_result(keys=keys, args=args, client=client)
        if int(written) == 2:
            raise TournamentCancelled(f"match {result.match_id}: tournament {result.tournament_id} was "
                                      "cancelled before its result was written: not recorded")
        return bool(int(written))

    def finish(self, done: Sequence[tuple[Claim, MatchResult]]) -> list[Finished]:
        if not done:
            return []
        calls = [self._result_call(result, claim.handle) for claim, result in done]
        more = f" and {len(done) - 1} more" if len(done) > 1 else ""
        what = f"match {done[0][1].match_id}'s result{more}"
        with self._errors(), self._wait_replicas(what) as client:
            replies = self._scripts(self._write_result, calls, client)
        return [Finished(claim, _WRITES[int(written)], int(left))
                for (claim, _), (written, left) in zip(done, replies, strict=True)]

    def _scripts(self, script: Any, calls: Sequence[tuple[Sequence[str], Sequence[Any]]],
                 client: redis.Redis) -> list[Any]:
        """Run ``script`` once per call (keys, args), all in one pipeline of ``client``: one round trip.
        (redis-py's own pipelining of scripts asks the server whether it has them first, a round trip
        more each time: here a script the server lost is loaded once, and the calls that found it
        missing run again.)"""
        if len(calls) == 1:
            keys, args = calls[0]
            return [script(keys=list(keys), args=list(args), client=client)]
        pipe = client.pipeline(transaction=False)
        for keys, args in calls:
            pipe.evalsha(script.sha, len(keys), *keys, *args)
        replies = pipe.execute(raise_on_error=False)
        missing = [i for i, r in enumerate(replies) if isinstance(r, redis.exceptions.NoScriptError)]
        for i in missing:
            keys, args = calls[i]
            replies[i] = script(keys=list(keys), args=list(args), client=client)  # loads it, then runs it
        for r in replies:
            if isinstance(r, Exception):
                raise r
        return list(replies)

    def _wait_replicas(self, what: str) -> AbstractContextManager[redis.Redis]:
        """The client a result's write goes through: with ``wait_replicas``, one connection of its
        own, and after the write WAIT for the replicas on it (:class:`~arena.queue.sentinel.NotReplicated`
        if too few had it in time: the result is written and its job removed on the primary, but the
        node neither reports it nor advances its tournament (the advance sweep does, later); if a
        failover rolls the write back, the job comes back with it, still held by this node, and is
        played again once its lease runs out)."""
        return replicated(self._redis, self.wait_replicas, self.wait_timeout_s, what)

    def get_result_json(self, match_id: str) -> str | None:
        with self._reading():
            text = cast("str | None", self._redis.get(self.keys.result(match_id)))
        if text is None:
            self.check_data()
        return text

    def has_result(self, match_id: str) -> bool:
        with self._errors():
            return bool(self._redis.exists(self.keys.result(match_id)))

    def results_written(self, match_ids: Sequence[str]) -> set[str]:
        wanted = list(dict.fromkeys(match_ids))
        if not wanted:
            return set()
        with self._errors():
            pipe = self._redis.pipeline(transaction=False)
            for match_id in wanted:
                pipe.exists(self.keys.result(match_id))
            found = cast("list[int]", pipe.execute())
        return {m for m, n in zip(wanted, found, strict=True) if n}

    def result_counts(self, ids: Sequence[str]) -> dict[str, int]:
        wanted = list(dict.fromkeys(ids))
        with self._reading():
            pipe = self._redis.pipeline(transaction=False)
            for tid in wanted:
                pipe.scard(self.keys.results_index(tid))
            counts = cast("list[int]", pipe.execute())
        return dict(zip(wanted, counts, strict=True))

    def summaries(self, tournament_id: str, start: int = 0) -> list[ResultSummary]:
        if start < 0:
            raise ValueError(f"start must be 0 or more, not {start}")
        k = self.keys
        with self._reading():
            pipe = self._redis.pipeline(transaction=True)
            pipe.lrange(k.summaries(tournament_id), start, -1)
            pipe.llen(k.summaries(tournament_id))
            pipe.scard(k.results_index(tournament_id))
            texts, length, written = cast("tuple[list[str], int, int]", tuple(pipe.execute()))
        if written > length and self._summarized.get(tournament_id, -1) < written:
            # results of an older version, which kept no summaries: summarize them once, then reread
            if len(self._summarized) >= 4096:
                self._summarized.clear()
            self._summarized[tournament_id] = written
            self._summarize_missing(tournament_id)
            return self.summaries(tournament_id, start)
        return [ResultSummary.from_json(t) for t in texts]

    def complete_summaries(self) -> int:
        k = self.keys
        ids = self.list_tournaments()
        with self._errors():
            pipe = self._redis.pipeline(transaction=False)
            for tid in ids:
                pipe.scard(k.results_index(tid))
                pipe.llen(k.summaries(tid))
            counts = cast("list[int]", pipe.execute())
        short = [(tid, counts[2 * i + 1]) for i, tid in enumerate(ids) if counts[2 * i] > counts[2 * i + 1]]
        for tid, kept in short:
            self.summaries(tid, kept)  # completes them (reads only the summaries it adds)
        return len(short)

    def _summarize_missing(self, tournament_id: str) -> None:
        """Append the summaries of the tournament's results that have none (read from their records)."""
        k = self.keys
        spec = self._spec(tournament_id)
        for _ in range(10):  # the log moved under us (a result written meanwhile): read again
            with self._errors():
                have = cast("list[str]", self._redis.lrange(k.summaries(tournament_id), 0, -1))
            seen = {ResultSummary.from_json(t).match_id for t in have}
            missing = [summary_of(r, spec) for r in self.results(tournament_id) if r.match_id not in seen]
            if not missing:
                return
            keys = [k.summaries(tournament_id)]
            for m in missing:
                keys += [k.bot_matches(bot) for bot in m.seat_bots]  # 4 a summary (seats 0..3)
            args: list[str | int] = [len(have), BOT_MATCHES_KEPT, *(m.to_json() for m in missing)]
            with self._errors():
                if self._add_summaries(keys=keys, args=args):
                    log.info("tournament %s: %d results written without a summary summarized",
                             tournament_id, len(missing), extra={"event": "summaries_added"})
                    return
        raise BrokerError(f"tournament {tournament_id}: its summaries kept moving while being completed")

    def bot_matches(self, bot: str, limit: int) -> list[ResultSummary]:
        limit = min(limit, BOT_MATCHES_KEPT)
        if limit <= 0:
            return []
        with self._reading():
            texts = cast("list[str]", self._redis.lrange(self.keys.bot_matches(bot), 0, limit - 1))
        if not texts:
            self.check_data()
        out = []
        for t in texts:
            try:
                out.append(ResultSummary.from_json(t))
            except TournamentError as e:
                log.error("a recent match of bot %r is unreadable: %s", bot[:80], e)
        return out

    def bot_history(self, bot: str, start: int = 0, count: int = HISTORY_KEPT) -> list[dict[str, Any]]:
        if start < 0 or count <= 0:
            return []
        with self._reading():
            texts = cast("list[str]", self._redis.lrange(self.keys.bot_history(bot), start,
                                                          start + min(count, HISTORY_KEPT) - 1))
        return history_entries(bot, texts)

    def bot_counters(self, bot: str) -> tuple[dict[str, int], dict[str, int]]:
        with self._reading():
            found = cast("dict[str, str]", self._redis.hgetall(self.keys.bot_stats(bot)))
        stats = {k: int(v) for k, v in found.items() if not k.startswith(H2H_FIELD)}
        return stats, {k[len(H2H_FIELD):]: int(v) for k, v in found.items() if k.startswith(H2H_FIELD)}

    def note_bt_history(self, pool: str, games: int, points: Mapping[str, tuple[int, float, float, float]],
                        every: int) -> bool:
        args: list[str | int] = [pool, games, every, BT_HISTORY_KEPT]
        for bot, (bot_games, rating, low, high) in points.items():
            args += [bot, f"{games} {bot_games} {rating!r} {low!r} {high!r}"]
        with self._errors():
            return bool(self._note_bt(keys=[self.keys.bt_marks, self.keys.bt_history(pool)], args=args))

    def bt_history(self, pool: str, bot: str) -> list[tuple[int, int, float, float, float]]:
        with self._reading():
            text = cast("str | None", self._redis.hget(self.keys.bt_history(pool), bot))
        out = []
        for point in (text or "").split(";"):
            with contextlib.suppress(ValueError):
                g, n, r, lo, hi = point.split()
                out.append((int(g), int(n), float(r), float(lo), float(hi)))
        return out

    def results(self, tournament_id: str) -> list[MatchResult]:
        """The tournament's results, ordered by match id."""
        out: list[MatchResult] = []
        with self._reading():
            ids = sorted(cast("set[str]", self._redis.smembers(self.keys.results_index(tournament_id))))
            for i in range(0, len(ids), _READ_CHUNK):
                chunk = [self.keys.result(m) for m in ids[i : i + _READ_CHUNK]]
                texts = cast("list[str | None]", self._redis.mget(chunk))
                out.extend(MatchResult.from_json(t) for t in texts if t is not None)
        if not out:
            self.check_data()
        return out

    def pools(self) -> list[str]:
        with self._reading():
            pools = sorted(cast("set[str]", self._redis.smembers(self.keys.pools)))
        if not pools:
            self.check_data()  # "none yet", unless Redis forgot them all
        return pools

    def pool_ratings(self, pool: str) -> dict[str, tuple[float, int]]:
        with self._reading():
            fields = cast("dict[str, str]", self._redis.hgetall(self.keys.elo(pool)))
        if not fields:
            self.check_data()
        out: dict[str, tuple[float, int]] = {}
        for name, value in sorted(fields.items()):
            if name.startswith(RATING_FIELD):
                bot = name[len(RATING_FIELD) :]
                out[bot] = (float(value), int(fields.get(GAMES_FIELD + bot, "0")))
        return out

    def pair_counts(self, pool: str) -> dict[tuple[str, str], PairCount]:
        rows: list[tuple[str, str, int, int, int]] = []
        with self._reading():
            for field, value in self._redis.hscan_iter(self.keys.pairs(pool), count=1000):
                a, b = json.loads(field)
                wins, draws, losses = (int(n) for n in value.split())
                rows.append((a, b, wins, draws, losses))
        if not rows:
            self.check_data()
        return counts_from_rows(rows)

    def version_counts(self, pool: str) -> VersionCounts:
        """The pool's version order, then its versioned players' tables with the order again, in one
        MULTI: the same order twice says no write came between (a new version, a fold); else again."""
        k = self.keys
        with self._reading():
            order = cast("dict[str, str]", self._redis.hgetall(k.version_order(pool)))
            for _ in range(10):
                players = [player_of(bot, v) for bot, text in sorted(order.items()) for v in text.split()]
                pipe = self._redis.pipeline(transaction=True)
                pipe.hgetall(k.version_order(pool))
                for player in players:
                    pipe.hgetall(k.version_games(pool, player))
                again, *tables = pipe.execute()
                if again == order:
                    break
                order = again
            else:
                raise BrokerError(f"pool {pool}: its versioned games kept changing while read: try again")
        games = {player: {other: PairCount(*(int(n) for n in text.split())) for other, text in table.items()}
                 for player, table in zip(players, tables, strict=True) if table}
        return VersionCounts(games, {bot: tuple(text.split()) for bot, text in order.items()})

    # mixed partnerships
    def apply_mixed(self, pool: str) -> int:
        """Rate the pool's queued games: read the queue's head and the ratings it touches under
        WATCH of the rating hash, then in one MULTI write the new ratings and trim those games.
        Every applier writes that hash, so of two appliers reading the same head one commits and
        the other retries on what is left; writers appending to the queue do not disturb them."""
        k = self.keys
        rated = 0
        with self._errors(), self._redis.pipeline(transaction=True) as pipe:
            while True:
                try:
                    pipe.watch(k.mixed(pool))  # type: ignore[no-untyped-call]
                    head = cast("list[str]", pipe.lrange(k.mixed_queue(pool), 0, MIXED_BATCH - 1))
                    if not head:
                        pipe.unwatch()
                        return rated
                    games = [MixedGame.from_text(text) for text in head]
                    bots = sorted({bot for g in games for bot in (*g.side_a, *g.side_b)})
                    kept = cast("list[str | None]", pipe.hmget(k.mixed(pool), bots))
                    ratings = MixedRatings(states={bot: MixedState.from_text(text)
                                                   for bot, text in zip(bots, kept, strict=True) if text})
                    for game in games:
                        try:
                            ratings.apply(game)
                        except ValueError as e:  # a game no openskill can rate must not hold up the others
                            log.error("pool %s: mixed game %r skipped: %s", pool, game.game_id, e)
                    pipe.multi()
                    pipe.hset(k.mixed(pool), mapping={bot: ratings.state(bot).to_text() for bot in bots})
                    pipe.hincrby(k.mixed(pool), MIXED_APPLIED, len(games))
                    pipe.ltrim(k.mixed_queue(pool), len(games), -1)
                    pipe.sadd(k.pools, pool)
                    pipe.execute()
                    rated += len(games)
                except redis.exceptions.WatchError:
                    continue  # another node rated them first: go on from what it left

    def mixed_ratings(self, pool: str) -> dict[str, MixedState]:
        with self._reading():
            fields = cast("dict[str, str]", self._redis.hgetall(self.keys.mixed(pool)))
        if not fields:
            self.check_data()
        return {bot: MixedState.from_text(text)
                for bot, text in sorted(fields.items()) if bot != MIXED_APPLIED}

    def mixed_pending(self, pool: str) -> int:
        with self._errors():
            return int(self._redis.llen(self.keys.mixed_queue(pool)))

    def rating_history(self, pool: str, bot: str) -> list[tuple[int, float]]:
        with self._reading():
            pipe = self._redis.pipeline(transaction=True)
            pipe.hget(self.keys.history(pool), bot)
            pipe.hmget(self.keys.elo(pool), [RATING_FIELD + bot, GAMES_FIELD + bot])
            text, (rating, games) = pipe.execute()
        if rating is None:
            self.check_data()
        stored = [(int(g), float(r)) for g, r in (p.split() for p in text.split(";"))] if text else []
        return history_points(stored, None if rating is None else (int(games), float(rating)))

    # tournaments
    def put_tournament(self, spec: TournamentSpec) -> bool:
        """Store it, only in the data this broker started on: on a Redis that lost it (restarted
        empty), :class:`BrokerDataLost` and nothing stored, whether this broker knew it yet or not."""
        if self._lost:
            raise BrokerDataLost(self._lost)
        keys = [self.keys.tournament(spec.tournament_id), self.keys.tournaments, self.keys.epoch]
        args = [json.dumps(spec.to_dict(), sort_keys=True), spec.tournament_id, self._epoch]
        with self._errors():
            stored = int(self._put_tournament(keys=keys, args=args))
        if stored < 0:
            self._found_lost()
        return bool(stored)

    def forget_tournament(self, tournament_id: str) -> bool:
        with self._errors():
            args = [self.keys.prefix, tournament_id, tournament_pool(tournament_id)]
            if not self._forget_tournament(args=args):
                return False
            # its enqueue markers (a few a stage): their names start with its id and a slash
            markers = list(self._redis.scan_iter(match=self.keys.enqueue_marker(f"{tournament_id}/") + "*",
                                                 count=1000))
            for i in range(0, len(markers), _READ_CHUNK):
                self._redis.delete(*markers[i : i + _READ_CHUNK])
        return True

    # scheduled tournaments
    def put_schedule(self, schedule_id: str, text: str) -> bool:
        with self._errors():
            return bool(self._put_schedule(keys=[self.keys.schedule(schedule_id), self.keys.schedules],
                                           args=[text, schedule_id]))

    def schedules(self) -> list[tuple[str, str, int]]:
        with self._reading():
            ids = sorted(cast("set[str]", self._redis.smembers(self.keys.schedules)))
            pipe = self._redis.pipeline(transaction=False)
            for sid in ids:
                pipe.hmget(self.keys.schedule(sid), ["spec", "last"])
            rows = cast("list[list[str | None]]", pipe.execute()) if ids else []
        return [(sid, text, int(last or 0)) for sid, (text, last) in zip(ids, rows, strict=True)
                if text is not None]

    def delete_schedule(self, schedule_id: str) -> bool:
        with self._errors():
            return bool(self._delete_schedule(keys=[self.keys.schedule(schedule_id), self.keys.schedules],
                                              args=[schedule_id]))

    # the ladders
    def put_ladder(self, pool: str, text: str) -> None:
        with self._errors():
            self._redis.hset(self.keys.ladders, pool, text)

    def ladders(self) -> dict[str, str]:
        with self._reading():
            return dict(cast("dict[str, str]", self._redis.hgetall(self.keys.ladders)))

    def ladder_add(self, pool: str, bot: str) -> bool:
        with self._errors():
            pipe = self._redis.pipeline()  # MULTI: the mark cleared and the bot in, as one
            pipe.srem(self.keys.ladder_removed(pool), bot)
            pipe.sadd(self.keys.ladder_bots(pool), bot)
            return bool(pipe.execute()[1])

    def ladder_remove(self, pool: str, bot: str) -> bool:
        with self._errors():
            pipe = self._redis.pipeline()  # MULTI: a join in between sees the mark, or is undone
            pipe.sadd(self.keys.ladder_removed(pool), bot)
            pipe.srem(self.keys.ladder_bots(pool), bot)
            return bool(pipe.execute()[1])

    def ladder_join(self, pool: str, bot: str) -> bool:
        with self._errors():
            return bool(self._ladder_join(keys=[self.keys.ladder_bots(pool), self.keys.ladder_removed(pool)],
                                          args=[bot]))

    def ladder_bots(self, pool: str) -> list[str]:
        with self._reading():
            return sorted(cast("set[str]", self._redis.smembers(self.keys.ladder_bots(pool))))

    def note_ladder_picks(self, pool: str, picks: Sequence[str]) -> None:
        if not picks:
            return
        key = self.keys.ladder_picks(pool)
        with self._errors():
            pipe = self._redis.pipeline()  # MULTI: pushed and trimmed as one
            pipe.lpush(key, *picks)
            pipe.ltrim(key, 0, LADDER_PICKS_KEPT - 1)
            pipe.execute()

    def ladder_picks(self, pool: str) -> list[str]:
        with self._reading():
            return list(cast("list[str]", self._redis.lrange(self.keys.ladder_picks(pool), 0,
                                                             LADDER_PICKS_KEPT - 1)))

    def ladder_conducts(self, bots: Sequence[str]) -> dict[str, str]:
        if not bots:
            return {}
        with self._reading():
            values = cast("list[str | None]", self._redis.hmget(self.keys.ladder_conduct, list(bots)))
        return {bot: text for bot, text in zip(bots, values, strict=True) if text}

    def swap_ladder_conduct(self, bot: str, text: str, expect: str) -> bool:
        with self._errors():
            return bool(self._swap_conduct(keys=[self.keys.ladder_conduct], args=[bot, text, expect]))

    def add_occurrence(self, schedule_id: str, text: str, at: int, spec: TournamentSpec) -> bool:
        keys = [self.keys.schedule(schedule_id), self.keys.tournament(spec.tournament_id),
                self.keys.tournaments]
        args = [text, str(int(at)), json.dumps(spec.to_dict(), sort_keys=True), spec.tournament_id]
        with self._errors():
            return bool(self._add_occurrence(keys=keys, args=args))

    def get_tournament(self, tournament_id: str) -> tuple[TournamentSpec, TournamentState] | None:
        with self._reading():
            spec, state = cast(
                "list[str | None]", self._redis.hmget(self.keys.tournament(tournament_id), ["spec", "state"])
            )
        if spec is None or state is None:
            self.check_data()  # "no such tournament", unless Redis forgot them all
            return None
        return stored_tournament(tournament_id, spec, state)

    def get_tournaments(self, ids: Sequence[str]) -> dict[str, tuple[TournamentSpec, TournamentState]]:
        wanted = list(dict.fromkeys(ids))
        with self._reading():
            pipe = self._redis.pipeline(transaction=False)
            for tid in wanted:
                pipe.hmget(self.keys.tournament(tid), ["spec", "state"])
            rows = cast("list[list[str | None]]", pipe.execute())
        return {tid: stored_tournament(tid, spec, state)
                for tid, (spec, state) in zip(wanted, rows, strict=True)
                if spec is not None and state is not None}

    def set_tournament_state(
        self, tournament_id: str, state: TournamentState, *, expect: TournamentState | None = None,
        reason: str = "",
    ) -> bool:
        keys = [self.keys.tournament(tournament_id), self.keys.pending(tournament_id)]
        args = [TournamentState(state), "" if expect is None else TournamentState(expect), repr(time.time()),
                reason, REVEALED_AT_ONCE, self.keys.prefix, tournament_id]
        with self._errors():
            return bool(self._set_state(keys=keys, args=args))

    def tournament_ending(self, tournament_id: str) -> Ending:
        fields = ["ended_at", "ended_reason", "revealed_at", "revealed_reason"]
        with self._reading():
            ended_at, ended_reason, revealed_at, revealed_reason = cast(
                "list[str | None]", self._redis.hmget(self.keys.tournament(tournament_id), fields))
        return Ending(float(ended_at or 0.0), ended_reason or "", float(revealed_at or 0.0),
                      revealed_reason or "")

    def tournament_states(self, ids: Sequence[str]) -> dict[str, TournamentState]:
        wanted = list(dict.fromkeys(ids))
        with self._errors():
            pipe = self._redis.pipeline(transaction=False)
            for tid in wanted:
                pipe.hget(self.keys.tournament(tid), "state")
            states = cast("list[str | None]", pipe.execute())
        out: dict[str, TournamentState] = {}
        for tid, state in zip(wanted, states, strict=True):
            if state is not None:
                try:
                    out[tid] = TournamentState(state)
                except ValueError:
                    log.error("tournament %r has an unknown state %r", tid[:80], state)
        return out

    def list_tournaments(self) -> list[str]:
        """Every tournament id, in creation order."""
        with self._reading():
            ids = list(cast("list[str]", self._redis.lrange(self.keys.tournaments, 0, -1)))
        if not ids:
            self.check_data()  # "none", unless Redis forgot them all
        return ids

    def pending_count(self, tournament_id: str | None = None) -> int:
        with self._errors():
            if tournament_id is None:
                pipe = self._redis.pipeline(transaction=False)
                pipe.zcard(self.keys.jobs_ready)
                pipe.zcard(self.keys.jobs_leased)
                return sum(int(n) for n in pipe.execute())
            return max(0, int(cast("str | None", self._redis.get(self.keys.pending(tournament_id))) or 0))

    # the cluster
    def heartbeat(self, node_id: str, address: str, ttl_s: float, bots: Sequence[str] = ()) -> None:
        self.check_data()  # every few seconds: a Redis restarted empty is noticed and named in the log
        ttl_ms = max(1, round(ttl_s * 1000))
        now = time.time()
        with self._errors():
            pipe = self._redis.pipeline(transaction=True)
            pipe.set(self.keys.node(node_id), address, px=ttl_ms)
            pipe.sadd(self.keys.nodes, node_id)
            pipe.delete(self.keys.node_bots(node_id))
            if bots:
                pipe.sadd(self.keys.node_bots(node_id), *bots)
                pipe.pexpire(self.keys.node_bots(node_id), ttl_ms)
                pipe.hset(self.keys.bot_presence, mapping=dict.fromkeys(bots, repr(now)))
            pipe.execute()

    def live_nodes(self) -> dict[str, str]:
        with self._errors():
            ids = sorted(cast("set[str]", self._redis.smembers(self.keys.nodes)))
            if not ids:
                return {}
            addresses = cast("list[str | None]", self._redis.mget([self.keys.node(i) for i in ids]))
            gone = [i for i, a in zip(ids, addresses, strict=True) if a is None]
            if gone:
                self._redis.srem(self.keys.nodes, *gone)
        return {i: a for i, a in zip(ids, addresses, strict=True) if a is not None}

    def present_bots(self) -> set[str]:
        ids = list(self.live_nodes())
        if not ids:
            return set()
        with self._errors():
            return set(cast("set[str]", self._redis.sunion([self.keys.node_bots(i) for i in ids])))

    def absent_since(self, bot: str) -> float:
        with self._errors():
            self._redis.hsetnx(self.keys.bot_presence, bot, repr(time.time()))
            return float(cast("str", self._redis.hget(self.keys.bot_presence, bot)))

    def add_bot(self, name: str, entry_json: str) -> bool:
        k = self.keys
        with self._errors():
            return bool(self._add_bot(keys=[k.notices, k.notice_seq, k.bots],
                                      args=[NOTICES_KEPT, BOT_NOTICE, name, entry_json]))

    def replace_bot(self, name: str, entry_json: str, expect: str | None = None) -> bool:
        k = self.keys
        args: list[str | int] = [NOTICES_KEPT, BOT_NOTICE, name, entry_json, "0" if expect is None else "1",
                                 expect or ""]
        with self._errors():
            return bool(self._replace_bot(keys=[k.notices, k.notice_seq, k.bots], args=args))

    def get_bots(self, names: Sequence[str]) -> dict[str, str]:
        wanted = list(dict.fromkeys(names))
        if not wanted:
            return {}
        with self._errors():
            found = cast("list[str | None]", self._redis.hmget(self.keys.bots, wanted))
        return {name: entry for name, entry in zip(wanted, found, strict=True) if entry is not None}

    def add_invite(self, code_sha256: str) -> None:
        with self._errors():
            self._redis.sadd(self.keys.invites, code_sha256)

    def take_invite(self, code_sha256: str) -> bool:
        with self._errors():
            return bool(self._redis.srem(self.keys.invites, code_sha256))

    def bot_entries(self) -> list[str]:
        with self._errors():
            return list(cast("dict[str, str]", self._redis.hgetall(self.keys.bots)).values())

    # notices: a stream read with a blocking XREAD (see arena.queue.broker); a cursor is
    # "<stream entry id> <its seq>", so that a reader can tell that it missed some
    def publish_notice(self, kind: str, data: str = "") -> None:
        k = self.keys
        with self._errors():
            self._notice(keys=[k.notices, k.notice_seq], args=[NOTICES_KEPT, kind, data])

    def notice_cursor(self) -> str:
        with self._errors():
            last = cast("list[tuple[str, dict[str, str]]]", self._redis.xrevrange(self.keys.notices, count=1))
        if not last:
            return "0-0 0"
        entry_id, fields = last[0]
        return f"{entry_id} {int(fields.get('seq', '0'))}"

    def notices(self, cursor: str, timeout: float) -> NoticeBatch:
        entry_id, _, seq_text = cursor.partition(" ")
        try:
            seq = int(seq_text)
        except ValueError:
            raise ValueError(f"bad notice cursor {cursor[:80]!r}") from None
        with self._errors():
            reply = cast("list[Any] | None", self._redis.xread(
                {self.keys.notices: entry_id}, count=NOTICES_READ, block=max(1, round(timeout * 1000))))
        entries = list(reply[0][1]) if reply else []
        gap = False
        out = []
        for entry in entries:
            entry_id, fields = entry[0], _fields(entry[1])
            number = int(fields.get("seq", "0"))
            gap = gap or number != seq + 1  # one lost between (trimmed), or numbering began again
            seq = number
            out.append(Notice(fields.get("kind", ""), fields.get("data", "")))
        return NoticeBatch(f"{entry_id} {seq}", tuple(out), gap)

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._redis.close()


def _fields(raw: Any) -> dict[str, str]:
    """A stream entry's fields, whether redis-py gave a dict or Lua a flat list."""
    if isinstance(raw, dict):
        return {str(k): str(v) for k, v in raw.items()}
    items = list(raw)
    return {str(items[i]): str(items[i + 1]) for i in range(0, len(items) - 1, 2)}
