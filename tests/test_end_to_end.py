"""The user's whole path, with real processes: the node, the CLI, the SDK's bots.

``belote-arena serve`` runs as a subprocess on a free loopback port; the bots
are registered with ``belote-arena bot register``, run as
``python -m belote_bot.bots.random`` / ``.heuristic`` processes, and a match is
started, watched, fetched and replayed with the CLI, as the README tells a user
to. Everything is stopped by signals at the end, as a user would with Ctrl-C.
Only ``belote-arena demo`` is quick; the rest is marked slow.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from arena.engine.record import replay_match
from tests.scripts import script
from tests.shell import Shell, hints, port_free

BELOTE_ARENA = script("belote-arena")
needs_cli = pytest.mark.skipif(BELOTE_ARENA is None, reason="the belote-arena script is not installed")

#: a process started by a shell script in the background ignores SIGINT; a user's
#: terminal does not, so the children get the default disposition back first
SIGINT_DEFAULT = [sys.executable, "-c",
                  "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
                  "os.execvp(sys.argv[1], sys.argv[1:])"]
RESULT_LINE = re.compile(r"^match (\w+): \[(-?\d+), (-?\d+)\], (?:team (\d) \((alpha|beta)\) wins|no winner)")


# ------------------------------------------------------------------ helpers
def cli(*args: str, timeout: float = 60, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``belote-arena ARGS`` run from ``cwd``: from the folder of a node's ``arena-data``, the command
    finds the node's admin credential by itself, as on one machine."""
    assert BELOTE_ARENA is not None
    done = subprocess.run([BELOTE_ARENA, *args], capture_output=True, text=True, timeout=timeout, cwd=cwd)
    assert "Traceback" not in done.stderr, done.stderr
    return done


def cli_ok(*args: str, timeout: float = 60, cwd: Path | None = None) -> str:
    done = cli(*args, timeout=timeout, cwd=cwd)
    assert done.returncode == 0, f"belote-arena {' '.join(args)}: exit {done.returncode}\n{done.stderr}"
    return done.stdout


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@dataclass
class Proc:
    """A child process whose output goes to files (no pipe to fill up)."""

    name: str
    popen: subprocess.Popen[bytes]
    out: Path
    err: Path

    @classmethod
    def start(cls, name: str, argv: list[str], logs: Path, **env: str) -> Proc:
        out, err = logs / f"{name}.out", logs / f"{name}.err"
        with out.open("wb") as o, err.open("wb") as e:
            popen = subprocess.Popen([*SIGINT_DEFAULT, *argv], stdout=o, stderr=e,
                                     stdin=subprocess.DEVNULL, env={**os.environ, **env})
        return cls(name, popen, out, err)

    def stdout(self) -> str:
        return self.out.read_text(errors="replace")

    def stderr(self) -> str:
        return self.err.read_text(errors="replace")

    def alive(self) -> bool:
        return self.popen.poll() is None

    def describe(self) -> str:
        return f"{self.name} (exit {self.popen.poll()}):\n{self.stdout()[-2000:]}\n{self.stderr()[-3000:]}"

    def stop(self, sig: signal.Signals, timeout: float = 15) -> int:
        self.popen.send_signal(sig)
        try:
            return self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"{self.name} did not exit within {timeout} s of {sig.name}\n"
                                 f"{self.describe()}") from None

    def kill(self) -> None:
        if self.alive():
            self.popen.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(5)


def wait_until_serving(address: str, server: Proc, timeout: float = 30) -> None:
    """Until the node's gRPC health check answers SERVING."""
    deadline = time.monotonic() + timeout
    while True:
        assert server.alive(), f"the node exited before serving\n{server.describe()}"
        with grpc.insecure_channel(address) as channel:
            stub: Any = health_pb2_grpc.HealthStub(channel)  # its type stubs list no methods
            try:
                reply = stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=1)
                if reply.status == health_pb2.HealthCheckResponse.SERVING:
                    return
            except grpc.RpcError:
                pass
        assert time.monotonic() < deadline, f"no health answer within {timeout} s\n{server.describe()}"
        time.sleep(0.1)


