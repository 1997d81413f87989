"""The JavaScript example bot (examples/node-bot) plays whole matches on a real referee.

It shows that a bot written from the .proto files alone, in another language,
speaks the protocol: Hello, answers by request id (uint64 ids as strings),
public events riding on messages, a clean exit on SIGTERM.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest
from belote.arena.v1 import arena_service_pb2 as apb
from belote.arena.v1 import arena_service_pb2_grpc as agrpc
from belote_bot import HeuristicBot

from arena.engine import replay_match
from arena.harness import local_arena

from ..referee.arena_helpers import arena_stub, arun

ROOT = Path(__file__).resolve().parents[2]
BOT_DIR = ROOT / "examples" / "node-bot"

#: ceilings, generous for a loaded two-core CI machine; every wait ends as soon as its condition holds
NPM_CI_TIMEOUT = 600.0
CONNECT_TIMEOUT = 60.0
MATCH_TIMEOUT = 120.0
EXIT_TIMEOUT = 30.0


@pytest.fixture(scope="module")
def node_bot() -> Path:
    """bot.js, with its node_modules installed (``npm ci``) if they are missing."""
    if shutil.which("node") is None:
        pytest.skip("node is not on PATH: the JavaScript example bot cannot run")
    if not (BOT_DIR / "node_modules").is_dir():
        npm = shutil.which("npm")
        if npm is None:
            pytest.skip(f"npm is not on PATH: cannot install {BOT_DIR / 'node_modules'}")
        done = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund"], cwd=BOT_DIR, capture_output=True, text=True,
            timeout=NPM_CI_TIMEOUT, check=False,
        )
        if done.returncode != 0:
            pytest.fail(f"npm ci in {BOT_DIR} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return BOT_DIR / "bot.js"


async def wait_connected(
    stub: agrpc.ArenaServiceAsyncStub, name: str, proc: asyncio.subprocess.Process,
) -> None:
    """Poll the public ListBots until ``name`` is connected (or the process has died)."""
    deadline = time.monotonic() + CONNECT_TIMEOUT
    while True:
        bots = (await stub.ListBots(apb.ListBotsRequest())).bots
        if any(b.name == name and b.connected for b in bots):
            return
        if proc.returncode is not None:
            raise AssertionError(f"the node bot exited with {proc.returncode} before connecting")
        if time.monotonic() > deadline:
            raise AssertionError(f"the node bot did not connect within {CONNECT_TIMEOUT:.0f} s")
        await asyncio.sleep(0.05)


def check_record(record: dict[str, object], seats: tuple[int, int]) -> None:
    """A finished match, with no strike for the node bot's seats, that replays to its totals."""
    result = record["result"]
    assert isinstance(result, dict)
    assert result["reason"] == "finished", result
    bots = record["bots"]
    assert isinstance(bots, list)
    assert [b["name"] for b in bots if b["seat"] in seats] == ["node-bot", "node-bot"], bots
    strikes = record["strikes"]
    assert isinstance(strikes, list)
    assert [s for s in strikes if s["seat"] in seats] == [], strikes
    match, _ = replay_match(record)
    assert list(match.totals) == result["totals"]


async def play_both_seatings(bot_js: Path, out: Path, err: Path) -> None:
    async with local_arena() as arena:
        _, token = arena.node.register_bot("node-bot")
        await arena.connect("heuristic", HeuristicBot(1))
        with out.open("wb") as stdout, err.open("wb") as stderr:
            proc = await asyncio.create_subprocess_exec(
                "node", str(bot_js), "--address", arena.address, "--concurrency", "2",
                stdout=stdout, stderr=stderr, cwd=ROOT, env={**os.environ, "BELOTE_TOKEN": token},
            )
        try:
            async with arena_stub(arena.address) as stub:
                await wait_connected(stub, "node-bot", proc)
                for team0, team1, seats in (("node-bot", "heuristic", (0, 2)),
                                            ("heuristic", "node-bot", (1, 3))):
                    match_id = arena.node.start_match(team0, team1, "coinche", seed=7, deals=4)
                    await asyncio.wait_for(arena.node.wait(match_id), MATCH_TIMEOUT)
                    reply = await stub.GetMatchRecord(apb.GetMatchRecordRequest(match_id=match_id))
                    check_record(json.loads(reply.record_json), seats)
            proc.send_signal(signal.SIGTERM)
            code = await asyncio.wait_for(proc.wait(), EXIT_TIMEOUT)
            assert code == 0, f"the node bot exited with {code} on SIGTERM"
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()


@pytest.mark.slow
def test_node_bot_plays_both_seatings(node_bot: Path, tmp_path: Path) -> None:
    out, err = tmp_path / "node-bot.out", tmp_path / "node-bot.err"
    try:
        arun(play_both_seatings(node_bot, out, err), timeout=2 * MATCH_TIMEOUT + 120)
    except Exception as e:
        raise AssertionError(
            f"{type(e).__name__}: {e}\n"
            f"--- node bot stdout ---\n{_text(out)}--- node bot stderr ---\n{_text(err)}"
        ) from e


def _text(path: Path) -> str:
    return path.read_text(errors="replace") if path.exists() else "(not started)\n"
