"""Bot versions tested like patches: an automatic SPRT of a new version against the promoted one.

A bot that connects with a new version (its Hello's ``bot_version``) has it
kept in the registry as a *candidate* (:mod:`arena.referee.versions`). When
the candidate and the promoted version are both connected to a node, and the
bot plays a pool's ladder that is on, the node's ladder thread
(:class:`VersionTests`, called by :class:`~arena.node.ladder.LadderLoop` each
pass) starts the test: an ``sprt`` tournament between ``bot@candidate`` and
``bot@promoted`` (:func:`test_spec`), whose jobs the queue carries like any
other, so a node that dies during it loses nothing and counts nothing twice
(leases, exactly-once results, and any node's advance sweep). The ``vt:``
tournament ids are the tests' own: no caller may make one
(:func:`arena.tournament.spec.check_callers_id`), and the tests are listed
apart from the tournaments.

**Their share.** A node plays at most :func:`slots_for_tests` test matches at
once, half the ladder's share of its slots: its worker's claim takes no more
(:meth:`arena.node.ladder.LadderLoop.test_room`), within the ladder's share
with the ladder's own matches, and while a test is open the ladder leaves
them that room. So the ladder keeps the other half of its share and a
tournament's match always finds the rest of the node free.

**Their turns** (:class:`VersionTestLimits`). As many tests are under way
among the bots of a node as that room, and ``per_owner`` among one owner's
bots (:attr:`~arena.referee.registry.BotEntry.owner_of`); the bots whose
candidate could start take turns, the one waiting longest first
(:func:`waited_since`). A bot has one test at a time, and ``a_day`` started
in 24 hours at most (its entry keeps their starts, written with the start in
one atomic change): a candidate past them waits, and :attr:`VersionTests.waiting`
and :func:`waiting_reasons` say why and until when (its versions page, ``bot
versions``).

**What is kept.** The tournaments of each bot's :data:`TESTS_KEPT` latest
tests; an older one is forgotten whole once a later one is decided
(:meth:`~arena.queue.Broker.forget_tournament`, and every node deletes its
records of its matches: :func:`forget_records`, :func:`sweep_records`), its
evidence staying in its version's row.

**The test.** Mirror duplicate pairs of ``deals`` deals (the pool's ladder
format) under the pool's preset, scored by the sprt format's sequential test
by betting on the pentanomial (:mod:`arena.tournament.sprt`), H0: the
candidate is :data:`ELO0` stronger, H1: :data:`ELO1`, with ``alpha = beta =``
:data:`ALPHA`, which it keeps after any number of pairs whatever the law of
the pairs: it decides only on evidence. A pair with a leg in which no card was
played (every deal thrown in) is set aside. Both sides belong to
one owner, so the two-bot duplicate (each bot sees both legs' hands) is
acceptable here: there is nobody to exploit but itself. The test is not
rated in the pool (the versions are one bot).

Why these bounds. ``bench/strength.py`` measures, for two bots that differ
by a real improvement (the search bot against the heuristic, coinche), a
mean of +95 points a deal with a per-deal standard deviation of duplicate
boards about 1.5 times that mean; for a match of 8 deals the pair score
then sits near 1, a difference of several hundred Elo on the match scale,
which this test decides in a handful of pairs (8 pairs all won). A patch
worth shipping moves a bot much less: [0, 30] on the match scale catches a
version some 30 Elo better with 95% power while a version no better (or
worse) is refused with 95% confidence. Between close versions of a bot, 80
to 93% of 8-deal mirror pairs are drawn (both legs play the same cards), a
pair variance of 0.015 to 0.05: ``bench/sprt.py`` measures such laws deciding
in 80 to 125 pairs on average at elo0 and elo1, and within
:data:`MAX_PAIRS` = 400 in 99% of the runs, far sooner away from the bounds.
fishtest's [0, 5] would need thousands of pairs: too long for a ladder's
spare slots. A test that has not decided within :data:`MAX_PAIRS` pairs
leaves the candidate *undecided*: it is not promoted, and nothing is held
against it (its owner can promote it by hand).

**The decision** is written by whichever node sees the tournament finished
first, as one atomic change of the bot's entry that applies once
(:func:`arena.referee.versions.decide`): H1 promotes the candidate (the
leaderboard then shows the bot at it), H0 rejects it, no decision leaves it
undecided, each keeping the evidence (LLR, pairs, pairs set aside, the Elo
estimate and its 95% interval) on the bot's versions page. One version of a
bot is tested at a time, the first seen first.
"""

