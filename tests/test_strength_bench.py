"""``bench/strength.py``: its interval maths on known numbers, and tiny runs end to end."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import strength  # noqa: E402

BENCH = [sys.executable, str(ROOT / "bench" / "strength.py")]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([*BENCH, *args], capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stderr
    return done


# ------------------------------------------------------------------ the maths
@pytest.mark.parametrize(("df", "t"), [(4, 2.776), (9, 2.262), (29, 2.045), (99, 1.984), (10_000, 1.960)])
def test_t_quantiles_match_the_tables(df: int, t: float) -> None:
    assert strength.t_quantile(0.975, df) == pytest.approx(t, abs=2e-3)


def test_the_mean_and_its_interval() -> None:
    iv = strength.mean_interval([1, 2, 3, 4, 5])
    assert (iv.mean, iv.n) == (3, 5)
    assert iv.sd == pytest.approx(math.sqrt(2.5))
    half = 2.7764 * math.sqrt(2.5) / math.sqrt(5)
    assert (iv.low, iv.high) == pytest.approx((3 - half, 3 + half), abs=1e-3)
    one = strength.mean_interval([7.0])
    assert one.mean == 7 and math.isinf(one.high)


def test_deals_to_separate() -> None:
    # (1.96 * 20 / 10)^2 = 15.37 deals for a 10-point edge with a deal's sd of 20
    assert strength.units_to_separate(10, 400) == pytest.approx(1.959964**2 * 4)
    assert math.isinf(strength.units_to_separate(0, 400))
    # two boards: deal differences (10, 30) and (-10, 10); boards 20 and 0
    sep = strength.separation([(10, 30), (-10, 10)], "points")
    z2 = 1.959964**2
    # singles 10 30 -10 10: mean 10, variance 800/3; boards: mean 10, variance 200, 2 deals each
    assert sep.plain == pytest.approx(z2 * (800 / 3) / 100)
    assert sep.duplicate == pytest.approx(2 * z2 * 200 / 100)
    assert sep.ratio == pytest.approx((800 / 3) / 400)
    # wins: singles 1 1 0 1 (mean .75, variance .25); boards 1 and .5 (mean .75, variance .125)
    wins = strength.separation([(10, 30), (-10, 10)], "wins")
    assert wins.plain == pytest.approx(z2 * 0.25 / 0.0625)
    assert wins.duplicate == pytest.approx(2 * z2 * 0.125 / 0.0625)


def test_duplicate_play_cancels_the_cards() -> None:
    """Boards whose two deals mirror each other (the cards decide everything) need no deals at all
    to compare, played twice; singly, their spread costs many."""
    deals = [(100.0, -80.0), (-60.0, 80.0), (40.0, -20.0), (-90.0, 110.0)]  # every board +10
    sep = strength.separation(deals)
    assert sep.duplicate == 2 and sep.plain > 100


def test_a_board_is_the_same_whatever_the_workers() -> None:
    row = strength.Row("heuristic", "random", "coinche", 0, 1)
    first, again = strength.play_board(row, 3, seed=9), strength.play_board(row, 3, seed=9)
    assert first.diffs == again.diffs and first.decisions == again.decisions
    assert all(n > 0 for n in first.decisions)


# ------------------------------------------------------------------ end to end
LAST = re.compile(r"^search_vs_heuristic_low=(n/a|-?\d+\.\d)$")


def test_a_tiny_run_ends_with_the_search_figure() -> None:
    done = run("--rows", "heuristic-random,search-heuristic", "--deals", "4", "--timed-deals", "1",
               "--ms", "5", "--workers", "1")
    lines = done.stdout.strip().splitlines()
    assert LAST.match(lines[-1]), lines[-1]
    assert any(line.startswith("heuristic vs random   classic") for line in lines)
    assert any("deals played to separate" in line for line in lines)
    # one timed board: no interval, so no figure, whether or not the search bot is there
    assert lines[-1] == "search_vs_heuristic_low=n/a"
    if strength.search_status() is not None:
        assert any(line.startswith("search vs heuristic") and "not available" in line for line in lines)


def test_json_rows_are_the_same_on_two_workers() -> None:
    args = ("--rows", "heuristic-random", "--deals", "6", "--json")
    one = json.loads(run(*args, "--workers", "1").stdout)
    two = json.loads(run(*args, "--workers", "2").stdout)
    strip = [{k: v for k, v in r.items() if k != "ms_per_decision"} for r in one["rows"]]
    assert strip == [{k: v for k, v in r.items() if k != "ms_per_decision"} for r in two["rows"]]
    assert [(r["a"], r["b"], r["ruleset"], r["boards"]) for r in one["rows"]] == [
        ("heuristic", "random", "classic", 6), ("heuristic", "random", "coinche", 6)]
    assert all(r["low"] <= r["mean"] <= r["high"] for r in one["rows"])


def test_the_colver_row_runs_or_says_why_not() -> None:
    res = json.loads(run("--rows", "heuristic-colver", "--colver-deals", "1", "--ms", "2", "--workers", "1",
                         "--json").stdout)
    (row,) = res["rows"]
    assert (row["a"], row["b"], row["ruleset"]) == ("heuristic", "colver", "colver")
    if res["colver"] is None:
        assert "pip install -e '.[bench]'" in row["missing"]
    else:
        assert row["missing"] is None and row["boards"] == 1


@pytest.mark.skipif(strength.search_status() is not None, reason="the search bot is not installed")
def test_two_timed_boards_give_the_search_figure() -> None:
    done = run("--rows", "search-heuristic", "--deals", "4", "--timed-deals", "2", "--ms", "5",
               "--workers", "1")
    last = done.stdout.strip().splitlines()[-1]
    assert LAST.match(last) and last != "search_vs_heuristic_low=n/a", last
