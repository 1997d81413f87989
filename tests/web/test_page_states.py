"""Every page as a newcomer meets it: on an empty node, on a young node (one unrated match), and after
the demo, in a laptop's width and a phone's, in a real browser (Debian's chromium, playwright).

On each: no console error (a failed request is one: the 404s of ``pool=undefined`` were), no page
error, no "undefined" or "NaN" on the page, and no sideways scroll (the page is no wider than the
window). An empty list says why it is empty and what to do next. Screenshots go to
``test-output/web/states/``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import struct
import tempfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from belote_bot import HeuristicBot

from arena.cli import build_parser
from arena.demo import demo_bots, demo_specs
from tests.web.browser import PHONE, SHOTS, WIDE, Watched, browser, needs_chromium
from tests.web.browser import visit as visit_page
from tests.web.site import Site, get

#: one worker runs them all (xdist_group), so that each of the module's nodes is built once (the
#: demo's takes 18 s)
pytestmark = [pytest.mark.slow, needs_chromium, pytest.mark.xdist_group("page-states")]
__all__ = ["browser"]  # the fixture

WIDTHS = pytest.mark.parametrize("width", [WIDE, PHONE], ids=["laptop", "phone"])
#: a card's record text ("TC"), which no page shows bare: a card is a chip "10♣" everywhere
BARE_CARD = re.compile(r"(?<![\w-])[789TJQKA][SHDC](?![\w-])")
#: the young node's one match: a seed whose deals are played (not all thrown in), so it has a contract
YOUNG_SEED = "young/1"


def visit(browser: Any, site: Site, path: str, width: int,
          ready: str) -> contextlib.AbstractContextManager[Any]:
    """:func:`tests.web.browser.visit`, its screenshots under ``states/`` by the site's name."""
    return visit_page(browser, site.url, path, width, ready, f"states/{site.data_dir.name}")


def fits(page: Any, selector: str) -> bool:
    """Whether the table ``selector`` fits the box it scrolls in (a reader sees every column)."""
    box = page.locator(selector).bounding_box()
    frame = page.locator(f"{selector} >> xpath=..").bounding_box()
    return bool(box["width"] <= frame["width"] + 0.5)


@contextlib.contextmanager
def make_site(name: str, **kwargs: Any) -> Iterator[Site]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / name
        path.mkdir()
        site = Site(path, **kwargs)
        try:
            yield site
        finally:
            site.close()


# The nodes here analyse no match (``serve --no-analyses``): no test of this module reads an analysis
# (tests/web/test_replay_page.py tests the pages' marks), and a match page asks for its match's, which
# a node makes at once: the demo's coinche match, played to its target, took 128 s of a core that the
# other tests then lacked.
@pytest.fixture(scope="module")
def empty() -> Iterator[Site]:
    """A node as ``serve --http`` starts it: no bot, no match, no tournament."""
    with make_site("empty", players={}, tournament=False, analyses=False) as site:
        yield site


@contextlib.contextmanager
def young_site(analyses: bool) -> Iterator[tuple[Site, str]]:
    """A node with two bots that have played one match (``match start``): unrated."""
    with make_site("young", players={"alpha": HeuristicBot(seed=1), "beta": HeuristicBot(seed=2)},
                   tournament=False, analyses=analyses) as site:
        match_id = site.start_match("alpha", "beta", deals=2, ruleset="coinche", seed=YOUNG_SEED)
        site.wait_match(match_id)
        _, done = get(site, f"/api/v1/matches/{match_id}")
        assert not done["replay"][-1].get("thrown_in"), "the young match's last deal must be played"
        yield site, match_id


@pytest.fixture(scope="module")
def young() -> Iterator[tuple[Site, str]]:
    with young_site(analyses=False) as made:
        yield made


