"""``bench/mirror_legs.py --quick``: it runs, and what it measures is what the docs say mirror legs cost."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.timing import within

ROOT = Path(__file__).resolve().parent.parent


#: its figures are ratios of wall time: run alone (python -m pytest -m timing)
pytestmark = pytest.mark.timing


@pytest.mark.slow
def test_the_quick_bench_shows_legs_one_after_the_other_take_about_twice_as_long_with_free_slots() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "mirror_legs.py"), "--quick", "--json"],
                          capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    # against a plain tournament of as many matches in the same run: legs in step were about 1.0
    within(1.3 < out["round_robin_plentiful_vs_plain"] < 2.8, f"{out}")
    within(1.3 < out["sprt_vs_plain"] < 2.8, f"{out}")
