"""The replay page as a reader studies a match with it, in a real browser (Debian's chromium, playwright), at
a laptop's width and a phone's: on an empty node, after a match, after a tournament, after a forfeit.

It steps card by card and trick by trick, on from one deal to the next; lists every deal, thrown-in and
unfinished ones too, in its menu and its table of deal scores; its keys and its links work, the URL says
where the reader is and opens there, the browser's back and forward return; the record downloads as JSON
once the match is over, and never earlier (a running match, a sealed table of duplicate play); and the
analysis's marks are drawn from an analysis in its API's shape (:func:`tests.web.replay_data.analysis_of`).

Every visit fails on a console error, a page error, "undefined" or "NaN" on the page, or a page wider
than its window (:func:`tests.web.test_page_states.visit`). Screenshots go to ``test-output/web/``; the
docs' one (``docs/images/replay.png``) is taken again with ``BELOTE_REFRESH_SCREENSHOT=1``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import pytest

from tests.web.browser import PHONE, SHOTS, WIDE, Watched, browser, needs_chromium, shot
from tests.web.replay_data import MARKED, analysis_of, forfeited, plays_by_seat
from tests.web.site import TOURNAMENT, Site, get, held_field_duplicate
from tests.web.test_page_states import (
    BARE_CARD,
    REFRESH,
    ROOT,
    SHOWS,
    YOUNG_SEED,
    contract_text,
    empty,
    png_text,
    visit,
    with_text,
    young_site,
)

pytestmark = [pytest.mark.slow, needs_chromium]
__all__ = ["browser", "empty", "forfeited"]  # the fixtures


@pytest.fixture(scope="module")
def young() -> Iterator[tuple[Site, str]]:
    """The young node of tests/web/test_page_states.py, analysing matches: the docs' screenshot shows its
    match's marks."""
    with young_site(analyses=True) as made:
        yield made

WIDTHS = pytest.mark.parametrize("width", [WIDE, PHONE], ids=["laptop", "phone"])
#: the replay page's shell, whose data-serves a test may change
SHELL = re.compile(r"/matches/[^/?]+/replay(\?.*)?$")
ANALYSIS = re.compile(r"/api/v1/matches/[^/?]+/analysis(\?.*)?$")


def label(page: Any) -> str:
    return str(page.locator("#trick-label").inner_text())


def where(page: Any) -> dict[str, str]:
    """The place the page's URL names: its deal, trick and card. Read from the page itself: playwright's
    ``page.url`` follows a same-document navigation (the page's pushState) by an event that may come
    after the next key's press (CI once read the URL before the last key's move on a loaded machine)."""
    return {k: v[0] for k, v in parse_qs(str(page.evaluate("location.search")).lstrip("?")).items()}


def hand_sizes(page: Any) -> list[int]:
    return [page.locator(f".hand[data-seat='{s}'] .card").count() for s in range(4)]


def serve_analysis(page: Any, answer: Callable[[], tuple[int, dict[str, Any]]]) -> list[str]:
    """Make the page see a node that serves analyses (its shell says so) and answer each read of one with
    ``answer()``; the reads made, as a list."""
    reads: list[str] = []

    def shell(route: Any) -> None:
        response = route.fetch()
        body = response.text().replace('data-serves="', 'data-serves="analysis ')
        route.fulfill(response=response, body=body)

    def analysis(route: Any) -> None:
        reads.append(route.request.url)
        status, body = answer()
        route.fulfill(status=status, content_type="application/json", body=json.dumps(body))

    page.route(SHELL, shell)
    page.route(ANALYSIS, analysis)
    return reads


def with_thrown_in(site: Site) -> dict[str, Any]:
    """The first of the round-robin's matches with a thrown-in deal and a played one (its view)."""
    _, t = get(site, f"/api/v1/tournaments/{TOURNAMENT}")
    for match_id in t["finished_matches"]:
        _, m = get(site, f"/api/v1/matches/{match_id}")
        thrown = [bool(o.get("thrown_in")) for o in m["replay"]]
        if any(thrown) and not all(thrown):
            return dict(m)
    pytest.fail("none of the round-robin's matches has both a thrown-in deal and a played one")


