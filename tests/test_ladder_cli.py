"""`belote-arena ladder` and the ladder RPCs: through a node, with the admin credential, on the embedded
queue; the README's ladder commands as pasted."""

from __future__ import annotations

import asyncio
import json
import re
import shlex
from pathlib import Path

import pytest
from belote.arena.v1 import arena_service_pb2 as apb

from arena.cli import main
from arena.credentials import ADMIN_ENV
from arena.hints import ADDRESS_ENV
from arena.node.pauses import Pauses
from arena.queue.embedded import EmbeddedBroker
from arena.remote import Remote, RemoteError
from tests.cli_node import ADMIN, node_with_bots
from tests.referee.arena_helpers import until

Capsys = pytest.CaptureFixture[str]
#: what a read waits for the node's counts to be fresh: longer than Rankings' ttl (2 s)
FRESH_S = 2.5
#: the tutorial's page on the ladder (it was the README's Ladder section)
LADDER_PAGE = Path(__file__).resolve().parent.parent / "docs" / "tutorial" / "ladder.md"


def run(capsys: Capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def admin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ADMIN_ENV, ADMIN)


def test_a_ladder_is_started_followed_and_stopped_and_its_bots_play_rated_matches(
    tmp_path: Path, capsys: Capsys, admin: None,
) -> None:
    with node_with_bots(tmp_path, connect=True) as node:
        a = node.address
        assert json.loads(run(capsys, "ladder", "status", "--address", a, "--json")[1]) == []
        code, out, err = run(capsys, "ladder", "add", "--pool", "coinche", "a", "b", "a", "--address", a)
        assert code == 0, err
        assert out.splitlines()[0] == "a, b opted in to the ladder coinche"
        assert "it is off; start it: belote-arena ladder start --pool coinche --address" in out
        code, out, err = run(capsys, "ladder", "add", "--pool", "coinche", "b", "c", "--address", a, "--json")
        assert code == 0, err
        assert json.loads(out)["added"] == ["c"] and json.loads(out)["bots"] == ["a", "b", "c"]

        code, out, err = run(capsys, "ladder", "start", "--pool", "coinche", "--deals", "1", "--address", a)
        assert code == 0, err
        assert out.startswith("ladder coinche: on, matches of 1 deal,"), out
        assert f"follow it: belote-arena ladder status --pool coinche --address {a}" in out

        def standings() -> list[dict[str, object]]:
            got = json.loads(run(capsys, "ladder", "status", "--pool", "coinche", "--address", a,
                                 "--json")[1])
            entries: list[dict[str, object]] = got["standings"]["entries"]
            return entries

        # the node's ladder pairs its connected bots with no tournament made, and rates them in the pool
        asyncio.run(until(lambda: len(standings()) == 3, 30, "the ladder's rated matches"))
        assert all(e["low"] is not None and e["high"] is not None for e in standings())  # intervals
        assert json.loads(run(capsys, "tournament", "list", "--address", a, "--json")[1]) == []
        code, out, _ = run(capsys, "ladder", "status", "--pool", "coinche", "--address", a)
        assert code == 0 and "95% interval" in out and "Bradley-Terry" in out
        # each bot's games by opponent, most first (worked out at most every 2 s, as the standings)
        def opponents_shown() -> list[str]:
            text = run(capsys, "ladder", "status", "--pool", "coinche", "--address", a)[1]
            return text.split("each bot's games in the pool, by opponent:\n")[1].splitlines()[:3]

        asyncio.run(until(lambda: "no game yet" not in "".join(opponents_shown()), 10, "the opponents"))
        opponents = opponents_shown()
        assert [line.split()[0] for line in opponents] == ["a", "b", "c"]
        assert all(re.fullmatch(r"\s+\w\s+\w \d+(, \w \d+)?", line) for line in opponents), opponents
        # a bot whose last ladder matches ended in its forfeit (two recorded, as a node writing them would)
        with EmbeddedBroker(tmp_path / "queue.sqlite3") as other:
            for _ in range(2):
                Pauses(other).record("c", True, "seat 1 (c): 3 strikes")
        code, out, _ = run(capsys, "ladder", "status", "--pool", "coinche", "--address", a)
        assert "paused: c is paused from the ladder for 60 s, until " in out
        got = json.loads(run(capsys, "ladder", "status", "--pool", "coinche", "--address", a, "--json")[1])
        state = {b["bot"]: b for b in got["bot_states"]}
        assert state["c"]["paused_until"] > 0 and state["c"]["pauses"] == 1 and not state["a"]["paused_until"]
        assert {o["bot"] for o in state["a"]["opponents"]} <= {"b", "c"}
        run(capsys, "ladder", "add", "--pool", "coinche", "c", "--address", a)  # the admin's word lifts it
        assert "paused:" not in run(capsys, "ladder", "status", "--pool", "coinche", "--address", a)[1]

        code, out, err = run(capsys, "ladder", "remove", "--pool", "coinche", "c", "ghost", "--address", a)
        assert code == 0, err
        assert out.splitlines()[0].startswith("c taken out of the ladder coinche (ghost not in)")
        code, out, err = run(capsys, "ladder", "stop", "--pool", "coinche", "--address", a)
        assert code == 0 and out.startswith("ladder coinche: off"), err
        assert f"start it again: belote-arena ladder start --pool coinche --deals 1 --address {a}" in out
        [row] = json.loads(run(capsys, "ladder", "status", "--address", a, "--json")[1])
        assert (row["pool"], row["on"], row["deals"], row["bots"]) == ("coinche", False, 1, ["a", "b"])

        # stopped: once the matches under way are played out, none is queued any more
        def settled() -> bool:
            [ladder] = json.loads(run(capsys, "ladder", "status", "--address", a, "--json")[1])
            return bool(ladder["in_progress"] == 0)

        def played() -> int:
            """The pool's games, counted afresh: the node keeps its standings and counts by opponent two
            seconds (Rankings' ttl), so a read waits past that (read at once, they said 6 games, then 22;
            counts by opponent, 7 then 12)."""
            asyncio.run(asyncio.sleep(FRESH_S))
            got = json.loads(run(capsys, "ladder", "status", "--pool", "coinche", "--address", a,
                                 "--json")[1])
            return sum(int(o["games"]) for b in got["bot_states"] for o in b["opponents"]) // 2

        asyncio.run(until(settled, 30, "the ladder's last matches"))
        before = played()
        assert settled()  # nothing queued since (read from the broker itself)
        assert played() == before > 0


