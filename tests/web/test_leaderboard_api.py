"""The leaderboard's API: a search for a bot by name, whether each bot is connected now (to this node, or
to another as the nodes' heartbeats say), and which ratings are provisional.

Against a real node whose bots played a real round-robin over gRPC; another node is stood for by its
heartbeat in the same queue, which is how the nodes tell each other which bots they have.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from belote_bot import Bot, HeuristicBot, RandomBot

from arena.ratings.leaderboard import PROVISIONAL_GAMES, PROVISIONAL_HALF_WIDTH, is_provisional
from arena.web.node_reads import PRESENCE_TTL
from tests.web.site import TOURNAMENT, Site, get, round_robin


def players() -> dict[str, Bot]:
    return {"alpha": HeuristicBot(seed=1), "beta": HeuristicBot(seed=2), "Gamma": RandomBot(seed=1),
            "gamma-ray": RandomBot(seed=2)}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    spec = dataclasses.replace(round_robin(), bots=("alpha", "beta", "Gamma", "gamma-ray"))
    s = Site(Path(tmp_path_factory.mktemp("board")), players=players(), tournaments=[spec])
    try:
        yield s
    finally:
        s.close()


def board(site: Site, query: str = "") -> dict[str, Any]:
    status, body = get(site, f"/api/v1/leaderboard?pool=tournament:{TOURNAMENT}{query}")
    assert status == 200, body
    return dict(body)


def test_a_search_keeps_the_bots_whose_name_holds_it_at_their_rank(site: Site) -> None:
    whole = board(site)["entries"]
    rank = {e["bot"]: e["rank"] for e in whole}
    found = board(site, "&q=GAMMA")
    assert [e["bot"] for e in found["entries"]] == [e["bot"] for e in whole if "gamma" in e["bot"].lower()]
    assert found["total"] == 2 and all(e["rank"] == rank[e["bot"]] for e in found["entries"])
    assert board(site, "&q=ray")["entries"] == [e for e in whole if e["bot"] == "gamma-ray"]
    page = board(site, "&q=a&offset=1&limit=2")  # every name holds an "a": paged as the whole board
    assert page["total"] == 4 and page["entries"] == whole[1:3]
    nothing = board(site, "&q=nobody-is-called-this")
    assert (nothing["total"], nothing["entries"]) == (0, [])


@pytest.mark.parametrize("q", ["x" * 65])
def test_a_search_too_long_is_a_400(site: Site, q: str) -> None:
    status, body = get(site, f"/api/v1/leaderboard?q={q}")
    assert status == 400 and "at most 64" in body["error"]


def test_a_rating_is_provisional_below_its_games_or_past_its_interval(site: Site) -> None:
    for method in ("bt", "elo"):
        got = board(site, f"&method={method}")
        assert got["provisional_rule"] == {"games": PROVISIONAL_GAMES, "half_width": PROVISIONAL_HALF_WIDTH}
        for e in got["entries"]:  # six games each: all provisional
            assert e["games"] == 6 and e["provisional"] is True
            assert e["provisional"] == is_provisional(e["games"], e["low"], e["high"])


def test_the_rule_of_a_provisional_rating() -> None:
    assert is_provisional(PROVISIONAL_GAMES - 1, 1490.0, 1510.0)  # few games, however narrow
    assert not is_provisional(PROVISIONAL_GAMES, 1300.0, 1730.0)  # +-215: settled enough
    assert is_provisional(200, 1300.0, 1732.0)  # many games, still too wide (+-216, a deviation of 110)
    assert not is_provisional(PROVISIONAL_GAMES, None, None)  # the online Elo: its games say


def connected(site: Site) -> dict[str, bool]:
    return {e["bot"]: e["connected"] for e in board(site)["entries"]}


@pytest.mark.slow
def test_each_bot_says_whether_it_is_connected_here_or_to_another_node(site: Site) -> None:
    assert connected(site) == dict.fromkeys(("alpha", "beta", "Gamma", "gamma-ray"), True)
    assert site.running is not None
    node = site.running.node
    site.call(node.revoke_bot("gamma-ray"))  # its streams are cut: connected to no node
    deadline = time.monotonic() + PRESENCE_TTL + 10
    while connected(site)["gamma-ray"]:  # the node's own links at once; the cluster's heartbeats within
        assert time.monotonic() < deadline, "gamma-ray still shown connected"
        time.sleep(0.2)
    assert connected(site) == {"alpha": True, "beta": True, "Gamma": True, "gamma-ray": False}
    # another node of the queue says in its heartbeat that it has gamma-ray: connected there
    broker = site.running.worker.broker
    site.blocking(broker.heartbeat, "another-node", "127.0.0.1:1", 60.0, ["gamma-ray"])
    deadline = time.monotonic() + PRESENCE_TTL + 10
    while not connected(site)["gamma-ray"]:
        assert time.monotonic() < deadline, "gamma-ray on another node not shown connected"
        time.sleep(0.2)

