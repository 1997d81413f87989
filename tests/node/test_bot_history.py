"""A bot's history and statistics as the node shows them: filtered, paged, sealed tables hidden.

Both backends. The history pages with a cursor that stays put when newer
matches come; each filter keeps what it says; a bad filter is refused with a
message naming it. A duplicate table whose other table is not played yet is
listed without its result, matches no filter on the result, and counts in no
statistic nor head-to-head until its pair is over; then it counts, once.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.cli.bots import report_lines
from arena.engine import Ruleset
from arena.node.history import (
    MAX_LIMIT,
    HistoryError,
    HistoryQuery,
    KeptAnalyses,
    bot_report,
    bot_statistics,
    history_page,
    parse_query,
)
from arena.node.rankings import Rankings
from arena.queue import Broker
from arena.tournament import MatchJob, Tournaments, TournamentSpec
from arena.tournament.botstats import percentile_ms, time_bucket
from tests.factories import result_of_job
from tests.queue.conftest import broker, store  # noqa: F401  # the fixtures: both backends
from tests.tournament.helpers import play_job

WON = (1001, 640)


def write_games(broker: Broker, n: int) -> list[str]:  # noqa: F811
    """Alpha's ``n`` matches against opp0, opp1, opp2 in turn, won but every third; ids newest first."""
    broker.put_tournament(TournamentSpec(tournament_id="t1", format="round-robin", bots=("alpha", "opp0")))
    ids = []
    for i in range(n):
        job = MatchJob(f"t1-r1-{i}", "t1", "alpha", f"opp{i % 3}", "classic", f"s{i}")
        broker.write_result(result_of_job(job, WON if i % 3 else WON[::-1], 0 if i % 3 else 1))
        ids.append(job.match_id)
    return ids[::-1]


def page(broker: Broker, **params: str) -> dict[str, Any]:  # noqa: F811
    return history_page(broker, Tournaments(broker), "alpha", parse_query(params)).to_json()


def test_the_history_pages_with_a_cursor_newest_first(broker: Broker) -> None:  # noqa: F811
    ids = write_games(broker, 7)
    seen: list[str] = []
    cursor = ""
    for _ in range(4):
        got = page(broker, limit="3", **({"cursor": cursor} if cursor else {}))
        seen += [m["match_id"] for m in got["matches"]]
        cursor = got["next_cursor"]
        assert got["total"] == 7
        if not cursor:
            break
    assert seen == ids
    first = page(broker, limit="2")
    # a newer match does not move the next page: it starts after the cursor
    broker.write_result(result_of_job(MatchJob("t1-r1-99", "t1", "alpha", "opp0", "classic", "s"), WON, 0))
    after = page(broker, limit="2", cursor=first["next_cursor"])
    assert [m["match_id"] for m in after["matches"]] == ids[2:4]


def test_each_filter_keeps_what_it_says(broker: Broker) -> None:  # noqa: F811
    ids = write_games(broker, 9)
    assert {m["opponent"] for m in page(broker, opponent="opp1", limit="100")["matches"]} == {"opp1"}
    assert page(broker, opponent="opp1")["total"] == 3
    losses = page(broker, result="loss")
    assert losses["total"] == 3 and all(m["result"] == "loss" and m["totals"] == [640, 1001]
                                        for m in losses["matches"])
    assert page(broker, result="win")["total"] == 6 and page(broker, result="draw")["total"] == 0
    assert page(broker, tournament="t1")["total"] == 9 and page(broker, tournament="t2")["total"] == 0
    assert page(broker, pool="tournament:t1")["total"] == 9 and page(broker, pool="coinche")["total"] == 0
    assert page(broker, ladder="coinche")["total"] == 0
    assert page(broker, since="2000-01-01", until="2999-01-01")["total"] == 9
    assert page(broker, since="2999-01-01")["total"] == 0 and page(broker, until="2000-01-01")["total"] == 0
    m = page(broker, limit="1")["matches"][0]
    assert m["match_id"] == ids[0] and set(m["rating_change"]) == {"tournament:t1", "classic"}
    assert 0 < m["rating_change"]["classic"] <= 16  # a win moves the Elo up by at most K
    assert m["sealed"] is False and m["accuracy"] is None and "counters" not in m