@pytest.fixture(scope="module")
def demo() -> Iterator[Site]:
    """A node once ``belote-arena demo`` (its defaults: the same bots, tournaments, rounds and seed)
    has played: two round-robins of 120 matches, 60 games a bot."""
    args = build_parser().parse_args(["demo"])
    specs = demo_specs(args.rulesets.split(","), args.deals or None, args.rounds, args.seed, args.format)
    with make_site("demo", players=demo_bots(), tournaments=specs, analyses=False) as site:
        yield site


# ------------------------------------------------------------------ an empty node
@WIDTHS
def test_an_empty_node_s_pages_say_why_they_are_empty_and_what_to_do(
        empty: Site, browser: Any, width: int) -> None:
    with visit(browser, empty, "/", width, "#empty") as page:
        text = page.locator("#empty").inner_text()
        assert "No ratings yet" in text and "single match" in text
        assert "tournament create" in text and "bot register" in text and "demo" in text
        assert page.locator("#pool, #leaderboard").count() == 0
    with visit(browser, empty, "/bots", width, "#empty") as page:
        assert "No bot is registered" in page.locator("#empty").inner_text()
        assert "bot register" in page.locator("#empty").inner_text()
    with visit(browser, empty, "/tournaments", width, "#empty") as page:
        assert "No tournament yet" in page.locator("#empty").inner_text()
        assert "tournament create" in page.locator("#empty").inner_text()
    with visit(browser, empty, "/ladders", width, "#empty") as page:
        text = page.locator("#empty").inner_text()
        assert "No ladder yet" in text and "ladder add" in text and "ladder start" in text
    with visit(browser, empty, "/ladders/coinche", width, "#no-bots") as page:
        assert page.locator("#ladder-state").inner_text().startswith("off: ")
        assert "No rated game" in page.locator("#no-standings").inner_text()
        assert "ladder add --pool coinche" in page.locator("#no-bots").inner_text()
        assert "No pairing yet" in page.locator("#no-picks").inner_text()
    with visit(browser, empty, "/schedules", width, "#empty") as page:
        text = page.locator("#empty").inner_text()
        assert "No scheduled tournament" in text and "tournament schedule" in text


# ------------------------------------------------------------------ a young node
@WIDTHS
def test_a_young_node_s_pages_say_single_matches_are_unrated(
        young: tuple[Site, str], browser: Any, width: int) -> None:
    site, match_id = young
    with visit(browser, site, "/", width, "#empty") as page:
        text = page.locator("#empty").inner_text()
        assert "No ratings yet" in text and "single match" in text and "unrated" in text
    with visit(browser, site, "/bots", width, "#bots tbody tr") as page:
        rows = page.locator("#bots tbody tr").all()
        assert [r.get_attribute("data-bot") for r in rows] == ["alpha", "beta"]
    with visit(browser, site, "/bots/alpha", width, "#recent tbody tr") as page:
        why = page.locator("#not-rated").inner_text()
        assert "single matches" in why and "unrated" in why and "tournament create" in why
        assert page.locator("#history").count() == 0  # no pool: no chart, and no request that fails
        row = page.locator(f"#recent tbody tr[data-match='{match_id}']")
        assert row.locator("td.tournament").inner_text() == "single"
    with visit(browser, site, "/tournaments", width, "#empty") as page:
        assert "No tournament yet" in page.locator("#empty").inner_text()


def contract_text(outcome: dict[str, Any]) -> str:
    """The contract as the pages write it: ``110 ♥`` (coinche), ``trump ♥`` (classic)."""
    suit = {"S": "\u2660", "H": "\u2665", "D": "\u2666", "C": "\u2663"}
    contract = outcome.get("contract")
    if contract:
        value, rest = re.fullmatch(r"(\d+|capot)[SHDC]( .*)?", contract).groups()  # type: ignore[union-attr]
        return f"{value} {suit[contract[len(value)]]}{rest or ''}"
    return f"trump {suit[outcome['trump']]}"


