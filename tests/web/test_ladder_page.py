"""A running ladder's pages as a newcomer meets them, in a laptop's width and a phone's, in a real browser:
its standings, bots and pairings as they go, a schedule waiting for bots, a bot paused from it.

The checks of every page (tests/web/test_page_states.py's ``visit``) hold here too. A module of its own:
its node plays ladder matches for as long as it is up, which its module's end stops (in the page states'
module the ladder played on, for minutes, under every later test).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from belote_bot import HeuristicBot, RandomBot

from arena.node.ladder import Ladders
from arena.node.pauses import Pauses
from arena.tournament.schedule import Schedule
from tests.web.browser import browser, needs_chromium, shot
from tests.web.site import Site, nightly, wait_standings
from tests.web.test_page_states import WIDTHS, fits, make_site, visit

#: one worker runs them (xdist_group): the node is built once
pytestmark = [pytest.mark.slow, needs_chromium, pytest.mark.xdist_group("ladder-page")]
__all__ = ["browser"]  # the fixture

#: the bots of the laddered node's coinche ladder
LADDER_BOTS = ("alpha", "beta", "gamma")


@pytest.fixture(scope="module")
def laddered() -> Iterator[Site]:
    """A node whose coinche ladder runs between three bots (a fourth connected, not opted in) and has
    ranked them, with a schedule."""
    players = {"alpha": HeuristicBot(seed=1), "beta": HeuristicBot(seed=2), "gamma": RandomBot(seed=1),
               "idle": RandomBot(seed=2)}
    with make_site("laddered", players=players, tournament=False, analyses=False) as site:
        site.start_ladder("coinche", LADDER_BOTS, deals=1)
        wait_standings(site, "coinche", len(LADDER_BOTS))
        site.add_schedule(nightly("nightly", LADDER_BOTS))
        # the classic ladder has no bot opted in: this schedule's occurrence, due at once, waits
        site.add_schedule(Schedule.make("weekly", 7 * 86_400, "", [], {"format": "swiss", "deals": 2},
                                        ladder="classic"))
        yield site


# ------------------------------------------------------------------ a running ladder
#: the games the ladder page's standings count, in the page
GAMES_SHOWN = ("n => [...document.querySelectorAll('#standings td.games')]"
               ".reduce((a, t) => a + Number(t.textContent), 0)")

@WIDTHS
def test_a_ladder_s_page_shows_its_standings_bots_and_matches_as_they_go(
        laddered: Site, browser: Any, width: int) -> None:
    with visit(browser, laddered, "/", width, "nav a[href='/ladders']") as page:
        page.click("nav a[href='/ladders']")
        page.wait_for_selector("#ladders tbody tr")
        row = page.locator("#ladders tbody tr[data-pool='coinche']")
        assert row.locator("td.state").inner_text() == "on" and row.locator("td.bots").inner_text() == "3"
        row.locator("a").click()
        page.wait_for_selector("#standings tbody tr")
        assert page.url.endswith("/ladders/coinche")
        assert re.fullmatch(r"on: matches of 1 deal, \d+ match(es)? in progress",
                            page.locator("#ladder-state").inner_text())
        rows = page.locator("#standings tbody tr")
        assert sorted(r.get_attribute("data-bot") for r in rows.all()) == sorted(LADDER_BOTS)
        assert all(int(g) >= 2 for g in page.locator("#standings td.games").all_inner_texts())
        assert page.locator("#standings svg.bar line").count() == 3  # each bot's interval drawn
        assert fits(page, "#standings"), "the standings are wider than their box"
        bots = page.locator("#ladder-bots tbody tr")
        assert [r.get_attribute("data-bot") for r in bots.all()] == list(LADDER_BOTS)
        assert page.locator("#ladder-bots td.state").all_inner_texts() == ["playing"] * len(LADDER_BOTS)
        # each bot's games by opponent: the other two of the ladder, most first
        cells = page.locator("#ladder-bots td.opponents").all_inner_texts()
        for bot, cell in zip(LADDER_BOTS, cells, strict=True):
            assert re.fullmatch(r"\w+ \d+(, \w+ \d+)?", cell) and bot not in cell, cell
        assert fits(page, "#ladder-bots"), "the bots are wider than their box"
        # the latest pairings, each with why the matchmaking picked it
        picks = page.locator("#ladder-picks li").all_inner_texts()
        assert picks and all(" v " in p and ("narrows" in p or "waited" in p) for p in picks), picks
        assert fits(page, "#ladder-picks"), "the pairings are wider than their box"
        # live: the page follows the games as they are played
        games = sum(int(g) for g in page.locator("#standings td.games").all_inner_texts())
        page.wait_for_function(GAMES_SHOWN + " > n", arg=games, timeout=30_000)
    with visit(browser, laddered, "/schedules", width, "#schedules tbody tr") as page:
        row = page.locator("#schedules tbody tr[data-schedule='nightly']")
        assert row.locator("td.every").inner_text().startswith("every 1d at ")
        assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", row.locator("td.next").inner_text())
        assert row.locator("td.bots").inner_text() == "3"
        assert page.locator("#schedules tr.why[data-why-of='nightly']").count() == 0
        # a schedule waiting for bots says why, under its row, on a phone too
        why = page.locator("#schedules tr.why[data-why-of='weekly'] td")
        assert why.is_visible() and re.fullmatch(
            r"its occurrence due \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC waits for bots: 0 are opted in to the "
            r"classic ladder \(a tournament needs 2 to 256 bots, not 0\); it is made once there are enough",
            why.inner_text()), why.inner_text()
        assert fits(page, "#schedules"), "the schedules are wider than their box"
        shot(page, f"schedules-waiting-{width}")


@WIDTHS
def test_a_bot_paused_from_the_ladder_is_shown_paused_with_why(laddered: Site, browser: Any,
                                                                width: int) -> None:
    """gamma's last two ladder matches ended in its forfeit (recorded here as a node would): the ladder's
    page says it is paused, until when and why, and so does its own page; the admin's add lifts it."""
    assert laddered.running is not None
    broker = laddered.running.worker.broker
    for _ in range(2):
        laddered.blocking(Pauses(broker).record, "gamma", True, "seat 1 (gamma): 3 strikes")
    try:
        with visit(browser, laddered, "/ladders/coinche", width, "#ladder-paused li") as page:
            state = page.locator("#ladder-bots tr[data-bot='gamma'] td.state").inner_text()
            assert re.fullmatch(r"paused until \d\d:\d\d UTC", state), state
            assert page.locator("#ladder-bots tr[data-bot='alpha'] td.state").inner_text() == "playing"
            why = page.locator("#ladder-paused li[data-bot='gamma']").inner_text()
            assert why.startswith("gamma is paused from the ladder for 60 s")
            assert "ended in its forfeit" in why
            assert fits(page, "#ladder-bots"), "the bots are wider than their box"
        with visit(browser, laddered, "/bots/gamma", width, "#ladder-pause") as page:
            assert page.locator("#ladder-pause").inner_text() == why
    finally:
        laddered.blocking(Ladders(broker).add, "coinche", "gamma")
