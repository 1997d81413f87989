"""``belote-arena analyse RECORD.json``: a bot author's own self-play analysed with no server, as the
node's ``match analyse`` prints it; bad input is one ``error:`` line; it loads neither grpc, redis nor the
referee."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

from arena.cli import main
from tests.test_layers import HEAVY, _loaded_after

QUICK = ["--samples", "2", "--no-par"]


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def selfplay(tmp_path: Path, deals: int = 2) -> Path:
    record = tmp_path / "match.json"
    code, _, _ = run("selfplay", "--ruleset", "coinche", "--deals", str(deals), "--seed", "5", "--players",
                     "heuristic,random", "--record", str(record))
    assert code == 0
    return record


def test_a_self_play_record_is_analysed_as_a_table(tmp_path: Path) -> None:
    record = selfplay(tmp_path)
    code, out, _ = run("analyse", str(record), *QUICK)
    assert code == 0
    assert "seats: 0 heuristic, 1 random, 2 heuristic, 3 random" in out
    assert "team 0 (heuristic): result" in out and "= luck" in out and "+ skill" in out
    assert "heuristic" in out and "random" in out and "Double-dummy values suppose" in out
    code, text, _ = run("analyse", str(record), *QUICK, "--json")
    a = json.loads(text)
    assert code == 0 and a["format"] == 1 and len(a["deals"]) == 2
    assert a["players"] == ["heuristic", "random", "heuristic", "random"]


def test_a_deal_record_is_a_match_of_one_deal(tmp_path: Path) -> None:
    record = json.loads(selfplay(tmp_path, 1).read_text())
    deal = {"ruleset": record["ruleset"], **record["deals"][0]}
    path = tmp_path / "deal.json"
    path.write_text(json.dumps(deal))
    code, text, _ = run("analyse", str(path), *QUICK, "--json")
    assert code == 0 and len(json.loads(text)["deals"]) == 1


def test_what_is_not_a_record_is_one_error_line(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    for body in ("[1, 2]", '{"a": 1}', '{"ruleset": "coinche", "deals": [{"dealer": 9}]}'):
        path.write_text(body)
        code, out, err = run("analyse", str(path), *QUICK)
        assert code == 1 and out == "" and err.startswith("error: ") and len(err.splitlines()) == 1, err


def test_analyse_loads_neither_grpc_nor_redis_nor_the_referee(tmp_path: Path) -> None:
    record = selfplay(tmp_path, 1)
    loaded = _loaded_after("import contextlib, io", "from arena.cli import main",
                           "with contextlib.redirect_stdout(io.StringIO()):",
                           f"    assert main(['analyse', {str(record)!r}, '--samples', '1', "
                           "'--no-par']) == 0")
    heavy = sorted(m for m in loaded if m.split(".")[0] in HEAVY or m.startswith(HEAVY))
    assert heavy == [], heavy[:8]


def test_bad_flags_are_one_error_line_before_anything_is_read(tmp_path: Path) -> None:
    for flags, said in ((["--samples", "-1"], "--samples must be a whole number from 0 to 1000"),
                        (["--worst", "-3"], "--worst must be a whole number from 0 to 1000")):
        code, out, err = run("analyse", str(tmp_path / "none.json"), *flags)
        assert (code, out) == (1, "") and err.startswith(f"error: {said}"), err