@WIDTHS
def test_a_match_s_page_shows_its_bids_contract_and_last_trick_apart(
        young: tuple[Site, str], browser: Any, width: int) -> None:
    site, match_id = young
    _, done = get(site, f"/api/v1/matches/{match_id}")
    players = done["players"]
    deal, outcome = done["record"]["deals"][-1], done["replay"][-1]
    with visit(browser, site, f"/matches/{match_id}", width, "#status[data-over=true]") as page:
        # the bots are named at their seats
        assert [page.locator(f".seat-{s} h3 a").inner_text() for s in range(4)] == players
        # the last deal's bids, each with its seat and bot, and the contract they made
        bids = page.locator("#bids li").all_inner_texts()
        assert len(bids) == len(deal["bids"])
        first = (deal["dealer"] + 1) % 4
        assert bids[0].startswith(f"seat {first} ({players[first]}): ")
        contract = page.locator("#contract").inner_text()
        assert contract.startswith(contract_text(outcome)), contract
        assert f"team {outcome['takers']}" in contract
        # the trick in progress is apart from the last one: the deal is over, its trick is empty,
        # and the last trick is the deal's eighth, its winner marked
        assert page.locator("#trick .card").count() == 0
        last = outcome["tricks"][-1]
        shown = [c.get_attribute("data-card") for c in page.locator("#last-trick .card").all()]
        assert shown == last["cards"]
        won = page.locator("#last-trick .card.won")
        assert won.count() == 1
        assert won.get_attribute("data-card") == last["cards"][(last["winner"] - last["leader"]) % 4]
        # cards are written the same way everywhere: chips, never "TC"
        events = page.locator("#events").inner_text()
        assert not BARE_CARD.search(events), BARE_CARD.search(events)
        assert page.locator("#events .card").count() >= 32
    with visit(browser, site, f"/matches/{match_id}/replay", width, "#trick-label") as page:
        page.select_option("#deal", str(page.locator("#deal option").count() - 1))
        assert page.locator("#replay-contract").inner_text().startswith(contract_text(outcome))
        assert len(page.locator("#replay-bids li").all()) == len(deal["bids"])


# ------------------------------------------------------------------ after the demo
@WIDTHS
def test_after_the_demo_every_page_shows_its_data_within_the_window(
        demo: Site, browser: Any, width: int) -> None:
    with visit(browser, demo, "/", width, "#leaderboard tbody tr") as page:
        assert page.locator("#leaderboard tbody tr").count() == 4
        assert set(page.locator("#leaderboard td.games").all_inner_texts()) == {"60"}
        assert fits(page, "#leaderboard"), "the leaderboard is wider than its box"
    with visit(browser, demo, "/bots", width, "#bots tbody tr") as page:
        assert page.locator("#bots tbody tr").count() == 4
    with visit(browser, demo, "/tournaments", width, "#tournaments tbody tr") as page:
        assert page.locator("#tournaments tbody tr").count() == 2
    with visit(browser, demo, "/tournaments/coinche-round-robin", width, "#matches tbody tr") as page:
        assert page.locator("#matches tbody tr").count() == 50
        assert page.locator("#finished .range").inner_text() == "1\u201350 of 120"
        assert page.locator("#standings tbody tr").count() == 4
    with visit(browser, demo, "/bots/heuristic", width, "#history") as page:
        assert page.locator("#ratings tbody tr").count() == 2
        assert {t.strip() for t in page.locator("#recent td.tournament").all_inner_texts()} <= {
            "classic-round-robin", "coinche-round-robin"}
    match_id = "coinche-round-robin-r1-1"
    with visit(browser, demo, f"/matches/{match_id}", width, "#status[data-over=true]") as page:
        assert page.locator("#last-trick .card").count() == 4 and page.locator("#bids li").count() >= 4
    with visit(browser, demo, f"/matches/{match_id}/replay", width, "#trick-label") as page:
        assert [page.locator(f".hand[data-seat='{s}'] .card").count() for s in range(4)] == [8] * 4


