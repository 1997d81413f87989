"""The client over real gRPC against a scripted referee: hello, answers, events, errors, reconnects, stop."""

from __future__ import annotations

import asyncio
import logging
import os
import random
import re
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

import grpc
import pytest
import uvloop
from belote.arena.v1 import game_pb2 as pb
from belote_bot import (
    Action,
    AuthenticationError,
    BidMade,
    Bot,
    CardPlayed,
    DealEnded,
    Event,
    MatchInfo,
    MatchResult,
    Observation,
    RandomBot,
    Strike,
    run,
    run_async,
)
from belote_bot.client import MAX_BACKOFF, Client, _backoff_delay

from arena.engine import Match, Ruleset, format_action
from arena.engine import actions as A
from arena.referee.convert import ruleset_to_proto

from .fake_referee import FakeReferee, Stream, request, start

LOOPS: dict[str, Callable[[], asyncio.AbstractEventLoop]] = {
    "asyncio": asyncio.new_event_loop, "uvloop": uvloop.new_event_loop,
}


def arun(coro: Coroutine[Any, Any, Any], loop: str = "asyncio") -> Any:
    with asyncio.Runner(loop_factory=LOOPS[loop]) as runner:
        return runner.run(asyncio.wait_for(coro, 30))


async def play_until_finished(
    referee: FakeReferee, client: Client, finished: asyncio.Event | None = None,
) -> None:
    """Run the client against the referee until ``finished`` (default: the referee's) is set, then stop it."""
    finished = finished or referee.finished
    server, address = await start(referee)
    client.address = address
    stop = asyncio.Event()
    task = asyncio.ensure_future(client.run(stop))
    try:
        done, _ = await asyncio.wait({task, asyncio.ensure_future(finished.wait())},
                                     return_when=asyncio.FIRST_COMPLETED)
        if task in done:
            task.result()
            raise AssertionError("the client stopped before the script finished")
        stop.set()
        await asyncio.wait_for(task, 5)
    finally:
        await server.stop(None)


class RecordingBot(RandomBot):
    name = "recorder"
    version = "9.9"

    def __init__(self, inline: bool = True) -> None:
        super().__init__(seed=1)
        self.act_inline = inline
        self.log: list[Any] = []
        self.done = asyncio.Event()  # set when the last seat hears the match end

    def act(self, obs: Observation) -> Action:
        self.log.append(("act", obs.seat, obs.request_id))
        return super().act(obs)

    def on_match_start(self, info: MatchInfo) -> None:
        self.log.append(info)

    def on_event(self, event: Event) -> None:
        self.log.append(event)

    def on_match_end(self, result: MatchResult) -> None:
        self.log.append(result)
        if result.seat == 3:
            self.done.set()

    async def on_strike(self, strike: Strike) -> None:  # hooks may be async
        self.log.append(strike)


def public(deal_index: int, seat: int, action: int) -> pb.PublicEvent:
    return pb.PublicEvent(match_id="m1", deal_index=deal_index, action_played=pb.ActionPlayed(
        seat=seat, action=action, text=format_action(action)))


async def play_one_deal(referee: FakeReferee, stream: Stream) -> None:
    """Welcome, a match start per seat, one coinche deal with the bot at all four seats, the end."""
    await stream.send(welcome=pb_welcome())
    rules = Ruleset.from_spec("coinche")
    for seat in range(4):
        await stream.send(match_started=bs_match_started(seat, rules))
    deal = Match(rules, seed=3).new_deal()
    request_id = 100
    events: list[pb.PublicEvent] = []
    while not deal.is_over:
        request_id += 1
        seat = deal.to_act
        await stream.send(action_request=request(deal, request_id), events=events)
        reply = await stream.reply()
        assert reply.request_id == request_id
        assert reply.action in deal.legal_actions()
        deal.apply(reply.action)
        events = [public(0, seat, reply.action)]
    events.append(pb.PublicEvent(match_id="m1", deal_ended=pb.DealEnded(
        outcome_json='{"score": [90, 72]}', score=[90, 72], match_score=[90, 72])))
    await stream.send(flush=bs_flush(), events=events)
    await stream.send(strike=bs_strike())
    for seat in range(4):
        await stream.send(match_ended=bs_match_ended(seat))
    await stream.drain()


def pb_welcome() -> Any:
    from belote.arena.v1 import bot_service_pb2 as bs

    return bs.Welcome(bot_id="b1", bot_name="recorder", node_id="n1", peer_addresses=["10.0.0.2:50051"])


