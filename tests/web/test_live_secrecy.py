"""While a match is played, no page and no answer a page gets shows a card still in a hand or the
match's seed: every page that may name the match, at a laptop's width and a phone's, in Chromium.

A bot watching the site would otherwise see its opponents' hands, or the seed every hand derives
from. Once the match is over both are shown (the replay): that is checked too, so the test can fail.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from belote_bot import Action, Observation, RandomBot

from tests.web.browser import PHONE, WIDE, browser, needs_chromium
from tests.web.site import Site, get

pytestmark = [pytest.mark.slow, pytest.mark.security, needs_chromium, pytest.mark.xdist_group("live-secrecy")]
__all__ = ["browser"]  # the fixture

#: the match's own seed: given, so that the test knows what must not show (a given seed is unrated)
SEED = "live-secret/7f3a9c"
#: a hand in an answer: the record's ``hands`` (four lists of cards)
HANDS = re.compile(r'"hands"\s*:')


class Paced(RandomBot):
    """A random bot that takes 0.3 s over each decision (well inside the referee's 1 s deadline, so no
    strike) until ``hurry`` is set, then plays at once: a match of a few deals stays in play for as
    long as the pages take to read, however loaded the machine, and ends within a second when told."""

    def __init__(self, seed: int, hurry: threading.Event) -> None:
        super().__init__(seed=seed)
        self.hurry = hurry

    async def act(self, obs: Observation) -> Action:  # type: ignore[override]
        if not self.hurry.is_set():
            await asyncio.sleep(0.3)
        return super().act(obs)


@pytest.fixture(scope="module")
def live() -> Iterator[tuple[Site, threading.Event]]:
    """A node whose two bots play slowly until the event is set."""
    hurry = threading.Event()
    with tempfile.TemporaryDirectory() as tmp:
        s = Site(Path(tmp), tournament=False,
                 players={"slow-a": Paced(3, hurry), "slow-b": Paced(4, hurry)})
        try:
            yield s, hurry
        finally:
            hurry.set()
            s.close()


#: (path, what shows once it is drawn) of every page that may name a match in play (``{match}``: its id)
PAGES = [("/", "main"), ("/bots", "#bots tbody tr"), ("/bots/slow-a", "main"), ("/tournaments", "main"),
         ("/matches/{match}", "#trick .seat"), ("/matches/{match}/replay", "#not-yet")]


def read_pages(browser: Any, site: Site, match_id: str, width: int) -> list[tuple[str, str, list[str]]]:
    """Every page of :data:`PAGES`, opened side by side in one browser context ``width`` pixels wide:
    (its path, its HTML once drawn and a moment more (its first polls), the body of every answer it
    got); no console error or page error on any."""
    context = browser.new_context(viewport={"width": width, "height": 900})
    try:
        opened = []
        for path, ready in PAGES:
            page = context.new_page()
            problems: list[str] = []
            bodies: list[str] = []
            page.on("console", lambda m, p=problems: p.append(f"console {m.type}: {m.text}")
                    if m.type == "error" else None)
            page.on("pageerror", lambda e, p=problems: p.append(f"page error: {e}"))
            page.on("dialog", lambda d, p=problems: (p.append(f"dialog: {d.message}"), d.dismiss()))

            def answered(response: Any, b: list[str] = bodies) -> None:
                if response.request.resource_type in ("fetch", "xhr", "document", "eventsource"):
                    # an event stream still open has no body to read yet
                    with contextlib.suppress(Exception):
                        b.append(response.text())

            page.on("response", answered)
            url = path.format(match=match_id)
            page.goto(site.url + url)
            opened.append((url, ready, page, problems, bodies))
        for _, ready, page, _, _ in opened:
            page.wait_for_selector(ready)
        opened[-1][2].wait_for_timeout(600)  # the pages' first polls, all at once
        out = []
        for url, _, page, problems, bodies in opened:
            html = page.content()
            assert problems == [], f"{url}: {problems}"
            out.append((url, html, list(bodies)))
        return out
    finally:
        context.close()


def over(site: Site, match_id: str) -> bool:
    status, summary = get(site, f"/api/v1/matches/{match_id}")
    return status == 200 and summary.get("state") in ("finished", "aborted")


@pytest.mark.parametrize("width", [WIDE, PHONE], ids=["laptop", "phone"])
def test_no_page_shows_a_hand_or_the_seed_while_the_match_is_played(
        live: tuple[Site, threading.Event], browser: Any, width: int) -> None:
    site, hurry = live
    # the pages are read while the match is played: it lasts at least four deals of 0.3 s decisions
    # (a minute); on a machine so loaded that it ended before they were drawn, once more with a new one
    for tries in range(3):
        hurry.clear()
        seed = f"{SEED}/{width}/{tries}"
        match_id = site.start_match(deals=4 * 2 ** tries, seed=seed)
        read = read_pages(browser, site, match_id, width)
        if not over(site, match_id):
            break  # what was read was read while it played
        site.wait_match(match_id)
    else:
        pytest.fail("every match ended before its pages were drawn")
    for path, html, bodies in read:
        for text in [html, *bodies]:
            assert SEED not in text, f"{path} shows the seed while the match is played"
            assert not HANDS.search(text), f"{path} shows the hands while the match is played"
        # no card is drawn in a hand: a page shows only cards played
        assert 'class="hand' not in html, path
    # nor is it analysed while played (its analysis would value every card of every hand)
    status, _ = get(site, f"/api/v1/matches/{match_id}/analysis")
    assert status == 409 or over(site, match_id), status
    # once it is over (its bots hurried), the replay has the hands and the seed: what was looked for
    # above is there
    hurry.set()
    site.wait_match(match_id)
    deadline = time.monotonic() + 30
    while not over(site, match_id):
        assert time.monotonic() < deadline
        time.sleep(0.1)
    _, done = get(site, f"/api/v1/matches/{match_id}")
    text = json.dumps(done)
    assert seed in text and HANDS.search(text)
