"""A rating per version: each version on its own games, a new one starting from the one before it, the
leaderboard's row saying which version it rates, and a pool's version tables bounded."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.ratings.bt import PairArrays
from arena.ratings.counts import PairCount, add_game
from arena.ratings.leaderboard import PoolFit, leaderboard
from arena.ratings.versions import (
    MAX_POOL_VERSIONS,
    STEP_SD,
    VersionCounts,
    bot_of,
    chains,
    player_arrays,
    player_counts,
    player_of,
)
from arena.ratings.versions import add_game as add_version_game


def test_a_player_is_a_version_of_a_bot_or_the_side_itself() -> None:
    assert player_of("alpha", "3") == "alpha@3"
    assert player_of("alpha", "") == "alpha"
    assert player_of("alpha@2", "2") == "alpha@2"  # a version test's side is named at its version already
    assert player_of("north+south", "1") == "north+south"  # a mixed side: openskill's, no version
    assert bot_of("alpha@3") == "alpha" and bot_of("beta") == "beta"


class Pool:
    """A pool's counts as a store keeps them: the bots' pair counts, and the versioned games."""

    def __init__(self, keep: int = MAX_POOL_VERSIONS) -> None:
        self.keep = keep
        self.bots: dict[tuple[str, str], PairCount] = {}
        self.games: dict[str, dict[str, PairCount]] = {}
        self.order: dict[str, tuple[str, ...]] = {}

    def play(self, a: str, b: str, score_a: float, va: str = "", vb: str = "") -> None:
        add_game(self.bots, a, b, score_a)
        players = (player_of(a, va), player_of(b, vb))
        add_version_game(self.games, self.order, a, b, score_a, players, self.keep)

    @property
    def versions(self) -> VersionCounts:
        return VersionCounts(self.games, self.order)


def test_the_games_of_no_version_are_the_bot_counts_less_the_versioned_ones() -> None:
    pool = Pool()
    for _ in range(6):
        pool.play("alpha", "beta", 1.0)  # before alpha said a version
    for _ in range(4):
        pool.play("alpha", "beta", 0.0, va="1")
    pool.play("alpha", "gamma", 0.5, va="1", vb="7")
    players = player_counts(pool.bots, pool.versions)
    assert players == {("alpha", "beta"): PairCount(6, 0, 0), ("alpha@1", "beta"): PairCount(0, 0, 4),
                       ("alpha@1", "gamma@7"): PairCount(0, 1, 0)}
    # a game of two versions is under both, from each one's side
    assert pool.games["gamma@7"] == {"alpha@1": PairCount(0, 1, 0)}
    assert pool.order == {"alpha": ("1",), "gamma": ("7",)}
    assert chains(pool.versions, {p for key in players for p in key}) == [("alpha@1", "alpha")]
    # no versioned game: the players are the bots
    assert player_counts(pool.bots, VersionCounts()) == pool.bots
    # the fit's arrays, summed by numpy, are the same counts
    assert same_arrays(player_arrays(pool.bots, pool.versions), PairArrays.from_counts(players))


def same_arrays(x: PairArrays, y: PairArrays) -> bool:
    """The same players and the same pairs with the same counts, in whatever order."""
    def rows(a: PairArrays) -> set[tuple[int, ...]]:
        return set(zip(*(getattr(a, f).tolist() for f in ("first", "second", "wins", "draws", "losses")),
                       strict=True))

    return x.bots == y.bots and rows(x) == rows(y)


def test_a_pool_keeps_the_games_of_sixteen_versions_of_a_bot_and_folds_the_oldest_into_its_name() -> None:
    pool = Pool()
    for v in range(MAX_POOL_VERSIONS + 2):
        pool.play("alpha", "beta", 1.0, va=str(v), vb="1")
        pool.play("alpha", "gamma", 0.0, va=str(v))
    assert pool.order["alpha"] == tuple(str(v) for v in range(2, MAX_POOL_VERSIONS + 2))
    assert len([p for p in pool.games if bot_of(p) == "alpha"]) == MAX_POOL_VERSIONS
    assert "alpha@0" not in pool.games and "alpha@0" not in pool.games["beta@1"]
    # the folded versions' games are the bare name's now: nothing lost
    assert pool.games["beta@1"]["alpha"] == PairCount(0, 0, 2)
    players = player_counts(pool.bots, pool.versions)
    assert players[("alpha", "beta@1")] == PairCount(2, 0, 0)
    assert players[("alpha", "gamma")] == PairCount(0, 0, 2)


games_strategy = st.lists(st.tuples(
    st.sampled_from(["a", "b", "c"]), st.sampled_from(["a", "b", "c"]), st.sampled_from([0.0, 0.5, 1.0]),
    st.sampled_from(["", "1", "2", "3"]), st.sampled_from(["", "1", "2", "3"])), max_size=60)


@settings(max_examples=200, deadline=None)
@given(games_strategy, st.integers(1, 3))
def test_the_players_games_add_up_to_the_bots_whatever_the_versions_and_folds(
        games: list[tuple[str, str, float, str, str]], keep: int) -> None:
    pool = Pool(keep)  # folds often
    for a, b, score, va, vb in games:
        pool.play(a, b, score, va, vb)
    summed: dict[tuple[str, str], PairCount] = {}
    for (p, q), c in player_counts(pool.bots, pool.versions).items():
        for _ in range(c.wins):
            add_game(summed, pool.versions.bot(p), pool.versions.bot(q), 1.0)
        for _ in range(c.draws):
            add_game(summed, pool.versions.bot(p), pool.versions.bot(q), 0.5)
        for _ in range(c.losses):
            add_game(summed, pool.versions.bot(p), pool.versions.bot(q), 0.0)
    assert summed == pool.bots
    assert same_arrays(player_arrays(pool.bots, pool.versions),
                       PairArrays.from_counts(player_counts(pool.bots, pool.versions)))
    assert all(len(order) <= keep for order in pool.order.values())
    for p, row in pool.games.items():  # a game of two versions is under both, the same from each side
        for q, c in row.items():
            if q in pool.games:
                assert pool.games[q][p] == PairCount(c.losses, c.draws, c.wins)


def league(seed: int = 1) -> tuple[Pool, random.Random]:
    """Six bots 100 Elo apart and ``alpha`` (1600 as version 1) play 600 games; then version 2 of alpha
    is promoted."""
    rng = random.Random(seed)
    pool = Pool()
    strengths = {"b1": 1300.0, "b2": 1400.0, "b3": 1500.0, "b4": 1700.0, "b5": 1800.0}
    for _ in range(600):
        play(pool, rng, strengths, "alpha", 1600.0, "1")
    return pool, rng


def play(pool: Pool, rng: random.Random, strengths: dict[str, float], bot: str, strength: float,
         version: str) -> None:
    other = rng.choice(sorted(strengths))
    p = 1.0 / (1.0 + 10 ** ((strengths[other] - strength) / 400))
    pool.play(bot, other, 1.0 if rng.random() < p else 0.0, va=version)
    a, b = rng.sample(sorted(strengths), 2)
    p = 1.0 / (1.0 + 10 ** ((strengths[b] - strengths[a]) / 400))
    pool.play(a, b, 1.0 if rng.random() < p else 0.0)


def test_a_version_promoted_since_its_last_game_is_rated_from_the_one_before_its_interval_widened() -> None:
    pool, _ = league()
    before = leaderboard(pool.bots, {}, pool="p", versions=pool.versions, promoted={"alpha": "1"})
    after = leaderboard(pool.bots, {}, pool="p", versions=pool.versions, promoted={"alpha": "2"})
    one = next(e for e in before.entries if e.bot == "alpha")
    two = next(e for e in after.entries if e.bot == "alpha")
    assert (one.version, one.version_games, one.games) == ("1", 600, 600)
    assert (two.version, two.version_games, two.games) == ("2", 0, 600)  # the issue: none of them its own
    assert two.rating == pytest.approx(one.rating) and two.rank == one.rank
    assert one.low is not None and one.high is not None and two.low is not None and two.high is not None
    half_one, half_two = (one.high - one.low) / 2, (two.high - two.low) / 2
    assert half_two == pytest.approx(1.959963984540054 * math.hypot(half_one / 1.959963984540054, STEP_SD))
    # a bot that says no version: its row as ever, all its games its own
    b3 = next(e for e in after.entries if e.bot == "b3")
    assert (b3.version, b3.version_games) == ("", b3.games)
    # a registry that does not know alpha's versions yet (a node's copy behind the store): its last one
    behind = leaderboard(pool.bots, {}, pool="p", versions=pool.versions, promoted={"alpha": ""})
    assert next(e for e in behind.entries if e.bot == "alpha") == one


def test_a_new_version_is_rated_on_its_own_games_as_they_come() -> None:
    pool, rng = league()
    strengths = {"b1": 1300.0, "b2": 1400.0, "b3": 1500.0, "b4": 1700.0, "b5": 1800.0}
    for _ in range(400):  # version 2 is much weaker: 1350
        play(pool, rng, strengths, "alpha", 1350.0, "2")
    board = leaderboard(pool.bots, {}, pool="p", versions=pool.versions, promoted={"alpha": "2"})
    rows = {e.bot: e for e in board.entries}
    alpha = rows["alpha"]
    assert (alpha.version, alpha.version_games, alpha.games) == ("2", 400, 1000)
    # against the same opponents' ratings: between b1 and b3, far below what version 1 was
    assert rows["b1"].rating < alpha.rating < rows["b3"].rating
    fit = PoolFit(pool.bots, pool.versions)
    v1 = fit.shown("alpha", "1")
    assert v1.rating > rows["b3"].rating + 50  # version 1 keeps its own rating, on its own games
    # the bot's own games all counted in one row: the old board rated alpha on all 1,000, in between
    whole = {e.bot: e for e in leaderboard(pool.bots, {}, pool="p").entries}["alpha"]
    assert alpha.rating < whole.rating < v1.rating


def test_the_online_elo_board_says_the_version_too() -> None:
    pool, _ = league()
    board = leaderboard(pool.bots, {"alpha": (1590.0, 600)}, pool="p", method="elo",
                        versions=pool.versions, promoted={"alpha": "2"})
    alpha = next(e for e in board.entries if e.bot == "alpha")
    assert (alpha.rating, alpha.version, alpha.version_games, alpha.low) == (1590.0, "2", 0, None)


def test_the_fit_of_linked_versions_matches_a_direct_maximum_of_the_posterior() -> None:
    """The Newton fit with links against a brute-force check: at its answer the gradient of the log
    posterior (data, virtual draws of the first of each chain, the links' normal prior) is zero."""
    pool, rng = league(4)
    strengths = {"b1": 1300.0, "b2": 1400.0, "b3": 1500.0, "b4": 1700.0, "b5": 1800.0}
    for _ in range(30):
        play(pool, rng, strengths, "alpha", 1700.0, "2")
    fit = PoolFit(pool.bots, pool.versions)
    theta = (fit.fit.ratings - fit.fit.ratings.mean()) / (400 / math.log(10))
    from arena.ratings.bt import PRIOR_DRAWS

    def log_post(t: np.ndarray) -> float:
        total = 0.0
        pairs = fit.pairs
        for k in range(len(pairs.first)):
            i, j = pairs.first[k], pairs.second[k]
            d = t[i] - t[j]
            s = pairs.wins[k] + 0.5 * pairs.draws[k]
            g = pairs.wins[k] + pairs.draws[k] + pairs.losses[k]
            total += s * -np.logaddexp(0, -d) + (g - s) * -np.logaddexp(0, d)
        linked = {fit.index[a] for a, _ in fit.links}
        for i in range(len(t)):
            if i not in linked:
                total += PRIOR_DRAWS * 0.5 * (-np.logaddexp(0, -t[i]) - np.logaddexp(0, t[i]))
        tie = (400 / math.log(10) / STEP_SD) ** 2
        for a, b in fit.links:
            total -= 0.5 * tie * (t[fit.index[a]] - t[fit.index[b]]) ** 2
        return float(total)

    # the fit is shifted to a mean of 1500: the maximum is at theta + c for one c (golden section on c),
    # where the log posterior's gradient is zero
    lo, hi = -3.0, 3.0
    ratio = (math.sqrt(5) - 1) / 2
    while hi - lo > 1e-9:
        x1, x2 = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
        if log_post(theta + x1) < log_post(theta + x2):
            lo = x1
        else:
            hi = x2
    best = theta + (lo + hi) / 2
    h = 1e-5
    for i in range(len(best)):
        up, down = best.copy(), best.copy()
        up[i] += h
        down[i] -= h
        assert abs(log_post(up) - log_post(down)) / (2 * h) < 1e-3
