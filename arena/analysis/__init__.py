"""Analysis of played deals: the double-dummy solver of the card play (docs/analysis.md).

Pure, as the engine: standard library only, no clock, no I/O, no random state. It may import
:mod:`arena.engine` and nothing else of the arena (tests/test_layers.py).

- :class:`Position`: a point of a deal's card play, every hand known (:func:`positions_of_record_deal`
  gives the one before each card of a recorded deal);
- :func:`solve`: the margin (a side's deal score less the other's) of the side to play under
  perfect play by all four; :func:`card_values` and :func:`action_values`: the margin of each
  legal card or action; :func:`scores`: each team's deal score; :func:`principal_variation`.

Compiled with the engine's optional mypyc build (``python scripts/build_engine.py``): :data:`BUILD`
says which build of this package is loaded, :data:`BUILD_NOTE` why (see
:func:`arena.engine._build.choose_analysis`).
"""

from arena.engine import _build

# before the analysis's own modules are imported: it decides where they are found (so the imports
# below come after it): compiled with the engine's build when that one is loaded
# ruff: noqa: E402
BUILD, BUILD_NOTE = _build.choose_analysis(__path__)

from arena.analysis.position import Position, PositionError, Solver, positions_of_record_deal
from arena.analysis.values import (
    action_values,
    card_values,
    principal_actions,
    principal_variation,
    scores,
    solve,
)

__all__ = [
    "BUILD",
    "BUILD_NOTE",
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
