"""`belote-arena tournament status --watch` into a pipe, and `tournament export`: a tournament's standings as
CSV and its records as JSONL or a zip, through a node, as a person pipes or saves them.

A node runs in this process (its own event loop thread); the command line runs as another process
whose output is a pipe, exactly as ``... | tee log`` or ``> file`` makes it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from arena.credentials import ADMIN_ENV
from tests.cli_node import ADMIN, node_with_bots
from tests.test_tournament_cli import Capsys, run

BIN = Path(sys.executable).parent
#: names long enough that an 80-column table cuts them, and the numbers beside them
LONG = ("alpha-the-first-of-a-rather-long-line-of-bots", "beta-the-second-of-a-rather-long-line-of-bots")


def piped(*argv: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """``belote-arena ARGV`` with its output a pipe (no terminal), as ``| tee`` or ``> file`` runs it."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "FORCE_COLOR", "TERM")}
    env[ADMIN_ENV] = ADMIN
    return subprocess.run([str(BIN / "belote-arena"), *argv], capture_output=True, stdin=subprocess.DEVNULL,
                          text=True, env=env, timeout=timeout, check=False)


@pytest.fixture
def admin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ADMIN_ENV, ADMIN)


@pytest.mark.slow
def test_watch_into_a_pipe_prints_whole_values_and_headers(
    tmp_path: Path, capsys: Capsys, admin: None,
) -> None:
    with node_with_bots(tmp_path, LONG, connect=True) as node:
        a = node.address
        tid = "a-tournament-with-a-long-id-to-follow-in-a-log"
        code, _, err = run(capsys, "tournament", "create", "--format", "round-robin", "--bots",
                           ",".join(LONG), "--deals", "2", "--rounds", "3", "--id", tid, "--address", a,
                           "--json")
        assert code == 0, err
        done = piped("tournament", "status", tid, "--watch", "--interval", "0.2", "--address", a)
        status = json.loads(piped("tournament", "status", tid, "--address", a, "--json").stdout)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "\u2026" not in out, out  # nothing cut short with an ellipsis
    assert "\x1b[" not in out, out  # nor coloured: a log holds text
    for header in ("played", "won", "drawn", "lost", "score", "for", "against", "diff"):
        assert f" {header} " in out, out
    assert f"{tid} (finished): 6/6 matches" in out
    for s in status["standings"]:  # each row whole: the bot's name and every number
        [row] = [line for line in out.splitlines() if f" {s['bot']} " in line]
        cells = [c.strip() for c in row.split("\u2502") if c.strip()]
        assert cells == [str(s["rank"]), s["bot"], str(s["played"]), str(s["wins"]), str(s["draws"]),
                         str(s["losses"]), f"{s['score']:g}", str(s["points_for"]), str(s["points_against"]),
                         str(s["diff"])], row
