"""Rulesets: every named option of docs/rules.md#ruleset-options, and the four presets.

A ruleset is a preset name, or a preset with some options overridden::

    Ruleset.from_spec("coinche")
    Ruleset.from_spec({"preset": "classic", "must_undertrump": False})

An unknown preset or option, or a bad value, raises :class:`RulesetError`.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any, Literal

from arena.engine.errors import RulesetError, shown

Game = Literal["classic", "coinche"]
BeloteMode = Literal["automatic", "declared"]
Rounding = Literal["none", "nearest10"]


@dataclass(frozen=True, slots=True)
class Ruleset:
    """All the options that change how a deal or a match is played and scored."""

    preset: str
    game: Game
    target: int
    annonces: bool
    belote: BeloteMode
    belote_counts_against_takers: bool
    must_undertrump: bool
    cut_min: int
    rounding: Rounding
    max_bid: int = 160
    deals: int | None = None
    redeal_low_hand: bool = False
    redeal_four_sevens: bool = False

    @property
    def is_coinche(self) -> bool:
        return self.game == "coinche"

    def __post_init__(self) -> None:
        if self.game not in ("classic", "coinche"):
            raise RulesetError(f"game must be 'classic' or 'coinche', not {shown(self.game)}")
        if self.belote not in ("automatic", "declared"):
            raise RulesetError(f"belote must be 'automatic' or 'declared', not {shown(self.belote)}")
        if self.rounding not in ("none", "nearest10"):
            raise RulesetError(f"rounding must be 'none' or 'nearest10', not {shown(self.rounding)}")
        for name in ("annonces", "belote_counts_against_takers", "must_undertrump",
                     "redeal_low_hand", "redeal_four_sevens"):
            if not isinstance(getattr(self, name), bool):
                raise RulesetError(f"{name} must be true or false, not {shown(getattr(self, name))}")
        for name in ("target", "cut_min", "max_bid"):
            if not _is_int(getattr(self, name)):
                raise RulesetError(f"{name} must be a whole number, not {shown(getattr(self, name))}")
        if self.target < 1:
            raise RulesetError(f"target must be positive, not {self.target}")
        if not 1 <= self.cut_min <= 16:
            raise RulesetError(f"cut_min must be between 1 and 16, not {self.cut_min}")
        if self.max_bid % 10 or not 80 <= self.max_bid <= 240:
            raise RulesetError(f"max_bid must be a multiple of 10 from 80 to 240, not {self.max_bid}")
        if self.deals is not None and (not _is_int(self.deals) or self.deals < 1):
            raise RulesetError(f"deals must be a positive whole number or null, not {shown(self.deals)}")
        if self.redeal_low_hand and self.game != "classic":
            raise RulesetError(
                "redeal_low_hand is a classic option (source 004): a hand 'without trump' "
                "has no meaning before a coinche auction"
            )

    @classmethod
    def from_spec(cls, spec: str | dict[str, Any] | Ruleset) -> Ruleset:
        """A ruleset from a preset name or ``{"preset": name, option: value, ...}``."""
        if isinstance(spec, Ruleset):
            return spec
        if isinstance(spec, str):
            return preset(spec)
        if not isinstance(spec, dict):
            raise RulesetError(f"a ruleset is a preset name or an object, not {shown(spec)}")
        options = dict(spec)
        name = options.pop("preset", None)
        if not isinstance(name, str):
            raise RulesetError(f"a ruleset object needs a 'preset' name, one of {', '.join(PRESETS)}")
        base = preset(name)
        unknown = sorted(set(options) - set(OPTION_NAMES))
        if unknown:
            raise RulesetError(
                f"unknown ruleset option {', '.join(map(shown, unknown))}; "
                f"known: {', '.join(OPTION_NAMES)}"
            )
        if not options:
            return base
        return dataclasses.replace(base, **options)

    def to_spec(self) -> str | dict[str, Any]:
        """The shortest spec that rebuilds this ruleset (a preset name if unchanged)."""
        base = preset(self.preset)
        diff = {n: getattr(self, n) for n in OPTION_NAMES if getattr(self, n) != getattr(base, n)}
        if not diff:
            return self.preset
        return {"preset": self.preset, **diff}

    def with_options(self, **options: Any) -> Ruleset:
        unknown = sorted(set(options) - set(OPTION_NAMES))
        if unknown:
            raise RulesetError(f"unknown ruleset option {', '.join(map(shown, unknown))}")
        return dataclasses.replace(self, **options)


def _is_int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


PRESETS: dict[str, Ruleset] = {
    "classic": Ruleset(
        preset="classic", game="classic", target=501, annonces=False, belote="automatic",
        belote_counts_against_takers=True, must_undertrump=True, cut_min=3, rounding="none",
    ),
    "classic-annonces": Ruleset(
        preset="classic-annonces", game="classic", target=501, annonces=True,
        belote="automatic", belote_counts_against_takers=True, must_undertrump=True,
        cut_min=3, rounding="none",
    ),
    "club": Ruleset(
        preset="club", game="classic", target=501, annonces=False, belote="declared",
        belote_counts_against_takers=False, must_undertrump=True, cut_min=2, rounding="none",
    ),
    "coinche": Ruleset(
        preset="coinche", game="coinche", target=1000, annonces=True, belote="declared",
        belote_counts_against_takers=True, must_undertrump=False, cut_min=3,
        rounding="nearest10",
    ),
}

#: the options a ruleset object may override; the game itself comes with the preset
OPTION_NAMES: tuple[str, ...] = tuple(
    f.name for f in dataclasses.fields(Ruleset) if f.name not in ("preset", "game")
)


def spec_from_text(text: str, what: str = "the ruleset") -> str | dict[str, Any]:
    """A ruleset spec as typed or sent as text: a preset name, or a JSON object of options."""
    text = text.strip()
    if not text.startswith("{"):
        return text
    try:
        spec = json.loads(text)
    except json.JSONDecodeError as e:
        raise RulesetError(f"{what} is not valid JSON: {e.msg} at column {e.colno}") from None
    if not isinstance(spec, dict):
        raise RulesetError("a ruleset is a preset name or a JSON object")
    return spec


def spec_to_text(spec: str | dict[str, Any]) -> str:
    """A ruleset spec as text, as :func:`spec_from_text` reads it back: a preset's name as it is, an
    object of options as JSON. (Not ``json.dumps`` of a name: its quotes would be part of the name.)"""
    return spec if isinstance(spec, str) else json.dumps(spec, separators=(",", ":"))


def preset(name: str) -> Ruleset:
    try:
        return PRESETS[name]
    except (KeyError, TypeError):
        raise RulesetError(f"unknown preset {shown(name)}; known: {', '.join(PRESETS)}") from None
