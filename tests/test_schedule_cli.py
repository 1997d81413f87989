"""`belote-arena tournament schedule`: through a node, with the admin credential, on the embedded queue."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest
from belote.arena.v1 import arena_service_pb2 as apb

from arena.cli import main
from arena.credentials import ADMIN_ENV
from arena.remote import Remote, RemoteError
from tests.cli_node import ADMIN, node_with_bots
from tests.referee.arena_helpers import until

Capsys = pytest.CaptureFixture[str]


def run(capsys: Capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def admin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ADMIN_ENV, ADMIN)


def test_a_schedule_is_made_listed_and_cancelled(tmp_path: Path, capsys: Capsys, admin: None) -> None:
    with node_with_bots(tmp_path) as node:
        a = node.address
        code, out, err = run(capsys, "tournament", "schedule", "--every", "24h", "--at", "02:00", "--format",
                             "swiss", "--bots", "a,b,c", "--deals", "1", "--id", "nightly", "--address", a,
                             "--json")
        assert code == 0, err
        made = json.loads(out)
        assert (made["schedule_id"], made["every"], made["at"], made["bots"]) == ("nightly", "1d", "02:00",
                                                                                  ["a", "b", "c"])
        assert made["next_at"] % 86_400 == 2 * 3600 and 0 < made["next_at"] - time.time() <= 86_400
        # without --at: from now, its first occurrence made at once by the node's schedule loop
        code, out, err = run(capsys, "tournament", "schedule", "--every", "1h", "--format", "round-robin",
                             "--bots", "a,b", "--deals", "1", "--id", "hourly", "--address", a)
        assert code == 0 and out.startswith("schedule hourly: round-robin of a, b, every 1h"), err

        def hourly_made() -> bool:
            rows = json.loads(run(capsys, "tournament", "list", "--address", a, "--json")[1])
            return any(r["tournament_id"].startswith("hourly@") for r in rows)

        asyncio.run(until(hourly_made, 10, "the first occurrence"))
        rows = json.loads(run(capsys, "tournament", "schedule", "list", "--address", a, "--json")[1])
        assert [r["schedule_id"] for r in rows] == ["hourly", "nightly"]
        assert rows[0]["last_tournament_id"].startswith("hourly@") and rows[1]["last_tournament_id"] is None
        code, out, _ = run(capsys, "tournament", "schedule", "list", "--address", a)
        assert code == 0 and "nightly" in out and "every 1d at 02:00" in out
        assert run(capsys, "tournament", "schedule", "cancel", "nightly", "--address", a)[0] == 0
        code, _, err = run(capsys, "tournament", "schedule", "cancel", "nightly", "--address", a)
        assert code == 1 and "NOT_FOUND" in err and "no schedule 'nightly'" in err
        assert len(err.splitlines()) == 1
        code, _, err = run(capsys, "tournament", "schedule", "--every", "1h", "--format", "round-robin",
                           "--bots", "a,b", "--id", "hourly", "--address", a)
        assert code == 1 and "ALREADY_EXISTS" in err and len(err.splitlines()) == 1
        rows = json.loads(run(capsys, "tournament", "schedule", "list", "--address", a, "--json")[1])
        assert [r["schedule_id"] for r in rows] == ["hourly"]


BAD_SCHEDULE = {
    "no period": ([], "tournament schedule needs --every"),
    "a period with no unit": (["--every", "24"], "--every is a whole number and a unit"),
    "a zero period": (["--every", "0s"], "--every must be from 1s"),
    "a period over a year": (["--every", "400d"], "--every must be from 1s to 366d"),
    "a time out of the day": (["--every", "1h", "--at", "24:00"], "--at is a UTC time HH:MM"),
    "a time with seconds": (["--every", "1h", "--at", "02:00:00"], "--at is a UTC time HH:MM"),
    "a ladder of no preset": (["--every", "1h", "--bots", "@ladder:main"], "@ladder:POOL names a ruleset"),
    "another @ word": (["--every", "1h", "--bots", "@all"], "--bots is a list of names or @ladder:POOL"),
    "a bad bot name": (["--every", "1h", "--bots", "a,../b"], "bad bot name '../b' in --bots"),
}


@pytest.mark.security
@pytest.mark.parametrize(("args", "message"), BAD_SCHEDULE.values(), ids=BAD_SCHEDULE.keys())
def test_a_bad_schedule_argument_is_one_error_line(
    tmp_path: Path, capsys: Capsys, args: list[str], message: str,
) -> None:
    # nothing listens there: an argument that reached the node would fail otherwise
    bots = [] if "--bots" in args else ["--bots", "alpha,beta"]
    code, out, err = run(capsys, "tournament", "schedule", "--format", "round-robin", *bots,
                         "--address", "127.0.0.1:9", "--data-dir", str(tmp_path), *args)
    assert (code, out) == (1, "")
    [line] = err.splitlines()
    assert line.startswith("error: ") and message in line, line


@pytest.mark.security
def test_the_node_refuses_a_period_under_its_minimum_and_the_ladder(
    tmp_path: Path, capsys: Capsys, admin: None,
) -> None:
    with node_with_bots(tmp_path) as node:
        code, _, err = run(capsys, "tournament", "schedule", "--every", "30s", "--format", "round-robin",
                           "--bots", "a,b", "--address", node.address)
        assert code == 1 and len(err.splitlines()) == 1
        assert "INVALID_ARGUMENT: every_s must be at least 60 seconds" in err, err
        code, _, err = run(capsys, "tournament", "schedule", "--every", "1h", "--format", "round-robin",
                           "--bots", "a,ghost", "--address", node.address)
        assert code == 1 and "no bot named ghost: register it first" in err
        spec = apb.TournamentSpec(format="round-robin")
        with Remote(node.address, ADMIN) as remote:
            with pytest.raises(RemoteError, match="a ladder runs on a ruleset preset's pool"):
                remote.call("CreateSchedule", apb.CreateScheduleRequest(spec=spec, every_s=3600,
                                                                        ladder="main"))
            named = apb.TournamentSpec(format="round-robin", bots=["a", "b"])
            with pytest.raises(RemoteError, match="names no bots"):
                remote.call("CreateSchedule", apb.CreateScheduleRequest(spec=named, every_s=3600,
                                                                        ladder="coinche"))
            sprt = apb.TournamentSpec(format="sprt", deals=2)
            with pytest.raises(RemoteError, match="a ladder's bots play"):
                remote.call("CreateSchedule", apb.CreateScheduleRequest(spec=sprt, every_s=3600,
                                                                        ladder="coinche"))
        rows = json.loads(run(capsys, "tournament", "schedule", "list", "--address", node.address,
                              "--json")[1])
    assert rows == []


BAD_REQUEST = {
    "a time out of the day": ({"at": "24:00"}, "at is a UTC time HH:MM (02:00), not '24:00'"),
    "a time with seconds": ({"at": "02:00:00"}, "at is a UTC time HH:MM"),
    "no period": ({"every_s": 0}, "every_s must be at least 60 seconds"),
    "a bad id": ({"schedule_id": "../x"}, "a schedule id is 1-96 letters"),
    "a ladder of no preset": ({"ladder": "main", "spec": apb.TournamentSpec(format="swiss")},
                              "a ladder runs on a ruleset preset's pool"),
    "a bad ruleset": ({"spec": apb.TournamentSpec(format="round-robin", bots=["a", "b"], ruleset="{x")},
                      "ruleset is not valid JSON"),
}


@pytest.mark.security
@pytest.mark.parametrize(("fields", "message"), BAD_REQUEST.values(), ids=BAD_REQUEST.keys())
def test_the_node_names_the_request_field_it_refuses_not_a_flag(
    tmp_path: Path, fields: dict[str, object], message: str,
) -> None:
    """A gRPC caller has no command line: the node's error names the request's field (the command line
    names its flags, before it calls the node)."""
    request = {"schedule_id": "nightly", "every_s": 3600, "at": "",
               "spec": apb.TournamentSpec(format="round-robin", bots=["a", "b"]), **fields}
    with (node_with_bots(tmp_path) as node, Remote(node.address, ADMIN) as remote,
          pytest.raises(RemoteError) as refused):
        remote.call("CreateSchedule", apb.CreateScheduleRequest(**request))  # type: ignore[arg-type]
    assert str(refused.value).startswith("INVALID_ARGUMENT: ")
    assert message in str(refused.value) and "--" not in str(refused.value), refused.value


@pytest.mark.security
def test_making_and_cancelling_a_schedule_need_the_admin_credential(
    tmp_path: Path, capsys: Capsys, monkeypatch: pytest.MonkeyPatch,
) -> None:
    with node_with_bots(tmp_path) as node:
        a = node.address
        monkeypatch.setenv(ADMIN_ENV, ADMIN)
        assert run(capsys, "tournament", "schedule", "--every", "1d", "--at", "03:00", "--format",
                   "round-robin", "--bots", "a,b", "--id", "kept", "--address", a)[0] == 0
        monkeypatch.setenv(ADMIN_ENV, node.tokens["a"])  # a bot's token is a credential, not an admin's
        code, _, err = run(capsys, "tournament", "schedule", "--every", "1d", "--format", "round-robin",
                           "--bots", "a,b", "--address", a)
        assert code == 1 and err.startswith("error: PERMISSION_DENIED"), err
        code, _, err = run(capsys, "tournament", "schedule", "cancel", "kept", "--address", a)
        assert code == 1 and err.startswith("error: PERMISSION_DENIED"), err
        monkeypatch.delenv(ADMIN_ENV)
        code, _, err = run(capsys, "tournament", "schedule", "cancel", "kept", "--address", a,
                           "--data-dir", str(tmp_path / "elsewhere"))
        assert code == 1 and err.startswith("error: UNAUTHENTICATED: cancelling a schedule needs the admin")
        # reading them needs no credential (as the tournaments' list)
        rows = json.loads(run(capsys, "tournament", "schedule", "list", "--address", a, "--json",
                              "--data-dir", str(tmp_path / "elsewhere"))[1])
    assert [r["schedule_id"] for r in rows] == ["kept"]


def test_a_ladder_schedule_waiting_for_bots_says_why_where_it_is_read(
    tmp_path: Path, capsys: Capsys, admin: None,
) -> None:
    """No bot opted in: the occurrence due waits, and the command that makes it, `schedule list` (text
    and JSON) and ListSchedules all say why (before: nothing, anywhere)."""
    with node_with_bots(tmp_path) as node:
        a = node.address
        code, out, err = run(capsys, "tournament", "schedule", "--every", "1h", "--format", "swiss",
                             "--ruleset", "coinche", "--deals", "2", "--bots", "@ladder:coinche",
                             "--max-bots", "16", "--id", "weekly", "--address", a)
        assert code == 0, err
        assert "opted in to the coinche ladder at each occurrence (16 at most, drawn at random)" in out
        waits = ("waits for bots: 0 are opted in to the coinche ladder (a tournament needs 2 to 256 bots, "
                 "not 0); it is made once there are enough")
        [note] = [line for line in out.splitlines() if line.startswith("note: ")]
        assert note.startswith("note: its occurrence due ") and note.endswith(waits), out
        code, out, _ = run(capsys, "tournament", "schedule", "list", "--address", a)
        assert code == 0 and out.splitlines()[1].strip().endswith(waits), out
        [row] = json.loads(run(capsys, "tournament", "schedule", "list", "--address", a, "--json")[1])
        assert row["why"].endswith(waits) and row["max_bots"] == 16
        with Remote(a) as remote:
            [listed] = remote.call("ListSchedules", apb.ListSchedulesRequest()).schedules
        assert listed.why == row["why"] and listed.max_bots == 16
        code, _, err = run(capsys, "tournament", "schedule", "--every", "1h", "--format", "swiss",
                           "--bots", "a,b", "--max-bots", "16", "--address", a)
        assert code == 1 and "--max-bots bounds the bots of --bots @ladder:POOL" in err
        with Remote(a, ADMIN) as remote, pytest.raises(RemoteError, match="max_bots bounds a ladder's bots"):
            remote.call("CreateSchedule", apb.CreateScheduleRequest(
                spec=apb.TournamentSpec(format="swiss", bots=["a", "b"]), every_s=3600, max_bots=16))


def test_the_readme_ladder_schedule_command_works_as_printed(
    tmp_path: Path, capsys: Capsys, admin: None, monkeypatch: pytest.MonkeyPatch,
) -> None:
    import re
    import shlex

    from arena.hints import ADDRESS_ENV

    page = Path(__file__).resolve().parent.parent / "docs" / "how-to" / "tournaments.md"
    howto = page.read_text(encoding="utf-8")
    found = re.search(r"`(belote-arena tournament schedule[^`]*@ladder:coinche[^`]*)`", howto)
    assert found, "the how-to on tournaments shows a ladder's schedule"
    words = shlex.split(" ".join(found.group(1).split()))
    with node_with_bots(tmp_path, bots=("a", "b", "c")) as node:
        monkeypatch.setenv(ADDRESS_ENV, node.address)
        code, out, err = run(capsys, *words[1:])
        assert code == 0, err
        assert "the bots opted in to the coinche ladder at each occurrence" in out
        [row] = json.loads(run(capsys, "tournament", "schedule", "list", "--json")[1])
    assert (row["schedule_id"], row["ladder"], row["bots"]) == ("weekly", "coinche", [])
    assert row["format"] == "swiss"
