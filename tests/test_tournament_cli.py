"""`belote-arena tournament` and `verify`: through a node, with the admin credential, on the embedded queue.

A node runs in this process (its own event loop thread); the command line
talks to it over gRPC from another thread, exactly as from another process.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path

import pytest
from belote.arena.v1 import arena_service_pb2 as apb

from arena.cli import main
from arena.cli.tournament import print_standings, status_json
from arena.credentials import ADMIN_ENV
from arena.engine.dealing import commitment
from arena.referee.node import Limits
from arena.referee.registry import new_token
from tests.cli_node import ADMIN, node_with_bots
from tests.referee.arena_helpers import until

Capsys = pytest.CaptureFixture[str]


def run(capsys: Capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def wait_until_finished(capsys: Capsys, address: str, tournament_id: str) -> None:
    def finished() -> bool:
        status = json.loads(run(capsys, "tournament", "status", tournament_id, "--address", address,
                                "--json")[1])
        return bool(status["state"] == "finished")

    asyncio.run(until(finished, 60, "the tournament to finish"))


@pytest.fixture
def admin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ADMIN_ENV, ADMIN)


def test_create_with_a_json_ruleset_queues_every_match(tmp_path: Path, capsys: Capsys, admin: None) -> None:
    with node_with_bots(tmp_path) as node:
        code, out, err = run(capsys, "tournament", "create", "--format", "round-robin", "--bots", "a,b,c",
                             "--ruleset", '{"preset": "coinche", "must_undertrump": true}', "--deals", "2",
                             "--id", "rr", "--address", node.address, "--json")
        assert code == 0, err
        created = json.loads(out)
        assert (created["tournament_id"], created["jobs"], created["unrated_reason"]) == ("rr", 6, "")
        code, out, _ = run(capsys, "tournament", "status", "rr", "--address", node.address, "--json")
        status = json.loads(out)
    assert status["state"] == "running" and status["matches_scheduled"] == 6
    assert status["matches_done"] == 0 and status["matches_queued"] == 6
    assert [s["bot"] for s in status["standings"]] == ["a", "b", "c"]
    # the commitment is public from the start, the secret only once the tournament is over
    assert status["commitment"] == created["commitment"] and status["secret"] == ""
    assert sorted(status["waiting_for"]) == ["a", "b", "c"]  # registered, connected nowhere


@pytest.mark.security
def test_a_seed_given_by_the_caller_makes_the_tournament_unrated(
    tmp_path: Path, capsys: Capsys, admin: None,
) -> None:
    with node_with_bots(tmp_path) as node:
        code, out, _ = run(capsys, "tournament", "create", "--format", "round-robin", "--bots", "a,b",
                           "--deals", "1", "--seed", "7", "--id", "seeded", "--address", node.address,
                           "--json")
    assert code == 0 and "known in advance" in json.loads(out)["unrated_reason"]
    assert json.loads(out)["commitment"] == commitment("7")


def test_cancel_stops_a_tournament_once(tmp_path: Path, capsys: Capsys, admin: None) -> None:
    with node_with_bots(tmp_path, ("a", "b", "c", "d")) as node:
        a = node.address
        assert run(capsys, "tournament", "create", "--format", "swiss", "--bots", "a,b,c,d", "--deals", "1",
                   "--id", "sw", "--address", a)[0] == 0
        assert run(capsys, "tournament", "cancel", "sw", "--address", a)[0] == 0
        code, _, err = run(capsys, "tournament", "cancel", "sw", "--address", a)
        assert code == 1 and "already cancelled" in err
        # its first round's matches, queued, are dropped by the node's next claim
        text = run(capsys, "tournament", "status", "sw", "--watch", "--interval", "0.05", "--address", a)[1]
        status = json.loads(run(capsys, "tournament", "status", "sw", "--address", a, "--json")[1])
    assert status["state"] == "cancelled" and status["secret"]  # over, none in play: its secret is revealed
    # when and why it ended, and its secret was revealed (once its queued round was dropped)
    assert status["ended_reason"] == "cancelled by an admin"
    assert status["secret_revealed_at"] >= status["ended_at"] > 0
    assert status["ending"].startswith("cancelled by an admin at ") and status["ending"] in text
    assert "; the secret revealed at " in status["ending"]


@pytest.mark.parametrize(("args", "message"), [
    (["--ruleset", "{bad"], "ruleset is not valid JSON"),
    (["--ruleset", "bridge"], "unknown preset 'bridge'"),
    (["--duplicate"], "duplicate"),
    (["--duplicate", "--deals", "2"],
     "field duplicate needs at least 4 bots, not 2; ask for duplicate 'mirror' "
     "(both legs seen by both bots)"),
    (["--bots", "a,ghost"], "no bot named ghost: register it first"),
], ids=["bad JSON", "unknown preset", "duplicate without deals", "two bots need mirror named", "unknown bot"])
def test_a_bad_tournament_is_one_error_line(
    tmp_path: Path, capsys: Capsys, admin: None, args: list[str], message: str,
) -> None:
    with node_with_bots(tmp_path) as node:
        code, _, err = run(capsys, "tournament", "create", "--format", "round-robin", "--bots", "a,b",
                           "--address", node.address, *args)
    assert code == 1 and message in err and len(err.strip().splitlines()) == 1, err


@pytest.mark.security
def test_duplicate_is_field_by_default_and_mirror_says_both_legs_are_seen_by_both_bots(
    tmp_path: Path, capsys: Capsys, admin: None,
) -> None:
    with node_with_bots(tmp_path, ("a", "b", "c", "d")) as node:
        a = node.address
        code, out, err = run(capsys, "tournament", "create", "--format", "round-robin", "--bots", "a,b,c,d",
                             "--deals", "1", "--duplicate", "--id", "fld", "--address", a)
        assert code == 0 and "both legs" not in out, err
        code, out, _ = run(capsys, "tournament", "status", "fld", "--address", a)
        assert code == 0 and "field duplicate: no bot sees a deal from two seats" in out
        status = json.loads(run(capsys, "tournament", "status", "fld", "--address", a, "--json")[1])
        seen = (status["duplicate"], status["duplicate_note"], status["matches_scheduled"])
        assert seen == ("field", "", 12)
        code, out, err = run(capsys, "tournament", "create", "--format", "sprt", "--bots", "a,b",
                             "--deals", "1", "--id", "sp", "--address", a)
        assert code == 0 and "mirror duplicate: both legs seen by both bots" in out, err
        code, out, _ = run(capsys, "tournament", "status", "sp", "--address", a)
        assert "mirror duplicate: both legs seen by both bots" in out


def test_status_of_an_unknown_tournament_is_an_error(tmp_path: Path, capsys: Capsys, admin: None) -> None:
    with node_with_bots(tmp_path) as node:
        code, _, err = run(capsys, "tournament", "status", "nope", "--address", node.address)
    assert code == 1 and "no tournament 'nope'" in err


@pytest.mark.security
def test_creating_a_tournament_needs_the_admin_credential(
    tmp_path: Path, capsys: Capsys, monkeypatch: pytest.MonkeyPatch,
) -> None:
    with node_with_bots(tmp_path) as node:
        argv = ["tournament", "create", "--format", "round-robin", "--bots", "a,b", "--deals", "1",
                "--address", node.address, "--data-dir", str(tmp_path / "elsewhere")]
        monkeypatch.delenv(ADMIN_ENV, raising=False)
        code, _, err = run(capsys, *argv)
        assert code == 1 and err.startswith("error: UNAUTHENTICATED: creating a tournament needs the admin")
        # where the command looked, and how to make one
        assert len(err.splitlines()) == 1, err
        assert "$BELOTE_ADMIN_TOKEN is not set, no --admin-token-file was given" in err, err
        assert f"{tmp_path / 'elsewhere' / 'admin.token'} does not exist (--data-dir)" in err, err
        assert "belote-arena admin token --file admin.token" in err, err
        monkeypatch.setenv(ADMIN_ENV, node.tokens["a"])  # a bot's token is a credential, not an admin's
        code, _, err = run(capsys, *argv)
        assert code == 1 and err.startswith("error: PERMISSION_DENIED"), err
        monkeypatch.setenv(ADMIN_ENV, new_token("adm"))  # strong, but not this node's
        code, _, err = run(capsys, *argv)
        assert code == 1 and err.startswith("error: UNAUTHENTICATED"), err


@pytest.mark.security
def test_a_finished_tournament_s_deals_verify_against_its_commitment(
    tmp_path: Path, capsys: Capsys, admin: None,
) -> None:
    with node_with_bots(tmp_path, ("a", "b"), connect=True) as node:
        a = node.address
        code, out, err = run(capsys, "tournament", "create", "--format", "round-robin", "--bots", "a,b",
                             "--deals", "2", "--duplicate", "mirror", "--id", "fair", "--address", a,
                             "--json")
        assert code == 0, err
        committed = json.loads(out)["commitment"]
        assert json.loads(out)["duplicate_note"].startswith("mirror duplicate: both legs seen by both bots")
        wait_until_finished(capsys, a, "fair")
        code, out, err = run(capsys, "verify", "fair", "--address", a, "--commitment", committed)
        assert code == 0, out + err
        assert f"the secret matches the commitment {committed}" in out and "4 deals of its 2 matches" in out
        code, out, _ = run(capsys, "verify", "fair", "--address", a, "--commitment", "0" * 64, "--json")
    assert code == 1
    assert json.loads(out)["problems"] == ["the revealed secret does not hash to the commitment"]


@pytest.mark.reliability
def test_anyone_verifies_a_tournament_at_the_reads_a_second_the_node_allows(
    tmp_path: Path, capsys: Capsys, admin: None, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Verifying reads every record of the tournament, one call after another: past the node's reads
    a second for an anonymous address, which refuses the calls over it saying when to retry. The
    command waits as it is told, says so once, and verifies."""
    # a read a second after two: the verify's calls outrun it even on a loaded machine, where they took
    # over half a second each and two a second (four at once) were never reached
    slow = Limits(read_rate_per_peer=1, read_burst_per_peer=2)
    with node_with_bots(tmp_path, ("a", "b", "c"), connect=True, limits=slow) as node:
        a = node.address
        code, out, err = run(capsys, "tournament", "create", "--format", "round-robin", "--bots", "a,b,c",
                             "--deals", "2", "--id", "open", "--address", a, "--json")
        assert code == 0, err
        wait_until_finished(capsys, a, "open")
        monkeypatch.delenv(ADMIN_ENV)
        anonymous = ("--address", a, "--data-dir", str(tmp_path / "no-credential-here"))
        code, out, err = run(capsys, "verify", "open", *anonymous)
    assert code == 0, out + err
    assert "12 deals of its 6 matches are the ones it dealt" in out
    assert err.count("the node asks to slow down") == 1, err
    assert "reads more than 1 a second, the limit per address" in err and "retry in" in err


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
    # nothing listens there: an argument that reached the node would fail otherwise
    code, out, err = run(capsys, "tournament", "create", "--format", "round-robin", "--bots", "alpha,beta",
                         "--address", "127.0.0.1:9", "--data-dir", str(tmp_path), *args)
    assert (code, out) == (1, "")
    [line] = err.splitlines()
    assert line.startswith("error: ") and message in line


