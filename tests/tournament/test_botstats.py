"""What one result adds to each of its bots (arena.tournament.botstats), read like the rules.

Over random matches of both presets (hypothesis): one side's contracts are the other's defence,
its coinches the other's coinched contracts, its capots the other's suffered; a margin won by one
side is lost by the other; every decision the referee timed is one bot's; what was made was taken.
A strike counts for the seat struck, by kind; a fallback is no decision time; a forfeit is the
forfeiting side's.
"""

from __future__ import annotations

import random
from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from arena.records import ResultReason, StrikeEntry, StrikeReason
from arena.tournament import MatchJob, MatchResult
from arena.tournament.botstats import BotGame, bot_games, time_bucket
from tests.tournament.helpers import play_job


def played(ruleset: str, seed: int, kinds: tuple[str, str] = ("heuristic", "random")) -> MatchResult:
    job = MatchJob(f"t-r1-{seed}", "t", "alpha", "beta", ruleset, f"seed{seed}", deals=3)
    return play_job(job, {"alpha": kinds[0], "beta": kinds[1]}, random.Random(seed))


def g(counters: dict[str, int], key: str) -> int:
    return counters.get(key, 0)


def by_bot(result: MatchResult) -> dict[str, BotGame]:
    return {g.bot: g for g in bot_games(result, ("coinche",), 1.0)}


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(["classic", "coinche"]), st.integers(0, 10**6))
def test_one_sides_facts_mirror_the_others(ruleset: str, seed: int) -> None:
    r = played(ruleset, seed)
    games = by_bot(r)
    a, b = games["alpha"].stats, games["beta"].stats
    assert g(a, "matches") == g(b, "matches") == 1
    assert g(a, "deals") == g(b, "deals") and g(a, "deals") + g(a, "thrown_in") == r.record.deals_played
    assert g(a, "taker.n") == g(b, "defence.n") and g(a, "defence.n") == g(b, "taker.n")
    assert g(a, "taker.n") + g(a, "defence.n") == g(a, "deals")
    assert g(a, "coinches") == g(b, "coinched") and g(a, "capots") == g(b, "capots_against")
    for s in (a, b):
        assert g(s, "made") <= g(s, "taken") == g(s, "taker.n")
        levels = {k: v for k, v in s.items() if k.startswith("taken.L.")}
        trumps = {k: v for k, v in s.items() if k.startswith("taken.T.")}
        assert sum(levels.values()) == sum(trumps.values()) == g(s, "taken")
        assert g(s, "belotes") <= g(s, "deals")
    ha, hb = games["alpha"].h2h, games["beta"].h2h
    assert g(ha, "beta sum") == -g(hb, "alpha sum") and g(ha, "beta n") == g(a, "deals")
    assert g(ha, "beta w") == g(hb, "alpha l") and g(ha, "beta d") == g(hb, "alpha d")
    timed = sum(1 for deal in r.record.latencies_us for us in deal if us >= 0)
    assert g(a, "decisions") + g(b, "decisions") == timed
    entry = games["alpha"].entry
    assert entry["totals"] == list(r.totals) and entry["opponent"] == "beta" and "counters" not in entry


def test_a_strike_and_its_fallback_count_for_the_seat_struck() -> None:
    r = played("coinche", 11)
    record = r.record
    first = list(record.latencies_us[0])
    dealer = int(record.deals[0]["dealer"])
    struck = (dealer + 1) % 4  # decision 0 of deal 0: the first bid, by the seat after the dealer
    first[0] = -1
    first[1] = 2_000_000  # the next seat's bid took 2 s
    strike = StrikeEntry(deal=0, decision=0, seat=struck, kind=StrikeReason.LATE, reason="late", detail="",
                         fallback="pass")
    record = replace(record, latencies_us=(tuple(first), *record.latencies_us[1:]), strikes=(strike,))
    games = by_bot(replace(r, record=record))
    bot = r.seat_bots[struck]
    other = r.seat_bots[(struck + 1) % 4]
    s = games[bot].stats
    assert s["strikes.late"] == 1 and s["fallbacks"] == 1 and games[bot].entry["strikes"] == 1
    assert "strikes.late" not in games[other].stats and "fallbacks" not in games[other].stats
    assert games[other].stats[f"time.{time_bucket(2_000_000)}"] >= 1


def test_a_forfeit_is_the_forfeiting_sides() -> None:
    r = played("coinche", 5)
    end = replace(r.record.result, reason=ResultReason.FORFEIT, forfeit_seat=1, winner=0)
    games = by_bot(replace(r, record=replace(r.record, result=end)))
    assert games["beta"].stats["forfeits"] == 1 and "forfeits" not in games["alpha"].stats
    assert games["beta"].entry["forfeit"] is True and games["alpha"].entry["result"] == "win"


def test_a_mixed_match_counts_each_bots_own_seats_times() -> None:
    job = MatchJob.seated("m-r1-0", "m", ("alpha", "beta", "gamma", "delta"), ruleset="coinche", seed="mx",
                          deals=2)
    r = play_job(job, dict.fromkeys(("alpha", "beta", "gamma", "delta"), "random"), random.Random(2))
    games = {g.bot: g for g in bot_games(r, ("coinche",), 1.0)}
    assert set(games) == {"alpha", "beta", "gamma", "delta"}
    assert games["alpha"].entry["partner"] == "gamma" and games["alpha"].entry["opponent"] == "beta+delta"
    # the side's contracts are both partners'; each decision is one seat's
    assert games["alpha"].stats.get("taken", 0) == games["gamma"].stats.get("taken", 0)
    timed = sum(1 for deal in r.record.latencies_us for us in deal if us >= 0)
    assert sum(g.stats.get("decisions", 0) for g in games.values()) == timed


def test_a_match_against_itself_is_history_and_no_statistic() -> None:
    job = MatchJob("vt-r1-0", "vt", "alpha", "alpha", "coinche", "self", deals=2)
    r = play_job(job, {"alpha": "heuristic"}, random.Random(1))
    (game,) = bot_games(r, ("coinche",), 1.0)
    assert game.stats == {} and game.h2h == {}
    assert game.entry["self_play"] is True and game.entry["opponent"] == "alpha"
