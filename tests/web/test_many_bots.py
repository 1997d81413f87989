"""A pool of 1,000 bots: the JSON API and the leaderboard page stay correct, a page at a time.

The node's store holds a rated classic pool of 1,000 bots (four tournaments of
250, about 2,000 results, written as a node writes them) before the node
starts; the pages are read over real HTTP and in Debian's headless chromium.
"""

from __future__ import annotations

import random
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arena.queue import EmbeddedBroker
from arena.tournament import MatchJob, TournamentSpec
from tests.factories import result_of_job
from tests.web.browser import CHROMIUM, browser, shot  # noqa: F401  # the browser fixture
from tests.web.site import Site, get
from tests.web.test_pages import page  # noqa: F401  # the page fixture

BOTS = 1000
WON = (1001, 640)

pytestmark = pytest.mark.slow


def stored_pool(path: Path) -> None:
    """Four rated classic tournaments of 250 bots; each bot plays four games on average, at least two."""
    rng = random.Random(9)
    names = [f"bot-{i:04d}" for i in range(BOTS)]
    broker = EmbeddedBroker(path)
    try:
        for t in range(4):
            group = names[t * 250:(t + 1) * 250]
            broker.put_tournament(TournamentSpec(tournament_id=f"big-{t}", format="round-robin",
                                                 bots=tuple(group)))
            # a ring, so every bot plays, and as many games between random pairs
            pairs = [(group[i], group[(i + 1) % len(group)]) for i in range(len(group))]
            pairs += [(a, b) for a, b in (rng.sample(group, 2) for _ in range(250))]
            for n, (a, b) in enumerate(pairs):
                winner = 0 if rng.random() < 0.5 else 1
                job = MatchJob(f"big-{t}-r1-{n}", f"big-{t}", a, b, "classic", f"s{n}")
                broker.write_result(result_of_job(job, WON if winner == 0 else WON[::-1], winner))
    finally:
        broker.close()


@pytest.fixture(scope="module")
def site() -> Iterator[Site]:
    with tempfile.TemporaryDirectory() as tmp:
        stored_pool(Path(tmp) / "queue.sqlite3")
        s = Site(Path(tmp), tournament=False)
        try:
            yield s
        finally:
            s.close()


def test_the_api_pages_through_a_pool_of_1000_bots(site: Site) -> None:
    start = time.monotonic()
    status, first = get(site, "/api/v1/leaderboard?pool=classic&limit=200")
    assert status == 200, first
    assert first["total"] == BOTS and len(first["entries"]) == 200
    pages = [first] + [get(site, f"/api/v1/leaderboard?pool=classic&offset={o}&limit=200")[1]
                       for o in range(200, BOTS, 200)]
    took = time.monotonic() - start
    entries = [e for p in pages for e in p["entries"]]
    assert len({e["bot"] for e in entries}) == BOTS  # every bot once, across the pages
    ratings = [e["rating"] for e in entries]
    assert ratings == sorted(ratings, reverse=True)
    assert all(e["low"] <= e["rating"] <= e["high"] for e in entries)
    assert get(site, "/api/v1/leaderboard?pool=classic&limit=201")[0] == 400
    print(f"1,000-bot leaderboard: 5 pages of 200 in {took:.2f} s (one fit, kept for the readers)")


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium installed: the browser test is skipped")
def test_the_leaderboard_page_shows_a_page_of_50_of_1000_and_the_next(site: Site, page: Any) -> None:  # noqa: F811
    page.goto(f"{site.url}/?pool=classic&method=bt")
    page.wait_for_selector("#leaderboard tbody tr")
    assert page.locator("#leaderboard tbody tr").count() == 50
    assert page.locator(".pager .range").inner_text() == "1\u201350 of 1000"
    _, api = get(site, "/api/v1/leaderboard?pool=classic&offset=50&limit=50")
    page.locator(".pager button.next").click()
    # a locator, not wait_for_function: the pages' CSP forbids the eval its string predicate needs
    page.locator(".pager .range", has_text="51\u2013100 of 1000").wait_for()
    rows = page.locator("#leaderboard tbody tr")
    assert rows.count() == 50
    assert [rows.nth(i).get_attribute("data-bot") for i in range(50)] == [e["bot"] for e in api["entries"]]
    shot(page, "leaderboard-1000-bots")
