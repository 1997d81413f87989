"""What one connection or one address may hold of a node's HTTP server, against the real server.

Slowloris clients (a request head a byte at a time, or nothing) are closed
within the head timeout while honest readers are answered; one address past
its connection bound is refused while another address is served; event streams
are bounded per address; one address past its reads a second gets 429, gRPC and
HTTP alike, while another is served. The attackers come from other loopback addresses
(127.0.0.2 and up: all of 127.0.0.0/8 is this machine), the honest readers
from 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import contextlib
import selectors
import socket
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from belote.arena.v1 import arena_service_pb2 as apb

from arena.referee.node import Limits
from arena.web import WebConfig, WebLimits
from tests.referee.arena_helpers import arena_stub
from tests.timing import within
from tests.web.clients import OTHER, closed_by_peer, connect, json_of, request
from tests.web.site import ADMIN, Site

pytestmark = [pytest.mark.reliability, pytest.mark.timing]

#: the bounds of the module's site: a long head timeout, so that idle connections stay while a
#: test counts them
BOUNDS = WebLimits(head_timeout=60.0, connections_per_address=6, connections=14, watchers_per_address=2)


@pytest.fixture(scope="module")
def site() -> Iterator[Site]:
    with tempfile.TemporaryDirectory() as tmp:
        s = Site(Path(tmp), tournament=False, web=WebConfig(limits=BOUNDS))
        try:
            yield s
        finally:
            s.close()


def served(site: Site, source: str = "127.0.0.1") -> int:
    return request(site.url, "/api/v1/pools", source)[0]


def until(check: object, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if callable(check) and check():
            return True
        time.sleep(0.05)
    return False


def test_slowloris_connections_are_closed_within_the_head_timeout_while_honest_readers_are_answered(
    tmp_path: Path,
) -> None:
    head = 1.0
    limits = WebLimits(head_timeout=head, connections_per_address=10, connections=100)
    site = Site(tmp_path, tournament=False, web=WebConfig(limits=limits))
    try:
        # 40 slow clients from four addresses: half send nothing, half a request head a byte at a
        # time, forever (an endless header line)
        silent = [connect(site.url, f"127.0.0.{2 + i % 4}") for i in range(20)]
        dribbling = [connect(site.url, f"127.0.0.{2 + i % 4}") for i in range(20)]
        opened = time.monotonic()
        closed_at: dict[socket.socket, float] = {}
        stop = threading.Event()

        def dribble() -> None:
            head_bytes = b"GET /api/v1/pools HTTP/1.1\r\nX-Slow: " + b"a" * 8000
            k = 0
            while not stop.is_set() and k < len(head_bytes):
                for s in dribbling:
                    if s not in closed_at:
                        with contextlib.suppress(OSError):
                            s.send(head_bytes[k:k + 1])
                k += 1
                stop.wait(0.05)

        sender = threading.Thread(target=dribble, daemon=True)
        sender.start()
        answered: list[float] = []
        with selectors.DefaultSelector() as watch:
            for s in silent + dribbling:
                s.setblocking(False)
                watch.register(s, selectors.EVENT_READ)
            while len(closed_at) < 40 and time.monotonic() - opened < head + 10:
                start = time.monotonic()
                assert served(site) == 200  # an honest reader meanwhile, from 127.0.0.1
                answered.append(time.monotonic() - start)
                for key, _ in watch.select(timeout=0.1):
                    sock = key.fileobj
                    assert isinstance(sock, socket.socket)
                    if closed_by_peer(sock):
                        closed_at[sock] = time.monotonic() - opened
                        watch.unregister(sock)
        stop.set()
        sender.join(5)
        assert len(closed_at) == 40, f"{40 - len(closed_at)} slow connections still open after {head + 10} s"
        assert min(closed_at.values()) >= head * 0.9  # not before their time
        within(max(closed_at.values()) < head + 5.0,  # the timeout, with room for a loaded machine
               f"the slow connections closed after {max(closed_at.values()):.1f} s (head timeout {head} s)")
        assert answered
        within(max(answered) < 5.0, f"an honest reader waited {max(answered):.1f} s")
        for s in silent + dribbling:
            s.close()
    finally:
        site.close()


def test_one_address_past_its_connection_bound_is_refused_while_another_is_served(site: Site) -> None:
    per, total = BOUNDS.connections_per_address, BOUNDS.connections
    held = [connect(site.url, OTHER) for _ in range(per)]
    try:
        time.sleep(0.2)
        assert not any(closed_by_peer(s) for s in held)  # counted, and kept (the head timeout is long)
        status, _, _ = request(site.url, "/api/v1/pools", OTHER)
        assert status == 0  # one more from the same address: closed at once, unanswered
        assert served(site) == 200  # another address is served meanwhile
        # and in all: two more addresses fill the node's bound, then everyone is refused
        held += [connect(site.url, "127.0.0.3") for _ in range(per)]
        held += [connect(site.url, "127.0.0.4") for _ in range(total - 2 * per)]
        time.sleep(0.2)
        assert served(site) == 0
    finally:
        for s in held:
            s.close()
    # closed connections are uncounted: both addresses are served again
    assert until(lambda: served(site) == 200 and served(site, OTHER) == 200)


def _open_events(site: Site, match_id: str, source: str) -> tuple[int, socket.socket, bytes]:
    """An event stream of ``match_id`` from ``source``: (status, the open socket, what came first)."""
    s = connect(site.url, source)
    s.sendall(f"GET /api/v1/matches/{match_id}/events HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    first = s.recv(65536)
    return int(first.split()[1]), s, first


def test_event_streams_are_bounded_per_address(site: Site) -> None:
    match_id = site.start_match(deals=40)  # a long match: its streams stay open through the test
    streams: list[socket.socket] = []
    try:
        for _ in range(BOUNDS.watchers_per_address):
            status, s, _ = _open_events(site, match_id, OTHER)
            streams.append(s)
            assert status == 200
        status, s, first = _open_events(site, match_id, OTHER)
        s.close()
        assert status == 429 and b"from this address" in first
        status, s, _ = _open_events(site, match_id, "127.0.0.1")  # another address still watches
        streams.append(s)
        assert status == 200
        streams.pop(0).close()  # a stream closed frees its place (once the node writes to it)

        def reopened() -> bool:
            status, s, _ = _open_events(site, match_id, OTHER)
            streams.append(s)
            return status == 200

        assert until(reopened)
    finally:
        for s in streams:
            s.close()


def test_a_refused_event_stream_says_why_in_json(site: Site) -> None:
    match_id = site.start_match(deals=40)
    streams = [_open_events(site, match_id, "127.0.0.5")[1] for _ in range(BOUNDS.watchers_per_address)]
    try:
        status, _, body = request(site.url, f"/api/v1/matches/{match_id}/events", "127.0.0.5")
        assert status == 429
        assert json_of(body)["error"].startswith(f"{BOUNDS.watchers_per_address} event streams are open")
    finally:
        for s in streams:
            s.close()


def test_one_address_past_its_reads_gets_429_with_retry_after_while_another_is_served(tmp_path: Path) -> None:
    """The API's requests draw on their address's reads, which its gRPC calls share: past them, a 429
    held a moment and saying when to retry, over HTTP and gRPC, while another address is served and
    the pages, static files and event streams (no API reads) stay open to the address."""
    hold = 0.3
    site = Site(tmp_path, tournament=False,
                limits=Limits(read_rate_per_peer=1, read_burst_per_peer=10, refusal_hold=hold))
    try:
        statuses = [request(site.url, "/api/v1/pools")[0] for _ in range(10)]
        assert statuses == [200] * 10
        start = time.monotonic()
        status, fields, body = request(site.url, "/api/v1/bots")
        assert status == 429 and time.monotonic() - start >= hold * 0.9
        assert int(fields["retry-after"]) >= 1
        assert "reads more than 1 a second, the limit per address" in json_of(body)["error"]

        async def grpc_read() -> grpc.StatusCode:
            assert site.running is not None
            async with arena_stub(site.running.address) as stub:  # from 127.0.0.1 too
                try:
                    await stub.ListMatches(apb.ListMatchesRequest(), timeout=10)
                except grpc.aio.AioRpcError as e:
                    return e.code()
                return grpc.StatusCode.OK

        assert asyncio.run(grpc_read()) == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert request(site.url, "/api/v1/pools", OTHER)[0] == 200
        for path in ("/", "/bots", "/static/app.js"):
            assert request(site.url, path)[0] == 200, path
        match_id = site.start_match(deals=40)
        status, stream, _ = _open_events(site, match_id, "127.0.0.1")
        stream.close()
        assert status == 200
    finally:
        site.close()


@pytest.mark.security
def test_a_wrong_credential_over_http_is_held_as_over_grpc(tmp_path: Path) -> None:
    """A wrong bearer credential, none on a node with private reads, and a wrong one signing in:
    each 401 waits the node's refusal hold (before: under a millisecond), while a right one is
    answered."""
    hold = 0.3
    site = Site(tmp_path, tournament=False, private_reads=True, players={}, limits=Limits(refusal_hold=hold))
    try:
        own = {"Origin": site.url, "Content-Type": "application/json"}
        refusals = {
            "a wrong bearer": ("GET", "/api/v1/bots", {"Authorization": "Bearer adm_wrong"}, b""),
            "no credential": ("GET", "/api/v1/bots", {}, b""),
            "a wrong sign-in": ("POST", "/api/v1/session", own, b'{"token": "adm_wrong"}'),
        }
        for what, (method, path, headers, body) in refusals.items():
            start = time.monotonic()
            status, _, _ = request(site.url, path, method=method, headers=headers, body=body)
            assert status == 401 and time.monotonic() - start >= hold, what
        assert request(site.url, "/api/v1/bots", headers={"Authorization": f"Bearer {ADMIN}"})[0] == 200
    finally:
        site.close()