# ------------------------------------------------------------------ the node's states
@WIDTHS
def test_on_an_empty_node_a_replay_link_says_there_is_no_such_match(
        empty: Site, browser: Any, width: int) -> None:
    watched = Watched(browser, width)
    try:
        watched.page.goto(f"{empty.url}/matches/m-nothing/replay")
        watched.page.wait_for_selector("p.error")
        assert "no match" in watched.page.locator("p.error").inner_text()
        assert watched.page.locator(".card").count() == 0 and watched.sideways() <= 0
        # the read of the unknown match is a 404, which the browser logs; nothing else goes wrong
        assert [p for p in watched.problems if "status of 404" not in p] == [], watched.problems
    finally:
        watched.close()


@WIDTHS
def test_after_a_match_the_replay_steps_card_by_card_and_trick_by_trick(
        young: tuple[Site, str], browser: Any, width: int) -> None:
    site, match_id = young
    _, m = get(site, f"/api/v1/matches/{match_id}")
    deal, outcome = m["record"]["deals"][0], m["replay"][0]
    plays = plays_by_seat(m, 0)
    with visit(browser, site, f"/matches/{match_id}/replay", width, "#trick-label") as page:
        assert where(page) == {"deal": "1"} and label(page) == "before trick 1 (32 cards to play)"
        assert hand_sizes(page) == [8, 8, 8, 8]
        leader = (deal["dealer"] + 1) % 4
        assert page.locator(".seat.to-play").get_attribute("data-seat") == str(leader)
        page.click("#next-card")
        assert label(page) == "trick 1 of 8, card 1 of 4"
        assert where(page) == {"deal": "1", "trick": "1", "card": "1"}
        sizes = [8, 8, 8, 8]
        sizes[leader] = 7
        assert hand_sizes(page) == sizes
        assert page.locator(f".seat-{leader} .trick-card .card").get_attribute("data-card") == plays[0][1]
        assert page.locator("#card-note .card").first.get_attribute("data-card") == plays[0][1]
        page.click("#next-trick")  # to the end of the trick
        assert label(page) == "trick 1 of 8, card 4 of 4" and hand_sizes(page) == [7, 7, 7, 7]
        first = outcome["tricks"][0]
        assert page.locator("#trick-winner").inner_text() == f"trick 1 to seat {first['winner']}"
        won = page.locator(".trick-card .card.won")
        assert won.count() == 1
        assert won.get_attribute("data-card") == first["cards"][(first["winner"] - first["leader"]) % 4]
        page.click("#next-trick")
        assert label(page) == "trick 2 of 8, card 4 of 4" and hand_sizes(page) == [6, 6, 6, 6]
        page.click("#prev-card")
        assert label(page) == "trick 2 of 8, card 3 of 4" and sum(hand_sizes(page)) == 25
        page.click("#prev-trick")  # back to the end of the trick before
        assert label(page) == "trick 1 of 8, card 4 of 4"
        page.click("#end")
        assert label(page) == "trick 8 of 8, card 4 of 4" and hand_sizes(page) == [0, 0, 0, 0]
        score = outcome["score"]
        assert page.locator("#deal-score").inner_text() == f"deal score {score[0]} \u2013 {score[1]}"
        # on from the deal's end to the next deal's start, and back
        page.click("#next-card")
        assert where(page) == {"deal": "2"} and page.locator("#deal").input_value() == "1"
        page.click("#prev-card")
        assert where(page) == {"deal": "1", "trick": "8", "card": "4"}
        # the tricks listed, each card a link to its place, the cards still to come faded
        page.click("#start")
        assert page.locator("#tricks li").count() == 8 and page.locator("#tricks .card.ahead").count() == 32
        page.locator("#tricks li[data-trick='3'] a.pos").nth(1).click()
        assert label(page) == "trick 3 of 8, card 2 of 4" and where(page)["trick"] == "3"
        assert page.locator("#tricks .card.at").get_attribute("data-card") == plays[9][1]
        # cards are chips everywhere, never "TC"
        board = page.locator("#board").inner_text()
        assert not BARE_CARD.search(board), BARE_CARD.search(board)


