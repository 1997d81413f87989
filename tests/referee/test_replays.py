"""Replays of finished matches: each view built once, off the loop, kept within a bound, read a few at a time.

The cache, the gate and the build process are the real ones
(:mod:`arena.referee.replays`, :mod:`arena.referee.builds`); the builds run in
real build processes, and the refusals come over real HTTP and gRPC.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import grpc
import pytest
from belote.arena.v1 import arena_service_pb2 as apb
from belote.arena.v1 import arena_service_pb2_grpc as agrpc
from belote_bot import HeuristicBot, RandomBot

from arena.harness import local_arena
from arena.node.run import NodeSettings, RunningNode, running_node
from arena.queue import EmbeddedBroker
from arena.records import MatchRecord
from arena.referee.builds import PRIORITY_ENV, Builder
from arena.referee.node import Limits
from arena.referee.replay_views import RecordSource, events_view, match_view, watch_view
from arena.referee.replays import EVENTS, WATCH, PreparedCache, ReplayFull, ReplayGate, Replays
from arena.referee.store import MatchStore
from arena.web import WebServer, web_for
from tests.factories import played_record

from .arena_helpers import FAST, arena_stub, arun, collect

pytestmark = pytest.mark.reliability


@dataclass(frozen=True)
class View:
    size: int

    @property
    def nbytes(self) -> int:
        return self.size


def source_of(record: MatchRecord) -> RecordSource:
    return RecordSource(record.to_json(), MatchRecord.from_json)


def replays_of(*records: MatchRecord, max_bytes: int = 64 << 20) -> Replays:
    by_id = {r.match_id: source_of(r) for r in records}
    return Replays([by_id.get], max_bytes=max_bytes, per_address=2, total=16)


# ------------------------------------------------------------------ cache
def test_the_cache_never_holds_more_than_its_bound_and_drops_the_least_recently_read_first() -> None:
    cache = PreparedCache(1000)
    for i in range(100):
        cache.put(i, View(100 + i % 7 * 50))
        assert cache.nbytes <= 1000
        assert cache.nbytes == sum(v.nbytes for k in range(i + 1) if (v := cache.get(k)) is not None)
    cache = PreparedCache(300)
    for key in "abc":
        cache.put(key, View(100))
    assert cache.get("a") is not None  # read: now the most recent
    cache.put("d", View(100))
    assert "b" not in cache and {"a", "c", "d"} <= {k for k in "abcd" if k in cache}
    cache.put("huge", View(301))  # larger than the whole bound: served once, never kept
    assert "huge" not in cache and cache.nbytes == 300


def test_concurrent_first_readers_share_one_build_and_the_next_ones_none() -> None:
    record = played_record("m-shared", 40)

    async def main() -> None:
        replays = replays_of(record)
        try:
            views = await asyncio.gather(*(replays.view("m-shared", WATCH, watch_view) for _ in range(8)))
            assert replays.builder.builds == 1
            assert all(v is views[0] for v in views)
            again = await asyncio.gather(*(replays.view("m-shared", WATCH, watch_view) for _ in range(8)))
            assert replays.builder.builds == 1 and all(v is views[0] for v in again)
            assert await replays.view("m-unknown", WATCH, watch_view) is None
        finally:
            replays.close()

    arun(main(), timeout=120)


def test_a_build_nobody_waits_for_any_more_is_stopped() -> None:
    record = played_record("m-left", 400)

    async def main() -> None:
        replays = replays_of(record)
        try:
            reader = asyncio.ensure_future(replays.view("m-left", EVENTS, events_view))
            while replays.builder.builds == 0:
                await asyncio.sleep(0.01)
            [pid] = replays.builder.pids
            reader.cancel()  # the only reader leaves
            await asyncio.gather(reader, return_exceptions=True)
            assert replays.builder.pids == [] and (replays.builder.builds, len(replays.cache)) == (1, 0)
            assert not Path(f"/proc/{pid}").exists(), "the build process still runs"
        finally:
            replays.close()

    arun(main(), timeout=120)


CHILD_PARENT = textwrap.dedent("""
    import asyncio, sys, time
    from arena.referee.builds import Builder

    async def main():
        builder = Builder()
        await builder.run(len, "built")  # the process serves builds: it took its end with the node
        build = asyncio.ensure_future(builder.run(time.sleep, 600))  # the same process, busy
        print(builder.pids[0], flush=True)
        await build

    asyncio.run(main())
