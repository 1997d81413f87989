"""A bot's own history and statistics: what one written result adds to each of its bots.

When a result is written, the store keeps, for each distinct bot of its
seats, in the same atomic step as the result and its ratings
(:mod:`arena.queue`):

- an entry at the head of the bot's *history* (:class:`BotGame.entry`: the
  match, its opponent and partner, the result from the bot's side, its
  totals, its pools, the version that played, its points per deal, and the
  rating change the write made in each pool; a duplicate table's, its
  counters too, which a reader takes out of the statistics while the table is
  sealed), the newest :data:`HISTORY_KEPT` kept;
- its *counters* added to the bot's aggregates, kept forever
  (:attr:`BotGame.stats`: contracts taken and made by level and by trump,
  coinches, surcoinches, capots, points per deal as taker and in defence,
  declarations and belote, strikes by kind, forfeits, and a histogram of
  its decision times) and to its *head-to-head* against that opponent
  (:attr:`BotGame.h2h`: wins, draws, losses, and the deals' point margins).

All counters are whole numbers, added, never read back and rewritten, so a
Redis script adds them with HINCRBY and sqlite with an upsert. The facts are
worked out once, at write time, by replaying the record's deals (about 0.75
ms a deal, as a duplicate leg's summary does): reading a bot's statistics
never reads a record.

A match a bot played against itself (at all four seats: two of its versions,
a version test) is in its history (``self_play``), and in none of its
statistics nor its head-to-head: it tells nothing of how the bot plays
against others.

A side's facts are the bot's: in a match of one bot a side both seats are
it; in a mixed match (two different bots a side) the side's contracts and
points count for both its bots (the record does not say which of two
partners bid the contract), the decision times and strikes only for the
bot's own seats.

Points per deal are over the deals in which a card was played (a thrown-in
deal scores 0-0 and says nothing); a deal's points are what each side wrote
down (litige points included, as :func:`arena.tournament.duplicate.deal_scores`
gives them); the head-to-head's margin is the bot's side's points less the
opponent's, each deal. Each mean's 95% interval is ``mean +- 1.96 sd /
sqrt(n)`` from the counts ``n``, ``sum`` and ``sq`` (sum of squares).

A table of duplicate play is sealed until every table dealing its cards is
over (:func:`arena.tournament.tables.is_sealed`): a mirror pair's leg, a field
quartet's table. Its entry is written at once (a reader shows it sealed), and
its counters are held by the store with its group's (:meth:`BotGame.grouped`)
until the group's last table is written, in that table's step, as its
ratings are: no statistic moves while one of them is sealed.

Decision times are the referee's round trips (the record's ``latencies_us``)
of the bot's own decisions, counted in buckets :data:`TIME_RATIO` wide
(:func:`time_bucket`): a percentile is read as its bucket's upper bound, within
25% of the true value, in a few hundred bytes whatever the number of games.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from arena.engine.actions import CAPOT_VALUE
from arena.engine.cards import SUITS
from arena.engine.errors import EngineError
from arena.engine.scoring import DealOutcome
from arena.records import ResultReason, StrikeReason
from arena.tournament.jobs import MatchResult
from arena.tournament.tables import is_duplicate_match

__all__ = [
    "HISTORY_KEPT",
    "TIME_BASE_US",
    "TIME_RATIO",
    "BotGame",
    "bot_games",
    "counters_json",
    "counters_of_json",
    "interval",
    "percentile_ms",
    "time_bucket",
]

#: the newest entries kept in each bot's history (older ones are trimmed as new ones come); its
#: aggregates count every game forever
HISTORY_KEPT = 200
#: decision times: bucket 0 holds those up to this many microseconds, bucket ``b`` those up to
#: ``TIME_BASE_US * TIME_RATIO ** b``
TIME_BASE_US = 100
TIME_RATIO = 1.25
#: the last bucket (about 570 s): slower ones count in it
TIME_BUCKETS = 80
#: a result from the bot's side
RESULTS = ("win", "draw", "loss")


def time_bucket(us: int) -> int:
    """The bucket of a decision time of ``us`` microseconds."""
    if us <= TIME_BASE_US:
        return 0
    b = math.ceil(math.log(us / TIME_BASE_US) / math.log(TIME_RATIO) - 1e-9)
    return min(max(b, 0), TIME_BUCKETS)


def percentile_ms(histogram: Mapping[int, int], q: float) -> float | None:
    """The ``q`` quantile (0..1) of the decision times counted in ``histogram`` (bucket -> count), as
    its bucket's upper bound in milliseconds; None with no decision counted."""
    total = sum(histogram.values())
    if total <= 0:
        return None
    need = q * total
    seen = 0
    for b in sorted(histogram):
        seen += histogram[b]
        if seen >= need:
            return round(TIME_BASE_US * TIME_RATIO ** b / 1000, 3)
    return round(TIME_BASE_US * TIME_RATIO ** max(histogram) / 1000, 3)


