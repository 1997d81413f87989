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
