"""The leaderboard of a pool, as the API, the CLI and the pages show it."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

#: ``bt``: Bradley-Terry maximum likelihood with 95% intervals; ``elo``: the online Elo
Method = Literal["bt", "elo"]
METHODS: tuple[Method, ...] = ("bt", "elo")


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
