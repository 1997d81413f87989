"""Real processes for the cluster tests: referee nodes, SDK bots and the CLI, with their logs.

Every process is started through a :class:`Procs` (one per test) and killed by its
``close()`` (in a ``finally``), by its own pid only. A node's standard output and
error go to one log file, so the test reads what the node printed ("listening on
port ...") and logged ("match ... recorded") from there.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from arena.queue import Broker
from arena.ratings import tournament_pool
from arena.tournament import MatchResult, Tournament, TournamentSpec

REDIS_HOST = "127.0.0.1"
REDIS_PORT = 6379
#: the default key prefix: ``belote-arena serve`` and the CLI take no other
PREFIX = "belote-arena"

_LISTENING = re.compile(r"belote-arena node (\S+) listening on port (\d+)")
_RECORDED = re.compile(r"match (\S+) recorded \(")
_ALREADY = re.compile(r"match (\S+) was already recorded \(")
_WEB = re.compile(r"web pages and JSON API on (https?://\S+)")

T = TypeVar("T")


def redis_url(db: int) -> str:
    return f"redis://{REDIS_HOST}:{REDIS_PORT}/{db}"


#: the admin credential of every node these tests start, and of their command lines
ADMIN_TOKEN = f"adm_tests_{secrets.token_urlsafe(18)}"


def child_env(**extra: str) -> dict[str, str]:
    """The environment of every child: unbuffered, no $BELOTE_REDIS of the caller's, the tests'
    admin credential."""
    env = {k: v for k, v in os.environ.items() if k not in (
        "BELOTE_REDIS", "BELOTE_REDIS_SENTINEL", "BELOTE_REDIS_MASTER", "BELOTE_TOKEN", "BELOTE_ADDRESS")}
    env["PYTHONUNBUFFERED"] = "1"
    env["BELOTE_ADMIN_TOKEN"] = ADMIN_TOKEN
    env.update(extra)
    return env


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for(what: str, check: Callable[[], T | None], timeout: float, every: float = 0.05) -> T:
    """Poll ``check`` until it returns something other than None or False; fail after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value is not None and value is not False:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(every)


@dataclass
class Proc:
    name: str
    popen: subprocess.Popen[bytes]
    log: Path

    def text(self) -> str:
        try:
            return self.log.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def alive(self) -> bool:
        return self.popen.poll() is None

    def kill(self) -> None:
        """SIGKILL, and reap it."""
        if self.alive():
            self.popen.send_signal(signal.SIGKILL)
        self.popen.wait(timeout=10)

    def terminate(self) -> None:
        if self.alive():
            self.popen.send_signal(signal.SIGTERM)


@dataclass
class NodeProc(Proc):
    node_id: str = ""
    port: int = 0

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def recorded(self) -> list[str]:
        """The match ids this node logged as recorded (its own write), in order."""
        return _RECORDED.findall(self.text())

    def already_recorded(self) -> list[str]:
        return _ALREADY.findall(self.text())

    @property
    def web_url(self) -> str:
        """Where its web pages are (it was started with ``http``), as it logged it."""
        found = _WEB.search(self.text())
        assert found, f"node {self.name} logged no web address"
        return found.group(1)


