"""The rankings a node serves: one place for the gRPC API, the HTTP API, the pages and the CLI.

The store keeps, per pool, the online Elo and the pair counts, updated with
each result (:mod:`arena.queue`); a leaderboard is computed from those counts
(:func:`arena.ratings.leaderboard.leaderboard`), never by re-reading results.
A fit over a pool of 1,000 bots takes a fraction of a second, so the whole
board of a pool is computed once and kept for ``ttl`` seconds: readers asking
at once (50 browsers on a page, a CLI) share it, and a page of it is a slice.

A bot with versions is ranked by the version it plays as (``promoted``: the
node's copy of the registry), each version rated on its own games
(:mod:`arena.ratings.versions`); :meth:`Rankings.versions` gives each version's
rating in each preset pool, from the same fit as the board.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from arena.queue import Broker, BrokerError
from arena.queue.broker import BT_HISTORY_EVERY
from arena.ratings.counts import PairCounts
from arena.ratings.leaderboard import (
    METHODS,
    Entry,
    Leaderboard,
    Method,
    PoolFit,
    leaderboard,
    mixed_leaderboard,
)
from arena.ratings.pools import TOURNAMENT_PREFIX, tournament_pool
from arena.ratings.versions import player_of, version_of
from arena.tournament.spec import TEST_PREFIX

log = logging.getLogger(__name__)

#: the most bots one page of a leaderboard holds, and how many when the caller does not say
MAX_LIMIT = 200
DEFAULT_LIMIT = 50
#: the furthest row a page may start at, for every paged read (gRPC, HTTP, the CLI): far beyond
#: any table here, and small enough for every integer type the callers parse it into
MAX_OFFSET = 10**9
#: the boards kept at most (a pool and a method each; the table is emptied when it is full)
BOARDS_KEPT = 256


class RankingsError(Exception):
    """A request the rankings cannot answer: :class:`UnknownPool` or :class:`BadRequest`."""


#: the version tests' own pools start with this (``tournament:vt:``): never listed among the pools
TESTS_POOL = tournament_pool(TEST_PREFIX)


class UnknownPool(RankingsError):
    pass


class BadRequest(RankingsError):
    pass


@dataclass(frozen=True, slots=True)
class BotRating:
    """A bot in one pool by one method: ``bt``, its Bradley-Terry rating with its interval and rank,
    and its online Elo; ``openskill``, its rating from mixed partnerships (no Elo: 0)."""

    pool: str
    rating: float
    low: float
    high: float
    rank: int
    elo: float
    games: int
    method: Method = "bt"


@dataclass(frozen=True, slots=True)
class VersionRating:
    """One version of a bot in one pool: its rating with its 95% interval, from its own games there
    (``games``), and, for a version that has not played there yet, from the one before it
    (``inherited``: that one's rating, its interval widened: docs/ratings.md#a-rating-per-version)."""

    pool: str
    version: str
    rating: float
    low: float
    high: float
    games: int
    inherited: bool = False


class Rankings:
    """Leaderboards of the pools of ``broker``, each computed at most once every ``ttl`` seconds.

    ``promoted(bot)`` says the version a bot plays as ("" for a bot that says none, None for a name
    the registry does not know): a row rates that version. Without it, a row rates the version of
    the bot that played last in the pool."""

    def __init__(self, broker: Broker, ttl: float = 2.0, clock: Callable[[], float] = time.monotonic,
                 promoted: Callable[[str], str | None] | None = None) -> None:
        self.broker = broker
        self.ttl = ttl
        self._clock = clock
        self.promoted = promoted
        self._boards: dict[tuple[str, Method], tuple[float, Leaderboard, PoolFit | None]] = {}
        self._default: tuple[float, str] | None = None
        self._lock = threading.Lock()  # one fit at a time: readers asking at once wait for it

    def pools(self) -> list[str]:
        """Every pool, the presets first, then the tournaments; not the version tests' own (each test
        has one, read by its name: a test is not rated, and one bot makes a test after another)."""
        return sorted((p for p in self.broker.pools() if not p.startswith(TESTS_POOL)),
                      key=lambda p: (p.startswith(TOURNAMENT_PREFIX), p))

    def default_pool(self) -> str:
        """The preset pool with the most games (a tournament's pool when there is no preset pool),
        worked out at most once every ``ttl`` seconds."""
        now = self._clock()
        if self._default is not None and now - self._default[0] < self.ttl:
            return self._default[1]
        pools = self.pools()
        presets = [p for p in pools if not p.startswith(TOURNAMENT_PREFIX)] or pools
        best = max(presets, key=lambda p: (sum(g for _, g in self.broker.pool_ratings(p).values()), p),
                   default="")
        self._default = (now, best)
        return best

    def leaderboard(self, pool: str = "", method: str = "bt", offset: int = 0,
                    limit: int = DEFAULT_LIMIT, search: str = "") -> Leaderboard:
        """One page of a pool's ranking (with ``search``: of its bots whose name holds it, any case,
        each at its rank in the pool); :class:`UnknownPool` or :class:`BadRequest` for bad input."""
        if method not in METHODS:
            raise BadRequest(f"method must be one of {', '.join(METHODS)}, not {method!r}")
        if not 0 <= offset <= MAX_OFFSET:
            raise BadRequest(f"offset must be a whole number from 0 to {MAX_OFFSET}, not {offset}")
        limit = limit or DEFAULT_LIMIT
        if not 1 <= limit <= MAX_LIMIT:
            raise BadRequest(f"limit must be from 1 to {MAX_LIMIT}, not {limit}")
        pool = pool or self.default_pool()
        if not pool:
            return Leaderboard(pool="", method=method, total=0, offset=offset, entries=())
        board = self._board(pool, method)
        if search:
            board = board.matching(search)
        return Leaderboard(pool=board.pool, method=board.method, total=board.total, offset=offset,
                           entries=board.entries[offset:offset + limit])

    def pair_counts(self, pool: str) -> PairCounts:
        """The pair counts the pool's Bradley-Terry board was fitted from, kept as long as it (empty for
        a pool with no game yet): what a ladder's page lists each bot's opponents from, so that they
        agree with its standings."""
        try:
            fitted = self._kept(pool, "bt")[1]
        except UnknownPool:
            return {}
        return {} if fitted is None else fitted.counts

    def _board(self, pool: str, method: Method) -> Leaderboard:
        return self._kept(pool, method)[0]

    def _kept(self, pool: str, method: Method) -> tuple[Leaderboard, PoolFit | None]:
        """The pool's whole board by ``method``, and the fit its ``bt`` rows come from."""
        key = (pool, method)
        with self._lock:
            kept = self._boards.get(key)
            now = self._clock()
            if kept is not None and now - kept[0] < self.ttl:
                return kept[1], kept[2]
            if method == "openskill":
                # games a node wrote and died before rating are rated here, by whoever reads first
                self.broker.apply_mixed(pool)
            if pool not in self.broker.pools():
                raise UnknownPool(f"no rating pool {pool[:80]!r}: {self._known()}")
            fitted: PoolFit | None = None
            if method == "openskill":
                board = mixed_leaderboard(self.broker.mixed_ratings(pool), pool=pool, offset=0, limit=10**9)
            else:
                # the versioned games first: a result written between the reads is then in the bot
                # counts (never in the versions' alone), and counts for the bot's name on this board
                versions = self.broker.version_counts(pool)
                counts, elo = self.broker.pair_counts(pool), self.broker.pool_ratings(pool)
                fitted = PoolFit(counts, versions)
                board = leaderboard(counts, elo, pool=pool, method=method, offset=0, limit=10**9,
                                    versions=versions, promoted=self._promoted(counts, elo), fitted=fitted)
                if method == "bt" and not pool.startswith(TESTS_POOL):
                    self._note_bt_history(board)
            if len(self._boards) >= BOARDS_KEPT:
                self._boards.clear()
            self._boards[key] = (now, board, fitted)
            return board, fitted

    def _promoted(self, counts: PairCounts, elo: Mapping[str, tuple[float, int]]) -> dict[str, str] | None:
        """The version each bot of the pool plays as, from the registry (a bot it does not know: left
        out, rated at the last version that played)."""
        if self.promoted is None:
            return None
        bots = {bot for pair in counts for bot in pair} | set(elo)
        out = {}
        for bot in bots:
            version = self.promoted(bot)
            if version is not None:
                out[bot] = version
        return out

    def _known(self) -> str:
        """The pools there are, in a line: the presets by name, the tournaments counted."""
        pools = self.pools()
        presets = [p for p in pools if not p.startswith(TOURNAMENT_PREFIX)]
        tournaments = len(pools) - len(presets)
        if not pools:
            return ("there is none yet (ratings come from tournaments; single matches, as `match start` "
                    "plays, are unrated)")
        return (f"the presets' are {', '.join(presets) or 'none yet'}, and there are {tournaments} "
                f"tournaments' ({TOURNAMENT_PREFIX}<id>)")

    def bot(self, name: str) -> list[BotRating]:
        """``name``'s rating in each pool it has played in: by Bradley-Terry where it played with
        one bot a side, by openskill where it played in mixed partnerships (both where both)."""
        out = []
        for pool in self.pools():
            elo = self.broker.pool_ratings(pool).get(name)
            entry = None if elo is None else _find(self._board(pool, "bt"), name)
            if elo is not None and entry is not None:
                out.append(BotRating(pool=pool, rating=entry.rating, low=entry.low or entry.rating,
                                     high=entry.high or entry.rating, rank=entry.rank, elo=elo[0],
                                     games=elo[1]))
            mixed = _find(self._board(pool, "openskill"), name)  # (kept for ``ttl``, as the bt board)
            if mixed is not None:
                out.append(BotRating(pool=pool, rating=mixed.rating, low=mixed.low or mixed.rating,
                                     high=mixed.high or mixed.rating, rank=mixed.rank, elo=0.0,
                                     games=mixed.games, method="openskill"))
        return out

    def versions(self, name: str) -> list[VersionRating]:
        """Each version of bot ``name`` rated in each preset pool it played in (a tournament's own pool
        is its standings): those that played there, bare name first (its games before it said a
        version), then its versions in the order they first played; and the version it plays as when
        it has not played there yet, rated from the one before it."""
        out = []
        for pool in self.pools():
            if pool.startswith(TOURNAMENT_PREFIX) or name not in self.broker.pool_ratings(pool):
                continue
            _, fitted = self._kept(pool, "bt")
            if fitted is None:
                continue
            shown = [fitted.shown(name, version_of(p) if p != name else "") for p in fitted.chain(name)]
            promoted = None if self.promoted is None else self.promoted(name)
            if promoted and player_of(name, promoted) not in fitted.index:
                shown.append(fitted.shown(name, promoted))
            for r in shown:
                low, high = r.interval()
                out.append(VersionRating(pool=pool, version=r.version, rating=r.rating,
                                         low=r.rating if low is None else low,
                                         high=r.rating if high is None else high, games=r.games,
                                         inherited=r.player != player_of(name, r.version)))
        return out

    def history(self, pool: str, bot: str) -> list[tuple[int, float]]:
        return self.broker.rating_history(pool, bot)

    def bt_history(self, pool: str, bot: str) -> list[tuple[int, int, float, float, float]]:
        """The bot's Bradley-Terry rating in the pool as it was fitted now and then
        (:meth:`_note_bt_history`): ``(the pool's games, the bot's games, rating, low, high)``, oldest
        first."""
        return self.broker.bt_history(pool, bot)

    def _note_bt_history(self, board: Leaderboard) -> None:
        """Keep a point of the Bradley-Terry history of each bot of a pool's board just fitted, if the
        pool played enough games since its last point: at least :data:`BT_HISTORY_EVERY`, and 1% of its
        games (so a bot's 200 points kept span its pool's games growing about 7 times). The store keeps
        one point a fit whichever node fits (a compare-and-set on the pool's games); a failure to keep it
        loses a point, never the board."""
        games = sum(e.games for e in board.entries) // 2
        if games <= 0:
            return
        points = {e.bot: (e.games, e.rating, e.rating if e.low is None else e.low,
                          e.rating if e.high is None else e.high) for e in board.entries}
        try:
            self.broker.note_bt_history(board.pool, games, points, max(BT_HISTORY_EVERY, games // 100))
        except BrokerError as e:
            log.warning("pool %s: its Bradley-Terry history point was not kept: %s", board.pool[:80], e)


def _find(board: Leaderboard, bot: str) -> Entry | None:
    return next((e for e in board.entries if e.bot == bot), None)
