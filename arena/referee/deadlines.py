"""The time limits of the pending action requests, and the node's own delay, which they do not count.

A request's limit (the deadline and what is left of the seat's time bank) runs from the moment the
runner asks. But a node is sometimes held up: a GC pause, a burst of work on its event loop, a
process stopped or starved of CPU by a loaded machine. Then a reply that reached the node in time
waits unread, or the request itself waits to leave, while the limit runs. So the node measures when
its loop could not run, its *stalls* (:class:`LoopStalls`), and a limit counts only the node's
running time: when it falls due, the stalls measured since the request was asked are added to it,
and it falls due again that much later (and again if the node stalled meanwhile). A reply that
reached the node during a stall is then read before the limit ends, as is the reply to a request
that left late. This is Lichess's lag compensation, with the lag measured by the node itself, never
reported by the bot.

What it gives a bot, and no more (docs/protocol.md#time-strikes-and-fallbacks):

- A stall counts from :data:`BEAT` + :data:`SLACK` after the loop was last seen running to when it
  runs again: the stall itself at most. A bot gains only time during which the node could not read
  it, whatever the bot does; a bot late without a stall is struck exactly when it was before.
- Nothing a bot sends can make the node wait without end: a limit ends after ``deadline + bank`` of
  the node's *running* time, so its wall time is that plus the node's stalls meanwhile (which held
  every match of the node alike). The extension is bounded by the stall measured.
- The first :data:`BEAT` + :data:`SLACK` (12 ms) of a stall are not given back: a bot that answers
  within a few milliseconds keeps nearly all of its limit after any stall.

The time bank sees the same: the runner charges a bot the time from asking to reading its answer
less the stalls in between (:meth:`LoopStalls.since`), so a stall takes nothing from the bank. The
round trip recorded, measured for Prometheus and told to the bot stays the whole of it: it shows
a node that stalls (and an attack that would make it stall).

How a stall is seen: while limits are pending, a beat runs on the loop every :data:`BEAT` seconds
(a timer: about 100 a second, a microsecond or two each); a beat, a request asked or a limit falling
due that comes more than :data:`BEAT` + :data:`SLACK` after the previous beat shows that the loop
was held up. A request asked is itself a beat, so a stall counted after it began after it: the
stall within a request's window is the growth of one running total (no history is kept). The clock
is ``time.perf_counter``, never the loop's own (uvloop's stands still during a long pass of the
loop, so its timers fire early after one: a limit that falls due early is armed again for the rest).
The same holds on asyncio's loop and on uvloop, for a stall of the loop's thread alone (the
transport's threads read on) as for a stopped process.

The limits share one timer: a timer per request (``loop.call_later`` and its cancel) cost about
2 us a decision. The limits come in the order they end, nearly always (each is the deadline and the
seat's time bank from the moment of asking, and a bank only shrinks when a bot is late): those are
kept in that order, in a dict (a request answered is removed in O(1)), and one timer is armed at
the earliest. When it fires, every limit up to the time it was armed for falls due. A limit that
ends before one already kept, or that is extended, gets a timer of its own.
"""

from __future__ import annotations

import asyncio
from time import perf_counter
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from arena.metrics import StallStats

__all__ = ["BEAT", "SLACK", "BotTimeout", "Deadlines", "LoopStalls", "Mark"]

#: seconds between two beats of the loop while limits are pending
BEAT = 0.01
#: how late a beat may come on a loop that runs well (uvloop's timers round to the millisecond,
#: asyncio's wait in select rounds up to it): lateness up to this is no stall
SLACK = 0.002
#: a limit that falls due with less than this left is over (the loops' timers round to a millisecond)
GRAIN = 0.001

#: when a request was asked (perf_counter()) and the node's stalls counted by then (seconds)
Mark = tuple[float, float]


class BotTimeout(Exception):
    """The bot did not answer in time."""


class LoopStalls:
    """When the event loop could not run, as its beats show while limits are pending.

    A beat comes from the loop (:meth:`beat`): evidence that the loop runs then. A gap between two
    beats longer than :data:`BEAT` + :data:`SLACK` ends a stall of the excess. :attr:`total` is the
    stall counted so far; the stall within a window that began with a beat (:meth:`mark`) is its
    growth since.
    """

    __slots__ = ("_last", "running", "stats", "total")

    def __init__(self) -> None:
        #: perf_counter() of the last beat
        self._last = 0.0
        #: seconds of stall counted in all
        self.total = 0.0
        #: the loop is watched (limits are pending): beats count
        self.running = False
        #: where the stalls are counted for Prometheus (the node's), if anywhere
        self.stats: StallStats | None = None

    def start(self) -> None:
        """Watch the loop from now on (the time since the last beat, unwatched, is no stall)."""
        self.running = True
        self._last = perf_counter()

    def beat(self) -> float:
        """The loop runs now: ``perf_counter()``, the stall that a beat this late ends counted."""
        now = perf_counter()
        if self.running:
            late = now - self._last - (BEAT + SLACK)
            if late > 0:
                self.total += late
                if self.stats is not None:
                    self.stats.stall(late)
            self._last = now
        return now

    def mark(self) -> Mark:
        """A beat, and the start of a window: when, and the stalls counted by then."""
        return self.beat(), self.total

    def since(self, mark: Mark) -> tuple[float, float]:
        """The seconds since ``mark``, and those of them that count against a bot: all but the node's
        stalls."""
        wall = self.beat() - mark[0]
        return wall, wall - (self.total - mark[1])


