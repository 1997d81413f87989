"""``bench/sprt.py`` simulates the SPRT with a vectorised copy of it: the copy decides as the test does.

The bench's error rates are only worth what its copy is: here both are fed the same random pairs
(scores and pairs set aside, on laws degenerate and not, at several bounds and ``min_pairs``), and
must agree run by run on the decision, the pair it came at, the pentanomial and the pairs set aside
exactly, and on the LLR to its last bits: numpy's ``log1p`` and the C library's (``math.log1p``)
differ in the last bit of about one value in twelve, and all else is the same operations in the
same order (their results only differ where an LLR falls within 1e-15 of a bound).
"""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from arena.tournament.spec import SprtOptions
from arena.tournament.sprt import PAIR_SCORES, SequentialTest, score_interval

BENCH = Path(__file__).resolve().parents[2] / "bench" / "sprt.py"


def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_sprt", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_sprt"] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


LAWS = {
    "uniform": (0.2, 0.2, 0.2, 0.2, 0.2, 0.0),
    "high draw with thrown-in": (0.02, 0.01, 0.6, 0.02, 0.05, 0.3),
    "one-sided": (0.5, 0.0, 0.0, 0.0, 0.5, 0.0),
    "all won": (0.0, 0.0, 0.0, 0.0, 1.0, 0.0),
    "all drawn": (0.0, 0.0, 1.0, 0.0, 0.0, 0.0),
}


@pytest.mark.parametrize("law", sorted(LAWS))
@pytest.mark.parametrize(("elo0", "elo1", "min_pairs"), [(0.0, 30.0, 2), (-10.0, 5.0, 2), (0.0, 100.0, 9)])
def test_the_vectorised_copy_decides_as_the_test(law: str, elo0: float, elo1: float, min_pairs: int) -> None:
    b = bench()
    options = SprtOptions(elo0=elo0, elo1=elo1, max_pairs=150, min_pairs=min_pairs)
    runs = 60
    rng = np.random.default_rng(abs(hash((law, elo0, elo1))) % 2**32)
    outcomes = rng.choice(6, size=(runs, options.max_pairs), p=LAWS[law])
    vector = b.VectorTest(options, runs)
    stop = np.full(runs, options.max_pairs)
    for t in range(options.max_pairs):
        rows = np.flatnonzero(vector.decision == 0)
        vector.add(outcomes[rows, t], rows)
        stop[rows[vector.decision[rows] != 0]] = t + 1
    decided = 0
    for r in range(runs):
        test = SequentialTest(options)
        at = options.max_pairs
        for t, k in enumerate(outcomes[r]):
            if test.add(None if k == b.ASIDE else PAIR_SCORES[k]) is not None:
                at = t + 1
                break
        code = {"H1": 1, "H0": -1, None: 0}[test.decision]
        assert (code, at) == (vector.decision[r], stop[r]), f"run {r}"
        assert test.llr == pytest.approx(vector.llr[r], rel=1e-12, abs=1e-12)
        assert test.set_aside_pairs == vector.set_aside[r]
        assert tuple(test.counts) == tuple(vector.counts[r])
        decided += code != 0
    if law in ("all won", "all drawn") and elo0 == 0.0:
        assert decided > 0  # the comparison covered decisions, not only undecided runs


def test_the_bench_checks_the_interval_as_the_test_computes_it() -> None:
    """The bench counts a run's interval as missing the truth when the truth is out of
    :func:`score_interval`; on a few pentanomials, the two agree."""
    b = bench()
    for counts in ((3, 1, 20, 2, 10), (0, 0, 12, 0, 0), (1, 0, 0, 0, 9), (40, 10, 100, 10, 60)):
        low, high = score_interval(counts)
        for m in (0.3, 0.45, 0.5, 0.55, 0.7, 0.9):
            if min(abs(m - low), abs(m - high)) < 1e-6:
                continue
            missed = bool(b.interval_misses(np.array([counts]), m)[0])
            assert missed == (not low <= m <= high), (counts, m, low, high)
    assert math.isfinite(b.error_ratio(b.Outcome(0.05, 0.0, 0.95, 10.0), 0.0, SprtOptions(), 10_000))
