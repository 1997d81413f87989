"""A bot's own history and statistics, as the node shows them: one place for the HTTP API, the gRPC
API (``GetBotReport``), the pages and the CLI.

The store keeps, with each result written (:mod:`arena.tournament.botstats`),
each bot's newest :data:`~arena.tournament.botstats.HISTORY_KEPT` entries and
its counters, kept forever. A page of the history reads the kept entries
once (a bounded read: at most ``HISTORY_KEPT``, whatever the bot's number of
games), filters them, and pages them with a cursor: the last match id of the
page before, so a page stays where it was when newer matches come.

The seal rule (:mod:`arena.node.seals`) holds here too: a table of duplicate
play whose cards another table still deals is shown without its result,
totals, points and rating change, and never matches a filter on the result.
Its counters are in no statistic yet: the store holds them with its group's
until the group's last table is written (:mod:`arena.tournament.botstats`);
a table the store counted at once (its tournament not stored, so no group)
has them in its entry, and they are taken out here while it is sealed.

These read the broker: call them in a thread, never on the event loop.
"""

from __future__ import annotations

import collections
import datetime as dt
import json
import math
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from arena.node.seals import sealed_among
from arena.queue import Broker
from arena.ratings.pools import ladder_id, ladder_pool
from arena.records import SIDE_JOIN, valid_bot_name
from arena.tournament import Tournaments
from arena.tournament.botstats import HISTORY_KEPT, RESULTS, interval, percentile_ms

__all__ = [
    "DEFAULT_LIMIT",
    "MAX_LIMIT",
    "QUERY_KEYS",
    "WORST_SHOWN",
    "HistoryError",
    "HistoryPage",
    "HistoryQuery",
    "KeptAnalyses",
    "bot_report",
    "bot_statistics",
    "history_page",
    "parse_query",
]

#: the most matches one page of a bot's history holds, and how many when the caller does not say
MAX_LIMIT = 100
DEFAULT_LIMIT = 20
#: what a query may say (anything else is refused: a misspelt filter would silently match all)
QUERY_KEYS = ("opponent", "result", "pool", "version", "tournament", "ladder", "since", "until", "cursor",
              "limit")
#: the longest text a filter takes
_TEXT_MAX = 200
#: what a sealed entry shows: nothing that tells how its deals went
_SEALED_SHOWN = ("match_id", "tournament_id", "at", "opponent", "partner", "side", "pools", "version",
                 "ruleset")
#: the accuracy points over time kept in a bot's statistics (one a match analysed, newest last)
ACCURACY_POINTS = 50
#: the worst decisions the report shows of each recent loss
WORST_SHOWN = 3
#: the analyses whose facts a :class:`KeptAnalyses` keeps in memory (about 1 KB each)
FACTS_KEPT = 4096


class HistoryError(ValueError):
    """A query the history cannot answer (a 400, an INVALID_ARGUMENT): the message says why."""


@dataclass(frozen=True, slots=True)
class HistoryQuery:
    """The filters of a page of a bot's history (empty: any), its cursor and its size."""

    opponent: str = ""
    result: str = ""
    pool: str = ""
    version: str = ""
    tournament: str = ""
    ladder: str = ""
    #: unix seconds: written at or after ``since`` and before ``until`` (0: no bound)
    since: float = 0.0
    until: float = 0.0
    cursor: str = ""
    limit: int = DEFAULT_LIMIT

    @property
    def filtered(self) -> bool:
        return bool(self.opponent or self.result or self.pool or self.version or self.tournament
                    or self.ladder or self.since or self.until)

    def matches(self, e: Mapping[str, Any], sealed: bool) -> bool:
        """Whether entry ``e`` passes the filters (a sealed one never passes a filter on the result)."""
        if self.opponent and e.get("opponent") != self.opponent and e.get("partner") != self.opponent:
            return False
        if self.result and (sealed or e.get("result") != self.result):
            return False
        if self.pool and self.pool not in (e.get("pools") or ()):
            return False
        if self.version and e.get("version") != self.version:
            return False
        if self.tournament and e.get("tournament_id") != self.tournament:
            return False
        if self.ladder and e.get("tournament_id") != ladder_id(self.ladder):
            return False
        at = float(e.get("at") or 0)
        return not ((self.since and at < self.since) or (self.until and at >= self.until))