from __future__ import annotations

import collections
import contextlib
import logging
import re
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace

from arena.edge.quietlog import QuietLog
from arena.engine.rules import PRESETS
from arena.node.rankings import Rankings, VersionRating
from arena.queue import FORGOTTEN_NOTICE, Broker
from arena.referee.registry import BotEntry
from arena.referee.store import MatchStore
from arena.referee.versions import (
    Version,
    VersionError,
    back_to_candidate,
    decide,
    find,
    next_candidate,
    player_key,
    promoted,
    start_test,
)
from arena.tournament import Tournaments, TournamentState
from arena.tournament.spec import TEST_PREFIX, SprtOptions, TournamentError, TournamentSpec
from arena.tournament.sprt import SequentialTest, bounds, finite_or_none

log = logging.getLogger("arena.node")

#: the hypotheses (match-scale Elo of the candidate over the promoted version) and error rates
ELO0 = 0.0
ELO1 = 30.0
#: what a ladder's admin may set its H1 bound to (``ladder start --version-test-elo1``)
MIN_ELO1, MAX_ELO1 = 1.0, 400.0
ALPHA = 0.05
#: pairs scheduled at a time (the test decides in the middle of a batch: a small one wastes little)
BATCH_PAIRS = 4
#: the measured Belote laws decide within it in 99% of runs at elo0 and elo1 (bench/sprt.py)
MAX_PAIRS = 400
OPTIONS = SprtOptions(elo0=ELO0, elo1=ELO1, alpha=ALPHA, beta=ALPHA, batch_pairs=BATCH_PAIRS,
                      max_pairs=MAX_PAIRS)
#: the tournament id of a version's test starts with this (reserved: no caller may use it)
PREFIX = TEST_PREFIX
#: the tests of one bot whose tournaments (results, records, own pool) the arena keeps: the latest ones,
#: the one under way among them; an older one is forgotten once a later one is decided, its evidence
#: (decision, LLR, pairs, Elo) staying in its version's row of the bot's entry
TESTS_KEPT = 3
#: a version test's match id: its tournament's id (``vt:NAME:VERSION:CHANGED``), a dash, the rest
_TEST_MATCH = re.compile(r"(vt:[^:]+:[^:]+:[0-9]+)-")
UNRATED = "a test between two versions of one bot: not rated in the pool"


