"""Detection: the audit flags a bot that plays better once it could have seen a deal at another table,
and only such a bot, at the rate its p-value promises.

The statistic is checked on simulated decisions (its false-positive rate, its power, what it
does with legs that overlap); the whole audit on mirror pairs played by the SDK's bots against
the pure engine (``mirror_play``, whose records have the referee's form) with a bot that
remembers hands (``remembering_bot``); tests/node/test_audit.py plays it through a real node.
"""

from __future__ import annotations

import dataclasses
import json
import math
import multiprocessing
import os
import random
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor

import pytest
from belote_bot import Bot, HeuristicBot, SearchBot

from arena.harness import local_arena
from arena.records import MatchRecord
from arena.tournament.audit import AnalysisCache, select_tables
from arena.tournament.detection import (
    MIN_DEALS,
    BotAudit,
    CardDecision,
    TableAnalysis,
    analyse_record,
    audit,
    one_sided_t,
    t_sf,
)
from tests.referee.arena_helpers import FAST, arun

from .mirror_play import _Leg, play_pairs
from .remembering_bot import RememberingBot


# ------------------------------------------------------------------ the test's arithmetic
@pytest.mark.parametrize(("t", "df", "p"), [
    (2.539, 19, 0.010), (2.262, 9, 0.025), (1.0, 1, 0.25), (0.0, 7, 0.5), (-2.262, 9, 0.975),
    (3.686, 15, 0.001), (1.645, 100_000, 0.05),
])
def test_student_s_t_tail_matches_the_tables(t: float, df: int, p: float) -> None:
    assert t_sf(t, df) == pytest.approx(p, abs=2e-4)


def test_student_s_t_tail_matches_scipy() -> None:
    stats = pytest.importorskip("scipy.stats")
    rng = random.Random(5)
    for _ in range(200):
        t, df = rng.uniform(-6, 6), rng.choice([1, 2, 3, 5, 9, 19, 40, 199, 1000])
        assert t_sf(t, df) == pytest.approx(float(stats.t.sf(t, df)), rel=1e-7, abs=1e-12)


def test_the_one_sided_test_of_a_few_values() -> None:
    assert one_sided_t([]) == (None, None)
    assert one_sided_t([0.5]) == (0.5, None)
    mean, p = one_sided_t([0.2, 0.2, 0.2])
    assert mean == pytest.approx(0.2) and p == 0.0
    assert one_sided_t([0.0, 0.0]) == (0.0, 1.0)
    mean, p = one_sided_t([0.1, -0.1, 0.3, 0.2, 0.0])
    assert mean == pytest.approx(0.1)
    assert p == pytest.approx(t_sf(0.1 / math.sqrt(0.025 / 5), 4))


# ------------------------------------------------------------------ seen, unseen, ambiguous
def decision(match_id: str, answered: int | None, agrees: bool, *, trick: int = 3, deck: str = "d1",
             bot: str = "x") -> CardDecision:
    return CardDecision(bot=bot, deck=deck, match_id=match_id, deal=0, trick=trick,
                        asked_ms=None if answered is None else answered - 1, answered_ms=answered,
                        agrees=agrees, exact=True)


def table(match_id: str, shown: int | None, decisions: Sequence[CardDecision], *, deck: str = "d1",
          bot: str = "x") -> TableAnalysis:
    return TableAnalysis(match_id, tuple(decisions), ((bot, deck, shown),), deals=1)


def test_a_decision_is_seen_once_the_bot_was_shown_the_deal_at_another_table() -> None:
    # the bot was first shown the deal at table A at 1000 ms, at table B at 2000 ms
    a = table("A", 1000, [decision("A", 1500, False), decision("A", 1997, False), decision("A", 2500, True)])
    b = table("B", 2000, [decision("B", 1004, True), decision("B", 1007, True), decision("B", 2100, True)])
    row, = audit([a, b], margin_ms=5).bots
    # at A: 1500 is before B showed it (unseen), 1997 within 5 ms of 2000 (ambiguous), 2500 after (seen)
    # at B: 1004 within 5 ms of A's 1000 (ambiguous), 1007 and 2100 after (seen)
    assert (row.unseen, row.seen, row.ambiguous) == (1, 3, 2)
    assert (row.unseen_agree, row.seen_agree) == (0, 3)
    assert row.deals == 1 and row.difference == pytest.approx(1.0)


def test_a_deal_played_at_one_table_or_without_times_compares_nothing() -> None:
    alone = table("A", 1000, [decision("A", 1500, True, deck="d2")], deck="d2")
    old_a = table("C", None, [decision("C", None, True, deck="d3")], deck="d3")
    old_b = table("D", None, [decision("D", None, False, deck="d3")], deck="d3")
    row, = audit([alone, old_a, old_b]).bots
    assert (row.single, row.untimed, row.seen, row.unseen, row.deals) == (1, 2, 0, 0, 0)
    assert row.p_value is None and not row.flagged