@dataclass(frozen=True, slots=True)
class HistoryPage:
    """One page of a bot's history: its matches (API entries, newest first), the cursor of the next
    page ("" at the end), how many of the kept entries pass the filters, and how many are kept."""

    bot: str
    matches: tuple[dict[str, Any], ...]
    next_cursor: str
    total: int
    kept: int

    def to_json(self) -> dict[str, Any]:
        return {"bot": self.bot, "matches": list(self.matches), "next_cursor": self.next_cursor,
                "total": self.total, "kept": self.kept, "kept_at_most": HISTORY_KEPT}


def _text(params: Mapping[str, str], key: str) -> str:
    value = params.get(key, "").strip()
    if len(value) > _TEXT_MAX or not value.isprintable():
        raise HistoryError(f"{key} must be printable text of at most {_TEXT_MAX} characters")
    return value


def _when(params: Mapping[str, str], key: str) -> float:
    """A date: unix seconds, or ISO 8601 (``2026-12-07``, ``2026-12-07T10:00:00Z``; UTC unless it
    says its offset)."""
    text = params.get(key, "").strip()
    if not text:
        return 0.0
    try:
        value = float(text)
    except ValueError:
        try:
            when = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            raise HistoryError(f"{key} must be a date (2026-12-07, 2026-12-07T10:00:00Z) or unix seconds, "
                               f"not {text[:40]!r}") from None
        if when.tzinfo is None:
            when = when.replace(tzinfo=dt.UTC)
        value = when.timestamp()
    if not math.isfinite(value) or value <= 0:
        raise HistoryError(f"{key} must be a date after 1970, not {text[:40]!r}")
    return value


def parse_query(params: Mapping[str, str]) -> HistoryQuery:
    """The query of ``params`` (an HTTP query's, or a CLI's); :class:`HistoryError` for a bad one."""
    unknown = sorted(k for k in params if k not in QUERY_KEYS)
    if unknown:
        raise HistoryError(f"unknown filter {unknown[0][:40]!r}: the filters are {', '.join(QUERY_KEYS)}")
    opponent = _text(params, "opponent")
    if opponent and not all(valid_bot_name(p) for p in opponent.split(SIDE_JOIN)):
        raise HistoryError(f"opponent must be a bot's name (or a side's, alice+bob), not {opponent[:40]!r}")
    result = _text(params, "result")
    if result and result not in RESULTS:
        raise HistoryError(f"result must be one of {', '.join(RESULTS)}, not {result[:40]!r}")
    tournament, ladder = _text(params, "tournament"), _text(params, "ladder")
    if tournament and ladder:
        raise HistoryError("give tournament or ladder, not both (a ladder's matches are in no tournament)")
    if tournament and ladder_pool(tournament) is not None:
        ladder, tournament = ladder_pool(tournament) or "", ""
    since, until = _when(params, "since"), _when(params, "until")
    if since and until and since >= until:
        raise HistoryError("since must be before until")
    limit_text = params.get("limit", "").strip()
    try:
        limit = int(limit_text) if limit_text else DEFAULT_LIMIT
    except ValueError:
        raise HistoryError(f"limit must be a whole number from 1 to {MAX_LIMIT}, not {limit_text[:40]!r}") \
            from None
    if not 1 <= limit <= MAX_LIMIT:
        raise HistoryError(f"limit must be a whole number from 1 to {MAX_LIMIT}, not {limit}")
    return HistoryQuery(opponent=opponent, result=result, pool=_text(params, "pool"),
                        version=_text(params, "version"), tournament=tournament, ladder=ladder, since=since,
                        until=until, cursor=_text(params, "cursor"), limit=limit)


