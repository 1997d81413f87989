"""One match on a node while it runs: :class:`LiveMatch`; and what anyone may ask of a match.

A live match holds its runner and task, the public events so far (a
spectator who comes late sees the match from its first event; each watcher
reads them through its :class:`EventFeed`), and its record once it is over,
for those waiting on it. Then the node lets it go, keeping only its
:class:`MatchSummary` (what anyone may ask of a match, running or recorded)
among the recent ones.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum

from belote.arena.v1 import game_pb2 as pb

from arena.metrics import NodeMetrics
from arena.records import MatchEnd, MatchRecord, ResultReason, RulesetSpec
from arena.referee.runner import MatchRunner, MatchSpec
from arena.referee.sessions import Hub


class MatchState(StrEnum):
    """Where a match on this node stands (``MatchSummary.state`` on the wire)."""

    RUNNING = "running"
    #: over and recorded: played to its end or forfeited (see its result's reason)
    FINISHED = "finished"
    #: stopped by the node (a drain, a lost lease, a shutdown): not recorded
    ABORTED = "aborted"


@dataclass(frozen=True, slots=True)
class MatchSummary:
    """What anyone may ask of a match: who plays, the score, how it ended."""

    match_id: str
    state: MatchState
    players: tuple[str, ...]
    ruleset: RulesetSpec
    totals: tuple[int, int]
    deals_played: int
    #: "" while the match runs: its deals follow from it
    seed: str
    result: MatchEnd | None

    @classmethod
    def of_record(cls, record: MatchRecord) -> MatchSummary:
        aborted = record.result.reason is ResultReason.ABORTED
        return cls(
            match_id=record.match_id, state=MatchState.ABORTED if aborted else MatchState.FINISHED,
            players=record.players, ruleset=record.ruleset, totals=record.totals,
            deals_played=record.deals_played, seed=str(record.seed), result=record.result,
        )


class _Signal:
    """Wakes whoever waits for the next event (every waiter at once; none waiting costs nothing)."""

    __slots__ = ("_waiter",)

    def __init__(self) -> None:
        self._waiter: asyncio.Future[None] | None = None

    async def wait(self) -> None:
        if self._waiter is None:
            self._waiter = asyncio.get_running_loop().create_future()
        # shielded: a watcher that goes away cancels its own wait, not the others'
        await asyncio.shield(self._waiter)

    def wake(self) -> None:
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)


class LiveMatch:
    """One match on this node while it runs: its runner and task, its public events, its record.

    The events so far are kept serialized (a few dozen bytes each, against
    about a kilobyte for a message object). A watcher reads them through its
    own :class:`EventFeed`, a position in that one list: publishing an event
    costs the same with one watcher or thousands, and a watcher that reads
    slowly, or not at all, holds nothing but its position. Once the match is
    over the node forgets it: its record is in the store, and a late watcher
    gets the events rebuilt from it (:mod:`arena.referee.replay_events`).
    """

    def __init__(self, hub: Hub, spec: MatchSpec, metrics: NodeMetrics | None = None,
                 node_id: str = "") -> None:
        # the runner's publisher holds the list and the signal, not this object: no reference
        # cycle, so a finished match is freed as soon as the node and its waiters let go of it,
        # without waiting for the garbage collector
        history: list[bytes] = []
        signal = _Signal()

        def publish(event: bytes) -> None:  # serialized by the runner, once for bots and watchers
            history.append(event)
            signal.wake()

        self.runner = MatchRunner(hub, spec, publish=publish, metrics=metrics, node_id=node_id)
        self.match_id = spec.match_id
        #: every public event so far, serialized
        self.history = history
        self._signal = signal
        self.record: MatchRecord | None = None
        self.done = asyncio.Event()
        self.task: asyncio.Task[MatchRecord] | None = None

    def summary(self) -> MatchSummary:
        if self.record is not None:
            return MatchSummary.of_record(self.record)
        spec = self.runner.spec
        return MatchSummary(
            match_id=self.match_id, state=MatchState.RUNNING, players=tuple(s.name for s in spec.seats),
            ruleset=spec.rules.to_spec(), totals=self.runner.totals, deals_played=self.runner.deals_played,
            seed="", result=None,  # the deals follow from the seed: it is shown once the match is over
        )

    def watch(self) -> tuple[Iterator[pb.PublicEvent], EventFeed]:
        """The events published until now, and the feed of those that follow them."""
        count = len(self.history)
        so_far = (pb.PublicEvent.FromString(b) for b in itertools.islice(self.history, count))
        return so_far, EventFeed(self.history, self.done, self._signal, count)

    def end(self) -> None:
        """The match is over: its waiters get the record, its watchers the end of their feed."""
        self.record = self.runner.record
        self.done.set()
        self._signal.wake()


class EventFeed:
    """A watcher's position in a running match's events: :meth:`get` gives the next one, or None
    once the match is over and every event has been read.

    It holds the events and the signals, not the match: a watcher still reading
    after the end keeps the match's events alive, not its runner.
    """

    __slots__ = ("_done", "_history", "_next", "_signal")

    def __init__(self, history: list[bytes], done: asyncio.Event, signal: _Signal, start: int) -> None:
        self._history = history
        self._done = done
        self._signal = signal
        self._next = start

    async def get(self) -> pb.PublicEvent | None:
        while self._next >= len(self._history):
            if self._done.is_set():
                return None
            await self._signal.wait()
        data = self._history[self._next]
        self._next += 1
        return pb.PublicEvent.FromString(data)