""")


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc")
@pytest.mark.parametrize("its_cpu", ["running", pytest.param("none", marks=pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="the kernel's end with the parent (prctl) is Linux's"))])
def test_the_build_process_ends_when_the_node_dies(its_cpu: str) -> None:
    """Also when it gets no CPU at all (stopped here; at SCHED_IDLE beside two CPU-bound processes it
    got none for minutes, and its watcher thread never saw the node go): the kernel kills it."""
    node = subprocess.Popen([sys.executable, "-c", CHILD_PARENT], stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    try:
        assert node.stdout is not None
        pid = int(node.stdout.readline())
        assert Path(f"/proc/{pid}").exists()
        if its_cpu == "none":
            os.kill(pid, signal.SIGSTOP)
        node.send_signal(signal.SIGKILL)
        node.wait(10)
        deadline = time.monotonic() + 10
        while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not Path(f"/proc/{pid}").exists(), "the build process outlived the node"
    finally:
        node.kill()
        node.wait(10)


CTRL_C_PARENT = textwrap.dedent("""
    import asyncio, os, signal, sys
    from arena.referee.builds import Builder

    async def main():
        builder = Builder()
        await builder.run(len, "built")  # its process stays, idle, for the next build
        stopped = asyncio.Event()
        asyncio.get_running_loop().add_signal_handler(signal.SIGINT, stopped.set)  # as serve does
        print(builder.pids[0], flush=True)
        await stopped.wait()
        await asyncio.sleep(1)  # the node drains its matches meanwhile
        builder.close()

    asyncio.run(main())
""")


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc")
def test_ctrl_c_in_the_node_s_terminal_stops_it_without_a_traceback_from_its_build_process() -> None:
    """A terminal sends Ctrl-C to the node's whole process group, its build process too: that one
    printed a KeyboardInterrupt's traceback under the node's last lines."""
    node = subprocess.Popen([sys.executable, "-c", CTRL_C_PARENT], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    try:
        assert node.stdout is not None
        pid = int(node.stdout.readline())
        assert os.getpgid(pid) == node.pid  # in the node's group, as a terminal's foreground job
        os.killpg(node.pid, signal.SIGINT)
        _, err = node.communicate(timeout=20)
        assert node.returncode == 0 and "Traceback" not in err, err
    finally:
        node.kill()
        node.wait(10)


def test_a_builder_runs_one_build_at_a_time() -> None:
    async def main() -> None:
        builder = Builder(at_once=1)
        try:
            start = time.monotonic()
            await asyncio.gather(*(builder.run(time.sleep, 0.5) for _ in range(3)))
            assert time.monotonic() - start >= 1.5 and len(builder.pids) == 1
        finally:
            builder.close()
        assert builder.pids == []

    arun(main(), timeout=120)


#: what a build process reports of itself: whether the views' module is loaded, and its scheduling
IMPORTED = "'arena.referee.replay_views' in __import__('sys').modules"


def test_a_build_process_imports_what_builds_need_before_it_lowers_its_priority(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A small record's first read is mostly imports: at SCHED_IDLE on a machine whose cores were
    busy, they took more than the CLI's 10 s deadline. A warm process has them before it drops. (The
    default priority, idle: the variable the tests set for their own nodes is unset.)"""
    monkeypatch.delenv(PRIORITY_ENV, raising=False)

    async def main() -> None:
        builder = Builder()
        assert builder.priority == "idle"
        try:
            assert await builder.run(eval, IMPORTED) is True
            if hasattr(os, "SCHED_IDLE"):
                assert await builder.run(os.sched_getscheduler, 0) == os.SCHED_IDLE
        finally:
            builder.close()

    arun(main(), timeout=120)


