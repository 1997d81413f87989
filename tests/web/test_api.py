"""The JSON API against a real node: a real round-robin of SDK bots over gRPC, read over real HTTP."""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from belote_bot import HeuristicBot

from arena.engine import Card
from tests.web.site import TOURNAMENT, XSS, Site, events, get


def test_the_leaderboard_ranks_every_bot_of_the_tournament(site: Site) -> None:
    for method in ("bt", "elo"):
        status, board = get(site, f"/api/v1/leaderboard?method={method}")
        assert status == 200
        # the site's tournament has a given seed: unrated, it counts in its own pool only
        assert board["method"] == method and board["pool"] == f"tournament:{TOURNAMENT}"
        assert board["total"] == 4
        assert {e["bot"] for e in board["entries"]} == {"alpha", "beta", "gamma", "xss"}
        ratings = [e["rating"] for e in board["entries"]]
        assert ratings == sorted(ratings, reverse=True)
        # competition ranks: equal ratings (equal records) share a rank; "equal" is within 1e-6, as
        # two equal records fit to ratings that differ in their last bits
        assert [e["rank"] for e in board["entries"]] == [1 + sum(r > x + 1e-6 for r in ratings)
                                                         for x in ratings]
        assert all(e["games"] == 6 and e["wins"] + e["draws"] + e["losses"] == 6 for e in board["entries"])
    _, bt = get(site, "/api/v1/leaderboard?method=bt")
    assert all(e["low"] < e["rating"] < e["high"] for e in bt["entries"])
    assert all(0 <= e["los_next"] <= 1 for e in bt["entries"][:-1]) and bt["entries"][-1]["los_next"] is None


def test_pages_of_the_leaderboard_and_the_bots_are_bounded_and_consistent(site: Site) -> None:
    _, whole = get(site, "/api/v1/leaderboard?limit=200")
    _, second = get(site, "/api/v1/leaderboard?offset=1&limit=2")
    assert second["offset"] == 1 and second["total"] == 4
    assert second["entries"] == whole["entries"][1:3]
    _, bots = get(site, "/api/v1/bots?offset=2&limit=3")
    assert bots["total"] == 6 and bots["offset"] == 2 and len(bots["items"]) == 3
    _, past = get(site, "/api/v1/bots?offset=100")
    assert past["items"] == [] and past["total"] == 6


@pytest.mark.parametrize("path", [
    "/api/v1/leaderboard?limit=201", "/api/v1/leaderboard?limit=0", "/api/v1/leaderboard?offset=-1",
    "/api/v1/leaderboard?offset=abc", "/api/v1/leaderboard?method=glicko", "/api/v1/bots?limit=1e3",
    "/api/v1/tournaments?offset=1.5",
])
def test_bad_input_is_a_400_with_a_json_error(site: Site, path: str) -> None:
    status, body = get(site, path)
    assert status == 400 and body["status"] == 400 and body["error"]


@pytest.mark.parametrize("path", [
    "/api/v1/leaderboard?pool=nope", "/api/v1/bots/nobody", "/api/v1/tournaments/nope",
    "/api/v1/matches/nope",
    "/api/v1/matches/nope/events", "/api/v1/nothing", "/api/v1/bots/nobody/history",
])
def test_an_unknown_thing_is_a_404_with_a_json_error(site: Site, path: str) -> None:
    status, body = get(site, path)
    assert status == 404 and body["error"] and "Traceback" not in body["error"]


def test_nothing_changes_state_over_http(site: Site) -> None:
    request = urllib.request.Request(f"{site.url}/api/v1/bots", data=b"{}", method="POST")
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=10)
    assert refused.value.code == 405


def test_a_tournament_shows_its_progress_standings_and_crosstable(site: Site) -> None:
    _, page = get(site, "/api/v1/tournaments")
    assert [t["tournament_id"] for t in page["items"]] == [TOURNAMENT]
    status, t = get(site, f"/api/v1/tournaments/{TOURNAMENT}")
    assert status == 200
    assert t["state"] == "finished" and t["matches_done"] == t["matches_scheduled"] == 12
    assert t["secret"] == "web/1"  # revealed: the tournament is over
    assert (t["duplicate"], t["duplicate_mode"], t["duplicate_note"]) == (False, "", "")
    assert [s["bot"] for s in t["standings"]] == t["crosstable_bots"]
    n = len(t["crosstable_bots"])
    for i in range(n):
        assert t["crosstable"][i][i] is None
        for j in range(n):
            if i != j:
                points, games = t["crosstable"][i][j]
                assert games == 2 and points + t["crosstable"][j][i][0] == 2


