"""A tournament's page in a real browser: the links to its files, and how a duplicate game is scored.

A Swiss of four bots in field duplicate: its page says how a game is scored (a side compared with the
side that held the same cards, so a side may lose both its matches and win its game), and links its
standings (CSV) and records (JSON Lines, zip), which download as the API serves them. At a laptop's
width and a phone's, with no console error (:func:`tests.web.test_page_states.visit`).
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arena.engine import Ruleset
from arena.tournament import TournamentSpec
from tests.web.browser import PHONE, WIDE, browser, needs_chromium
from tests.web.site import TOURNAMENT, Site, get
from tests.web.test_page_states import visit

pytestmark = [pytest.mark.slow, needs_chromium]
__all__ = ["browser"]  # the fixture

WIDTHS = pytest.mark.parametrize("width", [WIDE, PHONE], ids=["laptop", "phone"])
SWISS = "web-swiss"


@pytest.fixture(scope="module")
def swiss() -> Iterator[Site]:
    """A node once a Swiss of four bots in field duplicate, and a plain round-robin, are over."""
    spec = TournamentSpec(tournament_id=SWISS, format="swiss", bots=("alpha", "beta", "gamma", "xss"),
                          ruleset=Ruleset.from_spec("coinche"), deals=2, rounds=2, duplicate="field",
                          seed="web/swiss", unrated_reason="a test's seed")
    plain = TournamentSpec(tournament_id=TOURNAMENT, format="round-robin", bots=("alpha", "beta"),
                           ruleset=Ruleset.from_spec("classic"), deals=1, rounds=1, seed="web/1",
                           unrated_reason="a test's seed")
    with tempfile.TemporaryDirectory() as tmp:
        site = Site(Path(tmp), tournaments=[spec, plain])
        try:
            yield site
        finally:
            site.close()


@WIDTHS
def test_a_field_duplicate_page_says_how_a_game_is_scored(swiss: Site, browser: Any, width: int) -> None:
    with visit(browser, swiss, f"/tournaments/{SWISS}", width, "#standings") as page:
        text = page.locator("#duplicate-scoring").inner_text()
        assert "compared with the side that held the same cards" in text
        assert "can lose both its matches and still win its game" in text
        assert "510-720 and 430-700" in text and "a win by 2960" in text
    with visit(browser, swiss, f"/tournaments/{TOURNAMENT}", width, "#standings") as page:
        assert page.locator("#duplicate-scoring").count() == 0  # no duplicate: nothing to explain


@WIDTHS
def test_a_tournament_s_files_download_from_its_page(swiss: Site, browser: Any, width: int) -> None:
    with visit(browser, swiss, f"/tournaments/{SWISS}", width, "#exports") as page:
        files = {}
        for link in ("export-standings", "export-jsonl", "export-zip"):
            with page.expect_download() as started:
                page.click(f"#{link}")
            got = started.value
            files[got.suggested_filename] = Path(got.path()).read_bytes()
    assert sorted(files) == [f"{SWISS}-records.jsonl", f"{SWISS}-records.zip", f"{SWISS}-standings.csv"]
    _, t = get(swiss, f"/api/v1/tournaments/{SWISS}")
    lines = files[f"{SWISS}-standings.csv"].decode().splitlines()
    assert len(lines) == 1 + len(t["standings"]) and lines[0].startswith("rank,bot,played")
    assert len(files[f"{SWISS}-records.jsonl"].splitlines()) == t["matches_done"] == 8
    assert files[f"{SWISS}-records.zip"].startswith(b"PK")
