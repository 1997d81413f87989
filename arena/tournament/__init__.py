"""Tournament formats, duplicate play (field quartets and mirror pairs), SPRT and standings (pure).

Build a :class:`Tournament` from a :class:`TournamentSpec` and ask it, from
the results written so far, what to enqueue next (``jobs_for``), whether it
is over (``is_finished``), the ``standings`` and, for the sprt format, the
``sprt_state``. Nothing here reads the clock; every random choice (Swiss tie
order, knockout coin) comes from the spec's seed. :class:`Tournaments`
advances them against a :class:`TournamentStore` (the queue's brokers are
ones), which is the only I/O of this package, and reads their progress.
"""

from arena.tournament.advance import (
    Progress,
    TournamentClosed,
    TournamentExists,
    Tournaments,
    TournamentStore,
    UnknownTournament,
)
from arena.tournament.duplicate import deal_scores, duplicate_score
from arena.tournament.jobs import MatchJob, MatchResult, TournamentState
from arena.tournament.spec import (
    DUPLICATE_MODES,
    FORMATS,
    MIRROR_NOTE,
    Duplicate,
    Format,
    SprtOptions,
    TournamentError,
    TournamentSpec,
    default_duplicate,
)
from arena.tournament.sprt import (
    SequentialTest,
    SprtState,
    bounds,
    elo_to_score,
    pentanomial,
    run_sprt,
    score_interval,
)
from arena.tournament.standings import Game, Standing
from arena.tournament.tournament import Pairing, Stage, Tournament

__all__ = [
    "DUPLICATE_MODES",
    "FORMATS",
    "MIRROR_NOTE",
    "Duplicate",
    "Format",
    "Game",
    "MatchJob",
    "MatchResult",
    "Pairing",
    "Progress",
    "SequentialTest",
    "SprtOptions",
    "SprtState",
    "Stage",
    "Standing",
    "Tournament",
    "TournamentClosed",
    "TournamentError",
    "TournamentExists",
    "TournamentSpec",
    "TournamentState",
    "TournamentStore",
    "Tournaments",
    "UnknownTournament",
    "bounds",
    "deal_scores",
    "default_duplicate",
    "duplicate_score",
    "elo_to_score",
    "pentanomial",
    "run_sprt",
    "score_interval",
]
