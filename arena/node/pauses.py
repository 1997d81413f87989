"""A bot whose ladder matches end in forfeit is paused from the ladder, with a backoff.

Issue 24: a bot that always answered late forfeited 1,310 ladder matches in 11 minutes, each a rated
win for its opponent (a forfeit ends a match in a second or two, and the bot's seats were free again at
once). A forfeit says nothing of how its opponent plays, and it keeps the opponent's seats and a slot.

**The rule** (:class:`PausePolicy`, its defaults):

- A ladder match a bot's side forfeited (a last strike: late or illegal answers; a stream lost past the
  grace; connected to no node past the absent timeout) counts against it; any other ladder match it
  played, won or lost, is *clean*.
- After :attr:`~PausePolicy.forfeits` (2) forfeits among its last :attr:`~PausePolicy.window` (5)
  ladder matches, the bot is **paused** from the ladder, of every pool: no node pairs it, for
  :attr:`~PausePolicy.first_s` (1 minute) the first time, twice as long each pause in a row, at most
  :attr:`~PausePolicy.max_s` (1 hour). Two of five: one forfeit is a mishap (a restart, a network
  blip), two close together are a bot that does not answer in time, and every further one is a rated
  win handed out.
- **It resumes by itself**: when its pause ends, it is paired again. Its first ladder match then is a
  *probation*: forfeited, the bot is paused again at once, twice as long; clean, it plays on as any
  bot, its forfeits counted afresh. Its pauses in a row (what doubles) go back to none after
  :attr:`~PausePolicy.forgive` (5) clean matches in a row. So a bot that stays late costs its opponents
  one rated forfeit per pause after the two that paused it: at the cap, one an hour. A probation
  rather than a clean slate: a bot that was late for minutes is most likely late still, and one match
  tells. A probation that is rated all the same: an unrated ladder match would be a second kind of
  match for one case; at one an hour at most, its forfeit feeds the ratings next to nothing.
- A result written while the bot is paused (a match already under way when the pause began, on
  another node) changes nothing: the pause is not counted twice, and a probation is only a match
  played after the pause.

**Where it lives.** A bot's :class:`Conduct` is kept in the broker (one JSON text a bot, only for the
bots with a forfeit not yet forgiven: a bot that never forfeits has none), so every node of a cluster
and a restart agree. The node that plays a ladder match counts it just before it writes the result
(:meth:`Pauses.judge`, compare-and-swap: two nodes counting at once for one bot both count), so a bot
the result pauses is paused before any node sees its seats free again; a node that dies between the
two may count a match its replay counts again, no more. The node that paused a bot logs it and
publishes a ladder notice; every node's ladder loop reads the pauses of its bots at each pass, pairs
none that is paused, and tells it why (:func:`notice_text`, a ``Notice`` on its stream that the SDK
logs once, as a warning). A paused bot's ladder matches already under way play out, and one that it
forfeits is not recorded (its job is dropped: :meth:`arena.node.ladder.LadderLoop.before_write`), on
whichever node: so no forfeit while paused feeds anyone's rating. ``ladder status``, GetLadder, the
ladder page and the bot's page show the pause and why. An admin's ``ladder add`` of the bot lifts it.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, replace
from typing import Any

from arena.queue import Broker
from arena.records import ResultReason
from arena.tournament import MatchResult

log = logging.getLogger("arena.node")

#: how often a record is tried again when another node recorded the same bot meanwhile
SWAP_TRIES = 8
#: what a forfeit's detail keeps in a bot's conduct (the reason it is told)
DETAIL_MAX = 200


@dataclass(frozen=True)
class PausePolicy:
    """When a bot is paused from the ladder, and for how long (the module's docstring)."""

    #: forfeits among the last :attr:`window` ladder matches that pause the bot (0: never paused)
    forfeits: int = 2
    window: int = 5
    #: the first pause, in seconds; each pause in a row twice the one before, at most :attr:`max_s`
    first_s: float = 60.0
    max_s: float = 3600.0
    #: clean ladder matches in a row after which the pauses in a row are forgiven (the next is the first)
    forgive: int = 5

    def __post_init__(self) -> None:
        if not 0 <= self.forfeits <= self.window or self.window < 1 or self.forgive < 1:
            raise ValueError(f"a pause policy needs 0 <= forfeits <= window and forgive >= 1, not {self}")
        if not 0 < self.first_s <= self.max_s:
            raise ValueError(f"a pause policy needs 0 < first_s <= max_s, not {self}")

    @property
    def on(self) -> bool:
        return self.forfeits > 0

    def length(self, pauses: int) -> float:
        """The ``pauses``-th pause in a row (1: the first), in seconds."""
        return float(min(self.max_s, self.first_s * 2.0 ** min(max(pauses - 1, 0), 32)))


#: the policy of a node that is not told otherwise
POLICY = PausePolicy()


@dataclass(frozen=True)
class Conduct:
    """A bot's recent ladder matches and pauses, as the broker keeps them."""

    #: its last ladder matches, oldest first: ``F`` forfeited, ``.`` clean (at most the policy's window)
    recent: str = ""
    #: its pauses in a row (0: none, or forgiven)
    pauses: int = 0
    #: paused until then (unix seconds; in the past: not paused)
    until: float = 0.0
    #: when the last pause began (unix seconds)
    since: float = 0.0
    #: why it was last paused, in a sentence
    why: str = ""
    #: its next ladder match is its probation (it was paused, and has not played since)
    probation: bool = False
    #: its clean ladder matches in a row
    clean: int = 0

    def paused(self, now: float) -> bool:
        return now < self.until

    @property
    def forgiven(self) -> bool:
        """Nothing left to remember: no forfeit in its window, no pause to double, no probation."""
        return "F" not in self.recent and self.pauses == 0 and not self.probation

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> Conduct:
        """The conduct stored; one this version cannot read counts as none (and is logged)."""
        try:
            d: Any = json.loads(text)
            return cls(recent="".join(c for c in str(d.get("recent", "")) if c in "F.")[:64],
                       pauses=int(d.get("pauses", 0)), until=float(d.get("until", 0.0)),
                       since=float(d.get("since", 0.0)), why=str(d.get("why", ""))[:400],
                       probation=bool(d.get("probation", False)), clean=int(d.get("clean", 0)))
        except (ValueError, TypeError, AttributeError) as e:
            log.warning("a bot's ladder conduct is stored unreadable (%s): counted as none", e)
            return cls()


def after_match(conduct: Conduct, forfeited: bool, detail: str, now: float,
                policy: PausePolicy = POLICY) -> Conduct:
    """The bot's conduct once a ladder match it played is written at ``now``: ``forfeited`` by its side
    (``detail``: the match's reason), or clean."""
    if conduct.paused(now) or not policy.on:
        return conduct  # under way when the pause began: the pause is not counted twice
    recent = (conduct.recent + ("F" if forfeited else "."))[-policy.window:]
    if not forfeited:
        clean = conduct.clean + 1
        pauses = 0 if clean >= policy.forgive else conduct.pauses
        return replace(conduct, recent=recent, pauses=pauses, probation=False, clean=clean)
    count = recent.count("F")
    if not conduct.probation and count < policy.forfeits:
        return replace(conduct, recent=recent, clean=0)
    pauses = conduct.pauses + 1
    length = policy.length(pauses)
    cause = ("it forfeited its first ladder match after a pause" if conduct.probation
             else f"{count} of its last {len(recent)} ladder matches ended in its forfeit")
    last = " ".join(detail.split())[:DETAIL_MAX]
    why = f"{cause}{f' (the last: {last})' if last else ''}"
    return Conduct(recent="", pauses=pauses, until=now + length, since=now, why=why, probation=True, clean=0)


def notice_text(bot: str, conduct: Conduct, policy: PausePolicy = POLICY) -> str:
    """What the bot is told, and what its page and ``ladder status`` say, of its pause."""
    end = time.strftime("%H:%M:%S UTC", time.gmtime(conduct.until))
    length = conduct.until - conduct.since
    nth = "" if conduct.pauses <= 1 else f" (its pause {conduct.pauses} in a row)"
    return (f"{bot} is paused from the ladder for {_duration(length)}, until {end}{nth}: {conduct.why}. "
            f"It plays again then; a forfeit in its first ladder match pauses it again for "
            f"{_duration(policy.length(conduct.pauses + 1))}. Answer each request within its deadline.")


def _duration(seconds: float) -> str:
    s = round(seconds)
    if s < 120:
        return f"{s} s"
    if s < 7200:
        return f"{s // 60} min" + (f" {s % 60} s" if s % 60 else "")
    return f"{s / 3600:.1f} h"


def outcomes(result: MatchResult) -> dict[str, tuple[bool, str]]:
    """Each bot of a ladder match's result: (forfeited by its side, the detail of the forfeit)."""
    end = result.record.result
    bots = result.seat_bots
    seat = end.forfeit_seat
    forfeit = result.reason is ResultReason.FORFEIT and seat is not None and seat < len(bots)
    lost = seat % 2 if forfeit and seat is not None else None
    out: dict[str, tuple[bool, str]] = {}
    for at, bot in enumerate(bots):
        forfeited = lost is not None and at % 2 == lost
        if forfeited or bot not in out:
            out[bot] = (forfeited, end.detail if forfeited else "")
    return out


@dataclass(frozen=True)
class Judged:
    """What :meth:`Pauses.judge` made of a ladder result."""

    #: a bot that forfeited it while paused: the result is not to be written ("": it is), and its conduct
    refused: str = ""
    conduct: Conduct | None = None
    #: the bots it paused now, with their conducts
    paused: tuple[tuple[str, Conduct], ...] = ()


class Pauses:
    """The bots' conducts in the broker: read, and record a ladder result (blocking broker calls: from a
    thread, never the event loop)."""

    def __init__(self, broker: Broker, policy: PausePolicy = POLICY) -> None:
        self.broker = broker
        self.policy = policy

    def read(self, bots: Iterable[str]) -> dict[str, Conduct]:
        """The conduct of each of ``bots`` that has one (one read)."""
        names = sorted(set(bots))
        if not names:
            return {}
        return {bot: Conduct.from_json(text) for bot, text in self.broker.ladder_conducts(names).items()}

    def paused(self, bots: Iterable[str], now: float | None = None) -> dict[str, Conduct]:
        """Those of ``bots`` paused now, with their conduct (one read)."""
        at = time.time() if now is None else now
        return {bot: c for bot, c in self.read(bots).items() if c.paused(at)}

    def record(self, bot: str, forfeited: bool, detail: str = "", now: float | None = None,
               stored: str | None = None) -> Conduct | None:
        """Count a ladder match of ``bot`` (``stored``: its conduct's text as just read, if it was); its
        conduct if this paused it, else None."""
        at = time.time() if now is None else now
        for _ in range(SWAP_TRIES):
            if stored is None:
                stored = self.broker.ladder_conducts([bot]).get(bot, "")
            before = Conduct.from_json(stored) if stored else Conduct()
            after = after_match(before, forfeited, detail, at, self.policy)
            if after == before or (not stored and after.forgiven):
                return None
            text = "" if after.forgiven else after.to_json()
            if self.broker.swap_ladder_conduct(bot, text, stored):
                return after if after.paused(at) and not before.paused(at) else None
            stored = None  # another node recorded it meanwhile: read it again
        log.warning("bot %s: its ladder conduct changed %d times while this node recorded a match: "
                    "this one is not counted", bot, SWAP_TRIES)
        return None

    def judge(self, result: MatchResult, now: float | None = None) -> Judged:
        """A ladder result about to be written: refused if a bot that forfeited it is paused (the match was
        under way when the pause began), else counted in its bots' conducts (one read; a write only for a
        bot whose conduct changes), before it is written: a bot it pauses is paused before any node sees
        the result, and so before its seats count free again."""
        at = time.time() if now is None else now
        played = outcomes(result)
        stored = self.broker.ladder_conducts(sorted(played))
        for bot, (forfeited, _) in sorted(played.items()):
            conduct = Conduct.from_json(stored[bot]) if bot in stored else None
            if forfeited and conduct is not None and conduct.paused(at):
                return Judged(refused=bot, conduct=conduct)
        paused = []
        for bot, (forfeited, detail) in sorted(played.items()):
            conduct = self.record(bot, forfeited, detail, at, stored.get(bot, ""))
            if conduct is not None:
                paused.append((bot, conduct))
        return Judged(paused=tuple(paused))

    def lift(self, bot: str) -> bool:
        """Forget the bot's conduct (an admin's ``ladder add``): True if it was paused."""
        for _ in range(SWAP_TRIES):
            stored = self.broker.ladder_conducts([bot]).get(bot, "")
            if not stored:
                return False
            if self.broker.swap_ladder_conduct(bot, "", stored):
                return Conduct.from_json(stored).paused(time.time())
        return False


def shown(conducts: Mapping[str, Conduct], now: float) -> dict[str, Conduct]:
    """The conducts worth showing: a pause now, or pauses in a row not yet forgiven."""
    return {bot: c for bot, c in conducts.items() if c.paused(now) or c.pauses}
