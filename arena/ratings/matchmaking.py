"""Matchmaking for a ladder: the next pairings, chosen to narrow the pool's rating intervals fastest.

Pure: no I/O, no clock, no global random state; the only randomness (a tie between equally good
pairs) comes from the ``random.Random`` passed in. The ladder keeps the :class:`Fairness` state
between calls and passes it back.

**The method: the game that most narrows the intervals.** The Bradley-Terry fit (:mod:`arena.ratings.bt`)
gives the ratings and their covariance ``C``, the inverse of the Fisher information. One more game
between ``a`` and ``b`` adds ``w = p (1 - p)`` (``p`` the expected score at the fitted ratings) times
``u u'`` to the information, with ``u = e_a - e_b``; by Sherman-Morrison the covariance becomes::

    C' = C - s v v'      with  v = C u,  s = w / (1 + w u' C u)

so bot ``k``'s variance falls by ``s v_k**2``, and its 95% interval (``2 * 1.96 * sd``) narrows by
about ``1.96 s v_k**2 / sd_k``. The pick is the pair that narrows the sum of all the pool's intervals
most: the leaderboard's "how sure are we", which is what the ladder is for. It weighs by itself
what the simple rules say: a pair of close ratings (``p (1 - p)`` is largest at 1/2), bots with wide
intervals (``v`` large), and bots whose games would tie the pool together (``v`` spreads over the bots
they are linked to); a bot with no game has the prior's interval (about ±480) and is picked at once.
This is the greedy A-optimal design, weighted by ``1 / sd`` so that it targets the intervals' widths
rather than their variances. Several picks in one call each update ``C`` (the same rank-one step),
so that a second pick knows the first one's game is coming and goes elsewhere.

**Fairness**, enforced on every pick (:class:`Rules`):

- *seats*: a pick takes :attr:`Rules.seats_per_match` of each bot's free seats (a team match seats a
  bot at both places of its side: 2); a bot with fewer free seats is not picked;
- *repeats*: of a bot's last :attr:`Rules.window` pairings, at most :attr:`Rules.max_repeats` are
  against one opponent (both bots' windows are checked); this is never broken;
- *waits*: a bot's wait is the number of picks in a row made while it was available (free seats
  enough for a match) without it. When, the available bots sorted by wait (longest first), the
  ``k``-th would reach :attr:`Rules.max_wait` were one of them served a pick from now on
  (``wait + k + 1 >= max_wait``), the pick serves the longest-waiting bot that has a partner the
  repeat rule allows, with its most informative such partner. So no available bot waits more than
  ``max_wait`` picks as long as the available bots are at most ``max_wait`` and each has an allowed
  partner; ``max_wait`` above the number of bots leaves room for the informative picks.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from arena.ratings.bt import ANCHOR, ELO_PER_NAT, PRIOR_DRAWS, Z95, fit
from arena.ratings.counts import PairCounts

Floats = NDArray[np.float64]

#: the variance of a bot with no game (Elo points squared): the prior's virtual draws alone
NEW_BOT_VARIANCE = ELO_PER_NAT**2 / (PRIOR_DRAWS * 0.25)
#: gains within this share of the best are a tie, broken by the random generator
_TIE = 1e-9


@dataclass(frozen=True, slots=True)
class Rules:
    """The fairness bounds of a ladder."""

    #: a bot available this many picks in a row gets a game (see the module's docstring)
    max_wait: int = 40
    #: the repeat rule's window: a bot's last pairings
    window: int = 10
    #: at most this many of them against one opponent
    max_repeats: int = 3
    #: free seats a match takes from each of its two bots
    seats_per_match: int = 2

    def __post_init__(self) -> None:
        if self.max_wait < 1 or self.window < 1 or self.max_repeats < 1 or self.seats_per_match < 1:
            raise ValueError(f"every bound of {self} must be at least 1")


@dataclass(frozen=True, slots=True)
class Fairness:
    """What the fairness rules remember between calls: the ladder keeps it and passes it back."""

    #: picks in a row made while the bot was available without it (a bot not named: 0)
    waited: Mapping[str, int] = field(default_factory=dict)
    #: each bot's last opponents, oldest first, at most :attr:`Rules.window` of them
    recent: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Why:
    """Why a pair was picked, for the ladder's page."""

    #: ``information``: the most informative pair open; ``waited``: a bot's wait forced the pick
    rule: Literal["information", "waited"]
    #: the expected narrowing of the sum of the pool's 95% intervals by this game, Elo points
    narrows: float
    #: the two bots' ratings and 95% half-widths when picked (a bot with no game: 1500 and the prior's)
    rating_a: float
    rating_b: float
    half_a: float
    half_b: float
    #: ``a``'s expected score at those ratings
    expected_a: float
    #: ``waited``: the picks that bot ``a`` waited
    waited: int = 0

    def text(self, a: str, b: str) -> str:
        pair = (f"{a} ({self.rating_a:.0f} ±{self.half_a:.0f}) v {b} ({self.rating_b:.0f} "
                f"±{self.half_b:.0f}), expected score {self.expected_a:.2f}")
        if self.rule == "waited":
            return (f"{pair}: {a} had waited {self.waited} picks; of its allowed partners, {b}'s game "
                    f"narrows the pool's intervals most ({self.narrows:.1f} Elo in all)")
        return (f"{pair}: of the pairs open, this game narrows the pool's intervals most "
                f"({self.narrows:.1f} Elo in all)")


