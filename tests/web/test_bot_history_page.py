"""A bot's page shows its statistics, head-to-head and history, in a real browser (chromium), at a
laptop's width and a phone's: for a bot that has played nothing yet, and for one after four rounds of
a round-robin (24 matches: two pages of history), with a duplicate table still sealed among them.

On each: no console error, no "undefined" nor "NaN", no sideways scroll. The history's filters and
pages give what the API gives; the head-to-head lists each opponent; a sealed table's row says
sealed and shows neither its score nor its result, and nothing of its deals is on the page (no card,
no seed) before every table dealing them is over.
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from belote_bot import HeuristicBot, RandomBot

from arena.engine import Ruleset
from arena.tournament import MatchJob, TournamentSpec
from tests.factories import result_of_job
from tests.web.browser import PHONE, WIDE, browser, needs_chromium
from tests.web.browser import visit as visit_page
from tests.web.site import Site, get

pytestmark = [pytest.mark.slow, needs_chromium, pytest.mark.xdist_group("bot-history-page")]
__all__ = ["browser"]  # the fixture

WIDTHS = pytest.mark.parametrize("width", [WIDE, PHONE], ids=["laptop", "phone"])
BARE_CARD = re.compile(r"(?<![\w-])[789TJQKA][SHDC](?![\w-])")
DOCS_IMAGE = Path(__file__).resolve().parents[2] / "docs" / "images" / "bot-page.png"
#: the sealed table's seed and totals: neither may be on the page while it is sealed
SEALED_SEED = "sealed-seed-7f3a"
SEALED_TOTALS = (1234, 567)


@pytest.fixture(scope="module")
def site() -> Iterator[Site]:
    """Four bots after four rounds of a round-robin (each bot: 24 matches), a fifth that played
    nothing, and alpha's first leg of a duplicate pair whose second leg is never played (sealed)."""
    spec = TournamentSpec(tournament_id="rr4", format="round-robin", bots=("alpha", "beta", "gamma", "delta"),
                          ruleset=Ruleset.from_spec("coinche"), deals=1, rounds=4)
    players = {"alpha": HeuristicBot(seed=1), "beta": HeuristicBot(seed=2), "gamma": RandomBot(seed=1),
               "delta": RandomBot(seed=3), "idle": RandomBot(seed=4)}
    with tempfile.TemporaryDirectory() as tmp:
        s = Site(Path(tmp), players=players, tournaments=[spec])
        try:
            assert s.running is not None
            broker = s.running.worker.broker
            # a leg of a tournament the queue does not hold (so no node plays its other leg): sealed for good
            leg0 = MatchJob("dup-r1-0-leg0", "dup", "alpha", "beta", "classic", SEALED_SEED, deals=2)
            s.blocking(broker.write_result, result_of_job(leg0, SEALED_TOTALS, 0))
            yield s
        finally:
            s.close()


def expect(locator: Any) -> Any:
    # imported where the tests run (needs_chromium)
    from playwright.sync_api import expect as playwright_expect

    playwright_expect.set_options(timeout=30_000)  # a loaded machine (other tests, other sessions)
    return playwright_expect(locator)


def visit(browser: Any, site: Site, path: str, width: int,
          ready: str) -> contextlib.AbstractContextManager[Any]:
    """:func:`tests.web.browser.visit`, its screenshots under ``bot-history/``."""
    return visit_page(browser, site.url, path, width, ready, "bot-history")


@WIDTHS
def test_a_bot_that_played_nothing_says_so(site: Site, browser: Any, width: int) -> None:
    with visit(browser, site, "/bots/idle", width, "#no-history") as page:
        assert "No statistics yet" in page.locator("#no-statistics").inner_text()
        assert page.locator("#head-to-head").count() == 0
        assert "No match yet" in page.locator("#no-history").inner_text()


