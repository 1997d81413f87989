"""Matches between SDK bots over real gRPC: they finish, and their records replay and persist."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

from belote.arena.v1 import arena_service_pb2 as apb
from belote_bot import HeuristicBot, RandomBot

from arena.engine.record import replay_match
from arena.harness import local_arena
from arena.records import MatchRecord, ResultReason
from arena.referee.node import MatchState, Node, NodeConfig
from arena.referee.service import start_server, stop_server
from arena.referee.store import MatchStore

from .arena_helpers import FAST, DelayBot, RecordingBot, arena_stub, arun, connect_client, connect_pair, until


def seats_in_use(node: Node, name: str) -> int:
    return next(b.seats_in_use for b in node.bots() if b.name == name)


def test_a_match_between_sdk_bots_finishes() -> None:
    async def main() -> None:
        async with local_arena(time=FAST) as arena:
            team0, team1 = await connect_pair(arena)
            record = await arena.play(team0, team1, "coinche", seed=11, deals=2)
            assert arena.node.summary(record.match_id).state is MatchState.FINISHED
            assert record.result.reason is ResultReason.FINISHED
            assert record.deals_played == 2
            if record.totals[0] != record.totals[1]:
                assert record.winner == (0 if record.totals[0] > record.totals[1] else 1)

    arun(main())


def test_the_record_replays_to_the_same_totals_and_winner() -> None:
    async def main() -> None:
        async with local_arena(time=FAST) as arena:
            team0, team1 = await connect_pair(arena)
            for ruleset in ("classic", "coinche", {"preset": "coinche", "must_undertrump": True}):
                record = await arena.play(team0, team1, ruleset, seed="replay", deals=2)
                match, outcomes = record.replay()
                assert tuple(match.totals) == record.totals
                assert len(outcomes) == record.deals_played
                assert match.winner == record.winner

    arun(main())


def test_the_record_holds_seed_bots_latencies_and_strikes() -> None:
    async def main() -> None:
        async with local_arena(time=FAST) as arena:
            team0, team1 = await connect_pair(arena)
            record = await arena.play(team0, team1, "coinche", seed=77, deals=2)
            rec = json.loads(record.to_json())
            assert MatchRecord.from_json(record.to_json()) == record
            assert rec["seed"] == 77
            assert rec["match_id"] == record.match_id
            assert rec["players"] == ["alpha", "beta", "alpha", "beta"]
            assert [b["name"] for b in rec["bots"]] == ["alpha", "beta", "alpha", "beta"]
            assert [b["seat"] for b in rec["bots"]] == [0, 1, 2, 3]
            ids = {b["name"]: b["bot_id"] for b in rec["bots"]}
            assert ids == {b.name: b.bot_id for b in arena.node.bots()}
            assert rec["time_control"]["deadline_s"] == FAST.deadline
            assert rec["time_control"]["max_strikes"] == FAST.max_strikes
            # one latency per decision of every deal, all answered (no fallbacks)
            assert len(rec["latencies_us"]) == len(rec["deals"]) == 2
            for deal, latencies in zip(rec["deals"], rec["latencies_us"], strict=True):
                assert len(latencies) == len(deal["bids"]) + len(deal["plays"])
                assert all(0 <= us < (FAST.deadline + FAST.time_bank) * 1e6 for us in latencies)
            assert rec["strikes"] == []
            assert rec["result"]["reason"] == "finished"
            assert rec["result"]["totals"] == list(record.totals)
            assert "unfinished_deal" not in rec

    arun(main())


def test_the_record_says_when_each_decision_was_asked() -> None:
    """What an audit needs to tell what a bot could have known at each decision (docs/records.md)."""
    async def main() -> None:
        async with local_arena(time=FAST) as arena:
            team0, team1 = await connect_pair(arena)
            before = int(time.time() * 1000)
            record = await arena.play(team0, team1, "coinche", seed=78, deals=2)
            after = int(time.time() * 1000)
            assert record.started_ms is not None and before - 1 <= record.started_ms <= after
            assert [len(d) for d in record.asked_ms] == [len(d) for d in record.latencies_us]
            asked = [ms for deal in record.asked_ms for ms in deal]
            answered_us = [us for deal in record.latencies_us for us in deal]
            assert asked[0] >= 0 and record.started_ms + asked[-1] <= after
            # each decision is asked once the one before it has been answered
            for i in range(1, len(asked)):
                assert asked[i] >= asked[i - 1] + answered_us[i - 1] // 1000 - 1
            assert MatchRecord.from_json(record.to_json()).asked_ms == record.asked_ms

    arun(main())


def test_a_bot_may_play_against_itself_on_four_seats() -> None:
    async def main() -> None:
        async with local_arena(time=FAST) as arena:
            await arena.connect("solo", HeuristicBot(1), concurrency=4)
            record = await arena.play("solo", "solo", "coinche", seed=1, deals=2)
            assert record.result.reason is ResultReason.FINISHED
            assert record.players == ("solo",) * 4
            match, _ = record.replay()
            assert tuple(match.totals) == record.totals

    arun(main())


def test_the_same_seed_deals_the_same_cards() -> None:
    async def main() -> None:
        async with local_arena(time=FAST) as arena:
            team0, team1 = await connect_pair(arena)
            first = await arena.play(team0, team1, "coinche", seed="same", deals=1)
            second = await arena.play(team1, team0, "coinche", seed="same", deals=1)
            other = await arena.play(team0, team1, "coinche", seed="other", deals=1)
            assert first.deals[0]["deck"] == second.deals[0]["deck"]
            assert first.deals[0]["deck"] != other.deals[0]["deck"]

    arun(main())


def test_get_match_record_over_grpc_is_the_match_record() -> None:
    async def main() -> None:
        async with local_arena(time=FAST) as arena:
            team0, team1 = await connect_pair(arena)
            record = await arena.play(team0, team1, "classic", seed=3, deals=2)
            async with arena_stub(arena.address) as stub:
                reply = await stub.GetMatchRecord(apb.GetMatchRecordRequest(match_id=record.match_id))
            rec = json.loads(reply.record_json)
            assert rec == record.to_dict()
            match, _ = replay_match(rec)  # the engine's replay takes the arena's record as it is
            assert tuple(match.totals) == record.totals

    arun(main())


def test_list_matches_and_get_match_show_a_finished_match() -> None:
    async def main() -> None:
        async with local_arena(time=FAST) as arena:
            team0, team1 = await connect_pair(arena)
            record = await arena.play(team0, team1, "coinche", seed=21, deals=1)
            mid = record.match_id
            async with arena_stub(arena.address) as stub:
                listed = await stub.ListMatches(apb.ListMatchesRequest())
                got = await stub.GetMatch(apb.GetMatchRequest(match_id=mid))
            assert [m.match_id for m in listed.matches] == [mid]
            for summary in (listed.matches[0], got.match):
                assert summary.match_id == mid
                assert summary.state == "finished"
                assert list(summary.players) == ["alpha", "beta", "alpha", "beta"]
                assert tuple(summary.totals) == record.totals
                assert summary.deals_played == 1
                assert summary.seed == "21"
                assert json.loads(summary.ruleset)["preset"] == "coinche"
                assert summary.result.reason == "finished"
                assert tuple(summary.result.totals) == record.totals and summary.result.deals == 1
                assert (summary.result.winner if summary.result.HasField("winner") else None) == record.winner

    arun(main())


def test_the_file_store_keeps_the_record_as_json(tmp_path: Path) -> None:
    async def main() -> str:
        async with local_arena(data_dir=tmp_path, time=FAST) as arena:
            team0, team1 = await connect_pair(arena)
            record = await arena.play(team0, team1, "coinche", seed=5, deals=2)
            mid = record.match_id
            path = tmp_path / "matches" / f"{mid}.json"
            assert path.is_file()
            assert json.loads(path.read_text()) == record.to_dict()
            return mid

    mid = arun(main())
    # a node started later on the same directory still knows the match and its bots
    node = Node(NodeConfig(data_dir=tmp_path))
    rec = node.record(mid)
    assert rec.match_id == mid
    assert [s.match_id for s in node.summaries()] == [mid]
    assert {b.name for b in node.bots()} == {"alpha", "beta"}
    match, _ = rec.replay()
    assert tuple(match.totals) == rec.totals


def test_ten_matches_at_once_all_finish_with_valid_records() -> None:
    async def main() -> None:
        async with local_arena(time=FAST) as arena:
            await arena.connect("alpha", HeuristicBot(1), concurrency=20)
            await arena.connect("beta", RandomBot(2), concurrency=20)
            ids = [arena.node.start_match("alpha", "beta", "coinche", seed=i, deals=1) for i in range(10)]
            assert len(set(ids)) == 10
            assert seats_in_use(arena.node, "alpha") == 20
            records = await asyncio.gather(*(arena.node.wait(mid) for mid in ids))
            for mid, record in zip(ids, records, strict=True):
                assert record.match_id == mid
                assert record.result.reason is ResultReason.FINISHED
                assert record.strikes == ()
                match, _ = record.replay()
                assert tuple(match.totals) == record.totals
                assert arena.node.record(mid) == record
            assert seats_in_use(arena.node, "alpha") == 0

    arun(main())


def test_a_match_started_over_grpc_runs_to_its_record() -> None:
    """Register, start and fetch over ArenaService; the bots use the tokens RegisterBot gave."""
    async def main() -> None:
        async with local_arena(time=FAST) as arena, arena_stub(arena.address, arena.admin_token) as stub:
            alpha = await stub.RegisterBot(apb.RegisterBotRequest(name="alpha"))
            beta = await stub.RegisterBot(apb.RegisterBotRequest(name="beta"))
            clients = [
                await connect_client(arena.node, arena.address, HeuristicBot(1), "alpha", token=alpha.token),
                await connect_client(arena.node, arena.address, RandomBot(2), "beta", token=beta.token),
            ]
            started = await stub.StartMatch(apb.StartMatchRequest(
                team0_bot=alpha.bot_id, team1_bot="beta", ruleset='{"preset": "coinche"}', seed="grpc",
                deals=2,
            ))
            await arena.node.wait(started.match_id)
            got = await stub.GetMatch(apb.GetMatchRequest(match_id=started.match_id))
            reply = await stub.GetMatchRecord(apb.GetMatchRecordRequest(match_id=started.match_id))
            for client in clients:
                await client.disconnect()
        assert got.match.state == "finished"
        assert got.match.result.reason == "finished"
        assert got.match.deals_played == 2
        rec = json.loads(reply.record_json)
        assert rec["seed"] == "grpc"
        assert rec["players"] == ["alpha", "beta", "alpha", "beta"]
        assert rec["bots"][0]["bot_id"] == alpha.bot_id and rec["bots"][1]["bot_id"] == beta.bot_id
        match, _ = replay_match(rec)
        assert list(match.totals) == list(got.match.totals)

    arun(main())


def test_list_bots_shows_who_is_connected_and_their_seats_in_use() -> None:
    async def main() -> None:
        async with local_arena(time=FAST) as arena:
            await arena.connect("alpha", DelayBot(0.005, HeuristicBot(1)), concurrency=4)
            await arena.connect("beta", RandomBot(2), concurrency=6)
            arena.node.register_bot("absent")
            mid = arena.node.start_match("alpha", "beta", "coinche", seed=1, deals=1)
            async with arena_stub(arena.address) as stub:
                during = {b.name: b for b in (await stub.ListBots(apb.ListBotsRequest())).bots}
                await arena.node.wait(mid)
                after = {b.name: b for b in (await stub.ListBots(apb.ListBotsRequest())).bots}
            assert sorted(during) == ["absent", "alpha", "beta"]
            assert (during["alpha"].connected, during["alpha"].concurrency, during["alpha"].seats_in_use) \
                == (True, 4, 2)
            assert (during["beta"].concurrency, during["beta"].seats_in_use) == (6, 2)
            assert not during["absent"].connected and during["absent"].seats_in_use == 0
            assert after["alpha"].seats_in_use == after["beta"].seats_in_use == 0
            assert after["alpha"].version.startswith("belote_bot/")

    arun(main())


def test_a_node_stopping_mid_match_aborts_it_without_a_winner() -> None:
    async def main() -> Any:
        async with local_arena(time=FAST) as arena:
            await arena.connect("alpha", DelayBot(0.01, HeuristicBot(1)))
            await arena.connect("beta", RandomBot(2))
            mid = arena.node.start_match("alpha", "beta", "coinche", seed=1, deals=5)
            await until(lambda: arena.node.summary(mid).deals_played >= 1, what="a deal played")
            node = arena.node
            waiting = asyncio.ensure_future(node.wait(mid))
        assert not node.is_running(mid)
        assert node.summary(mid).state is MatchState.ABORTED
        return await waiting

    record = arun(main())
    assert record.result.reason is ResultReason.ABORTED
    assert record.winner is None
    assert 1 <= record.deals_played < 5
    assert record.unfinished_deal is not None
    record.replay()


def test_a_match_the_node_cancels_ends_as_aborted_for_its_bots() -> None:
    async def main() -> None:
        async with local_arena(time=FAST) as arena:
            alpha = RecordingBot(DelayBot(0.01, HeuristicBot(1)))
            await arena.connect("alpha", alpha)
            await arena.connect("beta", RandomBot(2))
            mid = arena.node.start_match("alpha", "beta", "coinche", seed=1, deals=5)
            await until(lambda: arena.node.summary(mid).deals_played >= 1, what="a deal played")
            assert arena.node.cancel_match(mid)
            record = await arena.node.wait(mid)
            assert record.result.reason is ResultReason.ABORTED and record.winner is None
            # each seat hears that the match is over, unrecorded, without a winner
            await until(lambda: len(alpha.results) == 2, what="MatchEnded for both seats")
            assert {(r.reason, r.winner) for r in alpha.results} == {("aborted", None)}
            assert not arena.node.cancel_match(mid)
            assert seats_in_use(arena.node, "alpha") == 0
            again = await arena.play("alpha", "beta", "coinche", seed=2, deals=1)
            assert again.result.reason is ResultReason.FINISHED

    arun(main())


class FullDisk(MatchStore):
    """A store whose disk is full: every record write fails."""

    def put(self, record: MatchRecord) -> Path | None:
        raise OSError(28, "No space left on device")


def test_a_record_the_store_cannot_keep_still_reaches_the_waiters() -> None:
    async def main() -> None:
        node = Node(NodeConfig(time=FAST), store=FullDisk(None))
        server, port = await start_server(node)
        address = f"127.0.0.1:{port}"
        try:
            clients = [await connect_client(node, address, HeuristicBot(1), "alpha"),
                       await connect_client(node, address, RandomBot(2), "beta")]
            mid = node.start_match("alpha", "beta", "coinche", seed=1, deals=1)
            record = await asyncio.wait_for(node.wait(mid), 20)
            assert record.result.reason is ResultReason.FINISHED
            assert not node.is_running(mid) and node.summary(mid).state is MatchState.FINISHED
            assert seats_in_use(node, "alpha") == 0
            for client in clients:
                await client.disconnect()
        finally:
            await stop_server(server, node, grace=0.2)

    arun(main())
