"""Bradley-Terry maximum likelihood over pair counts, on the Elo scale, with 95% intervals and LOS.

The model: bot ``a`` scores against bot ``b`` with probability
``1 / (1 + 10 ** ((r_b - r_a) / 400))``, a draw counting half a win for each side, so
that the pair's games enter the likelihood only through ``s_ab = wins + draws / 2`` of
``n_ab`` games::

    log L = sum over pairs of  s_ab * log p_ab + (n_ab - s_ab) * log (1 - p_ab)

The prior (as BayesElo's virtual draws): every bot also played :data:`PRIOR_DRAWS`
virtual games, all drawn, against a reference bot fixed at 1500. Without it a bot that
won (or lost) every game has an infinite rating, and two pools that never met have no
common scale; with it every fit is finite and unique, and a bot with a handful of games
stays near the middle. Two virtual draws weigh about 1% of 200 real games, so they move
a well-measured bot by about 1% of its distance to the mean.

The fit: Newton's method on the log posterior (concave, strictly so with the prior),
vectorised over the pairs with numpy, with a halving line search; from all ratings equal
it converges in a handful of steps. The ratings are then shifted so that their mean is
:data:`ANCHOR` (1500): only differences are measured.

Links (:func:`fit_arrays`' ``links``): the versions of a bot
(:mod:`arena.ratings.versions`) are players of their own, each tied to the one
before it by a normal prior on their difference instead of the virtual
draws; the log posterior gains ``-(r_k - r_l)² / (2 sd²)`` per link, its
Hessian the link's precision as one more pair would.

The intervals: the covariance of the fitted ratings is the inverse of the Hessian of
the negative log posterior (the observed Fisher information, prior included), and the
anchored ratings ``r - mean(r) + 1500`` have the covariance ``P C P`` with
``P = I - 11'/n`` (the sum-to-constant constraint). A rating's 95% interval is
``r ± 1.96 sd``; the likelihood of superiority of ``a`` over ``b`` (as Ordo and BayesElo
report it between neighbours) is ``Φ((r_a - r_b) / sqrt(var_a + var_b - 2 cov_ab))``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from operator import attrgetter, itemgetter

import numpy as np
from numpy.typing import NDArray

from arena.ratings.counts import PairCounts

#: the mean of the fitted ratings
ANCHOR = 1500.0
#: virtual games per bot, all drawn, against a reference bot at the anchor (BayesElo's prior)
PRIOR_DRAWS = 2.0
#: Elo points per natural-log unit of odds: p = 1 / (1 + exp(-(r_a - r_b) / ELO_PER_NAT))
ELO_PER_NAT = 400.0 / math.log(10.0)
#: the normal quantile of a two-sided 95% interval
Z95 = 1.959963984540054

_MAX_STEPS = 100
#: Newton stops when no rating moves by more than this (in Elo points)
_TOLERANCE_ELO = 1e-6

Floats = NDArray[np.float64]
Ints = NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class PairArrays:
    """The pair counts as arrays: pair ``k`` is ``bots[first[k]]`` against ``bots[second[k]]``, from the
    first one's side. ``bots`` is sorted by name."""

    bots: tuple[str, ...]
    first: Ints
    second: Ints
    wins: Ints
    draws: Ints
    losses: Ints

    @classmethod
    def from_counts(cls, counts: PairCounts) -> PairArrays:
        """The arrays of ``counts``; pairs without games, and a bot's games against itself, are left out.

        Each pair is kept once, with its first bot first by name (a key given as ``(b, a)`` too is
        turned round and added to ``(a, b)``), so the pairs are unique and ``first < second``.
        """
        keys = list(counts)  # no (key, value) tuples: 500,000 new objects would wake the collector
        values = list(counts.values())
        return cls.from_rows(list(map(itemgetter(0), keys)), list(map(itemgetter(1), keys)),
                             list(map(attrgetter("wins"), values)), list(map(attrgetter("draws"), values)),
                             list(map(attrgetter("losses"), values)))

    @classmethod
    def from_rows(cls, firsts: Sequence[str], seconds: Sequence[str], wins: Sequence[int],
                  draws: Sequence[int], losses: Sequence[int], *, signed: bool = False) -> PairArrays:
        """The arrays of rows ``(firsts[k], seconds[k], wins[k], draws[k], losses[k])``, from the first's
        side, as :meth:`from_counts` makes them. ``signed``: some rows take games away (negative
        counts) from others of the same pair, and the pairs are summed before those left with no game
        are dropped (a count below zero is taken as zero)."""
        names = sorted(set(firsts) | set(seconds))
        index = {bot: i for i, bot in enumerate(names)}
        m = len(firsts)

        def ints(column: Iterable[int]) -> Ints:
            return np.fromiter(column, dtype=np.int64, count=m)

        first = ints(map(index.__getitem__, firsts))
        second = ints(map(index.__getitem__, seconds))
        won, drawn, lost = ints(wins), ints(draws), ints(losses)
        turned = first > second
        if turned.any():
            first, second = np.where(turned, second, first), np.where(turned, first, second)
            won, lost = np.where(turned, lost, won), np.where(turned, won, lost)
        keep = (first != second) if signed else (won + drawn + lost > 0) & (first != second)
        if not keep.all():
            first, second, won, drawn, lost = (x[keep] for x in (first, second, won, drawn, lost))
        n = len(names)
        flat = first * n + second
        if len(flat) and (signed or np.bincount(flat, minlength=n * n).max() > 1):
            pair, flat = np.unique(flat, return_inverse=True)
            won, drawn, lost = (np.bincount(flat, weights=x, minlength=len(pair)).astype(np.int64)
                                for x in (won, drawn, lost))
            first, second = np.divmod(pair, n)
        if signed:
            won, drawn, lost = (np.maximum(x, 0) for x in (won, drawn, lost))
            played_pair = won + drawn + lost > 0
            first, second, won, drawn, lost = (x[played_pair] for x in (first, second, won, drawn, lost))
        played = np.zeros(n, dtype=bool)
        played[first] = True
        played[second] = True
        if not played.all():
            renumber = np.cumsum(played) - 1
            first, second = renumber[first], renumber[second]
            names = [bot for bot, p in zip(names, played, strict=True) if p]
        return cls(tuple(names), first, second, won, drawn, lost)

    def per_bot(self) -> tuple[Ints, Ints, Ints]:
        """Each bot's wins, draws and losses over all its pairs, in the order of ``bots``."""
        n = len(self.bots)

        def total(on_first: Ints, on_second: Ints) -> Ints:
            return _by_bot(n, self.first, self.second, on_first, on_second).astype(np.int64)

        return total(self.wins, self.losses), total(self.draws, self.draws), total(self.losses, self.wins)


