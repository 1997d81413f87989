"""The suite drops one line of grpc's own noise (tests/conftest.py), and only that one.

grpc's aio poller, bound to an event loop an earlier test closed, logs "Event
loop is closed" through asyncio's logger in a later test. A test that counts
what its node logs must not count it; every other line asyncio logs is kept.
"""

from __future__ import annotations

import logging

import pytest

POLLER = "Exception in callback PollerCompletionQueue._handle_events(<_UnixSelectorEventLoop>)()"


def logged(caplog: pytest.LogCaptureFixture, message: str, error: BaseException) -> list[str]:
    caplog.clear()
    with caplog.at_level(logging.DEBUG):
        try:
            raise error
        except BaseException:
            logging.getLogger("asyncio").exception(message)
    return [r.getMessage() for r in caplog.records]


def test_the_poller_of_a_closed_loop_is_dropped(caplog: pytest.LogCaptureFixture) -> None:
    assert logged(caplog, POLLER, RuntimeError("Event loop is closed")) == []


def test_every_other_line_of_asyncio_is_kept(caplog: pytest.LogCaptureFixture) -> None:
    assert logged(caplog, POLLER, RuntimeError("something else")) == [POLLER]
    assert logged(caplog, POLLER, ValueError("Event loop is closed")) == [POLLER]
    other = "Exception in callback Node._tick()"
    assert logged(caplog, other, RuntimeError("Event loop is closed")) == [other]
