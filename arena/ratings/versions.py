"""A rating per version: each version of a bot rated on its own games, in one fit with the pool.

A bot that says its version (:mod:`arena.referee.versions`) plays its rated
games as its promoted version, and the match record keeps which version
played each seat. Each game then counts twice in its pool, in the same atomic
step that writes the result (:mod:`arena.queue`):

- for the **bot**, as it always did: its pair counts and its online Elo, whatever
  version played (what the ladder's matchmaking and the bot's history read);
- for the **players** of the game, a player being a version of a bot
  (``alpha@3``: :func:`player_of`) or a bot that said no version (``beta``):
  the store keeps, for each versioned player, its wins, draws and losses against
  each opponent player (:class:`VersionCounts`), and, per bot, its versions in
  the order they first played in the pool.

The games of a pool between two players none of which is a version are the
bot pair counts less the versioned games of that pair (:func:`player_counts`):
what the store keeps grows with versioned play only, and the games rated
before versions were kept (or by a bot that says none) stay the bot's own,
under its bare name.

**Where a new version starts.** The leaderboard's Bradley-Terry fit
(:mod:`arena.ratings.bt`) takes every player of the pool, each version with its
own games, and links each version of a bot to the one that played before it in
the pool (:func:`chains`) by a prior on their difference, normal with a
standard deviation of :data:`STEP_SD` Elo: a version starts from the rating of
the version before it, its interval widened by that much, and its own games
take over as they come (the link weighs about as much as 3 games between
equals).
The first player of a bot keeps the fit's usual prior (virtual draws against
1500). A promoted version that has not played in the pool yet is shown at
the rating of the last one that did, its variance plus ``STEP_SD ** 2``: the
same posterior the fit would give it. docs/ratings.md#a-rating-per-version
says why, and ``bench/version_start.py`` measures what it costs and gains.

**Bounded storage.** A pool keeps the games of at most :data:`MAX_POOL_VERSIONS`
versions of a bot (as the registry keeps at most 16 versions): the write that
brings a bot's 17th version into a pool folds the oldest one's games into the
bot's bare name (:func:`fold`), in the same atomic step. A pool's version
tables then hold at most 16 players a bot, each with at most one row an
opponent player.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, MutableMapping
from dataclasses import dataclass, field

from arena.ratings.bt import PairArrays
from arena.ratings.counts import PairCount, PairCounts, pair_key
from arena.records import SIDE_JOIN, VERSION_JOIN

#: the standard deviation of the prior on the difference between a version and the one before it (Elo):
#: wide enough for a version much better or worse (a rewrite) to be found within tens of its games,
#: narrow enough that a patch's row is not thrown about by its first few (bench/version_start.py)
STEP_SD = 200.0
#: the versions of one bot a pool keeps the games of (the registry keeps 16 versions a bot)
MAX_POOL_VERSIONS = 16

#: a versioned player -> each opponent player -> its games against it, from its own side
VersionGames = Mapping[str, Mapping[str, PairCount]]


def player_of(team: str, version: str) -> str:
    """The player a side of a game counts for: ``team@version`` for a bot that played as one of its
    versions; the side's name itself for a bot that said none, a mixed side (``a+b``), or a side
    already named at a version (a version test's ``alpha@2``)."""
    if not version or VERSION_JOIN in team or SIDE_JOIN in team:
        return team
    return f"{team}{VERSION_JOIN}{version}"


def bot_of(player: str) -> str:
    """The bot of a versioned player (``alpha@3`` -> ``alpha``)."""
    return player.partition(VERSION_JOIN)[0]


def version_of(player: str) -> str:
    """The version of a versioned player ("" for a bare name)."""
    return player.partition(VERSION_JOIN)[2]


@dataclass(frozen=True)
class VersionCounts:
    """What a pool's store keeps of its versioned games."""

    #: each versioned player's games against each opponent player (a versioned one or a bare name),
    #: from its own side; a game between two versioned players is under both
    games: VersionGames = field(default_factory=dict)
    #: each bot with a version in the pool -> its versions, in the order they first played there
    order: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.games)

    def bot(self, player: str) -> str:
        """The bot a player of the pool's games is: a versioned player's bot, else the name itself (a
        bot, or a version test's ``alpha@2``, which the pool's bot counts hold as it is)."""
        return bot_of(player) if player in self.games else player

    def played(self, player: str) -> PairCount:
        """A versioned player's wins, draws and losses over all its games in the pool."""
        w = d = l_ = 0
        for c in self.games.get(player, {}).values():
            w, d, l_ = w + c.wins, d + c.draws, l_ + c.losses
        return PairCount(w, d, l_)


