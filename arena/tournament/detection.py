"""Detection: does a bot play better once it has seen a deal's hands at another table?

In mirror duplicate play a bot meets every deck twice, once from each side, and a bot that
remembers what it was shown at one table knows the other side's hands at the other. This module
reads the records of a tournament's matches (the full deals, every action, who sat where, when
each decision was asked) and asks, for each bot: at its card decisions, does it agree with the
perfect-information choice (:mod:`arena.tournament.oracle`) more often once it could have seen
the deal elsewhere than before?

- **Which decisions count**: a bot's own card decisions (not the referee's fallbacks) with more
  than one legal card where the cards are not all worth the same on the true deal.
- **Seen or not**: a bot has *seen* a deck at a table once that table has asked it for a
  decision of that deck (its hand went out with the request). A decision at another table is
  *seen* if that happened before the bot answered it (``margin_ms`` earlier, for the clocks of
  different nodes), *unseen* if it happened after (``margin_ms`` later), and *ambiguous* in
  between (not counted). Legs may run at once: the split is per decision, not per leg, from the
  records' ``started_ms`` and ``asked_ms``; a record without them (written before the referee
  kept them) counts nothing.
- **The test**: for each deal a bot played at two tables or more, the agreement of its seen
  decisions minus that of its unseen ones, compared trick by trick (the last tricks are easier
  than the first, and legs that overlap put the unseen decisions early), averaged over the tricks
  that have both; then a one-sided one-sample t-test that the mean over deals is above zero.
  Deals are independent, so the deals, not the decisions (which are not independent within a
  deal), are the units. A bot is flagged at ``p < alpha`` (0.01) with at least ``min_deals``
  deals compared.

What it cannot see is in docs/detection.md. :mod:`arena.tournament.audit` audits a tournament
from the store within a bound on its cost.
"""

from __future__ import annotations

import hashlib
import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from arena.engine import EngineError, parse_action
from arena.engine.deal import Phase
from arena.engine.record import deal_from_record
from arena.engine.rules import Ruleset
from arena.records import MatchRecord
from arena.tournament.oracle import DEFAULT_EXACT_TRICKS, DEFAULT_NODE_LIMIT, best_cards

__all__ = [
    "ALPHA",
    "AuditReport",
    "BotAudit",
    "CardDecision",
    "TableAnalysis",
    "analyse_record",
    "audit",
    "deck_key",
    "one_sided_t",
    "t_sf",
]

#: flag a bot whose one-sided p-value is below this
ALPHA = 0.01
#: the fewest deals compared for a flag
MIN_DEALS = 10
#: the slack between two referees' clocks, in milliseconds, and the most an audit takes (clocks
#: further apart than a minute are broken)
DEFAULT_MARGIN_MS = 5
MAX_MARGIN_MS = 60_000


def deck_key(deal: Any, dealer: int | None = None) -> str:
    """What identifies a deal's cards across tables: its deck after the cut (and coinche
    packets) and its dealer, or its hands where the record has no deck."""
    cards = deal.get("deck") or deal.get("hands") or []
    parts = [str(deal.get("dealer", dealer)), str(deal.get("packets", "")), str(deal.get("retourne", "")),
             repr(cards)]
    return hashlib.sha256("/".join(parts).encode()).hexdigest()[:24]


@dataclass(frozen=True, slots=True)
class CardDecision:
    """One counted card decision of a bot."""

    bot: str
    deck: str
    match_id: str
    deal: int
    #: 0..7
    trick: int
    #: when the request went out and when the answer came in, in ms since the epoch (None: the
    #: record has no times)
    asked_ms: int | None
    answered_ms: int | None
    #: the bot's card is one of the perfect-information best
    agrees: bool
    #: the oracle's answer is exact (else estimated, see the oracle)
    exact: bool


@dataclass(frozen=True, slots=True)
class TableAnalysis:
    """What an audit needs of one match record: its counted decisions and when each bot was
    first shown each deck there. A pure function of the record, so it may be kept."""

    match_id: str
    decisions: tuple[CardDecision, ...]
    #: (bot, deck, when it was first asked a decision of that deck here: ms since the epoch, or
    #: None without times)
    shown: tuple[tuple[str, str, int | None], ...]
    deals: int
    #: the bots' own card decisions, and those left out: one legal card, every card worth the
    #: same, the search gave up
    card_decisions: int = 0
    forced: int = 0
    indifferent: int = 0
    unsolved: int = 0
    nodes: int = 0
    #: why the record could not be read (then nothing of it counts)
    error: str = ""


