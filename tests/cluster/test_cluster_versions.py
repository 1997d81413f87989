"""The arena runs itself: a two-node cluster over Redis places every bot on the ladder and decides a bot's
new versions by SPRT, nobody acting after ``ladder start``, and a node killed during the test loses
nothing and counts nothing twice.

Six bots opted in with ``--ladder``: four built-in bots, and the bot ``patch`` in three versions: 1 the
random bot, 2 the heuristic, 3 the random bot again. Version 1 is promoted as first seen; version 2 is
tested against it (the first node is killed while it is) and promoted; version 3 is tested against
version 2 and rejected. (Version 2 was the search bot against the heuristic: some 2 s of CPU a pair,
in both tests, most of the test's minute; the heuristic wins nearly every pair against the random bot
as the search bot did against the heuristic, so the tests decide in as few pairs, at a fraction of
the CPU.) Then the ladder page, in Chromium, shows every bot placed.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from arena.node.versions import is_test
from arena.queue.redis_broker import RedisBroker
from arena.referee.registry import BotEntry
from arena.referee.versions import find
from tests.cluster.procs import (
    Procs,
    check_recorded_once,
    cli,
    cli_json,
    redis_url,
    register_bots,
    wait_connected,
    wait_for,
)
from tests.web.browser import CHROMIUM, PHONE, WIDE, Watched

BUILT_IN = {"rand-a": "random", "rand-b": "random", "heur-a": "heuristic", "heur-b": "heuristic"}
VERSIONS = {"1": "random", "2": "heuristic", "3": "random"}
POOL = "coinche"


def versions(address: str) -> dict[str, dict[str, Any]]:
    reply = cli_json("bot", "versions", "patch", "--address", address)
    return {v["version"]: v for v in reply.get("versions", [])}


def state_of(address: str, version: str) -> str:
    return str(versions(address).get(version, {}).get("state", ""))


def stored_state(broker: RedisBroker, version: str) -> str:
    """The version's state as stored: what the waits poll (a CLI call a poll was a Python process
    started each 0.5 to 1 s, most of the test's CPU once its matches were cheap); the CLI then says it
    once."""
    raw = broker.get_bots(["patch"]).get("patch")
    v = None if raw is None else find(BotEntry.from_json(raw).versions, version)
    return "" if v is None else v.state


@pytest.mark.slow
def test_two_nodes_place_every_bot_and_decide_the_versions_by_sprt(
    procs: Procs, own_db: tuple[Any, int], tmp_path: Path,
) -> None:
    client, db = own_db
    url = redis_url(db)
    victim, survivor = procs.nodes(2, tmp_path, redis=url, lease=2, capacity=8, http="127.0.0.1:0")
    names = [*BUILT_IN, "patch"]
    tokens = register_bots(survivor.address, names)
    for name, kind in BUILT_IN.items():
        procs.start_bot(name, kind, victim.address, tokens[name], concurrency=4, args=["--ladder"])

    def start_version(version: str) -> None:
        procs.start_bot("patch", VERSIONS[version], victim.address, tokens["patch"], concurrency=4,
                        args=["--ladder", "--bot-version", version], label=f"patch-{version}")

    start_version("1")
    wait_connected([victim.address, survivor.address], names)
    broker = RedisBroker(url)
    try:
        # a coarse bound (the default is 30): close versions would need hundreds of pairs; these are far
        cli("ladder", "start", "--pool", POOL, "--deals", "8", "--version-test-elo1", "100",
            "--address", survivor.address)
        wait_for("version 1 promoted as first seen", lambda: stored_state(broker, "1") == "promoted", 30)
        assert state_of(survivor.address, "1") == "promoted"
        start_version("2")
        wait_for("the test of version 2", lambda: stored_state(broker, "2") == "testing", 60)
        test2 = versions(survivor.address)["2"]["test_id"]
        # the victim dies once the test has results, while it plays more of them: after its first pair
        # (it was 4 results, with the search bot's slower pairs), as the test needs 7 pairs all won at
        # the least (14 results): the kill falls well within the test, its matches under way lost
        wait_for("results of the test", lambda: len(broker.results(test2)) >= 2, 120, every=0.2)
        victim.kill()
        at_kill = len(broker.results(test2))
        wait_for("version 2 promoted", lambda: stored_state(broker, "2") == "promoted", 420, every=0.2)
        v = versions(survivor.address)
        print(f"version 2: {v['2']['pairs']} pairs, LLR {v['2']['llr']:.2f}")  # shown when the test fails
        assert v["2"]["how"] == "sprt" and v["2"]["decision"] == "H1" and v["2"]["against"] == "1"
        assert at_kill < 2 * v["2"]["pairs"], (at_kill, v["2"]["pairs"])  # killed while the test went on
        assert v["1"]["state"] == "retired"
        # version 3 connects to the survivor (the victim is gone) and is tested against version 2
        procs.start_bot("patch", "random", survivor.address, tokens["patch"], concurrency=4,
                        args=["--ladder", "--bot-version", "3"], label="patch-3")
        wait_for("version 3 rejected", lambda: stored_state(broker, "3") == "rejected", 240, every=0.2)
        v = versions(survivor.address)
        assert v["3"]["decision"] == "H0" and v["3"]["against"] == "2" and v["2"]["state"] == "promoted"

        # nothing lost or counted twice: each test's results once each, each logged recorded once
        tests = [t for t in broker.list_tournaments() if is_test(t)]
        assert len(tests) == 2
        for tid in tests:
            # the decided test's last batch may still be playing out (the decision is seen at once now,
            # not a CLI call later): its results, until they stop coming; a result lost or counted twice
            # never settles (the keys and the list then differ for good)
            def settled(tid: str = tid) -> bool:
                before = len(broker.results(tid))
                keys = sum(1 for _ in client.scan_iter(match=f"belote-arena:result:{tid}-*", count=1000))
                time.sleep(1.0)
                return before == keys == len(broker.results(tid))

            wait_for(f"the results of {tid} settled", settled, 30, every=0.0)
            results = broker.results(tid)
            ids = [r.match_id for r in results]
            assert ids and len(ids) == len(set(ids))
            keys = set(client.scan_iter(match=f"belote-arena:result:{tid}-*", count=1000))
            assert len(keys) == len(ids)
            check_recorded_once([victim, survivor], results, may_be_unlogged=[victim.node_id])
        # the tests are not rated in the pool; every bot is placed in it, patch at its promoted version
        rated = {bot: n for bot, (_, n) in broker.pool_ratings(POOL).items()}
        assert set(names) <= set(rated) and not any("@" in b for b in rated), rated
        assert all(n >= 1 for n in rated.values())
        board = cli_json("rankings", "--pool", POOL, "--address", survivor.address)
        assert {row["bot"] for row in board["entries"]} >= set(names)
    finally:
        broker.close()

    if CHROMIUM is None:
        return
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        try:
            for width in (WIDE, PHONE):
                watched = Watched(browser, width)
                watched.page.goto(f"{survivor.web_url}/ladders/{POOL}")
                for name in names:
                    watched.page.get_by_text(name, exact=True).first.wait_for(timeout=15_000)
                assert watched.problems == []
                assert watched.sideways() <= 0
                watched.page.goto(f"{survivor.web_url}/bots/patch/versions")
                watched.page.locator("svg").first.wait_for(timeout=15_000)  # the last test's LLR chart
                text = watched.page.inner_text("body")
                assert "rejected" in text and "promoted" in text and "H0" in text
                assert watched.problems == []
                assert watched.sideways() <= 0
                watched.context.close()
        finally:
            browser.close()
