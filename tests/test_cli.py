"""The ``belote-arena`` command: replay and selfplay, good input and bad.

Most tests call :func:`arena.cli.main` in-process; the ``real_*`` tests run the
installed console script, as a user would. Bad input must give one
``error: ...`` line on stderr, exit 1 and no traceback.
"""

from __future__ import annotations

import io
import json
import random
import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from arena.cli import main
from arena.engine import Match, Ruleset, deal_record, match_record, replay_deal
from arena.engine import actions as A
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
