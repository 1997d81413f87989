"""A ladder per rating pool: the opted-in bots keep playing rated matches, without a tournament.

**The setting** (:class:`LadderSetting`) lives in the broker, one per pool
(:meth:`~arena.queue.Broker.put_ladder`): on or off, and the match format,
so every node of a cluster follows it and it survives restarts. The bots opted
in are a set per pool in the broker too. Each change publishes a
:data:`~arena.queue.LADDER_NOTICE` of the pool, on which every node's
:class:`LadderLoop` looks again at once. A pool's ladder is that of a ruleset
preset (``coinche``, ``classic``...): its matches are played under the preset.

**The format.** Plain matches of ``deals`` deals: each ladder match is its own
deals, seen from one seat by each bot. Mirror duplicate (the same two bots see
both sides of a deal) is never used between bots of different owners: a bot
that remembers would exploit it. Field duplicate across tables (the same
deals at two tables of four different bots) is not there yet: :func:`check_duplicate`
refuses it with that reason.

**The matches** are ordinary match jobs: the queue carries them, the worker
plays them, their result is written exactly once with its rating update. Their
tournament id is the pool's :func:`~arena.ratings.ladder_id`
(``ladder:coinche``), which no tournament can take, and
:func:`~arena.queue.broker.rating_plan` counts such a result in that pool
(online Elo, pair counts for Bradley-Terry). Each match's seed is fresh
randomness drawn by the node that makes it, so the result is rated.

**The loop** (:class:`LadderLoop`, one thread per node, its broker calls never
on the event loop): for each pool whose ladder is on, it pairs the opted-in
bots connected to *this* node with free seats, with
:func:`arena.ratings.matchmaking.pick` (the pair that most narrows the pool's
intervals, within the fairness bounds, and never one whose result is known in
advance unless a bot's wait forces it: then a slot may stay free), and
enqueues those matches. The bots of the pool connected here, busy or free,
are the matchmaking's ``present``: each bot's repeat window leaves it a
partner among them. A bot
connected nowhere here is never paired, so nothing waits in the queue for an
absent bot; the worker of this node, woken by the jobs' notice, claims them at
once. It wakes when seats change here (a match ended, a bot connected), on a
ladder notice, and at least every :data:`RESCAN_S`; never a fast poll.

**Bots opt in** by an admin's ``ladder add``, or by themselves: a bot whose
stream's Hello says ``ladder`` (the SDK's ``run(..., ladder=True)``, the bots'
``--ladder``) is opted in by the loop of the node it is connected to, to every
pool whose ladder is on while it is connected there: at its connection, and at
a ladder's start while it is connected (so the order of the two does not
matter). An admin's ``ladder remove`` wins: it leaves a mark in the broker
(:meth:`~arena.queue.Broker.ladder_remove`) that the bot's own asking
(:meth:`~arena.queue.Broker.ladder_join`, one atomic step) does not get past,
on any node and after restarts, until an admin's ``ladder add`` clears it. The
opted-in set stays as it is when the bot disconnects: the loop pairs only the
bots connected, and a bot is counted once in its pool's ratings however often
it comes back.

**Tournaments keep priority.** A node gives the ladder at most ``share`` of its
match slots (:data:`DEFAULT_SHARE`, a half), so the other half is always free
for tournament matches that come; and it never pairs a bot that has a job
waiting in the queue (a tournament's match, which then takes the bot's next
free seat; or its version test's, :mod:`arena.node.versions`, whose matches
run within their own room of the ladder's share). A ladder match already
running when a tournament's match for the same bot arrives is not stopped: the
tournament's match waits for the bot's seat at most that one ladder match,
which is why the ladder plays short matches (a few deals) by default.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import secrets
import threading
import time
from collections import deque
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from arena.edge.quietlog import QuietLog
from arena.engine.rules import PRESETS
from arena.node.pauses import POLICY, Conduct, PausePolicy, Pauses, notice_text
from arena.node.rankings import Rankings, UnknownPool
from arena.node.versions import ELO1 as TEST_ELO1
from arena.node.versions import MAX_ELO1 as MAX_TEST_ELO1
from arena.node.versions import MIN_ELO1 as MIN_TEST_ELO1
from arena.node.versions import Here, VersionTests, is_test, slots_for_tests
from arena.node.waking import WakingThread
from arena.queue import LADDER_NOTICE, Broker, BrokerError
from arena.ratings import ladder_id, ladder_pool
from arena.ratings.counts import PairCount
from arena.ratings.leaderboard import Leaderboard
from arena.ratings.matchmaking import KNOWN_SCORE, Fairness, Rules, pick
from arena.records import MAX_DEALS
from arena.referee.versions import split_key
from arena.tournament import MatchJob, MatchResult

log = logging.getLogger("arena.node")

#: the share of a node's match slots the ladder may fill: a half, so that a tournament created while
#: the ladder runs finds half the node's slots free at once (its matches start without waiting for a
#: ladder match to end), while an idle arena still keeps its bots playing at half its capacity
DEFAULT_SHARE = 0.5
#: the deals of a ladder match when the admin does not say: short, so that a tournament's match that
#: needs one of its bots waits for at most a few deals
DEFAULT_DEALS = 8
#: the longest the loop sleeps without a wake-up (a notice lost: a ladder started elsewhere)
RESCAN_S = 60.0
#: how long it waits before trying again after the broker failed
RETRY_S = 5.0
#: a ladder match this node enqueued and never saw written (dead-lettered after node deaths) stops
#: counting against its ladder slots after this long
FORGET_S = 3600.0
#: the matchmaking's fairness bounds (its defaults: a match seats each bot at both places of its side)
RULES = Rules()
#: a bot's opponents a ladder's page and GetLadder list by name (the rest: a count)
OPPONENTS_SHOWN = 10
#: how long a pool's bots' opponents are kept before they are worked out again (as the leaderboards)
OPPONENTS_TTL_S = 2.0
#: why field duplicate is refused for now
NO_FIELD = ("the ladder plays plain matches for now: field duplicate across tables (four different "
            "bots) is not there yet, and mirror duplicate (two bots seeing both sides of a deal) is "
            "never used between bots of different owners")


class LadderError(ValueError):
    """A ladder setting or request that cannot be: an unknown pool, bad deals, a duplicate asked."""


def check_pool(pool: str) -> str:
    """The pool, if a ladder can run on it: a ruleset preset's pool."""
    if pool not in PRESETS:
        raise LadderError(f"a ladder runs on a ruleset preset's pool, one of {', '.join(PRESETS)}, "
                          f"not {pool[:64]!r}")
    return pool


