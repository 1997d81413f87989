"""The pending requests' time limits share one timer (:class:`arena.referee.sessions.Deadlines`) and
each still expires at its own time: not before, not much after, answered ones never."""

from __future__ import annotations

import asyncio
import time

import pytest

from arena.referee.sessions import BotTimeout, Deadlines, Hub


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
    order = sorted(range(len(timeouts)), key=timeouts.__getitem__)
    assert sorted(range(len(got)), key=got.__getitem__) == order


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
