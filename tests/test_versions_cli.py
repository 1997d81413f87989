"""``belote-arena bot versions`` and ``bot promote``, and the README's Versions commands as pasted: two
versions of one bot run with one token, the registry keeps both, and the owner promotes the second."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena.cli import main
from arena.credentials import ADMIN_ENV
from arena.hints import ADDRESS_ENV
from arena.remote import Remote
from tests.cli_node import ADMIN, node_with_bots
from tests.referee.arena_helpers import arun, until

#: the tutorial's page on versions (it was the README's Versions section)
VERSIONS_PAGE = Path(__file__).resolve().parent.parent / "docs" / "tutorial" / "versions.md"
Capsys = pytest.CaptureFixture[str]


def run(capsys: Capsys, *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def readme_versions_commands() -> list[str]:
    """The shell block of the tutorial's Versions page, each command without its comment."""
    passage = VERSIONS_PAGE.read_text(encoding="utf-8")
    # the page's first shell block that is not a walkthrough (tests/test_readme.py runs those)
    block = re.search(r"(?<!-->\n)```sh\n(.*?)```", passage, re.S)
    assert block, "the Versions passage shows its commands"
    return [line.split("  #")[0].strip() for line in block.group(1).splitlines() if line.strip()]


def versions_of(address: str) -> dict[str, tuple[str, str]]:
    from belote.arena.v1 import arena_service_pb2 as apb

    with Remote(address) as remote:
        reply = remote.call("GetBotVersions", apb.GetBotVersionsRequest(name="alpha"))
    return {v.version: (v.state, v.how) for v in reply.versions}


def alpha_row(address: str) -> tuple[str, int, int]:
    """The version alpha's leaderboard row rates in coinche, that version's games and alpha's."""
    from belote.arena.v1 import arena_service_pb2 as apb

    with Remote(address) as remote:
        reply = remote.call("GetLeaderboard", apb.GetLeaderboardRequest(pool="coinche"))
    e = next(e for e in reply.entries if e.bot == "alpha")
    return e.version, e.version_games, e.games


@pytest.mark.slow
def test_the_readme_versions_commands_work_as_pasted(
    tmp_path: Path, capsys: Capsys, monkeypatch: pytest.MonkeyPatch,
) -> None:
    commands = readme_versions_commands()
    bots = [c for c in commands if c.startswith(("python -m belote_bot", "sleep "))]
    arena = [c for c in commands if c.startswith("belote-arena")]
    assert len(bots) == 3 and len(arena) == 2 and len(commands) == 5 and commands[:3] == bots
    with node_with_bots(tmp_path, bots=("alpha",)) as node:
        env = {**os.environ, "BELOTE_TOKEN": node.tokens["alpha"], ADDRESS_ENV: node.address,
               "PYTHONUNBUFFERED": "1"}
        procs = []
        try:
            for command in bots:
                words = shlex.split(command)
                if words[0] == "sleep":
                    time.sleep(float(words[1]))
                    # what the pause is for, with a generous ceiling: a loaded machine may start the
                    # first bot slower than the README's pause
                    arun(until(lambda: "1" in versions_of(node.address), 30, "version 1 kept"), 40)
                    continue
                assert words[-1] == "&"  # run beside the shell: here, as a child process
                procs.append(subprocess.Popen([sys.executable, *words[1:-1]], env=env,
                                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                              stderr=subprocess.DEVNULL))

            async def both() -> None:
                await until(lambda: set(versions_of(node.address)) == {"1", "2"}, 30, "both versions kept")

            arun(both(), 40)
            assert versions_of(node.address) == {"1": ("promoted", "first"), "2": ("candidate", "")}
            monkeypatch.setenv(ADDRESS_ENV, node.address)
            monkeypatch.setenv("BELOTE_TOKEN", node.tokens["alpha"])
            monkeypatch.delenv(ADMIN_ENV, raising=False)  # promoted with the bot's own token
            outs = []
            for command in arena:
                words = shlex.split(command)
                code, out, err = run(capsys, *words[1:])
                assert code == 0, f"{command}: {err}"
                outs.append(out)
            assert "promoted version 1" in outs[0] and re.search(r"^2\s+candidate", outs[0], re.M), outs[0]
            assert "version 2 promoted by hand" in outs[1]
            assert versions_of(node.address) == {"1": ("retired", "first"), "2": ("promoted", "hand")}
            # the same as JSON
            code, out, _ = run(capsys, "bot", "versions", "alpha", "--json")
            reply = json.loads(out)
            assert code == 0 and reply["promoted"] == "2"
            assert [v["version"] for v in reply["versions"]] == ["2", "1"]
        finally:
            for p in procs:
                p.kill()
                p.wait(10)


