"""Which matches of a tournament deal the same cards, read from their ids alone, and the seal rule.

A tournament's match ids say where each match stands in its schedule
(:mod:`arena.tournament.tournament`), so anyone holding an id knows, without
reading any store, which other matches deal the same cards:

- ``{tid}-r{r}-{i}``: a single match; its deals are its own.
- ``{tid}-r{r}-{i}-leg0`` and ``-leg1``: the two legs of a *mirror* duplicate
  pair, the same seed with the sides swapped (each bot sees both seats).
- ``{tid}-r{r}-{i}-t0`` .. ``-t3``: the four tables of a *field* duplicate
  quartet (:mod:`arena.tournament.quartet`); tables 0 and 1 deal board set 0,
  tables 2 and 3 board set 1, each seat held by a different bot at each table.
  A quartet whose last two sides only fill the tables (their own comparison is
  not scored) names its tables ``-f0`` .. ``-f3``.

Each pairing's seed is derived from its *seed label* under the tournament's
secret: ``r{r}-{i}`` for a single match and a mirror pair (both legs),
``r{r}-{i}-s{k // 2}`` for table ``k`` of a quartet.

**The seal rule** (:func:`is_sealed`): a match whose cards another table also
deals is sealed, its record, seed and public events shown to nobody, until
every table that deals them has a result. The node's gRPC service and its web
reads both ask this one function (:func:`sealed_of` for a list of matches at
once: a bot's recent matches).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

_LEG = re.compile(r"(.+-r\d+-\d+)-leg([01])")
_TABLE = re.compile(r"(.+-r\d+-\d+)-([tf])([0-3])")
_PAIRING = re.compile(r"(.+)-r\d+-\d+")

#: the letter of a quartet's tables: ``t`` when both its comparisons are scored, ``f`` when its
#: last two sides only fill the tables
SCORED, FILLED = "t", "f"


def pairing_id(match_id: str) -> str:
    """The id of the pairing a match belongs to: the match's own, its mirror pair's or its quartet's."""
    found = _LEG.fullmatch(match_id) or _TABLE.fullmatch(match_id)
    return found.group(1) if found else match_id


def tournament_of(match_id: str) -> str | None:
    """The id of the tournament a mirror leg or a quartet's table belongs to (``{tid}-r{r}-{i}-...``),
    else None."""
    if not is_duplicate_match(match_id):
        return None
    found = _PAIRING.fullmatch(pairing_id(match_id))
    return None if found is None else found.group(1)


def duplicate_legs(match_id: str) -> tuple[str, str] | None:
    """Both legs' match ids when ``match_id`` is a leg of a mirror duplicate pair, else None."""
    found = _LEG.fullmatch(match_id)
    return None if found is None else (f"{found.group(1)}-leg0", f"{found.group(1)}-leg1")


def quartet_table(match_id: str) -> tuple[str, int, bool] | None:
    """``(quartet id, table 0..3, both comparisons scored)`` when ``match_id`` is a table of a
    field duplicate quartet, else None."""
    found = _TABLE.fullmatch(match_id)
    return None if found is None else (found.group(1), int(found.group(3)), found.group(2) == SCORED)


def quartet_tables(quartet_id: str, scored: bool = True) -> tuple[str, str, str, str]:
    """The match ids of a quartet's four tables, in table order."""
    letter = SCORED if scored else FILLED
    t0, t1, t2, t3 = (f"{quartet_id}-{letter}{k}" for k in range(4))
    return t0, t1, t2, t3


def is_duplicate_match(match_id: str) -> bool:
    """Whether the match's cards are dealt at another table too (a mirror leg or a quartet's table)."""
    return _LEG.fullmatch(match_id) is not None or _TABLE.fullmatch(match_id) is not None


def seed_label(tournament_id: str, match_id: str) -> str:
    """What a match's seed is derived from under its tournament's secret (see the module doc)."""
    table = quartet_table(match_id)
    base = pairing_id(match_id)
    label = base if table is None else f"{base}-s{table[1] // 2}"
    prefix = f"{tournament_id}-"
    return label[len(prefix):] if label.startswith(prefix) else label


def shared_deals(match_id: str) -> tuple[str, ...]:
    """Every match that deals the cards ``match_id`` deals, itself included (itself alone for a
    match whose deals are its own)."""
    legs = duplicate_legs(match_id)
    if legs is not None:
        return legs
    table = quartet_table(match_id)
    if table is None:
        return (match_id,)
    quartet, k, scored = table
    tables = quartet_tables(quartet, scored)
    first = k - k % 2
    return tables[first], tables[first + 1]


def sealed_reason(match_id: str) -> str:
    """Why a sealed match is not shown, in words a caller understands."""
    if duplicate_legs(match_id) is not None:
        return f"{match_id} is a leg of a duplicate pair: it is shown once both legs are over"
    return (f"{match_id} is a table of a duplicate quartet: it is shown once both tables that deal its "
            f"cards are over")


def is_sealed(match_id: str, has_result: Callable[[str], bool]) -> bool:
    """Whether the match's record, seed and public events must stay hidden: some table that deals
    its cards (itself included) has no result yet, so they may still be in play. A match whose
    deals are its own is never sealed by this rule (its seed is hidden while it runs anyway).

    ``has_result(match_id)`` says whether a match's result is written; it is asked of each table
    in turn, and no more once one answers no."""
    tables = shared_deals(match_id)
    return len(tables) > 1 and not all(has_result(t) for t in tables)


def sealed_of(match_ids: Iterable[str], written: Callable[[list[str]], set[str]]) -> set[str]:
    """Those of ``match_ids`` that :func:`is_sealed` says are sealed, asking ``written`` once, for
    every table that deals their cards, which of them have a result: one read for a whole list."""
    shared = {m: shared_deals(m) for m in dict.fromkeys(match_ids) if is_duplicate_match(m)}
    if not shared:
        return set()
    done = written(list(dict.fromkeys(t for tables in shared.values() for t in tables)))
    return {m for m, tables in shared.items() if not all(t in done for t in tables)}
