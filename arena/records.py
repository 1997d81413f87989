"""The record of a match played on the arena: one typed value, one JSON form.

A :class:`MatchRecord` is the engine's match record (docs/records.md#match-record:
the ruleset, the seed, the players, every deal with its hands, bids and plays)
plus what the referee saw: which bot sat where, the time control, the round
trip of every decision, the strikes and how the match ended
(docs/records.md#arena-match-record). The referee writes it once, when the
match is over; the queue carries it inside a result, the tournament code
replays its deals, the service serves it as JSON. It holds every hand, so it
is never shown before its match ends.

The small enums here name the values that cross those seams: why a match
ended (:class:`ResultReason`) and why a seat got a strike
(:class:`StrikeReason`). Their values are the words of the JSON and of the
wire.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Self, TypeVar

from arena.engine import Match, RecordError, deal_record, replay_match
from arena.engine.errors import shown
from arena.engine.record import DealRecord
from arena.engine.scoring import DealOutcome

#: the longest match the arena plays: at most this many deals, a target at most this high (a
#: running match keeps its deals in memory until its record is written; the node refuses more,
#: and so does a tournament's spec)
MAX_DEALS = 1000
MAX_TARGET = 10_000

#: a bot's name: 1 to 64 ASCII letters, digits, ``_``, ``.`` or ``-``, starting with a letter or
#: digit, the whole name (README, docs/protocol.md#string-fields-and-their-values); the registry
#: takes no other, and the command lines check it before they call a node
BOT_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
BOT_NAME_RULE = "1 to 64 letters, digits, '_', '.' or '-', starting with a letter or digit"


def valid_bot_name(name: object) -> bool:
    return isinstance(name, str) and BOT_NAME_RE.fullmatch(name) is not None


#: joins the two bots of a mixed side in its display name; never part of a bot's name
SIDE_JOIN = "+"


def side_name(first: str, second: str) -> str:
    """A side's name: its bot, or ``"first+second"`` when its two seats hold different bots
    (seat 0 then 2, or 1 then 3). A bot name cannot hold ``+``, so the two never clash."""
    return first if first == second else f"{first}{SIDE_JOIN}{second}"


#: joins a bot's name and one of its versions in a player's key (``alpha@2``); never part of a bot's name
VERSION_JOIN = "@"


Seats = tuple[str, str, str, str]


def seat_bots_of(team0: str, team1: str, seats: Seats | None) -> Seats:
    """The bot at each seat 0..3 of a match kept as ``team0``/``team1`` (one bot a side, at seats
    0 and 2, and 1 and 3) or, when a side is mixed, as its ``seats``."""
    return seats if seats is not None else (team0, team1, team0, team1)


#: a ruleset as records and jobs carry it: a preset name or ``{"preset": ..., option: value}``
RulesetSpec = str | dict[str, Any]


class ResultReason(StrEnum):
    """How a match ended."""

    #: played to its end (the target, or the fixed number of deals)
    FINISHED = "finished"
    #: a team reached the strike limit or stayed away past the grace period
    FORFEIT = "forfeit"
    #: the node stopped it (a drain, a lost lease, a shutdown); never recorded as a result
    ABORTED = "aborted"


class StrikeReason(StrEnum):
    """Why a seat got a strike (the proto's ``StrikeReason``)."""

    #: no answer within the deadline and the time bank
    LATE = "late"
    #: an answer that is not one of the legal actions
    ILLEGAL = "illegal"
    #: the no-action code: the bot said it had no answer
    NO_ACTION = "no_action"


@dataclass(frozen=True, slots=True)
class TimeControl:
    """The referee's clock and penalties (docs/protocol.md#time)."""

    #: seconds for each decision before the time bank is drawn on
    deadline: float = 1.0
    #: extra seconds per seat and match
    time_bank: float = 10.0
    #: strikes of one team that forfeit the match
    max_strikes: int = 3
    #: seconds a disconnected bot keeps its seats
    grace: float = 10.0

    def to_dict(self) -> dict[str, Any]:
        return {"deadline_s": self.deadline, "time_bank_s": self.time_bank,
                "max_strikes": self.max_strikes, "grace_s": self.grace}

    @classmethod
    def from_dict(cls, data: Any) -> Self:
        d = _object(data, "time_control")
        return cls(deadline=_number(d, "deadline_s"), time_bank=_number(d, "time_bank_s"),
                   max_strikes=_int(d, "max_strikes"), grace=_number(d, "grace_s"))


@dataclass(frozen=True, slots=True)
class SeatBot:
    """The bot at one seat."""

    seat: int
    bot_id: str
    name: str
    #: the bot's own version that played the seat (its ``Hello.bot_version``; "" for a bot that says
    #: none): what a per-version rating counts the game to (arena.ratings.versions)
    version: str = ""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"seat": self.seat, "bot_id": self.bot_id, "name": self.name}
        if self.version:
            out["version"] = self.version  # a bot without versions: the record as it always was
        return out


