"""What the store applies with each result, besides the Elo: duplicate games and rating history.

A mirror duplicate pair (the same decks played twice, the bots swapped) counts
as one game, for the pair counts and the Elo, once both legs are written: the
store keeps the first leg written as a :class:`Leg` (from bot A's side, A being
team 0 of leg 0) and, with the second, counts the pair's game scored by
:func:`duplicate_score`. A field duplicate quartet (four tables, four sides,
:mod:`arena.tournament.quartet`) counts its one or two games once all four
tables are written: the store keeps each table written as a :class:`Part`,
and the writer of the fourth counts the games :func:`quartet_scores` gives.
The Redis backend does the same in Lua.

The history of a bot's rating in a pool is a point ``(games, rating)`` after
every :data:`HISTORY_EVERY` of its games in the pool, the latest
:data:`HISTORY_MAX` points kept (a chart of its last 5,000 games).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

#: a history point after every this many games of a bot in a pool
HISTORY_EVERY = 10
#: history points kept per bot and pool (the oldest go first)
HISTORY_MAX = 500


@dataclass(frozen=True, slots=True)
class Leg:
    """One leg of a duplicate pair, from bot A's side (A is team 0 of leg 0, team 1 of leg 1)."""

    points_a: int
    points_b: int
    #: A's match score in this leg: 1 won, 1/2 drawn, 0 lost
    score_a: float
    #: the leg ended by forfeit (its points stopped early and compare nothing)
    forfeit: bool
    #: the players of A and B in this leg (:func:`arena.ratings.versions.player_of`: a version of the
    #: bot, or its name); "" where not known (a leg kept before versions were)
    players: tuple[str, str] = ("", "")

    def to_text(self) -> str:
        """How a store keeps it until the other leg: ``points_a points_b score_a forfeit``, then the
        players of A and B when known (names hold no space)."""
        text = f"{self.points_a} {self.points_b} {self.score_a!r} {int(self.forfeit)}"
        return f"{text} {self.players[0]} {self.players[1]}" if all(self.players) else text

    @classmethod
    def from_text(cls, text: str) -> Leg:
        pa, pb, sa, f, *players = text.split()
        return cls(int(pa), int(pb), float(sa), f == "1",
                   (players[0], players[1]) if len(players) == 2 else ("", ""))


def duplicate_players(first: Leg, second: Leg, a: str, b: str) -> tuple[str, str]:
    """The players a mirror pair's game counts for, A's and B's (bots ``a`` and ``b``): each side's player
    when it is the same in both legs, else the bot's name (its version changed between the legs, or a
    leg kept before versions were: no one version played the pair)."""
    def same(k: int, bot: str) -> str:
        return first.players[k] if first.players[k] and first.players[k] == second.players[k] else bot

    return same(0, a), same(1, b)


def duplicate_score(first: Leg, second: Leg) -> float:
    """A's score for the pair (1, 1/2 or 0), whichever leg came first: the better total over
    both legs wins; when a leg ended by forfeit, A's mean match score above, at or below one half
    decides (as :func:`arena.tournament.duplicate.pair_score` does from the deals)."""
    if first.forfeit or second.forfeit:
        mean = (first.score_a + second.score_a) / 2
        return 1.0 if mean > 0.5 else 0.0 if mean < 0.5 else 0.5
    difference = first.points_a + second.points_a - first.points_b - second.points_b
    return 1.0 if difference > 0 else 0.0 if difference < 0 else 0.5


@dataclass(frozen=True, slots=True)
class Part:
    """One table of a field duplicate quartet as the store keeps it until the quartet's last: its
    sides (bot names, or ``"alice+bob"``), their points, team 0's match score, and whether it ended
    by forfeit."""

    team0: str
    team1: str
    points0: int
    points1: int
    score0: float
    forfeit: bool
    #: the players of team 0 and team 1 at this table (a version of the bot, or the side's name); "" where
    #: not known (a table kept before versions were)
    players: tuple[str, str] = ("", "")

    def to_text(self) -> str:
        """A JSON array (the Lua script of the Redis backend decodes it with cjson), the players last."""
        return json.dumps([self.team0, self.team1, self.points0, self.points1, self.score0,
                           int(self.forfeit), self.players[0], self.players[1]])

    @classmethod
    def from_text(cls, text: str | bytes) -> Part:
        t0, t1, p0, p1, s0, f, *players = json.loads(text)
        return cls(str(t0), str(t1), int(p0), int(p1), float(s0), f == 1,
                   (str(players[0]), str(players[1])) if len(players) == 2 else ("", ""))


#: where each side of a quartet sat, P, Q, R, S in order: (table, team) at its two tables
#: (arena.tournament.quartet.ROLES, which this rule must follow)
QUARTET_ROLES = (((0, 0), (2, 0)), ((1, 0), (3, 0)), ((0, 1), (3, 1)), ((1, 1), (2, 1)))


def quartet_scores(parts: Sequence[Part], scored: bool) -> list[tuple[str, str, float]]:
    """The games of a quartet whose four tables are ``parts`` (in table order): ``(a, b, a's score)``
    for P vs Q, and R vs S when ``scored``. A side's duplicate difference is its points minus its
    opponents' at its two tables, the better one winning; when a table ended by forfeit, the sides'
    summed match scores decide instead (as :func:`arena.tournament.quartet.compare` does)."""
    forfeit = any(p.forfeit for p in parts)

    def side(role: int) -> tuple[str, float]:
        diff, score = 0, 0.0
        for table, team in QUARTET_ROLES[role]:
            p = parts[table]
            diff += (p.points0 - p.points1) if team == 0 else (p.points1 - p.points0)
            score += p.score0 if team == 0 else 1.0 - p.score0
        name = parts[QUARTET_ROLES[role][0][0]]
        return (name.team0 if QUARTET_ROLES[role][0][1] == 0 else name.team1), (score if forfeit else diff)

    games = []
    for x, y in ((0, 1), (2, 3)) if scored else ((0, 1),):
        (a, va), (b, vb) = side(x), side(y)
        games.append((a, b, 1.0 if va > vb else 0.0 if va < vb else 0.5))
    return games


def quartet_players(parts: Sequence[Part], scored: bool) -> list[tuple[str, str]]:
    """The players each game of :func:`quartet_scores` counts for, in the same order: a side's player
    when it is the same at its two tables, else the side's name."""
    def side(role: int) -> str:
        (t1, team1), (t2, team2) = QUARTET_ROLES[role]
        first, second = parts[t1].players[team1], parts[t2].players[team2]
        p = parts[t1]
        name = p.team0 if team1 == 0 else p.team1
        return first if first and first == second else name

    return [(side(x), side(y)) for x, y in (((0, 1), (2, 3)) if scored else ((0, 1),))]


def history_points(
    stored: list[tuple[int, float]], latest: tuple[int, float] | None,
) -> list[tuple[int, float]]:
    """The stored points, then the latest ``(games, rating)`` unless it is the last of them."""
    if latest is not None and latest[0] > 0 and (not stored or stored[-1][0] != latest[0]):
        return [*stored, latest]
    return stored