def interval(n: int, total: float, sq: float) -> tuple[float, float, float] | None:
    """The mean of ``n`` values summing to ``total`` (squares to ``sq``) and its 95% interval; None
    with no value."""
    if n <= 0:
        return None
    mean = total / n
    if n == 1:
        return mean, mean, mean
    var = max(0.0, (sq - n * mean * mean) / (n - 1))
    half = 1.96 * math.sqrt(var / n)
    return mean, mean - half, mean + half


@dataclass(frozen=True)
class BotGame:
    """One bot's part in one written result (see the module doc)."""

    bot: str
    #: the history entry, as JSON values (the store adds ``rating_change``)
    entry: dict[str, Any]
    #: the counters added to the bot's aggregates
    stats: dict[str, int]
    #: the counters added to its head-to-head, by opponent
    h2h: dict[str, int]

    def entry_json(self) -> str:
        """The entry's JSON without its closing brace: the store appends its ``rating_change``."""
        return json.dumps(self.entry, sort_keys=True, separators=(",", ":"))[:-1]

    def grouped(self) -> BotGame:
        """This game as a table of a group the store counts whole (a mirror pair, a field quartet: its
        counters held until the group's last table is written, when every table of it is unsealed):
        its entry says ``grouped`` and keeps no counters (nothing to take out while it is sealed)."""
        entry = {k: v for k, v in self.entry.items() if k != "counters"}
        entry["grouped"] = True
        return BotGame(self.bot, entry, self.stats, self.h2h)


def counters_json(games: Iterable[BotGame]) -> str:
    """The counters of ``games`` as a store holds them for their group: ``[{bot, stats, h2h}, ...]``."""
    return json.dumps([{"bot": g.bot, "stats": g.stats, "h2h": g.h2h} for g in games], separators=(",", ":"))


def counters_of_json(text: str | bytes) -> list[tuple[str, dict[str, int], dict[str, int]]]:
    """:func:`counters_json`'s ``(bot, stats, h2h)`` back."""
    return [(str(g["bot"]), {str(k): int(v) for k, v in g["stats"].items()},
             {str(k): int(v) for k, v in g["h2h"].items()}) for g in json.loads(text)]


def _outcomes(result: MatchResult) -> list[DealOutcome] | None:
    """The record's deals replayed (None: a record that does not replay, counted without its deals)."""
    record = result.record
    if not record.deals:
        return []
    try:
        return record.replay(deals=record.deals_played)[1]
    except (EngineError, ValueError):
        return None


def _deal_seats(deal: Mapping[str, Any], outcome: DealOutcome | None) -> list[int] | None:
    """The seat of each decision of a deal, in decision order (docs/records.md#decision-index): the
    bids round from the seat after the dealer, then each trick from its leader; None where it cannot
    be told (an unfinished deal's card play)."""
    dealer = int(deal.get("dealer", 0))
    bids = deal.get("bids") or []
    seats = [(dealer + 1 + k) % 4 for k in range(len(bids))]
    plays = deal.get("plays") or []
    if not plays:
        return seats
    if outcome is None or outcome.thrown_in or len(outcome.tricks) * 4 != len(plays):
        return None
    for leader, cards, _ in outcome.tricks:
        seats += [(leader + j) % 4 for j in range(len(cards))]
    return seats


def _add(counters: dict[str, int], key: str, n: int = 1) -> None:
    if n:
        counters[key] = counters.get(key, 0) + n


def _level(o: DealOutcome) -> str:
    """A contract's level: its value (``80`` .. ``160``), ``capot``, or ``take`` (classic: no value)."""
    if o.value == CAPOT_VALUE:
        return "capot"
    return str(o.value) if o.value else "take"


def _trump(o: DealOutcome) -> str:
    return SUITS[o.trump] if 0 <= o.trump < len(SUITS) else str(o.trump)