def test_a_node_told_normal_builds_at_its_own_priority_and_any_other_word_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``BELOTE_BUILD_PRIORITY=normal``: the build processes run at the node's priority (a machine whose
    other work would leave SCHED_IDLE nothing); a word that is not a priority fails the node's start,
    naming the choices."""
    monkeypatch.setenv(PRIORITY_ENV, "normal")

    async def main() -> None:
        builder = Builder()
        try:
            assert builder.priority == "normal"
            assert await builder.run(os.nice, 0) == os.nice(0)
            if hasattr(os, "SCHED_IDLE"):
                assert await builder.run(os.sched_getscheduler, 0) == os.sched_getscheduler(0)
        finally:
            builder.close()

    arun(main(), timeout=120)
    monkeypatch.setenv(PRIORITY_ENV, "lowest")
    with pytest.raises(ValueError, match=r"BELOTE_BUILD_PRIORITY='lowest': .* one of idle, normal"):
        Builder()
    with pytest.raises(ValueError, match="one of idle, normal, not 'high'"):
        Builder(priority="high")


def test_a_reader_who_starts_builds_and_leaves_gets_one_warm_start_in_ten_seconds() -> None:
    """Each build nobody waits for kills its process; the next one starts cold (its imports at the
    lowest priority), so that leaving and asking again costs the node's priority no more."""
    async def main() -> None:
        builder = Builder()
        try:
            left = asyncio.ensure_future(builder.run(time.sleep, 600))
            while builder.builds == 0:
                await asyncio.sleep(0.01)
            left.cancel()  # its process is killed
            await asyncio.gather(left, return_exceptions=True)
            assert builder.pids == []
            assert await builder.run(eval, IMPORTED) is False  # a new process, started cold
        finally:
            builder.close()
        later = Builder(warm_every_s=0.0)  # with no such bound, every start is warm
        try:
            left = asyncio.ensure_future(later.run(time.sleep, 600))
            while later.builds == 0:
                await asyncio.sleep(0.01)
            left.cancel()
            await asyncio.gather(left, return_exceptions=True)
            assert await later.run(eval, IMPORTED) is True
        finally:
            later.close()

    arun(main(), timeout=120)


# ------------------------------------------------------------------- gate
def test_the_gate_refuses_one_more_reader_per_address_and_in_all() -> None:
    async def main() -> None:
        gate = ReplayGate(per_address=2, total=5)
        first = [await gate.enter("10.0.0.1"), await gate.enter("10.0.0.1")]
        with pytest.raises(ReplayFull, match="limit per address"):
            await gate.enter("10.0.0.1")
        await gate.enter("2001:db8::1")
        await gate.enter("2001:db8::2")
        with pytest.raises(ReplayFull, match="limit per address"):  # the same /64: one address
            await gate.enter("2001:db8::3")
        await gate.enter("10.0.0.2")
        with pytest.raises(ReplayFull, match="its limit of 5"):
            await gate.enter("10.0.0.3")
        first[0].close()
        first[0].close()  # given back once only
        assert gate.running == 4
        await gate.enter("10.0.0.3")

    arun(main())