def test_a_bot_shows_its_ratings_and_recent_matches_and_its_version_as_given(site: Site) -> None:
    status, bot = get(site, "/api/v1/bots/xss")
    assert status == 200
    assert bot["bot"]["version"] == XSS
    assert {(r["pool"], r["method"]) for r in bot["ratings"]} == {(f"tournament:{TOURNAMENT}", "bt")}
    assert len(bot["recent_matches"]) == 6
    assert all("xss" in m["teams"] for m in bot["recent_matches"])
    _, history = get(site, "/api/v1/bots/xss/history")
    assert history["pool"] == f"tournament:{TOURNAMENT}" and history["bot"] == "xss"
    # the online Elo, not the Bradley-Terry rating: a point every 10 games, and the latest
    assert (history["method"], history["every"], history["k"]) == ("elo", 10, 16)
    assert [games for games, _ in history["history"]] == [6]


def test_a_bot_s_recent_matches_name_their_tournament(site: Site) -> None:
    """The node played the tournament's matches itself: its own rows name the tournament too."""
    _, bot = get(site, "/api/v1/bots/alpha")
    _, t = get(site, f"/api/v1/tournaments/{TOURNAMENT}")
    mine = [m for m in bot["recent_matches"] if m["match_id"] in t["finished_matches"]]
    assert len(mine) == 6 and {m["tournament_id"] for m in mine} == {TOURNAMENT}
    single = site.start_match("alpha", "beta")
    site.wait_match(single)
    _, bot = get(site, "/api/v1/bots/alpha")
    assert [m["tournament_id"] for m in bot["recent_matches"] if m["match_id"] == single] == [""]


def test_a_tournament_lists_its_finished_matches_in_schedule_order_a_page_at_a_time(site: Site) -> None:
    status, whole = get(site, f"/api/v1/tournaments/{TOURNAMENT}/matches")
    assert status == 200 and whole["total"] == 12 and whole["offset"] == 0
    # round then board, as numbers: r1-2 before r1-10 (as text, "r1-10" < "r1-2")
    assert [(m["round"], m["board"]) for m in whole["items"]] == [(1, b) for b in range(12)]
    assert [m["match_id"] for m in whole["items"]] == [f"{TOURNAMENT}-r1-{b}" for b in range(12)]
    _, t = get(site, f"/api/v1/tournaments/{TOURNAMENT}")
    assert sorted(m["match_id"] for m in whole["items"]) == sorted(t["finished_matches"])
    for m in whole["items"][:3]:
        _, match = get(site, f"/api/v1/matches/{m['match_id']}")
        assert m["seats"] == match["players"] and m["teams"] == match["players"][:2]
        assert m["totals"] == match["totals"] and m["winner"] == match["result"]["winner"]
        assert (m["state"], m["reason"], m["sealed"]) == ("finished", "finished", False)
    _, second = get(site, f"/api/v1/tournaments/{TOURNAMENT}/matches?offset=10&limit=5")
    assert second["total"] == 12 and second["offset"] == 10 and second["items"] == whole["items"][10:]
    _, past = get(site, f"/api/v1/tournaments/{TOURNAMENT}/matches?offset=50")
    assert past["items"] == [] and past["total"] == 12
    for bad in ("limit=0", "limit=201", "offset=-1", "offset=x"):
        status, body = get(site, f"/api/v1/tournaments/{TOURNAMENT}/matches?{bad}")
        assert status == 400 and "must be a whole number" in body["error"], bad
    status, body = get(site, "/api/v1/tournaments/nope/matches")
    assert status == 404 and "no tournament" in body["error"]


