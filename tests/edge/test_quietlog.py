"""Quiet logs and the edge's small parts: one line per problem, at a bounded rate; peers by address;
token buckets; bad bytes kept from the servicers."""

from __future__ import annotations

import logging
import sys

import pytest
from belote.arena.v1 import bot_service_pb2 as bpb

from arena.edge.guard import Lenient, Malformed, TokenBucket, bot_streams, peer_host
from arena.edge.quietlog import QuietFilter, QuietLog, RateLimit

pytestmark = pytest.mark.reliability


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_problem_is_logged_once_per_period_and_the_next_line_counts_the_held_back(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = Clock()
    quiet = QuietLog(logging.getLogger("test.quiet"), every=10.0, clock=clock)
    with caplog.at_level(logging.WARNING, "test.quiet"):
        for i in range(100):
            quiet.warning("bad bytes", "refused bad bytes from peer %d", i)
        quiet.warning("other", "another problem")
        clock.now = 10.5
        quiet.warning("bad bytes", "refused bad bytes from peer %d", 100)
    assert [r.getMessage() for r in caplog.records] == [
        "refused bad bytes from peer 0",
        "another problem",
        "refused bad bytes from peer 100 (99 more like it in the last 10 s)",
    ]


def test_a_line_is_always_one_line() -> None:
    records: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(self.format(record))

    logger = logging.getLogger("test.quiet.oneline")
    logger.addHandler(Keep())
    logger.setLevel(logging.INFO)
    logger.propagate = False
    QuietLog(logger).info("k", "a name with\na newline: %s", "and\nanother")
    assert records == ["a name with a newline: and another"]


def test_the_keys_remembered_are_bounded() -> None:
    limit = RateLimit(every=10.0, max_keys=3, clock=Clock())
    for key in range(1000):
        assert limit.admit(key) == 0
    assert len(limit._seen) == 3


def test_the_filter_makes_a_traceback_one_line_and_holds_back_repeats() -> None:
    clock = Clock()
    quiet = QuietFilter(every=10.0, clock=clock)

    def record() -> logging.LogRecord:
        try:
            raise ValueError("Wire format was corrupt")
        except ValueError:
            exc = sys.exc_info()
        return logging.LogRecord("grpc._cython.cygrpc", logging.ERROR, __file__, 1,
                                 "Unexpected [DecodeError] raised by servicer method [%s]", ("/m",), exc)

    first = record()
    assert quiet.filter(first)
    assert first.exc_info is None and first.exc_text is None
    assert first.getMessage() == ("Unexpected [DecodeError] raised by servicer method [/m]: "
                                  "ValueError: Wire format was corrupt")
    assert "\n" not in logging.Formatter().format(first)
    assert not quiet.filter(record())
    clock.now = 11
    again = record()
    assert quiet.filter(again)
    assert again.getMessage().endswith("(1 more like it in the last 10 s)")

    def failed(address: str) -> logging.LogRecord:
        return logging.LogRecord("grpc._cython.cygrpc", logging.ERROR, __file__, 1,
                                 f"Failed batch: <op at {address}>", (), None)

    assert quiet.filter(failed("0x7f01"))
    assert not quiet.filter(failed("0x7f02"))  # the same problem, about another object
    debug = logging.LogRecord("grpc", logging.DEBUG, __file__, 1, "detail", (), None)
    assert quiet.filter(debug) and quiet.filter(debug)  # below WARNING: untouched


@pytest.mark.parametrize(("peer", "host"), [
    ("ipv4:10.0.0.7:51234", "10.0.0.7"),
    ("ipv6:[2001:db8:1:2:3:4:5:6]:443", "2001:db8:1:2::/64"),
    ("ipv6:%5B2001:db8:1:2:ffff::1%5D:443", "2001:db8:1:2::/64"),
    ("ipv6:[::1]:50051", "::/64"),
    ("unix:/tmp/arena.sock", "unix:/tmp/arena.sock"),
])
def test_a_peer_is_counted_by_its_address_without_the_port(peer: str, host: str) -> None:
    assert peer_host(peer) == host


def test_stream_counts_refuse_over_either_limit_and_free_on_close() -> None:
    count = bot_streams(per_peer=2, total=3)
    assert count.open("a") is None and count.open("a") is None
    assert count.open("a") == "2 bot streams are open from a, the limit per address"
    assert count.open("b") is None
    assert count.open("c") == "the node holds its limit of 3 bot streams"
    count.close("a")
    assert count.open("c") is None
    assert count.open_calls == 3
    for key in ("a", "b", "c"):
        count.close(key)
    assert count._by_key == {} and count.open_calls == 0  # only the keys with a call open are kept


def test_a_token_bucket_allows_its_burst_then_its_rate() -> None:
    clock = Clock()
    bucket = TokenBucket(rate=2.0, burst=3, clock=clock)
    assert [bucket.take() for _ in range(4)] == [True, True, True, False]
    clock.now = 0.5
    assert bucket.take() and not bucket.take()
    clock.now = 100
    assert [bucket.take() for _ in range(4)] == [True, True, True, False]


def test_a_lenient_deserializer_turns_bad_bytes_into_a_malformed_value() -> None:
    parse = Lenient(bpb.ConnectRequest.FromString)
    good = bpb.ConnectRequest(ping=bpb.Ping(nonce=3))
    assert parse(good.SerializeToString()) == good
    bad = parse(b"\xff\xff\xff")
    assert isinstance(bad, Malformed)
    assert bad.type_name == "ConnectRequest"
    assert "corrupt" in bad.reason or "parsing" in bad.reason
