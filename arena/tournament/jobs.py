"""What a tournament asks to be played, and what comes back.

A :class:`MatchJob` is one match to play; the queue carries it to whichever
node can seat its bots. A :class:`MatchResult` is what that node writes once
the match is over, keyed by the match id: the totals, the winner and the
whole :class:`~arena.records.MatchRecord`. A tournament moves through the
:class:`TournamentState` values; its :class:`Ending` says when and why it
ended, and when its secret was revealed.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any

from arena.records import MatchRecord, ResultReason, RulesetSpec, seat_bots_of, side_name


class TournamentState(StrEnum):
    """Where a tournament stands, in the order it usually goes through them."""

    #: stored, its first stage not yet queued
    CREATED = "created"
    RUNNING = "running"
    FINISHED = "finished"
    #: stopped by an admin: its queued matches are dropped unplayed
    CANCELLED = "cancelled"

    @property
    def is_open(self) -> bool:
        return self in (TournamentState.CREATED, TournamentState.RUNNING)


#: why a tournament ended, as its store keeps it (and its status says it)
CANCELLED_BY_ADMIN = "cancelled by an admin"
ALL_PLAYED = "finished (all its matches were played)"
SPRT_DECIDED = "finished (its sequential test decided, or reached its most pairs)"
#: why its secret was revealed when it was: at the end itself, or later, once the jobs left at the end
#: were gone: a cancelled tournament's running matches stopped and its queued ones dropped, an SPRT's
#: last batch played out
REVEALED_AT_ONCE = "when it ended: none of its matches was queued or running"
REVEALED_ONCE_OVER = "once its last match queued or running was over, stopped or dropped"


@dataclass(frozen=True)
class Ending:
    """When (unix seconds; 0: not yet) and why a tournament ended, and when and why its secret was
    revealed: once it has ended and none of its matches can still be played, that is none is queued
    or claimed (a match that runs holds its claim until it has stopped)."""

    ended_at: float = 0.0
    ended_reason: str = ""
    revealed_at: float = 0.0
    revealed_reason: str = ""

    def reveals(self, state: TournamentState, in_play: int) -> bool:
        """Whether the secret may be shown, the tournament being in ``state`` with ``in_play`` of its
        jobs queued or claimed: once it has ended and none is left (or once the store revealed it)."""
        return bool(self.revealed_at) or (not state.is_open and in_play == 0)

    def describe(self, state: TournamentState, in_play: int) -> str:
        """One line: ``"cancelled by an admin at T; the secret revealed at T2, once ..."``, or why
        the secret is still withheld ("" while the tournament is open)."""
        if state.is_open:
            return ""
        text = self.ended_reason or str(state)
        if self.ended_at:
            text += f" at {_when(self.ended_at)}"
        if self.revealed_at:
            return f"{text}; the secret revealed at {_when(self.revealed_at)}, {self.revealed_reason}"
        if in_play:
            return (f"{text}; the secret is withheld while {in_play} of its matches can still be "
                    f"played")
        return f"{text}; the secret revealed"


def _when(at: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(at))


@dataclass(frozen=True)
class MatchJob:
    """One match to play. ``match_id`` is the idempotency key of its result.

    Most matches seat one bot per side: ``team0`` at seats 0 and 2, ``team1`` at
    seats 1 and 3. A mixed match (partners that are different bots) names its
    four bots in ``seats`` (seat 0..3), and then ``team0``/``team1`` are the
    sides' display names (:func:`arena.records.side_name`: ``"alice+bob"``);
    build one with :meth:`seated`.
    """

    match_id: str
    tournament_id: str
    team0: str  # bot name at seats 0 and 2 (a mixed side: its display name)
    team1: str  # bot name at seats 1 and 3 (a mixed side: its display name)
    ruleset: RulesetSpec
    seed: str
    deals: int | None = None
    target: int | None = None
    round: int = 0
    #: facts the tournament needs back with the result (the format, the duplicate pair id)
    tags: dict[str, Any] = field(default_factory=dict)
    #: the bot at each seat 0..3 when a side's two seats hold different bots (None: team0/team1)
    seats: tuple[str, str, str, str] | None = None

    @classmethod
    def seated(cls, match_id: str, tournament_id: str, seats: tuple[str, str, str, str],
               **kw: Any) -> MatchJob:
        """A job with the bot of each seat; a match whose sides are one bot each is kept in the
        team0/team1 form, so that it reads (and rates) like any other."""
        team0, team1 = side_name(seats[0], seats[2]), side_name(seats[1], seats[3])
        mixed = seats[0] != seats[2] or seats[1] != seats[3]
        return cls(match_id=match_id, tournament_id=tournament_id, team0=team0, team1=team1,
                   seats=tuple(seats) if mixed else None, **kw)  # type: ignore[arg-type]

    @property
    def seat_bots(self) -> tuple[str, str, str, str]:
        """The bot at each seat 0..3."""
        return seat_bots_of(self.team0, self.team1, self.seats)

    @property
    def is_mixed(self) -> bool:
        """Whether a side's two seats hold two different bots."""
        return self.seats is not None

    def to_json(self) -> str:
        data = asdict(self)
        if self.seats is None:
            del data["seats"]  # the jobs of one bot a side stay as they were on the wire
        else:
            data["seats"] = list(self.seats)
        return json.dumps(data, sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str | bytes) -> MatchJob:
        data = json.loads(text)
        seats = data.pop("seats", None)
        return cls(**data, seats=None if seats is None else tuple(seats))


@dataclass(frozen=True)
class MatchResult:
    """What a finished match writes once: its teams, totals, winner and record."""

    match_id: str
    tournament_id: str
    team0: str
    team1: str
    record: MatchRecord
    node_id: str = ""

    @classmethod
    def of_record(cls, job: MatchJob, record: MatchRecord, node_id: str = "") -> MatchResult:
        return cls(match_id=job.match_id, tournament_id=job.tournament_id, team0=job.team0,
                   team1=job.team1, record=record, node_id=node_id)

    @property
    def seat_bots(self) -> tuple[str, ...]:
        """The bot at each seat 0..3, as the record says."""
        return self.record.players

    @property
    def is_mixed(self) -> bool:
        """Whether a side's two seats held two different bots."""
        return self.record.is_mixed

    @property
    def totals(self) -> tuple[int, int]:
        return self.record.result.totals

    @property
    def winner(self) -> int | None:
        """0, 1, or None for a draw."""
        return self.record.result.winner

    @property
    def reason(self) -> ResultReason:
        return self.record.result.reason

    def score0(self) -> float:
        """Team 0's match score: 1 win, 0.5 draw, 0 loss."""
        return self.record.result.score0()

    def to_json(self) -> str:
        return json.dumps({
            "match_id": self.match_id, "tournament_id": self.tournament_id, "team0": self.team0,
            "team1": self.team1, "node_id": self.node_id, "totals": list(self.totals),
            "winner": self.winner, "reason": str(self.reason), "record": self.record.to_dict(),
        }, sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str | bytes) -> MatchResult:
        data = json.loads(text)
        return cls(match_id=data["match_id"], tournament_id=data["tournament_id"], team0=data["team0"],
                   team1=data["team1"], record=MatchRecord.from_dict(data["record"]),
                   node_id=data.get("node_id", ""))


def record_of_result(text: str) -> MatchRecord:
    """The record inside a result's JSON. Module-level, and in a module that imports little: a
    node's build process reads records from results with it, and imports this module to do so."""
    return MatchResult.from_json(text).record
