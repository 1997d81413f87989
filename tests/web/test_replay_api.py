"""What the replay page reads, over HTTP from a real node: a finished match's record as a file to save
(``GET /api/v1/matches/ID/record``), refused while the match runs; the tricks of a deal a forfeit stopped;
and the optional reads the pages' shell says the node serves.
"""

from __future__ import annotations

import itertools
import json
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from aiohttp import web
from belote_bot import HeuristicBot

from arena.web.server import OPTIONAL_READS, optional_reads
from tests.web.replay_data import forfeited
from tests.web.site import ADMIN, TOURNAMENT, Site, get

__all__ = ["forfeited"]  # the fixture


def download(site: Site, match_id: str) -> tuple[int, dict[str, str], bytes]:
    """GET the match's record as the replay page's download link does: (status, headers, body)."""
    try:
        with urllib.request.urlopen(f"{site.url}/api/v1/matches/{match_id}/record", timeout=30) as reply:
            return reply.status, dict(reply.headers), reply.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def test_a_finished_match_s_record_downloads_as_a_file_holding_the_record(site: Site) -> None:
    _, t = get(site, f"/api/v1/tournaments/{TOURNAMENT}")
    match_id = t["finished_matches"][0]
    status, headers, body = download(site, match_id)
    assert status == 200
    assert headers["Content-Type"].startswith("application/json")
    assert headers["Content-Disposition"] == f'attachment; filename="{match_id}.json"'
    _, m = get(site, f"/api/v1/matches/{match_id}")
    assert json.loads(body) == m["record"]  # the record of docs/records.md, as the match's view holds it
    status, _, body = download(site, "no-such-match")
    assert status == 404 and "no match" in json.loads(body)["error"]


@pytest.mark.security
def test_a_running_match_s_record_is_refused_and_holds_no_hand(site: Site) -> None:
    match_id = site.start_match(deals=2)
    status, _, body = download(site, match_id)
    assert status == 409, body
    said = json.loads(body)
    assert "still running" in said["error"] and set(said) == {"error", "status"}
    site.wait_match(match_id)
    status, _, body = download(site, match_id)
    assert status == 200 and json.loads(body)["match_id"] == match_id


def test_a_forfeited_match_shows_the_tricks_its_unfinished_deal_played(forfeited: tuple[Site, str]) -> None:
    site, match_id = forfeited
    _, m = get(site, f"/api/v1/matches/{match_id}")
    assert m["result"]["reason"] == "forfeit" and m["sealed"] is False
    stopped = m["record"]["unfinished_deal"]
    assert m["unfinished"]["deal"] == len(m["record"]["deals"]) == len(m["replay"])
    tricks = m["unfinished"]["tricks"]
    plays = [p.split()[0] for p in stopped["plays"]]
    # the quitter gave up with 5 cards left: the referee played its first two fallbacks, and its third
    # strike forfeited the match before the deal's end
    assert 12 < len(plays) < 32 and len(tricks) == len(plays) // 4
    assert [c for t in tricks for c in t["cards"]] == plays[:4 * len(tricks)]
    assert tricks[0]["leader"] == (stopped["dealer"] + 1) % 4
    assert all(t["leader"] == u["winner"] for u, t in itertools.pairwise(tricks))
    # the strikes say where the referee stopped: at a decision of the unfinished deal
    assert [s["deal"] for s in m["record"]["strikes"]][-1] == len(m["record"]["deals"])


def test_a_running_match_s_view_has_no_unfinished_deal_and_is_not_sealed(site: Site) -> None:
    match_id = site.start_match()
    _, live = get(site, f"/api/v1/matches/{match_id}")
    assert (live["unfinished"], live["sealed"], live["record"]) == (None, False, None)
    site.wait_match(match_id)


def test_the_pages_shell_names_the_optional_reads_the_node_serves(site: Site) -> None:
    # a node whose API has the analysis's route tells its pages so, and one without does not: a page asks
    # for no read the node does not serve (a 404 is a console error)
    bare = web.Application()
    assert optional_reads(bare) == []
    async def analysis(request: web.Request) -> web.Response:
        return web.json_response({"state": "pending"})

    bare.router.add_get(OPTIONAL_READS["analysis"], analysis)
    assert optional_reads(bare) == ["analysis"]
    with urllib.request.urlopen(f"{site.url}/matches/x/replay", timeout=10) as reply:
        html = reply.read().decode()
    assert 'data-page="replay"' in html and "__SERVES__" not in html and 'data-serves="' in html


def test_a_node_served_with_no_analyses_makes_none_and_its_pages_ask_for_none(tmp_path: Path) -> None:
    """``belote-arena serve --no-analyses --http``: the analysis route answers a 404 that says why, and
    the pages' shell does not name the analysis among the reads the node serves."""
    from tests.cluster.procs import Procs

    procs = Procs(tmp_path)
    try:
        node = procs.ready(procs.start_node("plain", tmp_path / "data", redis=None, http="127.0.0.1:0",
                                            args=["--no-analyses"]))
        url = node.web_url
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(f"{url}/api/v1/matches/m-1/analysis", timeout=10)
        assert refused.value.code == 404
        assert json.loads(refused.value.read())["error"] == "this node does not analyse matches"
        with urllib.request.urlopen(f"{url}/matches/m-1/replay", timeout=10) as reply:
            html = reply.read().decode()
        assert 'data-page="replay"' in html and 'data-serves=""' in html, html[:500]
    finally:
        procs.close()


@pytest.mark.security
def test_on_a_node_with_private_reads_the_record_needs_a_reader(tmp_path: Path) -> None:
    site = Site(tmp_path, private_reads=True, tournament=False,
                players={"alpha": HeuristicBot(seed=1), "beta": HeuristicBot(seed=2)})
    try:
        match_id = site.start_match("alpha", "beta")
        site.wait_match(match_id)
        status, _, body = download(site, match_id)
        assert status == 401 and "hands" not in body.decode()
        assert get(site, f"/api/v1/matches/{match_id}/record", token=ADMIN)[0] == 200
    finally:
        site.close()
