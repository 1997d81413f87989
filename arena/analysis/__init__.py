"""Analysis of played deals: the double-dummy solver of the card play (docs/analysis.md).

Pure, as the engine: standard library only, no clock, no I/O, no random state. It may import
:mod:`arena.engine` and nothing else of the arena (tests/test_layers.py).

- :class:`Position`: a point of a deal's card play, every hand known (:func:`positions_of_record_deal`
  gives the one before each card of a recorded deal);
- :func:`solve`: the margin (a side's deal score less the other's) of the side to play under
  perfect play by all four; :func:`card_values` and :func:`action_values`: the margin of each
  legal card or action; :func:`scores`: each team's deal score; :func:`principal_variation`.
"""

from arena.analysis.position import Position, PositionError, Solver, positions_of_record_deal
from arena.analysis.solve import (
    action_values,
    card_values,
    principal_actions,
    principal_variation,
    scores,
    solve,
)

__all__ = [
    "Position",
    "PositionError",
    "Solver",
    "action_values",
    "card_values",
    "positions_of_record_deal",
    "principal_actions",
    "principal_variation",
    "scores",
    "solve",
]
