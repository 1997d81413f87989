"""A whole node's life (``arena.node.run``): what it says when it stops."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest
from belote_bot import RandomBot

from tests.node.test_tournament_trust import ADMIN, connect, create, finished, node
from tests.referee.arena_helpers import arena_stub, arun, until


def test_the_stop_line_counts_the_matches_an_admin_started_as_well_as_the_queue_s(
    tmp_path: Path, caplog: pytest.LogCaptureFixture,
) -> None:
    """A match started with ``match start`` is played by the node, not by its queue worker: the stop
    line counted the worker's results only, and said "0 matches completed here" right after one."""
    async def main() -> None:
        stop = asyncio.Event()
        async with node(tmp_path) as running:
            bots = [connect(running, name, RandomBot(i), stop) for i, name in enumerate(("alpha", "beta"))]
            await until(lambda: len(running.node.connected_bots()) == 2, what="the bots")
            started = running.node.start_match("alpha", "beta", "classic", deals=1)  # as StartMatch does
            await running.node.wait(started)
            async with arena_stub(running.address, ADMIN) as admin:
                await create(admin, tournament_id="rr", format="round-robin", bots=["alpha", "beta"],
                             ruleset="classic", deals=1)
            await until(lambda: finished(running, "rr"), timeout=60, what="the tournament")
            stop.set()
        await asyncio.gather(*bots, return_exceptions=True)

    with caplog.at_level(logging.INFO, logger="arena.node"):
        arun(main(), timeout=120)
    stops = [r for r in caplog.records if getattr(r, "event", "") == "node_stop"]
    assert len(stops) == 1
    # the admin's match and the round-robin's two (both seatings)
    line = stops[0]
    assert line.getMessage().endswith("stopped (3 matches completed here; 2 results written to the queue)")
    assert (line.__dict__["matches"], line.__dict__["results"]) == (3, 2)  # the JSON log's fields
