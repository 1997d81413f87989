"""One match on a node, from its start until it leaves the node's memory: :class:`LiveMatch`.

A live match holds its runner and task, the public events so far (a
spectator who comes late sees the match from its first event), the queues of
its watchers, and its record once it is over. :class:`MatchSummary` is what
anyone may ask of a match, running or recorded.
"""

from __future__ import annotations

import asyncio
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


#: what a watcher's queue carries: the public events, then None when the match is over
WatchQueue = asyncio.Queue[pb.PublicEvent | None]


class LiveMatch:
    """One match on this node: its runner and task, its public events and watchers, its record."""

    def __init__(self, hub: Hub, spec: MatchSpec) -> None:
        self.runner = MatchRunner(hub, spec, publish=self.publish)
        self.match_id = spec.match_id
        #: every public event so far, for the watchers who come late
        self.history: list[pb.PublicEvent] = []
        self.watchers: list[WatchQueue] = []
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

    def publish(self, event: pb.PublicEvent) -> None:
        self.history.append(event)
        for q in self.watchers:
            q.put_nowait(event)

    def end(self) -> None:
        """The match is over: its record is kept and its watchers hear the end."""
        self.record = self.runner.record
        for q in self.watchers:
            q.put_nowait(None)
        self.watchers = []
        self.done.set()