def test_seen_and_unseen_decisions_are_compared_trick_by_trick() -> None:
    # legs that overlap: table B starts halfway through table A, so A's unseen decisions are its
    # first tricks, where nobody agrees, and its seen ones its last tricks, where everybody does.
    # Pooled, seen decisions agree far more often; trick by trick, nothing changed.
    tables = []
    for k in range(30):
        deck = f"d{k}"
        first = [decision(f"A{k}", 10 + 10 * t, t >= 4, trick=t, deck=deck) for t in range(8)]
        second = [decision(f"B{k}", 100 + 10 * t, t >= 4, trick=t, deck=deck) for t in range(8)]
        tables += [table(f"A{k}", 0, first, deck=deck), table(f"B{k}", 45, second, deck=deck)]
    row, = audit(tables, margin_ms=0).bots
    assert row.unseen_rate == 0.0 and row.seen_rate == pytest.approx(2 / 3)
    assert row.deals == 30 and row.difference == 0.0 and not row.flagged


# ------------------------------------------------------------------ calibration, on simulated play
def simulated(rng: random.Random, deals: int, *, effect: float = 0.0, overlap: float = 0.0,
              bot: str = "x") -> list[TableAnalysis]:
    """Mirror pairs of one bot: per deal a difficulty, a side that is easier than the other, later
    tricks easier, 0 to 2 counted decisions a trick at each table; the table played second (a coin)
    starts ``overlap`` of the way into the first, and ``effect`` is added to the chance that a seen
    decision agrees."""
    tables = []
    for k in range(deals):
        deck = f"d{k}"
        base = rng.uniform(0.35, 0.75)
        sides = [rng.gauss(0, 0.08), rng.gauss(0, 0.08)]
        second = rng.randrange(2)
        start = [0, 0]
        start[second] = 1000 - int(1000 * overlap)  # the first table's decisions span 0..760 ms
        both = []
        for side in (0, 1):
            out = []
            for trick in range(8):
                for _ in range(rng.randrange(3)):
                    when = start[side] + 100 * trick + rng.randrange(60)
                    seen = when > start[1 - side] + 5
                    p = base + sides[side] + 0.03 * trick + (effect if seen else 0.0)
                    out.append(decision(f"{deck}-{side}", when, rng.random() < min(1.0, max(0.0, p)),
                                        trick=trick, deck=deck, bot=bot))
            both.append(table(f"{deck}-{side}", start[side], out, deck=deck, bot=bot))
        tables += both
    return tables


@pytest.mark.parametrize("overlap", [0.0, 0.5])
def test_an_honest_bot_is_flagged_as_often_as_the_p_value_promises(overlap: float) -> None:
    rng = random.Random(f"calibration/{overlap}")
    runs = 300
    p_values = []
    for _ in range(runs):
        row, = audit(simulated(rng, 30, overlap=overlap)).bots
        assert row.p_value is not None
        p_values.append(row.p_value)
    # under no effect a p-value is uniform: 1% under 0.01, 5% under 0.05 (binomial margins of ~3 sd)
    assert sum(p < 0.01 for p in p_values) <= 0.01 * runs + 3 * math.sqrt(0.01 * runs)
    assert abs(sum(p < 0.05 for p in p_values) - 0.05 * runs) <= 3 * math.sqrt(0.05 * 0.95 * runs)
    assert abs(sum(p < 0.5 for p in p_values) - 0.5 * runs) <= 3 * math.sqrt(0.25 * runs)


def test_a_bot_that_agrees_a_fifth_more_often_once_it_has_seen_the_deal_is_flagged() -> None:
    rng = random.Random("power")
    flagged = sum(audit(simulated(rng, 40, effect=0.2)).bots[0].flagged for _ in range(100))
    assert flagged >= 95


def test_a_flag_needs_enough_deals_compared() -> None:
    def deals(n: int) -> list[TableAnalysis]:
        return [t for k in range(n) for t in (
            table(f"A{k}", 0, [decision(f"A{k}", 10, False, deck=f"d{k}")], deck=f"d{k}"),
            table(f"B{k}", 20, [decision(f"B{k}", 30, True, deck=f"d{k}")], deck=f"d{k}"))]

    few, = audit(deals(MIN_DEALS - 1)).bots
    assert few.p_value == 0.0 and few.deals == MIN_DEALS - 1 and not few.flagged
    enough, = audit(deals(MIN_DEALS)).bots
    assert enough.flagged


