"""Spectators: ``WatchMatch`` streams a match's public events live and ends with its result."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
import pytest
from belote.arena.v1 import arena_service_pb2 as apb
from belote.arena.v1 import game_pb2 as gpb
from belote_bot import Bot, HeuristicBot, Observation, RandomBot

from arena.harness import LocalArena, local_arena
from arena.records import MatchRecord
from arena.referee.node import NodeConfig
from arena.referee.runner import TimeControl

from .arena_helpers import (
    FAST,
    DelayBot,
    ScriptedBot,
    arena_stub,
    arun,
    connect_pair,
    fail,
    node_server,
    result_pb,
    until,
)

CALM = TimeControl(deadline=1.0, time_bank=1.0, max_strikes=3, grace=1.0)


async def read_one(call: Any) -> apb.WatchMatchResponse:
    msg = await call.read()
    assert isinstance(msg, apb.WatchMatchResponse), "the watch ended early"
    return msg


async def collect(call: Any) -> list[apb.WatchMatchResponse]:
    """Read a WatchMatch call to its end."""
    out = []
    while (msg := await call.read()) is not grpc.aio.EOF:
        out.append(msg)
    return out


def held_at_first_decision(gate: asyncio.Event, inner: Bot, first: Any = None) -> ScriptedBot:
    """A bot whose first decision waits for ``gate``: no action is played before the watchers are in."""
    async def wait_then(obs: Observation) -> Any:
        await gate.wait()
        return await first() if first is not None else inner.act(obs)

    return ScriptedBot(lambda n, obs: wait_then(obs) if n == 0 else None, inner)


async def watched_match(
    arena: LocalArena, *, watchers: int = 1, ruleset: str = "coinche", deals: int = 2, seed: str = "watch",
    first: Any = None,
) -> tuple[str, list[list[apb.WatchMatchResponse]]]:
    """Start a match over gRPC and watch it to its end.

    Both bots hold their first decision until every watcher has received the
    match's first event while the match is still running: the events come live.
    """
    gate = asyncio.Event()
    await arena.connect("alpha", held_at_first_decision(gate, HeuristicBot(1), first))
    await arena.connect("beta", held_at_first_decision(gate, RandomBot(2)))
    async with arena_stub(arena.address, arena.admin_token) as stub:
        started = await stub.StartMatch(apb.StartMatchRequest(
            team0_bot="alpha", team1_bot="beta", ruleset=ruleset, seed=seed, deals=deals))
        mid = started.match_id
        calls = [stub.WatchMatch(apb.WatchMatchRequest(match_id=mid)) for _ in range(watchers)]
        heads = [await read_one(call) for call in calls]
        assert arena.node.is_running(mid)
        assert all(_kind(h) == "deal_started" and h.event.deal_index == 0 for h in heads)
        gate.set()
        tails = await asyncio.gather(*(collect(call) for call in calls))
    return mid, [[head, *tail] for head, tail in zip(heads, tails, strict=True)]


def _kind(msg: apb.WatchMatchResponse) -> str:
    return (msg.event.WhichOneof("event") or "unknown") if msg.HasField("event") else "result"


def test_watch_match_streams_the_public_events_and_ends_with_the_result() -> None:
    async def main() -> None:
        async with local_arena(time=CALM) as arena:
            mid, [stream] = await watched_match(arena)
            state = arena.node.record(mid)
            # every message but the last is an event of this match; the last is the result alone
            *events, last = stream
            assert _kind(last) == "result" and not last.HasField("event")
            assert last.result == result_pb(state) and last.result.reason == "finished"
            assert all(m.HasField("event") and not m.HasField("result") for m in events)
            assert {m.event.match_id for m in events} == {mid}
            kinds = [_kind(m) for m in events]
            assert {"action_played", "deal_ended"} <= set(kinds)
            # each deal is seen whole: it starts, is played, its tricks complete, it ends
            for index, deal in enumerate(state.deals):
                seen = [m.event for m in events if m.event.deal_index == index]
                assert seen[0].WhichOneof("event") == "deal_started"
                assert seen[0].deal_started.dealer == deal["dealer"]
                assert seen[-1].WhichOneof("event") == "deal_ended"
                tricks = [e for e in seen if e.WhichOneof("event") == "trick_completed"]
                assert len(tricks) == len(deal["plays"]) // 4
            # each deal ends with its outcome, as the engine replays it, and the match score after it
            _, outcomes = state.replay()
            ended = [m.event.deal_ended for m in events if _kind(m) == "deal_ended"]
            assert [json.loads(e.outcome_json) for e in ended] == [o.as_json() for o in outcomes]
            assert tuple(ended[-1].match_score) == state.totals

    arun(main())


def test_the_watched_actions_are_the_record_s_bids_and_plays_in_order() -> None:
    async def main() -> None:
        async with local_arena(time=CALM) as arena:
            mid, [stream] = await watched_match(arena, ruleset="classic", deals=3)
            rec = arena.node.record(mid)
            for index, deal in enumerate(rec.deals):
                played = [m.event.action_played for m in stream
                          if _kind(m) == "action_played" and m.event.deal_index == index]
                assert [a.text for a in played] == deal["bids"] + deal["plays"]
                # the seats take turns from the seat after the dealer
                bids = played[: len(deal["bids"])]
                assert [a.seat for a in bids] == [(deal["dealer"] + 1 + i) % 4 for i in range(len(bids))]
                # a completed trick names the cards just played, and its winner leads the next one
                tricks = [m.event.trick_completed for m in stream
                          if _kind(m) == "trick_completed" and m.event.deal_index == index]
                cards = [a.action & 31 for a in played[len(deal["bids"]):]]
                for t, trick in enumerate(tricks):
                    assert list(trick.cards) == cards[4 * t: 4 * t + 4]
                    if t + 1 < len(tricks):
                        assert tricks[t + 1].leader == trick.winner

    arun(main())


def test_every_spectator_sees_the_same_events() -> None:
    async def main() -> None:
        async with local_arena(time=CALM) as arena:
            _, streams = await watched_match(arena, watchers=3, deals=1)
            assert streams[0] == streams[1] == streams[2]
            assert len(streams[0]) > 4

    arun(main())


def test_spectators_see_strikes() -> None:
    async def main() -> None:
        async with local_arena(time=CALM) as arena:
            mid, [stream] = await watched_match(arena, deals=1, first=fail)
            [given] = [m.event.strike_given for m in stream if _kind(m) == "strike_given"]
            [logged] = arena.node.record(mid).strikes
            assert given.seat == logged.seat and given.seat in (0, 2)
            # the public reason leaves out the legal choices: they would tell the seat's hand
            assert (given.reason, given.kind) == (logged.reason, gpb.STRIKE_REASON_NO_ACTION)
            assert logged.detail.startswith("legal: ") and "legal" not in given.reason
            assert given.strikes == 1

    arun(main())


def test_a_spectator_that_leaves_does_not_disturb_the_match() -> None:
    async def main() -> None:
        async with local_arena(time=FAST) as arena:
            await arena.connect("alpha", DelayBot(0.002, HeuristicBot(1)))
            await arena.connect("beta", RandomBot(2))
            mid = arena.node.start_match("alpha", "beta", "coinche", seed=1, deals=2)
            async with arena_stub(arena.address) as stub:
                call = stub.WatchMatch(apb.WatchMatchRequest(match_id=mid))
                assert _kind(await read_one(call)) == "deal_started"
                call.cancel()
                stayed = await collect(stub.WatchMatch(apb.WatchMatchRequest(match_id=mid)))
            state = await arena.node.wait(mid)
            assert state.result.reason == "finished"
            assert stayed[-1].result == result_pb(state)

    arun(main())


def test_a_late_spectator_still_sees_the_whole_match() -> None:
    async def main() -> None:
        async with local_arena(time=FAST) as arena:
            await arena.connect("alpha", DelayBot(0.002, HeuristicBot(1)))
            await arena.connect("beta", RandomBot(2))
            mid = arena.node.start_match("alpha", "beta", "coinche", seed=2, deals=3)
            await until(lambda: arena.node.summary(mid).deals_played >= 1, what="a deal played")
            async with arena_stub(arena.address) as stub:
                stream = await collect(stub.WatchMatch(apb.WatchMatchRequest(match_id=mid)))
            rec = arena.node.record(mid)
            assert _kind(stream[0]) == "deal_started" and stream[0].event.deal_index == 0
            texts = [m.event.action_played.text for m in stream if _kind(m) == "action_played"]
            assert texts == [t for deal in rec.deals for t in deal["bids"] + deal["plays"]]
            assert stream[-1].result == result_pb(rec)

    arun(main())


def test_watching_a_finished_match_gives_its_events_then_its_result() -> None:
    async def main() -> None:
        async with local_arena(time=FAST) as arena:
            team0, team1 = await connect_pair(arena)
            state = await arena.play(team0, team1, "coinche", seed=2, deals=1)
            async with arena_stub(arena.address) as stub:
                stream = await collect(stub.WatchMatch(apb.WatchMatchRequest(match_id=state.match_id)))
            *events, last = stream
            assert all(m.HasField("event") for m in events)
            assert _kind(events[0]) == "deal_started" and _kind(events[-1]) == "deal_ended"
            assert not last.HasField("event")
            assert last.result == result_pb(state)

    arun(main())


def test_watching_a_match_kept_only_on_disk_gives_its_events_then_its_result(tmp_path: Path) -> None:
    async def played() -> tuple[MatchRecord, list[apb.WatchMatchResponse]]:
        async with local_arena(data_dir=tmp_path, time=FAST) as arena:
            team0, team1 = await connect_pair(arena)
            state = await arena.play(team0, team1, "coinche", seed=3, deals=2)
            async with arena_stub(arena.address) as stub:
                return state, await collect(stub.WatchMatch(apb.WatchMatchRequest(match_id=state.match_id)))

    state, on_the_node = arun(played())

    async def watched() -> list[apb.WatchMatchResponse]:
        # a node started later on the same folder has only the record: the events are rebuilt from it
        async with node_server(NodeConfig(data_dir=tmp_path, time=FAST)) as (_, address), \
                arena_stub(address) as stub:
            return await collect(stub.WatchMatch(apb.WatchMatchRequest(match_id=state.match_id)))

    stream = arun(watched())
    assert stream == on_the_node
    *events, last = stream
    texts = [m.event.action_played.text for m in events if _kind(m) == "action_played"]
    assert texts == [t for deal in state.deals for t in deal["bids"] + deal["plays"]]
    assert last.result == result_pb(state)


@pytest.mark.parametrize("match_id", ["m-000000000000", "", "../bots"])
def test_watching_an_unknown_match_is_not_found(match_id: str) -> None:
    async def main() -> None:
        async with local_arena(time=FAST) as arena:
            async with arena_stub(arena.address) as stub:
                with pytest.raises(grpc.aio.AioRpcError) as info:
                    await collect(stub.WatchMatch(apb.WatchMatchRequest(match_id=match_id)))
            assert info.value.code() == grpc.StatusCode.NOT_FOUND

    arun(main())
