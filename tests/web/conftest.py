"""The site the web tests share: a real node with its pages, bots and a finished round-robin."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.web.browser import close_reused
from tests.web.site import Site


@pytest.fixture(scope="module")
def site() -> Iterator[Site]:
    """One site per test module (a module that needs another defines its own ``site``). It analyses no
    match: a replay page asks for its match's analysis, 10 to 20 s of a core each, and the modules
    that read a real one make a site of their own that does (test_analysis, test_bot_history_analysis,
    test_replay_page's young node)."""
    with tempfile.TemporaryDirectory() as tmp:
        s = Site(Path(tmp), analyses=False)
        try:
            yield s
        finally:
            s.close()


@pytest.fixture(autouse=True)
def _reused_pages_closed() -> Iterator[None]:
    """The pages a test reused (:func:`tests.web.browser.reused`) are closed when it ends, before
    its module's browser is."""
    yield
    close_reused()
