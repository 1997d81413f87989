"""A timing test gets one more run when a loaded machine broke its bound (:mod:`tests.timing`), and
none for any other failure."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

TESTS = '''
import pytest
from pathlib import Path
from tests.timing import within

def runs(name):
    f = Path(name)
    n = int(f.read_text()) + 1 if f.exists() else 1
    f.write_text(str(n))
    return n

@pytest.mark.timing
def test_too_slow_once():
    within(runs("once") > 1, "p99 9.1 ms against 0.4 ms quiet")

@pytest.mark.timing
def test_too_slow_twice():
    runs("twice")
    within(False, "p99 9.1 ms against 0.4 ms quiet")

@pytest.mark.timing
def test_a_wrong_answer():
    runs("wrong")
    assert False, "a strike"

def test_not_timing_too_slow():
    runs("plain")
    within(False, "slow")
'''


def test_a_broken_bound_runs_once_more_and_a_wrong_answer_never(tmp_path: Path) -> None:
    (tmp_path / "test_paced.py").write_text(TESTS)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BELOTE_TEST_", "PYTEST_"))}
    env["PYTHONPATH"] = str(ROOT)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "tests.timing", "-p", "no:cacheprovider", "-p", "no:xdist",
         "-q", "-o", "markers=timing", "--rootdir", str(tmp_path), "-c", os.devnull,
         str(tmp_path / "test_paced.py")],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False)
    out = done.stdout + done.stderr
    assert done.returncode == 1, out
    runs = {name: int((tmp_path / name).read_text()) for name in ("once", "twice", "wrong", "plain")}
    assert runs == {"once": 2, "twice": 2, "wrong": 1, "plain": 1}, out
    assert "3 failed, 1 passed, 2 rerun" in out, out
