"""The leaderboard from what the broker keeps today: the one place to rewire to the per-pool store.

Until the store keeps ratings and pair counts per pool (and the ratings
package fits Bradley-Terry), there is one pool, :data:`ALL_POOL`, counting
every tournament result:

- ``elo``: the broker's single online Elo (``broker.ratings()``);
- ``bt``: a small Bradley-Terry maximum-likelihood fit (minorization-
  maximization, a draw half a win each way) of the pair counts gathered from
  every tournament's results, with 95% intervals and the likelihood of
  superiority from the inverse of the observed information.

Gathering the pair counts re-reads every result, which the per-pool store
will make unnecessary: only :func:`pools` and :func:`leaderboard` change then.
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np

from arena.queue import Broker
from arena.ratings.counts import PairCount, add_game
from arena.ratings.elo import INITIAL_RATING
from arena.ratings.leaderboard import Entry, Leaderboard, Method

#: the pool of every result, until the store keeps ratings per pool
ALL_POOL = "all"

#: natural-log strength to Elo points
_ELO = 400.0 / math.log(10.0)


def pools(broker: Broker) -> list[str]:
    return [ALL_POOL]


def leaderboard(broker: Broker, pool: str, method: Method, offset: int, limit: int) -> Leaderboard | None:
    """The rows ``offset`` to ``offset + limit`` of the pool's leaderboard; None for an unknown pool."""
    if pool != ALL_POOL:
        return None
    counts: dict[tuple[str, str], PairCount] = {}
    tally: dict[str, Counter[str]] = {}
    for tid in broker.list_tournaments():
        for r in broker.results(tid):
            score = r.score0()
            for bot, s in ((r.team0, score), (r.team1, 1.0 - score)):
                t = tally.setdefault(bot, Counter())
                t["games"] += 1
                t["wins" if s > 0.5 else "losses" if s < 0.5 else "draws"] += 1
            add_game(counts, r.team0, r.team1, score)
    rows: list[tuple[str, float, float | None, float | None, float | None]]
    if method == "elo":
        ratings = broker.ratings()
        order = sorted(ratings, key=lambda b: (-ratings[b][0], b))
        rows = [(b, ratings[b][0], None, None, None) for b in order]
    else:
        rows = _bradley_terry(sorted(tally), counts)
    entries = []
    for rank, (bot, rating, low, high, los) in enumerate(rows, start=1):
        if not offset < rank <= offset + limit:
            continue
        t = tally.get(bot, Counter())
        games = t["games"]
        entries.append(Entry(
            rank=rank, bot=bot, rating=round(rating, 1), low=None if low is None else round(low, 1),
            high=None if high is None else round(high, 1), games=games, wins=t["wins"], draws=t["draws"],
            losses=t["losses"], score=round((t["wins"] + 0.5 * t["draws"]) / games, 4) if games else 0.0,
            los_next=None if los is None else round(los, 4)))
    return Leaderboard(pool=pool, method=method, total=len(rows), offset=offset, entries=tuple(entries))


def _bradley_terry(
    bots: list[str], counts: dict[tuple[str, str], PairCount],
) -> list[tuple[str, float, float | None, float | None, float | None]]:
    """(bot, rating, low, high, likelihood of superiority over the next), best first."""
    n = len(bots)
    if n == 0:
        return []
    index = {b: i for i, b in enumerate(bots)}
    games = np.zeros((n, n))
    wins = np.zeros((n, n))  # wins[i, j]: i's points against j
    for (a, b), c in counts.items():
        i, j = index[a], index[b]
        games[i, j] += c.games
        games[j, i] += c.games
        wins[i, j] += c.score()
        wins[j, i] += c.games - c.score()
    # a prior of one drawn game against a bot of the initial rating keeps every strength finite
    prior = 1.0
    total_wins = wins.sum(axis=1) + 0.5 * prior
    strength = np.ones(n)
    for _ in range(500):
        pair = games / (strength[:, None] + strength[None, :])
        new = total_wins / (pair.sum(axis=1) + prior / (strength + 1.0))
        new /= math.exp(float(np.mean(np.log(new))))
        done = float(np.max(np.abs(new - strength))) < 1e-10
        strength = new
        if done:
            break
    theta = np.log(strength)
    p = strength[:, None] / (strength[:, None] + strength[None, :])
    w = games * p * p.T
    info = -w
    np.fill_diagonal(info, w.sum(axis=1) + prior * 0.25)
    cov = np.linalg.inv(info)
    order = sorted(range(n), key=lambda i: (-theta[i], bots[i]))
    out: list[tuple[str, float, float | None, float | None, float | None]] = []
    for k, i in enumerate(order):
        se = math.sqrt(max(float(cov[i, i]), 0.0))
        rating = INITIAL_RATING + _ELO * float(theta[i])
        los: float | None = None
        if k + 1 < len(order):
            j = order[k + 1]
            var = float(cov[i, i] + cov[j, j] - 2 * cov[i, j])
            diff = float(theta[i] - theta[j])
            los = 0.5 * (1 + math.erf(diff / math.sqrt(2 * var))) if var > 0 else 0.5
        out.append((bots[i], rating, rating - 1.96 * _ELO * se, rating + 1.96 * _ELO * se, los))
    return out
