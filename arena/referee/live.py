"""One match on a node while it runs: :class:`LiveMatch`; and what anyone may ask of a match.

A live match holds its runner and task, the public events so far (a
spectator who comes late sees the match from its first event), the queues of
its watchers, and its record once it is over, for those waiting on it. Then
the node lets it go, keeping only its :class:`MatchSummary` (what anyone may
ask of a match, running or recorded) among the recent ones.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum

from belote.arena.v1 import game_pb2 as pb

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


#: what a watcher's queue carries: the public events, then None when the match is over
WatchQueue = asyncio.Queue[pb.PublicEvent | None]


class LiveMatch:
    """One match on this node while it runs: its runner and task, its public events and watchers.

    The events so far are kept serialized (a few dozen bytes each, against
    about a kilobyte for a message object), for the watchers who come late.
    Once the match is over the node forgets it: its record is in the store,
    and a late watcher gets the events rebuilt from it
    (:mod:`arena.referee.replay_events`).
    """

    def __init__(self, hub: Hub, spec: MatchSpec) -> None:
        # the runner's publisher holds the lists, not this object: no reference cycle, so a
        # finished match is freed as soon as the node lets go of it, without waiting for the
        # garbage collector
        history: list[bytes] = []
        watchers: list[WatchQueue] = []

        def publish(event: pb.PublicEvent) -> None:
            history.append(event.SerializeToString())
            for q in watchers:
                q.put_nowait(event)

        self.runner = MatchRunner(hub, spec, publish=publish)
        self.match_id = spec.match_id
        #: every public event so far, serialized
        self.history = history
        self.watchers = watchers
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
            seed=str(spec.seed), result=None,
        )

    def events_so_far(self) -> Iterator[pb.PublicEvent]:
        """The public events published until now (not those that come while they are read)."""
        return (pb.PublicEvent.FromString(b) for b in itertools.islice(self.history, len(self.history)))

    def end(self) -> None:
        """The match is over: its waiters get the record, its watchers hear the end."""
        self.record = self.runner.record
        for q in self.watchers:
            q.put_nowait(None)
        self.watchers.clear()
        self.done.set()