@pytest.mark.security
def test_promoting_needs_a_name_a_version_and_a_credential_of_that_bot(
    tmp_path: Path, capsys: Capsys, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("BELOTE_TOKEN", raising=False)
    code, _, err = run(capsys, "bot", "promote", "alpha", "--address", "127.0.0.1:9")
    assert code == 1 and "needs the NAME and the VERSION" in err
    code, _, err = run(capsys, "bot", "versions", "--address", "127.0.0.1:9")
    assert code == 1 and "needs the bot's NAME" in err
    with node_with_bots(tmp_path, bots=("alpha", "beta")) as node:
        monkeypatch.setenv(ADDRESS_ENV, node.address)
        monkeypatch.setenv("BELOTE_TOKEN", node.tokens["beta"])  # another bot's token
        code, _, err = run(capsys, "bot", "promote", "alpha", "1")
        assert code == 1 and "promotes a version of that bot only" in err
        monkeypatch.delenv("BELOTE_TOKEN")
        monkeypatch.setenv(ADMIN_ENV, ADMIN)
        code, _, err = run(capsys, "bot", "promote", "alpha", "1")
        assert code == 1 and "no version '1'" in err  # alpha never said one
        code, out, _ = run(capsys, "bot", "versions", "alpha")
        assert code == 0 and "has said no version" in out


def test_bot_versions_prints_each_version_s_rating_on_its_own_games(tmp_path: Path, capsys: Capsys) -> None:
    """alpha played 3 ladder games as version 1, then 4 as version 2: ``bot versions`` prints each one's
    rating with its interval and its own games, and ``rankings`` the row of version 2 with its 4 of the 7."""
    import dataclasses
    import secrets

    from arena.node.bots import BrokerRegistryBackend
    from arena.queue import EmbeddedBroker
    from arena.ratings.pools import ladder_id
    from arena.referee.registry import BotRegistry
    from arena.referee.versions import promote, seen
    from arena.tournament import MatchJob
    from tests.factories import result_of_job

    def ladder_game(broker: EmbeddedBroker, version: str) -> None:
        tid = ladder_id("coinche")
        job = MatchJob(match_id=f"{tid}:{secrets.token_hex(8)}", tournament_id=tid, team0="alpha",
                       team1="beta", ruleset="coinche", seed=secrets.token_hex(32), deals=1)
        result = result_of_job(job, (1, 0), 0)
        bots = tuple(dataclasses.replace(b, version=version if b.name == "alpha" else "")
                     for b in result.record.bots)
        assert broker.write_result(dataclasses.replace(result, record=dataclasses.replace(result.record,
                                                                                           bots=bots)))

    with node_with_bots(tmp_path, bots=("alpha", "beta")) as node:
        with EmbeddedBroker(tmp_path / "queue.sqlite3") as broker:  # as another node writes
            registry = BotRegistry(BrokerRegistryBackend(broker))
            now = int(time.time())
            registry.update_versions("alpha", lambda vs: seen(vs, "1", now))
            for _ in range(3):
                ladder_game(broker, "1")
            registry.update_versions("alpha", lambda vs: promote(seen(vs, "2", now) or vs, "2", "hand", now))
            for _ in range(4):
                ladder_game(broker, "2")
        arun(until(lambda: versions_of(node.address).get("2") == ("promoted", "hand"), 10, "2 promoted"), 20)
        # a board is kept for 2 s (arena.node.rankings): one made while the games came may be served
        arun(until(lambda: alpha_row(node.address) == ("2", 4, 7), 10, "the row of version 2"), 20)
        code, out, _ = run(capsys, "bot", "versions", "alpha", "--address", node.address)
        assert code == 0
        rows = {m.group(1): (int(m.group(2)), int(m.group(3)), int(m.group(4)), int(m.group(5)))
                for m in re.finditer(r"^  coinche\s+(\S+)\s+(\d+)\s+(\d+) \.\. (\d+)\s+(\d+)", out, re.M)}
        assert set(rows) == {"1", "2"} and rows["1"][3] == 3 and rows["2"][3] == 4
        for rating, low, high, _ in rows.values():
            assert low < rating < high
        code, out, _ = run(capsys, "bot", "versions", "alpha", "--address", node.address, "--json")
        ratings = json.loads(out)["ratings"]
        assert {(r["version"], r["games"]) for r in ratings} == {("1", 3), ("2", 4)}
        code, out, _ = run(capsys, "rankings", "--address", node.address, "--pool", "coinche", "--json")
        alpha = next(e for e in json.loads(out)["entries"] if e["bot"] == "alpha")
        assert (alpha["version"], alpha["version_games"], alpha["games"]) == ("2", 4, 7)
        code, out, _ = run(capsys, "rankings", "--address", node.address, "--pool", "coinche")
        assert re.search(r"^1\s+alpha\s+2 \(by hand\)\s+4\s", out, re.M), out