@dataclass
class Procs:
    """The processes of one test, and the folder of their logs."""

    root: Path
    started: list[Proc] = field(default_factory=list)

    def spawn(self, name: str, argv: Sequence[str], **env: str) -> Proc:
        log = self.root / f"{name}.log"
        with log.open("ab") as out:
            popen = subprocess.Popen(list(argv), stdout=out, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, env=child_env(**env), cwd=self.root)
        proc = Proc(name, popen, log)
        self.started.append(proc)
        return proc

    # ----------------------------------------------------------------- nodes
    def start_node(
        self, name: str, data_dir: Path, *, redis: str | None, lease: float = 2.0, capacity: int = 4,
        port: int = 0, drain: float | None = None, http: str = "", args: Sequence[str] = (),
    ) -> NodeProc:
        """``belote-arena serve`` (with its web server on ``http``, HOST:PORT, if given; and ``args``
        besides); call :meth:`ready` to wait for its port."""
        argv = [sys.executable, "-m", "arena.cli", "serve", "--listen", f"127.0.0.1:{port}",
                "--data-dir", str(data_dir), "--lease", str(lease), "--capacity", str(capacity)]
        if redis:
            argv += ["--redis", redis]
        if http:
            argv += ["--http", http]
        if drain is not None:
            argv += ["--drain", str(drain)]
        argv += list(args)
        proc = self.spawn(name, argv)
        node = NodeProc(proc.name, proc.popen, proc.log)
        self.started[-1] = node
        return node

    def ready(self, node: NodeProc, timeout: float = 30.0) -> NodeProc:
        def check() -> NodeProc | None:
            m = _LISTENING.search(node.text())
            if m:
                node.node_id, node.port = m.group(1), int(m.group(2))
                return node
            if not node.alive():
                raise AssertionError(f"node {node.name} exited ({node.popen.returncode}):\n{node.text()}")
            return None

        return wait_for(f"node {node.name} to listen", check, timeout)

    def nodes(
        self, count: int, root: Path, *, redis: str | None, prefix: str = "node", **options: Any,
    ) -> list[NodeProc]:
        """Start ``count`` nodes at once (each in its own data folder), then wait for all."""
        started = [self.start_node(f"{prefix}{i}", root / f"{prefix}{i}", redis=redis, **options)
                   for i in range(count)]
        return [self.ready(n) for n in started]

    # ------------------------------------------------------------------ bots
    def start_bot(self, name: str, kind: str, address: str, token: str, concurrency: int = 4,
                  args: Sequence[str] = (), label: str = "") -> Proc:
        """An SDK bot process (``args`` added to its command line; ``label`` names its log, default the
        bot's name)."""
        return self.spawn(f"bot-{label or name}", [
            sys.executable, "-m", f"belote_bot.bots.{kind}", "--address", address,
            "--concurrency", str(concurrency), "--name", name, "--seed", label or name, *args,
        ], BELOTE_TOKEN=token)  # a token never goes on a command line

    def close(self) -> None:
        """Kill every process still running (by its pid), then reap them all."""
        for proc in self.started:
            if proc.alive():
                proc.popen.send_signal(signal.SIGKILL)
        for proc in self.started:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.popen.wait(timeout=10)