# ---------------------------------------------------------- the node
def test_a_match_that_ends_on_the_node_is_replayed_from_its_own_events_without_a_build() -> None:
    async def main() -> None:
        async with local_arena(time=FAST) as arena:
            await arena.connect("alpha", HeuristicBot(1))
            await arena.connect("beta", RandomBot(2))
            record = await arena.play("alpha", "beta", "coinche", deals=3, seed=5)
            async with arena_stub(arena.address) as stub:
                replies = await collect(stub.WatchMatch(apb.WatchMatchRequest(match_id=record.match_id)))
            built, _ = watch_view(source_of(record))
            assert [r.event.SerializeToString() for r in replies[:-1]] == list(built.events)
            assert replies[-1].HasField("result") and replies[-1].result.totals == list(record.totals)
            assert arena.node.replays.builder.builds == 0

    arun(main())


def test_a_stored_record_and_its_summary_are_read_once_off_the_loop_whoever_asks(tmp_path: Path) -> None:
    """GetMatchRecord and GetMatch of a match the node no longer holds in memory (a restart) read
    its record once each, in the build process, then from what they kept."""
    record = played_record("m-stored", 30)
    MatchStore(tmp_path / "matches").put(record)

    async def main() -> None:
        async with local_arena(data_dir=tmp_path, time=FAST) as arena:
            arena.node._recent.clear()  # as a node that has played 100 matches since
            async with arena_stub(arena.address) as stub:
                for _ in range(3):
                    got = await stub.GetMatchRecord(apb.GetMatchRecordRequest(match_id="m-stored"))
                    assert MatchRecord.from_json(got.record_json) == record
                    summary = (await stub.GetMatch(apb.GetMatchRequest(match_id="m-stored"))).match
                    assert (summary.state, summary.deals_played, list(summary.totals)) == (
                        "finished", 30, list(record.totals))
            assert arena.node.replays.builder.builds == 2

    arun(main(), timeout=120)


def test_the_prepared_views_are_what_the_api_showed_before() -> None:
    """The match page's JSON is the ``MatchView`` of the record, and the events end with the result."""
    import json

    from arena.web.reads import MatchView

    record = played_record("m-view", 3)
    body, error = match_view(source_of(record))
    assert error == ""
    shown = json.loads(body.data)
    replayed = [o.as_json() for o in record.replay()[1]]
    expected = MatchView(
        match_id=record.match_id, state="finished", players=record.players, ruleset=record.ruleset,
        totals=record.totals, deals_played=record.deals_played, seed=str(record.seed),
        result=record.result.to_dict(), record=record.to_dict(), replay=tuple(replayed))
    assert shown == json.loads(json.dumps(expected.to_json()))
    events, _ = events_view(source_of(record))
    assert events.data.endswith(b"event: end\ndata: {}\n\n") and b"event: result\n" in events.data


@contextlib.asynccontextmanager
async def node_and_site(data_dir: Path, limits: Limits) -> AsyncIterator[tuple[RunningNode, WebServer,
                                                                               aiohttp.ClientSession]]:
    """A node of an embedded queue on ``data_dir`` with ``limits``, its site, and an HTTP client."""
    broker = EmbeddedBroker(data_dir / "queue.sqlite3")
    stop = asyncio.Event()
    try:
        settings = NodeSettings(data_dir=data_dir, limits=limits)
        async with (running_node(broker, settings, stop) as running,
                    web_for(running, "127.0.0.1:0") as web, aiohttp.ClientSession() as http):
            yield running, web, http
    finally:
        stop.set()
        broker.close()