def bs_match_started(seat: int, rules: Ruleset) -> Any:
    from belote.arena.v1 import bot_service_pb2 as bs

    return bs.MatchStarted(match_id="m1", seat=seat, ruleset=ruleset_to_proto(rules),
                           players=["recorder"] * 4, target=1000)


def bs_flush() -> Any:
    from belote.arena.v1 import bot_service_pb2 as bs

    return bs.Flush()


def bs_strike() -> Any:
    from belote.arena.v1 import bot_service_pb2 as bs

    return bs.Strike(match_id="m1", seat=1, request_id=5, reason="late answer", fallback_action=A.PASS,
                     strikes=1, max_strikes=3, kind=pb.STRIKE_REASON_LATE, detail="no answer in 1 s")


def bs_match_ended(seat: int) -> Any:
    from belote.arena.v1 import bot_service_pb2 as bs

    return bs.MatchEnded(match_id="m1", seat=seat, result=pb.MatchResult(
        totals=[1010, 700], winner=0, reason="finished", deals=9))


@pytest.mark.parametrize("inline", [True, False], ids=["inline", "thread"])
@pytest.mark.parametrize("loop", list(LOOPS))
def test_a_deal_over_the_stream(loop: str, inline: bool, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, "belote_bot")
    bot = RecordingBot(inline)
    referee = FakeReferee(play_one_deal)
    client = Client(bot, token="secret", concurrency=4)
    arun(play_until_finished(referee, client, bot.done), loop)

    (stream,) = referee.streams
    assert (stream.hello.token, stream.hello.name, stream.hello.version, stream.hello.concurrency) == (
        "secret", "recorder", "9.9", 4)
    assert stream.metadata["authorization"] == "Bearer secret"
    assert client.peer_addresses == ("10.0.0.2:50051",)
    assert (client.bot_id, client.node_id) == ("b1", "n1")

    starts = [x for x in bot.log if isinstance(x, MatchInfo)]
    assert [i.seat for i in starts] == [0, 1, 2, 3]
    assert starts[0].ruleset == Ruleset.from_spec("coinche") and starts[0].players == ("recorder",) * 4
    acts = [x for x in bot.log if isinstance(x, tuple)]
    assert len(acts) >= 36 and [r for _, _, r in acts] == list(range(101, 101 + len(acts)))
    # the events of a message come before its request, in order
    first_event = next(i for i, x in enumerate(bot.log) if isinstance(x, Event))
    assert isinstance(bot.log[first_event - 1], tuple) and isinstance(bot.log[first_event + 1], tuple)
    events = [x for x in bot.log if isinstance(x, Event)]
    assert all(isinstance(e, BidMade | CardPlayed) for e in events[:-1])
    assert sum(isinstance(e, CardPlayed) for e in events) == 32
    assert isinstance(events[-1], DealEnded) and events[-1].outcome == {"score": [90, 72]}
    strikes = [x for x in bot.log if isinstance(x, Strike)]
    assert len(strikes) == 1 and strikes[0].reason == "late answer"
    assert (strikes[0].kind, strikes[0].detail) == ("late", "no answer in 1 s")
    assert strikes[0].fallback_action == Action(A.PASS)
    ends = [x for x in bot.log if isinstance(x, MatchResult)]
    assert [(r.seat, r.won) for r in ends] == [(0, True), (1, False), (2, True), (3, False)]
    assert bot.log[-1] is ends[-1]
    mine = [r for r in caplog.records if r.name.startswith("belote_bot")]
    warnings = [r.getMessage() for r in mine if r.levelno == logging.WARNING]
    assert any("late answer" in w and "no answer in 1 s" in w and "(late)" in w for w in warnings)
    # one line for the connection, one for the match end (not one per seat), nothing else at INFO
    info = [r.getMessage() for r in mine if r.levelno == logging.INFO]
    assert len(info) == 2, info
    assert "'recorder' (bot b1) connected to node n1 at 127.0.0.1:" in info[0] and "4 seats" in info[0]
    assert info[1].startswith("match m1 ended: team 0 won, 1010-700 (9 deals; this bot played both sides")


def test_quiet_logs_only_warnings_and_errors(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, "belote_bot")
    bot = RecordingBot()
    client = Client(bot, token="secret", concurrency=4, verbose=False)
    arun(play_until_finished(FakeReferee(play_one_deal), client, bot.done))
    # only the SDK's own lines: a grpc poller left over from another test's event loop may log
    # "Event loop is closed" through asyncio's logger, which says nothing of this client
    mine = [r for r in caplog.records if r.name.startswith("belote_bot")]
    assert [r.levelno for r in mine if r.levelno >= logging.INFO] == [logging.WARNING]  # the strike
    debug = [r.getMessage() for r in mine if r.levelno == logging.DEBUG]
    assert any("connected to node" in m for m in debug) and any("match m1 ended" in m for m in debug)