@dataclass(frozen=True, slots=True)
class Fit:
    """Bradley-Terry ratings of ``bots`` (Elo scale, mean :data:`ANCHOR`) and their covariance."""

    bots: tuple[str, ...]
    ratings: Floats
    #: the covariance of the anchored ratings (Elo points squared); its rows sum to zero
    covariance: Floats

    def index(self, bot: str) -> int:
        return self.bots.index(bot)

    def rating(self, bot: str) -> float:
        return float(self.ratings[self.index(bot)])

    def sd(self, bot: str) -> float:
        i = self.index(bot)
        return math.sqrt(max(0.0, float(self.covariance[i, i])))

    def interval(self, bot: str) -> tuple[float, float]:
        """The 95% interval of the rating: ``rating ± 1.96 sd``."""
        r, half = self.rating(bot), Z95 * self.sd(bot)
        return r - half, r + half

    def intervals(self) -> tuple[Floats, Floats]:
        """Every bot's 95% interval, low and high, in the order of ``bots``."""
        half = Z95 * np.sqrt(np.maximum(0.0, np.diag(self.covariance)))
        return self.ratings - half, self.ratings + half

    def los(self, a: str, b: str) -> float:
        """The likelihood of superiority: the probability that ``a`` is stronger than ``b``."""
        return los_of(self.ratings, self.covariance, self.index(a), self.index(b))


def los_of(ratings: Floats, covariance: Floats, i: int, j: int) -> float:
    """``Φ((r_i - r_j) / sd(r_i - r_j))``, from the ratings and their covariance."""
    diff = float(ratings[i] - ratings[j])
    var = float(covariance[i, i] + covariance[j, j] - covariance[i, j] - covariance[j, i])
    if var <= 0.0:
        return 0.5 if diff == 0.0 else (1.0 if diff > 0.0 else 0.0)
    return 0.5 * (1.0 + math.erf(diff / math.sqrt(2.0 * var)))


def fit(counts: PairCounts, links: Sequence[tuple[str, str]] = (), link_sd: float = 0.0) -> Fit:
    """The Bradley-Terry fit of the bots that played in ``counts`` (with ``links``: :func:`fit_arrays`,
    by name; a link naming a bot that did not play is left out)."""
    pairs = PairArrays.from_counts(counts)
    index = {bot: k for k, bot in enumerate(pairs.bots)}
    linked = [(index[a], index[b]) for a, b in links if a in index and b in index]
    return fit_arrays(pairs, linked, link_sd)


