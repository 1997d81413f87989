"""What one address may read a second: a bucket of reads per address, each call charged by its answer.

A loop of calls, one at a time, holds a single place of every bound on calls
open at once, and yet took most of the node's time from an honest match. So
every short call of a stranger or a bot token draws on its address's reads
(:mod:`arena.edge.rates`); past them, RESOURCE_EXHAUSTED, held first, saying
when to retry. Real node, real gRPC; the node listens on ``localhost`` and the
reader past its reads dials ``[::1]``, the others ``127.0.0.1``, so that the
node tells them apart as it would two machines.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

import grpc
import grpc.aio
import pytest
from belote.arena.v1 import arena_service_pb2 as apb
from grpc_health.v1 import health_pb2, health_pb2_grpc

from arena.edge import quietlog
from arena.edge.quietlog import RateLimit
from arena.edge.rates import ReadRates
from arena.harness import LocalArena, local_arena
from arena.referee.node import Limits

from .arena_helpers import FAST, arena_stub, arun
from .test_call_bounds import attacker_address

pytestmark = [pytest.mark.security, pytest.mark.reliability]

#: a node whose addresses may read 10 at once and one every ten seconds after that
SLOW_READS = Limits(read_rate_per_peer=1, read_burst_per_peer=10, refusal_hold=0.0)


def on_arena(body: Callable[[LocalArena], Awaitable[None]], limits: Limits) -> None:
    async def main() -> None:
        async with local_arena(time=FAST, listen="localhost:0", limits=limits) as arena:
            await body(arena)

    arun(main(), timeout=120)


async def outcomes(call: Callable[[], Awaitable[Any]], times: int) -> list[str]:
    """Make ``call`` ``times`` times, each after the last is answered: "OK" or the status's name."""
    out = []
    for _ in range(times):
        try:
            await call()
            out.append("OK")
        except grpc.aio.AioRpcError as e:
            out.append(e.code().name)
    return out


async def refusal(call: Callable[[], Awaitable[Any]]) -> grpc.aio.AioRpcError:
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await call()
    return info.value


# ------------------------------------------------------------------ the bucket
class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_an_address_may_read_its_burst_at_once_then_its_rate() -> None:
    clock = Clock()
    rates = ReadRates(2, 5, clock=clock)
    assert [rates.admit("a") for _ in range(5)] == [0.0] * 5
    assert rates.admit("a") == pytest.approx(0.5)  # one more read in half a second
    assert rates.admit("b") == 0.0  # another address has its own
    clock.now += 0.5
    assert rates.admit("a") == 0.0 and rates.admit("a") > 0
    clock.now += 3600
    assert [rates.admit("a") for _ in range(6)].count(0.0) == 5  # never more than the burst at once


def test_an_answer_costs_a_read_for_each_8_kib_and_may_put_the_address_in_debt() -> None:
    clock = Clock()
    rates = ReadRates(1, 10, clock=clock)
    assert rates.admit("a") == 0.0
    rates.charge("a", 8 * 1024 * 4 + 8000)  # four more (a part of 8 KiB counts nothing): 5 of 10 spent
    assert [rates.admit("a") for _ in range(6)].count(0.0) == 5
    rates.charge("a", 10 << 20)  # far more than it had: in debt, down to -burst at most
    assert rates.admit("a") == pytest.approx(11.0)
    clock.now += 11.0
    assert rates.admit("a") == 0.0


def test_the_table_of_addresses_is_bounded_and_drops_refilled_ones_first() -> None:
    clock = Clock()
    rates = ReadRates(1, 2, max_addresses=8, clock=clock)
    for i in range(4):  # four addresses in debt
        for _ in range(3):
            rates.admit(f"debt-{i}")
    for i in range(1000):
        rates.admit(f"once-{i}")  # each new; refilled a second later
        clock.now += 1.0
        assert len(rates) <= 8
    assert rates.admit("once-999") == 0.0
    # the addresses in debt were the least recently used: dropped, they start afresh, as any new one
    assert rates.admit("debt-0") == 0.0


# ------------------------------------------------------------------ over gRPC
def test_an_address_past_its_reads_is_refused_while_another_is_served() -> None:
    async def body(arena: LocalArena) -> None:
        async with arena_stub(attacker_address(arena)) as reader, arena_stub(arena.address) as other:
            got = await outcomes(lambda: reader.ListMatches(apb.ListMatchesRequest(), timeout=10), 14)
            assert got[:10] == ["OK"] * 10 and set(got[10:]) == {"RESOURCE_EXHAUSTED"}, got
            refused = await refusal(lambda: reader.GetMatch(apb.GetMatchRequest(match_id="m"), timeout=10))
            assert refused.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert "::/64 reads more than 1 a second, the limit per address" in (refused.details() or "")
            trailers = dict(refused.trailing_metadata() or ())
            assert int(trailers["retry-after"]) >= 1
            assert int(trailers["grpc-retry-pushback-ms"]) == 1000 * int(trailers["retry-after"])
            served = await outcomes(lambda: other.ListMatches(apb.ListMatchesRequest(), timeout=10), 5)
            assert served == ["OK"] * 5

    on_arena(body, SLOW_READS)


