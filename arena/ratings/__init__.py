"""Ratings: online Elo per pool, Bradley-Terry maximum likelihood with intervals, from pair counts.

Pure and typed: no I/O, no clock. The store (:mod:`arena.queue`) keeps, per
pool, the online Elo and the pair counts (wins, draws and losses per pair of
bots), and the versioned games of the bots that say their version
(:mod:`arena.ratings.versions`), updated in the same atomic step that writes a
result; the leaderboard is computed from those counts, never by re-reading
results.
"""

from arena.ratings.counts import PairCount, PairCounts, add_game, counts_from_rows, pair_key
from arena.ratings.elo import INITIAL_RATING, elo_update, expected_score
from arena.ratings.online import (
    HISTORY_EVERY,
    HISTORY_MAX,
    Leg,
    Part,
    duplicate_score,
    history_points,
    quartet_scores,
)
from arena.ratings.pools import (
    LADDER_PREFIX,
    TOURNAMENT_PREFIX,
    ladder_id,
    ladder_pool,
    pools_of,
    preset_pool,
    tournament_pool,
)

__all__ = [
    "HISTORY_EVERY",
    "HISTORY_MAX",
    "INITIAL_RATING",
    "LADDER_PREFIX",
    "TOURNAMENT_PREFIX",
    "Leg",
    "PairCount",
    "PairCounts",
    "Part",
    "add_game",
    "counts_from_rows",
    "duplicate_score",
    "elo_update",
    "expected_score",
    "history_points",
    "ladder_id",
    "ladder_pool",
    "pair_key",
    "pools_of",
    "preset_pool",
    "quartet_scores",
    "tournament_pool",
]
