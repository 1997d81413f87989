"""The queue worker of a referee node: claim jobs, play them, write results once.

A node claims only the jobs it can start now: those whose bots are connected
here with free seats (:meth:`Broker.claim_batch` with the node's free seats),
for all its free match slots at once, a version test's only within the room
the ladder gives the tests (:attr:`Worker.test_room`: :mod:`arena.node.versions`).
Then it sleeps until that may have changed, never polling the broker in a loop:

- one of its bots' seats frees or a bot connects here (:attr:`Node.seat_hooks`);
- jobs wait that did not a moment ago: the broker's ``jobs`` notice, published
  with the enqueue, a release or a lease given back, names their bots, and the
  node looks if one of them has a free seat here (:func:`wake_on_jobs`);
- the earliest lease held by any node runs out (the claim said when): the next
  claim gives that job back to the queue, at its place;
- at the latest every ``poll_s`` (10 s), in case a wake-up was lost.

A job whose bots are connected to no node at all waits unclaimed; every
``absent_check_s`` a node asks which bots have jobs waiting and, of those away
from every node for ``absent_timeout_s``, claims the jobs (:meth:`Worker.sweep_absent`)
and writes each a forfeit. While a match runs its lease is renewed (one call for
all of a node's matches); if the lease is lost (this node was thought dead) the
match is cancelled here, unrecorded. When a match finishes its result is written
and its job removed in one atomic step (exactly once, with the rating update);
the results of matches that finish while a write is under way go together in
the next one (one round trip). The tournament is advanced when its last queued
job is done (an SPRT match: after each): the next round or batch is enqueued
once, or the tournament marked finished.

Draining (SIGTERM): no new claims; each running match either finishes within
the drain time and is recorded, or is cancelled and then released for another
node: never both.

A cancelled tournament: the node that takes the cancel stops its own matches of
it at once (:meth:`Worker.stop_tournament`) and publishes a cancel notice
(:data:`~arena.queue.CANCEL_NOTICE`), on which every other node does the same
(:func:`stop_on_cancel_notices`): within milliseconds while the broker answers.
Besides, every ``cancel_check_s`` seconds (1 s) each node reads the states of
its running matches' tournaments (one read, in a thread) and stops the matches
of a cancelled one: the fallback for a notice lost or never published. A stopped
match is unrecorded and its job dropped, not released: nothing of it is played
again. A match that ended before its node stopped it has its result refused by
the store (the cancel check is atomic with the write) and its job dropped the
same way. So a match of a cancelled tournament plays on for the notice's way to
its node (at most ``cancel_check_s`` plus one read without it) and the match's
own cancellation; only then, with none of its jobs left, is the tournament's
secret revealed.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass, field

from arena.edge.quietlog import QuietLog
from arena.node import DEFAULT_CAPACITY
from arena.node.notices import NoticeWatcher
from arena.queue import (
    ANY_BOT,
    CANCEL_NOTICE,
    JOBS_NOTICE,
    Broker,
    BrokerError,
    Claim,
    ClaimBatch,
    Finished,
    NotReplicated,
    Write,
)
from arena.ratings import ladder_pool
from arena.records import MatchEnd, MatchRecord, ResultReason, SeatBot
from arena.referee.node import InvalidArgument, Node, NodeError, SeatingError
from arena.tournament import MatchJob, MatchResult, Tournaments, TournamentState
from arena.tournament.spec import TEST_PREFIX

#: results written together at most, in one round trip
FINISH_BATCH = 64
#: the latest records of its store a node starting looks at for results it never wrote (it died
#: between the two): at most its match slots' worth can be such, so many more than any node's slots
KEPT_LOOKBACK = 256
#: the longest a node waits after a failed claim before it tries again (seconds)
MAX_BACKOFF_S = 5.0

log = logging.getLogger("arena.node")
#: the node's problems that repeat while they last (a broker down): one line every 10 s each
quiet = QuietLog(log)


@dataclass
class Running:
    claim: Claim
    task: asyncio.Task[None]
    started: float = field(default_factory=time.monotonic)
    #: stopped because its tournament was cancelled: its job is dropped (acked), not released
    dropped: bool = False


class Worker:
    def __init__(
        self, node: Node, broker: Broker, *, capacity: int = DEFAULT_CAPACITY, lease_s: float = 30.0,
        poll_s: float = 10.0, drain_s: float = 60.0, tournaments: Tournaments | None = None,
        absent_timeout_s: float = 600.0, absent_check_s: float | None = None, cancel_check_s: float = 1.0,
    ) -> None:
        self.node = node
        self.broker = broker
        self.tournaments = tournaments or Tournaments(broker)
        #: a job's bot connected to no live node for this long forfeits the job
        self.absent_timeout_s = absent_timeout_s
        #: how often the node looks for jobs of bots away from every node (default: a tenth of the
        #: absent timeout, between 1 s and 60 s)
        self.absent_check_s = (absent_check_s if absent_check_s is not None
                               else min(60.0, max(1.0, absent_timeout_s / 10)))
        self.capacity = capacity
        self.lease_s = lease_s
        #: the longest the node sleeps without a wake-up before it looks at the queue again: a safety
        #: net for a wake-up lost, not how jobs are found
        self.poll_s = poll_s
        self.drain_s = drain_s
        #: how often the states of the running matches' tournaments are read (a cancel's bound)
        self.cancel_check_s = cancel_check_s
        self.running: dict[str, Running] = {}
        #: called (on the loop) with each job whose match is over here, written or not, once its slot
        #: is free (the ladder loop looks again: :mod:`arena.node.ladder`)
        self.done_hooks: list[Callable[[MatchJob], None]] = []
        #: how many more version-test matches (``vt:`` tournaments) this node may start now, asked on the
        #: loop before each claim (the ladder's :meth:`~arena.node.ladder.LadderLoop.test_room`; None: no
        #: bound, a node without a ladder)
        self.test_room: Callable[[int, Collection[str]], int] | None = None
        #: called (on the loop) with each result this node wrote now (not one written before: a replay)
        self.result_hooks: list[Callable[[MatchResult], None]] = []
        #: asked (in a thread) of each result of a ladder match before it is written: a reason not to
        #: record it ("": record it), then its job is dropped (arena.node.pauses: a paused bot's forfeit)
        self.before_write: Callable[[MatchResult], str] | None = None
        self.completed = 0
        self.released = 0
        #: set when what the node can start may have changed: a seat freed, jobs came, a slot freed
        self._wake = asyncio.Event()
        #: when (monotonic) the earliest lease held anywhere runs out, as the last claim said
        self._lease_due: float | None = None
        #: when (monotonic) this node last asked the broker for jobs
        self._looked = float("-inf")
        self._failures = 0
        #: matches whose records this node holds and whose results are not written (it died between
        #: the two): claimed whatever the seats, until ``_kept_until`` (monotonic)
        self._kept: list[str] = []
        self._kept_until = 0.0
        self._finishing: list[tuple[Claim, MatchResult, asyncio.Future[Finished]]] = []
        self._finisher: asyncio.Task[None] | None = None
        self.metrics = metrics = node.metrics
        metrics.capacity.set_function(lambda: self.capacity)
        metrics.free_slots.set_function(lambda: max(0, self.capacity - len(self.running)))
        metrics.samplers.append(self._sample)
        self._dead_lettered = broker.dead_lettered
        node.seat_hooks.append(self._seats_freed)

    def wake(self) -> None:
        """Look at the queue again now (on the loop): what this node can start may have changed."""
        self._wake.set()

    def _seats_freed(self, match_id: str) -> None:
        """Seats freed here (a match ended) or came (a bot connected): look again, unless the match is
        one of this worker's, whose end wakes it once its result is written and its slot free."""
        if match_id not in self.running:
            self._wake.set()

    def wake_for(self, bots: list[str]) -> None:
        """Jobs of ``bots`` wait now (a ``jobs`` notice): look if one of them has a free seat here."""
        if self.capacity > len(self.running):
            free = self.node.free_seats()
            if ANY_BOT in bots or any(b in free for b in bots):
                self._wake.set()

    def tournament_of(self, match_id: str) -> str:
        """The tournament of a match this node plays for the queue ("" for any other match)."""
        run = self.running.get(match_id)
        return "" if run is None else run.claim.job.tournament_id

    def _sample(self) -> None:
        """What a scrape asks of the broker (in a thread): the jobs waiting, the live nodes."""
        self.metrics.jobs_waiting.set(self.broker.pending_count())
        self.metrics.live_nodes.set(len(self.broker.live_nodes()))

    def _count_claims(self, batch: ClaimBatch) -> None:
        """The reclaims among a claim's jobs (a claim counts once it starts), and the leases it gave
        back. A reclaim is logged as any problem that repeats: one lost lease once gave 2,467 lines in
        28 s for 4 jobs."""
        metrics = self.metrics
        metrics.claim_calls.inc()
        if batch.requeued:
            metrics.leases_expired.inc(batch.requeued)
            quiet.warning("lease ran out", "%d jobs given back to the queue: their node's lease ran out",
                          batch.requeued, extra={"event": "lease_expired", "node": self.node.node_id,
                                                 "jobs": batch.requeued})
        for claim in batch.claims:
            if claim.delivery > 1:
                metrics.jobs_reclaimed.inc()
                quiet.warning("reclaimed", "match %s reclaimed (delivery %d): a lease was lost",
                              claim.job.match_id, claim.delivery,
                              extra={"event": "job_reclaimed", "match_id": claim.job.match_id,
                                     "node": self.node.node_id, "delivery": claim.delivery})
        dead = self.broker.dead_lettered
        if dead > self._dead_lettered:
            metrics.dead_letters.inc(dead - self._dead_lettered)
        self._dead_lettered = dead

    # --------------------------------------------------------------- main loop
    async def run(self, stop: asyncio.Event) -> None:
        helpers = [
            asyncio.create_task(self._renew_loop(), name="lease-renewal"),
            asyncio.create_task(self._advance_loop(), name="tournament-advance"),
            asyncio.create_task(self._cancel_loop(), name="cancel-check"),
            asyncio.create_task(self._absent_loop(), name="absent-check"),
        ]
        try:
            await self._find_kept()
            while not stop.is_set():
                self._wake.clear()
                wait = await self.claim_once()
                await self._sleep(stop, wait)
        finally:
            await self.drain()
            for task in helpers:
                task.cancel()
            await asyncio.gather(*helpers, return_exceptions=True)

    async def _find_kept(self) -> None:
        """The matches played to their end here whose results were never written (this node died
        between the two, and restarted on its data): their jobs are claimed whatever the seats, and
        the results written from the records, for two leases' time (the dead node's lease on them
        runs out first)."""
        try:
            ids = await asyncio.to_thread(self.node.latest_stored, KEPT_LOOKBACK)
            written = await asyncio.to_thread(self.broker.results_written, ids) if ids else set()
        except (BrokerError, OSError) as e:
            log.warning("cannot tell whether this node's latest records have their results written: %s", e)
            return
        self._kept = [m for m in ids if m not in written]
        self._kept_until = asyncio.get_running_loop().time() + 2 * self.lease_s
        if self._kept:
            log.info("%d matches were played here and their results not written: written from their "
                     "records once their jobs wait", len(self._kept), extra={
                         "event": "kept_records", "node": self.node.node_id, "matches": len(self._kept)})

    async def claim_once(self) -> float:
        """Claim, in one call, what this node can start now, and start it; how long to sleep at most
        before looking again (a wake-up may come first)."""
        loop = asyncio.get_running_loop()
        free = self.capacity - len(self.running)
        seats = self.node.free_seats() if free > 0 else {}
        kept = self._kept if loop.time() < self._kept_until else []
        count = free if seats or kept else 0
        now = loop.time()
        # a lease may have run out: the one the last claim named, or, when it named none, any taken
        # since (looked at every poll_s: a job held by a node that died is given back even where no
        # node has a seat for it, so that its bots' absence is seen and it forfeits)
        due = (now >= self._lease_due if self._lease_due is not None
               else now - self._looked >= self.poll_s)
        if count == 0 and not due:
            return self._until_due(loop)  # nothing this node could start: only a lease may need it
        self._looked = now
        # the version tests' matches only within their room: a tournament's match finds its half free
        room = self.test_room
        capped = None if room is None else (TEST_PREFIX, room(self.capacity, self.running))
        try:
            batch = await asyncio.to_thread(self.broker.claim_batch, self.node.node_id, count,
                                            self.lease_s, seats, matches=kept, capped=capped)
        except BrokerError as e:
            self._failures += 1
            quiet.warning("claim", "claim failed: %s", e)
            return float(min(MAX_BACKOFF_S, 0.1 * 2 ** min(self._failures, 6)))
        self._failures = 0
        self._lease_due = None if batch.next_expiry_s is None else loop.time() + batch.next_expiry_s
        self._count_claims(batch)
        for claim in batch.claims:
            if claim.job.match_id in self._kept:
                self._kept.remove(claim.job.match_id)
            await self._start(claim)
        return self._until_due(loop)

    def _until_due(self, loop: asyncio.AbstractEventLoop) -> float:
        """Seconds until the next look: the earliest lease's end (a little after), at most ``poll_s``."""
        if self._lease_due is None:
            return self.poll_s
        return max(0.01, min(self.poll_s, self._lease_due - loop.time() + 0.05))

    async def _sleep(self, stop: asyncio.Event, timeout: float) -> None:
        """Until a wake-up, the stop, or ``timeout`` seconds."""
        if self._wake.is_set() or stop.is_set():
            return
        waiters = {asyncio.ensure_future(stop.wait()), asyncio.ensure_future(self._wake.wait())}
        _, pending = await asyncio.wait(waiters, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        for w in pending:
            w.cancel()

    async def _absent_loop(self) -> None:
        """Every ``absent_check_s``: forfeit the waiting jobs of bots away from every node for too long."""
        while True:
            await asyncio.sleep(self.absent_check_s)
            await self.sweep_absent()

    async def sweep_absent(self) -> int:
        """Claim and forfeit the waiting jobs of the bots connected to no live node for
        ``absent_timeout_s`` (a few reads, whatever the queue's length); how many were claimed."""
        here = set(self.node.free_seats()) | set(self.node.connected_bots())
        try:
            waiting = await asyncio.to_thread(self.broker.waiting_bots)
            maybe = sorted(waiting - here)
            if not maybe:
                return 0
            present = await asyncio.to_thread(self.broker.present_bots)
            away = [b for b in maybe if b not in present]
            now = time.time()
            gone = [b for b in away
                    if now - await asyncio.to_thread(self.broker.absent_since, b) > self.absent_timeout_s]
            claimed = 0
            while gone:
                batch = await asyncio.to_thread(self.broker.claim_batch, self.node.node_id, FINISH_BATCH,
                                                self.lease_s, None, absent=gone)
                self._count_claims(batch)
                for claim in batch.claims:
                    absent = [b for b in dict.fromkeys(claim.job.seat_bots) if b in gone]
                    task = asyncio.create_task(self._finish(claim, self._absent_forfeit(claim.job, absent)),
                                               name=f"job-{claim.job.match_id}")
                    self.running[claim.job.match_id] = Running(claim, task)
                    self.metrics.jobs_claimed.inc()
                claimed += len(batch.claims)
                if len(batch.claims) < FINISH_BATCH:
                    break
            return claimed
        except BrokerError as e:
            quiet.warning("absent check", "cannot tell whether the bots of waiting jobs are away: %s", e)
            return 0

    async def _advance_loop(self) -> None:
        """Advance every open tournament now and then, whatever the matches just played here.

        A node that wrote a result (its job removed with it) and died before
        advancing its tournament leaves the next round unqueued; so does a
        result not yet on the replicas (``--redis-wait-replicas``), which its
        node does not build on. This sweep catches both: enqueueing a stage is
        idempotent, so any node may do it.
        """
        while True:
            await asyncio.sleep(max(1.0, self.lease_s / 3))
            try:
                await asyncio.to_thread(self.tournaments.advance_open)
            except BrokerError as e:
                log.warning("advancing tournaments failed: %s", e)

    async def _cancel_loop(self) -> None:
        """Every ``cancel_check_s``: stop the running matches of tournaments cancelled through any node."""
        while True:
            await asyncio.sleep(self.cancel_check_s)
            await self.check_cancelled()

    async def check_cancelled(self) -> int:
        """Read the states of the running matches' tournaments (one read, in a thread) and stop the
        matches of those cancelled; how many were stopped."""
        ids = sorted({r.claim.job.tournament_id for r in self.running.values()
                      if r.claim.job.tournament_id and not r.dropped})
        if not ids:
            return 0
        try:
            states = await asyncio.to_thread(self.broker.tournament_states, ids)
        except BrokerError as e:
            quiet.warning("cancel check", "cannot tell whether running tournaments were cancelled: %s", e)
            return 0
        return sum(self.stop_tournament(tid) for tid, state in states.items()
                   if state is TournamentState.CANCELLED)

    def stop_tournament(self, tournament_id: str) -> int:
        """Stop this node's running matches of ``tournament_id`` (it was cancelled): each stops
        unrecorded and its job is dropped, never released for replay. The node that took the cancel
        calls this at once, the others on its notice (:func:`stop_on_cancel_notices`), or within
        ``cancel_check_s`` if they missed it. Called again, it stops nothing more. How many matches
        were stopped."""
        stopped = 0
        for match_id, run in list(self.running.items()):
            if run.claim.job.tournament_id != tournament_id or run.dropped:
                continue
            run.dropped = True
            # a match that is not the node's (a forfeit being written) or just ended is not cancelled:
            # its result is refused by the store, and its job dropped the same way
            if self.node.cancel_match(match_id):
                stopped += 1
        if stopped:
            log.info("tournament %s was cancelled: %d running matches stopped here, unrecorded",
                     tournament_id, stopped, extra={"event": "tournament_stopped", "node": self.node.node_id,
                                                    "tournament": tournament_id, "matches": stopped})
        return stopped

    async def _start(self, claim: Claim) -> int:
        """Start ``claim``'s job here (1), or give it back (0)."""
        started = await self._try_start(claim)
        if started:
            self.metrics.jobs_claimed.inc()
        return started

    async def _try_start(self, claim: Claim) -> int:
        job = claim.job
        stored = None if self.node.is_running(job.match_id) else self.node.stored_record(job.match_id)
        if stored is not None:
            # played to the end here, its record kept, and then the result was not written (this
            # node died and restarted on its data folder, or the broker failed): the node refuses
            # to play the match id again, so write the result from the record
            task = asyncio.create_task(self._finish(claim, stored), name=f"job-{job.match_id}")
            self.running[job.match_id] = Running(claim, task)
            return 1
        try:
            teams = ("", "") if job.is_mixed else (job.team0, job.team1)
            self.node.start_match(
                *teams, job.ruleset, seed=job.seed, target=job.target,
                deals=job.deals, match_id=job.match_id, seats=job.seats,
            )
        except SeatingError as e:
            # its bots had free seats here when it was claimed, and lost them since (a bot gone, a
            # match an admin started): another node, or a later claim, seats them; unless a bot has
            # been connected to no node for too long: then it forfeits
            absent = await self._long_absent(job)
            if absent:
                task = asyncio.create_task(self._finish(claim, self._absent_forfeit(job, absent)),
                                           name=f"job-{job.match_id}")
                self.running[job.match_id] = Running(claim, task)
                return 1
            await self._release(claim, str(e))
            return 0
        except InvalidArgument as e:
            # a job no node can ever play: keep it claimed so that its lease expires and
            # each redelivery counts, until it lands in the dead-letter list
            log.error("job %s cannot be played: %s (it will be dead-lettered)", job.match_id, e)
            return 0
        except NodeError as e:
            await self._release(claim, f"cannot start it now: {e}")
            return 0
        task = asyncio.create_task(self._finish(claim), name=f"job-{job.match_id}")
        self.running[job.match_id] = Running(claim, task)
        return 1

    async def _finish(self, claim: Claim, stored: MatchRecord | None = None) -> None:
        job = claim.job
        try:
            record = stored or await self.node.wait(job.match_id)
            current = self.running.get(job.match_id)
            claim = current.claim if current else claim  # renewed meanwhile
            if record.result.reason is ResultReason.ABORTED:
                if current is not None and current.dropped:  # its tournament was cancelled
                    await asyncio.to_thread(self.broker.ack, claim)
                return  # else cancelled here: released by whoever cancelled it
            result = MatchResult.of_record(job, record, self.node.node_id)
            why = (await asyncio.to_thread(self.before_write, result)
                   if self.before_write is not None and ladder_pool(job.tournament_id) is not None else "")
            if why:
                await asyncio.to_thread(self.broker.ack, claim)
                log.info("match %s: not recorded, its job dropped: %s", job.match_id, why, extra={
                    "event": "result_refused", "match_id": job.match_id, "node": self.node.node_id})
                return
            done = await self._write(claim, result)
            if done.write is Write.CANCELLED:
                log.info("match %s: tournament %s was cancelled before its result was written: not "
                         "recorded, its job dropped", job.match_id, job.tournament_id, extra={
                             "event": "result_refused", "match_id": job.match_id, "node": self.node.node_id})
                return
            written = done.write is Write.WRITTEN
            if written:
                for written_hook in self.result_hooks:
                    written_hook(result)
            if result.is_mixed:
                await self._rate_mixed(result)
            (self.metrics.results_written if written else self.metrics.results_duplicate).inc()
            self.completed += 1
            log.info("match %s %s (%s)", job.match_id, "recorded" if written else "was already recorded",
                     result.reason, extra={"event": "result_written" if written else "result_duplicate",
                                           "match_id": job.match_id, "node": self.node.node_id})
            if job.tournament_id and await self._stage_may_end(job.tournament_id, done):
                await asyncio.to_thread(self.tournaments.advance, job.tournament_id)
        except NotReplicated as e:
            # written with its job's removal, on the primary alone: a failover now would roll both back
            # (the job then comes back held here, and is played again after its lease)
            log.warning("match %s: %s (not reported: its tournament moves on at the next sweep)",
                        job.match_id, e, extra={"event": "result_not_replicated", "match_id": job.match_id,
                                                "node": self.node.node_id})
        except (BrokerError, NodeError) as e:
            log.error("match %s: %s (the job stays claimed; another node will replay it)",
                      job.match_id, e)
        finally:
            self.running.pop(job.match_id, None)
            self.wake()  # a slot is free
            for hook in self.done_hooks:
                hook(job)

    async def _stage_may_end(self, tournament_id: str, done: Finished) -> bool:
        """Whether the tournament may have more to enqueue, or be over, now that ``done`` is written:
        its last job went, or it decides as it goes (SPRT), or the count is not known."""
        if done.left != 0 and done.left != -1:
            spec = await asyncio.to_thread(self.broker.tournament_spec, tournament_id)
            return spec is not None and spec.format == "sprt"
        return True

    async def _write(self, claim: Claim, result: MatchResult) -> Finished:
        """Write ``result`` and remove its job (one step); the results of matches that end while a write
        is under way wait for it and go together in the next (one round trip for them all)."""
        future: asyncio.Future[Finished] = asyncio.get_running_loop().create_future()
        self._finishing.append((claim, result, future))
        if self._finisher is None or self._finisher.done():
            self._finisher = asyncio.create_task(self._write_batches(), name="results-writer")
        return await future

    async def _write_batches(self) -> None:
        while self._finishing:
            batch, self._finishing = self._finishing[:FINISH_BATCH], self._finishing[FINISH_BATCH:]
            try:
                done = await asyncio.to_thread(self.broker.finish, [(c, r) for c, r, _ in batch])
            except Exception as e:  # a broker's error, or a bug: each waiter hears it, none hangs
                for _, _, future in batch:
                    if not future.done():
                        future.set_exception(e)
                continue
            for (_, _, future), finished in zip(batch, done, strict=True):
                if not future.done():
                    future.set_result(finished)

    async def _rate_mixed(self, result: MatchResult) -> None:
        """Rate the mixed games the result queued (openskill); one that fails here is rated by
        the next step of any node (the next mixed result of the pool, a leaderboard read)."""
        try:
            await asyncio.to_thread(self.broker.rate_mixed, result)
        except BrokerError as e:
            log.warning("match %s: its mixed games are not rated yet: %s", result.match_id, e)

    async def _long_absent(self, job: MatchJob) -> list[str]:
        """The job's bots that have been connected to no live node for the absent timeout."""
        try:
            present = await asyncio.to_thread(self.broker.present_bots)
            away = [b for b in dict.fromkeys(job.seat_bots) if b not in present]
            now = time.time()
            return [b for b in away
                    if now - await asyncio.to_thread(self.broker.absent_since, b) > self.absent_timeout_s]
        except BrokerError as e:
            log.warning("cannot tell whether the bots of %s are away: %s", job.match_id, e)
            return []

    def _absent_forfeit(self, job: MatchJob, absent: list[str]) -> MatchRecord:
        """The record of a match not played because ``absent`` stayed away: the other team wins it
        (nobody, when both teams are away). It holds no deal, and no seed: the pairing's deals may
        still be played in its other leg."""
        players = job.seat_bots
        team0_away = players[0] in absent or players[2] in absent  # a side forfeits for either bot
        team1_away = players[1] in absent or players[3] in absent
        winner = None if team0_away and team1_away else 1 if team0_away else 0
        bots = []
        for seat, name in enumerate(players):
            entry = self.node.bot_named(name)
            # each seat as its bot's name seats it now: its promoted version (which was away, or won)
            bots.append(SeatBot(seat, entry.bot_id if entry else "", name,
                                entry.promoted_version if entry else ""))
        log.info("match %s: %s connected to no node for %.0f s: forfeited unplayed", job.match_id,
                 ", ".join(absent), self.absent_timeout_s)
        return MatchRecord(
            match_id=job.match_id, ruleset=job.ruleset, seed="", players=players, deals=(),
            bots=tuple(bots), time_control=self.node.config.time, latencies_us=(), strikes=(),
            result=MatchEnd(
                totals=(0, 0), winner=winner, reason=ResultReason.FORFEIT,
                forfeit_seat=next(seat for seat, bot in enumerate(players) if bot in absent),
                detail=f"{' and '.join(absent)} connected to no node for more than "
                       f"{self.absent_timeout_s:g} s",
            ),
        )

    async def _release(self, claim: Claim, why: str) -> None:
        """Give ``claim``'s job back to the queue, unplayed; logged as any problem that repeats."""
        try:
            await asyncio.to_thread(self.broker.release, claim)
            self.released += 1
            self.metrics.jobs_released.inc()
            quiet.warning("released", "match %s given back to the queue: %s", claim.job.match_id, why,
                          extra={"event": "job_released", "match_id": claim.job.match_id,
                                 "node": self.node.node_id})
        except BrokerError as e:
            quiet.warning("release", "release of %s failed: %s (its lease will expire)",
                          claim.job.match_id, e)

    async def _renew_loop(self) -> None:
        while True:
            await asyncio.sleep(self.lease_s / 3)
            await self.renew_leases()

    async def renew_leases(self) -> None:
        """Extend the leases of every running match, in one call; cancel here those lost."""
        runs = list(self.running.items())
        if not runs:
            return
        try:
            renewed = await asyncio.to_thread(self.broker.renew_many, [r.claim for _, r in runs],
                                              self.lease_s)
        except BrokerError as e:
            quiet.warning("renew", "renewing %d leases failed: %s", len(runs), e)
            return
        for (match_id, run), claim in zip(runs, renewed, strict=True):
            if claim is not None:
                run.claim = claim
            elif self.node.is_running(match_id):  # else it just finished here: nothing was lost
                log.warning("lease of %s lost: another node replays it; cancelling here", match_id)
                self.node.cancel_match(match_id)

    async def drain(self) -> None:
        """Let running matches finish for ``drain_s``; cancel and release the rest."""
        if not self.running:
            return
        log.info("draining %d running matches (up to %.0f s)", len(self.running), self.drain_s)
        tasks = [r.task for r in self.running.values()]
        _, pending = await asyncio.wait(tasks, timeout=self.drain_s)
        if not pending:
            return
        leftovers = [(mid, r) for mid, r in self.running.items() if r.task in pending]
        for match_id, _ in leftovers:
            self.node.cancel_match(match_id)  # the match stops unrecorded...
        await asyncio.gather(*(r.task for _, r in leftovers), return_exceptions=True)
        for _, r in leftovers:
            await self._release(r.claim, "the node drained")  # ...then, and only then, goes back


def wake_on_jobs(watcher: NoticeWatcher, worker: Worker, loop: asyncio.AbstractEventLoop) -> None:
    """Wake ``worker`` (on ``loop``) when jobs of a bot with a free seat here come to wait, as soon as
    ``watcher`` reads the ``jobs`` notice; after a gap in the notices, at once (some may be lost)."""

    def jobs(data: list[str]) -> None:
        bots = [b for text in data for b in text.split()]
        loop.call_soon_threadsafe(worker.wake_for, bots)

    watcher.on(JOBS_NOTICE, jobs)
    def gap() -> None:
        loop.call_soon_threadsafe(worker.wake)

    watcher.on_gap(gap)


def stop_on_cancel_notices(watcher: NoticeWatcher, worker: Worker, loop: asyncio.AbstractEventLoop) -> None:
    """Stop ``worker``'s running matches of each tournament a cancel notice names, on ``loop`` as soon
    as ``watcher`` reads it (the poll of ``cancel_check_s`` remains, for a notice missed)."""

    def cancelled(tournament_ids: list[str]) -> None:
        for tid in dict.fromkeys(tournament_ids):
            loop.call_soon_threadsafe(worker.stop_tournament, tid)

    watcher.on(CANCEL_NOTICE, cancelled)