def _times(record: MatchRecord, deal: int) -> tuple[list[int | None], list[int | None]]:
    """Per decision of ``deal``: when it was asked and answered (ms since the epoch), or None."""
    lat = record.latencies_us[deal] if deal < len(record.latencies_us) else ()
    asked = record.asked_ms[deal] if deal < len(record.asked_ms) else ()
    start = record.started_ms
    n = len(lat)
    if start is None or len(asked) != n:
        return [None] * n, [None] * n
    return ([start + a for a in asked],
            [start + a + (us + 999) // 1000 if us >= 0 else None for a, us in zip(asked, lat, strict=True)])


@dataclass
class _Tally:
    """What :func:`analyse_record` gathers, deal after deal."""

    decisions: list[CardDecision] = field(default_factory=list)
    #: (bot, deck) -> the first time it was asked a decision of that deck here
    shown: dict[tuple[str, str], int | None] = field(default_factory=dict)
    card_decisions: int = 0
    forced: int = 0
    indifferent: int = 0
    unsolved: int = 0
    nodes: int = 0

    def asked(self, bot: str, deck: str, when: int | None) -> None:
        key = (bot, deck)
        if key not in self.shown:
            self.shown[key] = when
        else:
            before = self.shown[key]
            if when is not None and (before is None or when < before):
                self.shown[key] = when


def analyse_record(record: MatchRecord, *, exact_tricks: int = DEFAULT_EXACT_TRICKS,
                   node_limit: int = DEFAULT_NODE_LIMIT) -> TableAnalysis:
    """Every counted card decision of ``record``, with the oracle's verdict; a record that does
    not replay counts nothing and says why."""
    try:
        rules = Ruleset.from_spec(record.ruleset)
    except EngineError as e:
        return TableAnalysis(record.match_id, (), (), 0, error=f"its ruleset: {e}")
    played: list[Any] = list(record.deals)
    if record.unfinished_deal is not None:
        played.append(record.unfinished_deal)
    tally = _Tally()
    for index in range(len(played)):
        try:
            _analyse_deal(record, rules, index, played[index], tally, exact_tricks, node_limit)
        except (EngineError, ValueError, TypeError, KeyError, AttributeError) as e:
            return TableAnalysis(record.match_id, (), (), 0, error=f"deal {index}: {e}")
    return TableAnalysis(
        record.match_id, tuple(tally.decisions), tuple((b, d, t) for (b, d), t in tally.shown.items()),
        len(played), card_decisions=tally.card_decisions, forced=tally.forced, indifferent=tally.indifferent,
        unsolved=tally.unsolved, nodes=tally.nodes,
    )


def _analyse_deal(record: MatchRecord, rules: Ruleset, index: int, rec: Any, tally: _Tally, exact_tricks: int,
                  node_limit: int) -> None:
    deck = deck_key(rec)
    deal = deal_from_record({**rec, "bids": [], "plays": []}, rules)
    actions = [*rec.get("bids", []), *rec.get("plays", [])]
    latencies = record.latencies_us[index] if index < len(record.latencies_us) else ()
    asked, answered = _times(record, index)
    for i, text in enumerate(actions):
        bot = record.players[deal.to_act]
        if i < len(asked):
            tally.asked(bot, deck, asked[i])
        action = parse_action(text)
        own = i < len(latencies) and latencies[i] >= 0  # else the referee's fallback
        if deal.phase is Phase.PLAY and own:
            tally.card_decisions += 1
            legal = deal.legal_cards()
            if legal & (legal - 1) == 0:
                tally.forced += 1
            else:
                answer = best_cards(deal, exact_tricks=exact_tricks, node_limit=node_limit)
                tally.nodes += node_limit if answer is None else answer.nodes
                if answer is None:
                    tally.unsolved += 1
                elif not answer.matters:
                    tally.indifferent += 1
                else:
                    tally.decisions.append(CardDecision(
                        bot=bot, deck=deck, match_id=record.match_id, deal=index, trick=len(deal.tricks),
                        asked_ms=asked[i], answered_ms=answered[i], agrees=answer.is_best(action),
                        exact=answer.exact))
        deal.apply(action)


# ------------------------------------------------------------------ the test
@dataclass(frozen=True, slots=True)
class BotAudit:
    """One bot's figures: its counted decisions unseen and seen, and the test."""

    bot: str
    unseen: int = 0
    unseen_agree: int = 0
    seen: int = 0
    seen_agree: int = 0
    #: decisions too close in time to the other table's to say, and decisions without times
    ambiguous: int = 0
    untimed: int = 0
    #: decisions of decks this bot played at one table only (unseen, but nothing to pair them with)
    single: int = 0
    #: deals compared (seen and unseen decisions at the same trick), and the mean of their
    #: differences in agreement (seen minus unseen)
    deals: int = 0
    difference: float | None = None
    #: one-sided p-value that the difference is above zero (None: fewer than two decks)
    p_value: float | None = None
    flagged: bool = False

    @property
    def unseen_rate(self) -> float | None:
        return self.unseen_agree / self.unseen if self.unseen else None

    @property
    def seen_rate(self) -> float | None:
        return self.seen_agree / self.seen if self.seen else None


@dataclass(frozen=True, slots=True)
class AuditReport:
    """An audit of some records: each bot's figures, and what was analysed."""

    bots: tuple[BotAudit, ...]
    alpha: float
    margin_ms: int
    min_deals: int
    tables: int = 0
    deals: int = 0
    decisions: int = 0
    unreadable: tuple[str, ...] = field(default=())


def audit(tables: Sequence[TableAnalysis], *, margin_ms: int = DEFAULT_MARGIN_MS, alpha: float = ALPHA,
          min_deals: int = MIN_DEALS) -> AuditReport:
    """Each bot's agreement with perfect information before and after it could have seen the
    deal, and the test (see the module docstring); bots in name order."""
    first_shown: dict[tuple[str, str], list[tuple[str, int | None]]] = defaultdict(list)
    for t in tables:
        for bot, deck, when in t.shown:
            first_shown[(bot, deck)].append((t.match_id, when))
    tallies: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    # (bot, deck) -> trick -> [seen agreements], [unseen agreements]
    strata: dict[tuple[str, str], dict[int, tuple[list[int], list[int]]]] = defaultdict(dict)
    for t in tables:
        for d in t.decisions:
            tally = tallies[d.bot]
            others = [when for match_id, when in first_shown[(d.bot, d.deck)] if match_id != d.match_id]
            if not others:
                kind = "single"
            elif d.answered_ms is None or any(w is None for w in others):
                kind = "untimed"
            else:
                seen_at = min(w for w in others if w is not None)
                kind = ("seen" if seen_at + margin_ms < d.answered_ms
                        else "unseen" if seen_at > d.answered_ms + margin_ms else "ambiguous")
            tally[kind] += 1
            if kind in ("seen", "unseen"):
                tally[kind + "_agree"] += d.agrees
                seen_list, unseen_list = strata[(d.bot, d.deck)].setdefault(d.trick, ([], []))
                (seen_list if kind == "seen" else unseen_list).append(int(d.agrees))
    differences: dict[str, list[float]] = defaultdict(list)
    for (bot, _), by_trick in strata.items():
        both = [sum(s) / len(s) - sum(u) / len(u) for s, u in by_trick.values() if s and u]
        if both:
            differences[bot].append(sum(both) / len(both))
    rows = []
    for bot in sorted(tallies):
        tally = tallies[bot]
        diffs = differences.get(bot, [])
        mean, p = one_sided_t(diffs)
        rows.append(BotAudit(
            bot=bot, unseen=tally["unseen"], unseen_agree=tally["unseen_agree"], seen=tally["seen"],
            seen_agree=tally["seen_agree"], ambiguous=tally["ambiguous"], untimed=tally["untimed"],
            single=tally["single"], deals=len(diffs), difference=mean, p_value=p,
            flagged=p is not None and p < alpha and len(diffs) >= min_deals,
        ))
    return AuditReport(
        bots=tuple(rows), alpha=alpha, margin_ms=margin_ms, min_deals=min_deals, tables=len(tables),
        deals=sum(t.deals for t in tables), decisions=sum(len(t.decisions) for t in tables),
        unreadable=tuple(f"{t.match_id}: {t.error}" for t in tables if t.error),
    )


def one_sided_t(values: Sequence[float]) -> tuple[float | None, float | None]:
    """The mean of ``values`` and the one-sided p-value of Student's t-test that their mean is above
    zero; (None, None) for no value, (mean, None) for one. All values equal: p is 0 if they are
    above zero, 1 otherwise."""
    n = len(values)
    if n == 0:
        return None, None
    mean = sum(values) / n
    if n == 1:
        return mean, None
    var = sum((v - mean) ** 2 for v in values) / (n - 1)
    if var <= 1e-24:
        return mean, 0.0 if mean > 0 else 1.0
    return mean, t_sf(mean / math.sqrt(var / n), n - 1)


def t_sf(t: float, df: float) -> float:
    """P(T > t) for Student's t with ``df`` degrees of freedom (through the regularized incomplete
    beta function; the standard library has no t distribution)."""
    x = df / (df + t * t)
    tail = 0.5 * _betainc(df / 2, 0.5, x)
    return tail if t > 0 else 1.0 - tail


def _betainc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b), by its continued fraction."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x)
                     + b * math.log1p(-x))
    if x < (a + 1) / (a + b + 2):
        return front * _beta_fraction(a, b, x) / a
    return 1.0 - front * _beta_fraction(b, a, 1.0 - x) / b


def _beta_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function (modified Lentz's method)."""
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 500):
        for aa in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                   -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + aa * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + aa / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return h
