"""`belote-arena tournament status --watch` into a pipe, and `tournament export`: a tournament's standings as
CSV and its records as JSONL or a zip, through a node, as a person pipes or saves them.

A node runs in this process (its own event loop thread); the command line runs as another process
whose output is a pipe, exactly as ``... | tee log`` or ``> file`` makes it.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

from arena.credentials import ADMIN_ENV
from tests.cli_node import ADMIN, node_with_bots
from tests.test_tournament_cli import Capsys, run, wait_until_finished

BIN = Path(sys.executable).parent
#: names long enough that an 80-column table cuts them, and the numbers beside them
LONG = ("alpha-the-first-of-a-rather-long-line-of-bots", "beta-the-second-of-a-rather-long-line-of-bots")


def piped(*argv: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """``belote-arena ARGV`` with its output a pipe (no terminal), as ``| tee`` or ``> file`` runs it."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "FORCE_COLOR", "TERM")}
    env[ADMIN_ENV] = ADMIN
    return subprocess.run([str(BIN / "belote-arena"), *argv], capture_output=True, stdin=subprocess.DEVNULL,
                          text=True, env=env, timeout=timeout, check=False)


@pytest.fixture
def admin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ADMIN_ENV, ADMIN)


@pytest.mark.slow
def test_watch_into_a_pipe_prints_whole_values_and_headers(
    tmp_path: Path, capsys: Capsys, admin: None,
) -> None:
    with node_with_bots(tmp_path, LONG, connect=True) as node:
        a = node.address
        tid = "a-tournament-with-a-long-id-to-follow-in-a-log"
        code, _, err = run(capsys, "tournament", "create", "--format", "round-robin", "--bots",
                           ",".join(LONG), "--deals", "2", "--rounds", "3", "--id", tid, "--address", a,
                           "--json")
        assert code == 0, err
        done = piped("tournament", "status", tid, "--watch", "--interval", "0.2", "--address", a)
        status = json.loads(piped("tournament", "status", tid, "--address", a, "--json").stdout)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "\u2026" not in out, out  # nothing cut short with an ellipsis
    assert "\x1b[" not in out, out  # nor coloured: a log holds text
    for header in ("played", "won", "drawn", "lost", "score", "for", "against", "diff"):
        assert f" {header} " in out, out
    assert f"{tid} (finished): 6/6 matches" in out
    for s in status["standings"]:  # each row whole: the bot's name and every number
        [row] = [line for line in out.splitlines() if f" {s['bot']} " in line]
        cells = [c.strip() for c in row.split("\u2502") if c.strip()]
        assert cells == [str(s["rank"]), s["bot"], str(s["played"]), str(s["wins"]), str(s["draws"]),
                         str(s["losses"]), f"{s['score']:g}", str(s["points_for"]), str(s["points_against"]),
                         str(s["diff"])], row


# ------------------------------------------------------------------ tournament export
def _records(address: str, match_ids: list[str]) -> list[dict[str, Any]]:
    from arena.remote import Remote

    with Remote(address, ADMIN) as remote:
        return [remote.get_record(m) for m in match_ids]


