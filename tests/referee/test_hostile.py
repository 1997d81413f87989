"""No bot slows another: an honest match keeps its pace while hostile bots attack the node.

The honest match (SDK bots, heuristic against random, coinche) is played
quiet (the attackers' process started, idle), then again while four hostile
bots, each with its own token, and a few strangers send the worst the
protocol allows (:mod:`.hostile_clients`: batches of as many answers as the
node takes, answers one at a time, ping floods, garbage, silent streams,
streams that never say Hello, garbage to every ArenaService method, all
reconnecting at once whenever the node ends them). The honest decisions'
round trips are the referee's own measure (the records' ``latencies_us``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

import pytest
from belote_bot import HeuristicBot, RandomBot

from arena.edge import quietlog
from arena.edge.guard import TokenBucket
from arena.records import MatchRecord
from arena.referee.node import Limits, Node, NodeConfig
from arena.referee.sessions import STREAMS_PER_S
from tests.timing import within

from .arena_helpers import arun, connect_client, link_of, node_server, until
from .hostile_clients import LOST, Attackers, Plan

MATCHES = 6
DEALS = 4
#: the absolute slack on the honest p99, for what a loaded two-core machine adds by itself
FLOOR_US = 5_000


async def play_honest(node: Node, until: Callable[[], bool] = lambda: True,
                      timeout: float = 120.0) -> tuple[list[int], list[MatchRecord]]:
    """Honest matches, one after the other, at least ``MATCHES`` and until ``until()``: their
    decisions' round trips (sorted), and their records."""
    records: list[MatchRecord] = []
    deadline = time.monotonic() + timeout
    while len(records) < MATCHES or not until():
        assert time.monotonic() < deadline, f"still waiting after {len(records)} honest matches: {until}"
        match_id = node.start_match("honest-a", "honest-b", "coinche", seed=f"honest/{len(records)}",
                                    deals=DEALS)
        records.append(await node.wait(match_id))
    return sorted(v for r in records for deal in r.latencies_us for v in deal), records


def p99(values: list[int]) -> int:
    return values[min(len(values) - 1, int(len(values) * 0.99))]


def bound(quiet: list[int]) -> int:
    """The honest p99 under attack at most: 2x the quiet run's, or 5 ms over it (see below)."""
    return max(2 * p99(quiet), p99(quiet) + FLOOR_US)


#: what the node logs when a limit is reached: the attack must reach each one (not the stream rate:
#: each refusal is held a second, so a bot that reconnects at once opens a stream a second at most,
#: under its rate; test_limits tests that limit)
LIMITS = (
    "more answers than requests",  # a batch of unasked answers, or a trickle of them
    "without an answer",  # a ping flood
    "undecodable ConnectRequest",
    "no Hello within",
    "limit per address",
    "refused an undecodable",  # ArenaService
)


def missing(caplog: pytest.LogCaptureFixture) -> list[str]:
    """The limits the node has not logged yet."""
    lines = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    return [limit for limit in LIMITS if not any(limit in line for line in lines)]


class Reached:
    """Whether the attack has reached every limit (or its process died); says which it has not."""

    def __init__(self, caplog: pytest.LogCaptureFixture, attackers: Attackers) -> None:
        self.caplog = caplog
        self.attackers = attackers

    def __call__(self) -> bool:
        return not missing(self.caplog) or not self.attackers.alive

    def __repr__(self) -> str:
        return f"limits not reached: {missing(self.caplog)}; calls ended: {self.attackers.calls_ended}"