def test_the_admin_and_the_health_checks_keep_their_room_but_a_bot_token_reads_as_its_address() -> None:
    async def body(arena: LocalArena) -> None:
        _, token = arena.node.register_bot("reader")
        attacker = attacker_address(arena)
        async with arena_stub(attacker) as anyone, arena_stub(attacker, token) as bot, \
                arena_stub(attacker, arena.admin_token) as admin, \
                grpc.aio.insecure_channel(attacker) as channel:
            await outcomes(lambda: anyone.ListMatches(apb.ListMatchesRequest(), timeout=10), 11)
            refused = await refusal(lambda: bot.ListBots(apb.ListBotsRequest(), timeout=10))
            assert refused.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            served = await outcomes(lambda: admin.ListBots(apb.ListBotsRequest(), timeout=10), 20)
            assert served == ["OK"] * 20
            health: Any = health_pb2_grpc.HealthStub(channel)
            for _ in range(20):
                reply = await health.Check(health_pb2.HealthCheckRequest(), timeout=10)
                assert reply.status == health_pb2.HealthCheckResponse.SERVING

    on_arena(body, SLOW_READS)


def test_a_call_is_charged_by_the_size_of_its_answer() -> None:
    """A page of 1,000 bots (about 25 kB) costs four reads, a call with a small answer one: the bound
    is on the node's work, not on the number of calls."""
    async def body(arena: LocalArena) -> None:
        for i in range(1000):
            arena.node.register_bot(f"reg-{i:04d}")
        async with arena_stub(attacker_address(arena)) as reader, arena_stub(arena.address) as other:
            pages = await outcomes(lambda: reader.ListBots(apb.ListBotsRequest(limit=1000), timeout=10), 12)
            small = await outcomes(lambda: other.ListBots(apb.ListBotsRequest(limit=1), timeout=10), 12)
        assert pages.count("OK") == 3 and small.count("OK") == 10, (pages, small)

    on_arena(body, Limits(read_rate_per_peer=1, read_burst_per_peer=10, refusal_hold=0.0))


def test_a_refusal_for_reads_is_held_and_logged_once(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A client asking again at once whenever it is refused waits the hold each time: a loop slows to
    a call a second, and costs the node a timer meanwhile."""
    monkeypatch.setattr(quietlog.quiet, "limit", RateLimit())  # nothing held back from earlier tests
    hold = 0.3  # twice that, and the address has its next read

    async def body(arena: LocalArena) -> None:
        async with arena_stub(attacker_address(arena)) as reader:
            await outcomes(lambda: reader.ListMatches(apb.ListMatchesRequest(), timeout=10), 10)
            for _ in range(2):
                start = time.monotonic()
                refused = await refusal(lambda: reader.ListMatches(apb.ListMatchesRequest(), timeout=10))
                assert refused.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
                assert time.monotonic() - start >= hold * 0.9

    with caplog.at_level(logging.INFO):
        on_arena(body, Limits(read_rate_per_peer=1, read_burst_per_peer=10, refusal_hold=hold))
    lines = [r for r in caplog.records if "reads more than" in r.getMessage()]
    assert len(lines) == 1 and not lines[0].exc_info


def test_the_defaults_leave_a_script_paging_through_5000_bots_and_a_polling_dashboard_alone() -> None:
    """What an honest reader does, flat out: page through 5,000 bots by 1,000, read 100 matches one by
    one, and poll the match list; none of it is refused with the default limits."""
    async def body(arena: LocalArena) -> None:
        for i in range(5000):
            arena.node.register_bot(f"reg-{i:05d}")
        async with arena_stub(arena.address) as reader:
            listed = 0
            for offset in range(0, 5000, 1000):
                listed += len((await reader.ListBots(apb.ListBotsRequest(offset=offset, limit=1000),
                                                     timeout=10)).bots)
            assert listed == 5000
            for i in range(100):
                with pytest.raises(grpc.aio.AioRpcError) as info:
                    await reader.GetMatch(apb.GetMatchRequest(match_id=f"m-{i}"), timeout=10)
                assert info.value.code() == grpc.StatusCode.NOT_FOUND  # not RESOURCE_EXHAUSTED
            for _ in range(10):
                await reader.ListMatches(apb.ListMatchesRequest(), timeout=10)
                await asyncio.sleep(0.2)

    on_arena(body, Limits())