@dataclass(frozen=True, slots=True)
class StrikeEntry:
    """One strike as the record keeps it.

    ``reason`` is the public sentence every seat and spectator saw during the
    match; ``detail`` the private part only the seat's own bot was told (what
    it answered and what was legal: its own cards).
    """

    deal: int
    #: the decision's index within the deal (bids, then plays)
    decision: int
    seat: int
    kind: StrikeReason
    reason: str
    detail: str
    #: the record text of the action the referee played instead
    fallback: str

    def to_dict(self) -> dict[str, Any]:
        return {"deal": self.deal, "decision": self.decision, "seat": self.seat, "kind": str(self.kind),
                "reason": self.reason, "detail": self.detail, "fallback": self.fallback}

    @classmethod
    def from_dict(cls, data: Any) -> Self:
        d = _object(data, "strike")
        return cls(deal=_int(d, "deal"), decision=_int(d, "decision"), seat=_seat(d, "seat"),
                   kind=_enum(StrikeReason, d, "kind"), reason=_str(d, "reason"),
                   detail=_str(d, "detail"), fallback=_str(d, "fallback"))


@dataclass(frozen=True, slots=True)
class MatchEnd:
    """How a match ended: the totals, the winner (None for a draw or an abort) and why."""

    totals: tuple[int, int]
    winner: int | None
    reason: ResultReason
    detail: str = ""
    #: the seat whose bot forfeited, if any
    forfeit_seat: int | None = None

    def score0(self) -> float:
        """Team 0's match score: 1 won, 0.5 drawn, 0 lost."""
        return 0.5 if self.winner is None else 1.0 if self.winner == 0 else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"totals": list(self.totals), "winner": self.winner, "reason": str(self.reason),
                "detail": self.detail, "forfeit_seat": self.forfeit_seat}

    @classmethod
    def from_dict(cls, data: Any) -> Self:
        d = _object(data, "result")
        totals = d.get("totals")
        if (not isinstance(totals, list) or len(totals) != 2
                or not all(isinstance(t, int) and not isinstance(t, bool) for t in totals)):
            raise RecordError(f"result.totals must be two whole numbers, not {shown(totals)}")
        winner = d.get("winner")
        if winner not in (0, 1, None) or isinstance(winner, bool):
            raise RecordError(f"result.winner must be 0, 1 or null, not {shown(winner)}")
        forfeit = d.get("forfeit_seat")
        if forfeit is not None:
            forfeit = _seat(d, "forfeit_seat")
        return cls(totals=(totals[0], totals[1]), winner=winner, reason=_enum(ResultReason, d, "reason"),
                   detail=_str(d, "detail", ""), forfeit_seat=forfeit)


