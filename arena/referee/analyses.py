"""Finished matches analysed (:mod:`arena.analysis.decisions`) off the event loop, one at a time, kept.

An analysis solves hundreds of deals' positions double-dummy: seconds to minutes of CPU a match.
So, as a finished match's views are (:mod:`arena.referee.replays`):

* **In the build process, at the lowest priority.** :class:`Analyses` has a
  :class:`~arena.referee.builds.Builder` of its own (one process, ``SCHED_IDLE``): the node's
  matches, its event loop and its replays' builds take the CPU first, and one analysis runs at a
  time.
* **Queued.** A match is analysed when someone asks for it (:meth:`Analyses.ask`: the API's first
  read answers 202 with its place in the queue) or, with a CPU budget (``serve
  --analysis-budget``), each match that ends on this node, after the ones asked for. The queue
  holds at most ``max_queued`` matches; one more is refused (:class:`QueueFull`).
* **Within a budget.** With a budget ``b`` (a share of one core), after an analysis that took ``t``
  seconds the next automatic one waits ``t * (1 / b - 1)``: the node spends at most that share of
  a core on analyses nobody asked for. Asked-for ones do not wait.
* **Kept, bounded.** Analyses are kept in memory up to ``max_bytes`` (the least recently read
  dropped first) and, with a folder, on disk as one JSON file a match, at most ``max_files`` (the
  oldest dropped). An analysis is a function of the record and of this code
  (:data:`~arena.analysis.decisions.FORMAT`, in its file's name).
* **Never before its time.** The caller checks that the match is over and no table dealing its
  cards is still sealed before it asks (the web's 409, as for the record); an automatic one is
  checked again just before it is made (``sealed``), and set aside until another match ends if
  it still is.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import logging
import os
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from arena.analysis.decisions import FORMAT, Settings, analyse, parse_fallbacks
from arena.datadir import private_dir, write_private
from arena.engine import RecordError
from arena.referee.builds import Builder, BuildFailed
from arena.referee.replay_views import Body, RecordSource
from arena.referee.replays import PreparedCache
from arena.referee.store import valid_match_id

__all__ = ["Analyses", "Failed", "Pending", "QueueFull", "analysis_view"]

log = logging.getLogger("arena.referee")

#: analyses kept in memory, in bytes in all
MAX_BYTES = 32 * 1024 * 1024
#: analyses kept on disk, in files
MAX_FILES = 2000
#: matches waiting for their analysis, at most
MAX_QUEUED = 200
#: automatic analyses set aside while their table is sealed, at most
MAX_SET_ASIDE = 1000


def analysis_view(source: RecordSource, settings: Settings) -> tuple[Body, str]:
    """The analysis of a finished match, as JSON bytes (run in the build process)."""
    record = source.record()
    engine = record.engine_record()
    fallbacks = parse_fallbacks([s.to_dict() for s in record.strikes])
    data = analyse(engine, fallbacks=fallbacks, settings=settings)
    data = {"match_id": record.match_id, **data}
    return Body(json.dumps(data, separators=(",", ":")).encode()), ""


@dataclass(frozen=True, slots=True)
class Pending:
    """An analysis being made (``position`` 0) or waiting (its place among those waiting, from 1)."""

    position: int


class Failed(Exception):
    """No analysis of this match can be made (no record, a damaged one): why."""


class QueueFull(Exception):
    """Too many matches wait for their analysis already."""


class Analyses:
    """A node's analyses: the queue, the build process, what is kept (see the module docstring)."""

    def __init__(self, find: Callable[[str], Awaitable[RecordSource | None]], *, folder: Path | None = None,
                 budget: float | None = None, settings: Settings | None = None, max_bytes: int = MAX_BYTES,
                 max_files: int = MAX_FILES, max_queued: int = MAX_QUEUED) -> None:
        if budget is not None and not 0 < budget <= 1:
            raise ValueError(f"an analysis budget is a share of one core, above 0 and at most 1: {budget}")
        self.find = find
        self.folder = folder
        self.budget = budget
        self.settings = settings or Settings()
        self.max_files = max_files
        self.max_queued = max_queued
        self.cache = PreparedCache(max_bytes)
        self.builder = Builder(1, warm=("arena.referee.analyses",))
        #: an automatic analysis's seal check (the node of a queue sets it): True while sealed
        self.sealed: Callable[[str], Awaitable[bool]] | None = None
        self._asked: collections.OrderedDict[str, None] = collections.OrderedDict()
        self._auto: collections.OrderedDict[str, None] = collections.OrderedDict()
        self._aside: collections.OrderedDict[str, None] = collections.OrderedDict()
        self._failed: collections.OrderedDict[str, str] = collections.OrderedDict()
        self._current: str | None = None
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        #: analyses made since the node started, and the seconds they took
        self.made = 0
        self.seconds = 0.0
        if folder is not None:
            private_dir(folder)

    # ------------------------------------------------------------- reads
    def _path(self, match_id: str) -> Path | None:
        if self.folder is None or not valid_match_id(match_id):
            return None
        return self.folder / f"{match_id}.v{FORMAT}.json"

    def _kept(self, match_id: str) -> Body | None:
        found: Body | None = self.cache.get(match_id)
        if found is not None:
            return found
        path = self._path(match_id)
        if path is None:
            return None
        with contextlib.suppress(OSError):
            body = Body(path.read_bytes())
            self.cache.put(match_id, body)
            return body
        return None

    def kept(self, match_id: str) -> bytes | None:
        """A match's analysis as JSON if one is kept (in memory or on disk), else None; never asks for
        one (a reader that shows only what exists: a bot's history and report, arena.node.history).
        It may read a file: call it in a thread."""
        body = self._kept(match_id)
        return None if body is None else bytes(body.data)

    async def ask(self, match_id: str) -> Body | Pending:
        """The analysis of a finished match if it is made, else its place in the queue (asked for
        now if it was not). :class:`Failed` if it cannot be made, :class:`QueueFull` if too many
        wait."""
        kept: Body | None = self.cache.get(match_id)
        if kept is None and self.folder is not None:
            kept = await asyncio.to_thread(self._kept, match_id)
        if kept is not None:
            return kept
        why = self._failed.get(match_id)
        if why is not None:
            raise Failed(why)
        if self._current == match_id:
            return Pending(0)
        if match_id in self._auto:  # asked for now: ahead of the automatic ones
            del self._auto[match_id]
        if match_id not in self._asked:
            if len(self._asked) >= self.max_queued:
                raise QueueFull(f"{self.max_queued} matches wait for their analysis; ask again later")
            self._asked[match_id] = None
            self._start()
        return Pending(1 + list(self._asked).index(match_id))

    def ended(self, match_id: str) -> None:
        """A match ended on this node: with a budget, analyse it when its turn comes; the ones set
        aside while sealed are tried again."""
        if self.budget is None:
            return
        for aside in list(self._aside):
            self._auto[aside] = None
        self._aside.clear()
        if match_id not in self._asked and match_id not in self.cache and len(self._auto) < self.max_queued:
            self._auto[match_id] = None
        self._start()

    # ------------------------------------------------------------- the queue
    def _start(self) -> None:
        self._wake.set()
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._run(), name="analyses")

    def _next(self) -> tuple[str, bool] | None:
        if self._asked:
            return next(iter(self._asked)), True
        if self._auto:
            return next(iter(self._auto)), False
        return None

    async def _run(self) -> None:
        while True:
            found = self._next()
            if found is None:
                self._wake.clear()
                await self._wake.wait()
                continue
            match_id, asked = found
            self._current = match_id
            try:
                if not asked and self.sealed is not None and await self._still_sealed(match_id):
                    self._auto.pop(match_id, None)
                    self._aside[match_id] = None
                    while len(self._aside) > MAX_SET_ASIDE:
                        self._aside.popitem(last=False)
                    continue
                spent = await self._make(match_id)
            finally:
                self._current = None
                self._asked.pop(match_id, None)
                self._auto.pop(match_id, None)
            if self.budget is not None and self._auto and not self._asked:
                with contextlib.suppress(asyncio.TimeoutError):  # an asked-for one comes first
                    self._wake.clear()
                    await asyncio.wait_for(self._wake.wait(), spent * (1 / self.budget - 1))

    async def _still_sealed(self, match_id: str) -> bool:
        """The seal check of an automatic analysis; one that cannot be made (the queue unreadable)
        counts as sealed: it is set aside, and tried again when another match ends."""
        assert self.sealed is not None
        try:
            return await self.sealed(match_id)
        except Exception as e:
            log.warning("the analysis of match %s waits: its seal cannot be read: %s", match_id, e)
            return True

    async def _make(self, match_id: str) -> float:
        started = time.monotonic()
        try:
            source = await self.find(match_id)
            if source is None:
                self._fail(match_id, f"no record of match {match_id} is kept")
                return 0.0
            body, _ = await self.builder.run(analysis_view, source, self.settings)
        except (RecordError, ValueError) as e:
            self._fail(match_id, f"the record of match {match_id} cannot be analysed: {e}")
            return time.monotonic() - started
        except BuildFailed as e:
            log.warning("the analysis of match %s stopped: %s", match_id, e)
            return time.monotonic() - started
        except Exception as e:  # a source that cannot be read now (the queue): asked again later
            log.warning("the analysis of match %s failed: %s: %s", match_id, type(e).__name__, e)
            return time.monotonic() - started
        spent = time.monotonic() - started
        self.made += 1
        self.seconds += spent
        # kept on disk first, then answered: once a reader has it, a node started again has it too
        path = self._path(match_id)
        if path is not None:
            await asyncio.to_thread(self._write, path, body.data)
        self.cache.put(match_id, body)
        return spent

    def _fail(self, match_id: str, why: str) -> None:
        self._failed[match_id] = why
        while len(self._failed) > self.max_queued:
            self._failed.popitem(last=False)

    def _write(self, path: Path, data: bytes) -> None:
        assert self.folder is not None
        try:
            write_private(path, data.decode())
            files = sorted(self.folder.glob("*.json"), key=lambda p: p.stat().st_mtime)
            for old in files[:max(0, len(files) - self.max_files)]:
                with contextlib.suppress(OSError):
                    os.unlink(old)
        except OSError as e:
            log.warning("an analysis could not be kept on disk: %s", e)

    def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
        self.builder.close()
