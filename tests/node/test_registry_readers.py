"""Anonymous readers looping on a node do not slow an honest match.

A node of a queue on a real Redis, with its web server and 5,000 registered
bots; two honest SDK bots, in a child process, play coinche matches. Two
anonymous readers, in another, loop on the node's reads, each waiting for its
answer before the next call (:mod:`tests.node.registry_readers`): the bot
registry's (``ListBots`` as an old client asks it, with no page, ``GetBot``,
``/api/v1/bots`` pages and ``/api/v1/bots/NAME``), or cheap ones
(``ListMatches``, ``GetMatch``, ``/api/v1/leaderboard``, a page of bots).
The honest p99 stays within 2x of the quiet run's, with no strike.

Before, every registry read parsed every bot's JSON on the event loop (40-64 ms
a call): a 30-deal match went from 0.6 s to 101 s. Once the registry was read
from memory a page at a time, what was left was the readers' share of the node:
2.9-3.6x on the registry, 2.7-3.0x on cheap reads, here. Now each address reads
within its rate (:mod:`arena.edge.rates`): 1.0-1.5x, also with another
process taking the node's CPU, so no allowance beside the ratio.
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing as mp
import time
import uuid
from collections.abc import Iterator
from dataclasses import asdict, dataclass

import pytest

from arena.node.run import NodeSettings, running_node
from arena.queue.broker import Broker
from arena.records import MatchRecord
from arena.referee.limits import Limits
from arena.referee.registry import BotEntry
from arena.web import web_for
from tests.node.registry_readers import ANSWERED, NAME, REFUSED, Readers, honest_main, node_on_one_cpu, p99
from tests.queue.conftest import REDIS_URL, redis_unavailable
from tests.timing import within

pytestmark = [pytest.mark.reliability, pytest.mark.slow, pytest.mark.timing]

BOTS = 5000
#: quiet and read matches played in turn
ROUNDS = 3
DEALS = 30


@pytest.fixture
def broker_with_bots() -> Iterator[Broker]:
    """A Redis broker under a prefix of its own holding BOTS registered bots."""
    why = redis_unavailable()
    if why:
        pytest.skip(why)
    import redis

    from arena.queue.redis_broker import RedisBroker

    prefix = f"test-arena-{uuid.uuid4().hex[:12]}"
    broker = RedisBroker(REDIS_URL, prefix=prefix)
    try:
        for i in range(BOTS):
            entry = BotEntry(bot_id=f"bot-r{i:05d}", name=NAME.format(i), token_sha256=uuid.uuid4().hex * 2)
            broker.add_bot(entry.name, json.dumps(asdict(entry)))
        yield broker
    finally:
        broker.close()
        client = redis.Redis.from_url(REDIS_URL)
        try:
            own = list(client.scan_iter(match=f"{prefix}:*", count=1000))
            for i in range(0, len(own), 1000):
                client.delete(*own[i:i + 1000])
        finally:
            client.close()


def latencies(records: list[MatchRecord]) -> list[int]:
    return sorted(v for r in records for deal in r.latencies_us for v in deal if v >= 0)


@dataclass(frozen=True)
class Outcome:
    """What a test saw: the honest decisions' round trips quiet and while read, what the readers'
    calls got, the strikes in the matches read through, and the most reads the node may have answered
    the readers' one address (:func:`most_answered`)."""

    quiet: list[int]
    loud: list[int]
    tally: dict[str, int]
    strikes: int
    most_answered: float


def most_answered(limits: Limits, seconds: float) -> float:
    """The reads one address can be answered in ``seconds`` at most: its bucket holds its burst at
    most, and refills at its rate (each answer costs one read or more, never less). Two more for the
    calls under way when the readers stop, and a second more of refill for the clocks' skew."""
    return limits.read_burst_per_peer + limits.read_rate_per_peer * (seconds + 1.0) + 2