def test_past_its_share_a_reader_is_refused_over_http_and_grpc_with_a_clear_message(tmp_path: Path) -> None:
    """One replay at a time per address, sent slowly: the next read from that address gets 429 over
    HTTP and RESOURCE_EXHAUSTED over gRPC, saying why; once the first is over, it is served."""
    MatchStore(tmp_path / "matches").put(played_record("m-slow", 20))
    limits = Limits(max_replays_per_address=1, max_replays=4, replay_bytes_per_s=20_000, refusal_hold=0.0)

    async def main() -> None:
        async with node_and_site(tmp_path, limits) as (running, web, http):
            url = f"{web.url}/api/v1/matches/m-slow"
            async with http.get(f"{url}/events") as first:  # 20 deals at 20 kB/s: seconds
                assert first.status == 200
                await first.content.readexactly(100)
                async with http.get(url) as second:
                    body = await second.json()
                    assert second.status == 429 and "limit per address" in body["error"]
                async with arena_stub(running.address) as stub:
                    with pytest.raises(grpc.aio.AioRpcError) as refused:
                        await collect(stub.WatchMatch(apb.WatchMatchRequest(match_id="m-slow")))
                assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
                assert "limit per address" in (refused.value.details() or "")
            # the first one left: its place is free once the node notices (its next chunk, at this pace)
            deadline = time.monotonic() + 10
            while (await (again := await http.get(url)).read()) and again.status == 429:
                assert time.monotonic() < deadline, "the place of a reader who left was never freed"
                await asyncio.sleep(0.1)
            assert again.status == 200 and (await again.json())["record"]["match_id"] == "m-slow"

    arun(main(), timeout=120)


def test_a_reader_that_stops_reading_gives_its_place_back_after_the_send_timeout(tmp_path: Path) -> None:
    """A replay reader that takes nothing more of what it is sent (its window or its socket's buffer
    full) is cut after the send timeout, over HTTP and gRPC, and its place is free again. Before,
    it kept it as long as its connection lived: 8 addresses held the node's 16 replays."""
    # the largest match: its events (9 MB) far more than the sockets' buffers (4 MB at most here)
    MatchStore(tmp_path / "matches").put(played_record("m-large", 1000))
    timeout = 1.0
    limits = Limits(max_replays_per_address=1, max_replays=4, send_timeout=timeout, refusal_hold=0.0)

    async def main() -> None:
        async with node_and_site(tmp_path, limits) as (running, web, http):
            url = f"{web.url}/api/v1/matches/m-large"
            async with http.get(url) as reply:  # the views built, before the clock matters
                assert reply.status == 200 and len(await reply.read()) > 0

            async def served_after(stalled_at: float) -> float:
                """Seconds from the stall until a reader from the same address is served."""
                while True:
                    async with http.get(url) as again:
                        await again.read()
                    if again.status == 200:
                        return time.monotonic() - stalled_at
                    assert again.status == 429
                    assert time.monotonic() - stalled_at < timeout + 10, "the place was never freed"
                    await asyncio.sleep(0.2)

            # over HTTP: a reader whose socket takes a few kB, then nothing
            host, port = web.url.split("//")[1].rsplit(":", 1)
            loop = asyncio.get_running_loop()
            reader = socket.socket()
            reader.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            reader.setblocking(False)
            await loop.sock_connect(reader, (host, int(port)))
            events = b"GET /api/v1/matches/m-large/events HTTP/1.1\r\nHost: x\r\n\r\n"
            await loop.sock_sendall(reader, events)
            assert (await loop.sock_recv(reader, 100)).startswith(b"HTTP/1.1 200")
            stalled = time.monotonic()
            assert timeout * 0.9 <= await served_after(stalled) < timeout + 8
            reader.close()

            # over gRPC: a watcher whose window is a kB, read once
            small = [("grpc.http2.lookahead_bytes", 1024), ("grpc.http2.bdp_probe", 0)]
            async with grpc.aio.insecure_channel(running.address, options=small) as channel:
                stub = agrpc.ArenaServiceStub(channel)
                watch = stub.WatchMatch(apb.WatchMatchRequest(match_id="m-large"))
                await watch.read()
                stalled = time.monotonic()
                assert timeout * 0.9 <= await served_after(stalled) < timeout + 8
                with pytest.raises(grpc.aio.AioRpcError) as cut:  # reading again, it learns why
                    while await asyncio.wait_for(watch.read(), 10) is not grpc.aio.EOF:
                        pass
                assert cut.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
                assert "took nothing of what it was sent for 1 s" in (cut.value.details() or "")

    arun(main(), timeout=120)