BAD_LADDER = {
    "start: a pool that is no preset": (["start", "--pool", "tournament:x"], "--pool must be a ruleset"),
    "start: no deal": (["start", "--pool", "coinche", "--deals", "0"], "--deals must be a whole number"),
    "start: too many deals": (["start", "--pool", "coinche", "--deals", "1001"], "from 1 to 1000"),
    "start: a version test bound out of range": (
        ["start", "--pool", "coinche", "--version-test-elo1", "0.5"], "--version-test-elo1 must be from 1"),
    "stop: an unknown pool": (["stop", "--pool", "nope"], "--pool must be a ruleset preset"),
    "status: an unknown pool": (["status", "--pool", "nope"], "--pool must be a ruleset preset"),
    "status: a long standings": (["status", "--pool", "coinche", "--limit", "201"], "--limit must be"),
    "add: a bad bot name": (["add", "--pool", "coinche", "a", "../b"], "bad bot name '../b'"),
    "remove: an unknown pool": (["remove", "--pool", "", "a"], "--pool must be a ruleset preset"),
}


@pytest.mark.security
@pytest.mark.parametrize(("args", "message"), BAD_LADDER.values(), ids=BAD_LADDER.keys())
def test_a_bad_ladder_argument_is_one_error_line(
    tmp_path: Path, capsys: Capsys, args: list[str], message: str,
) -> None:
    # nothing listens there: an argument that reached the node would fail otherwise
    code, out, err = run(capsys, "ladder", *args, "--address", "127.0.0.1:9", "--data-dir", str(tmp_path))
    assert (code, out) == (1, "")
    [line] = err.splitlines()
    assert line.startswith("error: ") and message in line, line


@pytest.mark.security
def test_the_node_refuses_an_unknown_bot_a_pool_no_preset_has_and_bad_deals(
    tmp_path: Path, capsys: Capsys, admin: None,
) -> None:
    with node_with_bots(tmp_path) as node:
        code, _, err = run(capsys, "ladder", "add", "--pool", "classic", "a", "ghost", "--address",
                           node.address)
        assert code == 1 and len(err.splitlines()) == 1
        assert "NOT_FOUND: no bot named ghost: register it first" in err, err
        with Remote(node.address, ADMIN) as remote:
            for call, message, why in (
                ("StartLadder", apb.StartLadderRequest(pool="tournament:t", deals=1), "a ruleset preset"),
                ("StartLadder", apb.StartLadderRequest(pool="coinche", deals=5000), "deals must be a whole"),
                ("StartLadder", apb.StartLadderRequest(pool="coinche", version_test_elo1=float("nan")),
                 "H1 bound is from 1 to 400"),
                ("StartLadder", apb.StartLadderRequest(pool="coinche", version_test_elo1=1e300),
                 "H1 bound is from 1 to 400"),
                ("GetLadder", apb.GetLadderRequest(pool=""), "a ruleset preset's pool"),
                ("AddLadderBot", apb.AddLadderBotRequest(pool="nope", bots=["a"]), "a ruleset preset's pool"),
                ("AddLadderBot", apb.AddLadderBotRequest(pool="coinche"), "name at least one bot"),
                ("RemoveLadderBot", apb.RemoveLadderBotRequest(pool="coinche", bots=["a b"]), "bad bot name"),
                # each name a broker write and a notice: a call is bounded (its 16 KiB message, and this)
                ("RemoveLadderBot", apb.RemoveLadderBotRequest(
                    pool="coinche", bots=[f"b{i}" for i in range(300)]), "at most 256 bots a call"),
            ):
                with pytest.raises(RemoteError, match=f"INVALID_ARGUMENT.*{why}"):
                    remote.call(call, message)
        # nothing was stored: the known bot a was not added with the unknown one
        assert json.loads(run(capsys, "ladder", "status", "--address", node.address, "--json")[1]) == []