def check_duplicate(duplicate: str) -> str:
    """The duplicate mode, if the ladder plays it: none for now (:data:`NO_FIELD`)."""
    if duplicate:
        raise LadderError(NO_FIELD)
    return duplicate


@dataclass(frozen=True)
class LadderSetting:
    """A pool's ladder: on or off, and the matches it plays."""

    pool: str
    on: bool = False
    deals: int = DEFAULT_DEALS
    #: "" (plain matches): the only mode so far (:func:`check_duplicate`)
    duplicate: str = ""
    #: the H1 bound of its bots' version tests (arena.node.versions: H0 is 0)
    test_elo1: float = TEST_ELO1
    #: the JSON it was read from (the broker's text): a batch is enqueued only while it is still stored
    stored: str = field(default="", compare=False, repr=False)

    def __post_init__(self) -> None:
        check_pool(self.pool)
        e = self.test_elo1
        if isinstance(e, bool) or not isinstance(e, int | float) or not MIN_TEST_ELO1 <= e <= MAX_TEST_ELO1:
            raise LadderError(f"the version tests' H1 bound is from {MIN_TEST_ELO1:g} to {MAX_TEST_ELO1:g} "
                              f"Elo, not {e!r}")
        deals = self.deals
        if isinstance(deals, bool) or not isinstance(deals, int) or not 1 <= deals <= MAX_DEALS:
            raise LadderError(f"deals must be a whole number from 1 to {MAX_DEALS}, not {self.deals!r}")
        check_duplicate(self.duplicate)

    def to_json(self) -> str:
        return json.dumps({"on": self.on, "deals": self.deals, "duplicate": self.duplicate,
                           "test_elo1": self.test_elo1}, sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_json(cls, pool: str, text: str) -> LadderSetting:
        try:
            data: Any = json.loads(text)
            return cls(pool, on=bool(data["on"]), deals=data["deals"], duplicate=data.get("duplicate", ""),
                       test_elo1=data.get("test_elo1", TEST_ELO1), stored=text)
        except (ValueError, KeyError, TypeError) as e:
            raise LadderError(f"the ladder of {pool[:64]!r} is stored unreadable: {e}") from None


@dataclass(frozen=True)
class LadderStatus:
    """What ``ladder status`` shows of a pool."""

    setting: LadderSetting
    bots: list[str]
    #: the pool's ladder matches queued or played now, across the cluster
    in_progress: int
    #: the pool's online Elo per bot: (rating, games)
    ratings: dict[str, tuple[float, int]]


@dataclass(frozen=True)
class LadderView:
    """A pool's ladder as anyone may read it (GetLadder, ListLadders, the web's ladder pages)."""

    setting: LadderSetting
    #: the bots opted in, by name
    bots: list[str]
    #: the pool's ladder matches queued or played now, across the cluster
    in_progress: int
    #: the matchmaking's latest picks, newest first, each with why (:class:`Pick`)
    picks: tuple[Pick, ...] = ()
    #: each bot opted in: its opponents by games, its pause (:class:`BotState`; a list of the ladders
    #: leaves them out)
    states: tuple[BotState, ...] = ()


@dataclass(frozen=True)
class Opponent:
    """A bot's games in a pool against one opponent, from the bot's side."""

    bot: str
    games: int
    wins: int
    draws: int
    losses: int


@dataclass(frozen=True)
class BotState:
    """A bot of a ladder as its page, ``ladder status`` and GetLadder show it."""

    bot: str
    #: its games in the pool against each opponent, most first (:data:`OPPONENTS_SHOWN` at most)
    opponents: tuple[Opponent, ...] = ()
    #: its games in the pool against the opponents not listed
    other_games: int = 0
    #: paused from the ladder until then (unix seconds; 0: not paused), why, and its pauses in a row
    paused_until: float = 0.0
    paused_why: str = ""
    pauses: int = 0


#: each bot's opponents shown, most games first, and its games against the others
Opponents = dict[str, tuple[tuple[Opponent, ...], int]]


def opponents_of(bots: Sequence[str], counts: Mapping[tuple[str, str], PairCount]) -> Opponents:
    """Each of ``bots`` with its games by opponent from the pool's pair counts (every rated game of the
    pool), most first, :data:`OPPONENTS_SHOWN` at most, and its games against the others."""
    against: dict[str, list[Opponent]] = {bot: [] for bot in bots}
    for (a, b), c in counts.items():
        if a in against:
            against[a].append(Opponent(b, c.games, c.wins, c.draws, c.losses))
        if b in against:
            against[b].append(Opponent(a, c.games, c.losses, c.draws, c.wins))
    out: Opponents = {}
    for bot, rows in against.items():
        rows.sort(key=lambda o: (-o.games, o.bot))
        out[bot] = (tuple(rows[:OPPONENTS_SHOWN]), sum(o.games for o in rows[OPPONENTS_SHOWN:]))
    return out


def bot_states(bots: Sequence[str], opponents: Opponents,
               conducts: Mapping[str, Conduct], now: float) -> tuple[BotState, ...]:
    """Each of ``bots`` with its opponents (:func:`opponents_of`) and its pause, if it is paused at
    ``now`` (its pauses in a row too, while not forgiven)."""
    out = []
    for bot in bots:
        shown, others = opponents.get(bot, ((), 0))
        conduct = conducts.get(bot)
        if conduct is None:
            out.append(BotState(bot, shown, others))
            continue
        paused = conduct.paused(now)
        out.append(BotState(bot, shown, others, conduct.until if paused else 0.0,
                            notice_text(bot, conduct) if paused else "",
                            conduct.pauses if paused or conduct.pauses else 0))
    return tuple(out)


@dataclass(frozen=True)
class Pick:
    """A pairing the matchmaking picked: the two bots, its match, when (unix seconds), and why."""

    a: str
    b: str
    match_id: str
    at: int
    why: str

    def to_json(self) -> str:
        return json.dumps({"a": self.a, "b": self.b, "match_id": self.match_id, "at": self.at,
                           "why": self.why}, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Pick | None:
        """The pick, or None for a text this version cannot read."""
        try:
            d = json.loads(text)
            return cls(str(d["a"]), str(d["b"]), str(d["match_id"]), int(d["at"]), str(d["why"]))
        except (ValueError, KeyError, TypeError):
            return None


def ladder_standings(rankings: Rankings, pool: str, offset: int, limit: int) -> Leaderboard:
    """A preset pool's Bradley-Terry leaderboard page, with intervals, as the ladder shows it: an empty
    one before its first rated game (a ladder just started has none yet). Blocking: from a thread."""
    check_pool(pool)
    try:
        return rankings.leaderboard(pool, "bt", offset, limit)
    except UnknownPool:
        return Leaderboard(pool=pool, method="bt", total=0, offset=offset, entries=())


class Ladders:
    """The admin's side: start, stop, opt bots in and out, read a pool's status. Blocking broker calls
    (from a thread, never the event loop). Each change publishes a ladder notice of its pool."""

    def __init__(self, broker: Broker) -> None:
        self.broker = broker
        #: each pool's bots' opponents, worked out from its pair counts at most once every
        #: :data:`OPPONENTS_TTL_S` (a read and a pass over every pair of the pool: a public read)
        self._opponents: dict[str, tuple[float, tuple[str, ...], Opponents]] = {}
        self._lock = threading.Lock()

    def opponents(self, pool: str, bots: Sequence[str]) -> Opponents:
        """:func:`opponents_of` the pool's ``bots``, kept :data:`OPPONENTS_TTL_S`."""
        now, key = time.monotonic(), tuple(bots)
        with self._lock:
            kept = self._opponents.get(pool)
        if kept is not None and now - kept[0] < OPPONENTS_TTL_S and kept[1] == key:
            return kept[2]
        found = opponents_of(bots, self.broker.pair_counts(pool))
        with self._lock:
            self._opponents[pool] = (now, key, found)
        return found

    def setting(self, pool: str) -> LadderSetting:
        """The pool's setting (off, at the defaults, when none is stored)."""
        check_pool(pool)
        text = self.broker.ladders().get(pool)
        return LadderSetting(pool) if text is None else LadderSetting.from_json(pool, text)

    def settings(self) -> dict[str, LadderSetting]:
        """Every stored setting, in one read; one stored unreadable is left out (and logged)."""
        out: dict[str, LadderSetting] = {}
        for pool, text in self.broker.ladders().items():
            try:
                out[pool] = LadderSetting.from_json(pool, text)
            except LadderError as e:
                log.warning("%s", e)
        return out

    def start(self, pool: str, deals: int = DEFAULT_DEALS, duplicate: str = "",
              test_elo1: float = TEST_ELO1) -> LadderSetting:
        setting = LadderSetting(pool, on=True, deals=deals, duplicate=duplicate, test_elo1=test_elo1)
        self.broker.put_ladder(pool, setting.to_json())
        self.broker.publish_notice(LADDER_NOTICE, pool)
        return setting

    def stop(self, pool: str) -> LadderSetting:
        """Turn it off (its format and bots are kept); the matches queued or running are played out."""
        before = self.setting(pool)
        setting = LadderSetting(pool, on=False, deals=before.deals, test_elo1=before.test_elo1)
        self.broker.put_ladder(pool, setting.to_json())
        self.broker.publish_notice(LADDER_NOTICE, pool)
        return setting

    def add(self, pool: str, bot: str) -> bool:
        """Opt ``bot`` in, and clear the mark a :meth:`remove` left and any pause of its forfeits
        (:mod:`arena.node.pauses`): the admin's word."""
        added = self.broker.ladder_add(check_pool(pool), bot)
        lifted = Pauses(self.broker).lift(bot)
        if lifted:
            log.info("ladder: bot %s's pause lifted by an admin", bot,
                     extra={"event": "ladder_pause_lifted", "pool": pool, "bot": bot})
        if added or lifted:
            self.broker.publish_notice(LADDER_NOTICE, pool)
        return added

    def remove(self, pool: str, bot: str) -> bool:
        """Take ``bot`` out: it is paired no more (its matches queued or running are played out), and
        its Hello's ladder flag no longer puts it back in (:meth:`join`) until an admin adds it."""
        removed = self.broker.ladder_remove(check_pool(pool), bot)
        if removed:
            self.broker.publish_notice(LADDER_NOTICE, pool)
        return removed

    def view(self, pool: str, setting: LadderSetting | None = None, states: bool = True,
             counts: Callable[[str], Mapping[tuple[str, str], PairCount]] | None = None) -> LadderView:
        """The pool's ladder as the RPCs and the web pages show it: its setting (``setting`` if the
        caller read it already), its bots, its matches in progress, its latest picks, and with
        ``states`` each bot's opponents and pause. Six reads at most. ``counts(pool)``: the pair counts
        the page's standings come from (:meth:`arena.node.rankings.Rankings.pair_counts`), so that a
        bot's opponents agree with its games there; without it, the pool's, kept a while."""
        setting = setting or self.setting(pool)
        picks = tuple(p for p in map(Pick.from_json, self.broker.ladder_picks(pool)) if p is not None)
        bots = self.broker.ladder_bots(pool)
        shown: tuple[BotState, ...] = ()
        if states and bots:
            found = self.opponents(pool, bots) if counts is None else opponents_of(bots, counts(pool))
            shown = bot_states(bots, found, Pauses(self.broker).read(bots), time.time())
        return LadderView(setting, bots, self.broker.pending_count(ladder_id(pool)), picks, shown)

    def views(self) -> list[LadderView]:
        """Every preset pool with a ladder stored or bots opted in, by pool: a read per preset (a fixed
        few), whatever is stored."""
        settings = self.settings()
        out = []
        for pool in sorted(PRESETS):
            view = self.view(pool, settings.get(pool, LadderSetting(pool)), states=False)
            if pool in settings or view.bots:
                out.append(view)
        return out

    def join(self, pool: str, bot: str) -> bool:
        """Opt ``bot`` in at its own asking (its Hello's ladder flag), unless an admin removed it from
        the pool's ladder; True if it was put in now."""
        joined = self.broker.ladder_join(check_pool(pool), bot)
        if joined:
            self.broker.publish_notice(LADDER_NOTICE, pool)
        return joined

    def status(self, pool: str) -> LadderStatus:
        setting = self.setting(pool)
        return LadderStatus(setting, self.broker.ladder_bots(pool),
                            self.broker.pending_count(ladder_id(pool)), self.broker.pool_ratings(pool))


def ladder_job(setting: LadderSetting, a: str, b: str, node_id: str = "") -> MatchJob:
    """A ladder match of ``a`` (seats 0 and 2) against ``b``: its own id and a fresh seed."""
    tid = ladder_id(setting.pool)
    tag = f"{node_id}." if node_id else ""
    return MatchJob(match_id=f"{tid}:{tag}{secrets.token_hex(8)}", tournament_id=tid, team0=a, team1=b,
                    ruleset=setting.pool, seed=secrets.token_hex(32), deals=setting.deals,
                    tags={"format": "ladder"})


@dataclass(frozen=True)
class Capacity:
    """What a node can give the ladder now, read on its event loop."""

    #: the free seats of each bot connected here
    free_seats: Mapping[str, int]
    #: the node's match slots and those its matches fill
    slots: int
    running: frozenset[str] = frozenset()
    #: the bots connected here whose Hello asked to play the ladder
    volunteers: frozenset[str] = frozenset()
    #: the bots with versions a test may concern, each with its versions connected here
    versioned: tuple[Here, ...] = ()


@dataclass
class _Sent:
    pool: str
    bots: tuple[str, str]
    at: float = field(default_factory=time.monotonic)


class LadderLoop(WakingThread):
    """A node's ladder thread (:meth:`start`, :meth:`wake` on a change, :meth:`stop`).

    ``capacity()`` gives the node's :class:`Capacity` now: it is called from this thread and must
    read the node on its own event loop (:meth:`on_loop` makes one that does)."""

    def __init__(self, broker: Broker, capacity: Any, *, node_id: str = "", share: float = DEFAULT_SHARE,
                 rules: Rules = RULES, rescan_s: float = RESCAN_S, name: str = "ladder",
                 counted: Callable[[str, int], None] | None = None,
                 tests: VersionTests | None = None, pauses: PausePolicy = POLICY,
                 tell: Callable[[str, str, str, int], None] | None = None) -> None:
        if not 0.0 <= share <= 1.0:
            raise LadderError(f"the ladder share is from 0 to 1, not {share}")
        self.broker = broker
        self.ladders = Ladders(broker)
        self.capacity = capacity
        self.node_id = node_id
        self.share = share
        self.rules = rules
        self.rescan_s = rescan_s
        super().__init__(name)
        #: the ladder matches this node enqueued whose result it has not seen written yet
        self.sent: dict[str, _Sent] = {}
        #: how many ladder matches this node enqueued, in all
        self.enqueued = 0
        #: told the pool and the number of each batch enqueued (the node's metrics count them)
        self.counted = counted
        #: the bots' version tests (arena.node.versions), run on the ladder's slots
        self.tests = tests
        self._fairness: dict[str, Fairness] = {}
        #: (pool, bot): the volunteers this loop asked the broker to opt in while on and connected (asked
        #: once: the answer changes only by an admin's word); as many as the bots connected here
        self._joined: set[tuple[str, str]] = set()
        self._rng = random.Random(secrets.randbits(64))
        self._quiet = QuietLog(log)
        #: the bots' forfeits and pauses (arena.node.pauses), kept in the broker
        self.pauses = Pauses(broker, pauses)
        #: told (bot, kind, text, until) to tell a paused bot on its streams here (from this thread: it
        #: posts to the loop)
        self.tell = tell
        #: the bots paused at the last look, with their conducts
        self.paused: dict[str, Conduct] = {}
        #: per pool, the bots left waiting at the last pairing because every pair open to them was a
        #: known result (arena.ratings.matchmaking's floor)
        self.waiting: dict[str, tuple[str, ...]] = {}
        #: how many pauses this node began, and the ladder forfeits of paused bots it did not record
        self.pauses_begun = 0
        self.refused = 0
        #: the matches refused (by the worker's thread), for this thread to forget
        self._refused: deque[str] = deque()
        #: when (unix seconds) a pause this node saw ends: it looks again then (a timer each)
        self._ends: dict[float, threading.Timer] = {}

    @staticmethod
    def on_loop(loop: asyncio.AbstractEventLoop, read: Any) -> Any:
        """A ``capacity()`` that runs ``read()`` (which returns a :class:`Capacity`) on ``loop``."""
        async def run() -> Capacity:
            result: Capacity = read()
            return result

        def capacity() -> Capacity:
            return asyncio.run_coroutine_threadsafe(run(), loop).result(10.0)

        return capacity

    def _judge(self, capacity: Capacity) -> None:
        """Read the pauses of the bots here (one read): a paused bot is not paired, and it is told why on
        its streams here (once a stream); this thread looks again when the pause ends."""
        if not self.pauses.policy.on:
            return
        bots = set(capacity.free_seats) | set(capacity.volunteers)
        now = time.time()
        self.paused = self.pauses.paused(bots, now) if bots else {}
        for bot, conduct in sorted(self.paused.items()):
            if self.tell is not None:
                text = notice_text(bot, conduct, self.pauses.policy)
                self.tell(bot, "ladder_paused", text, int(conduct.until))
            self._look_at(conduct.until, now)

    def before_write(self, result: MatchResult) -> str:
        """Asked by the worker (in a thread) of each result before it is written: a ladder result counts
        in its bots' conducts now, before any node sees it (so a bot it pauses is paused before its seats
        count free again); and one a paused bot forfeited (it was under way when the pause began, on any
        node) is refused: why, and the worker drops its job unrecorded, as that forfeit would be a rated
        win the pause is there to stop. "" for any other result. A few reads, for ladder results only."""
        pool = ladder_pool(result.tournament_id)
        if pool is None or not self.pauses.policy.on:
            return ""
        try:
            judged = self.pauses.judge(result)
        except BrokerError as e:  # the result is written all the same; its count is lost
            self._quiet.warning("ladder pauses", "match %s: not counted in its bots' conducts: %s",
                                result.match_id, e)
            return ""
        for bot, conduct in judged.paused:
            self.pauses_begun += 1
            log.warning("ladder: %s", notice_text(bot, conduct, self.pauses.policy),
                        extra={"event": "ladder_pause", "pool": pool, "bot": bot, "match_id": result.match_id,
                               "until": int(conduct.until), "pauses": conduct.pauses})
            self._publish(pool)
        if not judged.refused or judged.conduct is None:
            return ""
        self.refused += 1
        self._refused.append(result.match_id)  # this thread forgets it at its next pass, now
        self.wake()
        return (f"{judged.refused} forfeited it while paused from the ladder (until "
                f"{time.strftime('%H:%M:%S UTC', time.gmtime(judged.conduct.until))}): a forfeit while "
                "paused feeds no one's rating")

    def _publish(self, pool: str) -> None:
        """A ladder notice of ``pool``: every node's loop looks again (and reads the pause)."""
        try:
            self.broker.publish_notice(LADDER_NOTICE, pool)
        except BrokerError as e:
            self._quiet.warning("ladder notice", "cannot tell the nodes of a pause: %s", e)
        self.wake()

    def _look_at(self, until: float, now: float) -> None:
        """Wake this thread just after ``until`` (a pause's end: the bot is paired again)."""
        self._ends = {t: timer for t, timer in self._ends.items() if timer.is_alive()}
        if until in self._ends or len(self._ends) >= 64:
            return
        timer = threading.Timer(max(0.0, until - now) + 0.05, self.wake)
        timer.daemon = True
        timer.start()
        self._ends[until] = timer

    def slots(self, capacity: Capacity) -> int:
        """The ladder's slots on this node: ``share`` of its match slots, rounded down."""
        return int(self.share * capacity.slots + 1e-9)

    def run_once(self) -> float:
        """Enqueue the ladder matches this node can start now; how long to sleep before the next look."""
        try:
            settings = {pool: s for pool, s in self.ladders.settings().items() if s.on}
            self._forget_done()
            if not settings and (self.tests is None or not self.tests.running):
                return self.rescan_s
            capacity = self.capacity()
            opted: dict[str, set[str]] = {}

            def opted_in(pool: str) -> set[str]:
                if pool not in opted:
                    opted[pool] = set(self.broker.ladder_bots(pool))
                return opted[pool]

            if self.tests is not None and capacity.versioned:
                self.tests.run(capacity.versioned, {p: (s.deals, s.test_elo1) for p, s in settings.items()},
                               opted_in)
            if not settings:
                return self.rescan_s
            self._join(settings, capacity.volunteers)
            self._judge(capacity)  # the bots paused: not paired, told why
            # the version tests' matches take ladder slots too: those running here, or their room while
            # a test is open (the worker starts them within it: test_room)
            room = self.slots(capacity) - len(self.sent) - self._tests_hold(capacity)
            free_slots = capacity.slots - len(capacity.running) - sum(
                1 for mid in self.sent if mid not in capacity.running)
            room = min(room, free_slots)
            if room <= 0:
                return self.rescan_s
            seats = self._free_seats(capacity)
            if not seats:
                return self.rescan_s
            # a job waits for them (a tournament's, or their version test's: ``bot@version``): not paired
            busy = {split_key(b)[0] for b in self.broker.waiting_bots()}
            for _, setting in sorted(settings.items()):
                if room <= 0:
                    break
                room -= self._fill(setting, seats, busy, room, opted_in(setting.pool))
        except BrokerError as e:
            self._quiet.warning("ladder", "the ladder could not read or enqueue: %s", e)
            return RETRY_S
        except Exception:  # a thread that dies stops the ladder for good: log and go on
            log.exception("the ladder loop failed")
            return RETRY_S
        return self.rescan_s

    def _tests_hold(self, capacity: Capacity) -> int:
        """The ladder's slots the version tests hold: those of their matches running here, and while a
        test is open among the bots here, their whole room (:func:`slots_for_tests`), which the ladder
        leaves them so that they take turns with its games rather than wait for a gap in them."""
        running = sum(1 for mid in capacity.running if is_test(mid))
        if self.tests is None or not self.tests.running:
            return running
        return max(running, slots_for_tests(capacity.slots, self.share))

    def test_room(self, slots: int, running: Collection[str]) -> int:
        """How many more version-test matches the node may start now (the worker's cap on its claims,
        read on the event loop): within :func:`slots_for_tests` of its ``slots``, and within the ladder's
        share less the ladder's matches ``running`` here and those this loop enqueued that have not
        started here. So the tests and the ladder together never take more than the ladder's share,
        and a tournament's match always finds the rest of the node free."""
        tests = sum(1 for mid in running if is_test(mid))
        ladder = sum(1 for mid in running if ladder_pool(mid) is not None)
        waiting = sum(1 for mid in tuple(self.sent) if mid not in running)  # a copy: this thread's dict
        share = int(self.share * slots + 1e-9)
        return max(0, min(slots_for_tests(slots, self.share) - tests, share - tests - ladder - waiting))

    def _join(self, settings: Mapping[str, LadderSetting], volunteers: frozenset[str]) -> None:
        """Opt the volunteers connected here in to the pools whose ladder is on, once each while both
        last (a bot that left, a ladder stopped: asked again when they come back)."""
        self._joined = {(pool, bot) for pool, bot in self._joined if pool in settings and bot in volunteers}
        for pool in sorted(settings):
            for bot in sorted(volunteers):
                if (pool, bot) in self._joined:
                    continue
                if self.ladders.join(pool, bot):
                    log.info("ladder %s: bot %s opted in (its Hello asked)", pool, bot,
                             extra={"event": "ladder_join", "pool": pool, "bot": bot})
                self._joined.add((pool, bot))

    def _free_seats(self, capacity: Capacity) -> dict[str, int]:
        """The free seats of the bots here, less those the ladder matches enqueued and not yet running
        here will take."""
        seats = dict(capacity.free_seats)
        for mid, sent in self.sent.items():
            if mid not in capacity.running:
                for bot in sent.bots:
                    if bot in seats:
                        seats[bot] -= self.rules.seats_per_match
        return {bot: n for bot, n in seats.items() if n > 0}

    def _fill(self, setting: LadderSetting, seats: dict[str, int], busy: set[str], room: int,
              opted: set[str]) -> int:
        """Pick and enqueue up to ``room`` matches of the pool among its bots in ``seats`` (taking their
        seats from it) opted in to it (``opted``); how many were enqueued."""
        pool = setting.pool
        here = {bot: n for bot, n in seats.items()
                if bot in opted and bot not in busy and bot not in self.paused}
        if len(here) < 2:
            return 0
        counts: dict[tuple[str, str], PairCount] = self.broker.pair_counts(pool)
        # the pool's bots in play here: those free, and those in its ladder matches from this node (the
        # repeat window leaves each bot a partner among them: arena.ratings.matchmaking)
        present = set(here) | {bot for sent in self.sent.values() if sent.pool == pool for bot in sent.bots
                               if bot in opted}
        picks = pick(counts, here, self._fairness.get(pool, Fairness()), self._rng, self.rules, limit=room,
                     present=present)
        self._fairness[pool] = picks.fairness
        self._note_waiting(pool, picks.waiting)
        jobs = [ladder_job(setting, p.a, p.b, self.node_id) for p in picks.picks]
        if not jobs:
            return 0
        # only while the setting it read is stored still: a stop (or a change) during this look enqueues
        # nothing, on any node
        if not self.broker.enqueue_ladder(pool, setting.stored or setting.to_json(), jobs):
            return 0
        now = int(time.time())
        self.broker.note_ladder_picks(pool, [Pick(p.a, p.b, job.match_id, now, p.reason()).to_json()
                                             for p, job in zip(picks.picks, jobs, strict=True)])
        for p, job in zip(picks.picks, jobs, strict=True):
            self.sent[job.match_id] = _Sent(pool, (p.a, p.b))
            for bot in (p.a, p.b):
                seats[bot] = seats.get(bot, 0) - self.rules.seats_per_match
            log.info("ladder %s: %s", pool, p.reason(),
                     extra={"event": "ladder_match", "pool": pool, "match": job.match_id})
        self.enqueued += len(jobs)
        if self.counted is not None:
            self.counted(pool, len(jobs))
        return len(jobs)

    def _note_waiting(self, pool: str, waiting: tuple[str, ...]) -> None:
        """Log the bots that wait because every pair open to them is a known result, when they change
        (a ladder whose pairs are all known results is idle: the log says why)."""
        before = self.waiting.get(pool, ())
        self.waiting[pool] = waiting
        if waiting and waiting != before:
            log.info("ladder %s: %s wait%s: every pair open to them is a known result (the favourite "
                     "expected to score %.2f or more); a wait bound forces a game only while others play",
                     pool, ", ".join(waiting), "" if len(waiting) > 1 else "s", KNOWN_SCORE,
                     extra={"event": "ladder_known_results", "pool": pool, "bots": len(waiting)})

    def _forget_done(self) -> None:
        """Drop from :attr:`sent` the matches whose result is written (one read), those refused (a paused
        bot's forfeit: no result will come, and their seats would stay counted taken), and those too old."""
        while self._refused:
            self.sent.pop(self._refused.popleft(), None)
        if not self.sent:
            return
        done = self.broker.results_written(list(self.sent))
        now = time.monotonic()
        for mid in [m for m, s in self.sent.items() if m in done or now - s.at > FORGET_S]:
            del self.sent[mid]
