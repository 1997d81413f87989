"""A node's analyses of finished matches (arena.referee.analyses): queued, made one at a time in a build
process of their own, kept in memory and on disk within bounds, every finished match within a CPU budget,
and never an automatic one while its table is sealed. The build process is the real one."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from arena.analysis.decisions import Settings
from arena.records import MatchRecord
from arena.referee.analyses import Analyses, Failed, Pending, QueueFull
from arena.referee.replay_views import Body, RecordSource
from tests.factories import played_record

QUICK = Settings(second_opinion_samples=2, par=False)


def finder(*records: MatchRecord) -> Callable[[str], Awaitable[RecordSource | None]]:
    by_id = {r.match_id: RecordSource(r.to_json(), MatchRecord.from_json) for r in records}

    async def find(match_id: str) -> RecordSource | None:
        return by_id.get(match_id)

    return find


async def made(analyses: Analyses, match_id: str, timeout: float = 120.0) -> Body:
    """Ask until the analysis is made."""
    async with asyncio.timeout(timeout):
        while True:
            found = await analyses.ask(match_id)
            if isinstance(found, Body):
                return found
            await asyncio.sleep(0.05)


def test_the_first_ask_queues_the_match_and_its_place_is_answered_until_it_is_made(tmp_path: Path) -> None:
    records = [played_record(f"m{i}", 1, seed=i) for i in range(3)]

    async def main() -> None:
        analyses = Analyses(finder(*records), folder=tmp_path / "analyses", settings=QUICK)
        try:
            places = [await analyses.ask(r.match_id) for r in records]
            assert all(isinstance(p, Pending) for p in places)
            # the first one is being made or first in line; the others wait behind it, in order
            assert [p.position for p in places if isinstance(p, Pending)][1:] in ([2, 3], [1, 2])
            bodies = [await made(analyses, r.match_id) for r in records]
            for record, body in zip(records, bodies, strict=True):
                a = json.loads(body.data)
                assert a["match_id"] == record.match_id and a["format"] == 1
            assert analyses.made == 3
            # kept on disk: a node started again answers at once, with no build
            files = sorted(p.name for p in (tmp_path / "analyses").iterdir())
            assert files == [f"m{i}.v1.json" for i in range(3)]
        finally:
            analyses.close()
        again = Analyses(finder(*records), folder=tmp_path / "analyses", settings=QUICK)
        try:
            assert isinstance(await again.ask("m1"), Body) and again.made == 0
        finally:
            again.close()

    asyncio.run(main())


def test_a_match_without_a_record_is_refused_after_its_try_and_the_queue_is_bounded() -> None:
    async def main() -> None:
        analyses = Analyses(finder(), settings=QUICK, max_queued=2)
        try:
            assert isinstance(await analyses.ask("gone"), Pending)
            async with asyncio.timeout(30):
                while True:
                    try:
                        await analyses.ask("gone")
                    except Failed as e:
                        assert "no record" in str(e)
                        break
                    await asyncio.sleep(0.02)
            analyses._start = lambda: None  # type: ignore[method-assign]  # nothing runs: the queue fills
            await analyses.ask("a")
            await analyses.ask("b")
            with pytest.raises(QueueFull):
                await analyses.ask("c")
        finally:
            analyses.close()

    asyncio.run(main())


def test_with_a_budget_every_match_that_ends_is_analysed_but_not_while_sealed(tmp_path: Path) -> None:
    records = [played_record(f"t{i}", 1, seed=10 + i) for i in range(2)]
    sealed = {"t0"}

    async def is_sealed(match_id: str) -> bool:
        return match_id in sealed

    async def main() -> None:
        analyses = Analyses(finder(*records), budget=0.5, settings=QUICK, max_files=1, folder=tmp_path)
        analyses.sealed = is_sealed
        try:
            analyses.ended("t0")
            analyses.ended("t1")
            async with asyncio.timeout(120):
                while analyses.made < 1:
                    await asyncio.sleep(0.05)
            assert analyses.cache.get("t1") is not None and analyses.cache.get("t0") is None
            sealed.clear()  # its twin is over: the next match that ends brings it back
            analyses.ended("t1")
            async with asyncio.timeout(120):
                while analyses.cache.get("t0") is None:
                    await asyncio.sleep(0.05)
            # one file at most on disk: the oldest dropped
            assert len(list(tmp_path.glob("*.json"))) == 1
        finally:
            analyses.close()

    asyncio.run(main())


def test_a_budget_is_a_share_of_one_core() -> None:
    for bad in (0.0, -1.0, 1.5):
        with pytest.raises(ValueError, match="share of one core"):
            Analyses(finder(), budget=bad)