@pytest.mark.security
@pytest.mark.parametrize("interval", ["0", "-1", "nan"])
def test_status_with_a_bad_interval_is_one_error_line(tmp_path: Path, capsys: Capsys, interval: str) -> None:
    code, _, err = run(capsys, "tournament", "status", "t1", "--watch", "--interval", interval,
                       "--address", "127.0.0.1:9", "--data-dir", str(tmp_path))
    assert code == 1 and len(err.strip().splitlines()) == 1
    assert "--interval must be more than 0" in err


def test_audit_prints_each_bot_s_agreement_before_and_after(
    tmp_path: Path, capsys: Capsys, admin: None,
) -> None:
    with node_with_bots(tmp_path, ("a", "b"), connect=True) as node:
        a = node.address
        code, _, err = run(capsys, "tournament", "create", "--format", "sprt", "--bots", "a,b",
                           "--deals", "2", "--max-pairs", "2", "--batch-pairs", "2", "--id", "aud",
                           "--address", a)
        assert code == 0, err
        wait_until_finished(capsys, a, "aud")
        code, out, err = run(capsys, "tournament", "audit", "aud", "--address", a)
        assert code == 0, err
        assert "agreement with perfect-information play" in out
        assert "8 of 8 deals audited" in out and "clock margin 5 ms" in out
        code, out, err = run(capsys, "tournament", "audit", "aud", "--address", a, "--json",
                             "--max-deals", "4", "--clock-margin-ms", "0")
        assert code == 0, err
    audit = json.loads(out)
    assert {b["bot"] for b in audit["bots"]} == {"a", "b"}
    assert (audit["deals_audited"], audit["deals_total"], audit["clock_margin_ms"]) == (4, 8, 0)
    assert all(not b["flagged"] for b in audit["bots"])


