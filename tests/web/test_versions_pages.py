"""The versions page in a real browser (Debian's headless chromium), at a laptop's width and a phone's:
a bot without versions says so plainly; a bot with several shows them newest first and its latest
SPRT's chart of the LLR between its two bounds, its pentanomial and the duplicate note; neither shows
a test's seed nor a card; each version's rating on its own games with its interval. The leaderboard
shows each bot at its promoted version, and how many of its games that version played."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from arena.node.versions import DUPLICATE_NOTE
from tests.web.browser import PHONE, WIDE, Watched, browser, needs_chromium, shot
from tests.web.site import Site
from tests.web.versions_data import POOL, WAITER, Built, built_site

pytestmark = [pytest.mark.slow, needs_chromium]
__all__ = ["browser"]  # the fixture
WIDTHS = pytest.mark.parametrize("width", [WIDE, PHONE], ids=["laptop", "phone"])


@pytest.fixture(scope="module")
def built() -> Iterator[tuple[Site, Built]]:
    with built_site() as made:
        yield made


def opened(browser: Any, site: Site, path: str, width: int, ready: str) -> Watched:
    watched = Watched(browser, width)
    watched.page.goto(site.url + path)
    watched.page.wait_for_selector(ready)
    return watched


def check(watched: Watched, data: Built) -> None:
    """No console error, no sideways scroll on a phone, no seed, no card."""
    html = watched.page.content()
    for seed in data.seeds:
        assert seed not in html
    assert watched.page.locator(".card, .hand").count() == 0
    if watched.width == PHONE:
        assert watched.sideways() == 0
    watched.close()
    assert watched.problems == [], watched.problems


@WIDTHS
def test_a_bot_without_versions_says_so(browser: Any, built: tuple[Site, Built], width: int) -> None:
    site, data = built
    w = opened(browser, site, "/bots/plain/versions", width, "#no-versions")
    assert "No versions" in w.page.locator("#no-versions").inner_text()
    assert w.page.locator("#versions, #llr-chart").count() == 0
    shot(w.page, f"versions-none-{width}")
    check(w, data)


@WIDTHS
def test_a_finished_sprt_is_drawn_between_its_bounds(browser: Any, built: tuple[Site, Built],
                                                      width: int) -> None:
    site, data = built
    w = opened(browser, site, "/bots/alpha/versions", width, "#llr-chart")
    page = w.page
    rows = page.locator("#versions tbody tr")
    assert [r.get_attribute("data-version") for r in rows.all()] == ["2", "1"]
    assert page.locator("tr[data-version='2'] td.how").inner_text() == "by SPRT"
    assert page.locator("tr[data-version='1'] td.how").inner_text() == "first"
    assert page.locator("tr[data-version='2'] td.against").inner_text() == "1"
    assert page.locator("tr[data-version='2'] td.decision").inner_text().startswith("H1")
    assert page.locator("#test h2").inner_text() == "Latest SPRT"
    labels = [t.text_content() or "" for t in page.locator("#llr-chart text.bound-label").all()]
    assert [x.split(" (")[0] for x in labels] == ["accept H1", "accept H0"]
    assert page.locator("#llr-chart line.bound").count() == 2
    assert page.locator("#llr-chart polyline.llr").count() == 1
    assert page.locator("#pentanomial td").count() == 5
    assert page.locator("#duplicate-note").inner_text() == DUPLICATE_NOTE
    # the Elo estimate with its 95% interval, in the row and the test's line; never a bare +1000
    elo = page.locator("tr[data-version='2'] td.elo").inner_text()
    assert "95%:" in elo and "1000" not in elo
    assert "Elo" in page.locator("#test-line").inner_text()
    # each version's rating on its own games, with its interval: its name's games, then 1, then 2
    rated = page.locator("#ratings tbody tr")
    assert [r.get_attribute("data-rated") for r in rated.all()] == ["", "1", "2"]
    assert page.locator("#ratings tr[data-rated='2'] td.games").inner_text() == "6"
    assert page.locator("#ratings tr[data-rated='2'] svg.bar line").count() == 1
    shot(page, f"versions-alpha-{width}")
    check(w, data)


@WIDTHS
def test_a_test_under_way_is_shown_without_its_seed(browser: Any, built: tuple[Site, Built],
                                                     width: int) -> None:
    site, data = built
    w = opened(browser, site, "/bots/beta/versions", width, "#llr-chart")
    assert w.page.locator("#test h2").inner_text() == "SPRT under way"
    assert w.page.locator("tr[data-version='2'] td.how").inner_text() == "by hand"
    assert w.page.locator("tr[data-version='3'] td.decision").inner_text() == "under way"
    assert "1 set aside" in w.page.locator("#test-line").inner_text()
    # version 2 has played no rated game since its promotion: rated from the one before it
    inherited = w.page.locator("#ratings tr[data-rated='2']")
    assert inherited.get_attribute("data-inherited") == "true"
    assert inherited.locator("td.from").inner_text() == "from the version before it"
    shot(w.page, f"versions-beta-{width}")
    check(w, data)


@WIDTHS
def test_a_test_s_tournament_page_shows_its_sprt(browser: Any, built: tuple[Site, Built], width: int) -> None:
    """The sprt tournament's own page: its LLR against the bounds, the pairs counted and set aside, the
    Elo estimate with its 95% interval, the pentanomial."""
    site, data = built
    w = opened(browser, site, f"/tournaments/{data.alpha_test}", width, "#sprt")
    line = w.page.locator("#sprt-line").inner_text()
    assert "H1" in line and "LLR" in line and "(95%:" in line and "set aside" not in line
    assert w.page.locator("#sprt-pentanomial td").count() == 5
    check(w, data)
    w = opened(browser, site, f"/tournaments/{data.beta_test}", width, "#sprt")
    line = w.page.locator("#sprt-line").inner_text()
    assert "under way" in line and "1 set aside (a leg with no card played" in line
    shot(w.page, f"tournament-sprt-{width}")
    check(w, data)


def test_the_bot_page_links_to_its_versions_and_the_leaderboard_shows_them(
        browser: Any, built: tuple[Site, Built]) -> None:
    site, data = built
    w = opened(browser, site, "/bots/alpha", WIDE, "#versions-link a")
    w.page.click("#versions-link a")
    w.page.wait_for_selector("#versions")
    w.page.goto(f"{site.url}/?pool={POOL}")
    w.page.wait_for_selector("#leaderboard tbody tr")
    cell = w.page.locator("tr[data-bot=alpha] td.bot").inner_text()
    assert cell == "alpha 2"
    # the row rates version 2, which played 6 of alpha's games; beta's 2 none yet
    assert w.page.locator("tr[data-bot=alpha] td.games .version-games").inner_text() == ", 6 as 2"
    assert w.page.locator("tr[data-bot=beta] td.games .version-games").inner_text() == ", 0 as 2"
    assert w.page.locator("tr[data-bot=plain] td.games .version-games").count() == 0
    assert w.page.locator("tr[data-bot=beta] td.bot").inner_text() == "beta 2 promoted by hand"
    assert w.page.locator("tr[data-bot=plain] td.bot").inner_text() == "plain"
    shot(w.page, "leaderboard-versions")
    check(w, data)


@WIDTHS
def test_a_waiting_candidate_says_why_on_the_versions_page(browser: Any, built: tuple[Site, Built],
                                                          width: int) -> None:
    site, data = built
    w = opened(browser, site, f"/bots/{WAITER}/versions", width, "#waiting")
    assert w.page.locator("#waiting li[data-version='2']").inner_text() == (
        "Version 2 waits for its test, on a ladder's slots where both versions are connected.")
    assert w.page.locator("tr[data-version='2'] td.state").inner_text() == "candidate"
    check(w, data)


@WIDTHS
def test_the_version_tests_are_listed_apart_from_the_tournaments(browser: Any, built: tuple[Site, Built],
                                                                 width: int) -> None:
    """Issue 24: one bot's tests made the whole first page of the tournaments."""
    site, data = built
    w = opened(browser, site, "/tournaments", width, "#tournaments")
    page = w.page
    assert [r.get_attribute("data-tournament") for r in page.locator("#tournaments tbody tr").all()] == [
        "versions-rr"]
    assert page.locator("#apart a").inner_text() == "The version tests (2)"
    page.click("#apart a")
    page.wait_for_selector("h1:text('Version tests')")
    page.wait_for_selector("#tournaments")
    assert [r.get_attribute("data-tournament") for r in page.locator("#tournaments tbody tr").all()] == [
        data.beta_test, data.alpha_test]
    assert page.locator("#apart a").inner_text() == "The tournaments (1)"
    shot(page, f"version-tests-{width}")
    check(w, data)
