"""The ladders and the schedules over the JSON API, against a real node whose ladder thread has played
real SDK bots' rated matches: each pool's setting, its bots, its matches in progress, its standings
with intervals (the pool's leaderboard, as GetLadder gives it); the schedules with their next
occurrence and never their seed."""

from __future__ import annotations

import re
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from belote_bot import HeuristicBot, RandomBot

from arena.node.ladder import Ladders
from arena.node.pauses import Pauses
from arena.ratings.leaderboard import PROVISIONAL_GAMES, PROVISIONAL_HALF_WIDTH
from tests.web.site import Site, get, nightly, wait_standings

POOL = "coinche"
LADDER_BOTS = ("alpha", "beta", "gamma")
#: the seed a person gave the schedule: no answer may show it
SCHEDULE_SEED = "a-seed-nobody-may-read-7f3a"


@pytest.fixture(scope="module")
def site() -> Iterator[Site]:
    """A node whose coinche ladder has ranked three bots (then stopped), with two schedules."""
    with tempfile.TemporaryDirectory() as tmp:
        s = Site(Path(tmp), tournament=False,
                 players={"alpha": HeuristicBot(seed=1), "beta": HeuristicBot(seed=2),
                          "gamma": RandomBot(seed=1), "idle": RandomBot(seed=2)})
        try:
            s.start_ladder(POOL, LADDER_BOTS, deals=1)
            wait_standings(s, POOL, len(LADDER_BOTS))
            s.stop_ladder(POOL)
            s.add_schedule(nightly("nightly", LADDER_BOTS))
            s.add_schedule(nightly("given", LADDER_BOTS, seed=SCHEDULE_SEED))
            yield s
        finally:
            s.close()


def test_the_ladders_list_each_pool_with_a_ladder_its_setting_and_bot_count(site: Site) -> None:
    status, body = get(site, "/api/v1/ladders")
    assert status == 200
    # classic has no ladder stored and no bot opted in: it is not listed
    assert body == {"ladders": [{"pool": POOL, "on": False, "deals": 1, "bots": 3, "in_progress": 0}]}


def test_a_ladder_shows_its_setting_bots_and_standings_with_intervals(site: Site) -> None:
    status, ladder = get(site, f"/api/v1/ladders/{POOL}")
    assert status == 200
    assert (ladder["pool"], ladder["on"], ladder["deals"], ladder["duplicate"]) == (POOL, False, 1, "")
    assert ladder["bots"] == list(LADDER_BOTS) and ladder["in_progress"] == 0
    board = ladder["standings"]
    assert board["pool"] == POOL and board["method"] == "bt" and board["total"] == 3
    assert {e["bot"] for e in board["entries"]} == set(LADDER_BOTS)  # "idle" never played
    assert all(e["low"] < e["rating"] < e["high"] for e in board["entries"])
    # the standings are the pool's Bradley-Terry leaderboard, as the leaderboard page gives it
    _, leaderboard = get(site, f"/api/v1/leaderboard?pool={POOL}&method=bt")
    assert board == leaderboard
    _, second = get(site, f"/api/v1/ladders/{POOL}?offset=1&limit=1")
    assert second["standings"]["entries"] == board["entries"][1:2] and second["standings"]["offset"] == 1


def test_a_ladder_shows_each_bot_s_opponents_by_games(site: Site) -> None:
    """Each bot opted in with its games in the pool against each opponent, most first, from its side: the
    same games the standings count (once their board, kept 2 s, is worked out again after the ladder's
    last games)."""
    deadline = time.monotonic() + 10
    while True:
        _, ladder = get(site, f"/api/v1/ladders/{POOL}")
        states = {b["bot"]: b for b in ladder["bot_states"]}
        games = {e["bot"]: e["games"] for e in ladder["standings"]["entries"]}
        counted = {bot: sum(o["games"] for o in state["opponents"]) + state["other_games"]
                   for bot, state in states.items()}
        if counted == games or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert sorted(states) == sorted(LADDER_BOTS) and counted == games
    for bot, state in states.items():
        opponents = state["opponents"]
        assert {o["bot"] for o in opponents} <= set(LADDER_BOTS) - {bot} and opponents
        assert [o["games"] for o in opponents] == sorted((o["games"] for o in opponents), reverse=True)
        assert all(o["games"] == o["wins"] + o["draws"] + o["losses"] for o in opponents)
        assert (state["paused_until"], state["paused_why"], state["pauses"]) == (0, "", 0)
    # the two sides of a pair agree
    a, b = LADDER_BOTS[:2]
    ab = next(o for o in states[a]["opponents"] if o["bot"] == b)
    ba = next(o for o in states[b]["opponents"] if o["bot"] == a)
    assert (ab["games"], ab["wins"], ab["losses"]) == (ba["games"], ba["losses"], ba["wins"])
    # a list of the ladders leaves them out
    assert "bot_states" not in get(site, "/api/v1/ladders")[1]["ladders"][0]


