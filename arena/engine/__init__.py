"""The rules of Belote and Coinche as docs/rules.md states them: pure, typed, seeded.

Glossary of the French terms kept in names (English has none):

- *belote* / *rebelote*: king and queen of trump in one hand, 20 points;
- *capot*: one side takes all eight tricks;
- *dix de der*: the 10 points of the last trick;
- *litige*: a classic deal where takers and defence tie; the takers' points
  are held for the next played deal;
- *dedans*: the takers failed their contract;
- *retourne*: the card turned up in classic, proposing its suit as trump;
- *coinche* / *surcoinche*: double / redouble of a coinche contract;
- *annonces*: declarations (tierce, cinquante, cent, carré).

Two builds of the same modules: pure Python (the reference, what ``pip install`` gives) and an
optional one compiled with mypyc (``python scripts/build_engine.py``). :data:`BUILD` says which
one is loaded (``"compiled"`` or ``"pure"``) and :data:`BUILD_NOTE` why; ``BELOTE_ENGINE=pure``
forces the pure one (see :mod:`arena.engine._build`).
"""

from arena.engine import _build

# before any other module of the engine is imported: it decides where they are found (so the
# imports below come after it)
# ruff: noqa: E402
BUILD, BUILD_NOTE = _build.choose(__path__)

from arena.engine.actions import format_action, parse_action
from arena.engine.cards import CARDS, Card, cards_of, format_cards, mask_of, parse_cards
from arena.engine.deal import Deal
from arena.engine.dealing import deal_from_rng, deal_rng, shuffle_and_cut
from arena.engine.errors import (
    ActionError,
    CardError,
    EngineError,
    IllegalActionError,
    RecordError,
    RulesetError,
)
from arena.engine.match import Match, MatchOverError
from arena.engine.observation import Observation, observe
from arena.engine.record import deal_record, match_record, replay_deal, replay_match
from arena.engine.rules import PRESETS, Ruleset
from arena.engine.scoring import DealOutcome, score_deal

__all__ = [
    "BUILD",
    "BUILD_NOTE",
    "CARDS",
    "PRESETS",
    "ActionError",
    "Card",
    "CardError",
    "Deal",
    "DealOutcome",
    "EngineError",
    "IllegalActionError",
    "Match",
    "MatchOverError",
    "Observation",
    "RecordError",
    "Ruleset",
    "RulesetError",
    "cards_of",
    "deal_from_rng",
    "deal_record",
    "deal_rng",
    "format_action",
    "format_cards",
    "mask_of",
    "match_record",
    "observe",
    "parse_action",
    "parse_cards",
    "replay_deal",
    "replay_match",
    "score_deal",
    "shuffle_and_cut",
]