def player_counts(bots: PairCounts, versions: VersionCounts) -> dict[tuple[str, str], PairCount]:
    """The pool's pair counts between players: each versioned game under its two players, and the
    rest of each bot pair's games (its count less its versioned games) under the bots' bare names."""
    out: dict[tuple[str, str], PairCount] = dict(bots)
    if not versions:
        return out
    for p, row in versions.games.items():
        for q, c in row.items():
            if q in versions.games and not p < q:
                continue  # a game of two versioned players: under both, counted from the first's side
            _add(out, p, q, c, 1)
            _add(out, versions.bot(p), versions.bot(q), c, -1)
    return {k: c for k, c in out.items() if c.games > 0}


def player_arrays(bots: PairCounts, versions: VersionCounts) -> PairArrays:
    """:func:`player_counts` as the fit's arrays, summed by numpy (a pool's pairs cost one pass of list
    appends, not an object each): what the leaderboard fits."""
    keys = list(bots)
    values = list(bots.values())
    firsts, seconds = [k[0] for k in keys], [k[1] for k in keys]
    wins, draws, losses = [c.wins for c in values], [c.draws for c in values], [c.losses for c in values]
    if not versions:
        return PairArrays.from_rows(firsts, seconds, wins, draws, losses)
    for p, row in versions.games.items():
        bp = versions.bot(p)
        for q, c in row.items():
            if q in versions.games and not p < q:
                continue  # a game of two versioned players: under both, counted from the first's side
            bq = versions.bot(q)
            firsts += (p, bp)
            seconds += (q, bq)
            wins += (c.wins, -c.wins)
            draws += (c.draws, -c.draws)
            losses += (c.losses, -c.losses)
    return PairArrays.from_rows(firsts, seconds, wins, draws, losses, signed=True)


def _add(counts: dict[tuple[str, str], PairCount], a: str, b: str, c: PairCount, sign: int) -> None:
    """Add (``sign`` 1) or take away (-1) ``c``, ``a``'s games against ``b``, in ``counts``."""
    if a == b:
        return
    key, first = pair_key(a, b)
    w, l_ = (c.wins, c.losses) if first else (c.losses, c.wins)
    old = counts.get(key, PairCount())
    # a bot pair's count never holds fewer games than its versioned ones (written together); never
    # below zero all the same, should a store hold something else
    counts[key] = PairCount(max(0, old.wins + sign * w), max(0, old.draws + sign * c.draws),
                            max(0, old.losses + sign * l_))


def chains(versions: VersionCounts, present: Iterable[str]) -> list[tuple[str, str]]:
    """The links of the fit: ``(later, earlier)`` for each player of a bot and the one of the same bot
    that played before it in the pool (the bot's bare name first, when it has games there, then its
    versions in order), among the ``present`` players (those with games in the fit)."""
    here = set(present)
    links: list[tuple[str, str]] = []
    for bot, order in sorted(versions.order.items()):
        chain = [p for p in (bot, *(f"{bot}{VERSION_JOIN}{v}" for v in order)) if p in here]
        links.extend((later, earlier) for earlier, later in itertools.pairwise(chain))
    return links


def add_game(games: MutableMapping[str, dict[str, PairCount]], order: MutableMapping[str, tuple[str, ...]],
             a: str, b: str, score_a: float, players: tuple[str, str], keep: int = MAX_POOL_VERSIONS) -> None:
    """Count one game of bot (or side) ``a`` against ``b`` (``a`` scored ``score_a``), played by
    ``players`` (:func:`player_of` of each side), as a store does: under each side whose player is one
    of its versions (not its name itself), that version put in its bot's order when new, and the
    oldest of a bot's versions folded into its bare name past ``keep`` of them. Nothing for a
    game of no version, nor for a bot against itself. The reference the stores follow (tests compare
    them)."""
    if a == b:
        return
    pa, pb = players
    for bot, me, other, score in ((a, pa, pb, score_a), (b, pb, pa, 1.0 - score_a)):
        if me == bot:
            continue
        version = me[len(bot) + len(VERSION_JOIN):]
        row = games.setdefault(me, {})
        old = row.get(other, PairCount())
        row[other] = PairCount(old.wins + (score > 0.5), old.draws + (score == 0.5),
                               old.losses + (score < 0.5))
        known = order.get(bot, ())
        if version not in known:
            order[bot] = (*known, version)
            if len(order[bot]) > keep:
                fold(games, order, bot)


def fold(games: MutableMapping[str, dict[str, PairCount]], order: MutableMapping[str, tuple[str, ...]],
         bot: str) -> None:
    """Fold the oldest version of ``bot`` in the pool into its bare name: its games leave the version
    tables (the bot pair counts hold them still, so they count for the bare name), and the versioned
    opponents' rows against it become rows against the bare name."""
    oldest, *rest = order[bot]
    order[bot] = tuple(rest)
    gone = f"{bot}{VERSION_JOIN}{oldest}"
    for other in games.pop(gone, {}):
        row = games.get(other)
        if row is None or gone not in row:
            continue
        c = row.pop(gone)
        old = row.get(bot, PairCount())
        row[bot] = PairCount(old.wins + c.wins, old.draws + c.draws, old.losses + c.losses)