#: a function that gives the analysis's accuracy of ``bot`` in each match analysed among ``match_ids``
#: (absent: not analysed), for the history's ``accuracy`` field: :meth:`KeptAnalyses.accuracies`
Accuracies = Callable[[str, Sequence[str]], Mapping[str, float]]
#: a function that gives the worst decisions of ``bot`` in match ``match_id`` (the analysis's
#: ``worst`` entries, its own, worst first; empty: not analysed): :meth:`KeptAnalyses.worst`
WorstDecisions = Callable[[str, str], Sequence[Mapping[str, Any]]]


class KeptAnalyses:
    """What a bot's history and report read of the analyses a node keeps
    (docs/analysis.md: ``bots``, each with its ``accuracy``, and ``worst``, each with its ``bot``):
    ``kept(match_id)`` gives a match's analysis as JSON if one is kept (never makes one: an analysis
    costs seconds to minutes). What each analysis says of its bots is read once and kept
    (:data:`FACTS_KEPT` matches, the least recently read dropped); a match with no analysis is
    asked again each time, as one may be made meanwhile. Call it in a thread: ``kept`` may read a
    file."""

    def __init__(self, kept: Callable[[str], bytes | str | None], max_kept: int = FACTS_KEPT) -> None:
        self.kept = kept
        self.max_kept = max_kept
        self._facts: collections.OrderedDict[str, tuple[dict[str, float], list[dict[str, Any]]]] = \
            collections.OrderedDict()
        self._lock = threading.Lock()

    def _of(self, match_id: str) -> tuple[dict[str, float], list[dict[str, Any]]] | None:
        with self._lock:
            found = self._facts.get(match_id)
            if found is not None:
                self._facts.move_to_end(match_id)
                return found
        text = self.kept(match_id)
        if text is None:
            return None
        try:
            data = json.loads(text)
            bots = {str(b["bot"]): float(b["accuracy"]) for b in data.get("bots", ())
                    if isinstance(b, dict) and b.get("accuracy") is not None}
            worst = [w for w in data.get("worst", ()) if isinstance(w, dict)]
        except (ValueError, TypeError, KeyError, AttributeError):
            return None  # an analysis of another shape: nothing of it shown
        facts = (bots, worst)
        with self._lock:
            self._facts[match_id] = facts
            while len(self._facts) > self.max_kept:
                self._facts.popitem(last=False)
        return facts

    def accuracies(self, bot: str, match_ids: Sequence[str]) -> dict[str, float]:
        """``bot``'s accuracy in each of ``match_ids`` that has an analysis kept."""
        out = {}
        for match_id in match_ids:
            facts = self._of(match_id)
            if facts is not None and bot in facts[0]:
                out[match_id] = facts[0][bot]
        return out

    def worst(self, bot: str, match_id: str) -> list[dict[str, Any]]:
        """``bot``'s worst decisions in the match (its cards, and its side's bidding), worst first."""
        facts = self._of(match_id)
        if facts is None:
            return []
        return [w for w in facts[1] if bot in str(w.get("bot", "")).split(SIDE_JOIN)]


def _shown(e: Mapping[str, Any], sealed: bool, accuracy: float | None) -> dict[str, Any]:
    """An entry as the API shows it; a sealed one with nothing of how its deals went."""
    if sealed:
        out = {k: e[k] for k in _SEALED_SHOWN if k in e}
        out.update(sealed=True, ladder=ladder_pool(str(e.get("tournament_id", ""))))
        return out
    n, total, sq = (e.get("points") or [0, 0, 0])[:3]
    shown = {k: v for k, v in e.items() if k not in ("points", "counters", "rating_change")}
    mean = interval(int(n), float(total), float(sq))
    shown["points_per_deal"] = None if mean is None else round(mean[0], 1)
    shown["rating_change"] = {p: round(float(d), 1) for p, d in (e.get("rating_change") or {}).items()}
    shown["ladder"] = ladder_pool(str(e.get("tournament_id", "")))
    shown["accuracy"] = accuracy
    shown["sealed"] = False
    return shown


