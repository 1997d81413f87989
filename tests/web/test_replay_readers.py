"""Replays of a finished match never stall the node: an honest match keeps its pace while anonymous
readers loop on the largest finished match there is.

A real node of an embedded queue (``running_node``, its web server) holds two
finished matches of :data:`arena.records.MAX_DEALS` deals: one played on
another node (in the queue's results only), one played here (in the node's
store). Two honest SDK bots, heuristic against random, play over gRPC. In a
child process, one anonymous address keeps several reads of a finished match
going at once, each asking again as soon as it has read its whole answer
(:mod:`.replay_readers`): server-sent events, ``GET /api/v1/matches/ID``, its
record's download (``/record``), or gRPC ``WatchMatch``. Before the fix each such
read rebuilt the whole match from its record (on the event loop for the events;
in a thread, which holds the GIL, for the record): the honest match went from
under a second to minutes, and its bots forfeited on strikes.

The honest p99 is the referee's own measure of the decisions' round trips
(the records' ``latencies_us``), quiet (the readers' process started, idle) and
while the readers loop, in the same test.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from belote_bot import HeuristicBot, RandomBot, run_async

from arena.node.run import NodeSettings, RunningNode, running_node
from arena.queue import EmbeddedBroker
from arena.records import MAX_DEALS, MatchRecord
from arena.referee.store import MatchStore
from arena.tournament import MatchJob, MatchResult
from arena.web import web_for
from tests.factories import played_record
from tests.referee.arena_helpers import arun
from tests.referee.test_hostile import p99
from tests.timing import within

from .replay_readers import Readers, Reading

pytestmark = [pytest.mark.reliability, pytest.mark.slow, pytest.mark.timing]

#: the honest match's deals (the issue's figure: 0.64 s quiet)
HONEST_DEALS = 20
#: the finished matches' ids: played on another node (the queue's), and here (the node's store)
ELSEWHERE = "big-elsewhere"
HERE = "big-here"
#: the reads each reader keeps going at once: more for WatchMatch, whose rebuild took the loop in
#: slices (the others' stalled it whole)
LOOPS = {"sse": 4, "get": 4, "record": 4, "watch": 8}
#: what a loaded two-core machine adds to a match's time by itself (a quiet one: 0.6-1 s here)
SLACK_S = 0.5
#: the absolute slack on the honest p99. Serving a view of a 1,000-deal match (1.5 MB, sent a chunk at
#: a time within the replays' byte budget) keeps the node's process busier than a quiet run; beside
#: two CPU-bound processes at normal priority the scheduler then no longer wakes it first, and each
#: decision may wait for a neighbour's time slice: 7.1 and 7.4 ms p99 in the two runs of a loaded
#: run (0.77 ms quiet, the match 0.92 s against 0.32 s), with no stall of the node's own. The defect
#: this test was written for (a rebuild of the match a read, on the loop) held it for seconds a read.
FLOOR_US = 10_000
#: how long an honest match may take under attack before the test gives up on it, and the first
#: build of a finished match's view (a loaded two-core machine: up to 20 s)
HONEST_TIMEOUT = 45.0
BUILD_TIMEOUT = 60.0


@dataclass
class Arena:
    running: RunningNode
    url: str


@pytest.fixture(scope="module")
def data() -> Iterator[Path]:
    """A data folder with the two finished matches of MAX_DEALS deals, written before the node starts."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp)
        MatchStore(path / "matches").put(played_record(HERE, MAX_DEALS, seed=1))
        broker = EmbeddedBroker(path / "queue.sqlite3")
        try:
            record = played_record(ELSEWHERE, MAX_DEALS, seed=2)
            job = MatchJob(ELSEWHERE, "", "alpha", "beta", "coinche", "2")
            assert broker.write_result(MatchResult.of_record(job, record, "node-elsewhere"))
        finally:
            broker.close()
        yield path


@dataclass(frozen=True)
class Honest:
    """An honest match: its record, and how long it took."""

    record: MatchRecord
    seconds: float


async def play_honest(running: RunningNode, n: int) -> Honest:
    start = time.monotonic()
    match_id = running.node.start_match("honest-a", "honest-b", "coinche", seed=f"honest/{n}",
                                        deals=HONEST_DEALS)
    try:
        record = await asyncio.wait_for(running.node.wait(match_id), HONEST_TIMEOUT)
    except TimeoutError:
        raise AssertionError(f"the honest match was not over after {HONEST_TIMEOUT:.0f} s") from None
    return Honest(record, time.monotonic() - start)