@pytest.mark.security
def test_changing_a_ladder_needs_the_admin_credential(
    tmp_path: Path, capsys: Capsys, monkeypatch: pytest.MonkeyPatch,
) -> None:
    with node_with_bots(tmp_path) as node:
        a = node.address
        monkeypatch.setenv(ADMIN_ENV, ADMIN)
        assert run(capsys, "ladder", "add", "--pool", "classic", "a", "b", "--address", a)[0] == 0
        monkeypatch.setenv(ADMIN_ENV, node.tokens["a"])  # a bot's token is a credential, not an admin's
        for argv in (["start", "--pool", "classic"], ["stop", "--pool", "classic"],
                     ["add", "--pool", "classic", "c"], ["remove", "--pool", "classic", "a"]):
            code, _, err = run(capsys, "ladder", *argv, "--address", a)
            assert code == 1 and err.startswith("error: PERMISSION_DENIED"), (argv, err)
        monkeypatch.delenv(ADMIN_ENV)
        code, _, err = run(capsys, "ladder", "start", "--pool", "classic", "--address", a,
                           "--data-dir", str(tmp_path / "elsewhere"))
        assert code == 1 and err.startswith("error: UNAUTHENTICATED: starting a ladder needs the admin"), err
        # reading needs no credential
        rows = json.loads(run(capsys, "ladder", "status", "--address", a, "--json",
                              "--data-dir", str(tmp_path / "elsewhere"))[1])
    assert rows == [{"pool": "classic", "on": False, "deals": 8, "bots": ["a", "b"], "in_progress": 0,
                     "version_test_elo1": 30.0}]


def readme_ladder_commands() -> list[str]:
    """The shell block of the tutorial's Ladder page, each command without its comment."""
    passage = LADDER_PAGE.read_text(encoding="utf-8")
    # the page's first shell block that is not a walkthrough (tests/test_readme.py runs those)
    block = re.search(r"(?<!-->\n)```sh\n(.*?)```", passage, re.S)
    assert block, "the Ladder passage shows its commands"
    return [line.split("  #")[0].strip() for line in block.group(1).splitlines() if line.strip()]


def test_the_readme_ladder_commands_work_as_pasted(
    tmp_path: Path, capsys: Capsys, monkeypatch: pytest.MonkeyPatch,
) -> None:
    commands = readme_ladder_commands()
    assert {shlex.split(c)[1:3][1] for c in commands} == {"add", "start", "status", "remove", "stop"}
    with node_with_bots(tmp_path, bots=("alpha", "beta", "gamma")) as node:
        monkeypatch.setenv(ADDRESS_ENV, node.address)  # as the README says: the commands dial it
        monkeypatch.setenv(ADMIN_ENV, ADMIN)
        for command in commands:
            words = shlex.split(command)
            assert words[0] == "belote-arena"
            code, _, err = run(capsys, *words[1:])
            assert code == 0, f"{command}: {err}"
        [row] = json.loads(run(capsys, "ladder", "status", "--json")[1])
    assert (row["on"], row["bots"]) == (False, ["alpha", "beta"])


def test_the_command_line_says_the_nodes_version_test_bounds() -> None:
    """The command line keeps its own copy of the node's defaults (it does not import the queue)."""
    from arena.cli import ladder as cli_ladder
    from arena.node import ladder, versions

    assert cli_ladder.DEFAULT_DEALS == ladder.DEFAULT_DEALS
    assert (cli_ladder.TEST_ELO1, cli_ladder.MIN_TEST_ELO1, cli_ladder.MAX_TEST_ELO1) == (
        versions.ELO1, versions.MIN_ELO1, versions.MAX_ELO1)
