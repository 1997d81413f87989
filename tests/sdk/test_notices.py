"""A referee's notice to the bot's author (``ConnectResponse.notice``: e.g. the bot is paused from the
ladder, and why): the SDK logs it once, as a warning, however many times and streams repeat it; an SDK
of before the field skips it and plays on."""

from __future__ import annotations

import logging

import pytest
from belote.arena.v1 import bot_service_pb2 as bs
from belote_bot import RandomBot
from belote_bot.client import Client
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from arena.engine import Match, Ruleset

from .fake_referee import FakeReferee, Stream, request
from .test_client import arun, pb_welcome, play_until_finished

PAUSED = bs.Notice(kind="ladder_paused", until=1_900_000_000,
                   text="recorder is paused from the ladder for 60 s, until 12:00:00 UTC: 2 of its last 2 "
                        "ladder matches ended in its forfeit")


async def tell_twice_then_again(referee: FakeReferee, stream: Stream) -> None:
    """The first stream: the notice twice, then the referee ends it; the second: the same notice again (a
    node tells each new stream), another one, then a request the bot must still answer."""
    await stream.send(welcome=pb_welcome())
    await stream.send(notice=PAUSED)
    if len(referee.streams) == 1:
        await stream.send(notice=PAUSED)
        return
    await stream.send(notice=bs.Notice(kind="ladder_paused", until=PAUSED.until + 120, text="paused again"))
    deal = Match(Ruleset.from_spec("classic"), seed=3).new_deal()
    await stream.send(action_request=request(deal, 7))
    assert (await stream.reply()).action in deal.legal_actions()
    referee.finished.set()
    await stream.drain()


def test_a_notice_is_logged_once_as_a_warning_however_often_it_comes(
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, "belote_bot")
    referee = FakeReferee(tell_twice_then_again)
    arun(play_until_finished(referee, Client(RandomBot(), token="t")))
    assert len(referee.streams) == 2
    told = [r for r in caplog.records if r.name == "belote_bot" and "the referee says" in r.getMessage()]
    assert [r.levelno for r in told] == [logging.WARNING, logging.WARNING]
    assert told[0].getMessage() == f"the referee says (ladder_paused): {PAUSED.text}"
    assert told[1].getMessage() == "the referee says (ladder_paused): paused again"


def older_connect_response() -> type:
    """``ConnectResponse`` as an SDK built before the notice field knows it: the same file, without it."""
    file = descriptor_pb2.FileDescriptorProto()
    bs.DESCRIPTOR.CopyToProto(file)
    message = next(m for m in file.message_type if m.name == "ConnectResponse")
    kept = [f for f in message.field if f.name != "notice"]
    del message.field[:]
    message.field.extend(kept)
    pool = descriptor_pool.DescriptorPool()  # a pool of its own: the same names, the older message
    game = descriptor_pb2.FileDescriptorProto()
    bs.DESCRIPTOR.dependencies[0].CopyToProto(game)
    pool.Add(game)
    pool.Add(file)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("belote.arena.v1.ConnectResponse"))


def test_an_sdk_of_before_the_notice_reads_it_as_nothing_to_do() -> None:
    """The bytes of a notice, read with the message as an older SDK knows it: no part it would act on
    (no oneof set, no event, no request), so its loop goes on to the next message; and read back by this
    SDK, the notice is there."""
    wire = bs.ConnectResponse(notice=PAUSED).SerializeToString()
    older = older_connect_response()()
    older.ParseFromString(wire)
    assert older.WhichOneof("message") is None
    assert not older.events and not older.action_requests
    assert bs.ConnectResponse.FromString(older.SerializeToString()).notice == PAUSED  # kept as unknown