class Unruly(Bot):
    """Answers by request id: raises, returns illegal things, text, codes.

    ``mode``: "thread" (a plain act, in worker threads), "inline" (a plain act on the loop),
    "async" (a plain act that returns a coroutine).
    """

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.act_inline = mode == "inline"

    def answer(self, obs: Observation) -> Any:
        kind = obs.request_id % 10
        if kind == 1:
            raise RuntimeError("bug in the bot")
        answers = {2: "JH", 3: "pass", 4: A.bid_action(90, 1), 5: None, 6: "not an action",
                   7: Action.parse("80S"), 8: 12345678}
        return answers[kind]

    def act(self, obs: Observation) -> Any:
        if self.mode != "async":
            return self.answer(obs)

        async def later() -> Any:
            await asyncio.sleep(0.001 * (9 - obs.request_id % 10))  # later requests answer first
            return self.answer(obs)

        return later()


EXPECTED = {1: A.NO_ACTION, 2: A.NO_ACTION, 3: A.PASS, 4: A.bid_action(90, 1), 5: A.NO_ACTION,
            6: A.NO_ACTION, 7: A.bid_action(80, 0), 8: A.NO_ACTION}


async def ask_everything(referee: FakeReferee, stream: Stream) -> None:
    await stream.send(welcome=pb_welcome())
    deal = Match(Ruleset.from_spec("coinche"), seed=1).new_deal()
    for i in EXPECTED:
        await stream.send(action_request=request(deal, i))
    replies = [await stream.reply() for _ in EXPECTED]
    referee.answers = {r.request_id: r.action for r in replies}  # type: ignore[attr-defined]
    referee.order = [r.request_id for r in replies]  # type: ignore[attr-defined]
    referee.finished.set()
    await stream.drain()


@pytest.mark.parametrize("mode", ["thread", "inline", "async"])
def test_errors_and_illegal_answers_are_answered_as_illegal_at_once(
    mode: str, caplog: pytest.LogCaptureFixture,
) -> None:
    referee = FakeReferee(ask_everything)
    arun(play_until_finished(referee, Client(Unruly(mode), token="t")))
    assert referee.answers == EXPECTED  # type: ignore[attr-defined]
    if mode == "async":
        assert referee.order != sorted(EXPECTED)  # type: ignore[attr-defined]
    elif mode == "inline":
        assert referee.order == sorted(EXPECTED)  # type: ignore[attr-defined]
    errors = [r for r in caplog.records if r.name == "belote_bot" and r.levelno == logging.ERROR]
    assert len(errors) == 5 and all(r.exc_info for r in errors)
    text = caplog.text
    assert "bug in the bot" in text and "Traceback" in text
    assert "'JH', illegal for seat" in text and "legal: pass, 80S" in text


async def refuse(referee: FakeReferee, stream: Stream) -> None:
    await stream.context.abort(grpc.StatusCode.UNAUTHENTICATED, "unknown bot token")


def test_a_refused_token_stops_for_good() -> None:
    async def main() -> None:
        referee = FakeReferee(refuse)
        server, address = await start(referee)
        try:
            with pytest.raises(AuthenticationError, match="unknown bot token"):
                await run_async(RandomBot(), address, token="wrong")
            assert len(referee.streams) == 1
        finally:
            await server.stop(None)

    arun(main())


def test_the_token_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BELOTE_TOKEN", "from-env")
    client = Client(RandomBot())
    assert client.token == "from-env" and client.name == "random" and client.version.startswith("belote_bot/")
    monkeypatch.delenv("BELOTE_TOKEN")
    assert Client(RandomBot(), name="x").token == "" and Client(RandomBot(), name="x").name == "x"
    with pytest.raises(ValueError):
        Client(RandomBot(), concurrency=0)


async def drop_first_stream(referee: FakeReferee, stream: Stream) -> None:
    await stream.send(welcome=pb_welcome())
    if len(referee.streams) == 1:
        return  # the referee ends the stream: the bot comes back
    deal = Match(Ruleset.from_spec("classic"), seed=2).new_deal()
    await stream.send(action_request=request(deal, 1))
    assert (await stream.reply()).action in deal.legal_actions()
    referee.finished.set()
    await stream.drain()


