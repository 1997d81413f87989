"""Ratings of bots in mixed partnerships: a side whose two seats hold two different bots.

Bradley-Terry over pair counts rates a bot that holds both seats of its side; when the
partners differ, each bot's share of the side's result is unknown, and a team model
rates each one: openskill's Plackett-Luce (Weng-Lin), where a side's skill is the sum of
its two bots' skills. Each bot has a mean ``mu`` and a deviation ``sigma`` (openskill's
defaults: 25 and 25/3 to start), and a conservative ``ordinal`` = ``mu - 3 sigma``.

For display on the Elo scale: between two sides with small ``sigma``, Plackett-Luce gives
the first the probability ``1 / (1 + exp(-(mu_a - mu_b) / c))`` with ``c = sqrt(2) beta``,
and Elo ``1 / (1 + 10 ** (-(r_a - r_b) / 400))``; so one ``mu`` is
``400 / (ln 10 * sqrt(2) * beta)`` Elo points (about 29.5 with the default ``beta`` of 25/6),
and :meth:`MixedRatings.elo` is ``1500 + (mu - 25) * that``. A side with the same bot on
both seats counts that bot twice, as the sum of its seats.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from openskill.models import PlackettLuce, PlackettLuceRating

from arena.ratings.elo import INITIAL_RATING

Team = tuple[str, str]

#: joins a side's two bots in the texts below (a bot name never holds it: arena.records.side_name)
_JOIN = "+"


def team_of(side: str) -> Team:
    """A side's two bots from its name: ``"alice+bob"``, or ``"alice"`` for a bot at both seats."""
    first, _, second = side.partition(_JOIN)
    return (first, second or first)


@dataclass(frozen=True, slots=True)
class MixedGame:
    """One game of two-bot sides waiting in a pool's queue to be rated: ``side_a`` scored
    ``score_a`` (1, 1/2 or 0) against ``side_b``. Its text is what the store keeps:
    ``"<game id> <side a> <side b> <score a>"``, the sides as ``"alice+bob"``."""

    game_id: str
    side_a: Team
    side_b: Team
    score_a: float

    def to_text(self) -> str:
        return f"{self.game_id} {_JOIN.join(self.side_a)} {_JOIN.join(self.side_b)} {self.score_a!r}"

    @classmethod
    def from_text(cls, text: str | bytes) -> MixedGame:
        words = (text.decode() if isinstance(text, bytes) else text).split()
        if len(words) != 4:
            raise ValueError(f"a mixed game is '<id> <side> <side> <score>', not {text!r}")
        return cls(words[0], team_of(words[1]), team_of(words[2]), float(words[3]))


@dataclass(frozen=True, slots=True)
class MixedState:
    """A bot's openskill rating in one pool, and its games there (kept as ``to_text()``)."""

    mu: float
    sigma: float
    games: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0

    def to_text(self) -> str:
        return f"{self.mu!r} {self.sigma!r} {self.games} {self.wins} {self.draws} {self.losses}"

    @classmethod
    def from_text(cls, text: str | bytes) -> MixedState:
        words = (text.decode() if isinstance(text, bytes) else text).split()
        if len(words) != 6:
            raise ValueError(f"a mixed rating is 'mu sigma games wins draws losses', not {text!r}")
        return cls(float(words[0]), float(words[1]), *(int(w) for w in words[2:]))


class MixedRatings:
    """Each bot's openskill rating, from the games of two-bot sides, in the order they were played."""

    def __init__(
        self, model: PlackettLuce | None = None, states: Mapping[str, MixedState] | None = None,
    ) -> None:
        self._model = model if model is not None else PlackettLuce()
        self._ratings: dict[str, PlackettLuceRating] = {}
        #: each bot's games, wins, draws and losses
        self._record: dict[str, tuple[int, int, int, int]] = {}
        #: Elo points per unit of mu (see the module's docstring)
        self.elo_per_mu = 400.0 / (math.log(10.0) * math.sqrt(2.0) * self._model.beta)
        for bot, state in (states or {}).items():  # carried on from what a store kept
            self._ratings[bot] = self._model.rating(mu=state.mu, sigma=state.sigma, name=bot)
            self._record[bot] = (state.games, state.wins, state.draws, state.losses)

    def apply(self, game: MixedGame) -> None:
        """Count one game of a pool's queue, its sides' records too."""
        self.rate(game.side_a, game.side_b, game.score_a)
        for team, score in ((game.side_a, game.score_a), (game.side_b, 1.0 - game.score_a)):
            for bot in dict.fromkeys(team):  # a bot at both seats plays one game
                g, w, d, l_ = self._record.get(bot, (0, 0, 0, 0))
                self._record[bot] = (g + 1, w + (score == 1.0), d + (score == 0.5), l_ + (score == 0.0))

    def state(self, bot: str) -> MixedState:
        """The bot's rating and record, as a store keeps them."""
        games, wins, draws, losses = self._record.get(bot, (0, 0, 0, 0))
        return MixedState(self.mu(bot), self.sigma(bot), games, wins, draws, losses)

    def rate(self, team_a: Team, team_b: Team, score_a: float) -> None:
        """Count one game: ``team_a`` scored ``score_a`` against ``team_b`` (1 win, 1/2 draw, 0 loss)."""
        if set(team_a) & set(team_b):
            raise ValueError(f"a bot cannot play on both sides: {team_a} against {team_b}")
        if score_a not in (0.0, 0.5, 1.0):
            raise ValueError(f"score_a must be 1, 1/2 or 0, not {score_a}")
        ranks = [0.0, 0.0] if score_a == 0.5 else ([0.0, 1.0] if score_a == 1.0 else [1.0, 0.0])
        teams = [[self._rating(bot) for bot in team] for team in (team_a, team_b)]
        new = self._model.rate(teams, ranks=ranks)
        for team, rated in zip((team_a, team_b), new, strict=True):
            for bot, rating in zip(team, rated, strict=True):  # a bot on both seats: the same update twice
                self._ratings[bot] = rating

    def bots(self) -> tuple[str, ...]:
        """The bots rated so far, by name."""
        return tuple(sorted(self._ratings))

    def mu(self, bot: str) -> float:
        return float(self._rating(bot).mu)

    def sigma(self, bot: str) -> float:
        return float(self._rating(bot).sigma)

    def ordinal(self, bot: str) -> float:
        """``mu - 3 sigma``: a bot is ranked by the skill it has with about 99.9% confidence."""
        return self.mu(bot) - 3.0 * self.sigma(bot)

    def elo(self, bot: str) -> float:
        """``mu`` on the Elo scale, 1500 for a new bot."""
        return INITIAL_RATING + (self.mu(bot) - self._model.mu) * self.elo_per_mu

    def _rating(self, bot: str) -> PlackettLuceRating:
        rating = self._ratings.get(bot)
        return rating if rating is not None else self._model.rating(name=bot)