# --------------------------------------------------------------------- the CLI
def cli(*args: str, timeout: float = 60.0, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run ``belote-arena ARGS`` (as ``python -m arena.cli``) and return what it printed."""
    done = subprocess.run([sys.executable, "-m", "arena.cli", *args], capture_output=True, text=True,
                          timeout=timeout, env=child_env(), stdin=subprocess.DEVNULL)
    if check and done.returncode != 0:
        raise AssertionError(f"belote-arena {' '.join(args)} exited {done.returncode}:\n"
                             f"{done.stdout}\n{done.stderr}")
    return done


def cli_json(*args: str, timeout: float = 60.0) -> Any:
    return json.loads(cli(*args, "--json", timeout=timeout).stdout)


def register_bots(address: str, names: Sequence[str]) -> dict[str, str]:
    """``belote-arena bot register NAME --json`` for each name: name -> token."""
    tokens = {}
    for name in names:
        out = cli_json("bot", "register", name, "--address", address)
        assert out["name"] == name
        tokens[name] = out["token"]
    return tokens


def wait_connected(addresses: Sequence[str], names: Sequence[str], timeout: float = 30.0) -> None:
    """Until every node lists every bot as connected (the bots found the other nodes)."""
    from arena.remote import Remote, RemoteError

    def check() -> bool:
        for address in addresses:
            try:
                with Remote(address) as remote:
                    bots = remote.list_bots()
            except RemoteError:
                return False
            connected = {b.name for b in bots if b.connected}
            if not set(names) <= connected:
                return False
        return True

    wait_for(f"bots {', '.join(names)} to connect to {', '.join(addresses)}", check, timeout, every=0.1)


# ------------------------------------------------------------------ checking
def wait_state(broker: Broker, tournament_id: str, state: str, timeout: float) -> None:
    def check() -> bool:
        found = broker.get_tournament(tournament_id)
        return found is not None and found[1] == state

    wait_for(f"tournament {tournament_id} to be {state}", check, timeout)


def schedule_of(broker: Broker, tournament_id: str) -> tuple[Tournament, list[str]]:
    """The tournament and every match id its schedule holds (given the results so far)."""
    found = broker.get_tournament(tournament_id)
    assert found is not None, f"no tournament {tournament_id}"
    tour = Tournament(found[0])
    results = broker.results(tournament_id)
    ids = [j.match_id for stage in tour.stages(results) for p in stage.pairings for j in p.jobs]
    assert len(ids) == len(set(ids)), f"a match id is scheduled twice: {Counter(ids).most_common(3)}"
    return tour, ids


def replayed(result: MatchResult) -> MatchResult:
    """The result as a clean replay of its record computes it (every action checked)."""
    from dataclasses import replace

    match, _ = result.record.replay()
    assert match.is_over, f"{result.match_id}: its record does not reach the end of the match"
    end = replace(result.record.result, totals=(match.totals[0], match.totals[1]), winner=match.winner)
    return replace(result, record=replace(result.record, result=end))


def standing_rows(rows: Sequence[Any]) -> list[tuple[Any, ...]]:
    """Standings (``Standing`` objects or status --json rows) as comparable tuples."""
    keys = ("rank", "bot", "played", "wins", "draws", "losses", "byes", "score", "points_for",
            "points_against", "duplicate_diff", "buchholz")
    out = []
    for row in rows:
        get = row.get if isinstance(row, dict) else lambda k, row=row: getattr(row, k)
        out.append(tuple(get(k) for k in keys))
    return out


def check_finished_tournament(
    broker: Broker, tournament_id: str, *, redis_client: Any | None, db_arg: Sequence[str],
    expect_matches: int | None = None, ratings_alone: bool = True,
) -> list[MatchResult]:
    """What every finished tournament must show, however its nodes lived and died.

    One result per scheduled match and nothing else; the Redis result keys agree;
    each bot's rating moved once per result it played; each record replays to its
    result's totals and winner; ``tournament status --json`` shows the state,
    counts and the standings that a recomputation from the replayed results gives.
    """
    tour, ids = schedule_of(broker, tournament_id)
    if expect_matches is not None:
        assert len(ids) == expect_matches
    results = broker.results(tournament_id)
    got = [r.match_id for r in results]
    assert len(got) == len(set(got)), f"a match has two results: {Counter(got).most_common(3)}"
    assert sorted(got) == sorted(ids), (
        f"results vs schedule: missing {sorted(set(ids) - set(got))}, extra {sorted(set(got) - set(ids))}"
    )
    if redis_client is not None:
        keys = set(redis_client.scan_iter(match=f"{PREFIX}:result:{tournament_id}-*", count=1000))
        assert keys == {f"{PREFIX}:result:{m}" for m in ids}
        assert redis_client.scard(f"{PREFIX}:results:{tournament_id}") == len(ids)
    if ratings_alone:  # in the tournament's own pool, each game moved two ratings once
        spec = tour.spec
        games = [r for r in results if not (spec.duplicate and r.match_id.endswith("-leg1"))]  # a pair: 1
        played: Counter[str] = Counter()
        for r in games:
            played[r.team0] += 1
            played[r.team1] += 1
        pool = tournament_pool(tournament_id)
        ratings = broker.pool_ratings(pool)
        assert {bot: n for bot, (_, n) in ratings.items()} == dict(played)
        assert sum(n for _, n in ratings.values()) == 2 * len(games)
        assert sum(c.games for c in broker.pair_counts(pool).values()) == len(games)
    # a job whose result a dead node wrote without acking it stays until a claim drops it (its lease over)
    wait_for("the tournament's queue to empty", lambda: broker.pending_count(tournament_id) == 0, 20)
    assert broker.dead_letters() == []
    # a clean recomputation: replay every record, then the standings from the replays
    clean = []
    for r in results:
        assert r.reason == "finished", f"{r.match_id} ended by {r.reason}"
        again = replayed(r)
        assert (again.totals, again.winner) == (r.totals, r.winner), r.match_id
        clean.append(again)
    status = cli_json("tournament", "status", tournament_id, *db_arg)
    assert status["state"] == "finished"
    assert status["matches_done"] == status["matches_scheduled"] == len(ids)
    assert status["matches_queued"] == 0
    fresh = Tournament(TournamentSpec.from_dict(tour.spec.to_dict()))
    assert standing_rows(status["standings"]) == standing_rows(fresh.standings(clean))
    return results


def check_recorded_once(nodes: Sequence[NodeProc], results: Sequence[MatchResult],
                        may_be_unlogged: Sequence[str] = ()) -> None:
    """Each result was logged "recorded" once, by the node whose id it carries.

    A node killed between writing a result and logging it leaves a result with
    no line: allowed only for the node ids in ``may_be_unlogged``.
    """
    by_node = {n.node_id: n for n in nodes}
    ours = {f"{r.tournament_id}-r" for r in results}  # the nodes may have played other tournaments
    lines: Counter[str] = Counter()
    logged_by: dict[str, str] = {}
    for n in nodes:
        for mid in n.recorded():
            if not any(mid.startswith(prefix) for prefix in ours):
                continue
            lines[mid] += 1
            logged_by[mid] = n.node_id
    twice = [m for m, c in lines.items() if c > 1]
    assert not twice, f"results recorded more than once: {twice}"
    ids = {r.match_id for r in results}
    assert set(lines) <= ids, f"recorded lines for no result: {sorted(set(lines) - ids)}"
    for r in results:
        assert r.node_id in by_node, f"{r.match_id} written by unknown node {r.node_id}"
        if r.match_id in logged_by:
            assert logged_by[r.match_id] == r.node_id, r.match_id
        else:
            assert r.node_id in may_be_unlogged, f"{r.match_id}: a result but no node logged it"