@WIDTHS
def test_the_leaderboard_finds_a_bot_says_who_is_connected_and_marks_provisional_ratings(
        demo: Site, empty: Site, browser: Any, width: int) -> None:
    _, board = get(demo, "/api/v1/leaderboard")
    with visit(browser, demo, "/", width, "#leaderboard tbody tr") as page:
        rows = page.locator("#leaderboard tbody tr")
        assert [r.get_attribute("data-bot") for r in rows.all()] == [e["bot"] for e in board["entries"]]
        for row, e in zip(rows.all(), board["entries"], strict=True):
            # every demo bot is connected: a dot, said in words to a screen reader
            assert e["connected"] is True and row.get_attribute("data-connected") == "true"
            assert row.locator("td.presence.on").get_attribute("aria-label") == "connected now"
            mark = row.locator("td.rating .provisional")
            assert mark.count() == (1 if e["provisional"] else 0)
        noted = page.locator("#provisional-note").count() == 1
        assert noted == any(e["provisional"] for e in board["entries"])
        assert fits(page, "#leaderboard"), "the leaderboard is wider than its box"
        # a search: the rows whose bot's name holds it, any case, at their ranks; the URL keeps it
        wanted = board["entries"][-1]
        part = wanted["bot"][:4]
        page.fill("#search", part.upper())
        page.wait_for_function("n => document.querySelectorAll('#leaderboard tbody tr').length === n",
                               arg=sum(part.lower() in e["bot"].lower() for e in board["entries"]))
        assert wanted["bot"] in [r.get_attribute("data-bot") for r in rows.all()]
        row = page.locator(f"#leaderboard tbody tr[data-bot='{wanted['bot']}']")
        assert row.locator("td.rank").inner_text() == str(wanted["rank"])
        assert "q=" in page.url
        page.fill("#search", "nobody-plays-here")
        page.wait_for_selector("#no-match")
        assert "nobody-plays-here" in page.locator("#no-match").inner_text()
    # the search is in the URL: a link to it finds the bot again
    with visit(browser, demo, f"/?q={wanted['bot']}", width, "#leaderboard tbody tr") as page:
        assert page.locator("#search").input_value() == wanted["bot"]
        assert wanted["bot"] in page.locator("#leaderboard tbody tr").first.get_attribute("data-bot")
    with visit(browser, empty, "/", width, "#empty") as page:  # no pool yet: nothing to search
        assert page.locator("#search").count() == 0


@WIDTHS
def test_a_bot_s_rating_history_says_what_it_draws_on_labelled_axes(
        demo: Site, browser: Any, width: int) -> None:
    pool = "tournament:classic-round-robin"
    _, history = get(demo, f"/api/v1/bots/heuristic/history?pool={pool}")
    assert history["method"] == "elo"
    with visit(browser, demo, "/bots/heuristic", width, "#history circle.point") as page:
        assert page.locator("#history-pool").input_value() == pool
        assert page.locator("#x-label").text_content() == f"games played in {pool}"
        assert page.locator("#y-label").text_content() == "online Elo"
        note = page.locator("#history-note").inner_text()
        assert "Bradley-Terry" in note and f"online Elo (K={history['k']:g})" in note
        assert f"every {history['every']} games" in note
        assert page.locator("#history circle.point").count() == len(history["history"]) == 6  # 60 games
        assert page.locator("#history text.x-tick").count() >= 2
        assert page.locator("#history text.y-tick").count() >= 2
        # both axes say which numbers they hold: the last x tick is at least the games played
        assert float(page.locator("#history text.x-tick").last.text_content()) >= history["history"][-1][0]


