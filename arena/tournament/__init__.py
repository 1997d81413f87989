"""Tournament formats, duplicate play, SPRT and standings (pure).

Build a :class:`Tournament` from a :class:`TournamentSpec` and ask it, from
the results written so far, what to enqueue next (``jobs_for``), whether it
is over (``is_finished``), the ``standings`` and, for the sprt format, the
``sprt_state``. Nothing here does I/O or reads the clock; every random choice
(Swiss tie order, knockout coin) comes from the spec's seed.
"""

from arena.tournament.duplicate import deal_scores, duplicate_score
from arena.tournament.spec import FORMATS, Format, SprtOptions, TournamentError, TournamentSpec
from arena.tournament.sprt import SequentialTest, SprtState, bounds, elo_to_score, llr, pentanomial, run_sprt
from arena.tournament.standings import Game, Standing
from arena.tournament.tournament import Pairing, Stage, Tournament

__all__ = [
    "FORMATS",
    "Format",
    "Game",
    "Pairing",
    "SequentialTest",
    "SprtOptions",
    "SprtState",
    "Stage",
    "Standing",
    "Tournament",
    "TournamentError",
    "TournamentSpec",
    "bounds",
    "deal_scores",
    "duplicate_score",
    "elo_to_score",
    "llr",
    "pentanomial",
    "run_sprt",
]
