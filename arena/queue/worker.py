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
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from arena.queue.broker import Broker, BrokerError, Claim, LeaseLost, MatchJob, MatchResult
from arena.referee.node import InvalidArgument, Node, NodeError, NotFound
from arena.tournament import Tournament, TournamentSpec

log = logging.getLogger("arena.queue")


@dataclass
class Running:
    claim: Claim
    task: asyncio.Task[None]
    started: float = field(default_factory=time.monotonic)


class Worker:
    def __init__(
        self, node: Node, broker: Broker, *, capacity: int = 4, lease_s: float = 30.0,
        poll_s: float = 0.25, drain_s: float = 60.0,
    ) -> None:
        self.node = node
        self.broker = broker
        self.capacity = capacity
        self.lease_s = lease_s
        self.poll_s = poll_s
        self.drain_s = drain_s
        self.running: dict[str, Running] = {}
        self.completed = 0
        self.released = 0
        self._slot_freed = asyncio.Event()

    # --------------------------------------------------------------- main loop
    async def run(self, stop: asyncio.Event) -> None:
        helpers = [
            asyncio.create_task(self._renew_loop(), name="lease-renewal"),
            asyncio.create_task(self._advance_loop(), name="tournament-advance"),
        ]
        try:
            while not stop.is_set():
                started = 0
                free = self.capacity - len(self.running)
                if free > 0:
                    try:
                        claims = await asyncio.to_thread(
                            self.broker.claim, self.node.node_id, free, self.lease_s)
                    except BrokerError as e:
                        log.warning("claim failed: %s", e)
                        claims = []
                    for claim in claims:
                        started += await self._start(claim)
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
                await asyncio.to_thread(advance_open_tournaments, self.broker)
            except BrokerError as e:
                log.warning("advancing tournaments failed: %s", e)

    def _runnable(self, job: MatchJob) -> str:
        """Why this node cannot seat the job's bots now ('' if it can)."""
        need: dict[str, int] = {}
        for name in (job.team0, job.team1):
            need[name] = need.get(name, 0) + 2
        for name, seats in need.items():
            entry = self.node.registry.by_name(name)
            if entry is None:
                return f"bot {name} is not registered (yet)"
            link = self.node.hub.links.get(entry.bot_id)
            if link is None or not link.connected:
                return f"bot {name} is not connected here"
            if link.free_seats < seats:
                return f"bot {name} has no free seats here"
        return ""

    async def _start(self, claim: Claim) -> int:
        job = claim.job
        stored = None if job.match_id in self.node.tasks else self.node.store.get(job.match_id)
        if stored is not None:
            # played to the end here, its record kept, and then the result was not written (this
            # node died and restarted on its data folder, or the broker failed): the node refuses
            # to play the match id again, so write the result from the record
            task = asyncio.create_task(self._finish(claim, stored), name=f"job-{job.match_id}")
            self.running[job.match_id] = Running(claim, task)
            return 1
        why = self._runnable(job)
        if why:
            log.info("releasing %s: %s", job.match_id, why)
            await self._release(claim)
            return 0
        try:
            self.node.start_match(
                job.team0, job.team1, job.ruleset, seed=job.seed, target=job.target,
                deals=job.deals, match_id=job.match_id,
            )
        except (InvalidArgument, NotFound) as e:
            # a job no node can ever play: keep it claimed so that its lease expires and
            # each redelivery counts, until it lands in the dead-letter list
            log.error("job %s cannot be played: %s (it will be dead-lettered)", job.match_id, e)
            return 0
        except NodeError as e:
            log.warning("cannot start %s now: %s", job.match_id, e)
            await self._release(claim)
            return 0
        task = asyncio.create_task(self._finish(claim), name=f"job-{job.match_id}")
        self.running[job.match_id] = Running(claim, task)
        return 1

    async def _finish(self, claim: Claim, stored: dict[str, Any] | None = None) -> None:
        job = claim.job
        try:
            record = stored
            if record is None:
                state = await self.node.wait(job.match_id)
                if state.state != "finished" or state.record is None:
                    return  # cancelled here: released by whoever cancelled it
                record = state.record
            outcome = record["result"]  # a finished match's record says how it ended
            result = MatchResult(
                match_id=job.match_id, tournament_id=job.tournament_id, team0=job.team0,
                team1=job.team1, totals=(outcome["totals"][0], outcome["totals"][1]),
                winner=outcome["winner"], reason=outcome["reason"], record=record,
                node_id=self.node.node_id,
            )
            current = self.running.get(job.match_id)
            written = await asyncio.to_thread(self.broker.write_result, result)
            await asyncio.to_thread(self.broker.ack, current.claim if current else claim)
            self.completed += 1
            log.info("match %s %s (%s)", job.match_id, "recorded" if written else "was already recorded",
                     result.reason)
            if job.tournament_id:
                await asyncio.to_thread(advance_tournament, self.broker, job.tournament_id)
        except BrokerError as e:
            log.error("match %s: %s (the job stays claimed; another node will replay it)",
                      job.match_id, e)
        finally:
            self.running.pop(job.match_id, None)
            self._slot_freed.set()

    async def _release(self, claim: Claim) -> None:
        try:
            await asyncio.to_thread(self.broker.release, claim)
            self.released += 1
        except BrokerError as e:
            log.warning("release of %s failed: %s (its lease will expire)", claim.job.match_id, e)

    async def _renew_loop(self) -> None:
        while True:
            await asyncio.sleep(self.lease_s / 3)
            for match_id, run in list(self.running.items()):
                try:
                    run.claim = await asyncio.to_thread(self.broker.renew, run.claim, self.lease_s)
                except LeaseLost:
                    if match_id not in self.node.tasks:
                        continue  # it just finished here and was acked: nothing was lost
                    log.warning("lease of %s lost: another node replays it; cancelling here", match_id)
                    self._cancel_match(match_id)
                except BrokerError as e:
                    log.warning("renewing %s failed: %s", match_id, e)

    def _cancel_match(self, match_id: str) -> None:
        task = self.node.tasks.get(match_id)
        if task is not None:
            task.cancel()

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
            self._cancel_match(match_id)  # the match stops unrecorded...
        await asyncio.gather(*(r.task for _, r in leftovers), return_exceptions=True)
        for _, r in leftovers:
            await self._release(r.claim)  # ...then, and only then, goes back to the queue


