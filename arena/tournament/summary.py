"""What a tournament (and a bot's list of recent matches) needs of a result, without its record.

A :class:`ResultSummary` is made once, when the result is written, and kept
beside it by the store in the same atomic step: in the tournament's log of
summaries (in the order written) and at the head of each of its bots' lists of
recent matches. It holds the teams, the totals, the winner and why the match
ended, the seed (to check that two duplicate legs share their deals), the
bot at each seat when a side's two seats held different bots (a mixed match:
``team0``/``team1`` are then side names, ``"alice+bob"``), and, for a leg of
a duplicate pair, its deal difference: what team 0 wrote down
minus what team 1 did, summed over the recorded deals, which is what the
pair's point difference needs (the record's replay, about 0.75 ms a deal, is
paid once, at write time). It also counts the deals in which a card was
played (``played_deals``): a match whose every deal was thrown in (all four
seats passed) is a 0-0 draw that tells nothing of how its bots play, and the
SPRT sets its pair aside (:mod:`arena.tournament.sprt`). A record that does not replay keeps the reason in
``replay_error``, raised when the pair's difference is asked for, as reading
the record did.

A summary is about 300 bytes of JSON whatever the match's length: the cost of
advancing a tournament or showing its standings follows the number of its
matches, never the size of their records.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from arena.records import MatchEnd, ResultReason, RulesetSpec, seat_bots_of
from arena.tournament.duplicate import deal_scores
from arena.tournament.jobs import MatchResult
from arena.tournament.spec import TournamentError

__all__ = ["DETAIL_MAX", "ResultSummary"]

#: the most characters of the result's detail a summary keeps (a line for a list of matches)
DETAIL_MAX = 200


@dataclass(frozen=True)
class ResultSummary:
    """One written result, as tournaments and the lists of matches read it (see the module doc)."""

    match_id: str
    tournament_id: str
    team0: str
    team1: str
    totals: tuple[int, int]
    #: 0, 1, or None for a draw
    winner: int | None
    reason: ResultReason
    seed: str
    deals_played: int
    ruleset: RulesetSpec = "classic"
    detail: str = ""
    forfeit_seat: int | None = None
    #: team 0's deal points minus team 1's over the recorded deals; None when not worked out
    #: (the result is no duplicate leg) or when the record does not replay (``replay_error``)
    deal_diff: int | None = None
    replay_error: str = ""
    #: the bot at each seat 0..3 of a mixed match; None (and absent from older summaries'
    #: JSON) when each side is one bot, ``team0`` at seats 0 and 2, ``team1`` at 1 and 3
    seats: tuple[str, str, str, str] | None = None
    #: the deals (the unfinished one included) in which at least one card was played; None in a
    #: summary written before it was kept (then taken as played: :attr:`no_play` is False)
    played_deals: int | None = None

    @classmethod
    def of_result(cls, result: MatchResult, *, deals: bool) -> ResultSummary:
        """The summary of ``result``; with ``deals``, its deal difference (replaying its record)."""
        diff: int | None = None
        error = ""
        if deals:
            try:
                diff = sum(a - b for a, b in deal_scores(result))
            except TournamentError as e:
                error = str(e)
        end = result.record.result
        players = result.seat_bots
        seats = (players[0], players[1], players[2], players[3]) if result.is_mixed else None
        record = result.record
        unfinished = () if record.unfinished_deal is None else (record.unfinished_deal,)
        played = sum(1 for d in (*record.deals, *unfinished) if d.get("plays"))
        return cls(
            match_id=result.match_id, tournament_id=result.tournament_id, team0=result.team0,
            team1=result.team1, totals=result.totals, winner=result.winner, reason=result.reason,
            seed=str(result.record.seed), deals_played=result.record.deals_played,
            ruleset=result.record.ruleset, detail=end.detail[:DETAIL_MAX], forfeit_seat=end.forfeit_seat,
            deal_diff=diff, replay_error=error, seats=seats, played_deals=played,
        )

    @property
    def seat_bots(self) -> tuple[str, str, str, str]:
        """The bot at each seat 0..3."""
        return seat_bots_of(self.team0, self.team1, self.seats)

    @property
    def is_mixed(self) -> bool:
        """Whether a side's two seats held two different bots."""
        return self.seats is not None

    @property
    def no_play(self) -> bool:
        """Whether the match had deals, every one thrown in (no card played), and did not end by
        forfeit: a 0-0 draw that is no evidence of strength (a forfeit is). A record with no deal
        at all (a forfeit before the first ended, or a test's synthetic result) is not one."""
        return (self.played_deals == 0 and self.deals_played > 0
                and self.reason is not ResultReason.FORFEIT)

    def score0(self) -> float:
        """Team 0's match score: 1 win, 0.5 draw, 0 loss."""
        return 0.5 if self.winner is None else 1.0 if self.winner == 0 else 0.0

    def deal_difference(self) -> int:
        """``deal_diff``, or the :class:`TournamentError` of a record that does not replay."""
        if self.deal_diff is None:
            raise TournamentError(self.replay_error or f"match {self.match_id}: no deal scores were kept")
        return self.deal_diff

    @property
    def end(self) -> MatchEnd:
        """How the match ended, as its record says."""
        return MatchEnd(totals=self.totals, winner=self.winner, reason=self.reason, detail=self.detail,
                        forfeit_seat=self.forfeit_seat)

    # ----------------------------------------------------------------- JSON
    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "match_id": self.match_id, "tournament_id": self.tournament_id, "team0": self.team0,
            "team1": self.team1, "totals": list(self.totals), "winner": self.winner,
            "reason": str(self.reason), "seed": self.seed, "deals_played": self.deals_played,
            "ruleset": self.ruleset,
        }
        if self.detail:
            data["detail"] = self.detail
        if self.forfeit_seat is not None:
            data["forfeit_seat"] = self.forfeit_seat
        if self.deal_diff is not None:
            data["deal_diff"] = self.deal_diff
        if self.replay_error:
            data["replay_error"] = self.replay_error
        if self.seats is not None:
            data["seats"] = list(self.seats)
        if self.played_deals is not None:
            data["played_deals"] = self.played_deals
        return data

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str | bytes) -> ResultSummary:
        """The summary of its JSON; :class:`TournamentError` for a text that is not one."""
        try:
            d = json.loads(text)
            t0, t1 = d["totals"]
            winner = d["winner"]
            if winner not in (0, 1, None) or isinstance(winner, bool):
                raise ValueError(f"winner {winner!r}")
            diff = d.get("deal_diff")
            seats = d.get("seats")  # absent: one bot a side
            if seats is not None and (not isinstance(seats, list) or len(seats) != 4
                                      or not all(isinstance(b, str) for b in seats)):
                raise ValueError(f"seats {seats!r}")
            return cls(
                match_id=str(d["match_id"]), tournament_id=str(d["tournament_id"]), team0=str(d["team0"]),
                team1=str(d["team1"]), totals=(int(t0), int(t1)), winner=winner,
                reason=ResultReason(d["reason"]), seed=str(d["seed"]), deals_played=int(d["deals_played"]),
                ruleset=d.get("ruleset", "classic"), detail=str(d.get("detail", "")),
                forfeit_seat=d.get("forfeit_seat"), deal_diff=None if diff is None else int(diff),
                replay_error=str(d.get("replay_error", "")),
                seats=None if seats is None else (seats[0], seats[1], seats[2], seats[3]),
                played_deals=None if d.get("played_deals") is None else int(d["played_deals"]),
            )
        except (ValueError, TypeError, KeyError) as e:
            raise TournamentError(f"a stored result summary is unreadable: {e}") from None
