"""What the browser tests of the pages share: Debian's headless chromium driven by playwright, a page
that records every console error, page error and dialog, and screenshots.

Screenshots go to ``test-output/web/`` (ignored by git). The tests are skipped, with the reason,
only when no chromium is installed (``.ci/run`` installs it as root).
"""

from __future__ import annotations

import contextlib
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
SHOTS = Path(__file__).resolve().parents[2] / "test-output" / "web"
#: the widths every page is tested at: a laptop's, and a phone's (an iPhone 12 to 15, CSS pixels)
WIDE, PHONE = 1280, 390

needs_chromium = pytest.mark.skipif(
    CHROMIUM is None,
    reason="no chromium installed (apt-get install chromium): the browser tests of the pages are skipped")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        try:
            yield b
        finally:
            b.close()


class Watched:
    """A page of a fresh browser context ``width`` pixels wide, and what went wrong on it: every
    console error (a failed request among them: a 404 is one), page error and dialog (an alert)."""

    def __init__(self, browser: Any, width: int = WIDE, height: int = 900) -> None:
        self.width = width
        self.context = browser.new_context(viewport={"width": width, "height": height})
        self.page = self.context.new_page()
        self.problems: list[str] = []
        self.page.on("console", lambda m: self.problems.append(f"console {m.type}: {m.text}")
                     if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.problems.append(f"page error: {e}"))
        self.page.on("dialog", self._dialog)

    def _dialog(self, d: Any) -> None:
        self.problems.append(f"dialog: {d.message}")
        d.dismiss()

    def sideways(self) -> int:
        """How far the page scrolls sideways, in CSS pixels (0: it fits its width)."""
        return int(self.page.evaluate("document.scrollingElement.scrollWidth")) - self.width

    def close(self) -> None:
        self.context.close()


#: the pages :func:`reused` keeps, by (browser, width): closed after each test (tests/web/conftest.py)
_REUSED: dict[tuple[int, int], Watched] = {}


def reused(browser: Any, width: int) -> Watched:
    """This test's page ``width`` pixels wide, its problems cleared: one page a test and width goes
    from path to path, as a reader's does, instead of a fresh browser context a path (a context
    takes 0.3 s to make, and 1 to 2.5 s on a loaded machine)."""
    key = (id(browser), width)
    watched = _REUSED.get(key)
    if watched is None:
        watched = _REUSED[key] = Watched(browser, width)
    watched.problems.clear()
    return watched


def close_reused() -> None:
    """Close the pages :func:`reused` made (at the end of each test)."""
    while _REUSED:
        _REUSED.popitem()[1].close()


def shot(page: Any, name: str) -> None:
    path = SHOTS / f"{name}.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(path), full_page=True)


@contextlib.contextmanager
def visit(browser: Any, url: str, path: str, width: int, ready: str, shots: str) -> Iterator[Any]:
    """The page at ``url + path`` (this test's page of ``width``, :func:`reused`), once ``ready`` is
    on it; then, whatever the test saw, it has no console error, no page error, no "undefined" nor
    "NaN", and does not scroll sideways; its screenshot is ``shots-WIDTH-PATH``."""
    watched = reused(browser, width)
    page = watched.page
    page.goto(url + path)
    page.wait_for_selector(ready)
    yield page
    text = page.locator("main").inner_text()
    assert "undefined" not in text and "NaN" not in text, f"{path}: {text}"
    assert watched.sideways() <= 0, f"{path} at {width} px scrolls {watched.sideways()} px sideways"
    assert watched.problems == [], f"{path}: {watched.problems}"
    name = re.sub(r"[^\w.-]+", "_", path.strip("/")) or "index"
    shot(page, f"{shots}-{width}-{name}")