#: one Tournament per id and process: it caches what it computed from results
#: (duplicate pairs replay their records), and a tournament's spec never changes
_TOURNAMENTS: dict[str, Tournament] = {}
_TOURNAMENTS_LOCK = threading.Lock()


def tournament_of(tournament_id: str, spec_json: dict[str, Any]) -> Tournament:
    with _TOURNAMENTS_LOCK:
        tour = _TOURNAMENTS.get(tournament_id)
        if tour is None:
            tour = _TOURNAMENTS[tournament_id] = Tournament(TournamentSpec.from_dict(spec_json))
        return tour


def advance_open_tournaments(broker: Broker) -> None:
    for tournament_id in broker.list_tournaments():
        advance_tournament(broker, tournament_id)


def advance_tournament(broker: Broker, tournament_id: str) -> None:
    """Enqueue what the tournament needs next, once; mark it finished when it is."""
    found = broker.get_tournament(tournament_id)
    if found is None:
        return
    spec_json, state = found
    if state not in ("created", "running"):
        return
    if state == "running" and spec_json.get("format") != "sprt" and broker.pending_count(tournament_id):
        # a stage is complete only when none of its jobs is left: nothing to do yet
        # (sprt may decide in the middle of a batch, so it always looks at its results)
        return
    tour = tournament_of(tournament_id, spec_json)
    results = broker.results(tournament_id)
    if tour.is_finished(results):
        broker.set_tournament_state(tournament_id, "finished", expect=state)
        return
    key, jobs = tour.jobs_for(results)
    if jobs:
        broker.enqueue_once(key, jobs)
    if state == "created":
        broker.set_tournament_state(tournament_id, "running", expect="created")