@WIDTHS
def test_after_a_tournament_every_deal_is_in_the_menu_and_the_table_of_scores(
        site: Site, browser: Any, width: int) -> None:
    m = with_thrown_in(site)
    match_id, deals, outcomes = m["match_id"], m["record"]["deals"], m["replay"]
    with visit(browser, site, f"/matches/{match_id}/replay", width, "#scores tbody tr") as page:
        names = page.locator("#deal option").all_inner_texts()
        assert names == [f"deal {i + 1}{' (thrown in)' if o.get('thrown_in') else ''}"
                         for i, o in enumerate(outcomes)]
        rows = page.locator("#scores tbody tr")
        assert rows.count() == len(deals)
        total = [0, 0]
        for i, o in enumerate(outcomes):
            row = rows.nth(i)
            total = [total[0] + o["score"][0], total[1] + o["score"][1]]
            assert row.locator("td.total").inner_text() == f"{total[0]} \u2013 {total[1]}"
            if o.get("thrown_in"):
                assert row.locator("td.why-none").inner_text() == "thrown in: nobody took"
                continue
            assert row.locator("td.contract").inner_text() == contract_text(o)
            assert row.locator("td.takers").inner_text().startswith(f"team {o['takers']}")
            assert row.locator("td.made").inner_text().startswith(
                {True: "made", False: "down", None: "litige"}[o["made"]])
            points = o["card_points"]
            assert row.locator("td.points").inner_text() == f"{points[0]} \u2013 {points[1]}"
            assert row.locator("td.score").inner_text() == f"{o['score'][0]} \u2013 {o['score'][1]}"
        assert total == list(m["totals"])
        # a thrown-in deal shows its hands as dealt and its bids, and says it was thrown in
        thrown = next(i for i, o in enumerate(outcomes) if o.get("thrown_in"))
        page.select_option("#deal", str(thrown))
        assert where(page) == {"deal": str(thrown + 1)} and label(page) == "thrown in: no card played"
        assert page.locator("#replay-contract").inner_text() == "thrown in: nobody took"
        assert sorted(c.get_attribute("data-card") for c in page.locator(".hand .card").all()) == \
            sorted(c for h in deals[thrown]["hands"] for c in h)
        assert page.locator("#replay-bids li").count() == len(deals[thrown]["bids"])
        # the menu leaves the keys to the page: the arrows step again at once
        page.keyboard.press("ArrowRight")
        assert where(page)["deal"] == str(thrown + 2 if thrown + 1 < len(deals) else thrown + 1)


@WIDTHS
def test_after_a_forfeit_the_unfinished_deal_steps_to_where_the_match_ended(
        forfeited: tuple[Site, str], browser: Any, width: int) -> None:
    site, match_id = forfeited
    _, m = get(site, f"/api/v1/matches/{match_id}")
    stopped = m["record"]["unfinished_deal"]
    last = len(m["record"]["deals"])
    played = len(stopped["plays"])
    with visit(browser, site, f"/matches/{match_id}/replay?deal={last + 1}", width, "#trick-label") as page:
        assert page.locator("#deal option").last.inner_text() == f"deal {last + 1} (unfinished)"
        assert page.locator(f"#scores tbody tr[data-deal='{last}'] td.why-none").inner_text() == \
            "unfinished: the match ended"
        page.keyboard.press("End")
        assert label(page) == f"trick {(played - 1) // 4 + 1} of 8, card {(played - 1) % 4 + 1} of 4"
        assert "the match ended here" in page.locator(".center").inner_text()
        assert sum(hand_sizes(page)) == 32 - played
        # the cards the referee played for the struck bot say so
        struck = [s for s in m["record"]["strikes"] if s["deal"] == last and s["fallback"]]
        fallbacks = [s for s in struck if s["decision"] < len(stopped["bids"]) + played]
        assert page.locator("#tricks .strike").count() == len(fallbacks) >= 1
        first = fallbacks[0]["decision"] - len(stopped["bids"])
        page.locator("#tricks a.pos").nth(first).click()
        assert "struck, no_action" in page.locator("#card-note").inner_text()
        assert "(forfeit" in page.locator("p.teams").inner_text()