def _kept(broker: Broker, tournaments: Tournaments, bot: str) -> tuple[list[dict[str, Any]], set[str]]:
    """The bot's kept entries, newest first, and those of their matches that are sealed: two reads or
    so, whatever its number of games."""
    entries = broker.bot_history(bot)
    return entries, sealed_among(broker, tournaments, [str(e.get("match_id", "")) for e in entries])


def history_page(broker: Broker, tournaments: Tournaments, bot: str, query: HistoryQuery,
                 accuracies: Accuracies | None = None) -> HistoryPage:
    """A page of ``bot``'s history (:class:`HistoryError` for a cursor no longer kept)."""
    entries, sealed = _kept(broker, tournaments, bot)
    passing = [e for e in entries if query.matches(e, str(e.get("match_id")) in sealed)]
    start = 0
    if query.cursor:
        at = next((i for i, e in enumerate(passing) if e.get("match_id") == query.cursor), None)
        if at is None:
            raise HistoryError(f"cursor {query.cursor[:40]!r} is not in the bot's kept history (its newest "
                               f"{HISTORY_KEPT} matches) with these filters: start again without it")
        start = at + 1
    page = passing[start:start + query.limit]
    ids = [str(e.get("match_id")) for e in page]
    found = {} if accuracies is None or not ids else accuracies(bot, [m for m in ids if m not in sealed])
    shown = tuple(_shown(e, m in sealed, found.get(m)) for e, m in zip(page, ids, strict=True))
    more = start + query.limit < len(passing)
    return HistoryPage(bot=bot, matches=shown, next_cursor=ids[-1] if more and ids else "",
                       total=len(passing), kept=len(entries))


def _mean(n: int, total: int, sq: int) -> dict[str, Any]:
    """``{n, mean, low, high}`` (the mean and its 95% interval, to a tenth; None with no value)."""
    m = interval(n, total, sq)
    if m is None:
        return {"n": 0, "mean": None, "low": None, "high": None}
    return {"n": n, "mean": round(m[0], 1), "low": round(m[1], 1), "high": round(m[2], 1)}


def _split(counters: Mapping[str, int], prefix: str) -> dict[str, int]:
    return {k[len(prefix):]: v for k, v in counters.items() if k.startswith(prefix)}


def _level_order(level: str) -> tuple[int, str]:
    return (int(level), "") if level.isdigit() else (10**6, level)