def test_a_tournament_lists_its_finished_matches_in_round_order_a_page_at_a_time(
        demo: Site, browser: Any) -> None:
    tid = "coinche-round-robin"
    _, first = get(demo, f"/api/v1/tournaments/{tid}/matches?limit=50")
    with visit(browser, demo, f"/tournaments/{tid}", WIDE, "#matches tbody tr") as page:
        rows = page.locator("#matches tbody tr")
        # the 50 rows read in one call (200 calls, one a cell, took seconds on a loaded machine)
        shown = rows.evaluate_all(
            "rows => rows.map(r => ({match: r.dataset.match, round: r.querySelector('td.round').innerText,"
            " link: r.querySelector('a').innerText, team0: r.querySelector('td.team0').innerText,"
            " score: r.querySelector('td.score').innerText,"
            " result: r.querySelector('td.result').innerText}))")
        assert [r["match"] for r in shown] == [m["match_id"] for m in first["items"]]
        # round order: r1-2 comes before r1-10
        assert [r["round"] for r in shown[:12]] == ["1"] * 12
        assert [r["link"] for r in shown[:12]] == [f"r1-{i}" for i in range(12)]
        for row, m in zip(shown, first["items"], strict=True):
            assert row["team0"] == m["teams"][0]
            assert row["score"] == f"{m['totals'][0]} \u2013 {m['totals'][1]}"
            won = m["teams"][m["winner"]] + " won" if m["winner"] is not None else "draw"
            assert row["result"] == won
        page.click("#finished button.next")
        page.wait_for_selector("#finished .range:text('51\u2013100 of 120')")
        assert rows.first.locator("a").first.inner_text() == "r5-2"
        page.click("#finished button.next")
        page.wait_for_selector("#finished .range:text('101\u2013120 of 120')")
        assert rows.count() == 20 and page.locator("#finished button.next").is_disabled()
        assert rows.last.locator("a").first.inner_text() == "r10-11"


