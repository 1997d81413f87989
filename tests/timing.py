"""A timing test's bound, and the one retry it gets.

A test marked ``timing`` compares a pace or a latency measured in one run with another measured in
the same run (quiet, then under attack), never with a figure written in the test. On a shared
machine (a laptop compiling beside the suite, two CPU-bound processes, CI's neighbours) one
scheduler hiccup can still put one measure past its bound: a 1 ms p99 moves by the 4-10 ms time
slice of another process whatever the node does. So a broken bound raises :class:`TooSlow`, and a
test marked ``timing`` that failed only on a :class:`TooSlow` runs once more, under the same load
(``conftest.py`` marks them ``flaky(reruns=1)`` for that exception alone, with pytest-rerunfailures).
A stall of the node's own shows in both runs and fails; a wrong answer (a strike, a lost match, a
traceback) is a plain ``AssertionError`` and is never run again.
"""

from __future__ import annotations

import pytest

__all__ = ["RETRY", "TooSlow", "pytest_collection_modifyitems", "within"]


class TooSlow(AssertionError):
    """A timing bound broken: what was measured, against what it was compared."""


#: what conftest.py adds to every test marked ``timing``: one more run, for a broken bound alone
RETRY = pytest.mark.flaky(reruns=1, only_rerun=[r"^TooSlow: "])


def within(ok: bool, message: str) -> None:
    """Raise :class:`TooSlow` with ``message`` unless ``ok``."""
    if not ok:
        raise TooSlow(message)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Each test marked ``timing`` gets its one retry (:data:`RETRY`)."""
    for item in items:
        if item.get_closest_marker("timing") is not None:
            item.add_marker(RETRY)
