"""The seal rule on a node of a queue: which tables of duplicate play are still hidden.

A table whose cards another table deals too is sealed, its record, seed,
totals, result and events shown to nobody, until every table dealing them is
over (:func:`arena.tournament.tables.is_sealed`); or, for tables a cancel cut,
once its tournament's secret is revealed (then no deal of it can be played
any more, and every one is public). Every view of a match asks here: GetMatch,
GetMatchRecord, WatchMatch, ListMatches, a bot's recent matches (GetBot and
the web's bot page), and the web's match views.

These read the broker: call them in a thread, never on the event loop. A
list of matches costs a few reads whatever its length (:func:`sealed_among`):
one for whether each table dealing their cards has a result, one for the
states of the tournaments of those sealed, and only for a tournament that
has ended, whether its secret is revealed.
"""

from __future__ import annotations

from collections.abc import Iterable

from belote.arena.v1 import arena_service_pb2 as apb

from arena.queue import Broker
from arena.tournament import Tournaments, UnknownTournament
from arena.tournament.tables import sealed_of, tournament_of


def sealed_among(broker: Broker, tournaments: Tournaments, match_ids: Iterable[str]) -> set[str]:
    """Those of ``match_ids`` that are sealed: some table dealing their cards has no result yet
    (:func:`arena.tournament.tables.sealed_of`, one read for the whole list), and their tournament's
    secret is not revealed (asked only of the tournaments of those, and only once they have ended)."""
    sealed = sealed_of(match_ids, broker.results_written)
    if not sealed:
        return sealed
    by_tournament: dict[str, set[str]] = {}
    for match_id in sealed:
        tid = tournament_of(match_id)
        if tid is not None:
            by_tournament.setdefault(tid, set()).add(match_id)
    for tid, state in broker.tournament_states(list(by_tournament)).items():
        if state.is_open:
            continue
        try:
            revealed = tournaments.secret_revealed(tid)
        except UnknownTournament:  # deleted meanwhile: nothing says its deals are public
            continue
        if revealed:
            sealed -= by_tournament[tid]
    return sealed


def still_sealed(broker: Broker, tournaments: Tournaments, match_id: str) -> bool:
    """Whether one match is sealed (:func:`sealed_among`)."""
    return match_id in sealed_among(broker, tournaments, (match_id,))


def seal(msg: apb.MatchSummary) -> None:
    """Leave out of a sealed table's summary what tells of its deals: its seed, totals, deals played
    and result (its state stays), and say that it is sealed."""
    msg.seed = ""
    del msg.totals[:]
    msg.deals_played = 0
    msg.ClearField("result")
    msg.sealed = True
