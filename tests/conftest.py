"""What holds for the whole test run.

Bytecode: some machines (this project's CI among them) set ``PYTHONDONTWRITEBYTECODE``. Then
every Python the tests start (nodes, commands as a user types them, build processes, benches:
hundreds of them) compiled the project's sources again, and pytest rewrote every test module's
asserts again in each worker: more than a minute of CPU in a run on two cores. The tests write
bytecode (``__pycache__``, which git ignores) whatever the environment says; the processes they
start inherit that.

The referee's quiet log (:data:`arena.edge.quietlog.quiet`) is one per process: each test starts
with it forgotten, so that a line another test of the same xdist worker logged a moment before
(a strike of a bot of the same name) does not hold back the line this test reads.

No process a test starts outlives it (:mod:`tests.processes`): one that does is ended and fails
the test.

A test marked ``timing`` whose bound a loaded machine broke (:class:`tests.timing.TooSlow`) runs
once more under the same load; any other failure of it stands.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Generator, Iterator

import pytest

from arena.edge.quietlog import RateLimit, quiet
from arena.referee.builds import PRIORITY_ENV
from tests import processes
from tests.processes import (
    pytest_configure,
    pytest_runtest_call,
    pytest_runtest_teardown,
    pytest_sessionfinish,
)
from tests.timing import pytest_collection_modifyitems

__all__ = ["pytest_collection_modifyitems", "pytest_configure", "pytest_runtest_call", "pytest_runtest_setup",
           "pytest_runtest_teardown", "pytest_sessionfinish"]

sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)


class _PollerOfAClosedLoop(logging.Filter):
    """Drops one line of grpc's own: its aio poller of completions, still bound to an event loop an
    earlier test of the worker closed, logs "Exception in callback PollerCompletionQueue._handle_events
    ... RuntimeError: Event loop is closed" through asyncio's logger during a later test (the
    multi-loop noise of grpc/grpc#25364). It says nothing of the code under test, and a test counting
    the warnings its node logs once failed on it in a loaded run; every other line is kept."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        poller = record.getMessage().startswith("Exception in callback PollerCompletionQueue._handle_events")
        return not (poller and isinstance(exc, RuntimeError) and str(exc) == "Event loop is closed")


logging.getLogger("asyncio").addFilter(_PollerOfAClosedLoop())


@pytest.fixture(autouse=True)
def _quiet_log_forgotten() -> Iterator[None]:
    before = quiet.limit
    quiet.limit = RateLimit(before.every, max_keys=before.max_keys, clock=before.clock)
    yield




def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: twice the cores, at most four more than them. The tests spend more than half their
    time waiting (timers, a node's deadline, a refusal held a second, a child process starting): on
    two cores the fast ones took 5.2 minutes of CPU in 5.8 of wall time with two workers, and 3.5
    minutes of wall time with four."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return min(2 * cores, cores + 4)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, None, None]:
    """Before any fixture of the test starts a node: the nodes' build processes (a finished match's
    views, analyses) run at the node's own priority in the tests, not at SCHED_IDLE
    (:data:`arena.referee.builds.PRIORITIES`): beside two CPU-bound processes at normal priority the
    idle ones got nothing, and a run waited minutes for its analyses and replays (the timing tests'
    replay readers too: their view, built once before the honest match they measure, was not built
    in a minute). No test measures a pace while a build runs; ``tests/referee/test_replays.py``
    checks that the default is SCHED_IDLE. Then the owner of the processes the test starts
    (:mod:`tests.processes`)."""
    os.environ[PRIORITY_ENV] = "normal"
    return (yield from processes.pytest_runtest_setup(item))