def wait_until_connected(address: str, names: set[str], bots: list[Proc], timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while True:
        listed = json.loads(cli_ok("bot", "list", "--address", address, "--json"))
        connected = {b["name"] for b in listed if b["connected"]}
        if names <= connected:
            return
        for bot in bots:
            assert bot.alive(), f"a bot exited before connecting\n{bot.describe()}"
        assert time.monotonic() < deadline, f"connected after {timeout} s: {connected}, not {names}"
        time.sleep(0.2)


@dataclass
class Node:
    address: str
    data_dir: Path
    server: Proc
    bots: dict[str, Proc]
    tokens: dict[str, str]


@contextlib.contextmanager
def running_node(tmp_path: Path) -> Iterator[Node]:
    """A node with alpha (the random bot) and beta (the heuristic) connected; everything killed after."""
    assert BELOTE_ARENA is not None
    address = f"127.0.0.1:{free_port()}"
    data_dir = tmp_path / "arena-data"  # the default folder, seen from tmp_path
    logs = tmp_path / "logs"
    logs.mkdir()
    server = Proc.start("serve", [BELOTE_ARENA, "serve", "--listen", address, "--data-dir", str(data_dir),
                                  "--deadline", "0.5"], logs)
    node = Node(address, data_dir, server, {}, {})
    try:
        wait_until_serving(address, server)
        tokens = node.tokens
        for name in ("alpha", "beta"):
            reply = json.loads(cli_ok("bot", "register", name, "--address", address, "--json", cwd=tmp_path))
            assert reply["name"] == name and reply["bot_id"] and reply["token"]
            tokens[name] = reply["token"]
        for name, module in (("alpha", "belote_bot.bots.random"), ("beta", "belote_bot.bots.heuristic")):
            node.bots[name] = Proc.start(name, [sys.executable, "-m", module, "--address", address],
                                         logs, BELOTE_TOKEN=tokens[name])
        wait_until_connected(address, {"alpha", "beta"}, list(node.bots.values()))
        yield node
    finally:
        for proc in [*node.bots.values(), server]:
            proc.kill()


def watched(stdout: str) -> tuple[str, list[str], tuple[str, list[int], int | None]]:
    """`match start --watch` output: the match id, who sits where, the event lines, the result."""
    lines = stdout.splitlines()
    assert len(lines) >= 3, stdout
    match_id, seats, *events, last = lines
    assert re.fullmatch(r"m-[0-9a-f]+", match_id), match_id
    assert seats == "seats: 0 alpha, 1 beta, 2 alpha, 3 beta (team 0: alpha, team 1: beta)", seats
    m = RESULT_LINE.match(last)
    assert m, f"no result line at the end of:\n{stdout}"
    winner = int(m.group(4)) if m.group(4) is not None else None
    return match_id, events, (m.group(1), [int(m.group(2)), int(m.group(3))], winner)


def action_count(record: dict[str, Any]) -> int:
    return sum(len(d["bids"]) + len(d["plays"]) for d in record["deals"])


# ------------------------------------------------------------------- tests
@needs_cli
@pytest.mark.slow
def test_serve_register_run_bots_start_watch_record_replay_and_stop(tmp_path: Path) -> None:
    with running_node(tmp_path) as node:
        a = node.address
        out = cli_ok("match", "start", "alpha", "beta", "--ruleset", "coinche", "--deals", "2", "--watch",
                     "--address", a, cwd=tmp_path)
        match_id, events, (reason, totals, winner) = watched(out)
        assert reason == "finished"
        assert events, f"the watch printed no event:\n{out}"
        assert any(re.match(r"  seat [0-3] \((alpha|beta)\): \S+", e) for e in events), out
        assert re.match(r"  deal score \[-?\d+, -?\d+\], match \[-?\d+, -?\d+\]", events[-1]), out
        assert events[-1].endswith(f"match [{totals[0]}, {totals[1]}]")

        text = cli_ok("match", "record", match_id, "--address", a)
        record = json.loads(text)
        assert record["match_id"] == match_id
        assert record["players"] == ["alpha", "beta", "alpha", "beta"]
        assert record["ruleset"]["preset"] == "coinche" and len(record["deals"]) == 2
        assert record["result"]["totals"] == totals and record["result"]["winner"] == winner
        assert record["result"]["reason"] == "finished" and record["strikes"] == []
        assert (node.data_dir / "matches" / f"{match_id}.json").exists()

        path = tmp_path / "match.json"
        path.write_text(text, encoding="utf-8")
        replayed = json.loads(cli_ok("replay", str(path), "--json"))
        assert replayed["totals"] == totals and replayed["winner"] == winner
        assert len(replayed["deals"]) == 2
        assert f"match: {totals[0]}-{totals[1]}" in cli_ok("replay", str(path))

        summary = json.loads(cli_ok("bot", "list", "--address", a, "--json"))
        assert {b["name"]: b["seats_in_use"] for b in summary} == {"alpha": 0, "beta": 0}

        for name, bot in node.bots.items():
            code = bot.stop(signal.SIGINT)
            assert code == 0, f"{name} exited {code} on Ctrl-C\n{bot.describe()}"
            assert "Traceback" not in bot.stderr(), bot.describe()
            assert f"match {match_id} ended" in bot.stderr(), bot.describe()
        code = node.server.stop(signal.SIGTERM)
        assert code == 0, f"the node exited {code} on SIGTERM\n{node.server.describe()}"
        assert "Traceback" not in node.server.stderr(), node.server.describe()
        # no credential ever reaches a log: the bots' tokens, the node's admin credential
        admin = (node.data_dir / "admin.token").read_text().strip()
        logs = node.server.stdout() + node.server.stderr() + "".join(
            b.stdout() + b.stderr() for b in node.bots.values())
        assert all(secret not in logs for secret in (admin, *node.tokens.values()))
        assert "listening on port" in node.server.stdout()


@needs_cli
@pytest.mark.slow
def test_match_start_watch_shows_the_match_from_its_first_event(tmp_path: Path) -> None:
    with running_node(tmp_path) as node:
        incomplete = []
        for i in range(6):
            out = cli_ok("match", "start", "alpha", "beta", "--ruleset", "coinche", "--deals", "2",
                         "--seed", str(i), "--watch", "--address", node.address, cwd=tmp_path)
            match_id, events, _ = watched(out)
            record = json.loads(cli_ok("match", "record", match_id, "--address", node.address))
            actions = [e for e in events if re.match(r"  seat [0-3] \((alpha|beta)\): ", e)]
            starts = [e for e in events if re.match(r"deal \d+: dealer seat", e)]
            if len(actions) != action_count(record) or len(starts) != 2:
                incomplete.append(f"{match_id}: {len(starts)} deal starts and {len(actions)} of "
                                  f"{action_count(record)} actions; first lines {events[:2]}")
        assert not incomplete, "\n".join(incomplete)


@pytest.mark.xdist_group("default-port")  # serves on, or dials, 127.0.0.1:50051: one worker runs these
@needs_cli
def test_demo_plays_a_round_robin_and_every_record_replays(tmp_path: Path) -> None:
    out = cli_ok("demo", "--rounds", "1", "--data-dir", str(tmp_path), timeout=120)
    check_the_demo_s_hints(out, tmp_path)
    assert "Leaderboard" in out, out
    # the demo's seed is known, so it is unrated: its Elo is its tournaments' own pools'
    assert "tournament:classic-round-robin" in out and "tournament:coinche-round-robin" in out, out
    assert "95% interval" in out and "LOS next" in out, out  # Bradley-Terry, with intervals
    for name in ("heuristic", "heuristic-b", "random", "random-b"):
        assert re.search(rf"\b{re.escape(name)}\b", out), out
    records = sorted(tmp_path.glob("demo-*/matches/*.json"))
    # every pairing of the 4 bots in both seatings, classic and coinche, one round
    assert len(records) == 4 * 3 * 2, [p.name for p in records]
    presets = set()
    for path in records:
        rec = json.loads(path.read_text(encoding="utf-8"))
        assert rec["result"]["reason"] == "finished", (path.name, rec["result"])
        match, outcomes = replay_match(rec)
        assert list(match.totals) == rec["result"]["totals"], path.name
        assert match.winner == rec["result"]["winner"], path.name
        assert match.is_over and len(outcomes) == len(rec["deals"])
        spec = rec["ruleset"]  # a preset name, or an object with its overrides
        presets.add(spec if isinstance(spec, str) else spec["preset"])
    assert presets == {"classic", "coinche"}


def check_the_demo_s_hints(out: str, tmp_path: Path) -> None:
    """The demo's hints run as printed: a record replays; a node started on the demo's folder (in a
    terminal of its own) serves its ratings. Only the port changes, if 50051 is taken here."""
    replay, serve, *rankings = hints(out)
    assert replay.startswith("belote-arena replay ") and serve.startswith("belote-arena serve --data-dir ")
    assert [r.split()[3] for r in rankings] == ["classic-round-robin", "coinche-round-robin"], rankings
    address = "127.0.0.1:50051"
    if not port_free(50051):
        free = f"127.0.0.1:{free_port()}"
        serve, rankings = serve.replace(address, free), [r.replace(address, free) for r in rankings]
    with Shell.session(tmp_path, tmp_path / "hint-logs") as sh:
        assert "match: " in sh.run(replay).ok().out
        sh.start(serve).wait_for("listening on port")
        for line in rankings:
            table = sh.run(line).ok().out
            assert "95% interval" in table and "heuristic-b" in table, table

