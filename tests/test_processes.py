"""No process a test starts outlives its owner (:mod:`tests.processes`): a test run with that plugin
fails the test whose process is left, names it, and ends the process; a module's fixture may keep
its process until the module is done; two workers each check their own."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests import processes

ROOT = Path(__file__).resolve().parent.parent

TESTS = '''
import subprocess, sys
import pytest

from tests import processes

SLEEP = [sys.executable, "-c", "import time; time.sleep(120)"]

@pytest.fixture(scope="module")
def shared():
    p = subprocess.Popen(SLEEP)
    yield p
    p.kill()
    p.wait()

@pytest.fixture(scope="module")
def forgotten():
    return subprocess.Popen(SLEEP + ["forgotten-by-its-module"])

def test_a_module_fixture_s_process_may_outlive_one_test(shared):
    assert shared.poll() is None

def test_and_is_still_there_for_the_next(shared):
    assert shared.poll() is None

def test_a_process_left_in_the_background_of_a_shell():
    subprocess.Popen(["bash", "-c", "sleep 110 & exec sleep 111"], start_new_session=True)

def test_a_process_waited_for_is_fine():
    subprocess.run(["true"], check=True)

def test_a_module_fixture_that_never_stops_its_process(forgotten):
    assert forgotten.poll() is None
'''


def alive(pattern: str) -> list[str]:
    out = subprocess.run(["pgrep", "-af", pattern], capture_output=True, text=True, check=False).stdout
    return [line for line in out.splitlines() if "pgrep" not in line]


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one process", "two workers"])
def test_a_process_that_outlives_its_owner_fails_the_run_and_is_ended(
    tmp_path: Path, workers: list[str],
) -> None:
    (tmp_path / "test_left.py").write_text(TESTS)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BELOTE_TEST_", "PYTEST_"))}
    env["PYTHONPATH"] = str(ROOT)
    env["BELOTE_TEST_PROCESS_GRACE_S"] = "0.5"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "tests.processes", "-p", "no:cacheprovider", "-q",
         "--rootdir", str(tmp_path), "-c", os.devnull, *workers, str(tmp_path / "test_left.py")],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False)
    out = done.stdout + done.stderr
    assert done.returncode == 1, out
    assert re.search(r"\b5 passed, 2 errors", out), out
    assert "ERROR test_left.py::test_a_process_left_in_the_background_of_a_shell" in out, out
    assert "started during the call of test_left.py::test_a_process_left_in_the_background_of_a_shell: " \
           "sleep 110" in out, out
    # the module's fixture is charged when its module is done, to the test whose setup started it
    assert ("started during the setup of test_left.py::test_a_module_fixture_that_never_stops_its_process"
            in out), out
    assert not alive("sleep 11[01]") and not alive("forgotten-by-its-module"), "a leak was not ended"


def test_a_shell_s_processes_are_found_even_as_they_are_exec_d() -> None:
    """A scan right after ``bash -c "sleep 110 & exec sleep 111"`` starts falls, as often as not, while
    the shell and its child are each in the middle of an ``execve``, when their environment reads
    empty: read once, a quarter of these scans here found neither (a loaded run's leak went unseen that
    way). Each scan must find at least one of them, the shell or what it became."""
    missed = 0
    for i in range(60):
        token = f"exec-scan:{os.getpid()}:{i}"
        shell = subprocess.Popen(["bash", "-c", "sleep 110 & exec sleep 111"], start_new_session=True,
                                 env={**os.environ, processes.OWNER: token})
        try:
            missed += not processes.carrying([token])
        finally:
            os.killpg(shell.pid, signal.SIGKILL)  # the session's group: the shell and its child
            shell.wait(10)
    assert missed == 0, f"{missed} of 60 scans found neither process"
