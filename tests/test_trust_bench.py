"""``bench/trust.py --quick`` reruns issue 16's attacks on a node against an honest match: each fails.

What is checked here holds on any machine: the honest bots get no strike and finish every match,
the node logs no traceback, and each attack is refused as it should be. The p99 ratios the bench
prints are figures for a person to compare, not asserted (a loaded machine moves them).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def phases() -> dict[str, dict[str, Any]]:
    command = [sys.executable, str(ROOT / "bench" / "trust.py"), "--quick", "--json"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stderr[-4000:]
    return {p["name"]: p for p in json.loads(done.stdout)["phases"]}


@pytest.mark.slow
@pytest.mark.reliability
def test_no_attack_makes_an_honest_bot_strike_or_the_node_log_a_traceback(
        phases: dict[str, dict[str, Any]]) -> None:
    assert "quiet" in phases and not phases["quiet"]["skipped"]
    for name, phase in phases.items():
        if phase["skipped"]:
            continue
        assert phase["honest_strikes"] == 0, (name, phase)
        assert phase["unfinished"] == 0, (name, phase)
        assert phase["decisions"] > 0, (name, phase)
        assert phase["log_tracebacks"] == 0, (name, phase["log_first"])
        assert not any(k.startswith("attacker failed") for k in phase["attacker"]), (name, phase["attacker"])
