"""``bench/detection.py --quick``: it runs, and its figures say what the audit promises."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_the_quick_bench_flags_the_remembering_bot_and_prints_its_costs() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "detection.py"), "--quick", "--json"],
                          capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["flagged_after_20_pairs_rate_1"] == 1.0
    assert out["flagged_after_5_pairs_rate_1"] == 0.0  # five deals compared: too few for a flag
    assert out["honest_audits"] == 4 and out["honest_flags"] == 0
    assert out["oracle_ms_per_decision"] > 0 and out["audit_vs_replay"] > 1
