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

**The floor: no game whose result is known in advance.** A game tells about the gap ``d`` between its
two bots through its result, and its Fisher information about it (in nats⁻²) is ``p (1 - p)``. What
is known of the gap is the fit's ``N(d̂, σ²)`` (``σ² = C_aa + C_bb - 2 C_ab``), so a pair's *expected
information* is ``E[p (1 - p)]`` over that law (:meth:`_Model.information`, Gauss-Hermite). A result
is *known in advance* when its 95% prediction is one result: the favourite scores with probability at
least :data:`KNOWN_SCORE` (0.95), the level at which the arena states all its intervals. At a gap known
exactly that is a gap of 512 Elo and an information of ``0.95 × 0.05`` = :data:`INFO_FLOOR` (0.0475, 19%
of a game between equals: five such games teach what one even game does). A pair below the floor is
never picked by the information rule, even when no other pair is open: its slot stays free and its
bots wait. The expectation is over what is not known, so a floor binds only once a gap is *known* to
be wide: a newcomer (±480) has no known result, nor has a pair whose gap may still be small.

**Fairness**, enforced on every pick (:class:`Rules`):

- *seats*: a pick takes :attr:`Rules.seats_per_match` of each bot's free seats (a team match seats a
  bot at both places of its side: 2); a bot with fewer free seats is not picked;
- *repeats*: of a bot's last pairings, at most :attr:`Rules.max_repeats` are against one opponent (both
  bots' windows are checked); this is never broken. A bot's window is :attr:`Rules.window` pairings,
  narrowed to ``max_repeats * k - 1`` when it has ``k`` partners to learn from among the bots in play
  (``present``: those above the floor with it; all, when none is), so that it always has one partner
  left that the rule allows: its window slides only when it plays;
- *waits*: a bot's wait is the number of picks in a row made while it was available (free seats
  enough for a match) without it. When, the available bots sorted by wait (longest first), the
  ``k``-th would reach :attr:`Rules.max_wait` were one of them served a pick from now on
  (``wait + k + 1 >= max_wait``), the pick serves the longest-waiting bot that has a partner above the
  floor the repeat rule allows, with its most informative such partner. A bot whose every allowed
  partner is a known result is passed over while it can still wait (it waits for a partner to learn
  from to come free), and served when it can wait no more (its own ``wait + k + 1 >= max_wait``): then,
  and only then, with a known result, its most informative. So no available bot waits more than
  ``max_wait`` picks as long as the available bots are at most ``max_wait`` and each has an allowed
  partner; ``max_wait`` above the number of bots leaves room for the informative picks.

