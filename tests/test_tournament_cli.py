"""`belote-arena tournament` on the embedded queue: create, status, cancel, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arena.cli import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


Capsys = pytest.CaptureFixture[str]


def test_create_with_a_json_ruleset_queues_every_match(tmp_path: Path, capsys: Capsys) -> None:
    code, out, _ = run(capsys, "tournament", "create", "--format", "round-robin", "--bots", "a,b,c",
                       "--ruleset", '{"preset": "coinche", "must_undertrump": true}', "--deals", "2",
                       "--seed", "7", "--id", "rr", "--data-dir", str(tmp_path), "--json")
    assert code == 0 and json.loads(out) == {"tournament_id": "rr", "jobs": 6}
    code, out, _ = run(capsys, "tournament", "status", "rr", "--data-dir", str(tmp_path), "--json")
    status = json.loads(out)
    assert status["state"] == "running" and status["matches_scheduled"] == 6
    assert status["matches_done"] == 0 and status["matches_queued"] == 6
    assert [s["bot"] for s in status["standings"]] == ["a", "b", "c"]


def test_cancel_stops_a_tournament_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run(capsys, "tournament", "create", "--format", "swiss", "--bots", "a,b,c,d", "--deals", "1",
        "--id", "sw", "--data-dir", str(tmp_path))
    assert run(capsys, "tournament", "cancel", "sw", "--data-dir", str(tmp_path))[0] == 0
    code, _, err = run(capsys, "tournament", "cancel", "sw", "--data-dir", str(tmp_path))
    assert code == 1 and "already cancelled" in err


@pytest.mark.parametrize(("args", "message"), [
    (["--ruleset", "{bad"], "--ruleset is not valid JSON"),
    (["--ruleset", "bridge"], "unknown preset 'bridge'"),
    (["--duplicate"], "duplicate"),
], ids=["bad JSON", "unknown preset", "duplicate without deals"])
def test_a_bad_tournament_is_one_error_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str,
) -> None:
    code, _, err = run(capsys, "tournament", "create", "--format", "round-robin", "--bots", "a,b",
                       "--data-dir", str(tmp_path), *args)
    assert code == 1 and message in err and len(err.strip().splitlines()) == 1


def test_status_of_an_unknown_tournament_is_an_error(tmp_path: Path, capsys: Capsys) -> None:
    code, _, err = run(capsys, "tournament", "status", "nope", "--data-dir", str(tmp_path))
    assert code == 1 and "no tournament 'nope'" in err


BAD_CREATE: dict[str, tuple[list[str], str]] = {
    "no round": (["--rounds", "0"], "--rounds must be a whole number from 1 to 100, not 0"),
    "too many rounds": (["--rounds", "101"], "--rounds must be a whole number from 1 to 100"),
    "no deal": (["--deals", "0"], "--deals must be a whole number from 1 to 1000, not 0"),
    "negative deals": (["--deals", "-2"], "--deals must be a whole number from 1 to 1000, not -2"),
    "too many deals": (["--deals", "1001"], "--deals must be a whole number from 1 to 1000"),
    "a zero target": (["--target", "0"], "--target must be a whole number from 1 to 10000"),
    "too high a target": (["--target", "10001"], "--target must be a whole number from 1 to 10000"),
    "no pair a batch": (["--batch-pairs", "0"], "--batch-pairs must be a whole number from 1"),
    "a batch above the most pairs": (["--batch-pairs", "20", "--max-pairs", "10"],
                                     "--batch-pairs must be a whole number from 1 to 10, not 20"),
    "too few pairs": (["--max-pairs", "1"], "--max-pairs must be a whole number from 2"),
    "a bot name with a space": (["--bots", "alpha,be ta"], "bad bot name 'be ta' in --bots"),
    "a bot name with a slash": (["--bots", "alpha,../beta"], "bad bot name '../beta' in --bots"),
}


@pytest.mark.security
@pytest.mark.parametrize(("args", "message"), BAD_CREATE.values(), ids=BAD_CREATE.keys())
def test_a_bad_create_argument_is_one_error_line_and_queues_nothing(
    tmp_path: Path, capsys: Capsys, args: list[str], message: str,
) -> None:
    data = tmp_path / "queue"
    code, out, err = run(capsys, "tournament", "create", "--format", "round-robin", "--bots", "alpha,beta",
                         "--data-dir", str(data), *args)
    assert (code, out) == (1, "")
    [line] = err.splitlines()
    assert line.startswith("error: ") and message in line
    assert not data.exists(), "the queue is not even opened"


@pytest.mark.security
@pytest.mark.parametrize("interval", ["0", "-1", "nan"])
def test_status_with_a_bad_interval_is_one_error_line(tmp_path: Path, capsys: Capsys, interval: str) -> None:
    code, _, err = run(capsys, "tournament", "status", "t1", "--watch", "--interval", interval,
                       "--data-dir", str(tmp_path))
    assert code == 1 and len(err.strip().splitlines()) == 1
    assert "--interval must be more than 0" in err


def test_the_tournament_limits_are_the_node_s() -> None:
    from arena import tournament_cli
    from arena.referee import node, registry

    assert (tournament_cli.MAX_DEALS, tournament_cli.MAX_TARGET) == (node.MAX_DEALS, node.MAX_TARGET)
    assert tournament_cli.BOT_NAME.pattern == registry.NAME_RE.pattern