@pytest.mark.parametrize(("params", "says"), [
    ({"result": "won"}, "result must be one of win, draw, loss"),
    ({"limit": "0"}, "limit must be a whole number from 1 to 100"),
    ({"limit": str(MAX_LIMIT + 1)}, "limit must be"),
    ({"limit": "ten"}, "limit must be"),
    ({"since": "yesterday"}, "since must be a date"),
    ({"since": "2026-12-08", "until": "2026-12-07"}, "since must be before until"),
    ({"opponent": "<script>"}, "opponent must be a bot's name"),
    ({"oponent": "beta"}, "unknown filter 'oponent'"),
    ({"tournament": "t1", "ladder": "coinche"}, "tournament or ladder, not both"),
    ({"pool": "x" * 300}, "pool must be printable text"),
])
def test_a_bad_filter_is_refused_saying_why(params: dict[str, str], says: str) -> None:
    with pytest.raises(HistoryError, match=says):
        parse_query(params)


def test_a_cursor_no_longer_kept_is_refused(broker: Broker) -> None:  # noqa: F811
    write_games(broker, 2)
    with pytest.raises(HistoryError, match="not in the bot's kept history"):
        history_page(broker, Tournaments(broker), "alpha", HistoryQuery(cursor="t9-r1-0"))


def test_statistics_and_head_to_head_count_every_game(broker: Broker) -> None:  # noqa: F811
    write_games(broker, 9)
    report = bot_statistics(broker, Tournaments(broker), "alpha")
    s = report["statistics"]
    assert (s["matches"], s["wins"], s["draws"], s["losses"]) == (9, 6, 0, 3)
    rows = {r["opponent"]: r for r in report["head_to_head"]}
    assert set(rows) == {"opp0", "opp1", "opp2"}
    assert (rows["opp0"]["wins"], rows["opp0"]["losses"]) == (0, 3)  # every third match, lost
    assert (rows["opp1"]["wins"], rows["opp1"]["losses"]) == (3, 0)
    assert bot_statistics(broker, Tournaments(broker), "nobody")["statistics"]["matches"] == 0


def test_real_matches_count_contracts_points_and_decision_times(broker: Broker) -> None:  # noqa: F811
    spec = TournamentSpec(tournament_id="c1", format="round-robin", bots=("alpha", "beta"),
                          ruleset=Ruleset.from_spec("coinche"), deals=4)
    broker.put_tournament(spec)
    results = []
    for i in range(3):
        job = MatchJob(f"c1-r1-{i}", "c1", "alpha", "beta", "coinche", f"seed{i}", deals=4)
        results.append(play_job(job, {"alpha": "heuristic", "beta": "random"}, random.Random(i)))
        broker.write_result(results[-1])
    a = bot_statistics(broker, Tournaments(broker), "alpha")
    b = bot_statistics(broker, Tournaments(broker), "beta")
    sa, sb = a["statistics"], b["statistics"]
    c = sa["contracts"]
    assert c["taken"] == sum(r["taken"] for r in c["by_level"]) == sum(r["taken"] for r in c["by_trump"])
    assert c["made"] == sum(r["made"] for r in c["by_level"]) <= c["taken"]
    assert sa["points_per_deal"]["taker"]["n"] == c["taken"] == sb["points_per_deal"]["defence"]["n"]
    assert sa["deals"] + sa["thrown_in"] == sum(r.record.deals_played for r in results)
    assert sa["capots"]["made"] == sb["capots"]["against"]
    assert sa["coinches"]["against"] == sb["coinches"]["said"]
    assert sa["decision_ms"]["decisions"] + sb["decision_ms"]["decisions"] == sum(
        len(t) for r in results for t in r.record.latencies_us)
    (row,) = a["head_to_head"]
    (back,) = b["head_to_head"]
    assert row["games"] == 3 and row["points_per_deal"]["n"] == sa["deals"]
    assert row["points_per_deal"]["mean"] == pytest.approx(-back["points_per_deal"]["mean"], abs=0.11)
    low, mean, high = (row["points_per_deal"][k] for k in ("low", "mean", "high"))
    assert low <= mean <= high