# ------------------------------------------------------------------ keys, links, history
def test_the_keys_step_through_the_match_and_are_shown_on_the_page(
        young: tuple[Site, str], browser: Any) -> None:
    site, match_id = young
    with visit(browser, site, f"/matches/{match_id}/replay", WIDE, "#trick-label") as page:
        shown = page.locator("#shortcuts").inner_text()
        for key in ("\u2190", "\u2192", "\u2191", "\u2193", "Page Up", "Page Down", "p", "n", "Home", "End"):
            assert key in shown, key
        steps = [("ArrowRight", "trick 1 of 8, card 1 of 4"), ("ArrowRight", "trick 1 of 8, card 2 of 4"),
                 ("ArrowDown", "trick 1 of 8, card 4 of 4"), ("ArrowDown", "trick 2 of 8, card 4 of 4"),
                 ("ArrowUp", "trick 1 of 8, card 4 of 4"), ("ArrowLeft", "trick 1 of 8, card 3 of 4"),
                 ("Shift+ArrowRight", "trick 1 of 8, card 4 of 4"), ("End", "trick 8 of 8, card 4 of 4"),
                 ("Home", "before trick 1 (32 cards to play)")]
        for key, said in steps:
            page.keyboard.press(key)
            assert label(page) == said, key
        page.keyboard.press("PageDown")
        assert where(page) == {"deal": "2"}
        page.keyboard.press("p")
        assert where(page) == {"deal": "1"}
        page.keyboard.press("n")
        assert where(page) == {"deal": "2"}
        page.keyboard.press("ArrowLeft")  # back past a deal's start: the previous deal's end
        assert where(page) == {"deal": "1", "trick": "8", "card": "4"}
        # a key with a modifier is the browser's, not the page's
        page.keyboard.press("Control+ArrowLeft")
        assert where(page) == {"deal": "1", "trick": "8", "card": "4"}


def test_a_link_opens_the_replay_where_it_says_and_back_and_forward_return(
        young: tuple[Site, str], browser: Any) -> None:
    site, match_id = young
    _, m = get(site, f"/api/v1/matches/{match_id}")
    plays = plays_by_seat(m, 1)
    replay = f"/matches/{match_id}/replay"
    with visit(browser, site, f"{replay}?deal=2&trick=3&card=2", WIDE, "#trick-label") as page:
        assert label(page) == "trick 3 of 8, card 2 of 4" and page.locator("#deal").input_value() == "1"
        seat, played = plays[9]
        assert page.locator(f".seat-{seat} .trick-card .card").get_attribute("data-card") == played
        assert sum(hand_sizes(page)) == 32 - 10
        assert page.locator("#position-link").get_attribute("href") == "?deal=2&trick=3&card=2"
        page.keyboard.press("ArrowRight")
        assert where(page) == {"deal": "2", "trick": "3", "card": "3"}
        page.keyboard.press("p")  # another deal: a new entry in the history
        assert where(page) == {"deal": "1"}
        page.go_back()
        page.wait_for_url(re.compile(r"card=3$"))
        assert label(page) == "trick 3 of 8, card 3 of 4" and page.locator("#deal").input_value() == "1"
        page.go_forward()
        page.wait_for_url(re.compile(r"deal=1$"))
        assert label(page) == "before trick 1 (32 cards to play)"
        # the table's deal links go to a deal's start, the browser's back returns
        page.locator("#scores a.pos").nth(1).click()
        assert where(page) == {"deal": "2"}
        page.go_back()
        page.wait_for_url(re.compile(r"deal=1$"))
    # a place past the match is read as its last: the last deal's end, and the URL says so
    with visit(browser, site, f"{replay}?deal=9&trick=12&card=7", WIDE, "#trick-label") as page:
        assert where(page) == {"deal": "2", "trick": "8", "card": "4"}
        assert page.locator("#next-card").is_disabled() and page.locator("#next-deal").is_disabled()
    with visit(browser, site, f"{replay}?deal=x&trick=-1", WIDE, "#trick-label") as page:
        assert where(page) == {"deal": "1"}