class Deadlines:
    """The time limits of the pending requests, one timer for them all, the node's stalls not
    counted (see the module's docstring)."""

    __slots__ = ("_armed_at", "_beating", "_last", "_loop", "_next_key", "_ordered", "_own", "_timer",
                 "stalls")

    def __init__(self) -> None:
        #: (end, future, mark, timeout) of the limits that end in insertion order, by key
        self._ordered: dict[int, tuple[float, asyncio.Future[int], Mark, float]] = {}
        #: the timers of the limits that have their own (out of order, or extended), by key
        self._own: dict[int, asyncio.TimerHandle] = {}
        self._last = float("-inf")
        self._next_key = 0
        self._timer: asyncio.TimerHandle | None = None
        self._armed_at = 0.0
        #: the beats' timer, while limits are pending
        self._beating: asyncio.TimerHandle | None = None
        #: the event loop of the limits kept (and of the timers)
        self._loop: asyncio.AbstractEventLoop | None = None
        #: the node's stalls, as seen from this loop
        self.stalls = LoopStalls()

    def add(self, fut: asyncio.Future[int], timeout: float) -> int:
        """``fut`` fails with :class:`BotTimeout` once ``timeout`` seconds of the node's running time
        have passed; returns the key :meth:`remove` takes."""
        loop = fut.get_loop()
        if loop is not self._loop:  # another event loop (a node started again): its own limits
            self._start(loop)
        stalls = self.stalls
        if self._beating is None:
            stalls.start()
            self._beating = loop.call_later(BEAT, self._beat, loop)
        mark = stalls.mark()
        end = loop.time() + timeout
        key = self._next_key = self._next_key + 1
        if end < self._last:  # ends before one already kept: its own timer
            self._own[key] = loop.call_at(end, self._due, loop, key, fut, mark, timeout)
            return key
        self._last = end
        self._ordered[key] = (end, fut, mark, timeout)
        if self._timer is None:
            self._arm(loop, end)
        return key

    def remove(self, key: int) -> None:
        """The request was answered (or given up): its limit no longer counts."""
        if self._ordered.pop(key, None) is None and self._own:
            timer = self._own.pop(key, None)
            if timer is not None:
                timer.cancel()

    def _start(self, loop: asyncio.AbstractEventLoop) -> None:
        """Keep the limits of ``loop`` from now on: those of an earlier loop have no one left to
        wake (its futures are its own), and its timers no longer fire."""
        for timer in (self._timer, self._beating, *self._own.values()):
            if timer is not None:
                timer.cancel()
        self._loop, self._timer, self._beating = loop, None, None
        self._ordered, self._own = {}, {}
        self._last = float("-inf")
        self.stalls.running = False

    def _beat(self, loop: asyncio.AbstractEventLoop) -> None:
        """Every BEAT seconds while limits are pending: the loop runs."""
        if not self._ordered and not self._own:
            self._beating = None
            self.stalls.running = False
            return
        self.stalls.beat()
        self._beating = loop.call_later(BEAT, self._beat, loop)

    def _arm(self, loop: asyncio.AbstractEventLoop, end: float) -> None:
        self._armed_at = end
        self._timer = loop.call_at(end, self._fire, loop)

    def _fire(self, loop: asyncio.AbstractEventLoop) -> None:
        self._timer = None
        due = self._armed_at
        ordered = self._ordered
        now = self.stalls.beat()
        while ordered:
            key = next(iter(ordered))
            end, fut, mark, timeout = ordered[key]
            if end > due:
                self._arm(loop, end)
                return
            del ordered[key]
            self._settle(loop, now, key, fut, mark, timeout)

    def _due(self, loop: asyncio.AbstractEventLoop, key: int, fut: asyncio.Future[int], mark: Mark,
             timeout: float) -> None:
        """A limit with a timer of its own falls due."""
        del self._own[key]
        self._settle(loop, self.stalls.beat(), key, fut, mark, timeout)

    def _settle(self, loop: asyncio.AbstractEventLoop, now: float, key: int, fut: asyncio.Future[int],
                mark: Mark, timeout: float) -> None:
        """A limit falls due at ``now``: it expires, unless the node stalled since it was asked (or
        the loop's timer came early): then it falls due again when the rest of it has run."""
        if fut.done():
            return
        stalled = self.stalls.total - mark[1]
        left = mark[0] + timeout + stalled - now
        if left <= GRAIN:
            _expire(fut)
            return
        self._own[key] = loop.call_later(left, self._due, loop, key, fut, mark, timeout)
        stats = self.stalls.stats
        if stalled > 0 and stats is not None:
            stats.extended += 1

    @property
    def pending(self) -> int:
        """The limits kept in order (not those with a timer of their own)."""
        return len(self._ordered)


def _expire(fut: asyncio.Future[int]) -> None:
    if not fut.done():
        fut.set_exception(BotTimeout())
