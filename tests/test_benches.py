"""Every bench in bench/ runs in CI, so that none rots (issue 17).

A bench with a test of its own is run there (:data:`COVERED` says where); every other one is run
here with ``--quick``, as a subprocess, and its last line must be the figure its docstring and
bench/README.md promise, ``name=value``. A new file in bench/ with neither fails
:func:`test_every_bench_is_run_by_a_test`. The figures themselves are not asserted: they are for a
person to compare, and a loaded machine moves them.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import re
import secrets
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.queue.conftest import REDIS_URL, redis_unavailable
from tests.queue.redis_counts import redis_commands

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"

#: the benches a test of their own runs (its --quick, or options of its own as small), by that test
COVERED = {
    "attacks.py": "tests/test_attacks_bench.py",
    "cancel_stop.py": "tests/test_cancel_stop_bench.py",
    "detection.py": "tests/test_detection_bench.py",
    "mirror_legs.py": "tests/test_mirror_legs_bench.py",
    "ratings.py": "tests/ratings/test_bench.py",
    "strength.py": "tests/test_strength_bench.py",
    "trust.py": "tests/test_trust_bench.py",
}
#: modules of bench/ that are not benches (no ``__main__``), by the bench that runs them
HELPERS = {"web_readers.py": "ratings.py"}
#: the benches run here, each with the name its last line gives; ``slow``: more than ~8 s here
QUICK = {
    "analysis.py": ("dd_solve_ms_median", False),
    "bot_history.py": ("read_growth", False),
    "cluster.py": ("claims_per_result", True),
    "decisions.py": ("separation_second_vs_dd", True),
    "engine.py": ("ratio_vs_colver", False),
    "hostile.py": ("ratio_worst", True),
    "ladder.py": ("games_ratio_vs_random", False),
    "referee.py": ("ratio_vs_raw_grpc", True),
    "scale.py": ("nodes_per_redis_core", True),
    "sdk_act.py": ("ratio", False),
    "soak.py": ("fds_growth", False),
    "sprt.py": ("worst_error_vs_alpha", True),
    "version_start.py": ("inherit_worst_coverage", False),
    "version_tests.py": ("tests_peak_vs_room", True),
}
#: the figures a quick bench prints before its last line, by bench (issue 18: the referee's CPU against
#: grpc.aio's floor, next to its ratio against raw gRPC; the queue's round trips and Redis CPU)
ALSO = {"referee.py": ("node_cpu_vs_floor",), "sprt.py": ("worst_error_vs_alpha_before",),
        "cluster.py": ("round_trips_per_job", "redis_cpu_vs_floor", "redis_commands_per_result")}
#: a figure line: ``name=value``, the value a number, or ``n/a`` when a side is missing (colver)
FIGURE = re.compile(r"^(?P<name>[a-z][a-z0-9_.]*)=(?P<value>-?\d+(\.\d+)?|n/a)$")


def test_every_bench_is_run_by_a_test() -> None:
    benches = {p.name for p in BENCH.glob("*.py")}
    listed = COVERED.keys() | HELPERS.keys() | QUICK.keys()
    assert not benches - listed, (
        f"{sorted(benches - listed)}: no test runs it; give it --quick and add it to QUICK here, or name "
        "the test of its own in COVERED")
    assert not listed - benches, f"{sorted(listed - benches)}: listed here, not in bench/"
    assert not COVERED.keys() & QUICK.keys(), "a bench run by a test of its own is not run twice"
    for bench, test in COVERED.items():
        text = (ROOT / test).read_text(encoding="utf-8")
        assert f'"{bench}"' in text and "subprocess.run" in text, f"{test} does not run bench/{bench}"


@pytest.mark.parametrize("helper", sorted(HELPERS))
def test_a_helper_of_bench_is_no_bench_and_its_bench_imports_it(helper: str) -> None:
    tree = ast.parse((BENCH / helper).read_text(encoding="utf-8"))
    assert "__main__" not in ast.dump(tree), f"bench/{helper} runs as a bench: give it a test"
    user = ast.parse((BENCH / HELPERS[helper]).read_text(encoding="utf-8"))
    imported = {node.module for node in ast.walk(user) if isinstance(node, ast.ImportFrom)}
    assert helper.removesuffix(".py") in imported


def test_every_bench_has_a_quick_mode() -> None:
    for bench in sorted({p.name for p in BENCH.glob("*.py")} - HELPERS.keys()):
        assert '"--quick"' in (BENCH / bench).read_text(encoding="utf-8"), f"bench/{bench} has no --quick"


def quick_figures(bench: str, *args: str) -> list[tuple[str, str]]:
    """Run ``bench/<bench> --quick [args]``; the (name, value) of its figure lines, the last line's last."""
    done = subprocess.run([sys.executable, str(BENCH / bench), "--quick", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, f"bench/{bench} --quick exited {done.returncode}:\n{done.stderr[-4000:]}"
    lines = done.stdout.strip().splitlines()
    assert lines, f"bench/{bench} --quick printed nothing"
    figure = FIGURE.match(lines[-1])
    assert figure, f"bench/{bench} --quick: the last line is not name=value: {lines[-1]!r}"
    return [(m["name"], m["value"]) for m in map(FIGURE.match, lines) if m]


@pytest.mark.parametrize("bench", [pytest.param(b, marks=[pytest.mark.slow] if slow else [])
                                   for b, (_, slow) in sorted(QUICK.items())])
def test_the_quick_bench_runs_and_ends_with_its_figure(bench: str) -> None:
    """soak.py: before, its bots never connected (``--token=T`` read as ``--token-file``) and its
    StartMatch had no admin credential; cluster.py: before, its default ``--jobs batch`` crashed
    reading the progress of a tournament that is not stored."""
    if bench in ("cluster.py", "scale.py") and redis_unavailable():
        pytest.skip(str(redis_unavailable()))  # cluster.py: Redis, then the embedded broker; scale.py: Redis
    figures = quick_figures(bench)
    assert figures[-1][0] == QUICK[bench][0]
    for also in ALSO.get(bench, ()):
        assert dict(figures).get(also, "n/a") != "n/a", f"bench/{bench} --quick printed no {also}=: {figures}"


def test_the_soak_bench_watches_every_match_within_the_node_s_replays_per_address() -> None:
    """Before, its watchers (one address) were refused past the node's two replays at once, and the
    bench stopped on the error (its full run did, at the first overlap)."""
    command = [sys.executable, str(BENCH / "soak.py"), "--quick", "--matches", "40", "--warmup", "10",
               "--watch-every", "1", "--json"]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stderr[-4000:]
    soak = json.loads(done.stdout)
    assert soak["watched"] == 40 and soak["records_on_disk"] == 40 and soak["data_files_open"] == 0


# ------------------------------------------------------------------ cluster.py's queue loop
def bench_module(name: str) -> Any:
    """bench/<name>.py imported as a module (bench/ is no package; its names may clash with tests')."""
    spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module



def test_a_job_of_the_queue_loop_is_three_scripts_and_no_look_for_its_tournament() -> None:
    """Before, the loop's jobs were of a tournament the store did not hold: every write_result looked
    for its spec again (HMGET) and then checked Redis still had the arena's data (GET), two round
    trips a job that no node's job costs. Now a job is three scripts: enqueue, claim (the leases run
    out, then the new jobs), and finish (the result written and the job removed at once); before
    issue 18 it was five calls, XREADGROUP among them."""
    if redis_unavailable():
        pytest.skip(str(redis_unavailable()))
    from arena.queue.redis_broker import RedisBroker

    cluster = bench_module("cluster")

    prefix = f"test-bench-{secrets.token_hex(4)}"
    broker = RedisBroker(REDIS_URL, prefix=prefix)
    try:
        (loop,) = cluster.queue_loops(broker, 1, cluster.sample_result(1))
        loop.one()  # the first write reads the spec, once for the process
        with redis_commands(broker) as commands:
            for _ in range(3):
                loop.one()
        assert loop.jobs == 4
        assert commands == ["EVALSHA"] * 3 * 3, commands
    finally:
        broker.close()
        cluster.delete_prefix(REDIS_URL, prefix)


def test_a_node_s_path_through_redis_is_counted_in_round_trips_and_redis_cpu() -> None:
    """The bench's node path (claims for 4 slots, results finished together) against its floor (10 at
    a time): a node's two scripts a batch, so half a round trip a job, and the floor less."""
    if redis_unavailable():
        pytest.skip(str(redis_unavailable()))
    cluster = bench_module("cluster")
    trips = cluster.measure_round_trips(REDIS_URL, cluster.sample_result(1), 200)
    assert trips.jobs == 200
    assert 0.5 <= trips.round_trips_per_job <= 0.6  # claim + finish per 4 jobs, an enqueue per 100
    assert trips.floor_round_trips_per_job < trips.round_trips_per_job
    assert trips.redis_cpu_us_per_job > 0 and trips.floor_redis_cpu_us_per_job > 0
