"""While a match is played, no page and no answer a page gets shows a card still in a hand or the
match's seed: every page that may name the match, at a laptop's width and a phone's, in Chromium.

A bot watching the site would otherwise see its opponents' hands, or the seed every hand derives
from. Once the match is over both are shown (the replay): that is checked too, so the test can fail.
"""

from __future__ import annotations

import contextlib
import json
import re
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.web.browser import PHONE, WIDE, Watched, browser, needs_chromium
from tests.web.site import Site, get

pytestmark = [pytest.mark.slow, pytest.mark.security, needs_chromium, pytest.mark.xdist_group("live-secrecy")]
__all__ = ["browser"]  # the fixture

#: the match's own seed: given, so that the test knows what must not show (a given seed is unrated)
SEED = "live-secret/7f3a9c"
#: a hand in an answer: the record's ``hands`` (four lists of cards)
HANDS = re.compile(r'"hands"\s*:')


@pytest.fixture(scope="module")
def site() -> Iterator[Site]:
    with tempfile.TemporaryDirectory() as tmp:
        s = Site(Path(tmp), tournament=False)
        try:
            yield s
        finally:
            s.close()


#: (path, what shows once it is drawn) of every page that may name a match in play (``{match}``: its id)
PAGES = [("/", "main"), ("/bots", "#bots tbody tr"), ("/bots/slow-a", "main"), ("/tournaments", "main"),
         ("/matches/{match}", "#trick .seat"), ("/matches/{match}/replay", "#not-yet")]


def visit(browser: Any, site: Site, path: str, ready: str, width: int) -> tuple[str, list[str]]:
    """The page's HTML once drawn (and a moment more: its first polls), and the body of every answer
    it got; no console error or page error on the way."""
    watched = Watched(browser, width)
    bodies: list[str] = []

    def answered(response: Any) -> None:
        if response.request.resource_type in ("fetch", "xhr", "document", "eventsource"):
            # an event stream still open has no body to read yet
            with contextlib.suppress(Exception):
                bodies.append(response.text())

    try:
        watched.page.on("response", answered)
        watched.page.goto(site.url + path)
        watched.page.wait_for_selector(ready)
        watched.page.wait_for_timeout(600)
        html = watched.page.content()
        assert watched.problems == [], f"{path}: {watched.problems}"
        return html, bodies
    finally:
        watched.close()


def over(site: Site, match_id: str) -> bool:
    status, summary = get(site, f"/api/v1/matches/{match_id}")
    return status == 200 and summary.get("state") in ("finished", "aborted")


@pytest.mark.parametrize("width", [WIDE, PHONE], ids=["laptop", "phone"])
def test_no_page_shows_a_hand_or_the_seed_while_the_match_is_played(site: Site, browser: Any,
                                                                     width: int) -> None:
    match_id = ""
    for k, (path, ready) in enumerate(PAGES):
        # each page is read while a match is played: a new match when the last one ended (on a
        # loaded machine a page may take longer to draw than a match to play)
        for tries in range(4):
            if not match_id or over(site, match_id):
                match_id = site.start_match(deals=6 * 2 ** tries, seed=f"{SEED}/{width}/{k}/{tries}")
            html, bodies = visit(browser, site, path.format(match=match_id), ready, width)
            if not over(site, match_id):
                break  # what was read was read while it played
        else:
            pytest.fail(f"{path}: every match ended before the page was drawn")
        for text in [html, *bodies]:
            assert SEED not in text, f"{path} shows the seed while the match is played"
            assert not HANDS.search(text), f"{path} shows the hands while the match is played"
        # no card is drawn in a hand: a page shows only cards played
        assert 'class="hand' not in html, path
    # nor is it analysed while played (its analysis would value every card of every hand)
    status, _ = get(site, f"/api/v1/matches/{match_id}/analysis")
    assert status == 409 or over(site, match_id), status
    # once it is over, the replay has the hands and the seed: what was looked for above is there
    site.wait_match(match_id)
    deadline = time.monotonic() + 30
    while not over(site, match_id):
        assert time.monotonic() < deadline
        time.sleep(0.1)
    _, done = get(site, f"/api/v1/matches/{match_id}")
    text = json.dumps(done)
    assert SEED in text and HANDS.search(text)
