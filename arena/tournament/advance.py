"""Moving tournaments forward from the results in a store, and reading their progress.

Any node (or the command line) may advance a tournament at any time: the next
stage is enqueued under an idempotency key, so two nodes doing it at once
enqueue it once, and the state moves by compare-and-set. Nothing is enqueued
while a job of the tournament is left: a stage (a mirror stage's half:
:meth:`Tournament.jobs_for`) follows the last job of the one before it. What is needed of
the store is the narrow :class:`TournamentStore` protocol; the queue's
brokers keep it.

:class:`Tournaments` builds each :class:`Tournament` once per process and
keeps it (a tournament's spec never changes). It works from the result
summaries the store keeps with each result (:mod:`arena.tournament.summary`),
never from the results' records, and keeps those it has read: the store's log
of a tournament's summaries only grows, in the order written, so each
advance reads only the summaries written since the last one (a cursor), and
what it reads from the store does not grow with the results.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from arena.tournament.jobs import (
    ALL_PLAYED,
    CANCELLED_BY_ADMIN,
    SPRT_DECIDED,
    Ending,
    MatchJob,
    TournamentState,
)
from arena.tournament.spec import TournamentError, TournamentSpec, check_callers_id
from arena.tournament.sprt import SprtState
from arena.tournament.standings import Game, Standing
from arena.tournament.summary import ResultSummary
from arena.tournament.tournament import Stage, Tournament

#: the tournaments whose summaries a process keeps at once (the least recently read is forgotten first:
#: a summary is a few hundred bytes in memory, a tournament up to some thousands of them)
LOGS_KEPT = 64


class UnknownTournament(TournamentError):
    """No tournament with that id in the store."""


class TournamentExists(TournamentError):
    """A tournament with that id is already in the store."""


class TournamentClosed(TournamentError):
    """The tournament is already finished or cancelled."""


class TournamentStore(Protocol):
    """What tournaments need of the queue (both brokers keep it)."""

    def put_tournament(self, spec: TournamentSpec) -> bool:
        """Store it in state ``created``; False if its id is taken."""
        ...

    def get_tournament(self, tournament_id: str) -> tuple[TournamentSpec, TournamentState] | None: ...

    def set_tournament_state(
        self, tournament_id: str, state: TournamentState, *, expect: TournamentState | None = None,
        reason: str = "",
    ) -> bool:
        """Move to ``state``; with ``expect``, only from that state (compare-and-set). Ending it
        (finished, cancelled) keeps when and ``reason`` in its :class:`Ending`, and reveals its
        secret then if none of its jobs is left (else the last job to go does)."""
        ...

    def tournament_ending(self, tournament_id: str) -> Ending:
        """When and why it ended and its secret was revealed (an empty Ending while it is open)."""
        ...

    def list_tournaments(self) -> list[str]: ...

    def tournament_states(self, ids: Sequence[str]) -> dict[str, TournamentState]:
        """The states of the stored ones of ``ids``, in one read."""
        ...

    def summaries(self, tournament_id: str, start: int = 0) -> list[ResultSummary]:
        """The tournament's result summaries in the order written, from the ``start``-th on."""
        ...

    def pending_count(self, tournament_id: str | None = None) -> int:
        """Jobs enqueued or claimed and not yet acked."""
        ...

    def enqueue_once(self, key: str, jobs: Sequence[MatchJob]) -> bool:
        """Enqueue ``jobs`` only if ``key`` was never used; True if enqueued."""
        ...