def fit_arrays(pairs: PairArrays, links: Sequence[tuple[int, int]] = (), link_sd: float = 0.0) -> Fit:
    """The Bradley-Terry fit of ``pairs``: see the module's docstring.

    ``links`` (with ``link_sd`` > 0) tie players together: for each ``(k, l)``, the prior says that
    ``r_k - r_l`` is normal with mean 0 and standard deviation ``link_sd`` Elo, and the player ``k``
    has no virtual draws of its own (its link places it). :mod:`arena.ratings.versions` links each
    version of a bot to the one before it: a version starts from the rating of that one, its
    interval widened by ``link_sd``. Each ``k`` should be linked once, to a player that comes earlier
    in a chain (no cycles), so that every chain's first player keeps the virtual draws."""
    n = len(pairs.bots)
    if n == 0:
        return Fit((), np.zeros(0), np.zeros((0, 0)))
    i, j = pairs.first, pairs.second
    games = (pairs.wins + pairs.draws + pairs.losses).astype(np.float64)
    score = pairs.wins + 0.5 * pairs.draws  # the first bot's points in the pair
    prior = np.full(n, PRIOR_DRAWS)
    later = np.fromiter((k for k, _ in links), dtype=np.int64, count=len(links))
    earlier = np.fromiter((e for _, e in links), dtype=np.int64, count=len(links))
    # the links' precision, in natural-log units of odds
    tie = (ELO_PER_NAT / link_sd) ** 2 if link_sd > 0 and len(links) else 0.0
    if tie:
        prior[later] = 0.0

    def log_posterior(theta: Floats) -> float:
        # s log p + (g - s) log (1 - p) = -g softplus(-d) - (g - s) d, with d the rating difference
        d = theta[i] - theta[j]
        data = -(games * np.logaddexp(0.0, -d)).sum() - ((games - score) * d).sum()
        # each virtual game is half a win and half a loss against theta = 0
        virtual = (prior * np.logaddexp(0.0, -theta)).sum() + (prior * 0.5 * theta).sum()
        tied = 0.5 * tie * float(((theta[later] - theta[earlier]) ** 2).sum()) if tie else 0.0
        return float(data - virtual - tied)

    # start from each bot's own score, as if it had met the average opponent
    per_bot_games = _by_bot(n, i, j, games, games)
    per_bot_score = _by_bot(n, i, j, score, games - score)
    share = (per_bot_score + 0.5 * PRIOR_DRAWS) / (per_bot_games + PRIOR_DRAWS)
    theta = np.log(share / (1.0 - share))
    theta -= theta.mean()
    current = log_posterior(theta)
    for _ in range(_MAX_STEPS):
        p = 1.0 / (1.0 + np.exp(theta[j] - theta[i]))
        residual = score - games * p  # d log L / d theta_first, per pair
        gradient = _by_bot(n, i, j, residual, -residual)
        p0 = 1.0 / (1.0 + np.exp(-theta))
        gradient += prior * (0.5 - p0)
        hessian = _information(n, i, j, games * p * (1.0 - p), prior * p0 * (1.0 - p0))
        if tie:
            pull = tie * (theta[later] - theta[earlier])
            gradient -= np.bincount(later, weights=pull, minlength=n)
            gradient += np.bincount(earlier, weights=pull, minlength=n)
            np.add.at(hessian, (later, later), tie)
            np.add.at(hessian, (earlier, earlier), tie)
            np.add.at(hessian, (later, earlier), -tie)
            np.add.at(hessian, (earlier, later), -tie)
        step = np.linalg.solve(hessian, gradient)
        if float(np.max(np.abs(step))) * ELO_PER_NAT < _TOLERANCE_ELO:
            theta = theta + step  # too small to move the Hessian: the covariance below is this one
            break
        # halve the step until the posterior does not fall (Newton's full step almost always does)
        length = 1.0
        while True:
            candidate = theta + length * step
            value = log_posterior(candidate)
            if value >= current - 1e-12 * abs(current) or length < 1e-6:
                break
            length /= 2.0
        theta, current = candidate, value
    ratings = theta * ELO_PER_NAT
    ratings += ANCHOR - ratings.mean()
    cov = np.linalg.inv(hessian) * ELO_PER_NAT**2
    # the anchored ratings are P r with P = I - 11'/n: their covariance is P C P
    cov -= cov.mean(axis=0, keepdims=True)
    cov -= cov.mean(axis=1, keepdims=True)
    cov = 0.5 * (cov + cov.T)
    return Fit(pairs.bots, ratings, cov)


def _information(n: int, i: Ints, j: Ints, weight: Floats, prior: Floats) -> Floats:
    """The Hessian of the negative log posterior: a weighted graph Laplacian, plus the prior's diagonal."""
    h = np.zeros((n, n))
    h[i, j] = -weight  # the pairs are unique, with i < j (PairArrays.from_counts)
    h[j, i] = -weight
    diagonal = np.bincount(i, weights=weight, minlength=n) + np.bincount(j, weights=weight, minlength=n)
    h[np.arange(n), np.arange(n)] = diagonal + prior
    return h


def _by_bot(n: int, i: Ints, j: Ints, on_first: NDArray[np.float64 | np.int64],
            on_second: NDArray[np.float64 | np.int64]) -> Floats:
    """Per bot, the sum of ``on_first`` over the pairs where it is first and ``on_second`` where second."""
    total = np.bincount(i, weights=on_first, minlength=n) + np.bincount(j, weights=on_second, minlength=n)
    return total.astype(np.float64)
