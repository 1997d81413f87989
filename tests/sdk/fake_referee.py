"""A scripted stand-in for the referee's BotService, on loopback over real gRPC.

Each stream runs ``script(referee, stream)``; ``stream`` reads the bot's
messages and writes the referee's. The real referee's tests come with it; this
one exercises the SDK's client alone.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc
import grpc.aio
from belote.arena.v1 import bot_service_pb2 as bs
from belote.arena.v1 import bot_service_pb2_grpc as bgrpc

from arena.engine import Deal
from arena.referee.convert import observation_to_proto


class Stream:
    def __init__(self, context: Any, hello: bs.Hello, metadata: dict[str, str]) -> None:
        self.context = context
        self.hello = hello
        self.metadata = metadata
        self.pings = 0
        #: answers that came in a batch and were not asked for yet
        self.batched: list[bs.ActionReply] = []
        #: how many answers came in each message that carried any
        self.reply_batches: list[int] = []

    async def send(self, **fields: Any) -> None:
        await self.context.write(bs.ConnectResponse(**fields))

    async def reply(self) -> bs.ActionReply:
        """The bot's next answer, alone or from a batch (pings are counted and skipped)."""
        while not self.batched:
            msg = await self.context.read()
            assert msg is not grpc.aio.EOF, "the bot closed the stream"
            if msg.HasField("ping"):
                self.pings += 1
                continue
            replies = ([msg.action_reply] if msg.HasField("action_reply") else []) + list(msg.action_replies)
            assert replies, msg
            self.reply_batches.append(len(replies))
            self.batched.extend(replies)
        return self.batched.pop(0)

    async def drain(self) -> None:
        """Read (and count pings) until the bot goes away."""
        while True:
            msg = await self.context.read()
            if msg is grpc.aio.EOF:
                return
            if msg.HasField("ping"):
                self.pings += 1


Script = Callable[["FakeReferee", Stream], Awaitable[None]]


class FakeReferee(bgrpc.BotServiceServicer):
    def __init__(self, script: Script) -> None:
        self.script = script
        self.streams: list[Stream] = []
        self.finished = asyncio.Event()

    async def Connect(  # type: ignore[override]
        self, request_iterator: AsyncIterator[bs.ConnectRequest], context: Any,
    ) -> None:
        first = await context.read()
        assert first.HasField("hello")
        stream = Stream(context, first.hello, {k: v for k, v in context.invocation_metadata()})
        self.streams.append(stream)
        await self.script(self, stream)


async def start(referee: FakeReferee) -> tuple[grpc.aio.Server, str]:
    server = grpc.aio.server()
    bgrpc.add_BotServiceServicer_to_server(referee, server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    return server, f"127.0.0.1:{port}"


def request(deal: Deal, request_id: int, match_id: str = "m1") -> bs.ActionRequest:
    msg, legal = observation_to_proto(deal, deal.to_act)
    return bs.ActionRequest(request_id=request_id, match_id=match_id, seat=deal.to_act, observation=msg,
                            legal_actions=legal, deadline_ms=1000, time_bank_ms=5000)