def slots_for_tests(slots: int, share: float) -> int:
    """The version-test matches a node of ``slots`` match slots plays at once, the ladder having ``share``
    of them: half the ladder's slots (rounded down), one at least where the ladder has any, so that the
    ladder keeps the other half for its own games and a tournament the rest of the node."""
    ladder = int(share * slots + 1e-9)
    return 0 if ladder <= 0 else max(1, ladder // 2)


def test_id(name: str, candidate: Version) -> str:
    """The test's tournament id: the same on every node for one candidacy (a candidate sent back to
    wait gets a new one: ``changed`` moved)."""
    return f"{PREFIX}{name}:{candidate.version}:{candidate.changed}"


def is_test(match_or_tournament_id: str) -> bool:
    return match_or_tournament_id.startswith(PREFIX)


def test_of(match_id: str) -> str | None:
    """The version test a match id belongs to (None: no test's)."""
    found = _TEST_MATCH.match(match_id)
    return None if found is None else found.group(1)


def forget_records(store: MatchStore, tournament_ids: Sequence[str]) -> int:
    """Delete a node's records of the matches of the version tests ``tournament_ids`` (forgotten: the
    ``forgotten`` notice's data); how many. Blocking: from a thread."""
    return sum(store.forget_tournament(tid) for tid in dict.fromkeys(tournament_ids) if is_test(tid))


def sweep_records(store: MatchStore, broker: Broker) -> int:
    """Delete a node's records of version tests whose tournament the broker no longer has (forgotten
    while this node was down, or missed the notice); how many. Lists the node's records and reads the
    tests' states once: at its start and after a gap in the notices, from a thread."""
    tests = sorted({t for t in map(test_of, store.ids()) if t is not None})
    if not tests:
        return 0
    stored = broker.tournament_states(tests)
    return forget_records(store, [t for t in tests if t not in stored])


def test_spec(name: str, candidate: str, base: str, tid: str, pool: str, deals: int,
              options: SprtOptions = OPTIONS) -> TournamentSpec:
    """The SPRT of ``name@candidate`` (the first bot) against ``name@base`` on ``pool``'s preset."""
    return TournamentSpec(
        tournament_id=tid, format="sprt", bots=(player_key(name, candidate), player_key(name, base)),
        ruleset=PRESETS[pool], deals=deals, duplicate="mirror", sprt=options,
        seed=secrets.token_hex(32), unrated_reason=UNRATED)


#: a bot's version tests a day at most, by default (``serve --version-tests-a-day``): a test of close
#: versions runs hundreds of pairs, so an author who pushes a version every hour or two of a working day
#: is never held back, while one bot cycling labels makes 12 tournaments a day, not some 18,000 (one
#: every 4.6 s was measured)
TESTS_A_DAY = 12
#: the most a node may be told (a bot's entry keeps the start of each of its tests of the last day)
MAX_TESTS_A_DAY = 1000
#: version tests under way at once among one owner's bots, by default (``serve --version-tests-per-owner``)
TESTS_PER_OWNER = 1
DAY_S = 86_400


@dataclass(frozen=True)
class VersionTestLimits:
    """How many version tests are under way at once, and how often a bot's versions are tested."""

    #: tests under way at once among the bots connected to a node (run.py: the node's room for test
    #: matches, :func:`slots_for_tests`, for a test plays several matches at once)
    at_once: int = 1
    #: tests under way at once among one owner's bots (:attr:`BotEntry.owner_of`)
    per_owner: int = TESTS_PER_OWNER
    #: tests started in the last 24 hours of one bot
    a_day: int = TESTS_A_DAY

    def __post_init__(self) -> None:
        for name, high in (("at_once", 10_000), ("per_owner", 10_000), ("a_day", MAX_TESTS_A_DAY)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= high:
                raise ValueError(f"{name} must be a whole number from 1 to {high}, not {value!r}")


def recent_starts(started: Sequence[int], now: int) -> tuple[int, ...]:
    """The starts of the last 24 hours before ``now``, oldest first."""
    return tuple(sorted(t for t in started if now - DAY_S < t <= now))


def quota_reason(entry: BotEntry, now: int, a_day: int) -> str:
    """Why the bot's next test waits for its day's tests ("": it need not)."""
    recent = recent_starts(entry.tests_started, now)
    if len(recent) < a_day:
        return ""
    free_at = recent[len(recent) - a_day] + DAY_S
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(free_at))
    return (f"{len(recent)} of its version tests started in the last 24 hours, the most a bot may ({a_day} a "
            f"day): the next may start at {when}")


def waited_since(entry: BotEntry) -> int:
    """Since when the bot's next candidate has waited for its turn: its candidacy, or the bot's latest
    test's start or end if later (a bot whose test just ended waits behind those that waited)."""
    cand = next_candidate(entry.versions)
    return max([0 if cand is None else cand.changed, *(v.changed for v in entry.versions if v.test)])


def waiting_reasons(entry: BotEntry, node_says: str, now: int, a_day: int) -> dict[str, str]:
    """Why each candidate of ``entry`` waits (version -> a sentence): one test a bot at a time, the
    first seen first; the next one's reason as a node saw it (``node_says``), else its day's tests."""
    under_test = next((v for v in entry.versions if v.state == "testing"), None)
    first = next_candidate(entry.versions)
    out = {}
    for v in entry.versions:
        if v.state != "candidate":
            continue
        if under_test is not None:
            out[v.version] = f"waits for the test of version {under_test.version} (one test a bot at a time)"
        elif first is not None and v.version != first.version:
            out[v.version] = (f"waits behind version {first.version} (one test a bot at a time, the first "
                              f"seen first)")
        else:
            out[v.version] = (node_says or quota_reason(entry, now, a_day)
                              or "waits for its test, on a ladder's slots where both versions are connected")
    return out


def anew(versions: Sequence[Version], cand: Version, now: int) -> tuple[Version, ...]:
    """``cand``, still a candidate as it was, starts its candidacy again (a new test id); its place in
    line is kept by the bot's own order (first seen first)."""
    v = find(versions, cand.version)
    if v is None or v.state != "candidate" or v.changed != cand.changed:
        raise VersionError(f"version {cand.version[:40]} changed meanwhile")
    return tuple(replace(x, changed=max(now, cand.changed + 1)) if x.version == v.version else x
                 for x in versions)


def ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


@dataclass(frozen=True)
class Here:
    """A versioned bot connected to this node: its entry now and the versions connected here."""

    entry: BotEntry
    connected: frozenset[str]


class VersionTests:
    """Starts and decides the version tests of the bots connected to one node (from its ladder
    thread: every call blocks on the broker or the registry's backend), within its
    :class:`VersionTestLimits`."""

    def __init__(self, broker: Broker, tournaments: Tournaments,
                 update: Callable[[str, Callable[[BotEntry], BotEntry | None]], BotEntry | None], *,
                 options: SprtOptions = OPTIONS, counted: Callable[[str], None] | None = None,
                 limits: VersionTestLimits | None = None, clock: Callable[[], float] = time.time) -> None:
        self.broker = broker
        self.tournaments = tournaments
        #: the registry's update_entry (an atomic change of a bot's entry: its versions, its tests' starts)
        self.update = update
        self.options = options
        #: told "started", "accepted", "rejected" or "undecided" for each change this node wrote (the
        #: metrics)
        self.counted = counted
        self.limits = limits or VersionTestLimits()
        self.clock = clock
        #: the tests under way among the bots connected here, as this node last saw them
        self.running = 0
        #: why each bot connected here waits for its next candidate's test, as this node last saw it
        #: (bot name -> a sentence; replaced whole at each look, read from the event loop)
        self.waiting: dict[str, str] = {}
        self._quiet = QuietLog(log)

    def run(self, here: Sequence[Here], pools: Mapping[str, tuple[int, float]],
            opted: Callable[[str], set[str]]) -> None:
        """One look: decide the tests that ended, start those that can. ``pools``: the pools whose
        ladder is on, each with its deals and its tests' H1 bound; ``opted(pool)``: the bots opted in
        to its ladder.

        The bots whose next candidate could start take turns: the one waiting longest first (since
        its candidate came, or its last test ended, whichever is later), while fewer than
        ``limits.at_once`` tests are under way among the bots here and fewer than
        ``limits.per_owner`` among its owner's; a bot whose tests of the last day are used waits
        for the oldest of them to be a day old. Each waiting bot's reason is kept in :attr:`waiting`."""
        now = int(self.clock())
        testing = {h.entry.name: v for h in here for v in h.entry.versions if v.state == "testing"}
        states = self.broker.tournament_states([v.test for v in testing.values()]) if testing else {}
        running = 0
        owners: collections.Counter[str] = collections.Counter()
        idle = []
        for h in here:
            v = testing.get(h.entry.name)
            if v is None:
                idle.append(h)
            elif self._follow(h.entry, v, states.get(v.test)):
                running += 1
                owners[h.entry.owner_of] += 1
        waiting: dict[str, str] = {}
        ready = []
        for h in idle:
            why = self._why_not(h, pools, opted, now)
            if why is None:
                ready.append(h)
            elif why:
                waiting[h.entry.name] = why
        ready.sort(key=lambda h: (waited_since(h.entry), h.entry.name))
        line = 0
        limits = self.limits
        for h in ready:
            owner = h.entry.owner_of
            if running >= limits.at_once:
                line += 1
                waiting[h.entry.name] = (
                    f"{running} version tests are under way among the bots of this node, the most at once "
                    f"({limits.at_once}): it is {ordinal(line)} in line (the bot waiting longest goes first)")
            elif owners[owner] >= limits.per_owner:
                waiting[h.entry.name] = (
                    f"its owner's bots ({owner}) have {owners[owner]} version test"
                    f"{'' if owners[owner] == 1 else 's'} under way, the most at once ({limits.per_owner})")
            elif self._start(h, pools, opted, now):
                running += 1
                owners[owner] += 1
        self.running = running
        self.waiting = waiting

    def _why_not(self, h: Here, pools: Mapping[str, tuple[int, float]], opted: Callable[[str], set[str]],
                 now: int) -> str | None:
        """Why the bot's next candidate cannot start its test here now, whatever the others do ("": it
        has none), or None: it can, when its turn comes."""
        entry = h.entry
        cand, base = next_candidate(entry.versions), promoted(entry.versions)
        if cand is None or base is None:
            return ""
        missing = [x for x in dict.fromkeys((cand.version, base.version)) if x not in h.connected]
        if missing:
            verb = "is" if len(missing) == 1 else "are"
            return (f"version {' and '.join(missing)} {verb} not connected to this node: a test plays the "
                    f"candidate against the promoted version")
        if self._pool(entry, pools, opted) is None:
            return ("the bot plays no ladder that is on: a version test runs on a ladder's slots (its "
                    "Hello's ladder flag, or an admin's ladder add)")
        return quota_reason(entry, now, self.limits.a_day) or None

    @staticmethod
    def _pool(entry: BotEntry, pools: Mapping[str, tuple[int, float]],
              opted: Callable[[str], set[str]]) -> str | None:
        """The pool of the bot's test: the first of the ladders on that it plays."""
        return next((p for p in sorted(pools) if entry.name in opted(p)), None)

    def reasons(self, entry: BotEntry) -> dict[str, str]:
        """Why each candidate of ``entry`` waits (version -> a sentence), as its versions page says it."""
        return waiting_reasons(entry, self.waiting.get(entry.name, ""), int(self.clock()), self.limits.a_day)

    def _follow(self, entry: BotEntry, v: Version, state: TournamentState | None) -> int:
        """Apply the end of a test; 1 while it runs."""
        name, now = entry.name, int(time.time())
        base = promoted(entry.versions)
        if state is None:  # its tournament is gone (the store lost it): the candidate waits again
            self._write(name, lambda vs: back_to_candidate(vs, v.version, v.test, now), "")
            return 0
        if state.is_open:
            if base is not None and base.version != v.against:  # promoted by hand meanwhile: moot
                with contextlib.suppress(TournamentError):  # it ended meanwhile, or another node did it
                    self.tournaments.cancel(v.test)
                self._write(name, lambda vs: back_to_candidate(vs, v.version, v.test, now), "")
                return 0
            return 1
        progress = self.tournaments.progress(v.test)
        sprt = progress.sprt
        decision = "" if sprt is None or state is not TournamentState.FINISHED else (sprt.decision or "")
        llr = 0.0 if sprt is None else sprt.llr
        pairs = 0 if sprt is None else sprt.pairs
        set_aside = 0 if sprt is None else sprt.set_aside
        elo: float | None = None
        low = high = None
        if sprt is not None and pairs:
            elo, (low, high) = sprt.elo, (finite_or_none(e) for e in sprt.elo_interval)
        kind = {"H1": "accepted", "H0": "rejected"}.get(decision, "undecided")
        if self._write(name, lambda vs: decide(vs, v.version, v.test, decision, llr, pairs, elo, now,
                                               elo_low=low, elo_high=high, set_aside=set_aside), kind):
            self._forget_old(name)
        return 0

    def _forget_old(self, name: str) -> None:
        """Forget the bot's tests before its latest :data:`TESTS_KEPT` (one a test decided: each is
        tried again after the next decision while a late match of it is still being written), and
        tell every node to delete its records of them."""
        mine = [t for t in self.broker.list_tournaments() if t.startswith(f"{PREFIX}{name}:")]
        for tid in mine[:-TESTS_KEPT]:  # in creation order
            if self.broker.forget_tournament(tid):
                self.broker.publish_notice(FORGOTTEN_NOTICE, tid)
                log.info("bot %s: its version test %s forgotten (its %d latest kept)", name, tid, TESTS_KEPT,
                         extra={"event": "version_test_forgotten", "bot": name, "tournament": tid})

    def _start(self, h: Here, pools: Mapping[str, tuple[int, float]], opted: Callable[[str], set[str]],
               now: int) -> bool:
        """Start the test of the bot's next candidate; whether it is under way (started here or by another
        node first)."""
        entry = h.entry
        cand, base = next_candidate(entry.versions), promoted(entry.versions)
        pool = self._pool(entry, pools, opted)
        if cand is None or base is None or pool is None:
            return False
        tid = test_id(entry.name, cand)
        deals, elo1 = pools[pool]
        options = self.options if elo1 == self.options.elo1 else replace(self.options, elo1=elo1)
        spec = test_spec(entry.name, cand.version, base.version, tid, pool, deals, options)
        made = self.broker.put_tournament(spec)  # another node may have made it first: that one stands
        if not made and not self._open_or_gone(tid):
            # an earlier start of this candidacy was called off (its version changed meanwhile, or its
            # day's tests were used on another node): its id is spent, and the next try takes a new one
            # rather than a test that ended before it began
            self._write(entry.name, lambda vs: anew(vs, cand, now), "")
            return False
        found: list[Version | None] = []
        a_day = self.limits.a_day

        def change(stored: BotEntry) -> BotEntry:
            found[:] = [find(stored.versions, cand.version)]
            if any(x.state == "testing" for x in stored.versions):
                raise VersionError("one test a bot at a time")
            recent = recent_starts(stored.tests_started, now)
            if len(recent) >= a_day:
                raise VersionError(f"its {a_day} tests a day are used")
            versions = start_test(stored.versions, cand.version, tid, base.version, now)
            return replace(stored, versions=versions, tests_started=(*recent, now))

        if self._write_entry(entry.name, change, "started"):
            log.info("bot %s: version %s tested against %s (%s, %s)", entry.name, cand.version,
                     base.version, pool, tid, extra={"event": "version_test", "bot": entry.name,
                                                     "tournament": tid})
        elif not (found and found[0] is not None and found[0].test == tid):
            if made:
                # the version changed meanwhile (promoted by hand, the bot revoked, its day's tests used
                # on another node): the tournament this call stored tests nothing; cancelled before any
                # node's advance sweep plays it
                with contextlib.suppress(TournamentError):
                    self.tournaments.cancel(tid)
            return False
        current = self.broker.get_tournament(tid)
        if current is not None and current[1].is_open:
            self.tournaments.advance(tid)  # its first batch (idempotent: enqueued once)
        return True

    def _open_or_gone(self, tid: str) -> bool:
        current = self.broker.get_tournament(tid)
        return current is None or current[1].is_open

    def _write(self, name: str, change: Callable[[tuple[Version, ...]], tuple[Version, ...]],
               kind: str) -> bool:
        return self._write_entry(name, lambda e: replace(e, versions=change(e.versions)), kind)

    def _write_entry(self, name: str, change: Callable[[BotEntry], BotEntry], kind: str) -> bool:
        written = self.update(name, change)
        if written is None:
            return False  # another node wrote it first (or the bot is gone)
        if kind and self.counted is not None:
            self.counted(kind)
        if kind in ("accepted", "rejected", "undecided"):
            v = next((x for x in written.versions if x.state in ("promoted", "rejected", "undecided")
                      and x.changed == max(y.changed for y in written.versions)), None)
            log.info("bot %s: version %s %s", name, "?" if v is None else v.version, kind,
                     extra={"event": "version_decided", "bot": name, "outcome": kind})
        return True


@dataclass(frozen=True)
class TestView:
    """A version's SPRT as its page draws it (fishtest's chart: the LLR after each pair, the bounds)."""

    tournament_id: str
    candidate: str
    against: str
    #: its tournament's state: created, running, finished, cancelled ("" when the store lost it)
    state: str
    llr: float
    lower: float
    upper: float
    elo0: float
    elo1: float
    max_pairs: int
    pairs: int
    pentanomial: tuple[int, ...]
    #: H1, H0, or "" (undecided, or stopped)
    decision: str
    #: the LLR after each pair result, in pair order, up to the decision (pairs set aside left out)
    llr_series: tuple[float, ...]
    #: the pairs set aside (a leg with no card played: no evidence)
    set_aside: int = 0
    #: the Elo estimate of the candidate over ``against`` and its 95% interval (None: unbounded on
    #: that side); all None before any pair result
    elo: float | None = None
    elo_low: float | None = None
    elo_high: float | None = None

    def to_dict(self) -> dict[str, object]:
        return {**self.__dict__, "pentanomial": list(self.pentanomial), "llr_series": list(self.llr_series)}


@dataclass(frozen=True)
class VersionsView:
    """A bot's versions, newest first, and its latest test (the one under way, else the last ended)."""

    bot: str
    promoted: str
    versions: tuple[Version, ...]
    test: TestView | None
    #: each version's rating in each preset pool it played in (arena.node.rankings.Rankings.versions)
    ratings: tuple[VersionRating, ...] = ()
    #: why each candidate waits for its test (version -> a sentence: :func:`waiting_reasons`)
    waiting: Mapping[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, object]:
        waiting = self.waiting
        return {"bot": self.bot, "promoted": self.promoted,
                "versions": [{**v.to_dict(), "waiting": waiting.get(v.version, "")} for v in self.versions],
                "test": None if self.test is None else self.test.to_dict(), "note": DUPLICATE_NOTE,
                "ratings": [asdict(r) for r in self.ratings]}


#: what the versions page says of the test's duplicate play
DUPLICATE_NOTE = ("Each test plays mirror duplicate pairs between two versions of the same bot: both see "
                  "both legs' hands, which is acceptable here because both sides belong to one owner "
                  "(between different owners the arena never plays it).")


def versions_view(entry: BotEntry, tournaments: Tournaments,
                  rankings: Rankings | None = None,
                  waiting: Mapping[str, str] | None = None) -> VersionsView:
    """What the bot's versions page shows, each candidate with why it waits (``waiting``, the node's
    :meth:`VersionTests.reasons`); the latest test read from the store, and each version's rating from
    ``rankings`` (a few reads: blocking, from a thread)."""
    ordered = tuple(sorted(entry.versions, key=lambda v: (v.first_seen, v.version), reverse=True))
    with_test = [v for v in entry.versions if v.test]
    latest = next((v for v in with_test if v.state == "testing"), None) or (
        max(with_test, key=lambda v: v.changed) if with_test else None)
    return VersionsView(entry.name, entry.promoted_version, ordered,
                        None if latest is None else test_view(latest, tournaments),
                        () if rankings is None else tuple(rankings.versions(entry.name)), dict(waiting or {}))


def test_view(v: Version, tournaments: Tournaments) -> TestView:
    try:
        progress = tournaments.progress(v.test)
    except TournamentError:  # the store lost it: what the entry kept
        lower, upper = bounds(ALPHA, ALPHA)
        return TestView(v.test, v.version, v.against, "", v.llr, lower, upper, ELO0, ELO1, MAX_PAIRS,
                        v.pairs, (), v.decision, (), v.set_aside, v.elo, v.elo_low, v.elo_high)
    options = progress.spec.sprt_options
    series = []
    test = SequentialTest(options)
    for game in progress.games:
        decided = test.add(None if game.no_play else game.legs_score_a)
        if not game.no_play:
            series.append(round(test.llr, 4))
        if decided is not None:
            break
    sprt = progress.sprt or test.state()
    elo: float | None = None
    low = high = None
    if sprt.pairs:
        elo, (low, high) = sprt.elo, (finite_or_none(e) for e in sprt.elo_interval)
    return TestView(v.test, v.version, v.against, str(progress.state), sprt.llr, sprt.lower, sprt.upper,
                    sprt.elo0, sprt.elo1, options.max_pairs, sprt.pairs, tuple(sprt.pentanomial),
                    sprt.decision or "", tuple(series), sprt.set_aside, elo, low, high)
