"""The client and batches: several requests in one message, several answers in one message."""

from __future__ import annotations

import asyncio
from typing import Any

from belote.arena.v1 import bot_service_pb2 as bs
from belote.arena.v1 import game_pb2 as pb
from belote_bot import Event, Observation, RandomBot
from belote_bot.client import Client

from arena.engine import Match, Ruleset, format_action

from .fake_referee import FakeReferee, Stream, request
from .test_client import arun, pb_welcome, play_until_finished


class Logger(RandomBot):
    def __init__(self) -> None:
        super().__init__(seed=3)
        self.log: list[Any] = []

    def act(self, obs: Observation) -> Any:
        self.log.append(("act", obs.request_id))
        return super().act(obs)

    def on_event(self, event: Event) -> None:
        self.log.append(("event", event.deal_index))


def played(deal_index: int) -> pb.PublicEvent:
    return pb.PublicEvent(match_id="m1", deal_index=deal_index, action_played=pb.ActionPlayed(
        seat=0, action=65536, text=format_action(65536)))


async def batches(referee: FakeReferee, stream: Stream) -> None:
    await stream.send(welcome=pb_welcome())
    deal = Match(Ruleset.from_spec("coinche"), seed=5).new_deal()
    legal = set(deal.legal_actions())
    await stream.send(events=[played(7), played(8)],
                      action_requests=[request(deal, rid) for rid in (1, 2, 3)])
    first = [await stream.reply() for _ in range(3)]
    await stream.send(action_request=request(deal, 4))  # the single field still works
    last = await stream.reply()
    referee.replies = [*first, last]  # type: ignore[attr-defined]
    referee.legal = legal  # type: ignore[attr-defined]
    referee.finished.set()
    await stream.drain()


def test_a_batch_of_requests_is_answered_after_its_events_and_in_one_message() -> None:
    bot = Logger()
    referee = FakeReferee(batches)
    arun(play_until_finished(referee, Client(bot, token="t", concurrency=4)))
    replies: list[bs.ActionReply] = referee.replies  # type: ignore[attr-defined]
    assert [r.request_id for r in replies] == [1, 2, 3, 4]
    assert all(r.action in referee.legal for r in replies)  # type: ignore[attr-defined]
    # the events of the message first, then its requests in order
    assert bot.log == [("event", 7), ("event", 8), ("act", 1), ("act", 2), ("act", 3), ("act", 4)]
    (stream,) = referee.streams
    # the three answers ready at once shared one message; the lone one went alone
    assert stream.reply_batches == [3, 1]


async def slow_answers(referee: FakeReferee, stream: Stream) -> None:
    await stream.send(welcome=pb_welcome())
    deal = Match(Ruleset.from_spec("classic"), seed=6).new_deal()
    await stream.send(action_requests=[request(deal, rid) for rid in range(1, 9)])
    referee.replies = sorted([(await stream.reply()).request_id for _ in range(8)])  # type: ignore[attr-defined]
    referee.finished.set()
    await stream.drain()


def test_answers_that_come_at_different_times_are_all_sent() -> None:
    class Async(RandomBot):
        async def act(self, obs: Observation) -> Any:  # type: ignore[override]
            await asyncio.sleep(0.002 * (obs.request_id % 3))
            return super().act(obs)

    referee = FakeReferee(slow_answers)
    arun(play_until_finished(referee, Client(Async(seed=1), token="t", concurrency=8)))
    assert referee.replies == list(range(1, 9))  # type: ignore[attr-defined]
    (stream,) = referee.streams
    assert sum(stream.reply_batches) == 8 and len(stream.reply_batches) >= 2