@pytest.mark.slow
def test_export_writes_the_standings_as_csv_and_the_records_as_json_lines_or_a_zip(
    tmp_path: Path, capsys: Capsys, admin: None,
) -> None:
    with node_with_bots(tmp_path, ("a", "b", "c"), connect=True) as node:
        a = node.address
        code, _, err = run(capsys, "tournament", "create", "--format", "round-robin", "--bots", "a,b,c",
                           "--deals", "1", "--rounds", "4", "--id", "ex", "--address", a, "--json")
        assert code == 0, err
        wait_until_finished(capsys, a, "ex")
        status = json.loads(run(capsys, "tournament", "status", "ex", "--address", a, "--json")[1])
        # the schedule's order: round 2 before round 10 (ids sorted as numbers, not as text)
        in_order = sorted(status_ids(a), key=lambda m: [int(x) for x in m.split("-r")[1].split("-")])
        expected = _records(a, in_order)
        code, out, err = run(capsys, "tournament", "export", "ex", "--standings", "csv", "-o",
                             str(tmp_path / "s.csv"), "--address", a)
        assert code == 0, err
        assert out == f"tournament ex: wrote the standings of 3 bots to {tmp_path / 's.csv'}\n"
        rows = list(csv.DictReader(io.StringIO((tmp_path / "s.csv").read_text())))
        assert [(r["rank"], r["bot"], r["played"], r["score"], r["diff"]) for r in rows] == [
            (str(s["rank"]), s["bot"], str(s["played"]), f"{s['score']:g}", str(s["diff"]))
            for s in status["standings"]]
        code, out, err = run(capsys, "tournament", "export", "ex", "--records", "jsonl", "-o",
                             str(tmp_path / "r.jsonl"), "--address", a)
        assert code == 0 and "wrote the records of 24 matches" in out, out + err
        lines = (tmp_path / "r.jsonl").read_text().splitlines()
        assert [json.loads(line) for line in lines] == expected
        code, out, err = run(capsys, "tournament", "export", "ex", "--records", "zip", "-o",
                             str(tmp_path / "r.zip"), "--address", a)
        assert code == 0, err
        with zipfile.ZipFile(tmp_path / "r.zip") as z:
            assert z.namelist() == [f"{m}.json" for m in in_order]
            assert [json.loads(z.read(n)) for n in z.namelist()] == expected
        # into a pipe: the file on the output, what was written said on the error stream
        piped_out = piped("tournament", "export", "ex", "--records", "jsonl", "-o", "-", "--address", a)
    assert piped_out.returncode == 0 and piped_out.stdout.splitlines() == lines
    assert piped_out.stderr == "tournament ex: wrote the records of 24 matches\n"


def status_ids(address: str) -> list[str]:
    from belote.arena.v1 import arena_service_pb2 as apb

    from arena.remote import Remote

    with Remote(address, ADMIN) as remote:
        reply = remote.call("GetTournament", apb.GetTournamentRequest(tournament_id="ex"))
    return list(reply.tournament.finished_matches)


@pytest.mark.parametrize(("args", "message"), [
    ([], "one of the arguments --standings --records is required"),
    (["--standings", "csv", "--records", "zip"], "not allowed with argument"),
    (["--records", "tar"], "invalid choice: 'tar'"),
])
def test_a_bad_export_is_one_error_line_and_writes_nothing(
    tmp_path: Path, capsys: Capsys, args: list[str], message: str,
) -> None:
    with pytest.raises(SystemExit) as exited:
        run(capsys, "tournament", "export", "t1", *args, "-o", str(tmp_path / "x"),
            "--address", "127.0.0.1:9")
    assert exited.value.code == 2 and message in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_an_export_refused_leaves_no_file(tmp_path: Path, capsys: Capsys, admin: None) -> None:
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    with node_with_bots(tmp_path) as node:
        target = out_dir / "out.jsonl"
        code, out, err = run(capsys, "tournament", "export", "nope", "--records", "jsonl", "-o", str(target),
                             "--address", node.address)
    assert (code, out) == (1, "") and err.startswith("error: NOT_FOUND") and len(err.splitlines()) == 1
    assert list(out_dir.iterdir()) == []


def test_status_says_how_a_duplicate_game_is_scored(capsys: Capsys) -> None:
    from belote.arena.v1 import arena_service_pb2 as apb

    from arena.cli.tournament import print_standings, status_json

    for mode, said in (("field", "a side can lose both its matches and still win its game"),
                       ("mirror", "the same deals twice, the hands exchanged between the legs"), ("", None)):
        spec = apb.TournamentSpec(tournament_id="d", format="swiss", duplicate_mode=mode)
        print_standings(status_json(apb.TournamentStatus(spec=spec, state="running")), argparse.Namespace())
        printed = capsys.readouterr().out
        if said is None:
            assert "How a game is scored" not in printed
        else:
            assert "How a game is scored" in printed and said in printed