def bot_statistics(broker: Broker, tournaments: Tournaments, bot: str,
                   accuracies: Accuracies | None = None) -> dict[str, Any]:
    """The bot's statistics and head-to-head, every game written so far, sealed ones left out until they
    are unsealed: ``{"bot", "statistics", "head_to_head"}`` (docs/web.md#a-bots-history-and-statistics)."""
    stats, h2h = broker.bot_counters(bot)
    entries, sealed = _kept(broker, tournaments, bot)
    stats, h2h = dict(stats), dict(h2h)
    for e in entries:
        # a sealed table counted at once (its tournament not stored: no group holds its counters) is
        # taken out here; one of a group is in no counter before its group's last table
        if str(e.get("match_id")) not in sealed or "counters" not in e:
            continue
        for k, v in (e.get("counters") or {}).items():
            stats[k] = stats.get(k, 0) - int(v)
        opp = e.get("opponent", "")
        n, total, sq = (e.get("points") or [0, 0, 0])[:3]
        for k, v in (("w", e.get("result") == "win"), ("d", e.get("result") == "draw"),
                     ("l", e.get("result") == "loss"), ("n", n), ("sum", total), ("sq", sq)):
            h2h[f"{opp} {k}"] = h2h.get(f"{opp} {k}", 0) - int(v)
    g = stats.get
    levels = sorted(set(_split(stats, "taken.L.")), key=_level_order)
    trumps = sorted(set(_split(stats, "taken.T.")))
    times = {int(k): v for k, v in _split(stats, "time.").items() if k.isdigit() and v > 0}
    accuracy: list[dict[str, Any]] = []
    if accuracies is not None:
        shown = [e for e in reversed(entries) if str(e.get("match_id")) not in sealed]
        found = accuracies(bot, [str(e.get("match_id")) for e in shown])
        accuracy = [{"match_id": e["match_id"], "at": e.get("at"), "accuracy": found[e["match_id"]]}
                    for e in shown if e.get("match_id") in found][-ACCURACY_POINTS:]
    statistics = {
        "matches": g("matches", 0), "wins": g("wins", 0), "draws": g("draws", 0), "losses": g("losses", 0),
        "forfeits": g("forfeits", 0), "deals": g("deals", 0), "thrown_in": g("thrown_in", 0),
        "contracts": {
            "taken": g("taken", 0), "made": g("made", 0),
            "by_level": [{"level": lv, "taken": g(f"taken.L.{lv}", 0), "made": g(f"made.L.{lv}", 0)}
                         for lv in levels],
            "by_trump": [{"trump": t, "taken": g(f"taken.T.{t}", 0), "made": g(f"made.T.{t}", 0)}
                         for t in trumps],
        },
        "coinches": {"said": g("coinches", 0), "against": g("coinched", 0),
                     "surcoinches": g("surcoinches", 0)},
        "capots": {"made": g("capots", 0), "against": g("capots_against", 0)},
        "points_per_deal": {"taker": _mean(g("taker.n", 0), g("taker.sum", 0), g("taker.sq", 0)),
                            "defence": _mean(g("defence.n", 0), g("defence.sum", 0), g("defence.sq", 0))},
        "declarations": {"deals": g("declarations", 0), "points": g("declaration_points", 0)},
        "belotes": g("belotes", 0),
        "strikes": {"late": g("strikes.late", 0), "illegal": g("strikes.illegal", 0),
                    "no_action": g("strikes.no_action", 0)},
        "fallbacks": g("fallbacks", 0),
        "decision_ms": {"decisions": sum(times.values()), "p50": percentile_ms(times, 0.5),
                        "p99": percentile_ms(times, 0.99)},
        "accuracy": accuracy,
    }
    opponents = sorted({k.rsplit(" ", 1)[0] for k in h2h})
    rows: list[dict[str, Any]] = []
    for opp in opponents:
        w, d, lo = (max(0, h2h.get(f"{opp} {k}", 0)) for k in ("w", "d", "l"))
        if w + d + lo == 0:
            continue
        rows.append({"opponent": opp, "games": w + d + lo, "wins": w, "draws": d, "losses": lo,
                     "points_per_deal": _mean(h2h.get(f"{opp} n", 0), h2h.get(f"{opp} sum", 0),
                                              h2h.get(f"{opp} sq", 0))})
    rows.sort(key=lambda r: (-r["games"], r["opponent"]))
    return {"bot": bot, "statistics": statistics, "head_to_head": rows}


def bot_report(broker: Broker, tournaments: Tournaments, bot: str, query: HistoryQuery,
               accuracies: Accuracies | None = None, worst: WorstDecisions | None = None) -> dict[str, Any]:
    """What ``belote-arena bot report`` prints (``GetBotReport``): the statistics and head-to-head, and a
    page of the history as ``matches`` (with its ``next_cursor``, ``total`` and ``kept``), each loss
    of it with an analysis kept with the bot's ``worst_decisions`` there (:data:`WORST_SHOWN`, worst
    first); :class:`HistoryError` for a cursor no longer kept."""
    report = bot_statistics(broker, tournaments, bot, accuracies)
    page = history_page(broker, tournaments, bot, query, accuracies).to_json()
    page.pop("bot")
    if worst is not None:
        for m in page["matches"]:
            if not m.get("sealed") and m.get("result") == "loss":
                m["worst_decisions"] = list(worst(bot, m["match_id"]))[:WORST_SHOWN]
    report.update(page)
    return report
