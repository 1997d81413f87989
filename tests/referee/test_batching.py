"""Several decisions per message: the outbox's writer, its order, its watchdog, and batches over gRPC.

A bot that plays many seats over one stream often has several requests pending
at once; the node sends them in one ``ConnectResponse.action_requests`` and
accepts answers batched in ``ConnectRequest.action_replies``. What a bot sees
before a request never changes: the events queued before it come first, and no
other message is moved across requests or events.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import grpc
import grpc.aio
import pytest
from belote.arena.v1 import bot_service_pb2 as bpb
from belote.arena.v1 import bot_service_pb2_grpc as bgrpc
from belote.arena.v1 import game_pb2 as pb
from belote_bot import HeuristicBot, RandomBot

from arena.engine.actions import PASS
from arena.harness import local_arena
from arena.referee.runner import TimeControl
from arena.referee.sessions import BotDisconnected, BotLink, Hub

from .arena_helpers import arun, link_of, until


# ------------------------------------------------------------ the outbox
def event(n: int) -> pb.PublicEvent:
    return pb.PublicEvent(match_id="m", deal_index=n, action_played=pb.ActionPlayed(seat=n % 4, action=n))


def request(rid: int) -> bpb.ActionRequest:
    return bpb.ActionRequest(request_id=rid, match_id="m", seat=rid % 4, legal_actions=[rid, rid + 1],
                             observation=pb.Observation(seat=rid % 4, hand=0xF0F0 + rid, bids=[65536]))


def ended(seat: int) -> bpb.ConnectResponse:
    return bpb.ConnectResponse(match_ended=bpb.MatchEnded(match_id="m", seat=seat))


class Recorder:
    """A stream that takes every write at once and keeps the messages, parsed."""

    def __init__(self) -> None:
        self.messages: list[bpb.ConnectResponse] = []

    async def write(self, data: bytes) -> None:
        assert isinstance(data, bytes)
        self.messages.append(bpb.ConnectResponse.FromString(data))


async def attached(write: Any, write_timeout: float = 10.0) -> BotLink:
    link = BotLink("b", "bot", write_timeout)
    link.attach(write, name="bot", version="", concurrency=8)
    return link


async def settle() -> None:
    for _ in range(10):
        await asyncio.sleep(0)


def test_the_requests_pending_at_once_go_out_in_one_message_with_the_events_in_front() -> None:
    async def main() -> list[bpb.ConnectResponse]:
        rec = Recorder()
        link = await attached(rec.write)
        await settle()
        link.queue_event(event(1))
        link.post_request(request(1))
        link.queue_event(event(2))
        link.post_request(request(2))
        link.post_request(request(3))
        await settle()
        link.queue_event(event(3))
        link.post_request(request(4))  # alone: the single field
        await settle()
        return rec.messages

    first, second = arun(main())
    assert first == bpb.ConnectResponse(events=[event(1), event(2)],
                                        action_requests=[request(1), request(2), request(3)])
    assert first.WhichOneof("message") is None
    assert second == bpb.ConnectResponse(events=[event(3)], action_request=request(4))


def test_no_message_is_moved_across_requests_or_events() -> None:
    """Other kinds end a batch; events queued after a message never ride in front of it."""

    async def main() -> tuple[list[bpb.ConnectResponse], BotLink]:
        rec = Recorder()
        link = await attached(rec.write)
        await settle()
        start = bpb.ConnectResponse(match_started=bpb.MatchStarted(match_id="m", seat=0))
        link.post(start)
        link.queue_event(event(1))
        link.post_request(request(1))
        link.post(bpb.ConnectResponse(strike=bpb.Strike(match_id="m", request_id=1)))
        link.queue_event(event(2))
        link.post_request(request(2))
        link.post_request(request(3))
        link.post(ended(0))
        link.queue_event(event(3))  # after the last message: it waits for the next one
        await settle()
        return rec.messages, link

    messages, link = arun(main())
    assert [m.WhichOneof("message") for m in messages] == [
        "match_started", "action_request", "strike", None, "match_ended"]
    assert [list(m.events) for m in messages] == [[], [event(1)], [], [event(2)], []]
    assert list(messages[3].action_requests) == [request(2), request(3)]
    assert link.messages_sent == 5


def test_a_flush_sends_the_events_alone_and_merges_into_a_message_that_follows() -> None:
    async def main() -> list[bpb.ConnectResponse]:
        rec = Recorder()
        link = await attached(rec.write)
        await settle()
        link.queue_event(event(1))
        await settle()
        assert rec.messages == []  # an event alone wakes nothing
        link.flush()
        await settle()
        link.queue_event(event(2))
        link.flush()
        link.queue_event(event(3))
        link.post_request(request(7))  # the flush merges into the request's message
        await settle()
        link.flush()  # nothing queued: no message
        await settle()
        return rec.messages

    first, second = arun(main())
    assert first == bpb.ConnectResponse(events=[event(1)], flush=bpb.Flush())
    assert second == bpb.ConnectResponse(events=[event(2), event(3)], action_request=request(7))


def test_drained_waits_for_the_writes_and_a_detached_stream_drops_its_outbox() -> None:
    async def main() -> None:
        gate = asyncio.Event()
        rec = Recorder()

        async def slow(data: bytes) -> None:
            await gate.wait()
            await rec.write(data)

        link = await attached(slow)
        link.post(ended(0))
        waiter = asyncio.ensure_future(link.drained())
        await settle()
        assert not waiter.done()
        gate.set()
        await asyncio.wait_for(waiter, 1)
        assert len(rec.messages) == 1
        gate.clear()
        link.post(ended(1))
        link.queue_event(event(1))
        waiter = asyncio.ensure_future(link.drained())
        await settle()
        link.detach(1)
        await asyncio.wait_for(waiter, 1)  # the stream is gone: nothing left to wait for
        assert not link.connected
        await link.drained()

    arun(main())


def test_a_write_blocked_longer_than_the_write_timeout_cuts_the_stream() -> None:
    async def main() -> float:
        hub = Hub(write_timeout=0.1)
        link = hub.link("b", "sink")
        handler_cancelled = asyncio.Event()

        async def never(data: bytes) -> None:
            await asyncio.Event().wait()  # the bot stopped reading: the write never completes

        async def handler() -> None:
            link.attach(never, name="sink", version="", concurrency=2)
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                handler_cancelled.set()
                raise

        task = asyncio.ensure_future(handler())
        await until(lambda: link.connected, what="the stream")
        loop = asyncio.get_running_loop()
        start = loop.time()
        with pytest.raises(BotDisconnected):
            await hub.ask(link, request(1), timeout=30)
        elapsed = loop.time() - start
        await asyncio.wait_for(handler_cancelled.wait(), 1)
        assert task.cancelled() or task.done()
        assert not link.connected
        return elapsed

    elapsed = arun(main())
    assert 0.1 <= elapsed < 3.0  # cut after the write timeout, long before the request's own 30 s


# ------------------------------------------------------------ over gRPC
def choose(req: bpb.ActionRequest) -> int:
    """The first legal action; the first after pass while nobody has bid (so cards get played)."""
    legal = req.legal_actions
    if legal[0] == PASS and len(legal) > 1 and all(b == PASS for b in req.observation.bids):
        return int(legal[1])
    return int(legal[0])


class BatchingBot:
    """A raw stream that answers in batches: every 5 ms, all the requests read meanwhile, in one
    ``action_replies`` message (never the single field). It keeps every message it reads."""

    def __init__(self, address: str, token: str, concurrency: int) -> None:
        self.channel = grpc.aio.insecure_channel(address)
        self.call = bgrpc.BotServiceStub(self.channel).Connect()
        self.token = token
        self.concurrency = concurrency
        self.messages: list[bpb.ConnectResponse] = []
        self.pending: list[bpb.ActionRequest] = []
        self.answered = 0
        self.reply_messages = 0

    async def run(self) -> None:
        await self.call.write(bpb.ConnectRequest(hello=bpb.Hello(token=self.token,
                                                                 concurrency=self.concurrency)))
        reader = asyncio.ensure_future(self._read())
        try:
            while not reader.done():
                await asyncio.sleep(0.005)
                if self.pending:
                    batch, self.pending = self.pending, []
                    await self.call.write(bpb.ConnectRequest(action_replies=[
                        bpb.ActionReply(request_id=r.request_id, action=choose(r)) for r in batch]))
                    self.answered += len(batch)
                    self.reply_messages += 1
        finally:
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, grpc.aio.AioRpcError):
                await reader

    async def _read(self) -> None:
        while True:
            msg = await self.call.read()
            if not isinstance(msg, bpb.ConnectResponse):
                return
            self.messages.append(msg)
            if msg.HasField("action_request"):
                self.pending.append(msg.action_request)
            self.pending.extend(msg.action_requests)

    async def close(self) -> None:
        self.call.cancel()
        await self.channel.close(grace=None)


def test_a_bot_with_many_seats_gets_requests_in_batches_and_may_answer_in_batches() -> None:
    tc = TimeControl(deadline=5.0, time_bank=5.0, max_strikes=3, grace=5.0)
    matches = 8

    async def main() -> tuple[list[Any], list[BatchingBot]]:
        async with local_arena(time=tc) as arena:
            bots = []
            for name in ("alpha", "beta"):
                _, token = arena.node.register_bot(name)
                bots.append(BatchingBot(arena.address, token, 2 * matches))
            tasks = [asyncio.ensure_future(b.run()) for b in bots]
            try:
                links = [link_of(arena.node, n) for n in ("alpha", "beta")]
                await until(lambda: all(link.connected for link in links), what="the bots")
                ids = [arena.node.start_match("alpha", "beta", "coinche", seed=i, deals=1)
                       for i in range(matches)]
                states = await asyncio.gather(*(arena.node.wait(mid) for mid in ids))
            finally:
                for b in bots:
                    await b.close()
                await asyncio.gather(*tasks, return_exceptions=True)
            return states, bots

    states, bots = arun(main())
    decisions = 0
    for state in states:
        assert state.result.reason == "finished", state.result
        assert state.strikes == ()
        decisions += sum(len(d) for d in state.latencies_us)
    assert sum(b.answered for b in bots) == decisions
    batches = [len(m.action_requests) for b in bots for m in b.messages]
    assert max(batches) >= 2, "no two requests ever shared a message"
    # a batch message carries requests only: the single field and the other kinds stay apart
    assert all(not m.WhichOneof("message") for b in bots for m in b.messages if m.action_requests)
    assert sum(b.reply_messages for b in bots) < decisions  # the replies went in batches too


def test_sdk_bots_with_many_seats_play_batched_requests_without_a_strike() -> None:
    tc = TimeControl(deadline=5.0, time_bank=5.0, max_strikes=3, grace=5.0)
    matches = 12

    async def main() -> tuple[list[Any], list[BotLink]]:
        async with local_arena(time=tc) as arena:
            await arena.connect("alpha", HeuristicBot(1), concurrency=2 * matches)
            await arena.connect("beta", RandomBot(2), concurrency=2 * matches)
            ids = [arena.node.start_match("alpha", "beta", "classic", seed=i, deals=2)
                   for i in range(matches)]
            states = await asyncio.gather(*(arena.node.wait(mid) for mid in ids))
            links = [link_of(arena.node, n) for n in ("alpha", "beta")]
            return states, links

    states, links = arun(main())
    decisions = 0
    for state in states:
        assert state.result.reason == "finished", state.result
        assert state.strikes == ()
        decisions += sum(len(d) for d in state.latencies_us)
    # fewer messages than decisions each way: requests and replies shared messages
    assert sum(link.messages_sent for link in links) < decisions
    assert sum(link.messages_received for link in links) < decisions