def test_a_young_node_has_no_pool_and_says_why(tmp_path: Path) -> None:
    """One match started by hand, and nothing else: no pool, an empty leaderboard, and a history
    that says where ratings come from (the pages asked for ``pool=undefined``)."""
    site = Site(tmp_path, players={"alpha": HeuristicBot(seed=1), "beta": HeuristicBot(seed=2)},
                tournament=False)
    try:
        site.wait_match(site.start_match("alpha", "beta"))
        assert get(site, "/api/v1/pools") == (200, {"pools": [], "methods": ["bt", "elo", "openskill"]})
        status, board = get(site, "/api/v1/leaderboard")
        assert status == 200 and (board["pool"], board["total"], board["entries"]) == ("", 0, [])
        status, body = get(site, "/api/v1/bots/alpha/history")
        assert status == 404 and "no rating pool yet" in body["error"] and "single matches" in body["error"]
        status, body = get(site, "/api/v1/leaderboard?pool=undefined")
        assert status == 404 and "single matches" in body["error"]
        _, bot = get(site, "/api/v1/bots/alpha")
        assert bot["ratings"] == [] and [m["tournament_id"] for m in bot["recent_matches"]] == [""]
    finally:
        site.close()


def test_a_match_shows_its_record_only_once_it_is_over(site: Site) -> None:
    match_id = site.start_match()
    status, live = get(site, f"/api/v1/matches/{match_id}")
    assert status == 200 and live["state"] == "running"
    assert live["record"] is None and live["replay"] is None and live["seed"] == ""
    assert "hands" not in json.dumps(live)
    site.wait_match(match_id)
    _, done = get(site, f"/api/v1/matches/{match_id}")
    assert done["state"] == "finished" and done["seed"]
    assert done["record"]["match_id"] == match_id and len(done["record"]["deals"][0]["hands"]) == 4
    [deal] = done["replay"]
    assert len(deal["tricks"]) == 8


def test_sse_delivers_a_live_match_s_public_events_in_order_then_its_result(site: Site) -> None:
    match_id = site.start_match()
    got = events(site, match_id)
    site.wait_match(match_id)
    names = [name for name, _, _ in got]
    assert names[-2:] == ["result", "end"] and set(names[:-2]) == {"public"}
    public = [data for name, data, _ in got if name == "public"]
    assert public[0]["kind"] == "deal_started"
    assert public[-1]["kind"] == "deal_ended"
    # the events came as they were played, not all at once at the end
    assert got[-1][2] - got[0][2] > 0.3
    _, done = get(site, f"/api/v1/matches/{match_id}")
    record = done["record"]
    plays = [e["action_played"]["text"] for e in public if e["kind"] == "action_played"]
    deal = record["deals"][0]
    assert plays == [*deal["bids"], *deal["plays"]]
    tricks = [e["trick_completed"] for e in public if e["kind"] == "trick_completed"]
    assert [t["card_names"] for t in tricks] == [t["cards"] for t in done["replay"][0]["tricks"]]
    assert got[-2][1]["result"]["totals"] == list(done["totals"])


def test_sse_events_hold_no_hidden_card(site: Site) -> None:
    match_id = site.start_match()
    got = events(site, match_id)
    _, done = get(site, f"/api/v1/matches/{match_id}")
    played: list[str] = []
    for name, data, _ in got:
        if name != "public":
            continue
        text = json.dumps(data)
        assert "hand" not in text and "seed" not in text
        if data["kind"] == "action_played":
            card = re.match(r"([789TJQKA][SHDC])\b", data["action_played"]["text"])
            if card:
                played.append(card.group(1))
        if data["kind"] == "trick_completed":
            # a trick names only cards already played, never one still in a hand
            assert set(data["trick_completed"]["card_names"]) <= set(played)
        if data["kind"] == "deal_started" and "retourne_card" in data["deal_started"]:
            turned = data["deal_started"]["retourne_card"]
            assert str(Card.parse(turned)) == turned
    assert played == done["record"]["deals"][0]["plays"]


def test_a_finished_match_s_events_are_rebuilt_from_its_record(site: Site) -> None:
    _, t = get(site, f"/api/v1/tournaments/{TOURNAMENT}")
    match_id = t["finished_matches"][0]
    got = events(site, match_id)
    kinds = [d.get("kind") for _, d, _ in got]
    assert kinds.count("deal_ended") == 2 and kinds[-2] == "result"


def test_spectators_are_bounded_per_match(site: Site) -> None:
    from arena.web.api import Watchers
    from arena.web.reads import TooMany

    w = Watchers(per_match=2, total=3)
    w.enter("m")
    w.enter("m")
    with pytest.raises(TooMany):
        w.enter("m")
    w.enter("n")
    with pytest.raises(TooMany):
        w.enter("o")
    w.leave("m")
    w.enter("o")


