"""Records and results for tests that need one without playing it over gRPC.

:func:`record_of_match` wraps a match the engine played into the arena's
record, as a referee would write it (:func:`played_record` plays one at random,
as long as wanted); :func:`synthetic_record` makes a record
with no deals, when only how the match ended matters (a queue test, a
standings test).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from arena.engine import Match, Ruleset
from arena.records import MatchEnd, MatchRecord, ResultReason, RulesetSpec, SeatBot, TimeControl
from arena.tournament import Format, MatchJob, MatchResult, TournamentSpec


def _bots(team0: str, team1: str, seats: Sequence[str] | None = None) -> tuple[SeatBot, ...]:
    players = tuple(seats) if seats is not None else (team0, team1) * 2
    return tuple(SeatBot(seat, f"bot-{name}", name) for seat, name in enumerate(players))


def record_of_match(
    match_id: str, team0: str, team1: str, match: Match, reason: ResultReason = ResultReason.FINISHED,
    winner: int | str | None = "match", seats: Sequence[str] | None = None,
) -> MatchRecord:
    """The record of a match the engine played (every decision answered at once); ``seats``: the bot
    of each seat, when partners are different bots."""
    end = MatchEnd(totals=(match.totals[0], match.totals[1]),
                   winner=match.winner if winner == "match" else winner,  # type: ignore[arg-type]
                   reason=reason)
    return MatchRecord.of_match(
        match_id, match, list(seats) if seats is not None else [team0, team1, team0, team1],
        bots=_bots(team0, team1, seats), time_control=TimeControl(),
        latencies_us=[[0] * (len(d.bids) + len(d.plays)) for d in match.deals], strikes=[], result=end,
    )


def played_record(match_id: str, deals: int, seed: int = 1, team0: str = "alpha", team1: str = "beta",
                  ruleset: RulesetSpec = "coinche") -> MatchRecord:
    """The record of a match of ``deals`` deals played by the engine, each action drawn at random
    among the legal ones (a 1,000-deal match, the largest there is, in under a second)."""
    rules = Ruleset.from_spec(ruleset).with_options(deals=deals)
    match = Match(rules, seed)
    rng = random.Random(seed)
    while not match.is_over:
        deal = match.new_deal()
        while not deal.is_over:
            deal.apply(rng.choice(deal.legal_actions()))
        match.add(deal)
    return record_of_match(match_id, team0, team1, match)


def synthetic_record(
    match_id: str, team0: str, team1: str, totals: Sequence[int], winner: int | None, *,
    reason: ResultReason | str = ResultReason.FINISHED, seed: int | str = 0, ruleset: RulesetSpec = "classic",
    seats: Sequence[str] | None = None,
) -> MatchRecord:
    """A record without deals: only the totals, the winner and the reason count (``seats``: the bot
    of each seat, when partners are different bots)."""
    return MatchRecord(
        match_id=match_id, ruleset=ruleset, seed=seed,
        players=tuple(seats) if seats is not None else (team0, team1, team0, team1), deals=(),
        bots=_bots(team0, team1, seats), time_control=TimeControl(), latencies_us=(), strikes=(),
        result=MatchEnd(totals=(totals[0], totals[1]), winner=winner, reason=ResultReason(reason)),
    )


def result_of_job(
    job: MatchJob, totals: Sequence[int], winner: int | None, *, reason: ResultReason | str = "finished",
    node_id: str = "",
) -> MatchResult:
    """A result for ``job`` with a deal-less record."""
    record = synthetic_record(job.match_id, job.team0, job.team1, totals, winner, reason=reason,
                              seed=job.seed, ruleset=job.ruleset, seats=job.seats)
    return MatchResult.of_record(job, record, node_id)


def tournament_spec(tournament_id: str, fmt: Format = "round-robin", **fields: Any) -> TournamentSpec:
    """A valid spec of two bots, alpha and beta (a gauntlet's candidate is alpha)."""
    if fmt == "gauntlet":
        fields.setdefault("candidate", "alpha")
    return TournamentSpec(tournament_id=tournament_id, format=fmt, bots=("alpha", "beta"), **fields)
