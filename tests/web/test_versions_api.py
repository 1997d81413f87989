"""A bot's versions over the JSON API, on the embedded queue and on Redis: its versions newest first, its
latest SPRT with the LLR after each pair between the bounds, never the test's seed; and the
leaderboard's rows at each bot's promoted version, from the node's copy of the registry."""

from __future__ import annotations

import json
import tempfile
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.node.versions import DUPLICATE_NOTE, MAX_PAIRS
from tests.queue.conftest import BACKENDS, Store, redis_unavailable
from tests.web.site import Site, get
from tests.web.versions_data import LADDER_GAMES, POOL, RUNNING_PAIRS, WAITER, Built, built_site


@pytest.fixture(scope="module", params=BACKENDS)
def built(request: pytest.FixtureRequest) -> Iterator[tuple[Site, Built]]:
    """A node with ``alpha`` (2 promoted by its SPRT), ``beta`` (2 by hand, 3 under test), ``plain``."""
    if request.param == "redis" and (why := redis_unavailable()):
        pytest.skip(why)
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(request.param, Path(tmp) / "queue.sqlite3", f"test-web-{uuid.uuid4().hex[:12]}")
        try:
            with built_site(store.open) as made:
                yield made
        finally:
            store.cleanup()


def raw(site: Site, path: str) -> str:
    with urllib.request.urlopen(site.url + path, timeout=30) as reply:
        return str(reply.read().decode())


def test_a_bot_s_versions_are_listed_newest_first_with_their_finished_sprt(built: tuple[Site, Built]) -> None:
    site, data = built
    status, view = get(site, "/api/v1/bots/alpha/versions")
    assert status == 200
    assert (view["bot"], view["promoted"], view["note"]) == ("alpha", "2", DUPLICATE_NOTE)
    assert [(v["version"], v["state"], v["how"]) for v in view["versions"]] == [
        ("2", "promoted", "sprt"), ("1", "retired", "first")]
    v2 = view["versions"][0]
    assert (v2["test"], v2["against"], v2["decision"]) == (data.alpha_test, "1", "H1")
    assert v2["pairs"] >= 2 and v2["llr"] >= view["test"]["upper"]
    test = view["test"]
    assert (test["tournament_id"], test["candidate"], test["against"]) == (data.alpha_test, "2", "1")
    assert (test["state"], test["decision"], test["max_pairs"]) == ("finished", "H1", MAX_PAIRS)
    assert test["lower"] < 0 < test["upper"] and test["elo0"] < test["elo1"]
    # the LLR after each pair, to the decision: the last crosses the upper bound, none before it does
    series = test["llr_series"]
    assert len(series) == test["pairs"] == sum(test["pentanomial"]) == v2["pairs"]
    assert series[-1] == pytest.approx(test["llr"], abs=1e-3) and series[-1] >= test["upper"]
    assert all(test["lower"] < x < test["upper"] for x in series[:-1])
    # the Elo estimate and its 95% interval (an end null: unbounded), kept with the version too
    assert test["elo_low"] is None or test["elo_low"] <= test["elo"]
    assert test["elo_high"] is None or test["elo"] <= test["elo_high"]
    assert (v2["elo"], v2["elo_low"], v2["elo_high"], v2["set_aside"]) == (
        test["elo"], test["elo_low"], test["elo_high"], test["set_aside"])


def test_a_test_under_way_shows_its_pairs_so_far_and_never_its_seed(built: tuple[Site, Built]) -> None:
    site, data = built
    _, view = get(site, "/api/v1/bots/beta/versions")
    assert [(v["version"], v["state"], v["how"]) for v in view["versions"]] == [
        ("3", "testing", ""), ("2", "promoted", "hand"), ("1", "retired", "first")]
    test = view["test"]
    assert (test["tournament_id"], test["state"], test["decision"]) == (data.beta_test, "running", "")
    # its legs come in halves (each pair's second after its first): the pairs finished so far, the
    # first set aside (every deal of its legs thrown in: no evidence), not counted
    assert test["set_aside"] == 1
    assert 1 <= test["pairs"] == len(test["llr_series"]) == sum(test["pentanomial"]) <= RUNNING_PAIRS - 1
    text = raw(site, "/api/v1/bots/beta/versions") + raw(site, "/api/v1/bots/alpha/versions")
    for seed in data.seeds:
        assert seed not in text


def test_a_bot_without_versions_has_none_and_no_test(built: tuple[Site, Built]) -> None:
    site, _ = built
    status, view = get(site, "/api/v1/bots/plain/versions")
    assert status == 200
    assert (view["bot"], view["promoted"], view["versions"], view["test"]) == ("plain", "", [], None)


@pytest.mark.parametrize("name", ["nobody", "a" * 300, "alpha@2"])
def test_an_unknown_bot_s_versions_are_a_404_with_a_json_error(built: tuple[Site, Built], name: str) -> None:
    site, _ = built
    status, body = get(site, f"/api/v1/bots/{name}/versions")
    assert status == 404 and body["status"] == 404 and "no bot named" in body["error"]
    assert len(body["error"]) < 300


