"""``belote-arena demo --ladder`` as a newcomer runs it: the ladder places the built-in bots with nobody
making a tournament, and an SPRT promotes the second version of ``patch``; it prints the standings and
the versions, each as it is."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.slow
def test_the_ladder_demo_places_every_bot_and_promotes_the_better_version(tmp_path: Path) -> None:
    argv = [sys.executable, "-m", "arena.cli", "demo", "--ladder", "--data-dir", str(tmp_path)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=240, stdin=subprocess.DEVNULL,
                          env={**os.environ, "COLUMNS": "160", "PYTHONUNBUFFERED": "1"})
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "Ratings in coinche" in out and "Versions of patch" in out
    for bot in ("heuristic", "heuristic-b", "random", "random-b", "patch"):
        assert f"│ {bot} " in out, out
    rows = {line.split("│")[1].strip(): line for line in out.splitlines() if line.count("│") >= 6}
    assert "promoted" in rows["2"] and "sprt" in rows["2"] and "H1" in rows["2"], out
    assert "retired" in rows["1"], out
    # the test's Elo with its 95% interval, and an LLR on the scale of its bounds (it printed 703.53
    # and +1000 Elo for 8 pairs all won before issue 24)
    assert "95%:" in out and "1000" not in rows["2"] and "703" not in out, out
    llr = float(out.split("the SPRT ")[1].split("LLR ")[1].split()[0])
    assert 2.9 < llr < 5, out
    # each version's games are counted: version 2 played once promoted, both played in the test
    assert int(rows["2"].split("│")[4]) > 0 and int(rows["1"].split("│")[4]) > 0, out
    assert "forfeits" not in out + done.stderr  # the last matches played out before the bots left