@dataclass(frozen=True)
class MatchRecord:
    """Everything about one match, written once when it is over (docs/records.md#arena-match-record)."""

    match_id: str
    ruleset: RulesetSpec
    seed: int | str
    #: the bot names at seats 0..3
    players: tuple[str, ...]
    #: the deal records, in order, thrown-in deals included (without their ruleset)
    deals: tuple[DealRecord, ...]
    bots: tuple[SeatBot, ...]
    time_control: TimeControl
    #: per deal (the unfinished one included), the referee-measured round trip of each
    #: decision in microseconds; -1 where the referee played a fallback
    latencies_us: tuple[tuple[int, ...], ...]
    strikes: tuple[StrikeEntry, ...]
    result: MatchEnd
    #: the match's target when it differs from the ruleset's
    target: int | None = None
    #: the deal in progress when the match ended mid-deal (a forfeit or an abort)
    unfinished_deal: DealRecord | None = None
    #: when the match started, in milliseconds since the Unix epoch on the referee's clock (None:
    #: a record written before the referee kept it)
    started_ms: int | None = None
    #: per deal (as ``latencies_us``), when each decision's request went out, in milliseconds
    #: since ``started_ms``: what a bot could have known at each decision, and when (empty: not kept)
    asked_ms: tuple[tuple[int, ...], ...] = ()

    @classmethod
    def of_match(
        cls, match_id: str, match: Match, players: Sequence[str], *, bots: Sequence[SeatBot],
        time_control: TimeControl, latencies_us: Sequence[Sequence[int]], strikes: Sequence[StrikeEntry],
        result: MatchEnd, unfinished: DealRecord | None = None, started_ms: int | None = None,
        asked_ms: Sequence[Sequence[int]] = (),
    ) -> MatchRecord:
        """The record of ``match`` as it stands (its finished deals), with what the referee saw."""
        return cls(
            match_id=match_id, ruleset=match.rules.to_spec(), seed=match.seed, players=tuple(players),
            deals=tuple(deal_record(d, with_ruleset=False) for d in match.deals),
            bots=tuple(bots), time_control=time_control,
            latencies_us=tuple(tuple(d) for d in latencies_us), strikes=tuple(strikes), result=result,
            target=match.target if match.target != match.rules.target else None,
            unfinished_deal=unfinished, started_ms=started_ms, asked_ms=tuple(tuple(d) for d in asked_ms),
        )

    # ------------------------------------------------------------- queries
    @property
    def deals_played(self) -> int:
        return len(self.deals)

    @property
    def totals(self) -> tuple[int, int]:
        return self.result.totals

    @property
    def winner(self) -> int | None:
        return self.result.winner

    def team_names(self) -> tuple[str, str]:
        """The names of team 0 (seats 0 and 2) and team 1 (seats 1 and 3): a side's bot, or
        ``"alice+bob"`` for a mixed side (:func:`side_name`)."""
        return side_name(self.players[0], self.players[2]), side_name(self.players[1], self.players[3])

    @property
    def is_mixed(self) -> bool:
        """Whether a side's two seats held two different bots."""
        return self.players[0] != self.players[2] or self.players[1] != self.players[3]

    def engine_record(self) -> dict[str, Any]:
        """The engine's match record (docs/records.md#match-record): what ``replay`` checks."""
        rec: dict[str, Any] = {"ruleset": self.ruleset}
        if self.target is not None:
            rec["target"] = self.target
        rec["seed"] = self.seed
        rec["players"] = list(self.players)
        rec["deals"] = [dict(d) for d in self.deals]
        return rec

    def replay(self, *, deals: int | None = None) -> tuple[Match, list[DealOutcome]]:
        """Replay every recorded deal, each action checked; raises :class:`RecordError`.

        With ``deals``, the replay ends after exactly that many deals (a
        forfeited match's record stops before its end rule is met).
        """
        rec = self.engine_record()
        if deals is not None:
            spec = {"preset": self.ruleset} if isinstance(self.ruleset, str) else dict(self.ruleset)
            rec["ruleset"] = {**spec, "deals": deals}
        return replay_match(rec)

    # ----------------------------------------------------------------- JSON
    def to_dict(self) -> dict[str, Any]:
        data = self.engine_record()
        data["match_id"] = self.match_id
        data["bots"] = [b.to_dict() for b in self.bots]
        data["time_control"] = self.time_control.to_dict()
        data["latencies_us"] = [list(d) for d in self.latencies_us]
        data["strikes"] = [s.to_dict() for s in self.strikes]
        data["result"] = self.result.to_dict()
        if self.unfinished_deal is not None:
            data["unfinished_deal"] = dict(self.unfinished_deal)
        if self.started_ms is not None:
            data["started_ms"] = self.started_ms
            data["asked_ms"] = [list(d) for d in self.asked_ms]
        return data

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), separators=(",", ":"))

    @classmethod
    def from_dict(cls, data: Any) -> MatchRecord:
        """The record of its JSON object; :class:`RecordError` names what is wrong.

        The deals are checked for shape only; :meth:`replay` checks every action.
        """
        d = _object(data, "a match record")
        players = d.get("players")
        if not isinstance(players, list) or len(players) != 4 or not all(isinstance(p, str) for p in players):
            raise RecordError(f"'players' must be the four bot names at seats 0..3, not {shown(players)}")
        ruleset = d.get("ruleset")
        if not isinstance(ruleset, str | dict):
            raise RecordError(f"'ruleset' must be a preset name or an object, not {shown(ruleset)}")
        seed = d.get("seed")
        if not isinstance(seed, int | str) or isinstance(seed, bool):
            raise RecordError(f"'seed' must be a whole number or a string, not {shown(seed)}")
        target = d.get("target")
        if target is not None and (not isinstance(target, int) or isinstance(target, bool)):
            raise RecordError(f"'target' must be a whole number, not {shown(target)}")
        latencies = _list(d, "latencies_us")
        if not all(isinstance(x, list) and all(isinstance(v, int) for v in x) for x in latencies):
            raise RecordError("'latencies_us' must be a list of lists of whole numbers")
        unfinished = d.get("unfinished_deal")
        if unfinished is not None and not isinstance(unfinished, dict):
            raise RecordError("'unfinished_deal' must be a deal record (an object)")
        started = d.get("started_ms")
        if started is not None and (not isinstance(started, int) or isinstance(started, bool)):
            raise RecordError(f"'started_ms' must be a whole number, not {started!r}")
        asked = d.get("asked_ms", [])
        if not isinstance(asked, list) or not all(
                isinstance(x, list) and all(isinstance(v, int) and not isinstance(v, bool) for v in x)
                for x in asked):
            raise RecordError("'asked_ms' must be a list of lists of whole numbers")
        return cls(
            match_id=_str(d, "match_id"), ruleset=ruleset, seed=seed, players=tuple(players),
            deals=tuple(_deal(x, i) for i, x in enumerate(_list(d, "deals"))),
            bots=tuple(
                SeatBot(seat=_seat(b, "seat"), bot_id=_str(b, "bot_id"), name=_str(b, "name"),
                        version=_version(b))
                for b in (_object(x, "bots[]") for x in _list(d, "bots"))
            ),
            time_control=TimeControl.from_dict(d.get("time_control")),
            latencies_us=tuple(tuple(x) for x in latencies),
            strikes=tuple(StrikeEntry.from_dict(x) for x in _list(d, "strikes")),
            result=MatchEnd.from_dict(d.get("result")), target=target,
            unfinished_deal=unfinished,  # type: ignore[arg-type]  # an object: its shape is the engine's to check
            started_ms=started, asked_ms=tuple(tuple(x) for x in asked),
        )

    @classmethod
    def from_json(cls, text: str | bytes) -> MatchRecord:
        try:
            data = json.loads(text)
        except ValueError as e:
            raise RecordError(f"a match record must be JSON: {e}") from None
        return cls.from_dict(data)