# ------------------------------------------------------------------ the download
def test_the_record_downloads_as_json_from_the_replay(site: Site, browser: Any) -> None:
    m = with_thrown_in(site)
    match_id = m["match_id"]
    with visit(browser, site, f"/matches/{match_id}/replay", WIDE, "#download") as page:
        with page.expect_download() as started:
            page.click("#download")
        got = started.value
        assert got.suggested_filename == f"{match_id}.json"
        assert json.loads(Path(got.path()).read_text()) == m["record"]


@pytest.mark.security
def test_a_sealed_table_s_replay_shows_no_card_seed_or_download_until_its_twin_is_over(
        browser: Any, tmp_path: Path) -> None:
    """Field duplicate: tables 0 and 1 deal the same cards. While table 1 is played, table 0 is over but
    sealed: its replay page, and every answer the browser got to draw it, hold none of its cards nor its
    seed, there is no download, and the record's read is refused; once table 1 is over, both show."""
    site, gate, t0, t1 = held_field_duplicate(tmp_path, "fd")
    try:
        deadline = time.monotonic() + 60
        while get(site, f"/api/v1/matches/{t0}")[1].get("state") != "finished":
            assert time.monotonic() < deadline, "table 0 was not over after 60 s"
            time.sleep(0.1)
        sealed_texts: list[str] = []
        running = "being played: its replay is shown once it is over, and as a table of duplicate play"
        for match_id, why in ((t0, "This table is sealed"), (t1, running)):
            _, view = get(site, f"/api/v1/matches/{match_id}")
            assert view["record"] is None and view["seed"] == ""
            watched = Watched(browser, WIDE)
            answers: list[Any] = []

            def keep(response: Any, into: list[Any] = answers) -> None:
                into.append(response)

            watched.page.on("response", keep)
            try:
                watched.page.goto(f"{site.url}/matches/{match_id}/replay")
                watched.page.wait_for_selector("#not-yet")
                assert why in watched.page.locator("#not-yet").inner_text()
                assert watched.page.locator(".card").count() == 0
                assert watched.page.locator("#download").count() == 0
                html = watched.page.content()
                api = [r.text() for r in answers if "/api/" in r.url]
                assert watched.problems == []
            finally:
                watched.close()
            status, body = get(site, f"/api/v1/matches/{match_id}/record")
            assert status == 409 and set(body) == {"error", "status"}, body
            status, analysis = get(site, f"/api/v1/matches/{match_id}/analysis")  # it sees every hand too
            assert status == 409 and set(analysis) == {"error", "status"}, analysis
            sealed_texts += [html, *api, json.dumps(body), json.dumps(analysis)]
        gate.set()
        deadline = time.monotonic() + 60
        while get(site, f"/api/v1/matches/{t1}")[1].get("state") != "finished":
            assert time.monotonic() < deadline, "table 1 was not over after 60 s"
            time.sleep(0.1)
        _, shown = get(site, f"/api/v1/matches/{t0}")
        status, body = get(site, f"/api/v1/matches/{t0}/record")
        assert status == 200 and body == shown["record"] and len(shown["seed"]) == 64
        # nothing the sealed pages drew, nor any answer they got, held the seed or a hand's cards
        hands = [" ".join(h) for d in shown["record"]["deals"] for h in d["hands"]]
        for text in sealed_texts:
            assert shown["seed"] not in text, text
            assert '"hands"' not in text and not any(h in text for h in hands), text
        with visit(browser, site, f"/matches/{t0}/replay", WIDE, "#download") as page:
            assert hand_sizes(page) == [8, 8, 8, 8]
    finally:
        gate.set()
        site.close()