**A bot whose every pair is a known result for good** (the strongest bot alone with random bots, or
the random bot among strong ones): it plays one game in ``max_wait`` picks the ladder makes while it
is available (a known-result game, its most informative; the reason says so), and none while no other
pick is made (two bots alone whose result is known: the ladder is idle). That game is the fairness
bound's price: it keeps the bot seen playing, and checks that the result is still the known one (a bot
that broke would lose it), at one slot in ``max_wait`` (40: 2.5%) at most.
"""

from __future__ import annotations

import random
from collections.abc import Collection, Mapping
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
#: a result is known in advance when the favourite's expected score is at least this: its 95% prediction
#: is one result, at the level of the arena's intervals (the module's docstring)
KNOWN_SCORE = 0.95
#: the expected information a game must carry to be picked for what it teaches: that of a pair whose
#: favourite is expected to score :data:`KNOWN_SCORE` (a gap of 512 Elo known exactly), 19% of an even game
INFO_FLOOR = KNOWN_SCORE * (1.0 - KNOWN_SCORE)
#: the Gauss-Hermite rule (weight exp(-x²/2)) that averages a pair's information over its gap's law
_NODES, _WEIGHTS = np.polynomial.hermite_e.hermegauss(16)
_WEIGHTS = _WEIGHTS / _WEIGHTS.sum()


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
    #: the game's expected information (``E[p (1 - p)]`` over what is known of the gap: 0.25 at most)
    information: float = 0.25
    #: its result is known in advance (information below :data:`INFO_FLOOR`): only a wait forces it,
    #: when bot ``a`` has no other partner open
    known: bool = False

    def text(self, a: str, b: str) -> str:
        pair = (f"{a} ({self.rating_a:.0f} ±{self.half_a:.0f}) v {b} ({self.rating_b:.0f} "
                f"±{self.half_b:.0f}), expected score {self.expected_a:.2f}")
        if self.rule == "waited" and self.known:
            return (f"{pair}: a known result, forced: {a} had waited {self.waited} picks and every partner "
                    f"open to it is a known result; {b}'s game narrows the pool's intervals most of them "
                    f"({self.narrows:.1f} Elo in all)")
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
    #: the bots left available whose every allowed partner is a known result, when that stopped the
    #: picks: they wait for a partner to learn from (or for their wait to force a game)
    waiting: tuple[str, ...] = ()
    #: each bot's repeat window in this call (:attr:`Rules.window`, or narrower: :func:`_windows`)
    windows: Mapping[str, int] = field(default_factory=dict)


def pick(counts: PairCounts, free_seats: Mapping[str, int], fairness: Fairness, rng: random.Random,
         rules: Rules = Rules(), limit: int | None = None, present: Collection[str] = ()) -> Picks:
    """The next pairings among the bots of ``free_seats`` (the opted-in bots available now, each with
    its free seats), at most ``limit`` of them (None: until no pair fits), from the pool's ``counts``.

    Every bot of ``counts`` counts in the intervals the picks narrow; only those of ``free_seats`` are
    picked. A bot not in ``free_seats``, or with fewer free seats than a match takes, is not available:
    its wait goes back to 0. ``present`` names the bots in play though busy now (the ladder's bots
    connected): with the available ones, they are the partners a bot's repeat window leaves room for.
    No pair whose result is known in advance is picked but by a wait that can last no more (the
    module's docstring), so the picks may stop with seats and ``limit`` left.
    """
    seats = {bot: n for bot, n in free_seats.items() if n >= rules.seats_per_match}
    waited = {bot: fairness.waited.get(bot, 0) for bot in seats}
    recent = {bot: list(opponents) for bot, opponents in fairness.recent.items()}
    if len(seats) < 2 or limit == 0:
        return Picks((), Fairness(waited, _frozen(recent)), windows=dict.fromkeys(seats, rules.window))
    model = _Model(counts, sorted(set(seats) | set(present)))
    windows = _windows(model, rules)
    picks: list[Pick] = []
    waiting: tuple[str, ...] = ()
    while limit is None or len(picks) < limit:
        open_ = [bot for bot in model.available if seats.get(bot, 0) >= rules.seats_per_match]
        allowed = _allowed(model, open_, recent, rules, windows)
        if not allowed.any():
            break
        informative = allowed & (model.information() >= INFO_FLOOR)
        chosen = _forced(model, open_, waited, allowed, informative, rules, rng)
        if chosen is not None:
            i, j, known = chosen
            rule: Literal["information", "waited"] = "waited"
        elif informative.any():
            i, j = _best(model.gain(informative), rng)
            rule, known = "information", False
        else:  # every pair open is a known result, and no bot's wait presses: the slots stay free
            waiting = tuple(bot for bot in open_ if allowed[model.position[bot]].any())
            break
        a, b = model.available[i], model.available[j]
        picks.append(Pick(a, b, model.why(i, j, rule, waited.get(a, 0), known)))
        model.play(i, j)
        for bot in open_:
            waited[bot] = 0 if bot in (a, b) else waited[bot] + 1
        for bot, other in ((a, b), (b, a)):
            seats[bot] -= rules.seats_per_match
            recent[bot] = [*recent.get(bot, []), other][-rules.window:]
            if seats[bot] < rules.seats_per_match:
                waited[bot] = 0  # busy: not waiting
    kept = Fairness({bot: n for bot, n in waited.items() if n}, _frozen(recent))
    return Picks(tuple(picks), kept, waiting, windows)


def _frozen(recent: Mapping[str, list[str]]) -> dict[str, tuple[str, ...]]:
    return {bot: tuple(opponents) for bot, opponents in recent.items() if opponents}


def _windows(model: _Model, rules: Rules) -> dict[str, int]:
    """Each bot's repeat window: :attr:`Rules.window`, narrowed to ``max_repeats * k - 1`` for a bot with
    ``k`` partners in play above the floor (all of them when it has none), so that one of them is always
    left to it (a window holding ``max_repeats`` of each would never slide: it slides when the bot plays)."""
    m = len(model.available)
    above = model.information() >= INFO_FLOOR
    np.fill_diagonal(above, False)
    partners = np.where(above.any(axis=1), above.sum(axis=1), m - 1)
    return {bot: max(1, min(rules.window, rules.max_repeats * int(k) - 1))
            for bot, k in zip(model.available, partners.tolist(), strict=True)}


def _allowed(model: _Model, open_: list[str], recent: Mapping[str, list[str]],
             rules: Rules, windows: Mapping[str, int]) -> NDArray[np.bool_]:
    """The pairs (indices into ``model.available``) with the seats and within the repeat rule."""
    m = len(model.available)
    ok = np.zeros((m, m), dtype=bool)
    index = model.position
    rows = [index[bot] for bot in open_]
    ok[np.ix_(rows, rows)] = True
    np.fill_diagonal(ok, False)
    for bot in open_:
        played = recent.get(bot, [])[-windows[bot]:]
        for other in set(played):
            if other in index and played.count(other) >= rules.max_repeats:
                ok[index[bot], index[other]] = ok[index[other], index[bot]] = False
    return ok


def _forced(model: _Model, open_: list[str], waited: Mapping[str, int], allowed: NDArray[np.bool_],
            informative: NDArray[np.bool_], rules: Rules,
            rng: random.Random) -> tuple[int, int, bool] | None:
    """The pair the waits force, or None when no wait is pressing: the longest-waiting bot with a partner
    above the floor, with its most informative such partner; a bot whose allowed partners are all known
    results only when it can wait no more, then with the most informative of them (True: a known result)."""
    queue = sorted(open_, key=lambda bot: (-waited[bot], bot))
    if not any(waited[bot] + k + 1 >= rules.max_wait for k, bot in enumerate(queue)):
        return None
    for k, bot in enumerate(queue):
        i = model.position[bot]
        if informative[i].any():
            partners, known = informative[i], False
        elif allowed[i].any() and waited[bot] + k + 1 >= rules.max_wait:
            partners, known = allowed[i], True
        else:
            continue
        row = np.zeros_like(allowed)
        row[i] = partners
        first, second = _best(model.gain(row), rng)
        return (first, second, known) if first == i else (second, first, known)  # the bot that waited first
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

    def information(self) -> Floats:
        """Per pair of available bots, its game's expected information ``E[p (1 - p)]``, over the law of
        their gap that the fit gives (``N(d̂, σ²)``, with the games picked so far in the call counted)."""
        c = self.cov[np.ix_(self.columns, self.columns)]
        cd = np.diag(c)
        sd = np.sqrt(np.maximum(cd[:, None] + cd[None, :] - 2.0 * c, 0.0))
        r = self.ratings[self.columns]
        gap = r[:, None] - r[None, :]
        d = gap[..., None] + sd[..., None] * _NODES
        p = 1.0 / (1.0 + 10.0 ** (-d / 400.0))
        info: Floats = (p * (1.0 - p)) @ _WEIGHTS
        return info

    def why(self, i: int, j: int, rule: Literal["information", "waited"], waited: int,
            known: bool = False) -> Why:
        everything = np.ones((len(self.available),) * 2, dtype=bool)
        narrows = float(self.gain(everything)[i, j])
        ci, cj = self.columns[i], self.columns[j]
        return Why(rule, round(narrows, 3), float(self.ratings[ci]), float(self.ratings[cj]),
                   float(self.half[ci]), float(self.half[cj]), float(self.expected()[i, j]),
                   waited if rule == "waited" else 0, round(float(self.information()[i, j]), 4), known)

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


__all__ = [
    "INFO_FLOOR", "KNOWN_SCORE", "NEW_BOT_VARIANCE", "Fairness", "Pick", "Picks", "Rules", "Why", "pick",
]