@dataclass(frozen=True, slots=True)
class Pick:
    a: str
    b: str
    why: Why

    def reason(self) -> str:
        return self.why.text(self.a, self.b)


@dataclass(frozen=True, slots=True)
class Picks:
    picks: tuple[Pick, ...]
    #: the fairness state after these picks, for the next call
    fairness: Fairness


def pick(counts: PairCounts, free_seats: Mapping[str, int], fairness: Fairness, rng: random.Random,
         rules: Rules = Rules(), limit: int | None = None) -> Picks:
    """The next pairings among the bots of ``free_seats`` (the opted-in bots available now, each with
    its free seats), at most ``limit`` of them (None: until no pair fits), from the pool's ``counts``.

    Every bot of ``counts`` counts in the intervals the picks narrow; only those of ``free_seats`` are
    picked. A bot not in ``free_seats``, or with fewer free seats than a match takes, is not available:
    its wait goes back to 0.
    """
    seats = {bot: n for bot, n in free_seats.items() if n >= rules.seats_per_match}
    waited = {bot: fairness.waited.get(bot, 0) for bot in seats}
    recent = {bot: list(opponents) for bot, opponents in fairness.recent.items()}
    if len(seats) < 2 or limit == 0:
        return Picks((), Fairness(waited, _frozen(recent)))
    model = _Model(counts, sorted(seats))
    picks: list[Pick] = []
    while limit is None or len(picks) < limit:
        open_ = [bot for bot in model.available if seats[bot] >= rules.seats_per_match]
        allowed = _allowed(model, open_, recent, rules)
        if not allowed.any():
            break
        chosen = _forced(model, open_, waited, allowed, rules, rng)
        if chosen is None:
            i, j = _best(model.gain(allowed), rng)
            rule: Literal["information", "waited"] = "information"
        else:
            i, j = chosen
            rule = "waited"
        a, b = model.available[i], model.available[j]
        picks.append(Pick(a, b, model.why(i, j, rule, waited.get(a, 0))))
        model.play(i, j)
        for bot in open_:
            waited[bot] = 0 if bot in (a, b) else waited[bot] + 1
        for bot, other in ((a, b), (b, a)):
            seats[bot] -= rules.seats_per_match
            recent[bot] = [*recent.get(bot, []), other][-rules.window:]
            if seats[bot] < rules.seats_per_match:
                waited[bot] = 0  # busy: not waiting
    return Picks(tuple(picks), Fairness({bot: n for bot, n in waited.items() if n}, _frozen(recent)))


def _frozen(recent: Mapping[str, list[str]]) -> dict[str, tuple[str, ...]]:
    return {bot: tuple(opponents) for bot, opponents in recent.items() if opponents}


def _allowed(model: _Model, open_: list[str], recent: Mapping[str, list[str]],
             rules: Rules) -> NDArray[np.bool_]:
    """The pairs (indices into ``model.available``) with the seats and within the repeat rule."""
    m = len(model.available)
    ok = np.zeros((m, m), dtype=bool)
    index = model.position
    rows = [index[bot] for bot in open_]
    ok[np.ix_(rows, rows)] = True
    np.fill_diagonal(ok, False)
    for bot in open_:
        played = recent.get(bot, [])
        for other in set(played):
            if other in index and played.count(other) >= rules.max_repeats:
                ok[index[bot], index[other]] = ok[index[other], index[bot]] = False
    return ok


def _forced(model: _Model, open_: list[str], waited: Mapping[str, int], allowed: NDArray[np.bool_],
            rules: Rules, rng: random.Random) -> tuple[int, int] | None:
    """The pair the waits force, the longest-waiting bot (with an allowed partner) first, or None when no
    wait is pressing."""
    queue = sorted(open_, key=lambda bot: (-waited[bot], bot))
    if not any(waited[bot] + k + 1 >= rules.max_wait for k, bot in enumerate(queue)):
        return None
    for bot in queue:
        i = model.position[bot]
        if allowed[i].any():
            row = np.zeros_like(allowed)
            row[i] = allowed[i]
            first, second = _best(model.gain(row), rng)
            return (first, second) if first == i else (second, first)  # the bot that waited first
    return None