@dataclass(frozen=True)
class Progress:
    """Where a tournament stands: its state, its matches, its standings (and its SPRT)."""

    spec: TournamentSpec
    state: TournamentState
    matches_done: int
    matches_scheduled: int
    matches_queued: int
    standings: list[Standing]
    sprt: SprtState | None
    #: the ids of its matches with a result, in order
    finished: tuple[str, ...] = ()
    #: its finished pairings, in schedule order
    games: tuple[Game, ...] = ()
    #: the same as games between bots (a partners game: one per bot of a side; else ``games``)
    bot_games: tuple[Game, ...] = ()
    #: when and why it ended, and its secret was revealed
    ending: Ending = field(default_factory=Ending)
    #: every stage scheduled so far, the current one last (its pairings' jobs in schedule order)
    stages: tuple[Stage, ...] = ()
    #: the summaries of its results, in the order written
    summaries: tuple[ResultSummary, ...] = ()

    @property
    def tournament_id(self) -> str:
        return self.spec.tournament_id

    @property
    def secret_revealed(self) -> bool:
        """Whether its secret may be shown: once it has ended and none of its matches can still be
        played (none queued, none claimed: a running match holds its claim until it has stopped).
        A cancelled tournament's running matches are stopped, so its secret follows within the
        bound of that (see :mod:`arena.node.worker`)."""
        return self.ending.reveals(self.state, self.matches_queued)

    def in_schedule_order(self) -> list[tuple[ResultSummary, int, int]]:
        """Its results in schedule order (round, then board, then leg or table), each with its
        round and board; a result listed twice counts once (the first), one of no job not at all."""
        by_id: dict[str, ResultSummary] = {}
        for r in self.summaries:
            by_id.setdefault(r.match_id, r)
        return [(by_id[job.match_id], p.round, p.index)
                for stage in self.stages for p in stage.pairings for job in p.jobs if job.match_id in by_id]

    @property
    def ending_text(self) -> str:
        """How it ended and when its secret was (or will be) revealed, in a line ("" while open)."""
        return self.ending.describe(self.state, self.matches_queued)


