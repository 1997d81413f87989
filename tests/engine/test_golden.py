"""Golden records: hand-made deals and matches whose outcome was computed by hand from docs/rules.md.

Each file in ``golden/`` holds ``name``, ``rule`` (the rule of docs/rules.md it checks, and the reading
where the sources need one), ``by_hand`` (the arithmetic, trick by trick), ``record`` (docs/records.md) and
``expected``: the replay output fields of docs/records.md#deal-outcome (``takers``, ``trump``, ``made``,
``card_points``, ``belote``, ``declarations``, ``score``, ``held_for_next_deal``; ``thrown_in``;
for a match ``deals``, ``totals`` and ``winner``), plus ``trick_winners`` (the seat winning each
trick) and ``held_received`` where a deal awards held litige points.

A golden file changes only when its hand computation was wrong, never to follow the engine.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from arena.engine.errors import RecordError
from arena.engine.record import match_outcome_json, replay_deal, replay_match

GOLDEN_DIR = Path(__file__).parent / "golden"
GOLDEN_FILES = sorted(GOLDEN_DIR.glob("*.json"))

#: the outcome fields (docs/records.md#deal-outcome) every played deal's expectation must state
CORE_FIELDS = ("takers", "trump", "made", "card_points", "belote", "declarations", "score",
               "held_for_next_deal")


def _load(path: Path) -> dict[str, Any]:
    golden: dict[str, Any] = json.loads(path.read_text())
    return golden


def _check_deal(expected: dict[str, Any], actual: dict[str, Any], where: str) -> None:
    if expected.get("thrown_in"):
        assert actual == {"thrown_in": True, "score": [0, 0]}, where
        return
    missing = [f for f in CORE_FIELDS if f not in expected]
    assert not missing, f"{where}: the golden states no {missing}"
    for field in CORE_FIELDS:
        assert actual[field] == expected[field], f"{where}: {field}"
    if "trick_winners" in expected:
        winners = [t["winner"] for t in actual["tricks"]]
        assert winners == expected["trick_winners"], f"{where}: trick winners"
    assert actual.get("held_received", [0, 0]) == expected.get("held_received", [0, 0]), (
        f"{where}: held_received"
    )
    for field in ("contract", "capot"):
        if field in expected:
            assert actual.get(field) == expected[field], f"{where}: {field}"


def _check_golden(golden: dict[str, Any]) -> None:
    record = golden["record"]
    expected = golden["expected"]
    is_match = isinstance(record.get("deals"), list)
    if "error" in expected:
        with pytest.raises(RecordError, match=expected["error"]):
            replay_match(record) if is_match else replay_deal(record)
        return
    if is_match:
        match, _ = replay_match(record)
        actual = match_outcome_json(match)
        assert len(actual["deals"]) == len(expected["deals"])
        for i, (exp, act) in enumerate(zip(expected["deals"], actual["deals"], strict=True)):
            _check_deal(exp, act, f"deals[{i}]")
        assert actual["totals"] == expected["totals"], "totals"
        assert actual["winner"] == expected["winner"], "winner"
    else:
        _, outcome = replay_deal(record)
        _check_deal(expected, outcome.as_json(), golden["name"])


@pytest.mark.parametrize("path", GOLDEN_FILES, ids=[p.stem for p in GOLDEN_FILES])
def test_golden(path: Path) -> None:
    golden = _load(path)
    assert golden["name"] == path.stem
    assert golden["rule"].strip(), "a golden names the rule of docs/rules.md it checks"
    _check_golden(golden)


def test_golden_cases_cover_every_preset() -> None:
    presets = set()
    for path in GOLDEN_FILES:
        spec = _load(path)["record"]["ruleset"]
        presets.add(spec if isinstance(spec, str) else spec["preset"])
    assert presets == {"classic", "classic-annonces", "club", "coinche"}


def test_played_golden_deals_count_162_points() -> None:
    """Every played golden deal adds up to 162 card points (or 252 on a capot)."""
    for path in GOLDEN_FILES:
        expected = _load(path)["expected"]
        deals = expected.get("deals", [expected])
        for exp in deals:
            if "card_points" in exp:
                assert sum(exp["card_points"]) in (162, 252), path.stem
