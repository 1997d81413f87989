"""What a tournament is: its format, bots, ruleset, match length and seed.

A :class:`TournamentSpec` is stored as a JSON object (``to_dict`` /
``from_dict``) next to the jobs, so every node rebuilds the same tournament
from it. Every mistake in a spec raises :class:`TournamentError` naming the
field and what it accepts.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, cast

from arena.engine import PRESETS, Ruleset, RulesetError
from arena.records import MAX_DEALS, MAX_TARGET

Format = Literal["round-robin", "gauntlet", "swiss", "knockout", "sprt", "partners"]
FORMATS: tuple[Format, ...] = ("round-robin", "gauntlet", "swiss", "knockout", "sprt", "partners")

#: how a tournament plays duplicate: not at all (""), in quartets where no bot sees a deal from two
#: seats ("field"), or in pairs whose two bots play both legs ("mirror")
Duplicate = Literal["", "field", "mirror"]
DUPLICATE_MODES: tuple[Duplicate, ...] = ("", "field", "mirror")
#: the formats that can play field duplicate (the others need the same two bots on both sides)
FIELD_FORMATS: tuple[Format, ...] = ("round-robin", "swiss", "partners")
#: the fewest bots of field duplicate: four sides (partners: two tables of four different bots)
FIELD_MIN_BOTS = 4
FIELD_MIN_PARTNERS = 8
#: what mirror duplicate exposes, said wherever a mirror tournament is created or shown
MIRROR_NOTE = ("mirror duplicate: both legs seen by both bots (each holds in one leg the hands its "
               "opponent held in the other, so a bot that remembers hands knows them)")
#: how a game of each duplicate mode is scored, said wherever its standings are shown: a side of field
#: duplicate may lose both its matches and win its game, which reads as a mistake unless it is said
DUPLICATE_SCORING: dict[str, str] = {
    "field": ("How a game is scored: each deal is played at two tables, and a side is compared with the "
              "side that held the same cards at the other table, against the same two opponents. A side's "
              "difference is its deal points minus its opponents' at its two tables; of the two sides "
              "compared, the better difference wins the game, and the standings' diff adds up the "
              "margins. So a side can lose both its matches and still win its game, when the side that "
              "held its cards lost them by more: lost 510-720 and 430-700 (-480) against 0-1720 twice "
              "(-3440) is a win by 2960. A forfeit at any of the four tables decides both games by the "
              "sides' match results instead."),
    "mirror": ("How a game is scored: the two bots play the same deals twice, the hands exchanged between "
               "the legs. A bot's difference is its deal points minus its opponent's over both legs; the "
               "better difference wins the game, and the standings' diff adds up the margins. A forfeit "
               "decides the game by the legs' match results instead."),
}

#: the most bots, rounds and SPRT pairs a tournament may have: a tournament is created by one call,
#: and what it schedules must stay within what the arena's nodes and its queue can hold
MAX_BOTS = 256
MAX_ROUNDS = 100
MAX_PAIRS = 100_000

#: the ladders' matches carry this tournament id prefix (arena.ratings.pools.LADDER_PREFIX, which
#: this layer cannot import): no tournament may take it
RESERVED_PREFIX = "ladder:"
#: a bot's version test (an SPRT between two of its versions, made by the arena itself: arena.node.versions)
#: has a tournament id with this prefix, and the worker and the ladder count its matches as a test's: no
#: caller may make a tournament with it (:func:`check_callers_id`)
TEST_PREFIX = "vt:"
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:@-]{0,127}")


class TournamentError(ValueError):
    """A bad tournament spec, or results that do not belong to the tournament."""


def check_callers_id(tournament_id: str) -> str:
    """``tournament_id``, if a caller (an admin, a schedule) may make a tournament with it: not a version
    test's (:data:`TEST_PREFIX`). The spec itself accepts such an id, for the version tests make and
    read theirs; every path that makes a tournament for a caller asks this first."""
    if tournament_id.startswith(TEST_PREFIX):
        raise TournamentError(
            f"tournament ids starting with {TEST_PREFIX!r} are the version tests' (the arena makes them, "
            f"and counts their matches as a bot's versions against each other): not {tournament_id[:80]!r}")
    return tournament_id


def _is_int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v: object) -> bool:
    return (isinstance(v, int | float) and not isinstance(v, bool)) and math.isfinite(v)


@dataclass(frozen=True)
class SprtOptions:
    """The SPRT's hypotheses and error rates (fishtest's defaults) and its batching.

    H0: the candidate is ``elo0`` stronger than the other bot; H1: ``elo1``
    stronger. ``alpha`` is the chance of accepting H1 when H0 holds, ``beta``
    the chance of accepting H0 when H1 holds: the test keeps both after any number of pairs, on
    any law of the pairs (:mod:`arena.tournament.sprt`). Pairs are scheduled ``batch_pairs`` at a
    time, at most ``max_pairs`` in all (pairs set aside included). No decision is taken before
    ``min_pairs`` pair results: an option, which the error rates do not need (a test by betting
    cannot decide before its gamblers could have won 20 times their stake: 8 pairs all won).
    """

    elo0: float = 0.0
    elo1: float = 5.0
    alpha: float = 0.05
    beta: float = 0.05
    batch_pairs: int = 16
    max_pairs: int = 1000
    min_pairs: int = 2

    def __post_init__(self) -> None:
        for name in ("elo0", "elo1", "alpha", "beta"):
            if not _is_number(getattr(self, name)):
                raise TournamentError(f"sprt.{name} must be a finite number, not {getattr(self, name)!r}")
        if not self.elo0 < self.elo1:
            raise TournamentError(f"sprt.elo0 ({self.elo0}) must be below sprt.elo1 ({self.elo1})")
        for name in ("alpha", "beta"):
            if not 0 < getattr(self, name) < 0.5:
                raise TournamentError(f"sprt.{name} must be between 0 and 0.5, not {getattr(self, name)}")
        if not _is_int(self.batch_pairs) or self.batch_pairs < 1:
            raise TournamentError(f"sprt.batch_pairs must be a whole number >= 1, not {self.batch_pairs!r}")
        if not _is_int(self.max_pairs) or not 2 <= self.max_pairs <= MAX_PAIRS:
            raise TournamentError(f"sprt.max_pairs must be a whole number from 2 to {MAX_PAIRS}, "
                                  f"not {self.max_pairs!r}")
        if not _is_int(self.min_pairs) or not 2 <= self.min_pairs <= self.max_pairs:
            raise TournamentError(f"sprt.min_pairs must be a whole number from 2 to sprt.max_pairs "
                                  f"({self.max_pairs}), not {self.min_pairs!r}")
        if self.batch_pairs > self.max_pairs:
            raise TournamentError(f"sprt.batch_pairs ({self.batch_pairs}) must not exceed sprt.max_pairs "
                                  f"({self.max_pairs})")

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"elo0": self.elo0, "elo1": self.elo1, "alpha": self.alpha, "beta": self.beta,
                               "batch_pairs": self.batch_pairs, "max_pairs": self.max_pairs}
        if self.min_pairs != 2:  # as specs were before it: older nodes read them
            out["min_pairs"] = self.min_pairs
        return out

    @classmethod
    def from_dict(cls, data: object) -> SprtOptions:
        if not isinstance(data, Mapping):
            raise TournamentError(f"sprt must be an object of options, not {data!r}")
        known = ("elo0", "elo1", "alpha", "beta", "batch_pairs", "max_pairs", "min_pairs")
        unknown = sorted(set(data) - set(known))
        if unknown:
            raise TournamentError(
                f"unknown sprt option {', '.join(map(repr, unknown))}; known: {', '.join(known)}"
            )
        return cls(**{k: data[k] for k in known if k in data})


@dataclass(frozen=True)
class TournamentSpec:
    """A tournament, enough to schedule every match of it deterministically.

    - ``format``: ``round-robin`` (every pairing, both seatings), ``gauntlet``
      (``candidate`` against each other bot, both seatings), ``swiss``,
      ``knockout`` (bracket seeded in the order of ``bots``) or ``sprt``
      (``bots`` are exactly two, the first the candidate, playing duplicate
      pairs until the SPRT decides) or ``partners`` (4 or more bots at tables of
      four, partnerships rotating each round: :mod:`arena.tournament.partners`;
      a bot's points are its side's).
    - ``deals``: a fixed number of deals a match, scored by points; otherwise
      matches play to ``target`` (default: the ruleset's target).
    - ``duplicate``: ``""`` (none), ``"field"`` or ``"mirror"`` (needs
      ``deals``). Field: each deal is played at two tables by four different
      sides, each bot scored against the one that held the same cards
      (:mod:`arena.tournament.quartet`); no bot ever sees a deal from two
      seats. Round-robin, Swiss (4 or more bots) and partners (8 or more).
      Mirror: each pairing is two legs on the same seed and decks with the
      bots swapped between the teams, so both bots see both legs
      (:data:`MIRROR_NOTE`); sprt always plays it, the other formats only
      when asked. :func:`default_duplicate` is what "duplicate" with no mode
      means.
    - ``rounds``: round-robin and gauntlet repeats (default 1); Swiss rounds
      (default ceil(log2(bots))); partners rounds (default bots - 1); not used by knockout and sprt.
    - ``seed``: the tournament's secret, the root of every match seed
      (:func:`arena.engine.dealing.derive_seed` over each pairing's id). A
      node makes it from its own secret and publishes only its commitment
      until the tournament is over; one given by a person (a test, a
      reproduction) makes the deals known in advance, and ``unrated_reason``
      says so. Default, for pure uses of this class: the tournament id.
    - ``unrated_reason``: why the results should not count for ratings ("": rated).
    """

    tournament_id: str
    format: Format
    bots: tuple[str, ...]
    ruleset: Ruleset = PRESETS["classic"]
    candidate: str | None = None
    deals: int | None = None
    target: int | None = None
    duplicate: Duplicate = ""
    rounds: int | None = None
    seed: str = ""
    sprt: SprtOptions | None = None
    unrated_reason: str = ""

    def __post_init__(self) -> None:
        tid = self.tournament_id
        if not isinstance(tid, str) or not _ID.fullmatch(tid):
            raise TournamentError(
                f"tournament_id must be 1-128 letters, digits or _ . : @ - (starting with a letter "
                f"or digit), not {tid!r}"
            )
        if tid.startswith(RESERVED_PREFIX):
            raise TournamentError(f"tournament ids starting with {RESERVED_PREFIX!r} are the ladders' "
                                  f"(their matches' results count in the pool): not {tid!r}")
        if self.format not in FORMATS:
            raise TournamentError(f"format must be one of {', '.join(FORMATS)}, not {self.format!r}")
        self._check_bots()
        self._check_ruleset()
        self._check_length()
        self._check_rounds()
        if not isinstance(self.seed, str):
            raise TournamentError(f"seed must be a string, not {self.seed!r}")
        if not isinstance(self.unrated_reason, str):
            raise TournamentError(f"unrated_reason must be a string, not {self.unrated_reason!r}")
        if self.seed == "":
            object.__setattr__(self, "seed", tid)
        if self.format == "sprt":
            if self.sprt is None:
                object.__setattr__(self, "sprt", SprtOptions())
            if self.duplicate != "mirror":
                raise TournamentError("sprt plays mirror duplicate pairs (both legs seen by both bots): "
                                      "duplicate must be 'mirror'")
        elif self.sprt is not None:
            raise TournamentError(f"sprt options are only for the sprt format, not {self.format}")
        if self.sprt is not None and not isinstance(self.sprt, SprtOptions):
            raise TournamentError(f"sprt must be SprtOptions, not {self.sprt!r}")

    def _check_bots(self) -> None:
        bots = self.bots
        if not isinstance(bots, tuple) or not all(isinstance(b, str) and b.strip() for b in bots):
            raise TournamentError(f"bots must be a list of bot names (non-empty strings), not {bots!r}")
        if len(set(bots)) != len(bots):
            twice = sorted({b for b in bots if bots.count(b) > 1})
            raise TournamentError(f"bots must be distinct; named more than once: {', '.join(twice)}")
        if not 2 <= len(bots) <= MAX_BOTS:
            raise TournamentError(f"a tournament needs 2 to {MAX_BOTS} bots, not {len(bots)}")
        cand = self.candidate
        if self.format == "gauntlet":
            if cand is None:
                raise TournamentError("a gauntlet needs a candidate: the bot that plays the field")
            if cand not in bots:
                raise TournamentError(f"candidate {cand!r} is not one of the bots ({', '.join(bots)})")
        elif self.format == "sprt":
            if len(bots) != 2:
                raise TournamentError(f"sprt compares exactly 2 bots (the candidate first), not {len(bots)}")
            if cand is not None and cand != bots[0]:
                raise TournamentError(f"sprt's candidate is the first bot, {bots[0]!r}, not {cand!r}")
        elif cand is not None:
            raise TournamentError(f"candidate is for gauntlet and sprt, not {self.format}")
        if self.format == "partners" and len(bots) < 4:
            raise TournamentError(f"partners seats four different bots a table: it needs at least 4, "
                                  f"not {len(bots)}")

    def _check_ruleset(self) -> None:
        if not isinstance(self.ruleset, Ruleset):
            raise TournamentError(f"ruleset must be a Ruleset, not {self.ruleset!r}")
        if self.ruleset.deals is not None:
            raise TournamentError(
                "give the number of deals as the tournament's 'deals', not as a ruleset option"
            )
        if self.target is None and self.ruleset.target > MAX_TARGET:
            raise TournamentError(
                f"the ruleset's target must be at most {MAX_TARGET}, not {self.ruleset.target}"
            )

    def _check_length(self) -> None:
        for name, high in (("deals", MAX_DEALS), ("target", MAX_TARGET)):
            v = getattr(self, name)
            if v is not None and (not _is_int(v) or not 1 <= v <= high):
                raise TournamentError(f"{name} must be a whole number from 1 to {high}, or null, not {v!r}")
        if self.deals is not None and self.target is not None:
            raise TournamentError("give either deals (a fixed number of deals) or target, not both")
        if self.duplicate not in DUPLICATE_MODES or not isinstance(self.duplicate, str):
            raise TournamentError(f"duplicate must be '' (none), 'field' or 'mirror', not {self.duplicate!r}")
        if self.duplicate and self.deals is None:
            raise TournamentError(
                "duplicate play needs a fixed number of deals ('deals'), so every table plays the same decks"
            )
        if self.duplicate == "field":
            self._check_field()

    def _check_field(self) -> None:
        """Field duplicate needs four different sides at the two tables of a board set."""
        fmt, n = self.format, len(self.bots)
        mirror = "ask for duplicate 'mirror' (both legs seen by both bots) to play it knowingly"
        if fmt not in FIELD_FORMATS:
            raise TournamentError(f"field duplicate is for {', '.join(FIELD_FORMATS)}: a {fmt} needs the "
                                  f"same two bots on both sides; {mirror}")
        least = FIELD_MIN_PARTNERS if fmt == "partners" else FIELD_MIN_BOTS
        if n < least:
            tables = " (two tables of four different bots on one board set)" if fmt == "partners" else ""
            raise TournamentError(f"field duplicate needs at least {least} bots{tables}, not {n}; {mirror}")

    def _check_rounds(self) -> None:
        r = self.rounds
        if r is None:
            return
        if self.format in ("knockout", "sprt"):
            raise TournamentError(f"rounds is not an option of {self.format} (it has as many as it needs)")
        if not _is_int(r) or not 1 <= r <= MAX_ROUNDS:
            raise TournamentError(f"rounds must be a whole number from 1 to {MAX_ROUNDS}, not {r!r}")

    # ------------------------------------------------------------ derived
    @property
    def round_count(self) -> int:
        """Round-robin/gauntlet repeats, Swiss rounds, knockout rounds; 0 for sprt (open-ended)."""
        n = len(self.bots)
        if self.format == "knockout":
            return max(1, (n - 1).bit_length())
        if self.format == "sprt":
            return 0
        if self.rounds is not None:
            return self.rounds
        if self.format == "partners":
            return min(n - 1, MAX_ROUNDS)
        return max(1, math.ceil(math.log2(n))) if self.format == "swiss" else 1

    @property
    def match_target(self) -> int | None:
        """The target of every match, or None when matches play a fixed number of deals."""
        if self.deals is not None:
            return None
        return self.ruleset.target if self.target is None else self.target

    @property
    def duplicate_note(self) -> str:
        """What its duplicate mode lets a bot see that it should not, said where it is shown ("": nothing)."""
        return MIRROR_NOTE if self.duplicate == "mirror" else ""

    @property
    def duplicate_scoring(self) -> str:
        """How a game of its duplicate mode is scored (:data:`DUPLICATE_SCORING`; "": no duplicate)."""
        return DUPLICATE_SCORING.get(self.duplicate, "")

    @property
    def sprt_options(self) -> SprtOptions:
        if self.sprt is None:
            raise TournamentError(f"a {self.format} tournament has no SPRT")
        return self.sprt

    # -------------------------------------------------------------- JSON
    def to_dict(self) -> dict[str, Any]:
        """The spec as a JSON object; :meth:`from_dict` reads it back equal."""
        return {
            "tournament_id": self.tournament_id,
            "format": self.format,
            "bots": list(self.bots),
            "candidate": self.candidate,
            "ruleset": self.ruleset.to_spec(),
            "deals": self.deals,
            "target": self.target,
            "duplicate": self.duplicate,
            "rounds": self.rounds,
            "seed": self.seed,
            "sprt": None if self.sprt is None else self.sprt.to_dict(),
            "unrated_reason": self.unrated_reason,
        }

    @classmethod
    def from_dict(cls, data: object) -> TournamentSpec:
        """A spec from its JSON object; unknown keys and bad values raise :class:`TournamentError`."""
        if not isinstance(data, Mapping):
            raise TournamentError(f"a tournament spec is a JSON object, not {type(data).__name__}")
        unknown = sorted(set(data) - set(_KEYS))
        if unknown:
            raise TournamentError(
                f"unknown tournament field {', '.join(map(repr, unknown))}; known: {', '.join(_KEYS)}"
            )
        for key in ("tournament_id", "format", "bots"):
            if key not in data:
                raise TournamentError(f"a tournament spec needs {key!r}")
        bots = data["bots"]
        if not isinstance(bots, list | tuple):
            raise TournamentError(f"bots must be a list of bot names, not {bots!r}")
        fmt = data["format"]
        if fmt not in FORMATS:
            raise TournamentError(f"format must be one of {', '.join(FORMATS)}, not {fmt!r}")
        ruleset_spec = data.get("ruleset", "classic")
        if isinstance(ruleset_spec, Mapping) and "deals" in ruleset_spec:
            raise TournamentError(
                "give the number of deals as the tournament's 'deals', not as a ruleset option"
            )
        try:
            ruleset = Ruleset.from_spec(cast(Any, ruleset_spec))
        except (RulesetError, TypeError) as e:
            raise TournamentError(f"ruleset: {e}") from None
        sprt = data.get("sprt")
        seed = data.get("seed")
        return cls(
            tournament_id=data["tournament_id"],
            format=fmt,
            bots=tuple(bots),
            ruleset=ruleset,
            candidate=data.get("candidate"),
            deals=data.get("deals"),
            target=data.get("target"),
            duplicate=_stored_duplicate(data.get("duplicate", fmt == "sprt")),
            rounds=data.get("rounds"),
            seed="" if seed is None else seed,
            sprt=None if sprt is None else SprtOptions.from_dict(sprt),
            unrated_reason=data.get("unrated_reason", ""),
        )


def default_duplicate(fmt: str) -> Duplicate:
    """What "duplicate" with no mode means for a format: mirror for sprt (it compares two bots),
    field for every other (a format that cannot play it refuses it, naming 'mirror', so that
    mirror play is always chosen knowingly)."""
    return "mirror" if fmt == "sprt" else "field"


def _stored_duplicate(value: object) -> Any:
    """A stored spec's duplicate: ``true`` (what every duplicate spec was before the modes) is mirror,
    ``false`` none; a mode's word is itself (anything else is refused by the spec's check)."""
    if value is True:
        return "mirror"
    if value is False or value is None:
        return ""
    return value


_KEYS: tuple[str, ...] = (
    "tournament_id", "format", "bots", "candidate", "ruleset", "deals", "target", "duplicate",
    "rounds", "seed", "sprt", "unrated_reason",
)
