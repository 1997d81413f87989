"""Rating pools: which results a rating counts.

A rating belongs to a pool. Every result counts in its tournament's own pool
(:func:`tournament_pool`), and, when the tournament is rated, in the pool of
its ruleset preset across every tournament (:func:`preset_pool`): a coinche
result never moves a classic rating. A tournament whose seed a user chose
(``unrated_reason``) counts in its own pool only.

A pool's ladder (:mod:`arena.tournament.ladder`) is no tournament: its matches
carry the id :func:`ladder_id` of the pool as their tournament id, and their
results count in that pool only (a ladder has no pool of its own: its games
are the pool's). No tournament can take such an id
(:class:`~arena.tournament.spec.TournamentSpec` refuses the prefix), so a
result under it is a ladder's.
"""

from __future__ import annotations

from arena.records import RulesetSpec

#: the prefix of a tournament's own pool
TOURNAMENT_PREFIX = "tournament:"
#: the prefix of a ladder's matches' tournament id (``ladder:coinche``): reserved, no tournament has it
LADDER_PREFIX = "ladder:"


def preset_pool(ruleset: RulesetSpec) -> str:
    """The pool of a ruleset across tournaments: its preset name (``classic``, ``coinche``...), or
    ``<preset>+custom`` when options change the preset's rules."""
    if isinstance(ruleset, str):
        return ruleset
    preset = str(ruleset.get("preset", "classic"))
    return preset if set(ruleset) <= {"preset"} else f"{preset}+custom"


def tournament_pool(tournament_id: str) -> str:
    return f"{TOURNAMENT_PREFIX}{tournament_id}"


def pools_of(tournament_id: str, ruleset: RulesetSpec, *, rated: bool) -> tuple[str, ...]:
    """The pools a result of this tournament counts in: its own, and its preset's when rated."""
    own = tournament_pool(tournament_id)
    return (own, preset_pool(ruleset)) if rated else (own,)


def ladder_id(pool: str) -> str:
    """The tournament id a pool's ladder matches carry."""
    return f"{LADDER_PREFIX}{pool}"


def ladder_pool(tournament_id: str) -> str | None:
    """The pool whose ladder the id names (None: not a ladder's)."""
    if tournament_id.startswith(LADDER_PREFIX) and len(tournament_id) > len(LADDER_PREFIX):
        return tournament_id[len(LADDER_PREFIX):]
    return None