# ------------------------------------------------------------------ budget and cache
@dataclasses.dataclass(frozen=True)
class Row:
    match_id: str
    seed: str
    deals_played: int


def test_an_audit_reads_whole_groups_of_tables_within_its_budget_the_same_every_time() -> None:
    rows = [Row(f"p{i}-leg{leg}", f"seed{i}", 4) for i in range(50) for leg in (0, 1)] + [Row("gone", "", 0)]
    chosen, total = select_tables(rows, 40)
    assert total == 400 and len(chosen) == 10
    seeds = {r.seed for r in rows if r.match_id in chosen}
    assert len(seeds) == 5
    assert {r.match_id for r in rows if r.seed in seeds} == set(chosen)  # both legs of each pair
    assert set(select_tables(rows[::-1], 40)[0]) == set(chosen)  # whatever order they come in
    assert select_tables(rows, 1)[0] == []


def test_the_cache_keeps_at_most_its_deals() -> None:
    cache = AnalysisCache(max_deals=10)
    for i in range(5):
        cache.put(TableAnalysis(f"m{i}", (), (), deals=4))
    assert cache.get("m0") is None and cache.get("m4") is not None and cache.get("m3") is not None
    assert cache.get("m2") is None


# ------------------------------------------------------------------ whole records
def test_the_local_records_have_the_form_of_the_referee_s() -> None:
    async def main() -> MatchRecord:
        async with local_arena(time=FAST) as arena:
            await arena.connect("alpha", HeuristicBot(1))
            await arena.connect("beta", HeuristicBot(2))
            return await arena.play("alpha", "beta", "coinche", seed="form", deals=2, match_id="t-r1-0-leg0")

    served = arun(main())
    from arena.engine import Match, Ruleset

    leg = _Leg("t-r1-0-leg0", ("alpha", "beta", "alpha", "beta"),
               (HeuristicBot(1), HeuristicBot(2), HeuristicBot(1), HeuristicBot(2)),
               Match(Ruleset.from_spec("coinche").with_options(deals=2), "form"))
    now = 1_700_000_000_000
    while not leg.is_over:
        leg.step(now)
        now += 1
    local = leg.record()
    ours, theirs = json.loads(local.to_json()), json.loads(served.to_json())
    assert ours.keys() == theirs.keys()
    for key in ("match_id", "ruleset", "seed", "players", "deals", "strikes", "result"):
        assert ours[key] == theirs[key], key
    for key in ("latencies_us", "asked_ms"):
        assert [len(d) for d in ours[key]] == [len(d) for d in theirs[key]]
    assert [b["name"] for b in ours["bots"]] == [b["name"] for b in theirs["bots"]]
    assert MatchRecord.from_json(local.to_json()) == local


def figures(records: Sequence[MatchRecord]) -> dict[str, BotAudit]:
    report = audit([analyse_record(r) for r in records])
    assert not report.unreadable
    return {b.bot: b for b in report.bots}


@pytest.mark.security
def test_a_bot_that_remembers_hands_is_flagged_within_20_pairs() -> None:
    cheat = RememberingBot(seed=1)
    records = play_pairs(lambda i: ("remembering", cheat), lambda i: ("heuristic", HeuristicBot(2)),
                         pairs=20, deals=1, order="deal", seed="cheat")
    assert cheat.cheated > 100  # it did know every hand, and used them
    rows = figures(records)
    row = rows["remembering"]
    assert row.flagged and row.p_value is not None and row.p_value < 0.01
    assert row.seen_rate == 1.0 and row.deals >= MIN_DEALS
    assert not rows["heuristic"].flagged


def test_the_heuristic_and_the_search_bot_are_not_flagged() -> None:
    search = SearchBot(seed=3, iterations=6, search_bids=False)  # why its bids are not searched: HONEST's
    records = play_pairs(lambda i: ("heuristic", HeuristicBot(4)), lambda i: ("search", search),
                         pairs=20, deals=1, order="deal", seed="honest-quick")
    for row in figures(records).values():
        assert row.deals >= MIN_DEALS and row.p_value is not None
        assert not row.flagged


def test_legs_played_in_step_leave_nothing_to_compare() -> None:
    # both tables ask for their deal at once: the bot has seen both before any card (the limit of
    # the method, docs/detection.md#what-it-cannot-see)
    cheat = RememberingBot(seed=1)
    records = play_pairs(lambda i: ("remembering", cheat), lambda i: ("heuristic", HeuristicBot(2)),
                         pairs=4, deals=1, order="lockstep", seed="step")
    row = figures(records)["remembering"]
    assert row.unseen == 0 and row.deals == 0 and row.p_value is None and not row.flagged
    assert cheat.cheated > 0


