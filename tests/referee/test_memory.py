"""A node's memory does not grow with the matches it has played.

A finished match leaves the node: its record is in the store, its summary
among the latest few, and nothing else of it is kept but its replay's views,
in a cache bounded in bytes (``test_replays``; ``bench/soak.py`` measures the
RSS over 1,000 matches). The store without a folder keeps a
bounded number of records; the store with one holds no file open. What
comes back from the store, damaged or not, never crashes a call.
"""

from __future__ import annotations

import asyncio
import gc
import os
import weakref
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
import pytest
from belote.arena.v1 import arena_service_pb2 as apb
from belote.arena.v1 import arena_service_pb2_grpc as agrpc
from belote_bot import HeuristicBot

from arena.harness import local_arena
from arena.records import ResultReason
from arena.referee import node as node_module
from arena.referee.node import MatchState, NodeConfig
from arena.referee.replay_events import public_events
from arena.referee.store import MEMORY_RECORDS, MatchStore
from tests.factories import synthetic_record

from .arena_helpers import FAST, DelayBot, arena_stub, arun, collect, connect_pair, node_server, until

pytestmark = pytest.mark.reliability


@pytest.fixture
def no_collector() -> Iterator[None]:
    """Only reference counting frees memory while the test runs."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


@pytest.mark.usefixtures("no_collector")
def test_a_finished_match_is_freed_without_waiting_for_the_garbage_collector() -> None:
    async def main() -> None:
        async with local_arena(time=FAST) as arena:
            team0, team1 = await connect_pair(arena)
            await arena.play(team0, team1, "coinche", seed=0, deals=1)  # the first match warms up
            mid = arena.node.start_match(team0, team1, "coinche", seed=1, deals=2)
            running = weakref.ref(arena.node._matches[mid])  # what the node holds
            runner = weakref.ref(arena.node._matches[mid].runner)
            record = await arena.node.wait(mid)
            assert record.result.reason is ResultReason.FINISHED
            await until(lambda: running() is None and runner() is None,
                        what="the finished match freed by reference counting alone")
            assert not arena.node.is_running(mid)
            assert arena.node.summary(mid).state is MatchState.FINISHED

    arun(main())


def test_list_matches_shows_the_running_and_the_latest_finished_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(node_module, "RECENT_SUMMARIES", 3)

    async def main() -> None:
        async with local_arena(time=FAST) as arena:
            team0, team1 = await connect_pair(arena)
            played = [(await arena.play(team0, team1, "coinche", seed=i, deals=1)).match_id for i in range(5)]
            async with arena_stub(arena.address) as stub:
                listed = await stub.ListMatches(apb.ListMatchesRequest())
                assert [m.match_id for m in listed.matches] == played[-3:]
                # an older match is no longer listed, but still served from the store
                first = played[0]
                got = await stub.GetMatch(apb.GetMatchRequest(match_id=first))
                assert got.match.state == "finished" and got.match.deals_played == 1
                record = await stub.GetMatchRecord(apb.GetMatchRecordRequest(match_id=first))
                assert first in record.record_json
                stream = await collect(stub.WatchMatch(apb.WatchMatchRequest(match_id=first)))
                assert stream[0].event.WhichOneof("event") == "deal_started"
                assert stream[-1].result.reason == "finished"

    arun(main())


def test_a_node_without_a_data_folder_keeps_only_the_latest_records() -> None:
    store = MatchStore(None)
    ids = [f"m-{i:04d}" for i in range(MEMORY_RECORDS + 50)]
    for match_id in ids:
        store.put(synthetic_record(match_id, "alpha", "beta", (501, 320), 0))
    assert store.ids() == sorted(ids[50:])
    assert store.get(ids[0]) is None
    kept = store.get(ids[-1])
    assert kept is not None and kept.totals == (501, 320)
    assert store.latest(2) == ids[-2:]


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts open files in /proc/self/fd")
def test_the_file_store_holds_no_file_open(tmp_path: Path) -> None:
    store = MatchStore(tmp_path / "matches")
    before = len(os.listdir("/proc/self/fd"))
    for i in range(200):
        store.put(synthetic_record(f"m-{i:04d}", "alpha", "beta", (501, 320), 0))
        assert store.get(f"m-{i:04d}") is not None
    store.latest(10)
    assert len(os.listdir("/proc/self/fd")) == before
    assert not [p for p in (tmp_path / "matches").iterdir() if p.name.startswith(".")], "no temporary left"


def test_a_damaged_record_gets_a_clear_status_and_the_node_goes_on(tmp_path: Path) -> None:
    (tmp_path / "matches").mkdir()
    (tmp_path / "matches" / "m-damaged.json").write_text('{"match_id": "m-damaged", "deals": [')

    async def main() -> None:
        async with node_server(NodeConfig(data_dir=tmp_path, time=FAST)) as (_, address), \
                arena_stub(address) as stub:
            calls: list[Callable[[], Awaitable[Any]]] = [  # one after the other, as one reader reads
                lambda: stub.GetMatch(apb.GetMatchRequest(match_id="m-damaged")),
                lambda: stub.GetMatchRecord(apb.GetMatchRecordRequest(match_id="m-damaged")),
                lambda: collect(stub.WatchMatch(apb.WatchMatchRequest(match_id="m-damaged"))),
            ]
            for call in calls:
                with pytest.raises(grpc.aio.AioRpcError) as info:
                    await call()
                assert info.value.code() == grpc.StatusCode.FAILED_PRECONDITION
                assert "m-damaged is damaged" in (info.value.details() or "")
            assert (await stub.ListMatches(apb.ListMatchesRequest())).matches == []

    arun(main())


@pytest.mark.security
@pytest.mark.parametrize("match_id", ["m-\x00", "../bots", "/etc/passwd", ".m-hidden", "m" * 500, "m-é"])
def test_a_match_id_that_is_not_a_file_name_is_not_found(match_id: str, tmp_path: Path) -> None:
    async def main() -> None:
        async with node_server(NodeConfig(data_dir=tmp_path, time=FAST)) as (_, address), \
                arena_stub(address) as stub:
            for call in (stub.GetMatch(apb.GetMatchRequest(match_id=match_id)),
                         stub.GetMatchRecord(apb.GetMatchRecordRequest(match_id=match_id))):
                with pytest.raises(grpc.aio.AioRpcError) as info:
                    await call
                assert info.value.code() == grpc.StatusCode.NOT_FOUND

    arun(main())


@pytest.mark.security
@pytest.mark.parametrize(("request_fields", "message"), [
    ({"deals": 1001}, "deals must be 1 to 1000"),
    ({"target": 10_001}, "target must be 1 to 10000"),
    ({"ruleset": '{"preset": "coinche", "deals": 5000}'}, "deals must be 1 to 1000"),
    ({"ruleset": '{"preset": "classic", "target": 1000000}'}, "target must be 1 to 10000"),
], ids=["deals", "target", "deals in the ruleset", "target in the ruleset"])
def test_a_match_too_long_to_keep_in_memory_is_refused(request_fields: dict[str, Any], message: str) -> None:
    async def main() -> None:
        async with local_arena(time=FAST) as arena:
            team0, team1 = await connect_pair(arena)
            async with arena_stub(arena.address, arena.admin_token) as stub:
                with pytest.raises(grpc.aio.AioRpcError) as info:
                    await stub.StartMatch(apb.StartMatchRequest(
                        team0_bot=team0, team1_bot=team1, **{"ruleset": "coinche", **request_fields}))
            assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert message in (info.value.details() or "")
            assert arena.node.summaries() == []

    arun(main())


def test_an_aborted_match_is_watched_as_its_result_and_may_be_played_again() -> None:
    """A drained match goes back to the queue: the same node may be the one that plays it again."""
    async def main() -> None:
        async with local_arena(time=FAST) as arena:
            await arena.connect("alpha", DelayBot(0.01, HeuristicBot(1)))
            await arena.connect("beta", DelayBot(0.01, HeuristicBot(2)))
            mid = arena.node.start_match("alpha", "beta", "coinche", seed=1, deals=3, match_id="t1-r1-0")
            await until(lambda: arena.node.summary(mid).deals_played >= 1, what="a deal played")
            assert arena.node.cancel_match(mid)
            assert (await arena.node.wait(mid)).result.reason is ResultReason.ABORTED
            stub: agrpc.ArenaServiceAsyncStub
            async with arena_stub(arena.address) as stub:
                [only] = await collect(stub.WatchMatch(apb.WatchMatchRequest(match_id=mid)))
                assert only.result.reason == "aborted" and not only.HasField("event")
            await until(lambda: all(b.seats_in_use == 0 for b in arena.node.bots()), what="seats freed")
            arena.node.start_match("alpha", "beta", "coinche", seed=1, deals=1, match_id=mid)
            again = await asyncio.wait_for(arena.node.wait(mid), 20)
            assert again.result.reason is ResultReason.FINISHED
            assert arena.node.summary(mid).state is MatchState.FINISHED

    arun(main())


def test_a_watcher_that_reads_after_the_end_still_gets_every_event_then_the_end() -> None:
    """A watcher holds only its place in the match's events: it may read late, or not at all."""
    async def main() -> None:
        async with local_arena(time=FAST) as arena:
            await arena.connect("alpha", DelayBot(0.002, HeuristicBot(1)))
            await arena.connect("beta", DelayBot(0.002, HeuristicBot(2)))
            mid = arena.node.start_match("alpha", "beta", "coinche", seed=4, deals=3)
            await until(lambda: arena.node.summary(mid).deals_played >= 1, what="a deal played")
            watchers = [arena.node.watch(mid) for _ in range(100)]  # none of them reads yet
            record = await arena.node.wait(mid)
            assert not arena.node.is_running(mid)
            expected = list(public_events(record))
            for so_far, feed in watchers[:3]:
                assert feed is not None
                seen = list(so_far)
                while (event := await feed.get()) is not None:
                    seen.append(event)
                assert seen == expected
                assert await feed.get() is None

    arun(main())