@pytest.mark.reliability
@pytest.mark.slow
@pytest.mark.timing
def test_an_honest_match_keeps_its_pace_while_four_hostile_bots_attack(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The honest p99 stays within 2x of the quiet run's, or within 5 ms of it: a quiet p99 is
    about 1 ms on loopback, so 2x is a millisecond, which a loaded CI machine's scheduler moves by
    itself (one time slice of another process is 4-10 ms) whatever the node does; 5 ms is 0.5% of
    the 1 s a decision has. No honest seat gets a strike, and the honest streams are never cut.

    The quiet run is played with the attackers' process started and idle, so that the two runs
    differ only by what the attackers send: the start of a process (its imports) takes a core
    for half a second, and alone moved the honest p99 up to 3x on two cores.
    (Here: 0.7-1.0 ms quiet, 1.1-1.9 ms under attack, 1.1-1.9x over five runs; before refusals
    were held, 2.2-3.1x, the attackers making 3,000 calls a run instead of 300.)"""
    async def main() -> None:
        # a short Hello timeout, so the silent streams end (and come back) within the run
        async with node_server(NodeConfig(limits=Limits(hello_timeout=1.0))) as (node, address):
            honest = [await connect_client(node, address, HeuristicBot(1), "honest-a"),
                      await connect_client(node, address, RandomBot(2), "honest-b")]
            tokens = tuple(node.register_bot(f"hostile-{i}")[1] for i in range(4))
            for i in range(4):  # a burst of 3 streams, not 10: the reconnect storms reach it sooner
                link_of(node, f"hostile-{i}").stream_budget = TokenBucket(STREAMS_PER_S, 3)
            async with Attackers(Plan(address, tokens), gated=True) as attackers:
                # the quiet run with the attackers' process started but idle: the two runs differ
                # only by what the attackers send
                await attackers.ready()
                quiet, _ = await play_honest(node)
                attackers.go()
                await until(lambda: attackers.calls_ended >= 300 or not attackers.alive, timeout=60,
                            what="the attack to be under way")
                # the honest matches go on until the attack has reached every limit
                loud, records = await play_honest(node, Reached(caplog, attackers), timeout=60)
                if p99(loud) > bound(quiet):
                    # once over the bound, measured again under the same attack: a stall of the
                    # node's shows in both runs, one scheduler hiccup of a shared machine (CI once
                    # saw 9.0 ms against 0.8 ms quiet, where five runs gave 1.1-1.9x) in one
                    calls = attackers.calls_ended
                    again, more = await play_honest(node, timeout=60)
                    assert attackers.alive and attackers.calls_ended > calls, "the attack stopped"
                    print(f"honest p99 under attack {p99(loud) / 1000:.2f} ms, "
                          f"then {p99(again) / 1000:.2f} ms")
                    loud, records = min(loud, again, key=p99), records + more
            tally = attackers.tally
            for name in ("honest-a", "honest-b"):
                link = link_of(node, name)
                assert link.connected and link._stream_id == 1, f"{name}'s stream was cut"
            for bot in honest:
                await bot.disconnect()

        assert all(r.result.reason == "finished" for r in records)
        assert [s for r in records for s in r.strikes] == []
        print(f"honest p99: quiet {p99(quiet) / 1000:.2f} ms over {len(quiet)} decisions, under attack "
              f"{p99(loud) / 1000:.2f} ms over {len(loud)} decisions ({len(records)} matches; max "
              f"{loud[-1] / 1000:.1f} ms); the attackers' calls: {sum(tally.values())}")
        within(p99(loud) <= bound(quiet),
               f"honest p99 {p99(loud) / 1000:.1f} ms under attack against {p99(quiet) / 1000:.1f} ms quiet "
               f"(max {loud[-1] / 1000:.1f} ms); the attack: {tally}")
        # the attack reached every limit, the node said so once per kind, without a traceback
        lines = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
        assert not missing(caplog), f"limits not reached: {missing(caplog)}; the node's log: {lines}"
        assert not [r for r in caplog.records if r.exc_info], "a traceback in the node's log"
        assert len(lines) < 100, lines
        # the statuses the attackers saw are the documented ones (a bot stream the node ends while
        # the client still writes may lose its status on the client's side: "Internal error from Core")
        assert {code for key, n in tally.items() for code in [key.split(": ")[1]]} <= {
            "INVALID_ARGUMENT", "RESOURCE_EXHAUSTED", "ALREADY_EXISTS", "NOT_FOUND", "OK", "INTERNAL",
            "FAILED_PRECONDITION", "UNAUTHENTICATED", "PERMISSION_DENIED", "UNIMPLEMENTED"}, tally
        assert not [k for k in tally if k.endswith("INTERNAL") and f"{k}: {LOST}" not in tally], tally

    monkeypatch.setattr(quietlog.quiet, "limit", quietlog.RateLimit())  # nothing held from earlier tests
    with caplog.at_level(logging.INFO):
        arun(main(), timeout=240)