def bot_games(result: MatchResult, pools: Iterable[str], at: float) -> list[BotGame]:
    """What ``result`` adds to each distinct bot of its seats (written at ``at``, unix seconds, and
    counted in ``pools``: its rating pools, the first its own)."""
    record = result.record
    seat_bots = result.seat_bots
    outcomes = _outcomes(result)
    pools = list(pools)
    versions = {b.seat: b.version for b in record.bots}
    out = []
    for bot in dict.fromkeys(seat_bots):
        mine = [s for s in range(4) if seat_bots[s] == bot]
        side = mine[0] % 2
        other = 1 - side
        names = (result.team0, result.team1)
        partner = seat_bots[mine[0] ^ 2] if result.is_mixed else ""
        stats: dict[str, int] = {"matches": 1}
        winner = result.winner
        outcome = "draw" if winner is None else "win" if winner == side else "loss"
        _add(stats, {"win": "wins", "draw": "draws", "loss": "losses"}[outcome])
        forfeit = (result.reason is ResultReason.FORFEIT and record.result.forfeit_seat is not None
                   and record.result.forfeit_seat % 2 == side)
        _add(stats, "forfeits", int(forfeit))
        n = total = sq = 0
        for o in outcomes or ():
            if o.thrown_in:
                _add(stats, "thrown_in")
                continue
            own, theirs = o.score[side], o.score[other]
            _add(stats, "deals")
            n, total, sq = n + 1, total + own - theirs, sq + (own - theirs) ** 2
            role = "taker" if o.takers == side else "defence"
            _add(stats, f"{role}.n")
            _add(stats, f"{role}.sum", own)
            _add(stats, f"{role}.sq", own * own)
            if o.takers == side:
                made = int(o.made is True)
                for key in ("taken", f"taken.L.{_level(o)}", f"taken.T.{_trump(o)}"):
                    _add(stats, key)
                for key in ("made", f"made.L.{_level(o)}", f"made.T.{_trump(o)}"):
                    _add(stats, key, made)
                _add(stats, "coinched", int(o.multiplier >= 2))
                _add(stats, "surcoinches", int(o.multiplier >= 4))
            else:
                _add(stats, "coinches", int(o.multiplier >= 2))
            if o.capot is not None:
                _add(stats, "capots" if o.capot == side else "capots_against")
            if o.declarations[side]:
                _add(stats, "declarations")
                _add(stats, "declaration_points", o.declarations[side])
            _add(stats, "belotes", int(o.belote == side))
        strikes = 0
        for s in record.strikes:
            if s.seat in mine:
                strikes += 1
                _add(stats, f"strikes.{StrikeReason(s.kind)}")
        deals = [*record.deals, *(() if record.unfinished_deal is None else (record.unfinished_deal,))]
        for i, times in enumerate(record.latencies_us):
            if i >= len(deals):
                break
            seats = _deal_seats(deals[i], outcomes[i] if outcomes and i < len(outcomes) else None)
            if seats is None:
                continue
            for k, us in enumerate(times):
                if k < len(seats) and seats[k] in mine:
                    if us < 0:
                        _add(stats, "fallbacks")
                    else:
                        _add(stats, "decisions")
                        _add(stats, f"time.{time_bucket(us)}")
        opponent = names[other]
        h2h = {f"{opponent} {k}": v for k, v in (
            ("w", int(outcome == "win")), ("d", int(outcome == "draw")), ("l", int(outcome == "loss")),
            ("n", n), ("sum", total), ("sq", sq)) if v}
        version = versions.get(mine[0], "") if all(versions.get(s, "") == versions.get(mine[0], "")
                                                     for s in mine) else ""
        entry: dict[str, Any] = {
            "match_id": result.match_id, "tournament_id": result.tournament_id, "at": round(at, 3),
            "opponent": opponent, "side": side, "result": outcome,
            "totals": [result.totals[side], result.totals[other]], "reason": str(result.reason),
            "forfeit": forfeit, "deals": record.deals_played, "pools": pools, "version": version,
            "ruleset": record.ruleset, "points": [n, total, sq], "strikes": strikes,
            "taken": stats.get("taken", 0), "made": stats.get("made", 0),
        }
        if is_duplicate_match(result.match_id):
            entry["counters"] = stats  # a table that may be sealed: left out of the statistics till then
            # (the store replaces this with ``grouped`` when it holds the counters until the group is over)
        if partner:
            entry["partner"] = partner
        if outcomes is None:
            entry["replay_error"] = True
        if len(mine) == 4:  # it played itself (two of its versions, a version test): no evidence of it
            entry.update(self_play=True, counters={})
            out.append(BotGame(bot, entry, {}, {}))
            continue
        out.append(BotGame(bot, entry, stats, h2h))
    return out
