"""A bot's history and statistics over real HTTP and the real command line, after a real round-robin.

``GET /api/v1/bots/NAME/matches`` lists every match the bot played, newest
first, each with its opponent, result, totals and the rating change of that
game; its filters keep what they say and a bad one is a 400 naming it; an
unknown bot is a 404. ``GET /api/v1/bots/NAME/stats`` agrees with it, and
``belote-arena bot report NAME`` prints the same. The Bradley-Terry history
gets a point once the pool is fitted.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from arena.cli import main
from tests.web.site import TOURNAMENT, Site, get

POOL = f"tournament:{TOURNAMENT}"


def matches(site: Site, query: str = "", bot: str = "alpha") -> dict[str, Any]:
    status, body = get(site, f"/api/v1/bots/{bot}/matches{query}")
    assert status == 200, body
    return dict(body)


def test_a_bots_history_lists_its_matches_with_their_rating_change(site: Site) -> None:
    page = matches(site, "?limit=100")
    assert page["total"] == page["kept"] == len(page["matches"]) == 6 and page["next_cursor"] == ""
    ats = [m["at"] for m in page["matches"]]
    assert ats == sorted(ats, reverse=True)
    for m in page["matches"]:
        assert m["opponent"] in {"beta", "gamma", "xss"} and m["tournament_id"] == TOURNAMENT
        assert m["result"] in {"win", "draw", "loss"} and len(m["totals"]) == 2 and m["sealed"] is False
        assert set(m["rating_change"]) == {POOL} and abs(m["rating_change"][POOL]) <= 16
        assert (m["rating_change"][POOL] > 0) == (m["result"] == "win") or m["result"] == "draw"
        assert m["accuracy"] is None and m["ladder"] is None
    # every match of the round-robin, once, whatever page it is on
    seen, cursor = [], ""
    while True:
        got = matches(site, f"?limit=4{'&cursor=' + cursor if cursor else ''}")
        seen += [m["match_id"] for m in got["matches"]]
        cursor = got["next_cursor"]
        if not cursor:
            break
    assert seen == [m["match_id"] for m in page["matches"]]


def test_the_filters_agree_with_the_statistics(site: Site) -> None:
    status, report = get(site, "/api/v1/bots/alpha/stats")
    assert status == 200
    s = report["statistics"]
    for result, count in (("win", s["wins"]), ("draw", s["draws"]), ("loss", s["losses"])):
        assert matches(site, f"?result={result}")["total"] == count
    for row in report["head_to_head"]:
        got = matches(site, f"?opponent={row['opponent']}&limit=100")
        assert got["total"] == row["games"] == 2
        assert sum(m["result"] == "win" for m in got["matches"]) == row["wins"]
        ppd = row["points_per_deal"]
        assert ppd["n"] > 0 and ppd["low"] <= ppd["mean"] <= ppd["high"]
    assert s["matches"] == 6 and s["deals"] + s["thrown_in"] == 12
    assert s["decision_ms"]["decisions"] > 0 and 0 < s["decision_ms"]["p50"] <= s["decision_ms"]["p99"]
    assert matches(site, f"?tournament={TOURNAMENT}&pool={POOL}")["total"] == 6
    assert matches(site, "?tournament=other")["total"] == 0 and matches(site, "?ladder=classic")["total"] == 0
    assert matches(site, "?since=2999-01-01")["total"] == 0


@pytest.mark.parametrize(("query", "says"), [
    ("?result=won", "result must be one of win, draw, loss"),
    ("?limit=1000", "limit must be a whole number from 1 to 100"),
    ("?since=soon", "since must be a date"),
    ("?oponent=beta", "unknown filter 'oponent'"),
    ("?cursor=nowhere", "not in the bot's kept history"),
])
def test_a_bad_filter_is_a_400_saying_why(site: Site, query: str, says: str) -> None:
    status, body = get(site, f"/api/v1/bots/alpha/matches{query}")
    assert status == 400 and says in body["error"]


def test_an_unknown_bot_is_a_404(site: Site) -> None:
    for path in ("matches", "stats"):
        status, body = get(site, f"/api/v1/bots/nobody/{path}")
        assert status == 404 and "no bot named 'nobody'" in body["error"]


def test_the_bradley_terry_history_has_a_point_once_the_pool_is_fitted(site: Site) -> None:
    get(site, f"/api/v1/leaderboard?pool={POOL}&method=bt")  # a fit: a point for each bot
    status, body = get(site, f"/api/v1/bots/alpha/history?pool={POOL}&method=bt")
    assert status == 200 and body["method"] == "bt"
    ((games, bot_games, rating, low, high),) = body["history"]
    assert (games, bot_games) == (12, 6) and low <= rating <= high
    status, body = get(site, f"/api/v1/bots/alpha/history?pool={POOL}&method=glicko")
    assert status == 400 and "method must be elo or bt" in body["error"]


def test_bot_report_prints_the_statistics_head_to_head_and_recent_matches(
    site: Site, capsys: pytest.CaptureFixture[str],
) -> None:
    assert site.running is not None
    capsys.readouterr()
    assert main(["bot", "report", "alpha", "--address", site.running.address, "--limit", "3"]) == 0
    out = capsys.readouterr().out
    _, report = get(site, "/api/v1/bots/alpha/stats")
    s = report["statistics"]
    assert out.startswith(f"bot alpha: 6 matches ({s['wins']} won, {s['draws']} drawn, {s['losses']} lost)")
    assert "contracts:" in out and "points per deal: as taker" in out and "decision time: p50" in out
    head = out.split("head-to-head:", 1)[1].split("recent matches", 1)[0]
    for row in report["head_to_head"]:
        assert f"  {row['opponent']:20} {row['games']:>5} {row['wins']:>4}" in head
    recent = out.split("recent matches (3 of 6 kept that pass the filters):\n", 1)[1].splitlines()
    newest = matches(site, "?limit=3")["matches"]
    assert [line.split()[2] for line in recent] == [m["match_id"] for m in newest]
    assert main(["bot", "report", "alpha", "--address", site.running.address, "--result", "loss",
                 "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert all(m["result"] == "loss" for m in got["matches"]) and got["total"] == s["losses"]
    assert main(["bot", "report", "nobody", "--address", site.running.address]) != 0
    assert "no bot named 'nobody'" in capsys.readouterr().err