# ------------------------------------------------------------------ checks
def _object(data: Any, what: str) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise RecordError(f"{what} must be a JSON object, not {type(data).__name__}")
    return data


def _list(d: Mapping[str, Any], key: str) -> list[Any]:
    v = d.get(key)
    if not isinstance(v, list):
        raise RecordError(f"'{key}' must be a list, not {type(v).__name__}")
    return v


def _str(d: Mapping[str, Any], key: str, default: str | None = None) -> str:
    v = d.get(key, default)
    if not isinstance(v, str):
        raise RecordError(f"'{key}' must be a string, not {shown(v)}")
    return v


#: a seat's version as a record keeps it (arena.referee.versions.VERSION_RULE: 1 to 32 letters,
#: digits, '_', '.' or '-'), or "" for a bot that says none
_SEAT_VERSION = re.compile(r"(?:[A-Za-z0-9][A-Za-z0-9_.-]{0,31})?")


def _version(d: Mapping[str, Any]) -> str:
    v = _str(d, "version", "")
    if _SEAT_VERSION.fullmatch(v) is None:
        raise RecordError(f"'version' must be a bot's version label (1 to 32 letters, digits, '_', '.' or "
                          f"'-'), not {shown(v)}")
    return v


def _int(d: Mapping[str, Any], key: str) -> int:
    v = d.get(key)
    if not isinstance(v, int) or isinstance(v, bool):
        raise RecordError(f"'{key}' must be a whole number, not {shown(v)}")
    return v


def _seat(d: Mapping[str, Any], key: str) -> int:
    v = _int(d, key)
    if not 0 <= v < 4:
        raise RecordError(f"'{key}' must be a seat 0..3, not {v}")
    return v


def _number(d: Mapping[str, Any], key: str) -> float:
    v = d.get(key)
    if not isinstance(v, int | float) or isinstance(v, bool):
        raise RecordError(f"'{key}' must be a number, not {shown(v)}")
    return float(v)


_E = TypeVar("_E", bound=StrEnum)


def _enum(kind: type[_E], d: Mapping[str, Any], key: str) -> _E:
    v = d.get(key)
    if isinstance(v, str) and v in kind._value2member_map_:
        return kind(v)
    allowed = ", ".join(repr(str(m)) for m in kind)
    raise RecordError(f"'{key}' must be one of {allowed}, not {shown(v)}")


def _deal(data: Any, index: int) -> DealRecord:
    if not isinstance(data, dict):
        raise RecordError(f"deals[{index}] must be a deal record (an object)")
    return data  # type: ignore[return-value]  # its shape is the engine's to check, on replay