def honest_matches_with_readers(broker: Broker, kind: str) -> Outcome:
    """The honest decisions' round trips quiet and with two readers of ``kind`` looping (their matches
    played in turn), what the readers' calls got, and the strikes in the matches read through."""
    async def main() -> tuple[list[MatchRecord], list[MatchRecord], dict[str, int], float]:
        settings = NodeSettings(poll_s=0.05, heartbeat_s=0.5, lease_s=10.0, drain_s=2.0)
        async with running_node(broker, settings, asyncio.Event()) as running, \
                web_for(running, "127.0.0.1:0") as web:
            node = running.node
            tokens = {name: (await node.register(name))[1] for name in ("honest-a", "honest-b")}
            honest = mp.get_context("spawn").Process(target=honest_main, args=(running.address, tokens, cpus),
                                                     daemon=True, name="honest-bots")
            honest.start()
            for name in tokens:
                entry = node.bot_named(name)
                assert entry is not None
                await asyncio.wait_for(node.link_for(entry).connected_event.wait(), 60)

            async def play() -> MatchRecord:
                return await node.wait(node.start_match("honest-a", "honest-b", "coinche", deals=DEALS))

            try:
                readers = Readers(running.address, web.url, kind, BOTS, cpus)
                quiet, loud = [], []
                async with readers.running():
                    await play()  # warm-up
                    # quiet and read matches in turn, so that the machine's other load weighs on both
                    first_read = None
                    for _ in range(ROUNDS):
                        quiet.append(await play())  # the readers connected, idle
                        readers.reading(True)
                        first_read = first_read if first_read is not None else time.monotonic()
                        await asyncio.sleep(0.3)  # the readers under way
                        loud.append(await play())
                        readers.reading(False)
                    assert first_read is not None
                    span = time.monotonic() - first_read
            finally:
                honest.terminate()
                await asyncio.to_thread(honest.join, 10)
            return quiet, loud, readers.tally, most_answered(node.config.limits, span)

    with node_on_one_cpu() as cpus:
        quiet, loud, tally, most = asyncio.run(asyncio.wait_for(main(), 600))
    return Outcome(latencies(quiet), latencies(loud), tally, sum(len(r.strikes) for r in loud), most)


def check(seen: Outcome) -> None:
    """The readers did read; each call was answered, or refused past its address's reads, and never
    answered more than its bucket holds; no honest seat got a strike; the honest p99 within 2x of the
    quiet one's. On a quiet machine the readers empty their bucket and are refused past it (each
    refusal held a second: 254 cheap reads answered of 294 at most, 6 refused); beside two CPU-bound
    processes, at nice 19, they may not reach it (then nothing is refused, and the bound still
    holds)."""
    q, a, tally = seen.quiet, seen.loud, seen.tally
    answered = sum(tally.get(k, 0) for k in ANSWERED)
    refused = sum(tally.get(k, 0) for k in REFUSED)
    print(f"honest p99: quiet {p99(q) / 1000:.2f} ms, with the readers {p99(a) / 1000:.2f} ms "
          f"(max {a[-1] / 1000:.1f} ms) over {len(a)} decisions; the readers' calls: {tally} "
          f"({answered} answered of {seen.most_answered:.0f} at most; "
          f"{'refused past it' if refused else 'the readers never reached their reads'})")
    assert answered > 50, tally  # they did read
    assert set(tally) <= {*ANSWERED, *REFUSED}, tally  # answered, or refused past their reads
    assert answered <= seen.most_answered, f"{answered} reads answered to one address: {tally}"
    assert seen.strikes == 0
    within(p99(a) <= 2 * p99(q), f"honest p99 {p99(a)} us while reading against {p99(q)} us quiet")


def test_readers_of_5000_bots_leave_an_honest_match_its_pace(broker_with_bots: Broker) -> None:
    check(honest_matches_with_readers(broker_with_bots, "registry"))


def test_readers_looping_on_cheap_calls_leave_an_honest_match_its_pace(broker_with_bots: Broker) -> None:
    """Calls that read nothing that grows (ListMatches, GetMatch, the leaderboard, a page of bots) cost
    a fraction of a millisecond each, and two readers looping on them still took most of the node:
    the honest p99 3.3x the quiet one's. Each address now reads within its rate: past it, refused."""
    from arena.tournament import MatchJob, MatchResult
    from tests.factories import synthetic_record

    for i in range(100):  # a leaderboard of 20 bots
        one, other = NAME.format(i % 20), NAME.format((i + 1) % 20)
        record = synthetic_record(f"m-{i:03d}", one, other, (1000, 500), 0, ruleset="coinche")
        job = MatchJob(record.match_id, "", one, other, "coinche", "1")
        broker_with_bots.write_result(MatchResult.of_record(job, record, "node-x"))
    check(honest_matches_with_readers(broker_with_bots, "cheap"))
