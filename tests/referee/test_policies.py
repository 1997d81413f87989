"""The referee's policies: deadlines and the time bank, strikes and fallbacks, forfeits, disconnections.

Each rule is shown by a small bot that misbehaves on cue (see ``arena_helpers``)
playing over real gRPC against the real node.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import grpc
import grpc.aio
import pytest
from belote.arena.v1 import bot_service_pb2 as bpb
from belote.arena.v1 import bot_service_pb2_grpc as bgrpc
from belote.arena.v1 import game_pb2 as gpb
from belote_bot import Action, HeuristicBot, Observation, RandomBot

from arena.engine import Ruleset, observe
from arena.engine.actions import PASS, format_action
from arena.engine.cards import PLAIN_POINTS, PLAIN_STRENGTH, TRUMP_POINTS, TRUMP_STRENGTH
from arena.engine.record import deal_from_record, replay_match
from arena.harness import local_arena
from arena.referee.runner import TimeControl

from .arena_helpers import (
    Connected,
    DelayBot,
    RawStream,
    RecordingBot,
    ScriptedBot,
    after,
    arun,
    connect_client,
    fail,
    never,
    raw_player,
    until,
)


def first_legal(obs: Observation) -> Action:
    return obs.legal_actions[0]


def test_a_bot_slower_than_the_deadline_but_within_its_bank_is_not_struck() -> None:
    tc = TimeControl(deadline=0.15, time_bank=1.0, max_strikes=3, grace=1.0)
    slow = 0.4
    bot = ScriptedBot(lambda n, obs: after(slow, first_legal(obs)) if n == 0 else None)

    async def main() -> float:
        async with local_arena(time=tc) as arena:
            await arena.connect("slow", bot)
            await arena.connect("beta", HeuristicBot(2))
            state = await arena.play("slow", "beta", "coinche", seed=8, deals=1)
            assert state.result.reason == "finished"
            assert state.strikes == ()
            assert bot.strikes == []
            assert max(state.latencies_us[0]) >= slow * 1e6
            # the node's own stalls (a loaded machine's: arena.referee.deadlines) are not charged
            return arena.node.metrics.stalls.seconds.sum

    stalled = arun(main())
    first = bot.seen[0]
    assert (first.deadline_ms, first.time_bank_ms) == (150, 1000)
    later = [obs.time_bank_ms for obs in bot.seen[1:] if obs.seat == first.seat]
    partner = [obs.time_bank_ms for obs in bot.seen[1:] if obs.seat != first.seat]
    assert later, "the slow seat had no later decision"
    spent = 1000 * (slow - tc.deadline)
    # the bank lost what went past the deadline (and a little round trip), no more (the referee
    # measures the round trip: a loaded machine adds to it, but for the node's own stalls)
    assert all(1000 - spent - 400 <= ms <= 1000 - spent + stalled * 1000 for ms in later), later
    # the bank is the seat's own: its partner's (always prompt) is not drawn on for the slow seat
    assert partner and all(ms > 1000 - spent for ms in partner), partner


def test_a_bot_slower_than_deadline_and_bank_is_struck_and_the_match_goes_on() -> None:
    tc = TimeControl(deadline=0.25, time_bank=0.1, max_strikes=3, grace=1.0)
    bot = ScriptedBot(lambda n, obs: after(0.6, first_legal(obs)) if n == 0 else None)

    async def main() -> None:
        async with local_arena(time=tc) as arena:
            await arena.connect("late", bot)
            await arena.connect("beta", HeuristicBot(2))
            state = await arena.play("late", "beta", "coinche", seed=9, deals=2)
            assert state.result.reason == "finished"
            assert state.deals_played == 2
            rec = state.to_dict()
            [logged] = rec["strikes"]
            first = bot.seen[0]
            assert logged["seat"] == first.seat and logged["deal"] == 0
            assert "no answer within" in logged["reason"] and logged["kind"] == "late"
            # the fallback of the bidding is a pass, and it is what the record holds
            assert logged["fallback"] == "pass"
            assert rec["deals"][0]["bids"][logged["decision"]] == "pass"
            assert rec["latencies_us"][0][logged["decision"]] == -1
            # the bot heard why, through its on_strike hook
            await until(lambda: bool(bot.strikes), what="the strike to reach the bot")
            [strike] = bot.strikes
            assert strike.match_id == state.match_id
            assert strike.seat == first.seat
            assert strike.request_id == first.request_id
            assert strike.reason == logged["reason"]
            assert strike.fallback_action == Action.of(PASS)
            assert (strike.strikes, strike.max_strikes) == (1, 3)
            replay_match(rec)

    arun(main())
    # its bank is spent: the seat's later decisions come with the deadline alone
    later = [obs.time_bank_ms for obs in bot.seen[1:] if obs.seat == bot.seen[0].seat]
    assert later and set(later) == {0}


def _cost(card: int, trump: int) -> tuple[int, int]:
    if card >> 3 == trump:
        return (TRUMP_POINTS[card & 7], 8 + TRUMP_STRENGTH[card & 7])
    return (PLAIN_POINTS[card & 7], PLAIN_STRENGTH[card & 7])


def test_a_late_card_is_replaced_by_the_cheapest_legal_card() -> None:
    tc = TimeControl(deadline=0.25, time_bank=0.05, max_strikes=3, grace=1.0)
    struck: list[Observation] = []

    def script(n: int, obs: Observation) -> Any:
        if obs.phase == "play" and not struck:
            struck.append(obs)
            return never()
        return None

    bot = ScriptedBot(script)

    async def main() -> None:
        async with local_arena(time=tc) as arena:
            await arena.connect("late", bot)
            await arena.connect("beta", HeuristicBot(2))
            state = await arena.play("late", "beta", "coinche", seed=4, deals=3)
            assert state.result.reason == "finished"
            [logged] = state.to_dict()["strikes"]
            obs = struck[0]
            deal_rec = state.to_dict()["deals"][obs.deal_index]
            k = logged["decision"] - len(deal_rec["bids"])
            played = deal_rec["plays"][k]
            assert played == logged["fallback"]
            # the fallback is a bare card (no belote, no declaration) ...
            assert len(played.split()) == 1
            # ... and the cheapest of the legal ones as the deal stood
            rules = Ruleset.from_spec(state.ruleset)
            before = deal_from_record({**deal_rec, "plays": deal_rec["plays"][:k]}, rules)
            legal_cards = {a & 31 for a in observe(before, obs.seat).legal_actions}
            assert {format_action(c) for c in legal_cards} == {str(a.card) for a in obs.legal_actions}
            cheapest = min(legal_cards, key=lambda c: _cost(c, before.trump))
            assert played == format_action(cheapest)

    arun(main())


def _raw_match(answer: Any, *, deals: int = 1, seed: int = 1) -> tuple[Any, list[bpb.ConnectResponse]]:
    """A match between a raw stream answering ``answer(request)`` and the heuristic."""
    tc = TimeControl(deadline=0.5, time_bank=0.5, max_strikes=3, grace=1.0)

    async def main() -> tuple[Any, list[bpb.ConnectResponse]]:
        async with local_arena(time=tc) as arena:
            _, token = arena.node.register_bot("raw")
            stream = RawStream(arena.address)
            log: list[bpb.ConnectResponse] = []
            try:
                await stream.hello(token)
                assert (await stream.read()).HasField("welcome")
                player = asyncio.ensure_future(raw_player(stream, answer, log))
                await arena.connect("beta", HeuristicBot(2))
                state = await arena.play("raw", "beta", "coinche", seed=seed, deals=deals)
                player.cancel()
            finally:
                await stream.close()
            return state, log

    result: tuple[Any, list[bpb.ConnectResponse]] = arun(main())
    return result


def _strikes(log: list[bpb.ConnectResponse]) -> list[bpb.Strike]:
    return [m.strike for m in log if m.WhichOneof("message") == "strike"]


def _requests(log: list[bpb.ConnectResponse]) -> list[bpb.ActionRequest]:
    return [m.action_request for m in log if m.WhichOneof("message") == "action_request"]


def _legal_texts(req: bpb.ActionRequest) -> list[str]:
    return [format_action(a) for a in req.legal_actions]


def _answer_once(bad: Any) -> Any:
    """Answer legally, except the first play decision, answered ``bad(request)``."""
    done: list[int] = []

    def answer(req: bpb.ActionRequest) -> int:
        if req.observation.phase == gpb.PHASE_PLAY and not done:
            done.append(req.request_id)
            code: int = bad(req)
            return code
        return req.legal_actions[0]

    return answer


def test_a_card_not_in_hand_is_a_strike_naming_the_legal_cards() -> None:
    def not_in_hand(req: bpb.ActionRequest) -> int:
        return next(c for c in range(32) if not req.observation.hand >> c & 1)

    state, log = _raw_match(_answer_once(not_in_hand), seed=2, deals=2)
    assert state.result.reason == "finished"
    [strike] = _strikes(log)
    [req] = [r for r in _requests(log) if r.request_id == strike.request_id]
    bad = format_action(not_in_hand(req))
    # everyone hears that the seat was struck; only the seat hears what it sent and what was legal
    assert (strike.kind, strike.reason) == (gpb.STRIKE_REASON_ILLEGAL, "illegal action")
    assert strike.detail == f"answered {bad!r}; legal: " + ", ".join(_legal_texts(req))
    assert format_action(strike.fallback_action) in _legal_texts(req)
    [given] = [m.strike_given for msg in log for m in msg.events if m.WhichOneof("event") == "strike_given"]
    assert (given.kind, given.reason) == (strike.kind, strike.reason)
    [logged] = state.strikes
    assert (logged.kind, logged.reason, logged.detail) == ("illegal", strike.reason, strike.detail)


def test_a_bid_during_the_play_is_a_strike_naming_the_legal_cards() -> None:
    state, log = _raw_match(_answer_once(lambda req: PASS), seed=2, deals=2)
    assert state.result.reason == "finished"
    [strike] = _strikes(log)
    [req] = [r for r in _requests(log) if r.request_id == strike.request_id]
    assert (strike.kind, strike.reason) == (gpb.STRIKE_REASON_ILLEGAL, "illegal action")
    assert strike.detail == "answered 'pass'; legal: " + ", ".join(_legal_texts(req))


def test_an_illegal_text_from_an_sdk_bot_is_struck_at_once() -> None:
    """The SDK refuses the answer locally and says so: the referee strikes without waiting."""
    # a long clock: a strike that waited for the deadline would come 10 s after the answer
    tc = TimeControl(deadline=10.0, time_bank=1.0, max_strikes=3, grace=1.0)
    bot = ScriptedBot(lambda n, obs: after(0, "pass") if obs.phase == "play" and not bot.strikes else None)

    async def main() -> float:
        async with local_arena(time=tc) as arena:
            await arena.connect("confused", bot)
            await arena.connect("beta", HeuristicBot(2))
            start = time.monotonic()
            state = await arena.play("confused", "beta", "coinche", seed=2, deals=1)
            assert state.result.reason == "finished"
            [logged] = state.strikes
            assert logged.kind == "no_action" and logged.detail.startswith("legal: ")
            await until(lambda: bool(bot.strikes), what="the strike to reach the bot")
            return time.monotonic() - start

    elapsed = arun(main())
    [strike] = bot.strikes
    obs = next(o for o in bot.seen if o.request_id == strike.request_id)
    assert strike.raw.kind == gpb.STRIKE_REASON_NO_ACTION
    assert strike.raw.detail == "legal: " + ", ".join(map(str, obs.legal_actions))
    assert elapsed < tc.deadline / 2


def test_a_bot_whose_act_raises_is_struck_at_once() -> None:
    tc = TimeControl(deadline=10.0, time_bank=1.0, max_strikes=3, grace=1.0)
    bot = ScriptedBot(lambda n, obs: fail() if n == 0 else None)

    async def main() -> None:
        async with local_arena(time=tc) as arena:
            await arena.connect("buggy", bot)
            await arena.connect("beta", RandomBot(2))
            state = await arena.play("buggy", "beta", "coinche", seed=6, deals=1)
            assert state.result.reason == "finished"
            await until(lambda: bool(bot.strikes), what="the strike to reach the bot")

    arun(main())
    [strike] = bot.strikes
    assert strike.request_id == bot.seen[0].request_id
    assert strike.reason.startswith("no action") and strike.raw.detail.startswith("legal: ")
    assert strike.fallback_action == Action.of(PASS)
    # not after the deadline: at once
    assert bot.strike_times[0] - bot.act_times[0] < tc.deadline / 2


def test_max_strikes_forfeit_the_match() -> None:
    tc = TimeControl(deadline=0.5, time_bank=0.5, max_strikes=3, grace=1.0)
    bot = ScriptedBot(lambda n, obs: fail())
    rival = RecordingBot(HeuristicBot(2))

    async def main() -> None:
        async with local_arena(time=tc) as arena:
            await arena.connect("buggy", bot)
            await arena.connect("beta", rival)
            state = await arena.play("buggy", "beta", "coinche", seed=6, deals=3)
            result = state.result
            assert result is not None
            assert result.reason == "forfeit"
            assert result.forfeit_seat in (0, 2)
            assert result.winner == 1
            assert "3 strikes" in result.detail
            assert state.deals_played == 0
            rec = state.to_dict()
            assert [s["seat"] & 1 for s in rec["strikes"]] == [0, 0, 0]
            assert rec["result"] == {"totals": [0, 0], "winner": 1, "reason": "forfeit",
                                     "detail": result.detail, "forfeit_seat": result.forfeit_seat}
            unfinished = rec["unfinished_deal"]
            assert rec["deals"] == [] and unfinished["bids"]
            deal_from_record(unfinished, Ruleset.from_spec(rec["ruleset"]))  # its actions were legal
            assert len(rec["latencies_us"]) == 1
            await until(lambda: len(bot.results) == 2 and len(rival.results) == 2, what="MatchEnded")
            assert {r.reason for r in bot.results + rival.results} == {"forfeit"}
            assert all(b.seats_in_use == 0 for b in arena.node.bots())

    arun(main())
    assert [s.strikes for s in bot.strikes] == [1, 2, 3]


def decision(obs: Observation) -> int:
    """The index of this decision in its deal (bids, then plays)."""
    return len(obs.proto.bids) + len(obs.proto.plays)


async def _disconnecting(
    arena: Any, at: int, name: str = "alpha", how: str = "stop",
) -> tuple[Connected, ScriptedBot]:
    """A bot that cuts its own stream at its decision ``at`` (and never answers it):
    it sets the stop event of its ``run`` (``how="stop"``) or cancels it (``"cancel"``)."""
    holder: list[Connected] = []

    def script(n: int, obs: Observation) -> Any:
        if n == at:
            if how == "stop":
                holder[0].stop.set()
            else:
                holder[0].task.cancel()
            return never()
        return None

    bot = ScriptedBot(script)
    conn = await connect_client(arena.node, arena.address, bot, name)
    holder.append(conn)
    return conn, bot


@pytest.mark.parametrize("how", ["stop", "cancel"])
def test_a_disconnected_bot_gets_fallbacks_without_strikes(how: str) -> None:
    tc = TimeControl(deadline=0.5, time_bank=0.5, max_strikes=3, grace=5.0)

    async def main() -> None:
        async with local_arena(time=tc) as arena:
            conn, bot = await _disconnecting(arena, at=2, how=how)
            await arena.connect("beta", HeuristicBot(2))
            state = await arena.play("alpha", "beta", "coinche", seed=12, deals=2)
            await asyncio.wait_for(asyncio.gather(conn.task, return_exceptions=True), 5)
            assert state.result.reason == "finished"
            assert state.deals_played == 2
            rec = state.to_dict()
            assert rec["strikes"] == []
            # the cut decision and every later one of the bot's seats are fallbacks (latency -1)
            cut = bot.seen[2]
            assert rec["latencies_us"][cut.deal_index][decision(cut)] == -1
            fallbacks = sum(us == -1 for deal in rec["latencies_us"] for us in deal)
            assert fallbacks > 1
            # no request reached the bot after it left
            assert len(bot.seen) == 3
            assert bot.strikes == [] and bot.results == []
            replay_match(rec)

    arun(main())


def test_a_bot_that_reconnects_within_grace_gets_its_seats_back() -> None:
    tc = TimeControl(deadline=0.5, time_bank=0.5, max_strikes=3, grace=5.0)

    async def main() -> None:
        async with local_arena(time=tc) as arena:
            first, bot = await _disconnecting(arena, at=2)
            await arena.connect("beta", DelayBot(0.02, HeuristicBot(2)))
            mid = arena.node.start_match("alpha", "beta", "coinche", seed=13, deals=2)
            entry = arena.node.bot_named("alpha")
            assert entry is not None
            link = arena.node.link_for(entry)
            await asyncio.wait_for(first.task, 5)
            await until(lambda: not link.connected, what="the stream to drop")
            assert arena.node.is_running(mid)
            back = RecordingBot(HeuristicBot(3))
            second = await connect_client(arena.node, arena.address, back, "alpha", token=first.token)
            welcome = second.client.welcome
            assert welcome is not None and welcome.resumed
            assert welcome.bot_id == first.bot_id
            state = await arena.node.wait(mid)
            assert state.result.reason == "finished"
            assert state.deals_played == 2
            rec = state.to_dict()
            assert rec is not None and rec["strikes"] == []
            # the new stream answered the seats' later decisions itself
            assert back.seen and {o.match_id for o in back.seen} == {mid}
            assert {o.seat for o in back.seen} <= {0, 2}
            latency = rec["latencies_us"]
            cut = bot.seen[2]
            assert latency[cut.deal_index][decision(cut)] == -1
            assert all(latency[o.deal_index][decision(o)] >= 0 for o in bot.seen[:2] + back.seen)
            await until(lambda: len(back.results) == 2, what="MatchEnded on the new stream")
            await second.disconnect()

    arun(main())


def test_a_bot_away_longer_than_grace_forfeits() -> None:
    tc = TimeControl(deadline=0.5, time_bank=0.5, max_strikes=3, grace=0.2)

    async def main() -> None:
        async with local_arena(time=tc) as arena:
            _, bot = await _disconnecting(arena, at=0)
            await arena.connect("beta", DelayBot(0.03, HeuristicBot(2)))
            start = time.monotonic()
            state = await arena.play("alpha", "beta", "coinche", seed=14, deals=20)
            elapsed = time.monotonic() - start
            result = state.result
            assert result is not None and result.reason == "forfeit"
            assert result.forfeit_seat in (0, 2)
            assert result.winner == 1
            assert "disconnected" in result.detail
            assert state.strikes == ()
            assert tc.grace <= elapsed < tc.grace + 5.0  # 20 deals played out would take far longer
            assert len(bot.seen) == 1 and bot.results == []

    arun(main())


def test_the_runner_never_hangs_on_a_bot_that_never_answers() -> None:
    tc = TimeControl(deadline=0.05, time_bank=0.1, max_strikes=3, grace=1.0)
    bot = ScriptedBot(lambda n, obs: never())

    async def main() -> float:
        async with local_arena(time=tc) as arena:
            await arena.connect("mute", bot)
            await arena.connect("beta", HeuristicBot(2))
            start = time.monotonic()
            state = await arena.play("mute", "beta", "coinche", seed=15, deals=3)
            elapsed = time.monotonic() - start
            assert state.result.reason == "forfeit"
            assert state.result.winner == 1
            # the third strike's message reaches the bot after the match is decided
            await until(lambda: len(bot.strikes) == 3, what="the bot to hear its three strikes")
            return elapsed

    elapsed = arun(main(), timeout=10)
    # the opponent's own decisions and a loaded machine take the slack
    assert elapsed < tc.max_strikes * (tc.deadline + tc.time_bank) + 5.0
    assert [s.strikes for s in bot.strikes] == [1, 2, 3]


def test_the_runner_never_hangs_on_a_bot_that_stops_reading_its_stream() -> None:
    """A bot connects, then reads nothing more (a stuck event loop looks the same to the node).

    Its matches must still end by strikes within max_strikes * (deadline + bank). With the
    client's window kept at 64 KiB (no BDP probing), about a hundred matches at once fill it.
    """
    tc = TimeControl(deadline=0.05, time_bank=0.05, max_strikes=3, grace=1.0)
    matches = 100

    async def main() -> int:
        async with local_arena(time=tc) as arena:
            _, token = arena.node.register_bot("sink")
            channel = grpc.aio.insecure_channel(arena.address, options=[("grpc.http2.bdp_probe", 0)])
            call = bgrpc.BotServiceStub(channel).Connect()
            try:
                await call.write(bpb.ConnectRequest(hello=bpb.Hello(token=token, concurrency=2 * matches)))
                welcome = await call.read()  # and nothing is read after this
                assert isinstance(welcome, bpb.ConnectResponse) and welcome.HasField("welcome")
                await arena.connect("beta", RandomBot(2), concurrency=2 * matches)
                ids = [arena.node.start_match("sink", "beta", "coinche", seed=i, deals=1)
                       for i in range(matches)]
                waits = [asyncio.ensure_future(arena.node.wait(mid)) for mid in ids]
                bound = tc.max_strikes * (tc.deadline + tc.time_bank)
                _, pending = await asyncio.wait(waits, timeout=bound + 2.5)
                for w in pending:
                    w.cancel()
                return len(pending)
            finally:
                call.cancel()
                await channel.close(grace=None)

    assert arun(main()) == 0


def test_two_absent_bots_do_not_make_the_runner_spin_through_thrown_in_deals() -> None:
    tc = TimeControl(deadline=0.5, time_bank=0.5, max_strikes=3, grace=0.3)

    async def main() -> Any:
        async with local_arena(time=tc) as arena:
            await _disconnecting(arena, at=0, name="alpha")
            await _disconnecting(arena, at=0, name="beta")
            return await arena.play("alpha", "beta", "coinche", seed=1)  # to the target

    state = arun(main())
    assert state.result.reason == "forfeit"
    # nobody is there to play: a few deals at most may pass while the bots are away
    assert state.deals_played <= 10
