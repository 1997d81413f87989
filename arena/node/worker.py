"""The queue worker of a referee node: claim jobs, play them, write results once.

A node claims jobs while it has free match slots; a job whose bots are not
connected here (or lack free seats) is released at once for another node. While
a match runs its lease is renewed; if the lease is lost (this node was thought
dead) the match is cancelled here, unrecorded. When a match finishes its result
is written (exactly once, with the rating update) and the job acked; then the
tournament is advanced: the next round or batch is enqueued once, or the
tournament marked finished.

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
from dataclasses import dataclass, field

from arena.edge.quietlog import QuietLog
from arena.node.notices import NoticeWatcher
from arena.queue import CANCEL_NOTICE, Broker, BrokerError, Claim, LeaseLost, TournamentCancelled
from arena.records import MatchEnd, MatchRecord, ResultReason, SeatBot
from arena.referee.node import InvalidArgument, Node, NodeError, SeatingError
from arena.tournament import MatchJob, MatchResult, Tournaments, TournamentState

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
        self, node: Node, broker: Broker, *, capacity: int = 4, lease_s: float = 30.0,
        poll_s: float = 0.25, drain_s: float = 60.0, tournaments: Tournaments | None = None,
        absent_timeout_s: float = 600.0, scan_budget: int = 64, cancel_check_s: float = 1.0,
    ) -> None:
        self.node = node
        self.broker = broker
        self.tournaments = tournaments or Tournaments(broker)
        #: a job's bot connected to no live node for this long forfeits the job
        self.absent_timeout_s = absent_timeout_s
        #: jobs a poll may claim and give back (their bots are not here) before it rests: so that
        #: the jobs of bots connected here are found behind those of bots away
        self.scan_budget = scan_budget
        self.capacity = capacity
        self.lease_s = lease_s
        self.poll_s = poll_s
        self.drain_s = drain_s
        #: how often the states of the running matches' tournaments are read (a cancel's bound)
        self.cancel_check_s = cancel_check_s
        self.running: dict[str, Running] = {}
        self.completed = 0
        self.released = 0
        self._slot_freed = asyncio.Event()
        self.metrics = metrics = node.metrics
        metrics.capacity.set_function(lambda: self.capacity)
        metrics.free_slots.set_function(lambda: max(0, self.capacity - len(self.running)))
        metrics.samplers.append(self._sample)
        self._dead_lettered = broker.dead_lettered

    def tournament_of(self, match_id: str) -> str:
        """The tournament of a match this node plays for the queue ("" for any other match)."""
        run = self.running.get(match_id)
        return "" if run is None else run.claim.job.tournament_id

    def _sample(self) -> None:
        """What a scrape asks of the broker (in a thread): the jobs waiting, the live nodes."""
        self.metrics.jobs_waiting.set(self.broker.pending_count())
        self.metrics.live_nodes.set(len(self.broker.live_nodes()))

    def _count_claims(self, claims: list[Claim]) -> None:
        """The reclaims and dead letters among a claim's jobs (a claim counts once it starts). A
        reclaim is logged as any problem that repeats: a job whose bots no node here seats comes
        back at each claim, and one lost lease once gave 2,467 lines in 28 s for 4 jobs."""
        metrics = self.metrics
        for claim in claims:
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
        ]
        try:
            while not stop.is_set():
                started = 0
                budget = self.scan_budget
                free = self.capacity - len(self.running)
                while free > 0 and budget > 0 and not stop.is_set():
                    try:
                        claims = await asyncio.to_thread(
                            self.broker.claim, self.node.node_id, free, self.lease_s)
                    except BrokerError as e:
                        quiet.warning("claim", "claim failed: %s", e)
                        claims = []
                    self._count_claims(claims)
                    if not claims:
                        break
                    budget -= len(claims)
                    for claim in claims:
                        started += await self._start(claim)
                    free = self.capacity - len(self.running)
                if started == 0:
                    # sleep until the poll, a freed slot (claim again at once) or the stop
                    self._slot_freed.clear()
                    waiters = {asyncio.ensure_future(stop.wait()),
                               asyncio.ensure_future(self._slot_freed.wait())}
                    _, pending = await asyncio.wait(waiters, timeout=self.poll_s,
                                                    return_when=asyncio.FIRST_COMPLETED)
                    for w in pending:
                        w.cancel()
        finally:
            await self.drain()
            for task in helpers:
                task.cancel()
            await asyncio.gather(*helpers, return_exceptions=True)

    async def _advance_loop(self) -> None:
        """Advance every open tournament now and then, whatever the matches just played here.

        A node that wrote a result and died before advancing its tournament
        leaves the next round unqueued; the job it never acked is dropped by
        whichever node claims it next (its result exists). This sweep catches
        that: enqueueing a stage is idempotent, so any node may do it.
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
            # its bots are not here (or not yet, or busy): another node, or a later claim, seats
            # them; unless a bot has been connected to no node for too long: then it forfeits
            absent = await self._long_absent(job)
            if absent:
                task = asyncio.create_task(self._finish(claim, self._absent_forfeit(job, absent)),
                                           name=f"job-{job.match_id}")
                self.running[job.match_id] = Running(claim, task)
                return 1
            log.debug("releasing %s: %s", job.match_id, e)
            await self._release(claim)
            return 0
        except InvalidArgument as e:
            # a job no node can ever play: keep it claimed so that its lease expires and
            # each redelivery counts, until it lands in the dead-letter list
            log.error("job %s cannot be played: %s (it will be dead-lettered)", job.match_id, e)
            return 0
        except NodeError as e:
            quiet.warning("cannot start", "cannot start %s now: %s", job.match_id, e)
            await self._release(claim)
            return 0
        task = asyncio.create_task(self._finish(claim), name=f"job-{job.match_id}")
        self.running[job.match_id] = Running(claim, task)
        return 1

    async def _finish(self, claim: Claim, stored: MatchRecord | None = None) -> None:
        job = claim.job
        try:
            record = stored or await self.node.wait(job.match_id)
            current = self.running.get(job.match_id)
            if record.result.reason is ResultReason.ABORTED:
                if current is not None and current.dropped:  # its tournament was cancelled
                    await asyncio.to_thread(self.broker.ack, current.claim)
                return  # else cancelled here: released by whoever cancelled it
            result = MatchResult.of_record(job, record, self.node.node_id)
            try:
                written = await asyncio.to_thread(self.broker.write_result, result)
            except TournamentCancelled as e:
                log.info("%s: its job is dropped", e, extra={
                    "event": "result_refused", "match_id": job.match_id, "node": self.node.node_id})
                await asyncio.to_thread(self.broker.ack, current.claim if current else claim)
                return
            if result.is_mixed:
                await self._rate_mixed(result)
            (self.metrics.results_written if written else self.metrics.results_duplicate).inc()
            await asyncio.to_thread(self.broker.ack, current.claim if current else claim)
            self.completed += 1
            log.info("match %s %s (%s)", job.match_id, "recorded" if written else "was already recorded",
                     result.reason, extra={"event": "result_written" if written else "result_duplicate",
                                           "match_id": job.match_id, "node": self.node.node_id})
            if job.tournament_id:
                await asyncio.to_thread(self.tournaments.advance, job.tournament_id)
        except (BrokerError, NodeError) as e:
            log.error("match %s: %s (the job stays claimed; another node will replay it)",
                      job.match_id, e)
        finally:
            self.running.pop(job.match_id, None)
            self._slot_freed.set()

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
            bots.append(SeatBot(seat, entry.bot_id if entry else "", name))
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

    async def _release(self, claim: Claim) -> None:
        try:
            await asyncio.to_thread(self.broker.release, claim)
            self.released += 1
            self.metrics.jobs_released.inc()
        except BrokerError as e:
            quiet.warning("release", "release of %s failed: %s (its lease will expire)",
                          claim.job.match_id, e)

    async def _renew_loop(self) -> None:
        while True:
            await asyncio.sleep(self.lease_s / 3)
            for match_id, run in list(self.running.items()):
                try:
                    run.claim = await asyncio.to_thread(self.broker.renew, run.claim, self.lease_s)
                except LeaseLost:
                    if not self.node.is_running(match_id):
                        continue  # it just finished here and was acked: nothing was lost
                    log.warning("lease of %s lost: another node replays it; cancelling here", match_id)
                    self.node.cancel_match(match_id)
                except BrokerError as e:
                    log.warning("renewing %s failed: %s", match_id, e)

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
            await self._release(r.claim)  # ...then, and only then, goes back to the queue


def stop_on_cancel_notices(watcher: NoticeWatcher, worker: Worker, loop: asyncio.AbstractEventLoop) -> None:
    """Stop ``worker``'s running matches of each tournament a cancel notice names, on ``loop`` as soon
    as ``watcher`` reads it (the poll of ``cancel_check_s`` remains, for a notice missed)."""

    def cancelled(tournament_ids: list[str]) -> None:
        for tid in dict.fromkeys(tournament_ids):
            loop.call_soon_threadsafe(worker.stop_tournament, tid)

    watcher.on(CANCEL_NOTICE, cancelled)