def test_a_sealed_table_shows_no_result_and_counts_once_unsealed(broker: Broker) -> None:  # noqa: F811
    spec = TournamentSpec(tournament_id="d1", format="round-robin", bots=("alpha", "beta"),
                          duplicate="mirror", deals=2)
    broker.put_tournament(spec)
    leg0 = MatchJob("d1-r1-0-leg0", "d1", "alpha", "beta", "classic", "s", deals=2)
    leg1 = MatchJob("d1-r1-0-leg1", "d1", "beta", "alpha", "classic", "s", deals=2)
    broker.write_result(result_of_job(leg0, WON, 0))
    (m,) = page(broker)["matches"]
    assert m["sealed"] is True and m["match_id"] == leg0.match_id
    assert not {"result", "totals", "rating_change", "points_per_deal", "reason"} & set(m)
    assert page(broker, result="win")["total"] == 0
    report = bot_statistics(broker, Tournaments(broker), "alpha")
    assert report["statistics"]["matches"] == 0 and report["head_to_head"] == []
    broker.write_result(result_of_job(leg1, WON, 0))
    got = page(broker)["matches"]
    assert [x["sealed"] for x in got] == [False, False]
    assert [x["result"] for x in got] == ["loss", "win"]
    report = bot_statistics(broker, Tournaments(broker), "alpha")
    assert (report["statistics"]["matches"], report["statistics"]["wins"]) == (2, 1)
    assert report["head_to_head"][0]["games"] == 2


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=10**8), min_size=1, max_size=200))
def test_a_percentile_is_its_bucket_bound_within_a_quarter(times: list[int]) -> None:
    histogram: dict[int, int] = {}
    for us in times:
        histogram[time_bucket(us)] = histogram.get(time_bucket(us), 0) + 1
    ordered = sorted(times)
    for q in (0.5, 0.99):
        true_ms = ordered[max(0, -(-int(q * len(times) * 1000) // 1000) - 1)] / 1000
        got = percentile_ms(histogram, q)
        # (the bound is given to the microsecond: 0.0005 ms of rounding either way)
        assert got is not None and true_ms <= got + 0.0005 and got <= max(true_ms * 1.25, 0.1) + 0.0005


def test_a_pools_fit_keeps_a_bradley_terry_point_once_enough_games_came(broker: Broker) -> None:  # noqa: F811
    now = [0.0]
    rankings = Rankings(broker, clock=lambda: now[0])
    write_games(broker, 12)
    rankings.leaderboard("classic")
    ((games, alpha_games, rating, low, high),) = rankings.bt_history("classic", "alpha")
    assert (games, alpha_games) == (12, 12) and low < rating < high
    now[0] += 10
    rankings.leaderboard("classic")  # fitted again, no new game: no new point
    assert len(rankings.bt_history("classic", "alpha")) == 1
    for i in range(10):
        job = MatchJob(f"t1-r2-{i}", "t1", "alpha", "opp0", "classic", f"s{i}")
        broker.write_result(result_of_job(job, WON, 0))
    now[0] += 10
    rankings.leaderboard("classic")
    assert [p[0] for p in rankings.bt_history("classic", "alpha")] == [12, 22]
    assert [p[1] for p in rankings.bt_history("classic", "opp0")] == [4, 14]


#: an analysis as the node keeps it (docs/analysis.md: its bots' accuracy, its worst decisions)
ANALYSED = "t1-r1-3"
WORST: list[dict[str, Any]] = [
    {"kind": "card", "deal": 1, "trick": 4, "bot": "alpha", "played": "QH", "better": ["AH", "KH"],
     "loss": 34, "label": "mistake"},
    {"kind": "card", "deal": 0, "trick": 2, "bot": "opp0", "played": "7S", "better": ["AS"], "loss": 30,
     "label": "mistake"},
    {"kind": "bidding", "deal": 0, "bot": "alpha", "played": "90H", "better": ["110S"], "loss": 20,
     "label": "inaccuracy"},
]
ANALYSIS = {
    "match_id": ANALYSED, "format": 1,
    "bots": [{"bot": "alpha", "accuracy": 71.5}, {"bot": "opp0", "accuracy": 90.0}],
    "worst": WORST,
}


def test_kept_analyses_give_each_match_its_accuracy_and_each_loss_its_worst_decisions(
        broker: Broker) -> None:  # noqa: F811
    write_games(broker, 6)  # alpha lost t1-r1-0 and t1-r1-3 (every third match)
    asked: list[str] = []

    def kept(match_id: str) -> str | None:
        asked.append(match_id)
        return json.dumps(ANALYSIS) if match_id == ANALYSED else None

    analyses = KeptAnalyses(kept)
    report = bot_report(broker, Tournaments(broker), "alpha", HistoryQuery(limit=10), analyses.accuracies,
                        analyses.worst)
    by_id = {m["match_id"]: m for m in report["matches"]}
    assert by_id[ANALYSED]["accuracy"] == 71.5 and by_id["t1-r1-4"]["accuracy"] is None
    assert by_id[ANALYSED]["worst_decisions"] == [WORST[0], WORST[2]]  # alpha's
    assert by_id["t1-r1-0"]["worst_decisions"] == []  # a loss not analysed
    assert "worst_decisions" not in by_id["t1-r1-4"]  # a win
    assert [(a["match_id"], a["accuracy"]) for a in report["statistics"]["accuracy"]] == [(ANALYSED, 71.5)]
    lines = report_lines(report)
    assert "      deal 2, trick 5: QH, better AH or KH (34 points, mistake)" in lines
    assert "      deal 1, bidding: 90H, better 110S (20 points, inaccuracy)" in lines
    # an analysis is read once; a match without one is asked again (one may be made meanwhile)
    again = bot_report(broker, Tournaments(broker), "alpha", HistoryQuery(limit=10), analyses.accuracies,
                       analyses.worst)
    assert again["matches"] == report["matches"] and asked.count(ANALYSED) == 1
    assert asked.count("t1-r1-0") > 1
    # an analysis of another shape shows nothing, and breaks nothing
    odd = KeptAnalyses(lambda m: "[1, 2]")
    assert odd.accuracies("alpha", [ANALYSED]) == {} and odd.worst("alpha", ANALYSED) == []


def test_a_sealed_leg_of_a_tournament_not_stored_is_taken_out_while_sealed(broker: Broker) -> None:  # noqa: F811
    """No group holds its counters (its tournament is not stored: its results count at once), so the
    reader takes them out while it is sealed."""
    leg0 = MatchJob("gone-r1-0-leg0", "gone", "alpha", "beta", "classic", "s", deals=2)
    leg1 = MatchJob("gone-r1-0-leg1", "gone", "beta", "alpha", "classic", "s", deals=2)
    broker.write_result(result_of_job(leg0, WON, 0))
    assert broker.bot_counters("alpha")[0]["matches"] == 1  # counted at once
    report = bot_statistics(broker, Tournaments(broker), "alpha")
    assert report["statistics"]["matches"] == 0 and report["head_to_head"] == []
    assert page(broker)["matches"][0]["sealed"] is True
    broker.write_result(result_of_job(leg1, WON, 0))
    report = bot_statistics(broker, Tournaments(broker), "alpha")
    assert report["statistics"]["matches"] == 2 and report["head_to_head"][0]["games"] == 2