def test_the_leaderboard_shows_each_bot_at_its_promoted_version(built: tuple[Site, Built]) -> None:
    site, _ = built
    _, board = get(site, f"/api/v1/leaderboard?pool={POOL}")
    shown = {e["bot"]: (e["version"], e["promoted_how"]) for e in board["entries"]}
    assert shown == {"alpha": ("2", "sprt"), "beta": ("2", "hand"), "plain": ("", "")}
    # the ladder's standings are the same rows
    _, ladder = get(site, f"/api/v1/ladders/{POOL}")
    assert ladder["standings"] == board
    # a version's test is never rated in the pool: no "bot@version" row
    assert not any("@" in e["bot"] for e in board["entries"])
    assert json.dumps(board).count("promoted_how") == len(board["entries"])


def test_each_version_is_rated_on_its_own_games_with_its_interval(built: tuple[Site, Built]) -> None:
    site, _ = built
    _, view = get(site, "/api/v1/bots/alpha/versions")
    ratings = {(r["pool"], r["version"]): r for r in view["ratings"]}
    # its games before it said a version (the round-robin), then each version's own ladder games
    assert [v for pool, v in ratings if pool == POOL] == ["", "1", "2"]
    for version, wins, losses in LADDER_GAMES:
        r = ratings[POOL, version]
        assert r["games"] == wins + losses and not r["inherited"]
        assert r["low"] < r["rating"] < r["high"]
    # version 2 won 5 of 6 where version 1 won 2 of 4, against the same bot: rated higher
    assert ratings[POOL, "2"]["rating"] > ratings[POOL, "1"]["rating"]
    # beta's version 2 has played no rated game since its promotion: rated from beta's games before it,
    # its interval wider
    _, beta = get(site, "/api/v1/bots/beta/versions")
    rows = {r["version"]: r for r in beta["ratings"] if r["pool"] == POOL}
    assert set(rows) == {"", "2"} and rows["2"]["inherited"] and rows["2"]["games"] == 0
    assert rows["2"]["rating"] == pytest.approx(rows[""]["rating"])
    assert rows["2"]["high"] - rows["2"]["low"] > rows[""]["high"] - rows[""]["low"]
    # a bot without versions: its games under its name
    _, plain = get(site, "/api/v1/bots/plain/versions")
    assert {r["version"] for r in plain["ratings"]} == {""}


def test_the_leaderboard_row_says_which_version_it_rates_and_how_many_games_are_its(
        built: tuple[Site, Built]) -> None:
    site, _ = built
    _, board = get(site, f"/api/v1/leaderboard?pool={POOL}")
    rows = {e["bot"]: e for e in board["entries"]}
    _, alpha = get(site, "/api/v1/bots/alpha/versions")
    two = next(r for r in alpha["ratings"] if (r["pool"], r["version"]) == (POOL, "2"))
    _, wins, losses = LADDER_GAMES[1]
    assert (rows["alpha"]["version"], rows["alpha"]["version_games"]) == ("2", wins + losses)
    assert rows["alpha"]["games"] > rows["alpha"]["version_games"]  # all its games, whatever version
    assert (rows["alpha"]["rating"], rows["alpha"]["low"]) == pytest.approx((two["rating"], two["low"]))
    assert (rows["beta"]["version"], rows["beta"]["version_games"]) == ("2", 0)
    assert rows["plain"]["version_games"] == rows["plain"]["games"]


def test_the_version_tests_are_listed_apart_from_the_tournaments(built: tuple[Site, Built]) -> None:
    """Issue 24: one bot's tests made the whole first page of the public tournaments list."""
    site, data = built
    status, page = get(site, "/api/v1/tournaments")
    assert status == 200
    assert [t["tournament_id"] for t in page["items"]] == ["versions-rr"]
    assert (page["total"], page["apart"]) == (1, 2)
    _, tests = get(site, "/api/v1/tournaments?tests=1")
    assert [t["tournament_id"] for t in tests["items"]] == [data.beta_test, data.alpha_test]  # latest first
    assert (tests["total"], tests["apart"]) == (2, 1)
    assert all(t["format"] == "sprt" for t in tests["items"])
    status, error = get(site, "/api/v1/tournaments?tests=yes")
    assert status == 400 and "tests must be a whole number from 0 to 1" in error["error"]



def test_a_candidate_says_why_it_waits(built: tuple[Site, Built]) -> None:
    site, _ = built
    _, view = get(site, f"/api/v1/bots/{WAITER}/versions")
    assert [(v["version"], v["state"], v["waiting"]) for v in view["versions"]] == [
        ("2", "candidate", "waits for its test, on a ladder's slots where both versions are connected"),
        ("1", "promoted", "")]
    _, beta = get(site, "/api/v1/bots/beta/versions")
    assert all(v["waiting"] == "" for v in beta["versions"])  # its candidate is under test