def test_a_dropped_stream_is_reconnected(caplog: pytest.LogCaptureFixture) -> None:
    referee = FakeReferee(drop_first_stream)
    arun(play_until_finished(referee, Client(RandomBot(), token="t")))
    assert len(referee.streams) == 2
    # once, after the first backoff (a fifth of a second at most): what the client says it waited,
    # not a wall-clock bound a loaded machine could break
    waits = [float(w) for w in re.findall(r"reconnecting to \S+ in ([\d.]+) s", caplog.text)]
    assert len(waits) == 1 and waits[0] <= 0.2, caplog.text


async def silent(referee: FakeReferee, stream: Stream) -> None:
    await stream.send(welcome=pb_welcome())
    if len(referee.streams) >= 2:
        referee.finished.set()
    await stream.drain()


def test_a_silent_referee_is_pinged_then_left() -> None:
    referee = FakeReferee(silent)
    client = Client(RandomBot(), token="t", ping_interval=0.05, silence_timeout=0.3)
    arun(play_until_finished(referee, client))
    assert len(referee.streams) >= 2 and referee.streams[0].pings >= 2


def closed_port() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{s.getsockname()[1]}"


def test_an_unreachable_referee_is_retried_until_stopped(caplog: pytest.LogCaptureFixture) -> None:
    async def main() -> None:
        stop = asyncio.Event()
        asyncio.get_running_loop().call_later(1.0, stop.set)
        await run_async(RandomBot(), closed_port(), token="t", stop=stop)

    arun(main())
    tries = [r for r in caplog.records if "cannot reach the referee" in r.getMessage()]
    assert 2 <= len(tries) <= 6


def test_backoff_doubles_from_a_fifth_of_a_second_to_thirty_seconds_with_jitter() -> None:
    rng = random.Random(0)
    for attempt in range(40):
        step = min(MAX_BACKOFF, 0.2 * 2**attempt)
        delays = [_backoff_delay(attempt, rng) for _ in range(50)]
        assert all(step / 2 <= d <= step for d in delays)
        assert len(set(delays)) > 1
    assert _backoff_delay(100, rng) <= 30


def test_run_blocks_until_a_threading_stop_event() -> None:
    stop = threading.Event()
    threading.Timer(0.5, stop.set).start()
    ran = threading.Thread(target=run, args=(RandomBot(), closed_port()), kwargs={"token": "t", "stop": stop})
    ran.start()
    ran.join(60)  # a hang, not a pace: the stop is a 0.5 s timer
    # it blocked until the event was set, and returned once it was
    assert stop.is_set() and not ran.is_alive()


def test_ctrl_c_stops_the_command_cleanly() -> None:
    # A process started in the background by a non-interactive shell ignores SIGINT, and so does all
    # it starts: pytest run that way gave the bot an ignored Ctrl-C, which it never saw (its threads,
    # printed by faulthandler, were still reconnecting). A user's terminal does not: the bot gets the
    # default disposition back first, as tests/test_end_to_end.py's do. A bot still running 20 s after
    # its Ctrl-C is made to print where its threads are (SIGABRT), so the failure says why.
    env = {**os.environ, "BELOTE_TOKEN": "t", "PYTHONUNBUFFERED": "1", "PYTHONFAULTHANDLER": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-c", "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
         "os.execv(sys.executable, [sys.executable, *sys.argv[1:]])",
         "-m", "belote_bot.bots.random", "--address", closed_port()],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )
    try:
        assert proc.stderr is not None
        lines = [proc.stderr.readline()]  # up to the first "cannot reach ... reconnecting" warning
        while "reconnecting" not in lines[-1] and lines[-1] and len(lines) < 20:
            lines.append(proc.stderr.readline())
        assert "reconnecting" in lines[-1], lines
        proc.send_signal(signal.SIGINT)
        try:
            _, err = proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGABRT)
            _, err = proc.communicate(timeout=10)
            raise AssertionError(f"still running 20 s after Ctrl-C; its threads:\n{err[-6000:]}") from None
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err


def test_hooks_are_optional_and_the_name_defaults_to_the_class() -> None:
    class AsyncBot(Bot):
        async def act(self, obs: Observation) -> str:
            await asyncio.sleep(0)
            return "pass"

    hook: Callable[[Any], Awaitable[None] | None] = AsyncBot().on_event
    assert hook(None) is None
    assert AsyncBot().name == "" and Client(AsyncBot(), token="t").name == "AsyncBot"