class Tournaments:
    """The tournaments of one store, each built once in this process."""

    def __init__(self, store: TournamentStore) -> None:
        self.store = store
        self._built: dict[str, Tournament] = {}
        # the summaries read so far, by tournament id (a prefix of the store's log)
        self._logs: dict[str, list[ResultSummary]] = {}
        self._lock = threading.Lock()  # nodes advance from worker threads

    def tournament(self, spec: TournamentSpec) -> Tournament:
        with self._lock:
            tour = self._built.get(spec.tournament_id)
            if tour is None:
                tour = self._built[spec.tournament_id] = Tournament(spec)
            return tour

    def summaries(self, tournament_id: str) -> list[ResultSummary]:
        """Every result summary of the tournament so far, reading from the store only the new ones."""
        with self._lock:
            start = len(self._logs.get(tournament_id, ()))
        new = self.store.summaries(tournament_id, start)
        with self._lock:
            kept = self._logs.pop(tournament_id, [])  # put back last: the latest read is kept longest
            whole = len(kept) >= start  # (another thread may have read some of ``new`` meanwhile)
            if whole:
                kept.extend(new[len(kept) - start:])
            if len(self._logs) >= LOGS_KEPT:
                del self._logs[next(iter(self._logs))]
            self._logs[tournament_id] = kept
            if whole:
                return list(kept)
        return self.summaries(tournament_id)  # forgotten meanwhile: read on from what is kept

    def _get(self, tournament_id: str) -> tuple[TournamentSpec, TournamentState]:
        found = self.store.get_tournament(tournament_id)
        if found is None:
            raise UnknownTournament(f"no tournament {tournament_id!r}")
        return found

    def create(self, spec: TournamentSpec) -> None:
        """Store the tournament and enqueue its first stage (a caller's: never a version test's id)."""
        check_callers_id(spec.tournament_id)
        if not self.store.put_tournament(spec):
            raise TournamentExists(f"tournament {spec.tournament_id} exists")
        self.advance(spec.tournament_id)

    def create_once(self, spec: TournamentSpec, *, seed_drawn: bool = False) -> TournamentSpec:
        """:meth:`create`, once however often it is asked: the tournament stored under ``spec``'s id if
        it is the same tournament (a retry, whose first answer was lost: a cut connection, a node that
        stopped between its write and its answer, a queue that failed after the write), advanced
        again (its first stage enqueued if the first try did not get that far). ``seed_drawn``: the
        seed was drawn for this call, not given by the caller, so it is no part of what makes two
        tries the same. :class:`TournamentExists` for another tournament under that id."""
        try:
            self.create(spec)
            return spec
        except TournamentExists:
            stored, _ = self._get(spec.tournament_id)
            asked, found = spec.to_dict(), stored.to_dict()
            if seed_drawn:
                del asked["seed"], found["seed"]
            if asked != found:
                raise TournamentExists(f"tournament {spec.tournament_id} exists with another spec (a "
                                       f"create made again with the same spec answers it)") from None
            self.advance(spec.tournament_id)
            return stored

    def advance(self, tournament_id: str) -> None:
        """Enqueue what the tournament needs next, once; mark it finished when it is."""
        found = self.store.get_tournament(tournament_id)
        if found is None:
            return
        spec, state = found
        if not state.is_open:
            return
        pending = self.store.pending_count(tournament_id) if state is TournamentState.RUNNING else 0
        if pending and spec.format != "sprt":
            # a stage (or a mirror stage's half) is complete only when none of its jobs is left:
            # nothing to do yet (sprt may decide in the middle of a batch, so it always looks at
            # its results)
            return
        tour = self.tournament(spec)
        key, jobs = tour.jobs_for(self.summaries(tournament_id))  # one pass over the summaries
        if key == f"{tournament_id}/finished":
            self.store.set_tournament_state(tournament_id, TournamentState.FINISHED, expect=state,
                                            reason=SPRT_DECIDED if spec.format == "sprt" else ALL_PLAYED)
            return
        if jobs and not pending:
            # nothing enqueued while jobs are left: an sprt batch whose first legs are all over
            # has its second legs already queued if an older node enqueued the batch whole, or
            # its last first leg is not acked yet (the node that acks it advances next)
            self.store.enqueue_once(key, jobs)
        if state is TournamentState.CREATED:
            self.store.set_tournament_state(tournament_id, TournamentState.RUNNING,
                                            expect=TournamentState.CREATED)

    def advance_open(self) -> None:
        """Advance every tournament still open (a sweep that catches stages nobody enqueued): their
        states in one read, then only the open ones, each in a few."""
        ids = self.store.list_tournaments()
        states = self.store.tournament_states(ids) if ids else {}
        for tournament_id in ids:
            state = states.get(tournament_id)
            if state is not None and state.is_open:
                self.advance(tournament_id)

    def cancel(self, tournament_id: str) -> None:
        """Stop a tournament: its queued matches are dropped unplayed, its running ones stopped
        unrecorded (each node stops its own: :meth:`arena.node.worker.Worker.stop_tournament`), a
        result written after this is refused; its secret is revealed once none can still be played."""
        while True:
            _, state = self._get(tournament_id)
            if not state.is_open:
                raise TournamentClosed(f"tournament {tournament_id} is already {state}")
            if self.store.set_tournament_state(tournament_id, TournamentState.CANCELLED, expect=state,
                                               reason=CANCELLED_BY_ADMIN):
                return
            # it moved meanwhile (created -> running, or it finished): look again

    def secret_revealed(self, tournament_id: str) -> bool:
        """:attr:`Progress.secret_revealed` in three small reads, without the results."""
        _, state = self._get(tournament_id)
        if state.is_open:
            return False
        in_play = self.store.pending_count(tournament_id)
        return self.store.tournament_ending(tournament_id).reveals(state, in_play)

    def progress(self, tournament_id: str) -> Progress:
        spec, state = self._get(tournament_id)
        tour = self.tournament(spec)
        results = self.summaries(tournament_id)
        seen = tour.overview(results)
        done = sorted({r.match_id for r in results})
        ending = Ending() if state.is_open else self.store.tournament_ending(tournament_id)
        return Progress(
            spec=spec, state=state, matches_done=len(done),
            matches_scheduled=sum(len(p.jobs) for stage in seen.stages for p in stage.pairings),
            matches_queued=self.store.pending_count(tournament_id), standings=seen.standings,
            sprt=seen.sprt, finished=tuple(done), games=tuple(seen.games),
            bot_games=tuple(seen.bot_games), ending=ending, stages=tuple(seen.stages),
            summaries=tuple(results),
        )
