"""``belote-arena replay`` reads no more than the largest record there can be, and quotes little.

A record is at most :data:`arena.cli.records.MAX_RECORD_BYTES` (worked out from
MAX_DEALS and the record format next to it): anything larger, a file or an
endless stream such as ``/dev/zero``, is refused with one ``error:`` line and
exit 1, after reading no further; garbage gets one line too, and an error
quotes only a short excerpt of what it read. The bytes a run reads are its
process's own count (``rchar`` of ``/proc/self/io``), so the bound is checked
as bytes, not as time.
"""

from __future__ import annotations

import json
import random
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from arena.cli.records import DEAL_BYTES, MAX_RECORD_BYTES
from arena.engine import Deal, Match, Ruleset, deal_record

pytestmark = [pytest.mark.security, pytest.mark.reliability]

#: runs ``belote-arena`` in a child and prints, on its standard output, the bytes that ``main`` read;
#: a first ``replay`` of an empty file, its error line dropped, loads what ``main`` imports as it runs
#: (source files read to compile them count too, more on a fresh checkout), so that only the
#: second's reading of its input is counted
COUNTED = """
import contextlib, io, sys
def read_so_far():
    with open("/proc/self/io") as f:
        return int(next(line for line in f if line.startswith("rchar")).split()[1])
from arena.cli import main
with contextlib.redirect_stderr(io.StringIO()):
    main(["replay", "/dev/null"])
before = read_so_far()
code = main(sys.argv[1:])
print(read_so_far() - before)
sys.exit(code)
"""
#: what a child may take of memory: a replay that read /dev/zero to its end would take it all
MEMORY_LIMIT = 1 << 30


def limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def counted_replay(*args: str, stdin: int | None = None) -> tuple[int, int, str]:
    """``belote-arena replay ARGS`` in a child: its exit code, the bytes it read, its standard error."""
    done = subprocess.run([sys.executable, "-c", COUNTED, "replay", *args], stdin=stdin, capture_output=True,
                          text=True, timeout=120, check=False, preexec_fn=limited)
    read = int(done.stdout.splitlines()[-1]) if done.stdout.strip().isdigit() else -1
    return done.returncode, read, done.stderr


def one_error_line(err: str, expected: str) -> str:
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in err, err[:2000]
    assert expected in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize("source", ["/dev/zero", "standard input from /dev/zero"])
def test_an_endless_input_is_read_no_further_than_the_largest_record(source: str) -> None:
    """Before, ``replay /dev/zero`` took 8.1 GB in 5 s, and never ended."""
    if source == "/dev/zero":
        code, read, err = counted_replay("/dev/zero")
    else:
        with open("/dev/zero", "rb") as zeros:
            code, read, err = counted_replay("-", stdin=zeros.fileno())
    assert code == 1
    one_error_line(err, f"is larger than the largest record there can be ({MAX_RECORD_BYTES:,} bytes")
    assert 0 < read <= MAX_RECORD_BYTES + 64 * 1024, read


def test_a_file_larger_than_the_largest_record_is_refused_unread(tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    with open(big, "wb") as f:
        f.truncate(MAX_RECORD_BYTES + 1)  # a sparse file: its size is all that is looked at
    code, read, err = counted_replay(str(big))
    assert code == 1
    one_error_line(err, "is larger than the largest record there can be")
    assert read < 64 * 1024, read


@pytest.mark.parametrize("garbage, expected", [
    (bytes(random.Random(7).randrange(128, 256) for _ in range(4096)), "is not UTF-8 text"),
    (b"[" * 100_000, "nested too deeply"),
    (b'{"ruleset": "coinche", "deals": ' + b"[" * 5000 + b"]" * 5000 + b"}", "nested too deeply"),
    (b"\x00" * 1000, "is not valid JSON"),
], ids=["not text", "deep array", "deep deals", "zeros"])
def test_garbage_gets_one_error_line(tmp_path: Path, garbage: bytes, expected: str) -> None:
    path = tmp_path / "garbage.json"
    path.write_bytes(garbage)
    code, _, err = counted_replay(str(path))
    assert code == 1
    one_error_line(err, expected)


@pytest.mark.parametrize("field", ["ruleset", "plays", "hands"])
def test_an_error_quotes_a_short_excerpt_of_the_input(tmp_path: Path, field: str) -> None:
    """Before, the whole text went back into the message (100 kB of it here)."""
    rec = json.loads(json.dumps(deal_record(played_deal("coinche"))))
    if field == "ruleset":
        rec["ruleset"] = "Y" * 100_000
    elif field == "plays":
        rec["plays"][0] = "X" * 100_000
    else:
        rec["hands"][0][0] = "Z" * 100_000
    path = tmp_path / "long.json"
    path.write_text(json.dumps(rec))
    code, _, err = counted_replay(str(path))
    assert code == 1
    line = one_error_line(err, "(99,")  # "... (99,9xx more characters)"
    assert len(line) < 400, len(line)


def played_deal(preset: str, seed: int = 1) -> Deal:
    match = Match(Ruleset.from_spec(preset), seed)
    deal = match.new_deal()
    rng = random.Random(seed)
    while not deal.is_over:
        deal.apply(rng.choice(deal.legal_actions()))
    return deal


def test_the_largest_deals_played_are_well_under_what_the_cap_allows_a_deal() -> None:
    """The cap's arithmetic stands on a deal's record being under DEAL_BYTES: random play, which
    bids and declares more than the built-in bots, stays under half of it."""
    largest = 0
    for preset in ("coinche", "classic-annonces"):
        match = Match(Ruleset.from_spec({"preset": preset, "deals": 300}), 3)
        rng = random.Random(3)
        for _ in range(300):
            deal = match.new_deal()
            while not deal.is_over:
                deal.apply(rng.choice(deal.legal_actions()))
            match.add(deal)
            largest = max(largest, len(json.dumps(deal_record(deal))))
    assert largest < DEAL_BYTES / 2, largest
