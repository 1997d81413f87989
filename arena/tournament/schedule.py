"""Scheduled tournaments: one tournament every ``every`` seconds, made by whichever node wakes first.

A :class:`Schedule` is stored once (its JSON) and never changes; a cancel
deletes it. Its *occurrences* are the times ``anchor + k * every`` (whole
UTC seconds) from its creation on: with ``--at HH:MM`` the anchor is that
time of the day it was made (so the first occurrence is the next one from
then), without it the anchor is the moment it was made (the first occurrence
is at once).

Each occurrence is one tournament, whose id is the schedule's and the
occurrence's time (``nightly@20250101T020000Z``): every node that wakes for it
tries to create that tournament, and the store does it once
(:meth:`ScheduleStore.add_occurrence`: in one atomic step it checks that the
schedule is still the one stored, that no occurrence as late was made yet,
and that the id is free; then it stores the tournament and the occurrence's
time as the schedule's last). Nodes that wake at once, a node that dies
mid-way and another that takes over, a node whose clock is behind: one
tournament, never an older occurrence after a newer one.

Missed occurrences (no node up at their time): when a node comes back, only
the latest one missed is made, late, not the backlog; a nightly tournament
that missed a week is played once, not seven times in a row.

The bots are a *selector*, stored as an object: ``{"names": [...]}``, or
``{"ladder": POOL}`` (``@ladder:POOL`` on the command line): the bots opted
in to that pool's ladder at the time of each occurrence, read from the store
by the node that makes it (an occurrence that finds too few for its format
is made later, when there are enough, as a missed one is). A node that reads
a kind it does not know skips that schedule.

A ladder's occurrence plays ``max_bots`` of its opted-in bots at most (0:
the most a tournament takes, :data:`~arena.tournament.spec.MAX_BOTS`). When
more are opted in, that many are drawn at random, the draw seeded by the
occurrence's tournament id (:func:`draw`: anyone can check it, and each
occurrence draws afresh, so no bot is left out for good): a flood of bots
opted in cannot stop a schedule, and the operator bounds what one occurrence
costs (a round-robin of n bots is n(n-1) matches). Why an occurrence due is
not made yet (too few bots for its format), or that its bots are drawn, is
said once per cause in the node's log, and on every read of the schedule
(:meth:`Schedules.why`: ``schedule list``, ListSchedules, the schedules page).
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import secrets
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, NamedTuple, Protocol

from arena.tournament.spec import MAX_BOTS, TournamentError, TournamentSpec, check_callers_id

#: the shortest period a node accepts by default (a node's setting: tests run with seconds)
MIN_EVERY_S = 60
#: the longest period: a year
MAX_EVERY_S = 366 * 86_400
#: how ``--bots`` names a pool's ladder's opted-in bots
LADDER_PREFIX = "@ladder:"
#: the formats a ladder's bots may play in a schedule (sprt and gauntlet need a named candidate)
LADDER_FORMATS = ("round-robin", "swiss", "knockout", "partners")
#: how many stand-ins check a ladder schedule's options when it is made (its bots come at each
#: occurrence): enough for every format, field duplicate among them
LADDER_STAND_INS = 8
#: the longest schedule id (its occurrences' ids add 17 characters, under the tournaments' 128)
MAX_ID = 96
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,95}")
_EVERY = re.compile(r"([0-9]{1,9})([smhd])")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86_400}
_AT = re.compile(r"([0-9]{2}):([0-9]{2})")
#: the options of a tournament a schedule keeps (its id, bots and seed are the occurrence's)
_SPEC_KEYS = ("format", "candidate", "ruleset", "deals", "target", "duplicate", "rounds", "sprt")
#: why an occurrence made from a seed given by a person is not rated
GIVEN_SEED = "its seed was given by the caller, so its deals were known in advance"


class ScheduleError(TournamentError):
    """A schedule that cannot be: a bad period, time, id or bots."""


class UnknownSchedule(ScheduleError):
    """No schedule with that id in the store."""


class ScheduleExists(ScheduleError):
    """A schedule with that id is already in the store."""


def parse_every(text: str) -> int:
    """``90s``, ``15m``, ``24h``, ``7d``: the period in seconds (its bounds are the node's to check)."""
    m = _EVERY.fullmatch(text.strip())
    if m is None:
        raise ScheduleError(f"--every is a whole number and a unit, s, m, h or d (24h, 30m), "
                            f"not {text[:32]!r}")
    every = int(m.group(1)) * _UNITS[m.group(2)]
    if not 1 <= every <= MAX_EVERY_S:
        raise ScheduleError(f"--every must be from 1s to {MAX_EVERY_S // 86_400}d, not {text[:32]!r}")
    return every


def parse_at(text: str, name: str = "at") -> tuple[int, int]:
    """``HH:MM`` (UTC): the hour and minute. ``name``: what the error calls it (the request's field;
    the command line says its flag)."""
    m = _AT.fullmatch(text.strip())
    if m is None or int(m.group(1)) > 23 or int(m.group(2)) > 59:
        raise ScheduleError(f"{name} is a UTC time HH:MM (02:00), not {text[:32]!r}")
    return int(m.group(1)), int(m.group(2))


def ladder_of(text: str) -> str:
    """The pool of ``@ladder:POOL`` ("" for a list of names); :class:`ScheduleError` for another
    ``@`` word."""
    text = text.strip()
    if text.startswith(LADDER_PREFIX) and len(text) > len(LADDER_PREFIX):
        return text[len(LADDER_PREFIX):]
    if text.startswith("@"):
        raise ScheduleError(f"--bots is a list of names or {LADDER_PREFIX}POOL (a pool's opted-in bots at "
                            f"each occurrence), not {text[:40]!r}")
    return ""


def draw(bots: Sequence[str], limit: int, key: str) -> list[str]:
    """``limit`` of ``bots`` drawn at random, seeded by ``key`` (an occurrence's tournament id, so the
    draw is the same on every node and anyone can check it), sorted; all of them if no more."""
    chosen = sorted(bots)
    if len(chosen) > limit:
        chosen = sorted(random.Random(hashlib.sha256(key.encode()).digest()).sample(chosen, limit))
    return chosen


def _opted(n: int) -> str:
    return f"{n} {'is' if n == 1 else 'are'}"


def stamp(at: int) -> str:
    """An occurrence's time as its tournament id ends: ``20250101T020000Z``."""
    return datetime.fromtimestamp(at, UTC).strftime("%Y%m%dT%H%M%SZ")


def iso(at: int) -> str:
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


@dataclass(frozen=True)
class BotSelector:
    """Which bots an occurrence plays: a list of names, or the bots opted in to a pool's ladder then."""

    names: tuple[str, ...] = ()
    #: a pool: its ladder's opted-in bots at each occurrence ("": the names)
    ladder: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"ladder": self.ladder} if self.ladder else {"names": list(self.names)}

    @classmethod
    def from_dict(cls, data: object) -> BotSelector:
        if isinstance(data, dict) and set(data) == {"ladder"} and isinstance(data["ladder"], str):
            return cls(ladder=data["ladder"])
        if not isinstance(data, dict) or set(data) != {"names"} or not isinstance(data["names"], list):
            raise ScheduleError(f"a bot selector this node does not know: {json.dumps(data)[:80]}")
        return cls(tuple(str(n) for n in data["names"]))

    def bots(self, store: Any = None) -> list[str]:
        """The bots of an occurrence now: the names, or the ladder's read from ``store`` (a
        :class:`ScheduleStore`; without one, stand-ins that check the options)."""
        if not self.ladder:
            return list(self.names)
        if store is None:
            return [f"ladder-bot-{i}" for i in range(LADDER_STAND_INS)]
        return list(store.ladder_bots(self.ladder))

    @property
    def text(self) -> str:
        """As ``--bots`` says it."""
        return f"{LADDER_PREFIX}{self.ladder}" if self.ladder else ",".join(self.names)


