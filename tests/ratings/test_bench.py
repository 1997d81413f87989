"""``bench/ratings.py`` runs end to end on a tiny pool and reports what it timed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent


def test_the_quick_ratings_bench_runs_on_a_tiny_pool() -> None:
    command = [sys.executable, str(ROOT / "bench" / "ratings.py"), "--quick", "--json"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    res = json.loads(done.stdout)
    # three readers of a node's pages and API during a tournament, against one alone
    assert res["readers"] == 3 and res["requests"] > 3 and res["errors"] == 0
    assert res["api_p99_ms"] > 0 and res["ratio_vs_one_reader"] > 0
    assert (res["bots"], res["results"]) == (50, 5000)
    assert 0 < res["pairs"] <= 50 * 49 // 2
    assert res["leaderboard_s"] > 0 and res["sum_s"] > 0 and res["ratio_vs_sum"] > 0
    assert res["spearman_vs_true"] > 0.9


def test_the_ratings_bench_ends_with_its_figures() -> None:
    command = [sys.executable, str(ROOT / "bench" / "ratings.py"), "--quick", "--bots", "20",
               "--results", "500", "--readers", "0"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    last = done.stdout.strip().splitlines()[-2:]
    assert last[0].startswith("leaderboard_s=") and last[1].startswith("ratio_vs_sum=")
