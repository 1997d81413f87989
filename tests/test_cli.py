"""The ``belote-arena`` command: replay and selfplay, good input and bad.

Most tests call :func:`arena.cli.main` in-process; the ``real_*`` tests run the
installed console script, as a user would. Bad input must give one
``error: ...`` line on stderr, exit 1 and no traceback.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import re
import secrets
import stat
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from arena.cli import main
from arena.credentials import check_admin_credential, new_admin_token, node_admin_token
from arena.engine import Match, Ruleset, deal_record, match_record, replay_deal
from arena.engine import actions as A
from arena.referee.registry import new_token
from tests.cli_node import ADMIN, node_with_bots
from tests.scripts import script

OUTCOME_FIELDS = {"takers", "trump", "made", "tricks", "card_points", "belote", "declarations", "score",
                  "held_for_next_deal"}
SELFPLAY_FIELDS = {"ruleset", "deals", "seed", "players", "points", "winner", "taken", "made", "failed",
                   "capots", "belotes", "coinched", "litiges", "thrown_in", "decisions", "seconds",
                   "deals_per_second"}
TIMING_FIELDS = {"seconds", "deals_per_second"}

Record = dict[str, Any]
Capture = pytest.CaptureFixture[str]


# ----------------------------------------------------------------- helpers
def played_deal_record(preset: str, seed: int = 1) -> Record:
    deal = Match(Ruleset.from_spec(preset), seed).new_deal()
    rng = random.Random(seed)
    while not deal.is_over:
        deal.apply(rng.choice(deal.legal_actions()))
    rec: Record = json.loads(json.dumps(deal_record(deal)))
    return rec


def played_match_record(spec: str | dict[str, Any], deals: int, seed: int = 1) -> Record:
    match = Match(Ruleset.from_spec(spec), seed)
    rng = random.Random(seed)
    for _ in range(deals):
        deal = match.new_deal()
        while not deal.is_over:
            deal.apply(rng.choice(deal.legal_actions()))
        match.add(deal)
    rec: Record = json.loads(json.dumps(match_record(match)))
    return rec


def write(tmp_path: Path, content: Mapping[str, Any] | str, name: str = "record.json") -> str:
    path = tmp_path / name
    path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
    return str(path)


def run(capsys: Capture, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys: Capture, *args: str) -> Any:
    code, out, err = run(capsys, *args, "--json")
    assert (code, err) == (0, "")
    return json.loads(out)


def belote_arena() -> str:
    exe = script("belote-arena")
    assert exe, "the belote-arena console script is not installed: pip install -e ."
    return exe


def run_real(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([belote_arena(), *args], capture_output=True, text=True, timeout=60, check=False)


def assert_one_error_line(code: int, out: str, err: str, expected: str) -> None:
    assert code == 1
    assert "Traceback" not in err
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("error: ")
    assert expected in lines[0]


# ------------------------------------------------------------------ replay
@pytest.mark.parametrize("preset", ["classic", "coinche"])
def test_replay_prints_the_tricks_and_the_score_of_a_deal(capsys: Capture, tmp_path: Path,
                                                          preset: str) -> None:
    rec = played_deal_record(preset)
    code, out, err = run(capsys, "replay", write(tmp_path, rec))
    _, outcome = replay_deal(rec)
    assert (code, err) == (0, "")
    assert "trick 1: seat" in out and "trick 8: seat" in out
    assert f"score {outcome.score[0]}-{outcome.score[1]}" in out


@pytest.mark.parametrize("preset", ["classic", "classic-annonces", "club", "coinche"])
def test_replay_json_of_a_deal_prints_the_record_md_outcome(capsys: Capture, tmp_path: Path,
                                                            preset: str) -> None:
    rec = played_deal_record(preset)
    out = run_json(capsys, "replay", write(tmp_path, rec))
    assert out.keys() >= OUTCOME_FIELDS
    assert all(t.keys() == {"leader", "cards", "winner"} for t in out["tricks"])
    assert out == replay_deal(rec)[1].as_json()


def test_replay_json_of_a_thrown_in_deal(capsys: Capture, tmp_path: Path) -> None:
    deal = Match(Ruleset.from_spec("coinche"), 0).new_deal()
    while not deal.is_over:
        deal.apply(A.PASS)
    out = run_json(capsys, "replay", write(tmp_path, deal_record(deal)))
    assert out == {"thrown_in": True, "score": [0, 0]}


def test_replay_prints_every_deal_of_a_match_and_the_totals(capsys: Capture,
                                                            tmp_path: Path) -> None:
    rec = played_match_record({"preset": "classic", "deals": 3}, 3)
    code, out, err = run(capsys, "replay", write(tmp_path, rec))
    assert (code, err) == (0, "")
    assert "deal 1 (dealer seat" in out and "deal 3 (dealer seat" in out
    assert out.splitlines()[-1].startswith("match: ")


def test_replay_json_of_a_match_prints_deals_totals_and_winner(capsys: Capture,
                                                               tmp_path: Path) -> None:
    rec = played_match_record({"preset": "coinche", "deals": 4}, 4)
    out = run_json(capsys, "replay", write(tmp_path, rec))
    assert out.keys() == {"deals", "totals", "winner", "over"}
    assert len(out["deals"]) == 4
    assert out["totals"] == [sum(d["score"][t] for d in out["deals"]) for t in (0, 1)]
    assert out["winner"] in (0, 1, None)


def test_replay_reads_standard_input(capsys: Capture, monkeypatch: pytest.MonkeyPatch) -> None:
    rec = played_deal_record("coinche")
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(json.dumps(rec).encode())))  # as a real one
    assert run_json(capsys, "replay", "-") == replay_deal(rec)[1].as_json()


def test_real_replay_json_prints_the_outcome(tmp_path: Path) -> None:
    rec = played_deal_record("classic")
    done = run_real("replay", write(tmp_path, rec), "--json")
    assert (done.returncode, done.stderr) == (0, "")
    assert json.loads(done.stdout) == replay_deal(rec)[1].as_json()


def test_real_replay_of_a_match_record(tmp_path: Path) -> None:
    rec = played_match_record("club", 2)
    done = run_real("replay", write(tmp_path, rec), "--json")
    assert done.returncode == 0
    assert json.loads(done.stdout).keys() == {"deals", "totals", "winner", "over"}


# ---------------------------------------------------------------- selfplay
def test_selfplay_json_summary_has_its_fields(capsys: Capture) -> None:
    out = run_json(capsys, "selfplay", "--ruleset", "coinche", "--deals", "20", "--seed", "3")
    assert out.keys() == SELFPLAY_FIELDS
    assert out["deals"] == 20 and out["seed"] == 3 and out["players"] == ["heuristic", "random"]
    assert sum(out["taken"]) + out["thrown_in"] == 20


@pytest.mark.parametrize("ruleset", ["classic", "club", '{"preset": "coinche", "must_undertrump": true}'])
def test_selfplay_with_the_same_seed_scores_the_same_points(capsys: Capture,
                                                            ruleset: str) -> None:
    args = ("selfplay", "--ruleset", ruleset, "--deals", "30", "--seed", "11",
            "--players", "random,heuristic")
    first, again = run_json(capsys, *args), run_json(capsys, *args)
    assert {k: v for k, v in first.items() if k not in TIMING_FIELDS} == {
        k: v for k, v in again.items() if k not in TIMING_FIELDS
    }


def test_selfplay_with_another_seed_plays_other_deals(capsys: Capture) -> None:
    summaries = [run_json(capsys, "selfplay", "--deals", "30", "--seed", str(seed)) for seed in range(4)]
    assert len({(tuple(s["points"]), s["decisions"]) for s in summaries}) > 1


def test_selfplay_prints_points_per_team(capsys: Capture) -> None:
    code, out, err = run(capsys, "selfplay", "--ruleset", "classic", "--deals", "5", "--seed", "2")
    assert (code, err) == (0, "")
    assert "points" in out and "team 0" in out and "deals/s" in out


def test_selfplay_record_replays_to_the_same_points(capsys: Capture, tmp_path: Path) -> None:
    path = str(tmp_path / "match.json")
    summary = run_json(capsys, "selfplay", "--ruleset", "classic-annonces", "--deals", "12", "--seed", "5",
                       "--record", path)
    assert summary["record"] == path
    replayed = run_json(capsys, "replay", path)
    assert replayed["totals"] == summary["points"]
    assert replayed["winner"] == summary["winner"]


def test_real_selfplay_is_deterministic() -> None:
    args = ("selfplay", "--ruleset", "coinche", "--deals", "25", "--seed", "9", "--json")
    first, again = (json.loads(run_real(*args).stdout) for _ in range(2))
    assert first["points"] == again["points"] and first["decisions"] == again["decisions"]


# --------------------------------------------------------------- bad input
def spoiled(preset: str, spoil: Callable[[Record], object]) -> Callable[[], str]:
    """A deal record of the core fields only (no deck: docs/records.md#records-without-deck), spoiled,
    as file text."""
    def make() -> str:
        rec = {k: v for k, v in played_deal_record(preset).items() if k not in ("deck", "packets")}
        spoil(rec)
        return json.dumps(rec)
    return make


def set_card(hand: int, text: str | Callable[[Record], str]) -> Callable[[Record], None]:
    def spoil(rec: Record) -> None:
        rec["hands"][hand][0] = text(rec) if callable(text) else text
    return spoil


def set_field(field: str, value: object) -> Callable[[Record], None]:
    return lambda rec: rec.__setitem__(field, value)


BAD_RECORDS: dict[str, tuple[Callable[[], str], str]] = {
    "malformed card text": (spoiled("classic", set_card(0, "11H")), "malformed card '11H'"),
    "a hand of seven cards": (spoiled("coinche", lambda r: r["hands"][2].pop()), "each hand holds 8 cards"),
    "a card twice": (spoiled("coinche", set_card(1, lambda r: r["hands"][3][0])), "in two hands"),
    "unknown preset": (spoiled("classic", set_field("ruleset", "bridge")), "unknown preset 'bridge'"),
    "unknown option": (spoiled("coinche", set_field("ruleset", {"preset": "coinche", "x": 1})),
                       "unknown ruleset option 'x'"),
    "a bid out of turn": (spoiled("coinche", set_field("bids", ["100H", "pass", "coinche"])),
                          "bids[2] (action 2): illegal action 'coinche' by seat"),
    "a coinche deal under a classic preset": (spoiled("coinche", set_field("ruleset", "classic")),
                                              "a classic deal needs its 'retourne'"),
    "a hand that is not a list": (spoiled("coinche", lambda r: r["hands"].__setitem__(0, None)),
                                  "hands[0] must be a list"),
    "an action after the end": (spoiled("classic", lambda r: r["plays"].append("AS")),
                                "after the end of the deal"),
    "a record that is not an object": (lambda: "[1, 2]", "a record is a JSON object"),
    "invalid JSON": (lambda: '{"ruleset": "classic",', "is not valid JSON"),
}


@pytest.mark.parametrize("make, expected", BAD_RECORDS.values(), ids=BAD_RECORDS.keys())
def test_replay_of_a_bad_record_prints_one_error_line(capsys: Capture, tmp_path: Path,
                                                      make: Callable[[], str], expected: str) -> None:
    assert_one_error_line(*run(capsys, "replay", write(tmp_path, make())), expected)


@pytest.mark.parametrize("make, expected", BAD_RECORDS.values(), ids=BAD_RECORDS.keys())
def test_real_replay_of_a_bad_record_prints_one_error_line(tmp_path: Path, make: Callable[[], str],
                                                           expected: str) -> None:
    done = run_real("replay", write(tmp_path, make()), "--json")
    assert_one_error_line(done.returncode, done.stdout, done.stderr, expected)


def test_replay_of_a_missing_file_prints_one_error_line(capsys: Capture, tmp_path: Path) -> None:
    missing = str(tmp_path / "nowhere.json")
    assert_one_error_line(*run(capsys, "replay", missing), f"cannot read {missing}")


def test_real_replay_of_a_missing_file_prints_one_error_line(tmp_path: Path) -> None:
    done = run_real("replay", str(tmp_path / "nowhere.json"))
    assert_one_error_line(done.returncode, done.stdout, done.stderr, "No such file")


def test_replay_of_a_match_with_a_deal_after_the_end_prints_one_error_line(
    capsys: Capture, tmp_path: Path,
) -> None:
    rec = played_match_record({"preset": "coinche", "deals": 1}, 1)
    rec["deals"].append(rec["deals"][0])
    assert_one_error_line(*run(capsys, "replay", write(tmp_path, rec)), "the match was decided after 1 deals")


BAD_SELFPLAY: dict[str, tuple[list[str], str]] = {
    "unknown preset": (["--ruleset", "bridge"], "unknown preset 'bridge'"),
    "unknown option": (["--ruleset", '{"preset": "classic", "trumps": 5}'], "unknown ruleset option"),
    "bad option value": (["--ruleset", '{"preset": "coinche", "redeal_low_hand": true}'], "redeal_low_hand"),
    "ruleset not JSON": (["--ruleset", '{"preset": '], "--ruleset is not valid JSON"),
    "unknown player": (["--players", "random,alphabelote"], "--players takes two of"),
    "no deals": (["--deals", "0"], "--deals must be at least 1"),
    "unwritable record": (["--record", "/nonexistent-dir/match.json"], "cannot write /nonexistent-dir/"),
}


@pytest.mark.parametrize("args, expected", BAD_SELFPLAY.values(), ids=BAD_SELFPLAY.keys())
def test_selfplay_with_bad_arguments_prints_one_error_line(capsys: Capture, args: list[str],
                                                           expected: str) -> None:
    assert_one_error_line(*run(capsys, "selfplay", "--deals", "2", *args), expected)


def test_real_selfplay_with_an_unknown_preset_prints_one_error_line() -> None:
    done = run_real("selfplay", "--ruleset", "bridge", "--deals", "2")
    assert_one_error_line(done.returncode, done.stdout, done.stderr, "unknown preset 'bridge'")


def test_a_usage_error_exits_2(capsys: Capture) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["replay"])
    assert exit_.value.code == 2
    assert "usage:" in capsys.readouterr().err


# ------------------------------------------------------- arguments checked at the door
BAD_ARGUMENTS: dict[str, tuple[list[str], str]] = {
    "serve: a port above 65535": (["serve", "--listen", "127.0.0.1:70000"], "--listen must be HOST:PORT"),
    "serve: a negative port": (["serve", "--listen", "127.0.0.1:-1"], "with a port from 0 to 65535"),
    "serve: no port": (["serve", "--listen", "localhost"], "--listen must be HOST:PORT"),
    "serve: no host": (["serve", "--listen", ":50051"], "--listen must be HOST:PORT"),
    "serve: an HTTP address with no port": (["serve", "--http", "localhost"], "--http must be HOST:PORT"),
    "demo: an HTTP port above 65535": (["demo", "--http", "127.0.0.1:70000"], "--http must be HOST:PORT"),
    "serve: advertised port 0": (["serve", "--advertise", "node1:0"], "--advertise must be HOST:PORT"),
    "serve: no match slot": (["serve", "--capacity", "0"], "--capacity must be a whole number from 1"),
    "serve: negative capacity": (["serve", "--capacity", "-4"], "--capacity must be"),
    "serve: a ladder share above 1": (["serve", "--ladder-share", "1.5"], "--ladder-share must be from 0 to"),
    "serve: a negative ladder share": (["serve", "--ladder-share", "-0.1"], "--ladder-share must be from 0"),
    "serve: a ladder share that is not a number": (["serve", "--ladder-share", "nan"],
                                                   "--ladder-share must be from 0 to 1, not nan"),
    "serve: no analysis budget": (["serve", "--analysis-budget", "0"],
                                  "--analysis-budget is a share of one core"),
    "serve: an analysis budget above a core": (["serve", "--analysis-budget", "1.5"], "at most 1, not 1.5"),
    "serve: an analysis budget that is not a number": (["serve", "--analysis-budget", "nan"], "not nan"),
    "serve: a budget for analyses and none": (["serve", "--analysis-budget", "0.2", "--no-analyses"],
                                             "--no-analyses none: give one or the other"),
    "serve: no version test a day": (["serve", "--version-tests-a-day", "0"],
                                     "--version-tests-a-day must be a whole number from 1 to 1000"),
    "serve: no version test per owner": (["serve", "--version-tests-per-owner", "0"],
                                         "--version-tests-per-owner must be a whole number from 1"),
    "serve: a zero deadline": (["serve", "--deadline", "0"], "--deadline must be more than 0"),
    "serve: a negative deadline": (["serve", "--deadline", "-1"], "--deadline must be more than 0"),
    "serve: a deadline that is not a number": (["serve", "--deadline", "nan"], "not nan"),
    "serve: an endless deadline": (["serve", "--deadline", "inf"], "up to 600 seconds, not inf"),
    "serve: a negative time bank": (["serve", "--time-bank", "-0.5"], "--time-bank must be from 0"),
    "serve: a negative grace": (["serve", "--grace", "-1"], "--grace must be from 0"),
    "serve: no strike allowed": (["serve", "--max-strikes", "0"], "--max-strikes must be a whole number"),
    "serve: a zero lease": (["serve", "--lease", "0"], "--lease must be more than 0"),
    "serve: a negative drain": (["serve", "--drain", "-1"], "--drain must be from 0"),
    "serve: no absent timeout": (["serve", "--absent-timeout", "0"], "--absent-timeout must be more than 0"),
    "serve: no Hello time": (["serve", "--hello-timeout", "0"], "--hello-timeout must be more than 0"),
    "serve: negative refusal hold": (["serve", "--refusal-hold", "-1"], "--refusal-hold must be"),
    "serve: no bot stream allowed": (["serve", "--max-streams", "0"], "--max-streams must be a whole number"),
    "serve: no spectator of a match allowed": (["serve", "--max-watchers-per-match", "-1"],
                                               "--max-watchers-per-match must be a whole number"),
    "serve: no spectator per address allowed": (["serve", "--max-watchers-per-address", "0"],
                                                "--max-watchers-per-address must be a whole number"),
    "serve: no short call per address allowed": (["serve", "--max-calls-per-address", "0"],
                                                 "--max-calls-per-address must be a whole number"),
    "serve: no read a second allowed": (["serve", "--read-rate-per-address", "0"],
                                        "--read-rate-per-address must be a whole number"),
    "serve: no read at once allowed": (["serve", "--read-burst-per-address", "0"],
                                       "--read-burst-per-address must be a whole number"),
    "serve: no send timeout": (["serve", "--send-timeout", "0"], "--send-timeout must be more than 0"),
    "serve: a certificate without its key": (["serve", "--tls-cert", "cert.pem"],
                                             "--tls-cert and --tls-key go together"),
    "serve: an HTTP certificate without its key": (
        ["serve", "--http", "127.0.0.1:0", "--http-tls-cert", "c.pem"],
        "--http-tls-cert and --http-tls-key go together"),
    "serve: an HTTP certificate without --http": (
        ["serve", "--http-tls-cert", "c.pem", "--http-tls-key", "k.pem"],
        "--http-tls-cert is for the web pages"),
    "serve: an origin with a path": (["serve", "--http", "127.0.0.1:0", "--http-origin", "https://a.org/x"],
                                     "--http-origin must be http(s)://HOST[:PORT]"),
    "serve: an origin without a scheme": (["serve", "--http", "127.0.0.1:0", "--http-origin", "a.org"],
                                          "--http-origin must be"),
    "serve: no HTTP head time": (["serve", "--http-head-timeout", "0"],
                                 "--http-head-timeout must be more than 0"),
    "serve: no HTTP connection per address": (["serve", "--http-max-connections-per-address", "0"],
                                              "--http-max-connections-per-address must be a whole number"),
    "serve: sentinels without the primary's name": (["serve", "--redis-sentinel", "127.0.0.1:9"],
                                                     "--redis-sentinel needs --redis-master NAME"),
    "serve: a primary's name without sentinels": (["serve", "--redis-master", "arena"],
                                                  "--redis-master names the primary the sentinels know"),
    "serve: a Redis URL and sentinels": (
        ["serve", "--redis", "redis://127.0.0.1:9/0", "--redis-sentinel", "127.0.0.1:9",
         "--redis-master", "a"],
        "--redis and --redis-sentinel: give one"),
    "serve: a sentinel port above 65535": (["serve", "--redis-sentinel", "h:70000", "--redis-master", "a"],
                                           "a sentinel's port is 1-65535"),
    "serve: a primary's name with a space": (["serve", "--redis-sentinel", "h:1", "--redis-master", "a b"],
                                             "the primary's name must be 1 to 64"),
    "serve: replicas waited for on the embedded queue": (["serve", "--redis-wait-replicas", "1"],
                                                         "--redis-wait-replicas is for Redis with replicas"),
    "serve: negative replicas waited for": (["serve", "--redis", "redis://127.0.0.1:9/0",
                                             "--redis-wait-replicas", "-1"],
                                            "--redis-wait-replicas must be a whole number from 0 to 16"),
    "serve: no time to wait for replicas": (["serve", "--redis", "redis://127.0.0.1:9/0",
                                             "--redis-wait-timeout", "0"],
                                            "--redis-wait-timeout must be more"),
    "bot revoke: a bad name": (["bot", "revoke", "a b"], "bad bot name 'a b'"),
    "demo: no round": (["demo", "--rounds", "0"], "--rounds must be a whole number from 1 to 100"),
    "demo: too many rounds": (["demo", "--rounds", "101"], "--rounds must be a whole number from 1 to 100"),
    "demo: negative deals": (["demo", "--deals", "-3"], "--deals must be a whole number from 0"),
    "match start: negative deals": (["match", "start", "alpha", "beta", "--deals", "-1"],
                                    "--deals must be a whole number from 0 to 1000"),
    "match start: too many deals": (["match", "start", "alpha", "beta", "--deals", "1001"],
                                    "--deals must be a whole number from 0 to 1000"),
    "match start: a bad bot name": (["match", "start", "alpha", "be ta"], "bad bot name 'be ta'"),
    "bot register: a bad name": (["bot", "register", "a/b"], "bad bot name 'a/b'"),
    "bot register: a bad owner": (["bot", "register", "a", "--owner", "no one"], "--owner"),
    "bot list: an owner": (["bot", "list", "--owner", "alice"], "--owner is for bot register and bot invite"),
    "tournament create: a version test's id": (
        ["tournament", "create", "--id", "vt:alpha:9:1", "--format", "round-robin", "--bots", "a,b"],
        "are the version tests'"),
    "bot register: a name too long": (["bot", "register", "x" * 65], "1 to 64 letters"),
    "selfplay: negative deals": (["selfplay", "--deals", "-5"], "--deals must be at least 1"),
}


@pytest.mark.security
@pytest.mark.parametrize("args, expected", BAD_ARGUMENTS.values(), ids=BAD_ARGUMENTS.keys())
def test_a_bad_argument_is_one_error_line_before_anything_starts(
    capsys: Capture, tmp_path: Path, args: list[str], expected: str,
) -> None:
    # the data folder and the address are never used: the command stops at its arguments
    where = ["--data-dir", str(tmp_path / "data")] if args[0] in ("serve", "demo") else []
    if args[0] in ("match", "bot"):
        where = ["--address", "127.0.0.1:9"]  # nothing listens there
    assert_one_error_line(*run(capsys, *args, *where), expected)
    assert not (tmp_path / "data").exists()


@pytest.mark.security
@pytest.mark.parametrize("args, expected", [
    (["serve", "--listen", "127.0.0.1:70000"], "port from 0 to 65535"),
    (["match", "start", "alpha", "beta", "--deals", "-1"], "--deals must be a whole number from 0"),
], ids=["serve with a port out of range", "match start with negative deals"])
def test_real_command_with_a_bad_argument_prints_one_error_line(
    tmp_path: Path, args: list[str], expected: str,
) -> None:
    done = run_real(*args, *(["--data-dir", str(tmp_path)] if args[0] == "serve" else []))
    assert_one_error_line(done.returncode, done.stdout, done.stderr, expected)


# ----------------------------------------------------------- admin credentials
WEAK_ADMIN = {
    "one character": "x",
    "a word": "adm_wrong",
    "short, as tests used to have": "adm_cli-tests-credential",
    "long but one character repeated": "adm_" + "a" * 60,
    "31 hex digits": "0123456789abcdef0123456789abcde",
    "38 decimal digits": "01234567890123456789012345678901234567",
}
STRONG_ADMIN = {
    "made by `admin token`": new_admin_token(),
    "the k8s section's openssl line": "adm_" + secrets.token_hex(32),
    "32 hex digits": "0123456789abcdef" + secrets.token_hex(8),
    "39 decimal digits": "0123456789" + "".join(secrets.choice("0123456789") for _ in range(29)),
    "a bot token's shape": new_token("adm"),
}


@pytest.mark.security
@pytest.mark.parametrize("weak", WEAK_ADMIN.values(), ids=WEAK_ADMIN.keys())
def test_a_node_refuses_a_weak_admin_credential_saying_what_it_needs(
    capsys: Capture, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, weak: str,
) -> None:
    argv = ["serve", "--listen", "127.0.0.1:0", "--data-dir", str(tmp_path / "data")]
    monkeypatch.setenv("BELOTE_ADMIN_TOKEN", weak)
    code, out, err = run(capsys, *argv)
    assert_one_error_line(code, out, err, "the admin credential in $BELOTE_ADMIN_TOKEN is too weak")
    assert "128 random bits or more, so at least 32 characters, 10 or more of them different" in err
    assert "`belote-arena admin token --file admin.token`" in err
    monkeypatch.delenv("BELOTE_ADMIN_TOKEN")
    (tmp_path / "weak.token").write_text(weak + "\n")
    code, out, err = run(capsys, *argv, "--admin-token-file", str(tmp_path / "weak.token"))
    assert_one_error_line(code, out, err, f"the admin credential in {tmp_path / 'weak.token'} is too weak")
    assert not (tmp_path / "data").exists()  # refused before the node made anything


@pytest.mark.security
@pytest.mark.parametrize("strong", STRONG_ADMIN.values(), ids=STRONG_ADMIN.keys())
def test_a_strong_admin_credential_passes(strong: str) -> None:
    assert check_admin_credential(strong, "the test") == strong


@pytest.mark.security
def test_a_command_refuses_a_weak_admin_credential_before_it_calls_a_node(
    capsys: Capture, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("BELOTE_ADMIN_TOKEN", "x")
    for argv in (["bot", "register", "alpha"], ["match", "start", "alpha", "beta"],
                 ["tournament", "create", "--format", "round-robin", "--bots", "a,b"]):
        code, out, err = run(capsys, *argv, "--address", "127.0.0.1:9")  # nothing listens there
        assert_one_error_line(code, out, err, "the admin credential in $BELOTE_ADMIN_TOKEN is too weak")


def test_admin_token_prints_a_fresh_credential_a_node_accepts(capsys: Capture) -> None:
    made = [run(capsys, "admin", "token") for _ in range(2)]
    assert [(code, err) for code, _, err in made] == [(0, ""), (0, "")]
    tokens = [out.strip() for _, out, _ in made]
    assert tokens[0] != tokens[1] and all(check_admin_credential(t, "the output") == t for t in tokens)


def test_admin_token_file_is_new_and_its_user_s_only(
    capsys: Capture, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = tmp_path / "admin.token"
    code, out, err = run(capsys, "admin", "token", "--file", str(path))
    assert (code, err) == (0, "")
    token = path.read_text().strip()
    assert token not in out and f"--admin-token-file {path}" in out
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    monkeypatch.delenv("BELOTE_ADMIN_TOKEN", raising=False)
    assert node_admin_token(str(path), None) == (token, str(path))  # what a node takes
    code, out, err = run(capsys, "admin", "token", "--file", str(path))  # never over a credential in use
    assert_one_error_line(code, out, err, f"{path} exists: it may hold a credential in use")
    assert path.read_text().strip() == token


# ------------------------------------------------------------ bots and matches
@pytest.fixture
def admin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BELOTE_ADMIN_TOKEN", ADMIN)


@pytest.mark.security
def test_bot_register_keeps_the_token_in_a_file_of_its_user_s_only_and_names_the_shipped_bot(
    capsys: Capture, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, admin: None,
) -> None:
    monkeypatch.chdir(tmp_path)
    with node_with_bots(tmp_path, bots=()) as node:
        code, out, err = run(capsys, "bot", "register", "heuristic-b", "--address", node.address)
        assert (code, err) == (0, "")
        token = (tmp_path / "heuristic-b.token").read_text().strip()
        assert token.startswith("bt_") and token not in out  # on no screen, in no shell history
        assert stat.S_IMODE((tmp_path / "heuristic-b.token").stat().st_mode) == 0o600
        assert out.splitlines()[-1] == ("run it: python -m belote_bot.bots.heuristic --token-file "
                                        f"heuristic-b.token --address {node.address}")

        code, out, err = run(capsys, "bot", "register", "my-bot", "--address", node.address,
                             "--token-file", "secrets.tok")
        assert (code, err) == (0, "") and (tmp_path / "secrets.tok").is_file()
        assert "your bot reads it from there: run(MyBot()" in out
        assert out.splitlines()[-1].startswith("run it: python -m belote_bot.bots.random --token-file "
                                               "secrets.tok")

        # a file already there is never written over: checked before the node makes a token
        code, out, err = run(capsys, "bot", "register", "other", "--address", node.address,
                             "--token-file", "secrets.tok")
        assert_one_error_line(code, out, err, "secrets.tok exists: it may hold a credential in use")
        listed = run_json(capsys, "bot", "list", "--address", node.address)
        assert sorted(b["name"] for b in listed) == ["heuristic-b", "my-bot"]

        # programs: the token in the JSON and no file, unless a file is asked for
        reply = run_json(capsys, "bot", "register", "gamma", "--address", node.address)
        assert reply["token"].startswith("bt_") and not (tmp_path / "gamma.token").exists()
        reply = run_json(capsys, "bot", "register", "delta", "--address", node.address,
                         "--token-file", "d.tok")
        assert reply == {"bot_id": reply["bot_id"], "name": "delta", "token_file": "d.tok"}


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="writes where no one may: /proc")
def test_a_token_that_cannot_be_kept_in_its_file_is_shown_rather_than_lost(
    capsys: Capture, tmp_path: Path, admin: None,
) -> None:
    with node_with_bots(tmp_path, bots=()) as node:
        # the folder exists, so the command registers the bot; no file can be made there, not even by root
        code, out, err = run(capsys, "bot", "register", "alpha", "--address", node.address,
                             "--token-file", "/proc/alpha.token")
        assert_one_error_line(code, out, err, "cannot write the token of alpha to /proc/alpha.token")
        token = re.search(r"its token, shown this once, is (bt_\S+)$", err.strip())
        assert token, err
        (tmp_path / "kept.token").write_text(token.group(1))  # it is the bot's: it rotates with it
        assert run(capsys, "bot", "rotate", "--token-file", str(tmp_path / "kept.token"),
                   "--address", node.address)[0] == 0


@pytest.mark.security
def test_bot_rotate_replaces_the_token_in_its_file(
    capsys: Capture, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, admin: None,
) -> None:
    monkeypatch.chdir(tmp_path)
    with node_with_bots(tmp_path, bots=()) as node:
        assert run(capsys, "bot", "register", "alpha", "--address", node.address)[0] == 0
        old = (tmp_path / "alpha.token").read_text()
        code, out, err = run(capsys, "bot", "rotate", "--token-file", "alpha.token",
                             "--address", node.address)
        assert (code, err) == (0, "")
        new = (tmp_path / "alpha.token").read_text()
        assert new != old and new.strip() not in out
        assert stat.S_IMODE((tmp_path / "alpha.token").stat().st_mode) == 0o600
        # the file's token is the bot's now: it rotates again; the old one is refused
        assert run(capsys, "bot", "rotate", "--token-file", "alpha.token", "--address", node.address)[0] == 0
        (tmp_path / "old.token").write_text(old)
        code, out, err = run(capsys, "bot", "rotate", "--token-file", "old.token", "--address", node.address)
        assert_one_error_line(code, out, err, "UNAUTHENTICATED")


SEATS_LINE = re.compile(r"seats: 0 (\S+), 1 (\S+), 2 (\S+), 3 (\S+) \(team 0: (\S+), team 1: (\S+)\)")


def test_match_start_watch_says_who_sits_where_and_names_them_in_every_line(
    capsys: Capture, tmp_path: Path, admin: None,
) -> None:
    with node_with_bots(tmp_path, bots=("north", "east", "south", "west"), connect=True) as node:
        code, out, err = run(capsys, "match", "start", "north", "east", "--ruleset", "coinche",
                             "--deals", "1", "--watch", "--address", node.address)
        assert (code, err) == (0, "")
        match_id, seated, *events, result = out.splitlines()
        assert SEATS_LINE.fullmatch(seated).groups() == (  # type: ignore[union-attr]
            "north", "east", "north", "east", "north", "east"), seated
        actions = [e for e in events if e.startswith("  seat ")]
        assert actions and all(re.match(r"  seat ([0-3]) \((north|east)\): \S", e) for e in actions), events
        assert all(("north" if int(e[7]) % 2 == 0 else "east") in e for e in actions)
        assert re.fullmatch(r"match finished: \[-?\d+, -?\d+\], (team 0 \(north\)|team 1 \(east\)) wins"
                            r"|match finished: \[-?\d+, -?\d+\], no winner", result), result

        # partners that are different bots: a side is named after both
        code, out, err = run(capsys, "match", "start", "north", "east", "south", "west", "--deals", "1",
                             "--address", node.address)
        assert (code, err) == (0, "")
        match_id, seated = out.splitlines()
        assert seated == "seats: 0 north, 1 east, 2 south, 3 west (team 0: north+south, team 1: east+west)"
        code, out, err = run(capsys, "match", "watch", match_id, "--address", node.address)
        assert (code, err) == (0, ""), err
        assert out.splitlines()[0] == seated
        assert re.search(r"(team 0 \(north\+south\)|team 1 \(east\+west\)) wins|no winner", out), out


def test_replay_names_the_bots_of_an_arena_record_and_of_a_selfplay_record(
    capsys: Capture, tmp_path: Path, admin: None,
) -> None:
    with node_with_bots(tmp_path, bots=("alpha", "beta"), connect=True) as node:
        code, out, _ = run(capsys, "match", "start", "alpha", "beta", "--deals", "2", "--watch",
                           "--address", node.address)
        match_id = out.splitlines()[0]
        record = run(capsys, "match", "record", match_id, "--address", node.address)[1]
    code, out, err = run(capsys, "replay", write(tmp_path, record))
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == "seats: 0 alpha, 1 beta, 2 alpha, 3 beta (team 0: alpha, team 1: beta)"
    assert re.match(r"deal 1 \(dealer seat [0-3], (alpha|beta)\):", lines[1]), lines[1]
    assert re.search(r"  takers: team [01] \((alpha|beta)\)", out) or "thrown in" in out
    assert re.search(r"  trick 1: seat ([0-3]) \((alpha|beta)\) leads .* -> seat [0-3] \((alpha|beta)\)", out)
    winner = json.loads(record)["result"]["winner"]
    assert lines[-1].endswith(f"team {winner} ({['alpha', 'beta'][winner]}) wins" if winner is not None
                              else "not decided"), lines[-1]

    path = tmp_path / "selfplay.json"
    assert run(capsys, "selfplay", "--deals", "1", "--players", "heuristic,random",
               "--record", str(path))[0] == 0
    out = run(capsys, "replay", str(path))[1]
    assert out.splitlines()[0] == ("seats: 0 heuristic, 1 random, 2 heuristic, 3 random "
                                   "(team 0: heuristic, team 1: random)")


@contextlib.contextmanager
def random_bot(address: str, token: str, after: float = 0.0) -> Iterator[None]:
    """``python -m belote_bot.bots.random`` started ``after`` seconds from now; stopped on exit."""
    argv = (f"sleep {after} && exec {sys.executable} -m belote_bot.bots.random --address {address} "
            "--log-level WARNING")
    bot = subprocess.Popen(["bash", "-c", argv], env={**os.environ, "BELOTE_TOKEN": token},
                           stdin=subprocess.DEVNULL)
    try:
        yield
    finally:
        bot.terminate()
        bot.wait(10)


def test_match_start_waits_for_a_bot_that_is_still_connecting(
    capsys: Capture, tmp_path: Path, admin: None,
) -> None:
    with (node_with_bots(tmp_path, bots=("alpha", "beta")) as node,
          random_bot(node.address, node.tokens["alpha"], after=1.5),
          random_bot(node.address, node.tokens["beta"])):
        code, out, err = run(capsys, "match", "start", "alpha", "beta", "--deals", "1",
                             "--address", node.address)
    assert code == 0, err
    assert re.fullmatch(r"m-[0-9a-f]+", out.splitlines()[0]), out
    assert err.count("waiting up to 10 s for it to connect") == 1, err
    assert "is not connected to this node" in err


def test_match_start_gives_up_on_a_bot_that_does_not_connect(
    capsys: Capture, tmp_path: Path, admin: None, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("arena.cli.matches.CONNECT_WAIT", 0.5)
    with node_with_bots(tmp_path, bots=("alpha", "beta")) as node:
        code, out, err = run(capsys, "match", "start", "alpha", "beta", "--address", node.address)
    assert code == 1 and out == ""
    assert err.count("waiting up to 0.5 s for it to connect") == 1, err  # the patched wait, not 10 s
    assert err.splitlines()[-1].startswith("error: FAILED_PRECONDITION: bot alpha is not connected"), err


def test_serve_takes_sentinels_from_the_environment_and_refuses_two_ways_to_redis(
    capsys: Capture, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    data = ["--data-dir", str(tmp_path / "data")]
    monkeypatch.setenv("BELOTE_REDIS", "redis://127.0.0.1:9/0")
    monkeypatch.setenv("BELOTE_REDIS_SENTINEL", "127.0.0.1:9")
    assert_one_error_line(*run(capsys, "serve", *data),
                          "$BELOTE_REDIS and $BELOTE_REDIS_SENTINEL are both set")
    monkeypatch.delenv("BELOTE_REDIS")
    assert_one_error_line(*run(capsys, "serve", *data), "--redis-sentinel needs --redis-master NAME")
    monkeypatch.setenv("BELOTE_REDIS_MASTER", "arena")

    def serve(*argv: str) -> tuple[int, str]:
        """A node that goes as far as its queue (and its logging set up): in a process of its own, so
        that its log handler, on a stderr this test captures, does not outlive the test."""
        done = subprocess.run([belote_arena(), "serve", "--listen", "127.0.0.1:0", *data, *argv],
                              capture_output=True, text=True, timeout=60, check=False)
        return done.returncode, done.stderr

    # nothing answers there: the node stops at its queue, naming the sentinels it asked
    code, err = serve()
    assert code == 1
    assert err.splitlines()[-1].startswith("error: no Redis at sentinel://127.0.0.1:9/arena: "), err
    # a flag wins over the environment
    code, err = serve("--redis", "redis://127.0.0.1:9/5")
    assert code == 1 and err.splitlines()[-1].startswith("error: no Redis at redis://127.0.0.1:9/5: "), err


@pytest.mark.security
def test_serve_logs_which_queue_it_uses_never_the_redis_password(tmp_path: Path) -> None:
    def serve(url: str, how: str) -> str:
        argv = ["serve", "--listen", "127.0.0.1:0", "--data-dir", str(tmp_path / "data")]
        env = {k: v for k, v in os.environ.items() if not k.startswith("BELOTE_")}
        if how == "flag":
            argv += ["--redis", url]
        else:
            env["BELOTE_REDIS"] = url
        done = subprocess.run([belote_arena(), *argv], capture_output=True, text=True, timeout=60, env=env,
                              check=False)
        assert done.returncode == 1 and "s3cret" not in done.stdout + done.stderr, done.stderr
        last = done.stderr.splitlines()[-1]  # nothing listens there: the node stops at its queue
        assert last.startswith("error: ") and "127.0.0.1:9" in last, done.stderr
        return done.stderr

    logged = serve("redis://:s3cret-pw@127.0.0.1:9/3", "flag")
    assert "arena.node: queue: Redis at redis://:***@127.0.0.1:9/3, its keys under belote-arena:" in logged
    logged = serve("redis://127.0.0.1:9/0?password=s3cret-pw", "env")
    assert "arena.node: queue: Redis at redis://127.0.0.1:9/0?password=***, its keys under" in logged


def test_serve_s_default_capacity_is_the_node_s() -> None:
    """``serve --capacity`` gives its default as a number (replay and selfplay must not load arena.node
    to build the parser): it must be the node's own default, DEFAULT_CAPACITY, whose comment says why."""
    from arena.cli import build_parser
    from arena.node import DEFAULT_CAPACITY
    from arena.node.run import NodeSettings
    from arena.node.worker import Worker

    args = build_parser().parse_args(["serve"])
    assert args.capacity == DEFAULT_CAPACITY == NodeSettings().capacity
    assert (Worker.__init__.__kwdefaults__ or {}).get("capacity") == DEFAULT_CAPACITY