def latencies(record: MatchRecord) -> list[int]:
    return sorted(v for deal in record.latencies_us for v in deal)


async def honest_under_readers(data: Path, mode: str) -> tuple[Honest, Honest, dict[str, int], float]:
    """An honest match quiet, then another while the readers of ``mode`` loop: their records, how the
    reads ended, and how long the readers waited for their first answer (its view's build)."""
    broker = EmbeddedBroker(data / "queue.sqlite3")
    stop = asyncio.Event()
    settings = NodeSettings(data_dir=data, poll_s=0.05, heartbeat_s=0.2, capacity=4, drain_s=1.0)
    tasks = []
    try:
        async with running_node(broker, settings, stop) as running, web_for(running, "127.0.0.1:0") as web:
            for name, bot in (("honest-a", HeuristicBot(seed=1)), ("honest-b", RandomBot(seed=2))):
                entry = running.node.bot_named(name)
                if entry is None:
                    entry, token = running.node.register_bot(name)
                else:
                    token = await running.node.rotate_token(entry)
                tasks.append(asyncio.create_task(run_async(
                    bot, running.address, token, 4, name=name, stop=stop, all_nodes=False, verbose=False)))
                await asyncio.wait_for(running.node.link_for(entry).connected_event.wait(), 10)
            target = HERE if mode == "watch" else ELSEWHERE
            plan = Reading(mode, web.url, running.address, target, loops=LOOPS[mode])
            async with Readers(plan) as readers:
                await readers.ready()
                await play_honest(running, 0)  # a warm-up: the first match pays for imports and caches
                quiet = await play_honest(running, 1)
                readers.go()
                started = time.monotonic()
                while readers.begun < 1:  # the view is built (once): the reads are going
                    assert readers.alive, "the readers' process died"
                    assert time.monotonic() - started < BUILD_TIMEOUT, "no answer begun yet"
                    await asyncio.sleep(0.05)
                first = time.monotonic() - started
                before = readers.received
                loud = await play_honest(running, 2)
                during = readers.received - before
            tally = readers.tally
            # the readers run at nice 19 (their CPU must not be what slows the honest bots): beside two
            # CPU-bound processes they may get none for a whole match. No attack then, nothing
            # measured: a run under a load that stops the experiment is run once more, as a broken bound
            within(during > 0, f"the readers received nothing during the honest match: {tally}")
            return quiet, loud, {**tally, "received during the honest match": during}, first
    finally:
        stop.set()
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        broker.close()


@pytest.mark.parametrize("mode", ["sse", "get", "record", "watch"])
def test_an_honest_match_keeps_its_pace_while_an_anonymous_reader_loops_on_a_finished_one(
    data: Path, mode: str,
) -> None:
    """The honest p99 stays within 2x of the quiet run's, or within 10 ms of it (a loaded two-core
    machine's scheduler moves a 1 ms p99 by a time slice: :data:`FLOOR_US`), the match
    takes at most twice as long, and no honest seat gets a strike."""
    quiet, loud, tally, first = arun(honest_under_readers(data, mode), timeout=180)
    q, lo = latencies(quiet.record), latencies(loud.record)
    print(f"{mode}: honest p99 quiet {p99(q) / 1000:.2f} ms, while reading {p99(lo) / 1000:.2f} ms "
          f"(max {lo[-1] / 1000:.1f} ms); the match {quiet.seconds:.2f} s quiet, {loud.seconds:.2f} s while "
          f"reading; the readers' first answer after {first:.2f} s; {tally}")
    assert loud.record.result.reason == "finished" and not loud.record.strikes, loud.record.strikes
    bound = max(2 * p99(q), p99(q) + FLOOR_US)
    within(p99(lo) <= bound,
           f"honest p99 {p99(lo) / 1000:.1f} ms while reading against {p99(q) / 1000:.1f} ms quiet; {tally}")
    # a stall of seconds hits too few decisions to move the p99 of a thousand, but not the match's time
    within(loud.seconds <= 2 * quiet.seconds + SLACK_S,
           f"the honest match took {loud.seconds:.2f} s while reading against {quiet.seconds:.2f} s quiet "
           f"(its longest round trip {lo[-1] / 1000:.0f} ms); {tally}")
