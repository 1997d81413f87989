"""Bad HTTP requests get their 4xx and at most one quiet log line per kind, never a traceback.

Each kind of request below is sent 40 times to the real server, as an
anonymous client would; the node's log lines are caught from every logger
(aiohttp's own, sent to ``arena.web.http``, and the node's). Then hypothesis
throws paths, query strings, methods and bodies at every route: no answer is a
500, and nothing logs a traceback.
"""

from __future__ import annotations

import logging
import socket
import tempfile
import time
import urllib.parse
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.node.rankings import MAX_OFFSET
from tests.web.clients import connect, json_of, request
from tests.web.site import Site

pytestmark = pytest.mark.reliability

TIMES = 40


class Caught(logging.Handler):
    """Every record any logger lets through, as its handlers would get it."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def lines(self) -> list[str]:
        """The lines about problems (warnings and above, or with an exception), as written."""
        formatter = logging.Formatter()
        return [formatter.format(r) for r in self.records if r.levelno >= logging.WARNING or r.exc_info]


@pytest.fixture(scope="module")
def site() -> Iterator[Site]:
    with tempfile.TemporaryDirectory() as tmp:
        s = Site(Path(tmp), tournament=False)
        try:
            yield s
        finally:
            s.close()


@pytest.fixture
def caught() -> Iterator[Caught]:
    handler = Caught()
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    try:
        yield handler
    finally:
        root.removeHandler(handler)
        root.setLevel(level)


def big_header(site: Site) -> tuple[int, bytes]:
    status, _, body = request(site.url, "/api/v1/pools", headers={"X-Big": "a" * 8200})
    return status, body


def deep_json(site: Site) -> tuple[int, bytes]:
    status, _, body = request(site.url, "/api/v1/session", method="POST", body=b"[" * 1500 + b"]" * 1500,
                              headers={"Origin": site.url, "Content-Type": "application/json"})
    return status, body


def superscript_offset(site: Site) -> tuple[int, bytes]:
    status, _, body = request(site.url, "/api/v1/bots?offset=%C2%B2")  # "²": isdigit(), not int()
    return status, body


def offset_past_the_backend(site: Site) -> tuple[int, bytes]:
    status, _, body = request(site.url, f"/api/v1/leaderboard?offset={1 << 31}")
    return status, body


def thousands_of_digits(site: Site) -> tuple[int, bytes]:
    status, _, body = request(site.url, "/api/v1/tournaments?offset=" + "9" * 5000)
    return status, body


def a_name_no_file_has(site: Site) -> tuple[int, bytes]:
    status, _, body = request(site.url, "/static/" + "x" * 300)
    return status, body


KINDS: dict[str, tuple[Callable[[Site], tuple[int, bytes]], int, str]] = {
    "an 8 KB header": (big_header, 400, ""),
    "a 1,500-deep JSON body": (deep_json, 400, "the body must be JSON"),
    "offset=%C2%B2": (superscript_offset, 400, f"offset must be a whole number from 0 to {MAX_OFFSET}"),
    "offset=2**31": (offset_past_the_backend, 400, f"offset must be a whole number from 0 to {MAX_OFFSET}"),
    "an offset of 5,000 digits": (thousands_of_digits, 400, f"from 0 to {MAX_OFFSET}"),
    "a static file name too long for the disk": (a_name_no_file_has, 404, ""),
}


@pytest.mark.parametrize("kind", list(KINDS))
def test_a_bad_request_gets_its_4xx_and_at_most_one_quiet_line_per_kind(
    site: Site, caught: Caught, kind: str,
) -> None:
    send, status, says = KINDS[kind]
    for _ in range(TIMES):
        got, body = send(site)
        assert got == status, body[:300]
        if says:
            assert says in json_of(body)["error"]
    time.sleep(0.2)  # what the node logs, it has logged
    lines = caught.lines()
    assert len(lines) <= 1, lines
    assert not any("Traceback" in line or "\n" in line for line in lines), lines


def test_an_event_stream_client_that_hangs_up_logs_nothing_of_it(site: Site, caught: Caught) -> None:
    match_id = site.start_match(deals=1)
    site.wait_match(match_id)
    for _ in range(TIMES):  # asks for a finished match's events, and leaves before its answer
        s = connect(site.url)
        s.sendall(f"GET /api/v1/matches/{match_id}/events HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")  # a reset
        s.close()
    time.sleep(1.0)
    lines = caught.lines()
    assert len(lines) <= 1, lines
    assert not any("Traceback" in line for line in lines), lines


def test_the_furthest_offset_is_the_backend_s(site: Site) -> None:
    status, _, body = request(site.url, f"/api/v1/leaderboard?offset={MAX_OFFSET}")
    assert status == 200 and json_of(body)["entries"] == []
    status, _, body = request(site.url, f"/api/v1/leaderboard?offset={MAX_OFFSET + 1}")
    assert status == 400 and json_of(body)["error"] == (
        f"offset must be a whole number from 0 to {MAX_OFFSET}, not '{MAX_OFFSET + 1}'")


ROUTES = ["/api/v1/pools", "/api/v1/leaderboard", "/api/v1/bots", "/api/v1/bots/{}",
          "/api/v1/bots/{}/history", "/api/v1/tournaments", "/api/v1/tournaments/{}", "/api/v1/matches/{}",
          "/api/v1/matches/{}/events", "/api/v1/session", "/{}", "/static/{}", "/bots/{}", "/tournaments/{}",
          "/matches/{}/replay"]
NAMES = st.sampled_from(["offset", "limit", "method", "pool"])
BODIES = st.sampled_from([b"", b"{}", b'{"token": 1}', b'{"token": "x"}', b"[" * 3000, b"\xff\xfe", b"null"])
#: pieces that parsers trip on: digits of other scripts, escapes, separators, lengths
PIECES = st.sampled_from(["0", "9" * 40, "-1", "1e3", "²", "٠", "%", "%00", "%FF", "%C2%B2", "/", "..", "%2F",
                          "?", "&", "=", "#", " ", "'", '"', "<", "${", "\\", ":", "tournament:", "m-",
                          "-leg0", "x" * 300, "é", "\t", "\x00"])
TEXT = st.lists(PIECES | st.text(max_size=8), max_size=5).map("".join)
#: a path's part: a piece alone, text, or a name too long for a file
PART = PIECES | TEXT | st.text(min_size=200, max_size=400)
#: a query's value: a piece alone, digits of any script ("²", "٣": str.isdigit() takes them), or text
VALUE = PIECES | st.text(st.characters(categories=("Nd", "No")), min_size=1, max_size=3) | TEXT


def _quoted(text: str) -> str:
    return urllib.parse.quote(text, safe="%/?&=#'\"<${\\:")


@settings(max_examples=400, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(route=st.sampled_from(ROUTES), part=PART,
       query=st.lists(st.tuples(NAMES | TEXT, VALUE), max_size=3),
       method=st.sampled_from(["GET", "GET", "POST", "DELETE", "HEAD", "PUT"]), body=BODIES,
       content_type=st.sampled_from(["application/json", "text/plain", "application/json; charset=nope"]))
def test_no_request_gets_a_500_or_logs_a_traceback(
    site: Site, caught: Caught, route: str, part: str, query: list[tuple[str, str]], method: str, body: bytes,
    content_type: str,
) -> None:
    path = route.replace("{}", _quoted(part))
    if query:
        path += "?" + "&".join(f"{_quoted(k)}={_quoted(v)}" for k, v in query)
    status, _, reply = request(site.url, path, method=method, body=body if method in ("POST", "PUT") else b"",
                               headers={"Origin": site.url, "Content-Type": content_type})
    assert 0 < status < 500, (path, reply[:300])
    assert not any("Traceback" in line for line in caught.lines())
