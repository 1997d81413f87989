"""The leaderboard of a pool, as the API, the CLI and the pages show it.

A bot with versions is ranked by the rating of the version it plays as (its
promoted one), each version rated on its own games (:mod:`arena.ratings.versions`):
its row says which version it rates and how many of the bot's games in the
pool are that version's.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, Literal

from arena.ratings.bt import ANCHOR, Fit, PairArrays, fit_arrays
from arena.ratings.counts import PairCounts
from arena.ratings.elo import INITIAL_RATING
from arena.ratings.mixed import MixedRatings, MixedState
from arena.ratings.versions import STEP_SD, VersionCounts, chains, player_arrays, player_of, version_of

#: ``bt``: Bradley-Terry maximum likelihood with 95% intervals; ``elo``: the online Elo;
#: ``openskill``: each bot of the pool's mixed partnerships (:mod:`arena.ratings.mixed`)
Method = Literal["bt", "elo", "openskill"]
METHODS: tuple[Method, ...] = ("bt", "elo", "openskill")


#: a rating is *provisional* (marked so on the leaderboard) while its bot has played fewer than this many
#: games in the pool, or while its 95% interval reaches further than :data:`PROVISIONAL_HALF_WIDTH` on
#: either side of it: its rank may still move far on the next few games
PROVISIONAL_GAMES = 10
#: the rating's standard error past which it is provisional, in Elo points: lichess's rule (a Glicko
#: deviation above 110), so that a bot is provisional here when it would be there
PROVISIONAL_SD = 110.0
#: the half-width of a 95% interval at that standard error (about 216 Elo points)
PROVISIONAL_HALF_WIDTH = 1.959963984540054 * PROVISIONAL_SD


def is_provisional(games: int, low: float | None, high: float | None) -> bool:
    """Whether a rating with ``games`` games and that 95% interval (None: none, as the online Elo's) is
    provisional (:data:`PROVISIONAL_GAMES`, :data:`PROVISIONAL_HALF_WIDTH`)."""
    if games < PROVISIONAL_GAMES:
        return True
    return low is not None and high is not None and (high - low) / 2 > PROVISIONAL_HALF_WIDTH


@dataclass(frozen=True, slots=True)
class Entry:
    rank: int
    bot: str
    rating: float
    #: the 95% interval of the rating (None for the online Elo, which has none)
    low: float | None
    high: float | None
    #: the bot's games in the pool, whatever version played them, and their outcomes
    games: int
    wins: int
    draws: int
    losses: int
    #: points per game (1 a win, 1/2 a draw)
    score: float
    #: the likelihood that this bot is stronger than the next one down (None for the last, and for Elo)
    los_next: float | None
    #: the version the row rates: the bot's promoted one ("" for a bot that says none)
    version: str = ""
    #: how many of ``games`` that version played (all of them for a bot that says no version; 0 for a
    #: version promoted since its last game here, rated from the one before it: see the module)
    version_games: int = 0

    @property
    def provisional(self) -> bool:
        """Too few games, or too wide an interval, for its rank to be settled (:func:`is_provisional`;
        a row rating a version counts that version's games)."""
        return is_provisional(self.version_games if self.version else self.games, self.low, self.high)

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "provisional": self.provisional}


@dataclass(frozen=True, slots=True)
class Leaderboard:
    pool: str
    method: Method
    #: bots in the pool, of which ``entries`` are those from ``offset`` on
    total: int
    offset: int
    entries: tuple[Entry, ...]

    def to_json(self) -> dict[str, Any]:
        return {"pool": self.pool, "method": self.method, "total": self.total, "offset": self.offset,
                "entries": [e.to_json() for e in self.entries],
                "provisional_rule": {"games": PROVISIONAL_GAMES, "half_width": PROVISIONAL_HALF_WIDTH}}

    def matching(self, text: str) -> Leaderboard:
        """The entries whose bot's name holds ``text`` (any case), each at its rank in the whole
        board; ``total`` counts them. The board is whole (offset 0): page the result."""
        needle = text.casefold()
        found = tuple(e for e in self.entries if needle in e.bot.casefold())
        return Leaderboard(pool=self.pool, method=self.method, total=len(found), offset=0, entries=found)


#: ratings closer than this share a rank
_TIE = 1e-6


@dataclass(frozen=True, slots=True)
class Rated:
    """One player of a pool's fit, as a row or a version's rating shows it: its rating, its variance,
    and its place in the fit (None: not in it)."""

    player: str
    version: str
    rating: float
    variance: float | None
    index: int | None
    #: its own games in the pool
    games: int

    def interval(self) -> tuple[float | None, float | None]:
        if self.variance is None:
            return None, None
        half = 1.959963984540054 * math.sqrt(max(0.0, self.variance))
        return self.rating - half, self.rating + half


class PoolFit:
    """The Bradley-Terry fit of a pool's players (each version of a bot on its own games, linked to the
    one before it: :mod:`arena.ratings.versions`), and what it says of each bot and version."""

    def __init__(self, counts: PairCounts, versions: VersionCounts | None = None,
                 step_sd: float = STEP_SD) -> None:
        #: the links' standard deviation (0: no link, each version from scratch: what the bench compares)
        self.step_sd = step_sd
        #: the bot pair counts it was fitted from (what a ladder's page lists each bot's opponents from)
        self.counts = counts
        self.versions = versions or VersionCounts()
        self.pairs = player_arrays(counts, self.versions)
        #: the bot pair counts' arrays (the players' own when no version played here)
        self.bot_pairs = PairArrays.from_counts(counts) if self.versions else self.pairs
        self.index = {p: k for k, p in enumerate(self.pairs.bots)}
        self.links = chains(self.versions, self.index)
        self._fit: Fit | None = None
        w, d, l_ = self.pairs.per_bot()
        self.player_games = dict(zip(self.pairs.bots, (w + d + l_).tolist(), strict=True))

    @property
    def fit(self) -> Fit:
        if self._fit is None:
            linked = [(self.index[a], self.index[b]) for a, b in self.links]
            self._fit = fit_arrays(self.pairs, linked, self.step_sd)
        return self._fit

    def chain(self, bot: str) -> list[str]:
        """The bot's players with games here: its bare name first, then its versions in order."""
        order = self.versions.order.get(bot, ())
        return [p for p in (bot, *(player_of(bot, v) for v in order)) if p in self.index]

    def shown(self, bot: str, promoted: str | None, *, fitted: bool = True) -> Rated:
        """What rates ``bot``: its ``promoted`` version (None: not known, then the last of it that played
        here) on its own games, or, when that version has not played here yet, the one that played last
        with its variance plus ``STEP_SD ** 2`` (the fit's own answer for a player with no game)."""
        chain = self.chain(bot)
        if promoted == "" and bot not in self.index and chain:
            promoted = None  # "no version" said of a bot whose versions played here: a copy behind the store
        if promoted is None:
            player = chain[-1] if chain else bot
            promoted = version_of(player) if player != bot else ""
        target = player_of(bot, promoted)
        if target in self.index:
            return self._rated(target, promoted, 0.0, fitted)
        if chain and self.step_sd > 0:
            return self._rated(chain[-1], promoted, self.step_sd**2 if promoted else 0.0, fitted, games=0)
        return Rated(target, promoted, ANCHOR, None, None, 0)

    def _rated(self, player: str, version: str, extra: float, fitted: bool,
               games: int | None = None) -> Rated:
        k = self.index[player]
        played = self.player_games[player] if games is None else games
        if not fitted:
            return Rated(player, version, ANCHOR, None, k, played)
        fit = self.fit
        variance = float(fit.covariance[k, k]) + extra
        return Rated(player, version, float(fit.ratings[k]), variance, k, played)

    def los(self, a: Rated, b: Rated) -> float | None:
        """The likelihood that ``a`` is stronger than ``b`` (None unless both are in the fit)."""
        if a.index is None or b.index is None or a.variance is None or b.variance is None:
            return None
        c = self.fit.covariance
        i, j = a.index, b.index
        own = (a.variance - float(c[i, i])) + (b.variance - float(c[j, j]))  # a start's widening
        var = float(c[i, i] + c[j, j] - c[i, j] - c[j, i]) + own
        diff = a.rating - b.rating
        if var <= 0.0:
            return 0.5 if diff == 0.0 else (1.0 if diff > 0.0 else 0.0)
        return 0.5 * (1.0 + math.erf(diff / math.sqrt(2.0 * var)))


def leaderboard(counts: PairCounts, elo: Mapping[str, tuple[float, int]], *, pool: str, method: Method = "bt",
                offset: int = 0, limit: int = 50, versions: VersionCounts | None = None,
                promoted: Mapping[str, str] | None = None, fitted: PoolFit | None = None) -> Leaderboard:
    """The leaderboard of ``pool`` from its pair counts and its online Elo (bot -> (rating, games)).

    The pool's bots are those of the counts and of ``elo``. ``bt`` ranks them by the Bradley-Terry
    fit of the counts (:mod:`arena.ratings.bt`), with the 95% interval and the likelihood of
    superiority over the next bot down; ``elo`` ranks them by the online Elo, with neither. A bot
    with no counted game (it only met itself, or nothing yet) has the anchor rating (1500) and, under
    ``bt``, no interval and no LOS next to it. Ties share the better rank (1, 2, 2, 4); equal
    ratings go by name. ``entries`` are the ranks ``offset + 1`` to ``offset + limit``.

    With ``versions`` (the pool's versioned games), a bot's ``bt`` row rates one version: its
    ``promoted`` one (bot -> version, "" for a bot that says none; a bot left out: the last version
    that played here), from that version's games (:class:`PoolFit`). The online Elo is the bot's,
    carried over from version to version as its games come. ``fitted``: the :class:`PoolFit` of these
    counts and versions, made already (its fit is shared).
    """
    if offset < 0 or limit < 0:
        raise ValueError(f"offset and limit must be >= 0, not {offset} and {limit}")
    if method == "openskill":
        raise ValueError("the openskill board comes from the pool's mixed ratings: mixed_leaderboard()")
    if method not in ("bt", "elo"):
        raise ValueError(f"unknown rating method {method!r} (one of {', '.join(METHODS)})")
    pool_fit = fitted or PoolFit(counts, versions)
    bot_pairs = pool_fit.bot_pairs
    wins, draws, losses = (dict(zip(bot_pairs.bots, x.tolist(), strict=True)) for x in bot_pairs.per_bot())
    bots = sorted(set(bot_pairs.bots) | set(elo))
    shown = {bot: pool_fit.shown(bot, None if promoted is None else promoted.get(bot, ""),
                                 fitted=method == "bt") for bot in bots}
    if method == "bt":
        rating = {bot: r.rating for bot, r in shown.items()}
    else:
        rating = {bot: float(elo[bot][0]) if bot in elo else INITIAL_RATING for bot in bots}
    order = sorted(bots, key=lambda bot: (-rating[bot], bot))
    ranks: list[int] = []
    for place, bot in enumerate(order):
        tied = place > 0 and abs(rating[order[place - 1]] - rating[bot]) < _TIE
        ranks.append(ranks[-1] if tied else place + 1)
    entries: list[Entry] = []
    for place in range(offset, min(len(order), offset + limit)):
        bot = order[place]
        row = shown[bot]
        low = high = los_next = None
        if method == "bt":
            low, high = row.interval()
            if place + 1 < len(order):
                los_next = pool_fit.los(row, shown[order[place + 1]])
        w, d, l_ = wins.get(bot, 0), draws.get(bot, 0), losses.get(bot, 0)
        games = w + d + l_
        entries.append(Entry(rank=ranks[place], bot=bot, rating=rating[bot], low=low, high=high, games=games,
                             wins=w, draws=d, losses=l_, score=(w + 0.5 * d) / games if games else 0.0,
                             los_next=los_next, version=row.version,
                             version_games=row.games if pool_fit.versions else games))
    return Leaderboard(pool=pool, method=method, total=len(order), offset=offset, entries=tuple(entries))


#: the interval shown around an openskill rating: mu +- this many sigma (95%, as Bradley-Terry's)
MIXED_Z = 1.96


def mixed_leaderboard(states: Mapping[str, MixedState], *, pool: str, offset: int = 0,
                      limit: int = 50) -> Leaderboard:
    """The ``openskill`` leaderboard of ``pool``: its bots' ratings from mixed partnerships.

    Each bot's ``rating`` is its openskill ``mu`` on the Elo scale (1500 for a new bot:
    :meth:`MixedRatings.elo`) with the 95% interval ``mu +- 1.96 sigma``, and the bots are
    ranked by openskill's conservative estimate, the ordinal ``mu - 3 sigma``: a bot with few
    games (a wide sigma) does not top the table on its luck, so the order may differ from the
    ratings' where the intervals differ much. ``los_next`` is the probability that the bot's
    ``mu`` is above the next one's, their sigmas taken as independent normal errors.
    """
    if offset < 0 or limit < 0:
        raise ValueError(f"offset and limit must be >= 0, not {offset} and {limit}")
    ratings = MixedRatings(states=states)
    scale = ratings.elo_per_mu
    ordinal = {bot: ratings.ordinal(bot) for bot in states}
    order = sorted(states, key=lambda bot: (-ordinal[bot], bot))
    ranks: list[int] = []
    for place, bot in enumerate(order):
        tied = place > 0 and abs(ordinal[order[place - 1]] - ordinal[bot]) < _TIE
        ranks.append(ranks[-1] if tied else place + 1)
    entries: list[Entry] = []
    for place in range(offset, min(len(order), offset + limit)):
        bot = order[place]
        st = states[bot]
        below = states[order[place + 1]] if place + 1 < len(order) else None
        los = None
        if below is not None:
            spread = math.hypot(st.sigma, below.sigma)
            los = 0.5 * math.erfc(-(st.mu - below.mu) / (spread * math.sqrt(2.0))) if spread > 0 else 0.5
        rating = ratings.elo(bot)
        entries.append(Entry(
            rank=ranks[place], bot=bot, rating=rating, low=rating - MIXED_Z * st.sigma * scale,
            high=rating + MIXED_Z * st.sigma * scale, games=st.games, wins=st.wins, draws=st.draws,
            losses=st.losses, score=(st.wins + 0.5 * st.draws) / st.games if st.games else 0.0, los_next=los,
        ))
    return Leaderboard(pool=pool, method="openskill", total=len(order), offset=offset, entries=tuple(entries))
