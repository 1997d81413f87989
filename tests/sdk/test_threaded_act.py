"""A plain ``act`` that blocks for half a second on one seat does not hold up the bot's other seats.

One bot object plays every seat of several matches at once over one real
gRPC stream to an in-process referee node. In one match (against "foil"),
its seat 0 sleeps 0.5 s in ``act`` on its first decisions; everywhere else it
answers at once. The other seats must keep being answered while it sleeps:
many of their decisions complete inside each slow decision's window, and the
referee's measure of their round trips stays far below the half second they
would have waited if ``act`` ran on the event loop. No fixed sleeps: the fast
matches run until the slow decisions are done.
"""

from __future__ import annotations

import asyncio
import random
import threading
import time

import pytest
from belote_bot import Action, Bot, HeuristicBot, MatchInfo, Observation
from belote_bot.client import Client

from arena.engine import Match, Ruleset
from arena.harness import local_arena
from arena.referee.runner import TimeControl
from tests.timing import within

from .fake_referee import FakeReferee, Stream, request
from .records import fetch_records, latencies_us
from .test_client import arun, bs_match_started, pb_welcome, play_until_finished

SLOW_S = 0.5
SLOW_ACTS = 2
FAST_MATCHES = 3
#: generous: a loaded machine must not turn a slow act into a strike
TIME = TimeControl(deadline=10.0, time_bank=60.0, grace=30.0)


class SleepyBot(Bot):
    """Sleeps in a plain act on seat 0 of the match against "foil", for its first decisions."""

    name = "sleepy"

    def __init__(self) -> None:
        self.slow_matches: set[str] = set()
        self.lock = threading.Lock()
        self.slow_started = 0
        #: (start, end) of each slow act, and when each fast act returned (time.monotonic())
        self.windows: list[tuple[float, float]] = []
        self.fast_returns: list[float] = []
        self.threads: set[str] = set()

    def on_match_start(self, info: MatchInfo) -> None:  # on the loop, before the match's first request
        if "foil" in info.players:
            self.slow_matches.add(info.match_id)

    def act(self, obs: Observation) -> Action:
        with self.lock:
            self.threads.add(threading.current_thread().name)
            slow = obs.match_id in self.slow_matches and obs.seat == 0 and self.slow_started < SLOW_ACTS
            self.slow_started += slow
        if slow:
            start = time.monotonic()
            time.sleep(SLOW_S)
            with self.lock:
                self.windows.append((start, time.monotonic()))
        else:
            with self.lock:
                self.fast_returns.append(time.monotonic())
        return random.Random(obs.request_id).choice(obs.legal_actions)


@pytest.mark.timing
def test_a_seat_that_sleeps_in_act_does_not_hold_up_the_other_seats() -> None:
    bot = SleepyBot()

    async def main() -> tuple[dict[str, list[int]], list[int]]:
        async with local_arena(time=TIME) as arena:
            await arena.connect("sleepy", bot, concurrency=4 * FAST_MATCHES + 2)
            await arena.connect("foil", HeuristicBot(0))
            slow_id = arena.node.start_match("sleepy", "foil", "coinche", seed="slow", deals=1)
            fast_ids: list[str] = []

            async def fast_worker(w: int) -> None:
                k = 0
                while len(bot.windows) < SLOW_ACTS:  # keep the other seats busy until the slow acts are over
                    match_id = arena.node.start_match("sleepy", "sleepy", "coinche", seed=f"{w}/{k}", deals=2)
                    fast_ids.append(match_id)
                    k += 1
                    await asyncio.wait_for(arena.node.wait(match_id), 120)

            await asyncio.wait_for(asyncio.gather(*(fast_worker(w) for w in range(FAST_MATCHES))), 300)
            await asyncio.wait_for(arena.node.wait(slow_id), 120)
            records = await fetch_records(arena.address, [slow_id, *fast_ids])
        for record in records.values():
            assert record["strikes"] == [] and record["result"]["reason"] == "finished"
        return {m: latencies_us(records[m]) for m in fast_ids}, latencies_us(records[slow_id])

    fast, slow = asyncio.run(main())

    # the slow acts ran, in worker threads, and the referee waited the half second for them
    assert len(bot.windows) == SLOW_ACTS
    assert all(t.startswith("belote_bot-act-") for t in bot.threads), bot.threads
    assert sum(x >= SLOW_S * 1e6 for x in slow) == SLOW_ACTS
    # while each slow act slept, the other seats kept acting and being answered
    for start, end in bot.windows:
        inside = sum(start < t < end for t in bot.fast_returns)
        within(inside >= 10, f"only {inside} fast decisions in a {end - start:.2f} s slow act")
    # and the referee measured none of their round trips near the half second the sleeper took: an
    # act on the loop would hold the fast decisions in flight when a slow one began for all of it.
    # (Not "far below": a pause of the whole process, a collection of the long suite's heap or the
    # machine's, held the three in flight 0.27 s once in CI.)
    every = [x for lat in fast.values() for x in lat]
    assert len(every) > 100 and min(every) >= 0  # no fallback
    within(max(every) < SLOW_S * 1e6 * 0.9, f"the longest fast round trips: {sorted(every)[-5:]} us")


# ---------------------------------------------------------------- a stream lost while an act runs
class Blocking(Bot):
    """The first act blocks until released; later ones answer at once. Notes the threads of each call."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.blocked = threading.Event()
        self.first_thread: threading.Thread | None = None
        self.act_threads: list[str] = []
        self.hook_threads: list[str] = []

    def act(self, obs: Observation) -> Action:
        self.act_threads.append(threading.current_thread().name)
        if obs.request_id == 1:
            self.first_thread = threading.current_thread()
            self.blocked.set()
            self.release.wait(30)
        return obs.legal_actions[0]

    def on_match_start(self, info: MatchInfo) -> None:
        self.hook_threads.append(threading.current_thread().name)


def test_the_answer_of_an_act_still_running_when_the_stream_drops_is_dropped() -> None:
    bot = Blocking()

    async def script(referee: FakeReferee, stream: Stream) -> None:
        await stream.send(welcome=pb_welcome())
        deal = Match(Ruleset.from_spec("classic"), seed=4).new_deal()
        if len(referee.streams) == 1:
            await stream.send(match_started=bs_match_started(0, Ruleset.from_spec("classic")))
            await stream.send(action_request=request(deal, 1))
            await asyncio.to_thread(bot.blocked.wait, 30)
            return  # the referee ends the stream while act 1 is still running
        # the new stream is answered although act 1 still holds a thread of the old one
        await stream.send(action_request=request(deal, 2))
        second = await stream.reply()
        bot.release.set()
        assert bot.first_thread is not None
        # the old stream's pool was shut down: its thread ends once act 1's answer is posted
        await asyncio.to_thread(bot.first_thread.join, 30)
        await stream.send(action_request=request(deal, 3))
        third = await stream.reply()  # act 1's answer, had it been kept, would have come first
        referee.replies = [second.request_id, third.request_id]  # type: ignore[attr-defined]
        referee.finished.set()
        await stream.drain()

    referee = FakeReferee(script)
    arun(play_until_finished(referee, Client(bot, token="t", concurrency=1)))
    assert referee.replies == [2, 3]  # type: ignore[attr-defined]
    assert len(referee.streams) == 2
    assert all(name.startswith("belote_bot-act-") for name in bot.act_threads)
    assert bot.hook_threads == [threading.main_thread().name]  # hooks run on the loop