# ------------------------------------------------------------------ the analysis's marks
@WIDTHS
def test_the_analysis_marks_each_card_and_shows_the_better_one_on_hover_or_tap(
        young: tuple[Site, str], browser: Any, width: int) -> None:
    site, match_id = young
    _, m = get(site, f"/api/v1/matches/{match_id}")
    analysis = analysis_of(m)
    cards = {c["i"]: c for c in analysis["deals"][0]["cards"]}
    watched = Watched(browser, width)
    try:
        page = watched.page
        serve_analysis(page, lambda: (200, analysis))
        page.goto(f"{site.url}/matches/{match_id}/replay")
        page.wait_for_selector("#analysis-bots")
        assert "A double-dummy note." in page.locator("#analysis-status").inner_text()
        # each label's glyph on its card, and no mark on a card that lost less than the labels' least
        for k, (name, loss) in MARKED.items():
            node = page.locator("#tricks a.pos").nth(k).locator(".marked")
            assert node.get_attribute("data-label") == name, (k, name)
            if name:
                glyph = {"inaccuracy": "?!", "mistake": "?", "blunder": "??"}[name]
                assert node.locator(".glyph").inner_text() == glyph
            assert f"{loss} points lost" in node.get_attribute("title")
        assert page.locator("#tricks .marked .glyph").count() == sum(1 for n, _ in MARKED.values() if n)
        # hover: the better card shows, within the page's width
        blunder = next(k for k, (n, _) in MARKED.items() if n == "blunder")
        better = cards[blunder]["best"][0]
        link = page.locator("#tricks a.pos").nth(blunder)
        assert not link.locator(".better").is_visible()
        link.hover()
        assert link.locator(".better").is_visible()
        assert link.locator(".better .card").get_attribute("data-card") == better
        assert watched.sideways() <= 0
        # tap: the card's place, its note naming the better card, outlined in the hand that held it
        link.click()
        assert where(page) == {"deal": "1", "trick": str(blunder // 4 + 1), "card": str(blunder % 4 + 1)}
        note = page.locator("#card-note")
        assert "A blunder" in note.inner_text() and f"({MARKED[blunder][1]} points lost)" in note.inner_text()
        assert note.locator(".analysis .card").get_attribute("data-card") == better
        seat = cards[blunder]["seat"]
        assert page.locator(f".hand[data-seat='{seat}'] .card.better").get_attribute("data-card") == better
        # the worst decisions, each a link to its place; the bots' figures; luck and skill
        worst = page.locator("#worst li")
        assert worst.first.get_attribute("data-card") == cards[blunder]["card"]
        assert worst.count() == sum(1 for _, loss in MARKED.values() if loss) + 1  # and the bidding's
        bidding = page.locator("#worst li[data-kind='bidding']")
        assert bidding.locator(".action.bid").count() == 2 and "3 points lost" in bidding.inner_text()
        assert page.locator("#analysis-bots tbody tr").count() == len(set(m["players"]))
        luck = page.locator("#luck-skill li").first.inner_text()
        assert luck == "team 0 (alpha): result 30 = luck 20 + skill 10"
        row = page.locator("#scores tbody tr").first
        assert row.locator("td.marks").inner_text().split() == ["1\u00d7?!", "1\u00d7?", "1\u00d7??"]
        assert row.locator("td.skill").inner_text() == "+10"
        assert "accuracy 90" in page.locator(".seat-0 .seat-of").inner_text()
        assert "Par" in page.locator("#bidding-note").inner_text()
        page.locator("#worst a.pos").first.click()
        assert where(page)["card"] == str(blunder % 4 + 1)
        assert watched.sideways() <= 0
        text = page.locator("main").inner_text()
        assert "undefined" not in text and "NaN" not in text
        assert watched.problems == []
        link = page.locator("#tricks a.pos").nth(blunder)
        link.hover()
        shot(page, f"replay-analysed-{width}")
    finally:
        watched.close()


def poll_ms() -> int:
    """How long the replay page waits between two reads of an analysis being made (analysis.js)."""
    script = (ROOT / "arena" / "web" / "static" / "analysis.js").read_text()
    found = re.search(r"\bANALYSIS_POLL_MS = (\d+)", script)
    assert found is not None, "analysis.js no longer names ANALYSIS_POLL_MS"
    return int(found.group(1))


def test_an_analysis_being_made_shows_its_marks_once_it_is_ready(
        young: tuple[Site, str], browser: Any) -> None:
    site, match_id = young
    _, m = get(site, f"/api/v1/matches/{match_id}")
    answers = [(200, {"state": "pending"}), (200, analysis_of(m))]
    watched = Watched(browser, WIDE)
    try:
        page = watched.page
        reads = serve_analysis(page, lambda: answers.pop(0) if len(answers) > 1 else answers[0])
        page.clock.install()  # the page's clock: its next read, ANALYSIS_POLL_MS on, is made at once below
        page.goto(f"{site.url}/matches/{match_id}/replay")
        page.wait_for_selector("#analysis-status:has-text('being made')")
        assert page.locator(".marked").count() == 0
        page.clock.fast_forward(poll_ms())
        page.wait_for_selector("#tricks .glyph", timeout=20_000)
        assert len(reads) == 2 and watched.problems == []
    finally:
        watched.close()


def test_without_an_analysis_the_page_says_so_and_asks_for_none_it_cannot_get(
        site: Site, young: tuple[Site, str], browser: Any) -> None:
    _, t = get(site, f"/api/v1/tournaments/{TOURNAMENT}")
    match_id = t["finished_matches"][0]
    # a node that serves no analysis (serve --no-analyses, as this module's site): its API says so,
    # and its page asks for none, so no request fails
    status, body = get(site, f"/api/v1/matches/{match_id}/analysis")
    assert (status, body["error"]) == (404, "this node does not analyse matches"), (status, body)
    with visit(browser, site, f"/matches/{match_id}/replay", WIDE, "#trick-label") as page:
        requests: list[str] = []
        page.on("request", lambda r: requests.append(r.url))
        page.reload()
        page.wait_for_selector("#trick-label")
        assert "analysis" not in (page.locator("body").get_attribute("data-serves") or "")
        assert "does not analyse" in page.locator("#analysis-status").inner_text()
        assert not [u for u in requests if ANALYSIS.search(u)]
    # a node that serves them, but not this one's: the page says why, and goes on without marks
    serving, match_id = young
    watched = Watched(browser, WIDE)
    try:
        serve_analysis(watched.page, lambda: (404, {"error": "no analysis of this match", "status": 404}))
        watched.page.goto(f"{serving.url}/matches/{match_id}/replay")
        watched.page.wait_for_selector("#analysis-status:has-text('No analysis')")
        assert watched.page.locator(".marked").count() == 0 and hand_sizes(watched.page) == [8, 8, 8, 8]
        assert [p for p in watched.problems if "status of 404" not in p] == [], watched.problems
    finally:
        watched.close()


# ------------------------------------------------------------------ the docs' screenshot
DOCS_IMAGE = ROOT / "docs" / "images" / "replay.png"
#: where the docs' screenshot opens the young match: its second deal, in the middle of trick 5
SHOT_PLACE = "?deal=2&trick=5&card=3"


def look() -> str:
    """A digest of what draws the replay: the style sheet, the page's shell, and the scripts it runs."""
    static = ROOT / "arena" / "web" / "static"
    names = ("style.css", "page.html", "common.js", "matches.js", "analysis.js", "replay.js")
    return hashlib.sha256(b"\0".join((static / n).read_bytes() for n in names)).hexdigest()[:16]


@pytest.fixture(scope="module", autouse=True)
def _young_analysis_asked(young: tuple[Site, str]) -> None:
    """The young match's analysis is asked for as the module starts: the node makes it (10 to 20 s of
    CPU at the lowest priority) while the other tests run, so that the docs' screenshot, which shows
    its marks, does not wait for all of it."""
    site, match_id = young
    status, _ = get(site, f"/api/v1/matches/{match_id}/analysis")
    assert status in (200, 202, 404), status  # 404: a node that serves none


def analysed(site: Site, match_id: str, timeout: float = 600.0) -> None:
    """Wait until the node has the match's analysis (made at the lowest priority: minutes when busy)."""
    deadline = time.monotonic() + timeout
    while get(site, f"/api/v1/matches/{match_id}/analysis")[0] == 202:
        assert time.monotonic() < deadline, f"no analysis of {match_id} after {timeout} s"
        time.sleep(0.2)


def test_the_docs_screenshot_shows_the_replay_as_it_is_drawn_now(
        young: tuple[Site, str], browser: Any) -> None:
    """``docs/images/replay.png`` is this test's screenshot of the young node's match (a seeded coinche
    match of two seeded heuristic bots: the same cards each run), in the middle of a trick.

    As the README's leaderboard screenshot, its pixels are not compared: the picture says in a PNG text
    chunk what it shows (the place, the width, the label, the cards in the hands and on the table, the
    marks, the table's rows, a digest of the code and style that draw it), and the test fails when a new
    one would show something else. ``BELOTE_REFRESH_SCREENSHOT=1`` writes the new one in its place: do so
    once the node analyses matches, and the picture shows their marks.
    """
    site, match_id = young
    _, m = get(site, f"/api/v1/matches/{match_id}")
    assert m["seed"] == YOUNG_SEED
    # ready before the page reads it: the page's first read has it, rather than a read 5 s on
    analysed(site, match_id)
    watched = Watched(browser, WIDE, 700)
    try:
        page = watched.page
        page.goto(f"{site.url}/matches/{match_id}/replay{SHOT_PLACE}")
        page.wait_for_selector("#trick-label")
        if "analysis" in (page.locator("body").get_attribute("data-serves") or ""):
            done = "#analysis-bots, #analysis-status:has-text('No analysis')"
            page.wait_for_selector(done, timeout=600_000)  # made at the lowest priority: minutes when busy
        shows = {
            "page": f"/matches/{{young match}}/replay{SHOT_PLACE}", "width": WIDE, "seed": m["seed"],
            "label": label(page), "hands": [sorted(c.get_attribute("data-card") for c in
                                                   page.locator(f".hand[data-seat='{s}'] .card").all())
                                            for s in range(4)],
            "played": [c.get_attribute("data-card") for c in
                       page.locator(".trick-card > .card, .trick-card > .marked > .card").all()],
            "marks": page.locator("#tricks .glyph").count(), "rows": page.locator("#scores tbody tr").count(),
            "look": look(),
        }
        png = with_text(page.screenshot(full_page=True), SHOWS, json.dumps(shows, sort_keys=True))
        assert watched.problems == []
    finally:
        watched.close()
    SHOTS.mkdir(parents=True, exist_ok=True)
    (SHOTS / "docs-replay.png").write_bytes(png)
    if os.environ.get(REFRESH):
        DOCS_IMAGE.write_bytes(png)
    committed = png_text(DOCS_IMAGE.read_bytes(), SHOWS) if DOCS_IMAGE.exists() else None
    assert committed is not None and json.loads(committed) == shows, (
        f"{DOCS_IMAGE.relative_to(ROOT)} no longer shows what the page does: it shows\n{committed}\nand the "
        f"page\n{json.dumps(shows, sort_keys=True)}\n(the new screenshot: test-output/web/docs-replay.png; "
        f"{REFRESH}=1 writes it in place)")
    assert "(images/replay.png)" in (ROOT / "docs" / "web.md").read_text()