def test_the_live_view_numbers_every_event_in_full(demo: Site, browser: Any) -> None:
    # a match to the target: several deals of some 45 public events each (its actions, its tricks, its
    # start and end), over 100 in all
    _, listed = get(demo, "/api/v1/tournaments/classic-round-robin/matches?limit=12")
    for m in listed["items"]:
        _, match = get(demo, f"/api/v1/matches/{m['match_id']}")
        deals = match["record"]["deals"]
        if sum(len(d["bids"]) + len(d["plays"]) * 5 // 4 + 2 for d in deals) > 100:
            match_id = m["match_id"]
            break
    else:
        pytest.fail("none of the demo's first 12 classic matches has over 100 public events")
    with visit(browser, demo, f"/matches/{match_id}", PHONE, "#status[data-over=true]") as page:
        items = page.locator("#events li")
        n = items.count()
        assert n > 100, "a demo match to the target has three-digit event numbers"
        assert page.locator("#events li .n").all_inner_texts() == [f"{i}." for i in range(1, n + 1)]
        log = page.locator("#events").bounding_box()
        for i in (9, 99, n - 1):  # one-, two- and three-digit numbers, each whole inside the log
            number = items.nth(i).locator(".n")
            number.scroll_into_view_if_needed()
            box = number.bounding_box()
            assert box["x"] >= log["x"] and box["x"] + box["width"] <= log["x"] + log["width"]
            assert number.evaluate("e => e.scrollWidth <= e.clientWidth")
        events = page.locator("#events").inner_text()
        assert not BARE_CARD.search(events), BARE_CARD.search(events)


# ------------------------------------------------------------------ the README's screenshot
ROOT = Path(__file__).resolve().parents[2]
README_IMAGE = ROOT / "docs" / "images" / "leaderboard.png"
#: the PNG text chunk in which the screenshot says what it shows
SHOWS = "belote-arena:shows"
REFRESH = "BELOTE_REFRESH_SCREENSHOT"


def png_text(png: bytes, key: str) -> str | None:
    """The text of the PNG's ``tEXt`` chunk named ``key`` (None if it has none)."""
    at = 8
    while at < len(png):
        (size,), kind = struct.unpack(">I", png[at:at + 4]), png[at + 4:at + 8]
        data = png[at + 8:at + 8 + size]
        if kind == b"tEXt" and data.split(b"\0", 1)[0] == key.encode():
            return data.split(b"\0", 1)[1].decode("latin-1")
        at += 12 + size
    return None


def with_text(png: bytes, key: str, text: str) -> bytes:
    """The PNG with a ``tEXt`` chunk ``key`` holding ``text``, right after its header chunk."""
    data = key.encode() + b"\0" + text.encode("latin-1")
    chunk = struct.pack(">I", len(data)) + b"tEXt" + data + struct.pack(">I", zlib.crc32(b"tEXt" + data))
    end_of_header = 8 + 12 + struct.unpack(">I", png[8:12])[0]
    return png[:end_of_header] + chunk + png[end_of_header:]


def look() -> str:
    """A digest of what draws the leaderboard: the style sheet, the page's shell and the leaderboard's
    script. A change to any of them changes the picture, so the picture must be taken again."""
    static = ROOT / "arena" / "web" / "static"
    parts = [(static / "style.css").read_bytes(), (static / "page.html").read_bytes(),
             (static / "leaderboard.js").read_bytes()]
    return hashlib.sha256(b"\0".join(parts)).hexdigest()[:16]


def test_the_readme_screenshot_shows_the_demo_s_leaderboard_as_it_is_drawn_now(
        demo: Site, browser: Any) -> None:
    """``docs/images/leaderboard.png`` is this test's screenshot of the demo's coinche leaderboard.

    Pixels differ from one run to the next (the bots' play, so the ratings, and the fonts of the
    machine), so they are not compared. The picture says in a PNG text chunk what it shows: the page,
    its width, its header, title, menus, columns, bots and their games, and a digest of the code and
    style that draw it; the test takes the screenshot again and fails when what it shows differs from
    what the committed one shows. ``BELOTE_REFRESH_SCREENSHOT=1`` writes the new one in its place.
    The README's words about it (its games) are checked against the page too.
    """
    path = "/?pool=tournament:coinche-round-robin&method=bt"
    watched = Watched(browser, 1100, 520)
    try:
        page = watched.page
        page.goto(demo.url + path)
        page.wait_for_selector("#leaderboard tbody tr")
        rows = page.locator("#leaderboard tbody tr").all()
        shows = {
            "page": path, "width": 1100, "header": page.locator("header").inner_text().split(),
            "title": page.locator("h1").inner_text(),
            "menus": [page.locator(f"{s} option:checked").inner_text() for s in ("#pool", "#method")],
            "columns": page.locator("#leaderboard thead th").all_inner_texts(),
            "bots": sorted([r.get_attribute("data-bot"), r.locator("td.games").inner_text()] for r in rows),
            "pager": page.locator(".pager .range").inner_text(), "look": look(),
        }
        png = with_text(page.screenshot(full_page=True), SHOWS, json.dumps(shows, sort_keys=True))
        assert watched.problems == []
    finally:
        watched.close()
    SHOTS.mkdir(parents=True, exist_ok=True)
    (SHOTS / "readme-leaderboard.png").write_bytes(png)
    if os.environ.get(REFRESH):
        README_IMAGE.write_bytes(png)
    committed = png_text(README_IMAGE.read_bytes(), SHOWS)
    assert committed is not None and json.loads(committed) == shows, (
        f"{README_IMAGE.relative_to(ROOT)} no longer shows what the page does: it shows\n{committed}\n"
        f"and the page\n{json.dumps(shows, sort_keys=True)}\n(the new screenshot: "
        f"test-output/web/readme-leaderboard.png; {REFRESH}=1 writes it in place, then check the README's "
        "words about it)")
    assert "(docs/images/leaderboard.png)" in (ROOT / "README.md").read_text()
    rankings = (ROOT / "docs" / "explanation" / "rankings.md").read_text()  # the site's words about it
    assert "(../images/leaderboard.png)" in rankings
    said = re.search(r"(\d+) games put one of each\s+pair ahead", rankings)
    assert said is not None and {games for _, games in shows["bots"]} == {said.group(1)}, (
        f"docs/explanation/rankings.md says {said and said.group(0)!r} of the screenshot")
