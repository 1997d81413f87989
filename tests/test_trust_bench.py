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


#: its figures are ratios of wall time: run alone (python -m pytest -m timing)
pytestmark = pytest.mark.timing


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


@pytest.mark.slow
@pytest.mark.reliability
def test_slowloris_connections_past_an_address_bound_are_refused_and_a_reader_elsewhere_is_answered(
        phases: dict[str, dict[str, Any]]) -> None:
    tally = phases["slowloris"]["attacker"]
    assert tally.get("refused at once", 0) > 0, tally  # 200 from one address: past its 64
    assert tally.get("longest held s", 0) <= 10, tally  # the head timeout (5 s), with room
    assert tally.get("reader answered", 0) > 0 and tally.get("reader not answered", 0) == 0, tally


@pytest.mark.slow
@pytest.mark.security
def test_health_watches_from_one_address_are_bounded_and_the_probes_still_get_in(
        phases: dict[str, dict[str, Any]]) -> None:
    """Before the bounds by kind, 3,070 of them filled the node's grpc limit and the probes were
    refused ("Concurrent RPC limit exceeded!")."""
    tally = phases["health-watch"]["attacker"]
    assert 0 < tally.get("watches held", 0) <= 8, tally  # Limits.max_health_watches_per_peer
    refusals = [k for k in tally if k.startswith("watch refused: RESOURCE_EXHAUSTED")]
    assert refusals and all("limit per address" in k for k in refusals), tally
    for probe in ("probe check answered", "probe list answered", "probe stream let in"):
        assert tally.get(probe, 0) > 0, tally
    assert not [k for k in tally if k.startswith("probe") and "refused" in k], tally
