"""Four different bots at one table over real gRPC: partners that are different bots.

Each bot plays its own seat over its own stream; the record says who sat
where; strikes count per side, and a side forfeits for either of its bots.
"""

from __future__ import annotations

import grpc
import pytest
from belote.arena.v1 import arena_service_pb2 as apb
from belote_bot import HeuristicBot, RandomBot

from arena.harness import local_arena
from arena.records import MatchRecord, ResultReason
from arena.referee.node import InvalidArgument, check_seats

from .arena_helpers import FAST, RecordingBot, ScriptedBot, after, arena_stub, arun, until

NAMES = ("north", "east", "south", "west")


def test_four_different_bots_each_play_their_own_seat() -> None:
    bots = {name: RecordingBot(HeuristicBot(i) if i % 2 else RandomBot(i)) for i, name in enumerate(NAMES)}

    async def main() -> MatchRecord:
        async with local_arena(time=FAST) as arena:
            for name, bot in bots.items():
                await arena.connect(name, bot, concurrency=2)
            record = await arena.play_seated(NAMES, "coinche", seed=21, deals=2)
            assert all(b.seats_in_use == 0 for b in arena.node.bots())
            # the end of the match reaches each bot's stream after the record is written
            await until(lambda: all(b.results for b in bots.values()), what="every bot to hear the end")
            return record

    record = arun(main())
    assert record.result.reason is ResultReason.FINISHED
    assert record.players == NAMES
    assert [(b.seat, b.name) for b in record.bots] == list(enumerate(NAMES))
    assert record.team_names() == ("north+south", "east+west")
    assert record.is_mixed
    assert MatchRecord.from_json(record.to_json()) == record
    match, _ = record.replay()
    assert tuple(match.totals) == record.totals
    for seat, name in enumerate(NAMES):
        seen = bots[name].seen
        assert seen and {obs.seat for obs in seen} == {seat}  # each bot is asked for its seat only
        assert bots[name].results  # and told the match ended


def test_a_bot_may_hold_both_seats_of_its_side_beside_a_mixed_side() -> None:
    async def main() -> MatchRecord:
        async with local_arena(time=FAST) as arena:
            for i, name in enumerate(("solo", "east", "west")):
                await arena.connect(name, HeuristicBot(i), concurrency=2)
            match_id = arena.node.start_match("", "", "coinche", seats=["solo", "east", "solo", "west"],
                                              seed=3, deals=1)
            solo = next(b for b in arena.node.bots() if b.name == "solo")
            assert solo.seats_in_use == 2
            return await arena.node.wait(match_id)

    record = arun(main())
    assert record.team_names() == ("solo", "east+west")
    assert record.result.reason is ResultReason.FINISHED


def test_strikes_count_per_side_and_either_partner_forfeits_it() -> None:
    # west (seat 3) answers illegally every time; east, its partner, plays well: the side's
    # strikes are west's alone, and at the limit side 1 forfeits, naming west's seat
    west = ScriptedBot(lambda n, obs: after(0, "not-an-action"))
    east = RecordingBot(HeuristicBot(1))

    async def main() -> MatchRecord:
        async with local_arena(time=FAST) as arena:
            await arena.connect("north", HeuristicBot(0), concurrency=2)
            await arena.connect("east", east, concurrency=2)
            await arena.connect("south", HeuristicBot(2), concurrency=2)
            await arena.connect("west", west, concurrency=2)
            record = await arena.play_seated(NAMES, "coinche", seed=5, deals=3)
            # the strike that forfeits reaches west's stream after the record is written
            await until(lambda: len(west.strikes) == FAST.max_strikes, what="west to hear its strikes")
            return record

    record = arun(main())
    assert record.result.reason is ResultReason.FORFEIT
    assert record.result.winner == 0
    assert record.result.forfeit_seat == 3
    assert {s.seat for s in record.strikes} == {3}
    assert len(record.strikes) == FAST.max_strikes
    assert len(west.strikes) == FAST.max_strikes and not east.strikes


@pytest.mark.parametrize(("team0", "team1", "seats", "why"), [
    ("a", "b", ["a", "b", "c", "d"], "not both"),
    ("", "", ["a", "b", "c"], "4 seats"),
    ("", "", ["a", "b", "c", "d", "e"], "4 seats"),
    ("", "", ["a", "b", "", "d"], "every seat"),
    ("", "", ["a", "b", "b", "d"], "both sides"),
    ("", "", ["a", "a", "a", "b"], "both sides"),
])
def test_seatings_that_are_refused(team0: str, team1: str, seats: list[str] | None, why: str) -> None:
    with pytest.raises(InvalidArgument, match=why):
        check_seats(team0, team1, seats)


def test_seatings_that_are_legal() -> None:
    assert check_seats("a", "b", None) == ["a", "b", "a", "b"]
    assert check_seats("a", "a", None) == ["a", "a", "a", "a"]  # a mirror match, as before
    assert check_seats("", "", ["a", "a", "a", "a"]) == ["a", "a", "a", "a"]
    assert check_seats("", "", ["a", "b", "c", "b"]) == ["a", "b", "c", "b"]


def test_start_match_takes_seat_bots_over_grpc_and_refuses_bad_ones() -> None:
    async def main() -> None:
        async with local_arena(time=FAST) as arena:
            for i, name in enumerate(NAMES):
                await arena.connect(name, HeuristicBot(i), concurrency=2)
            async with arena_stub(arena.address, arena.admin_token) as stub:
                for bad in (
                    apb.StartMatchRequest(team0_bot="north", seat_bots=list(NAMES)),
                    apb.StartMatchRequest(seat_bots=list(NAMES[:3])),
                    apb.StartMatchRequest(seat_bots=["north", "east", "east", "west"]),
                ):
                    with pytest.raises(grpc.aio.AioRpcError) as err:
                        await stub.StartMatch(bad)
                    assert err.value.code() is grpc.StatusCode.INVALID_ARGUMENT
                reply = await stub.StartMatch(apb.StartMatchRequest(
                    seat_bots=list(NAMES), ruleset="coinche", seed="grpc", deals=1))
                record = await arena.node.wait(reply.match_id)
                assert record.players == NAMES
                await until(lambda: all(b.seats_in_use == 0 for b in arena.node.bots()))

    arun(main())