def _best(gain: Floats, rng: random.Random) -> tuple[int, int]:
    """The pair of the highest gain (``-inf``: not allowed), a tie broken by ``rng``."""
    top = float(gain.max())
    ties = np.argwhere(gain >= top - _TIE * abs(top))
    ties = ties[ties[:, 0] != ties[:, 1]]
    pairs = sorted({(int(min(i, j)), int(max(i, j))) for i, j in ties.tolist()})
    return pairs[rng.randrange(len(pairs))] if len(pairs) > 1 else pairs[0]


class _Model:
    """The pool's ratings and covariance, over every bot that played and every available one, with
    the picks made so far in this call counted as games to come."""

    def __init__(self, counts: PairCounts, available: list[str]) -> None:
        result = fit(counts)
        new = [bot for bot in available if bot not in set(result.bots)]
        bots = [*result.bots, *new]
        n, old = len(bots), len(result.bots)
        self.ratings = np.concatenate([result.ratings, np.full(len(new), ANCHOR)])
        cov = np.zeros((n, n))
        cov[:old, :old] = result.covariance
        cov[np.arange(old, n), np.arange(old, n)] = NEW_BOT_VARIANCE
        self.available = available
        self.position = {bot: i for i, bot in enumerate(available)}
        where = {bot: i for i, bot in enumerate(bots)}
        self.columns = np.array([where[bot] for bot in available], dtype=np.int64)
        self.cov = cov
        # the weight of each bot's variance in the sum of interval widths: d width = 1.96 d var / sd
        self.weight = Z95 / np.sqrt(np.maximum(np.diag(cov), 1e-9))
        self.half = Z95 * np.sqrt(np.maximum(np.diag(cov), 0.0))
        ca = cov[self.columns]  # available x all
        self.h = (ca * self.weight) @ ca.T  # h[i, j] = sum_k weight_k C_ki C_kj

    def expected(self) -> Floats:
        """``p[i, j]``: available bot ``i``'s expected score against ``j`` at the fitted ratings."""
        r = self.ratings[self.columns]
        p: Floats = 1.0 / (1.0 + 10.0 ** ((r[None, :] - r[:, None]) / 400.0))
        return p

    def gain(self, allowed: NDArray[np.bool_]) -> Floats:
        """Per pair of available bots, the narrowing of the sum of the 95% widths by its game; -inf where
        not ``allowed``."""
        c = self.cov[np.ix_(self.columns, self.columns)]
        cd, hd = np.diag(c), np.diag(self.h)
        q = cd[:, None] + cd[None, :] - 2.0 * c
        spread = hd[:, None] + hd[None, :] - 2.0 * self.h
        p = self.expected()
        w = p * (1.0 - p) / ELO_PER_NAT**2
        gain: Floats = np.where(allowed, w * spread / (1.0 + w * q), -np.inf)
        return gain

    def why(self, i: int, j: int, rule: Literal["information", "waited"], waited: int) -> Why:
        everything = np.ones((len(self.available),) * 2, dtype=bool)
        narrows = float(self.gain(everything)[i, j])
        ci, cj = self.columns[i], self.columns[j]
        return Why(rule, round(narrows, 3), float(self.ratings[ci]), float(self.ratings[cj]),
                   float(self.half[ci]), float(self.half[cj]), float(self.expected()[i, j]),
                   waited if rule == "waited" else 0)

    def play(self, i: int, j: int) -> None:
        """Count a game between available bots ``i`` and ``j`` as played: the rank-one update of the
        covariance (and of ``h``) that the module's docstring gives."""
        ci, cj = self.columns[i], self.columns[j]
        v = self.cov[:, ci] - self.cov[:, cj]
        q = float(v[ci] - v[cj])
        p = float(self.expected()[i, j])
        w = p * (1.0 - p) / ELO_PER_NAT**2
        s = w / (1.0 + w * q)
        va = v[self.columns]
        y = (self.cov[self.columns] * self.weight) @ v  # C_A D v
        self.h = (self.h - s * (np.outer(va, y) + np.outer(y, va))
                  + s * s * float(v @ (self.weight * v)) * np.outer(va, va))
        self.cov = self.cov - s * np.outer(v, v)


__all__ = ["NEW_BOT_VARIANCE", "Fairness", "Pick", "Picks", "Rules", "Why", "pick"]