@dataclass(frozen=True)
class Schedule:
    schedule_id: str
    every_s: int
    #: an occurrence (unix seconds); every other is this plus a whole number of periods
    anchor: int
    #: when it was made: no occurrence before this
    created_at: int
    bots: BotSelector
    #: the tournament options (TournamentSpec's dict without its id, bots and seed)
    options: dict[str, Any] = field(default_factory=dict)
    #: a seed given by the caller (tests, reproductions): each occurrence's is derived from it, and
    #: those occurrences are unrated; "" (the rule): each occurrence draws fresh randomness
    seed: str = ""
    #: ``HH:MM`` as asked ("": from its creation)
    at: str = ""
    #: a ladder's: the most of its opted-in bots an occurrence plays, drawn at random when more are
    #: opted in (0: the most a tournament takes)
    max_bots: int = 0

    def __post_init__(self) -> None:
        if not _ID.fullmatch(self.schedule_id):
            raise ScheduleError(f"a schedule id is 1-{MAX_ID} letters, digits or _ . : - (starting with "
                                f"a letter or digit), not {self.schedule_id[:40]!r}")
        if not 1 <= self.every_s <= MAX_EVERY_S:
            raise ScheduleError(f"every_s must be from 1 to {MAX_EVERY_S}, not {self.every_s}")
        if self.max_bots and not self.bots.ladder:
            raise ScheduleError("max_bots bounds a ladder's bots (drawn from those opted in); a list of "
                                "names is played whole")
        if self.max_bots and not 2 <= self.max_bots <= MAX_BOTS:
            raise ScheduleError(f"max_bots must be from 2 to {MAX_BOTS} (0: {MAX_BOTS}), not {self.max_bots}")

    @property
    def bot_limit(self) -> int:
        """The most bots an occurrence plays."""
        return self.max_bots or MAX_BOTS

    @classmethod
    def make(cls, schedule_id: str, every_s: int, at: str, bots: Sequence[str], options: dict[str, Any],
             seed: str = "", now: float | None = None, ladder: str = "", max_bots: int = 0) -> Schedule:
        """A new schedule made at ``now`` (default: the clock), its options checked by building the
        tournament of its first occurrence (with ``ladder``, a pool whose opted-in bots play each
        occurrence, ``max_bots`` of them at most, in place of ``bots``: with stand-ins)."""
        if ladder and options.get("format") not in LADDER_FORMATS:
            raise ScheduleError(f"a ladder's bots play a {', '.join(LADDER_FORMATS)} (the others need a "
                                f"candidate named), not a {options.get('format')}")
        made = int(now if now is not None else time.time())
        anchor = made
        if at:
            hour, minute = parse_at(at)
            day = datetime.fromtimestamp(made, UTC).replace(hour=hour, minute=minute, second=0, microsecond=0)
            anchor = int(day.timestamp())
        options = {k: v for k, v in options.items() if k in _SPEC_KEYS}
        selector = BotSelector(ladder=ladder) if ladder else BotSelector(tuple(bots))
        schedule = cls(schedule_id, every_s, anchor, made, selector, options, seed, at, max_bots)
        schedule.spec_for(schedule.first)  # a bad option is refused now, not at each occurrence
        return schedule

    @property
    def first(self) -> int:
        """The first occurrence: the first at or after its creation."""
        k = -((self.anchor - self.created_at) // self.every_s)  # ceil((created - anchor) / every)
        return self.anchor + k * self.every_s

    def latest_due(self, now: float) -> int | None:
        """The latest occurrence at or before ``now`` (None: the first is still ahead)."""
        if now < self.first:
            return None
        return self.first + int((now - self.first) // self.every_s) * self.every_s

    def next_after(self, now: float) -> int:
        """The first occurrence after ``now``."""
        due = self.latest_due(now)
        return self.first if due is None else due + self.every_s

    def tournament_id(self, at: int) -> str:
        return f"{self.schedule_id}@{stamp(at)}"

    def spec_for(self, at: int, fresh: str = "", store: Any = None) -> TournamentSpec:
        """The tournament of the occurrence at ``at``, with the secret ``fresh`` (default: new
        randomness; with a given seed, one derived from it and the occurrence); a ladder's bots read
        from ``store`` (without one: stand-ins)."""
        return self.spec_with(at, self.bots_at(at, store)[0], fresh)

    def bots_at(self, at: int, store: Any = None) -> tuple[list[str], int]:
        """The bots of the occurrence at ``at`` (a ladder's: :attr:`bot_limit` at most, :func:`draw`
        when more are opted in, read from ``store``), and how many there were to choose from."""
        found = self.bots.bots(store)
        if not self.bots.ladder:
            return found, len(found)
        return draw(found, self.bot_limit, self.tournament_id(at)), len(found)

    def spec_with(self, at: int, bots: list[str], fresh: str = "") -> TournamentSpec:
        """The tournament of the occurrence at ``at`` played by ``bots`` (:meth:`spec_for`)."""
        tid = check_callers_id(self.tournament_id(at))
        data = dict(self.options, tournament_id=tid, bots=bots)
        if self.seed:
            data["seed"] = hashlib.sha256(f"{self.seed}/{tid}".encode()).hexdigest()
            data["unrated_reason"] = GIVEN_SEED
        else:
            data["seed"] = fresh or secrets.token_hex(32)
        return TournamentSpec.from_dict(data)

    def waits(self, due: int, choices: int, error: TournamentError) -> str:
        """Why the occurrence due at ``due`` is not made: ``error``, its tournament's refusal (with
        ``choices`` bots opted in, for a ladder's)."""
        if self.bots.ladder:
            return (f"its occurrence due {iso(due)} waits for bots: {_opted(choices)} opted in to the "
                    f"{self.bots.ladder} ladder ({error}); it is made once there are enough")
        return f"its occurrence due {iso(due)} cannot be made: {error}"

    def drawn(self, chosen: int, choices: int) -> str:
        """What an occurrence that drew ``chosen`` of ``choices`` opted-in bots says ("": it drew none)."""
        if chosen >= choices:
            return ""
        return (f"{chosen} of the {choices} bots opted in to the {self.bots.ladder} ladder, drawn at random "
                f"(an occurrence plays {self.bot_limit} at most)")

    def to_json(self) -> str:
        data = {"schedule_id": self.schedule_id, "every_s": self.every_s, "anchor": self.anchor,
                "created_at": self.created_at, "bots": self.bots.to_dict(), "options": self.options,
                "seed": self.seed, "at": self.at}
        if self.max_bots:  # as schedules were before it
            data["max_bots"] = self.max_bots
        return json.dumps(data, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Schedule:
        try:
            d = json.loads(text)
            return cls(str(d["schedule_id"]), int(d["every_s"]), int(d["anchor"]), int(d["created_at"]),
                       BotSelector.from_dict(d["bots"]), dict(d.get("options", {})), str(d.get("seed", "")),
                       str(d.get("at", "")), int(d.get("max_bots", 0)))
        except (ValueError, KeyError, TypeError) as e:
            raise ScheduleError(f"a schedule stored unreadable: {e}") from None


class ScheduleStore(Protocol):
    """What schedules need of the queue (both brokers keep it)."""

    def put_schedule(self, schedule_id: str, text: str) -> bool:
        """Store a schedule's JSON under its id; False if the id is taken."""
        ...

    def schedules(self) -> list[tuple[str, str, int]]:
        """Every schedule: its id, its JSON, and its last occurrence made (0: none), in one read."""
        ...

    def delete_schedule(self, schedule_id: str) -> bool:
        """Forget the schedule (its tournaments stay); False if there was none."""
        ...

    def ladder_bots(self, pool: str) -> list[str]:
        """The bots opted in to the pool's ladder, sorted."""
        ...

    def add_occurrence(self, schedule_id: str, text: str, at: int, spec: TournamentSpec) -> bool:
        """In one atomic step: if the schedule stored under ``schedule_id`` is ``text`` still, its last
        occurrence is before ``at`` and no tournament has ``spec``'s id, store ``spec`` (state
        ``created``) and ``at`` as its last occurrence; True if this call did."""
        ...


@dataclass(frozen=True)
class Stored:
    """A schedule as stored, with its last occurrence made (0: none yet)."""

    schedule: Schedule
    last: int


class DueRun(NamedTuple):
    """What one :meth:`Schedules.run_due` did."""

    #: the tournaments it made
    made: list[str]
    #: the next occurrence of any schedule (None: no schedule)
    wake: float | None
    #: schedule id -> why its occurrence due is not made (:meth:`Schedule.waits`)
    waiting: dict[str, str]
    #: tournament id -> which of the opted-in bots it plays, for an occurrence that drew them
    drawn: dict[str, str]


class Schedules:
    """The schedules of one store: made, listed and cancelled by an admin; run by every node."""

    def __init__(self, store: ScheduleStore) -> None:
        self.store = store
        self._lock = threading.Lock()  # one run at a time in this process

    def create(self, schedule: Schedule) -> None:
        if not self.store.put_schedule(schedule.schedule_id, schedule.to_json()):
            raise ScheduleExists(f"schedule {schedule.schedule_id} exists")

    def stored(self) -> list[Stored]:
        """Every schedule this node can read, by id (one it cannot, stored by a newer version, is left
        out)."""
        out = []
        for _, text, last in sorted(self.store.schedules()):
            try:
                out.append(Stored(Schedule.from_json(text), last))
            except ScheduleError:
                continue
        return out

    def cancel(self, schedule_id: str) -> None:
        """No more occurrences (the tournaments made stay as they are)."""
        if not self.store.delete_schedule(schedule_id):
            raise UnknownSchedule(f"no schedule {schedule_id!r}")

    def run_due(self, now: float | None = None) -> DueRun:
        """Make each schedule's latest occurrence due and not made yet (once, whichever node asks):
        the tournaments this call made, when the next occurrence is, and why those due and not made
        wait. The caller advances the tournaments made (their first stage)."""
        when = time.time() if now is None else now
        run = DueRun([], None, {}, {})
        with self._lock:
            for _, text, last in self.store.schedules():
                try:
                    schedule = Schedule.from_json(text)
                except ScheduleError:
                    continue  # a newer version's: that version's nodes run it
                due = schedule.latest_due(when)
                if due is not None and due > last:
                    self._make(schedule, text, due, run)
                following = schedule.next_after(when)
                run = run._replace(wake=following if run.wake is None else min(run.wake, following))
        return run

    def _make(self, schedule: Schedule, text: str, due: int, run: DueRun) -> None:
        bots, choices = schedule.bots_at(due, self.store)
        try:
            spec = schedule.spec_with(due, bots)
        except TournamentError as e:
            # a ladder with too few bots for the format now, or options this version refuses (checked
            # when it was made): not made now (later, once it can be), and said why
            run.waiting[schedule.schedule_id] = schedule.waits(due, choices, e)
            return
        if self.store.add_occurrence(schedule.schedule_id, text, due, spec):
            run.made.append(spec.tournament_id)
            if note := schedule.drawn(len(bots), choices):
                run.drawn[spec.tournament_id] = note

    def why(self, found: Stored, now: float | None = None) -> str:
        """What a person reading the schedule should know of its bots ("": nothing): why its
        occurrence due is not made, or that its occurrences draw from more bots opted in than they
        play. A ladder's reads its opted-in bots (one read)."""
        s = found.schedule
        when = time.time() if now is None else now
        due = s.latest_due(when)
        overdue = due is not None and due > found.last
        if not (overdue or s.bots.ladder):
            return ""
        at = due if due is not None and overdue else s.next_after(when)
        bots, choices = s.bots_at(at, self.store)
        if overdue:
            try:
                s.spec_with(at, bots, fresh="-")
            except TournamentError as e:
                return s.waits(at, choices, e)
        if choices > len(bots):
            return (f"{choices} bots are opted in to the {s.bots.ladder} ladder, more than an occurrence "
                    f"plays ({s.bot_limit}): each occurrence draws {s.bot_limit} of them at random")
        return ""
