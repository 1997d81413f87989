"""The SDK needs none of the server's dependencies: it imports, and plays, with them blocked.

A bot author installs grpcio and protobuf; redis, rich, uvloop and the gRPC
health and reflection services are the referee's. A subprocess blocks them
(a ``sys.meta_path`` finder that raises ImportError and notes the attempt),
imports every module of ``belote_bot``, then plays a built-in bot with
:func:`belote_bot.run`, as a plain script would, against a referee node in
the test process. ``import grpc`` itself tries ``grpc_health`` and
``grpc_reflection`` when they are installed, hence they are blocked too (grpc
does without); nothing else may even try a blocked module: ``run()`` does not
try uvloop.
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
from pathlib import Path

from belote_bot import HeuristicBot

from arena.harness import local_arena

from .records import fetch_records, latencies_us

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = r'''
import importlib
import importlib.abc
import pkgutil
import sys
import threading

BLOCKED = ("redis", "rich", "uvloop", "grpc_health", "grpc_reflection")
#: grpc's own __init__ tries these two (and does without): nobody else may even try a blocked module
GRPC_TRIES = {"grpc_health", "grpc_reflection"}
tried = set()


class Blocker(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            tried.add(name)
            raise ImportError(f"{name} is blocked: the SDK must run without it")
        return None


sys.meta_path.insert(0, Blocker())

import belote_bot

for info in pkgutil.walk_packages(belote_bot.__path__, "belote_bot."):
    importlib.import_module(info.name)
from belote_bot import HeuristicBot, RandomBot, run

SERVER_SIDE = ("arena.referee", "arena.queue", "arena.tournament", "arena.harness", *BLOCKED)


def server_side():
    return sorted(m for m in sys.modules if any(m == s or m.startswith(s + ".") for s in SERVER_SIDE))


assert not server_side(), server_side()
assert tried <= GRPC_TRIES, tried
print("imported", RandomBot.__name__, HeuristicBot.__name__, flush=True)
if len(sys.argv) > 1:
    address, token = sys.argv[1:3]
    stop = threading.Event()

    def stop_when_stdin_closes():
        sys.stdin.read()
        stop.set()

    threading.Thread(target=stop_when_stdin_closes, daemon=True).start()
    run(HeuristicBot(7), address, token, concurrency=2, stop=stop)  # logging left unconfigured
    assert not server_side(), server_side()
    assert tried <= GRPC_TRIES, tried  # run() does not even try uvloop
    print("played", flush=True)
'''


def env() -> dict[str, str]:
    path = os.pathsep.join([str(ROOT), str(ROOT / "sdk"), os.environ.get("PYTHONPATH", "")])
    return {**{k: v for k, v in os.environ.items() if k != "BELOTE_TOKEN"}, "PYTHONPATH": path}


def test_the_sdk_imports_without_the_server_dependencies() -> None:
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=60,
                          env=env())
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["imported", "RandomBot", "HeuristicBot"]


def test_a_builtin_bot_plays_a_match_without_the_server_dependencies() -> None:
    async def main() -> tuple[str, str, str, dict[str, object], int | None]:
        async with local_arena() as arena:
            entry, token = arena.node.register_bot("sdk-only")
            proc = await asyncio.create_subprocess_exec(
                sys.executable, "-c", SCRIPT, arena.address, token, env=env(),
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            )
            try:
                connected = asyncio.ensure_future(arena.node.link_for(entry).connected_event.wait())
                exited = asyncio.ensure_future(proc.wait())
                await asyncio.wait({connected, exited}, timeout=60, return_when=asyncio.FIRST_COMPLETED)
                connected.cancel()
                exited.cancel()
                assert arena.node.link_for(entry).connected, "the bot process did not connect"
                await arena.connect("heuristic", HeuristicBot(1))
                match_id = arena.node.start_match("sdk-only", "heuristic", "coinche", seed=5, deals=2)
                await asyncio.wait_for(arena.node.wait(match_id), 120)
                record = (await fetch_records(arena.address, [match_id]))[match_id]
            finally:
                out, err = await asyncio.wait_for(proc.communicate(b""), 60)  # stdin closes: the bot stops
        return match_id, out.decode(), err.decode(), record, proc.returncode

    match_id, out, err, record, returncode = asyncio.run(main())
    assert returncode == 0, err
    assert out.split()[-1] == "played", (out, err)
    assert record["strikes"] == [] and record["result"]["reason"] == "finished"  # type: ignore[index]
    assert len(latencies_us(record)) > 40 and min(latencies_us(record)) >= 0
    # a script that configured no logging still sees one line per connection and per match end
    assert "Traceback" not in err
    assert len(re.findall(r"INFO belote_bot: 'sdk-only' \(bot \S+\) connected to node", err)) == 1, err
    ends = re.findall(rf"INFO belote_bot: match {match_id} ended: (won|lost) \d+-\d+ \(2 deals\)", err)
    assert len(ends) == 1, err