def test_pages_are_served_with_a_content_security_policy(site: Site) -> None:
    for path in ("/", "/bots", "/bots/xss", "/tournaments", f"/tournaments/{TOURNAMENT}", "/matches/x",
                 "/matches/x/replay", "/static/app.js", "/static/style.css"):
        with urllib.request.urlopen(site.url + path, timeout=10) as reply:
            assert reply.status == 200
            if not path.startswith("/static/"):
                assert "script-src 'self'" in reply.headers["Content-Security-Policy"]
    scripts = sorted((Path(__file__).resolve().parents[2] / "arena" / "web" / "static").glob("*.js"))
    assert len(scripts) > 1
    for script in scripts:  # every page's script: nothing a user supplies is ever parsed as HTML
        source = script.read_text()
        for unsafe in ("innerHTML", "insertAdjacentHTML", "document.write"):
            assert unsafe not in source, (script.name, unsafe)


def test_private_reads_need_a_credential(tmp_path: Path) -> None:
    from tests.web.site import ADMIN

    site = Site(tmp_path, private_reads=True, tournament=False)
    try:
        status, body = get(site, "/api/v1/bots")
        assert status == 401 and "credential" in body["error"]
        status, body = get(site, "/api/v1/bots", token="not-a-token")
        assert status == 401
        status, body = get(site, "/api/v1/bots", token=ADMIN)
        assert status == 200 and body["total"] == 6
    finally:
        site.close()


def _session(site: Site, method: str, body: bytes, cookie: str = "") -> tuple[int, Any, list[str]]:
    """(status, JSON body, Set-Cookie headers) of a call to /api/v1/session."""
    headers = {"Content-Type": "application/json", "Origin": site.url}  # from the node's own pages
    if cookie:
        headers["Cookie"] = cookie
    request = urllib.request.Request(f"{site.url}/api/v1/session", data=body, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as reply:
            return reply.status, json.loads(reply.read()), reply.headers.get_all("Set-Cookie") or []
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read()), e.headers.get_all("Set-Cookie") or []


def _get_with_cookie(site: Site, path: str, cookie: str) -> int:
    request = urllib.request.Request(site.url + path, headers={"Cookie": cookie})
    try:
        with urllib.request.urlopen(request, timeout=30) as reply:
            return int(reply.status)
    except urllib.error.HTTPError as e:
        return e.code


@pytest.mark.security
def test_a_browser_signs_in_to_private_reads_with_a_cookie_scripts_cannot_read(tmp_path: Path) -> None:
    from tests.web.site import ADMIN

    site = Site(tmp_path, private_reads=True, tournament=False)
    try:
        # a wrong credential signs nobody in and sets no cookie
        status, body, cookies = _session(site, "POST", json.dumps({"token": "not-a-token"}).encode())
        assert status == 401 and cookies == []
        # nor does a body that is not {"token": "..."}, nor one too long to be a credential
        for bad in (b"not json", b"[]", b'{"token": 5}', json.dumps({"token": "x" * 300}).encode()):
            status, body, cookies = _session(site, "POST", bad)
            assert status == 400 and "token" in body["error"] and cookies == [], bad
        # nor one larger than the API's bodies may be
        status, _, cookies = _session(site, "POST", json.dumps({"token": "x" * 10_000}).encode())
        assert status == 413 and cookies == []
        status, body, cookies = _session(site, "POST", json.dumps({"token": ADMIN}).encode())
        assert status == 200 and body == {"signed_in": True}
        (cookie,) = cookies
        attributes = {a.strip().split("=")[0].lower() for a in cookie.split(";")[1:]}
        assert {"httponly", "samesite", "path", "max-age"} <= attributes
        assert "samesite=strict" in cookie.lower() and "path=/api/" in cookie.lower()
        jar = cookie.split(";")[0]
        assert _get_with_cookie(site, "/api/v1/bots", jar) == 200
        assert _get_with_cookie(site, "/api/v1/bots", "belote_read=forged") == 401
        status, _, cleared = _session(site, "DELETE", b"", cookie=jar)
        assert status == 200 and "belote_read=" in cleared[0] and "max-age=0" in cleared[0].lower()
    finally:
        site.close()