def test_a_paused_bot_is_shown_paused_with_why_on_the_ladder_and_its_page(site: Site) -> None:
    """Two forfeits recorded for gamma (as a node writing its ladder results would): the ladder and the
    bot's own page say it is paused, until when and why; an admin's ``ladder add`` lifts it."""
    assert site.running is not None
    broker = site.running.worker.broker
    pauses = Pauses(broker)
    for _ in range(2):
        site.blocking(pauses.record, "gamma", True, "seat 1 (gamma): 3 strikes")
    try:
        _, ladder = get(site, f"/api/v1/ladders/{POOL}")
        gamma = next(b for b in ladder["bot_states"] if b["bot"] == "gamma")
        assert time.time() < gamma["paused_until"] <= time.time() + 61 and gamma["pauses"] == 1
        assert gamma["paused_why"].startswith("gamma is paused from the ladder for 60 s, until ")
        assert "2 of its last 2 ladder matches ended in its forfeit (the last: seat 1 (gamma): 3 strikes)" \
            in gamma["paused_why"]
        _, page = get(site, "/api/v1/bots/gamma")
        assert page["ladder_pause"]["until"] == gamma["paused_until"]
        assert page["ladder_pause"]["why"] == gamma["paused_why"]
        assert get(site, "/api/v1/bots/alpha")[1]["ladder_pause"] is None
    finally:
        site.blocking(Ladders(broker).add, POOL, "gamma")  # the admin's word lifts it
    assert get(site, "/api/v1/bots/gamma")[1]["ladder_pause"] is None


def test_a_ladder_shows_its_matches_in_progress_while_it_runs(site: Site) -> None:
    site.start_ladder(POOL, (), deals=1)
    try:
        deadline = time.monotonic() + 30
        while (ladder := get(site, f"/api/v1/ladders/{POOL}")[1])["in_progress"] == 0:
            assert time.monotonic() < deadline, "no ladder match was in progress within 30 s"
            time.sleep(0.02)
        # at most the ladder's share of the node's slots: half of the site's 8
        assert ladder["on"] is True and 1 <= ladder["in_progress"] <= 4
        # each pairing the matchmaking picked, newest first, with why
        picks = ladder["picks"]
        assert picks and all({p["a"], p["b"]} <= set(LADDER_BOTS) and p["a"] != p["b"] for p in picks)
        assert all(p["match_id"].startswith(f"ladder:{POOL}:") for p in picks)
        assert all(("narrows" in p["why"] or "waited" in p["why"]) for p in picks), picks
        assert [p["at"] for p in picks] == sorted((p["at"] for p in picks), reverse=True)
        _, listed = get(site, "/api/v1/ladders")
        assert listed["ladders"][0]["on"] is True
    finally:
        site.stop_ladder(POOL)


def test_a_preset_pool_without_a_ladder_is_off_and_empty(site: Site) -> None:
    status, ladder = get(site, "/api/v1/ladders/classic")
    assert status == 200
    assert (ladder["on"], ladder["bots"], ladder["in_progress"]) == (False, [], 0)
    assert ladder["standings"] == {"pool": "classic", "method": "bt", "total": 0, "offset": 0, "entries": [],
                                   "provisional_rule": {"games": PROVISIONAL_GAMES,
                                                        "half_width": PROVISIONAL_HALF_WIDTH}}


@pytest.mark.parametrize("pool", ["nope", "tournament:x", "COINCHE", "a" * 300])
def test_a_pool_no_ladder_can_run_on_is_a_404_with_a_json_error(site: Site, pool: str) -> None:
    status, body = get(site, f"/api/v1/ladders/{pool}")
    assert status == 404 and body["status"] == 404 and "ruleset preset" in body["error"]
    assert len(body["error"]) < 300


@pytest.mark.parametrize("path", [f"/api/v1/ladders/{POOL}?limit=0", f"/api/v1/ladders/{POOL}?offset=x",
                                  "/api/v1/schedules?limit=201", "/api/v1/schedules?offset=-1"])
def test_bad_paging_of_a_ladder_or_the_schedules_is_a_400(site: Site, path: str) -> None:
    status, body = get(site, path)
    assert status == 400 and body["error"]


def test_the_schedules_show_their_next_occurrence_and_never_their_seed(site: Site) -> None:
    status, page = get(site, "/api/v1/schedules")
    assert status == 200 and page["total"] == 2 and page["offset"] == 0
    by_id = {s["schedule_id"]: s for s in page["items"]}
    assert sorted(by_id) == ["given", "nightly"]
    now = time.time()
    for s in by_id.values():
        assert s["every_s"] == 86_400 and s["bots"] == list(LADDER_BOTS)
        assert now < s["next_at"] <= now + 2 * 3600 + 60 and s["next_at"] % 60 == 0
        assert (s["last_at"], s["last_tournament_id"]) == (0, "")
        assert s["options"] == {"format": "round-robin", "ruleset": "coinche", "deals": 2}
        assert "seed" not in s
    assert by_id["nightly"]["unrated_reason"] == ""
    assert "given by the caller" in by_id["given"]["unrated_reason"]
    raw = get_text(site, "/api/v1/schedules")
    assert SCHEDULE_SEED not in raw
    _, second = get(site, "/api/v1/schedules?offset=1&limit=1")
    assert second["total"] == 2 and [s["schedule_id"] for s in second["items"]] == ["nightly"]


def get_text(site: Site, path: str) -> str:
    with urllib.request.urlopen(site.url + path, timeout=30) as reply:
        return str(reply.read().decode())


def test_the_node_counts_the_ladder_matches_it_enqueued_by_pool(site: Site) -> None:
    assert site.running is not None
    with urllib.request.urlopen(site.url + "/metrics", timeout=30) as reply:
        text = reply.read().decode()
    found = re.search(r'^belote_arena_ladder_matches_total\{pool="coinche"\} ([0-9.e+]+)$', text, re.M)
    assert found is not None, "no ladder_matches_total of the coinche pool"
    # the ladder is stopped (the fixture's and each test's end): the count no longer moves
    enqueued = site.running.ladder.enqueued
    assert enqueued > 0 and float(found.group(1)) == enqueued
    assert 'belote_arena_ladder_matches_total{pool="classic"}' not in text