@WIDTHS
def test_a_bots_page_shows_its_statistics_head_to_head_and_history(site: Site, browser: Any,
                                                                   width: int) -> None:
    _, report = get(site, "/api/v1/bots/alpha/stats")
    _, api = get(site, "/api/v1/bots/alpha/matches?limit=20")
    with visit(browser, site, "/bots/alpha", width, "#history-table tbody tr") as page:
        stats = page.locator("#statistics").inner_text()
        s = report["statistics"]
        assert f"{s['matches']}: {s['wins']} won" in stats and "points per deal as taker" in stats
        assert "decision time" in stats and "p50" in stats
        rows = page.locator("#head-to-head tbody tr")
        assert sorted(rows.nth(i).get_attribute("data-opponent") for i in range(rows.count())) == [
            "beta", "delta", "gamma"]
        shown = page.locator("#history-table tbody tr")
        assert [shown.nth(i).get_attribute("data-match") for i in range(shown.count())] == [
            m["match_id"] for m in api["matches"]]
        # the sealed table: listed, its result and score not shown, nothing of its deals on the page
        # a finished match opens on its replay; a sealed one on its status
        first = api["matches"][0] if not api["matches"][0]["sealed"] else api["matches"][1]
        link = page.locator(f'#history-table tr[data-match="{first["match_id"]}"] a[href*="/matches/"]')
        assert link.get_attribute("href") == f"/matches/{first['match_id']}/replay"
        sealed = page.locator('#history-table tr[data-match="dup-r1-0-leg0"]')
        assert sealed.locator('a[href*="/matches/"]').get_attribute("href") == "/matches/dup-r1-0-leg0"
        assert "sealed" in sealed.inner_text() and str(SEALED_TOTALS[0]) not in sealed.inner_text()
        text = page.locator("main").inner_text()
        assert SEALED_SEED not in page.content() and not BARE_CARD.search(text)
        # the next page goes on where the first ended, and back
        page.locator("#history-pager button.next").click()
        expect(page.locator("#history-pager .range")).to_have_text(re.compile(r"^21\u2013"))
        _, older = get(site, f"/api/v1/bots/alpha/matches?limit=20&cursor={api['next_cursor']}")
        shown = page.locator("#history-table tbody tr")
        assert [shown.nth(i).get_attribute("data-match") for i in range(shown.count())] == [
            m["match_id"] for m in older["matches"]]
        page.locator("#history-pager button.prev").click()
        expect(page.locator("#history-pager .range")).to_have_text(re.compile(r"^1\u2013"))
        assert page.locator("#bt-history").count() == 1
        if width == WIDE:
            # docs/web.md's picture of a bot's page: taken again with BELOTE_REFRESH_SCREENSHOT=1
            if os.environ.get("BELOTE_REFRESH_SCREENSHOT"):
                page.screenshot(path=str(DOCS_IMAGE), full_page=True)
            assert DOCS_IMAGE.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@WIDTHS
def test_the_history_filters_keep_what_they_say_and_stay_in_the_url(site: Site, browser: Any,
                                                                    width: int) -> None:
    _, losses = get(site, "/api/v1/bots/alpha/matches?result=loss&opponent=beta&limit=100")
    with visit(browser, site, "/bots/alpha", width, "#history-table tbody tr") as page:
        page.select_option("#filter-opponent", "beta")
        page.wait_for_url(re.compile(r"opponent=beta"))
        page.select_option("#filter-result", "loss")
        page.wait_for_url(re.compile(r"result=loss"))
        if losses["total"]:
            # the answers to both changes may come in any order: the page shows the last one's
            expect(page.locator("#history-table tbody tr")).to_have_count(len(losses["matches"]))
            page.wait_for_timeout(500)  # an earlier answer coming late would show here
            rows = page.locator("#history-table tbody tr")
            assert rows.count() == len(losses["matches"])
            assert all("lost" in rows.nth(i).inner_text() for i in range(rows.count()))
        else:
            page.wait_for_selector("#no-history")
    # a link with filters opens the page filtered
    filtered = "/bots/alpha?result=win&opponent=gamma"
    with visit(browser, site, filtered, width, "#history-pager, #no-history") as page:
        assert page.locator("#filter-result").input_value() == "win"
        rows = page.locator("#history-table tbody tr")
        assert all("won" in rows.nth(i).inner_text() for i in range(rows.count()))