def test_a_record_that_does_not_replay_is_reported_not_counted() -> None:
    records = play_pairs(lambda i: ("a", HeuristicBot(1)), lambda i: ("b", HeuristicBot(2)), pairs=1, deals=1)
    data = json.loads(records[0].to_json())
    data["deals"][0]["plays"][3] = "7S" if data["deals"][0]["plays"][3] != "7S" else "8S"
    broken = MatchRecord.from_dict(data)
    analysis = analyse_record(broken)
    assert analysis.error and analysis.decisions == ()
    report = audit([analysis, analyse_record(records[1])])
    assert report.unreadable and report.unreadable[0].startswith(broken.match_id)


# ------------------------------------------------------------------ 200 pairs (slow)
def flags_in_disjoint_audits(analyses: Sequence[TableAnalysis], pairs_each: int) -> list[float]:
    """The p-values of the bots in audits of ``pairs_each`` pairs at a time (a pair: two tables)."""
    out = []
    for start in range(0, len(analyses), 2 * pairs_each):
        rows = audit(analyses[start:start + 2 * pairs_each]).bots
        out += [b.p_value for b in rows if b.p_value is not None]
    return out


#: honest pairings the slow tests play, by name (a child process makes its own bots from the name); the
#: search bot bids as the heuristic does (``search_bids=False``): the audit reads card decisions only,
#: which it still makes by search, and its searched bids were half the CPU of the pairs' play
HONEST: dict[str, Callable[[], tuple[tuple[str, Bot], tuple[str, Bot]]]] = {
    "heuristic-search": lambda: (("heuristic", HeuristicBot(6)),
                                 ("search", SearchBot(seed=5, iterations=6, search_bids=False))),
    "heuristic-heuristic": lambda: (("heuristic", HeuristicBot(7)), ("heuristic-b", HeuristicBot(8))),
}


def analysed_chunk(pairing: str, seed: str, order: str, first: int, pairs: int) -> list[TableAnalysis]:
    a, b = HONEST[pairing]()
    records = play_pairs(lambda i: a, lambda i: b, pairs=pairs, deals=1, order=order, seed=seed, first=first)
    return [analyse_record(r) for r in records]


def analysed_pairs(pairing: str, seed: str, order: str, pairs: int) -> list[TableAnalysis]:
    """``pairs`` honest mirror pairs of ``pairing``, played and analysed in a process a core (the
    pairs are independent; 200 of them take 90 s on one core); in pair order."""
    workers = max(1, min(4, os.cpu_count() or 1))
    bounds = [(pairs * k // workers, pairs * (k + 1) // workers) for k in range(workers)]
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        chunks = [pool.submit(analysed_chunk, pairing, seed, order, lo, hi - lo) for lo, hi in bounds]
        return [a for chunk in chunks for a in chunk.result()]


@pytest.mark.slow
def test_the_heuristic_and_the_search_bot_are_not_flagged_over_200_pairs() -> None:
    analyses = analysed_pairs("heuristic-search", "honest-200", "deal", 200)
    assert len(analyses) == 400 and not any(a.error for a in analyses)
    report = audit(analyses)
    for row in report.bots:
        assert row.deals >= 150 and row.p_value is not None
        assert not row.flagged, row
    # ten audits of 20 pairs each: under 1% of them flagged is what p < 0.01 promises (two or more
    # false flags out of 20 bot-audits would happen 1.7% of the time)
    p_values = flags_in_disjoint_audits(analyses, 20)
    assert len(p_values) == 20 and sum(p < 0.01 for p in p_values) <= 1


@pytest.mark.slow
def test_two_heuristic_bots_whose_legs_always_run_in_the_same_order_are_not_flagged_over_200_pairs() -> None:
    # leg 0 always first: the bot is always "seen" on the same side of the table (team 1); the
    # dealer, drawn from each pair's seed, is what makes the two sides alike on average
    report = audit(analysed_pairs("heuristic-heuristic", "honest-sequential", "sequential", 200))
    for row in report.bots:
        assert row.deals >= 150 and not row.flagged, row


@pytest.mark.slow
@pytest.mark.security
def test_a_bot_that_remembers_hands_is_flagged_whichever_leg_runs_first() -> None:
    cheat = RememberingBot(seed=9)
    records = play_pairs(lambda i: ("remembering", cheat), lambda i: ("heuristic", HeuristicBot(10)),
                         pairs=20, deals=1, order="sequential", seed="cheat-sequential")
    rows = figures(records)
    assert rows["remembering"].flagged and not rows["heuristic"].flagged