@pytest.mark.security
@pytest.mark.parametrize(("args", "message"), [
    (["--max-deals", "0"], "--max-deals must be a whole number from 1 to 20000, not 0"),
    (["--max-deals", "20001"], "--max-deals must be a whole number from 1 to 20000"),
    (["--clock-margin-ms", "-1"], "--clock-margin-ms must be a whole number from 0 to 60000"),
    (["--timeout", "nan"], "--timeout must be more than 0"),
])
def test_a_bad_audit_argument_is_one_error_line(tmp_path: Path, capsys: Capsys, args: list[str],
                                                message: str) -> None:
    code, out, err = run(capsys, "tournament", "audit", "t1", "--address", "127.0.0.1:9",
                         "--data-dir", str(tmp_path), *args)
    assert (code, out) == (1, "")
    [line] = err.splitlines()
    assert line.startswith("error: ") and message in line


def test_status_prints_the_sprt_s_elo_interval_and_pairs_set_aside(capsys: Capsys) -> None:
    """``tournament status`` of an sprt: the Elo estimate with its 95% interval (an end absent from the
    message: unbounded), never a bare +1000, and the pairs set aside; ``--json`` the same, null ends."""
    status = apb.TournamentStatus(spec=apb.TournamentSpec(tournament_id="s", format="sprt"), state="finished")
    status.sprt.CopyFrom(apb.SprtStatus(llr=3.3445, lower=-2.9957, upper=2.9957, decision="H1", pairs=8,
                                        pentanomial=[0, 0, 0, 0, 8], set_aside=3, elo=347.7, elo_low=-28.0))
    out = status_json(status)
    assert out["sprt"] == {"llr": 3.3445, "lower": -2.9957, "upper": 2.9957, "decision": "H1", "pairs": 8,
                           "pentanomial": [0, 0, 0, 0, 8], "set_aside": 3, "elo": 347.7, "elo_low": -28.0,
                           "elo_high": None}
    print_standings(out, argparse.Namespace())
    printed = capsys.readouterr().out
    assert "8 pairs (3 set aside: a leg with no card played), +348 Elo (95%: -28 to +inf)" in printed
    assert "1000" not in printed
