"""The pending requests' time limits share one timer (:class:`arena.referee.deadlines.Deadlines`) and
each still expires at its own time: not before, not much after, answered ones never; the node's own
stalls in a limit's window are added to it, and nothing else."""

from __future__ import annotations

import asyncio
import itertools
import time

import pytest

from arena.referee.deadlines import BEAT, SLACK, BotTimeout, Deadlines
from arena.referee.sessions import Hub
from tests.referee.arena_helpers import LOOPS, run_on


async def expiry(deadlines: Deadlines, timeouts: list[float]) -> list[float]:
    """Seconds after the start when each of ``timeouts`` failed its future."""
    loop = asyncio.get_running_loop()
    start = time.perf_counter()
    futs = [loop.create_future() for _ in timeouts]
    at = [0.0] * len(futs)
    for i, (fut, timeout) in enumerate(zip(futs, timeouts, strict=True)):
        deadlines.add(fut, timeout)
        fut.add_done_callback(lambda _, i=i: at.__setitem__(i, time.perf_counter() - start))  # type: ignore[misc]
    for fut in futs:
        with pytest.raises(BotTimeout):
            await fut
    return at


@pytest.mark.parametrize("timeouts", [[0.05, 0.1, 0.15], [0.15, 0.05, 0.1], [0.1, 0.1, 0.02, 0.12]])
def test_each_limit_expires_at_its_own_time_in_order_or_not(timeouts: list[float]) -> None:
    """In order they share the timer; one that ends before a limit already kept gets its own."""
    got = asyncio.run(expiry(Deadlines(), timeouts))
    for timeout, at in zip(timeouts, got, strict=True):
        # the loop's timers round to a millisecond; the slack after is a busy machine's (what matters
        # here: none expires before its time, each in its own order)
        assert timeout - 0.002 <= at < timeout + 0.5, (timeouts, got)
    # a shorter limit expires first (two equal ones may come in either order: the node's stalls on a
    # loaded machine extend both, each by the stall it saw)
    for i, j in itertools.permutations(range(len(timeouts)), 2):
        if timeouts[i] < timeouts[j]:
            assert got[i] < got[j], (timeouts, got)


def test_answered_requests_leave_nothing_and_the_timer_moves_on_to_the_next_limit() -> None:
    async def main() -> tuple[int, float]:
        loop = asyncio.get_running_loop()
        deadlines = Deadlines()
        answered = [loop.create_future() for _ in range(1000)]
        for fut in answered:
            deadlines.remove(deadlines.add(fut, 0.03))
        assert deadlines.pending == 0
        late = loop.create_future()
        deadlines.add(late, 0.08)  # after the timer armed for the first answered one
        start = time.perf_counter()
        with pytest.raises(BotTimeout):
            await late
        return deadlines.pending, time.perf_counter() - start

    pending, waited = asyncio.run(main())
    assert pending == 0
    assert 0.078 <= waited < 0.6


def test_a_request_answered_in_time_is_not_failed_by_the_sweep_of_an_earlier_limit() -> None:
    """Hub.ask_encoded: the first request times out, the second (asked at once, a longer limit) is
    answered after the first's limit and gets its answer."""
    from arena.referee.sessions import BotLink

    async def main() -> tuple[str, int]:
        hub = Hub()
        link: BotLink = hub.link("b", "b")
        written: list[bytes] = []

        async def write(data: bytes) -> None:
            written.append(data)

        link.attach(write, name="b", version="", concurrency=4)
        first = asyncio.ensure_future(hub.ask_encoded(link, 1, b"", 0.03))
        second = asyncio.ensure_future(hub.ask_encoded(link, 2, b"", 5.0))
        await asyncio.sleep(0.08)
        link.resolve(2, 7)
        outcome = "answered"
        try:
            await first
        except BotTimeout:
            outcome = "timeout"
        return outcome, await second

    assert asyncio.run(main()) == ("timeout", 7)


def test_a_hub_used_again_in_another_event_loop_still_times_its_requests_out() -> None:
    """The first loop ends with a timer armed that never fired: the second gets a timer of its own."""
    deadlines = Deadlines()

    async def ask(timeout: float) -> str:
        fut = asyncio.get_running_loop().create_future()
        deadlines.add(fut, timeout)
        try:
            return str(await asyncio.wait_for(fut, 2.0))
        except BotTimeout:
            return "timeout"

    async def abandoned() -> None:
        deadlines.add(asyncio.get_running_loop().create_future(), 0.01)  # the loop ends before it

    asyncio.run(abandoned())
    assert asyncio.run(ask(0.05)) == "timeout"


# ----------------------------------------------------------------- the node's own stalls
def hold(seconds: float) -> None:
    """The loop held up: a burst of work on its thread."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


@pytest.mark.parametrize("loop", LOOPS)
def test_a_stall_of_the_loop_in_a_limits_window_is_added_to_it_and_no_more(loop: str) -> None:
    async def main() -> tuple[float, float]:
        deadlines = Deadlines()
        fut = asyncio.get_running_loop().create_future()
        start = time.perf_counter()
        deadlines.add(fut, 0.1)
        await asyncio.sleep(0.02)
        hold(0.2)  # the limit's time passes while the loop cannot run
        with pytest.raises(BotTimeout):
            await fut
        return time.perf_counter() - start, deadlines.stalls.total

    at, stalled = run_on(loop, main())
    # the hold, less the first BEAT + SLACK of it (more, on a loaded machine), was a stall
    assert stalled >= 0.2 - BEAT - SLACK - 0.002
    # the limit ended once 0.1 s of the node's running time had passed: never before
    assert at >= 0.1 + stalled - 0.002
    assert at - stalled < 0.1 + 0.3, (at, stalled)  # and not much after (a loaded machine's slack)


@pytest.mark.parametrize("loop", LOOPS)
def test_a_stall_before_a_request_is_asked_is_not_given_to_it(loop: str) -> None:
    async def main() -> tuple[float, float]:
        deadlines = Deadlines()
        loop = asyncio.get_running_loop()
        deadlines.add(loop.create_future(), 5.0)  # the loop is watched
        await asyncio.sleep(0.02)
        hold(0.2)
        fut = loop.create_future()
        start = time.perf_counter()
        deadlines.add(fut, 0.1)  # asked as the loop runs again: the stall is behind it
        with pytest.raises(BotTimeout):
            await fut
        return time.perf_counter() - start, deadlines.stalls.total

    at, stalled = run_on(loop, main())
    assert stalled >= 0.2 - BEAT - SLACK - 0.002
    assert 0.1 - 0.002 <= at < 0.1 + 0.15, at


@pytest.mark.parametrize("loop", LOOPS)
def test_the_time_counted_against_a_bot_leaves_the_stalls_out(loop: str) -> None:
    async def main() -> tuple[float, float, float, float]:
        deadlines = Deadlines()
        deadlines.add(asyncio.get_running_loop().create_future(), 5.0)  # the loop is watched
        stalls = deadlines.stalls
        mark = stalls.mark()
        await asyncio.sleep(0.03)
        plain = stalls.since(mark)[1]
        wall = time.perf_counter() - mark[0]
        seen = stalls.total - mark[1]  # none, unless the machine is loaded
        mark = stalls.mark()
        hold(0.2)
        return plain, wall, seen, stalls.since(mark)[1]

    plain, wall, seen, held = run_on(loop, main())
    assert plain == pytest.approx(wall - seen, abs=0.001)  # all of it but the stalls seen
    assert held <= BEAT + SLACK + 0.002  # a stall: its first BEAT + SLACK at most
