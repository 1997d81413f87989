"""The leaderboard of a pool, as the API, the CLI and the pages show it."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, Literal

from arena.ratings.bt import ANCHOR, PairArrays, fit_arrays, los_of
from arena.ratings.counts import PairCounts
from arena.ratings.elo import INITIAL_RATING
from arena.ratings.mixed import MixedRatings, MixedState

#: ``bt``: Bradley-Terry maximum likelihood with 95% intervals; ``elo``: the online Elo;
#: ``openskill``: each bot of the pool's mixed partnerships (:mod:`arena.ratings.mixed`)
Method = Literal["bt", "elo", "openskill"]
METHODS: tuple[Method, ...] = ("bt", "elo", "openskill")


@dataclass(frozen=True, slots=True)
class Entry:
    rank: int
    bot: str
    rating: float
    #: the 95% interval of the rating (None for the online Elo, which has none)
    low: float | None
    high: float | None
    games: int
    wins: int
    draws: int
    losses: int
    #: points per game (1 a win, 1/2 a draw)
    score: float
    #: the likelihood that this bot is stronger than the next one down (None for the last, and for Elo)
    los_next: float | None


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
                "entries": [asdict(e) for e in self.entries]}


#: ratings closer than this share a rank
_TIE = 1e-6


def leaderboard(counts: PairCounts, elo: Mapping[str, tuple[float, int]], *, pool: str, method: Method = "bt",
                offset: int = 0, limit: int = 50) -> Leaderboard:
    """The leaderboard of ``pool`` from its pair counts and its online Elo (bot -> (rating, games)).

    The pool's bots are those of the counts and of ``elo``. ``bt`` ranks them by the Bradley-Terry
    fit of the counts (:mod:`arena.ratings.bt`), with the 95% interval and the likelihood of
    superiority over the next bot down; ``elo`` ranks them by the online Elo, with neither. A bot
    with no counted game (it only met itself, or nothing yet) has the anchor rating (1500) and, under
    ``bt``, no interval and no LOS next to it. Ties share the better rank (1, 2, 2, 4); equal
    ratings go by name. ``entries`` are the ranks ``offset + 1`` to ``offset + limit``.
    """
    if offset < 0 or limit < 0:
        raise ValueError(f"offset and limit must be >= 0, not {offset} and {limit}")
    if method == "openskill":
        raise ValueError("the openskill board comes from the pool's mixed ratings: mixed_leaderboard()")
    pairs = PairArrays.from_counts(counts)
    wins, draws, losses = (dict(zip(pairs.bots, x.tolist(), strict=True)) for x in pairs.per_bot())
    bots = sorted(set(pairs.bots) | set(elo))
    fitted = {bot: i for i, bot in enumerate(pairs.bots)}
    if method == "bt":
        fit = fit_arrays(pairs)
        lows, highs = fit.intervals()
        rating = {bot: float(fit.ratings[i]) for bot, i in fitted.items()}
        rating.update((bot, ANCHOR) for bot in bots if bot not in fitted)
    elif method == "elo":
        rating = {bot: float(elo[bot][0]) if bot in elo else INITIAL_RATING for bot in bots}
    else:
        raise ValueError(f"unknown rating method {method!r} (one of {', '.join(METHODS)})")
    order = sorted(bots, key=lambda bot: (-rating[bot], bot))
    ranks: list[int] = []
    for place, bot in enumerate(order):
        tied = place > 0 and abs(rating[order[place - 1]] - rating[bot]) < _TIE
        ranks.append(ranks[-1] if tied else place + 1)
    entries: list[Entry] = []
    for place in range(offset, min(len(order), offset + limit)):
        bot = order[place]
        low = high = los_next = None
        if method == "bt" and bot in fitted:
            i = fitted[bot]
            low, high = float(lows[i]), float(highs[i])
            below = order[place + 1] if place + 1 < len(order) else None
            if below is not None and below in fitted:
                los_next = los_of(fit.ratings, fit.covariance, i, fitted[below])
        w, d, l_ = wins.get(bot, 0), draws.get(bot, 0), losses.get(bot, 0)
        games = w + d + l_
        entries.append(Entry(rank=ranks[place], bot=bot, rating=rating[bot], low=low, high=high, games=games,
                             wins=w, draws=d, losses=l_, score=(w + 0.5 * d) / games if games else 0.0,
                             los_next=los_next))
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
