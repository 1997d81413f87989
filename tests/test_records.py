"""The arena's match record: one JSON form both ways, and a clear error for a malformed one."""

from __future__ import annotations

import dataclasses
import json
import random
from typing import Any

import pytest

from arena.engine import Match, RecordError, Ruleset, observe
from arena.engine.bots import RandomPlayer
from arena.records import MatchEnd, MatchRecord, ResultReason, StrikeEntry, StrikeReason
from tests.factories import record_of_match


def played(seed: int = 3, deals: int = 2) -> MatchRecord:
    match = Match(Ruleset.from_spec("coinche").with_options(deals=deals), seed)
    rng, player = random.Random(seed), RandomPlayer()
    while not match.is_over:
        deal = match.new_deal()
        while not deal.is_over:
            deal.apply(player.act(observe(deal, deal.to_act), rng))
        match.add(deal)
    return record_of_match("m-1", "alpha", "beta", match)


def test_a_record_survives_its_json_round_trip() -> None:
    strike = StrikeEntry(deal=0, decision=3, seat=1, kind=StrikeReason.LATE,
                         reason="no answer within 1 s and the time bank", detail="", fallback="pass")
    record = dataclasses.replace(played(), strikes=(strike,))
    again = MatchRecord.from_json(record.to_json())
    assert again == record
    assert again.strikes[0].kind is StrikeReason.LATE
    assert again.result.reason is ResultReason.FINISHED


def test_the_times_of_the_decisions_survive_the_round_trip_and_older_records_have_none() -> None:
    timed = dataclasses.replace(played(), started_ms=1_700_000_000_123,
                                asked_ms=((0, 2, 5), (9, 11)))
    assert MatchRecord.from_json(timed.to_json()) == timed
    older = json.loads(played().to_json())
    assert "started_ms" not in older and "asked_ms" not in older
    again = MatchRecord.from_dict(older)
    assert again.started_ms is None and again.asked_ms == ()


def test_each_seat_keeps_the_version_that_played_it_and_a_bot_without_one_writes_none() -> None:
    record = played()
    versioned = dataclasses.replace(record, bots=tuple(
        dataclasses.replace(b, version="2.1" if b.name == "alpha" else "") for b in record.bots))
    data = json.loads(versioned.to_json())
    assert [b.get("version") for b in data["bots"]] == ["2.1", None, "2.1", None]
    assert MatchRecord.from_dict(data) == versioned
    assert "version" not in json.dumps(json.loads(record.to_json())["bots"])  # as records always were


def test_the_engine_part_of_a_record_replays_to_its_totals() -> None:
    record = played(seed=8, deals=3)
    match, outcomes = record.replay()
    assert tuple(match.totals) == record.totals and len(outcomes) == 3
    assert set(record.engine_record()) == {"ruleset", "seed", "players", "deals"}


def test_a_team_s_match_score_is_one_half_or_zero() -> None:
    assert MatchEnd((10, 0), 0, ResultReason.FINISHED).score0() == 1.0
    assert MatchEnd((0, 10), 1, ResultReason.FORFEIT).score0() == 0.0
    assert MatchEnd((5, 5), None, ResultReason.FINISHED).score0() == 0.5


def spoiled(change: Any) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(played().to_json())
    change(data)
    return data


@pytest.mark.parametrize(("change", "message"), [
    (lambda d: d.pop("match_id"), "'match_id' must be a string"),
    (lambda d: d.update(players=["a", "b"]), "'players' must be the four bot names"),
    (lambda d: d.update(seed=True), "'seed' must be a whole number or a string"),
    (lambda d: d.update(deals={}), "'deals' must be a list"),
    (lambda d: d["deals"].append(7), r"deals\[2\] must be a deal record"),
    (lambda d: d["result"].update(reason="won"), "'reason' must be one of 'finished', 'forfeit', 'aborted'"),
    (lambda d: d["result"].update(winner=2), "result.winner must be 0, 1 or null"),
    (lambda d: d["result"].update(totals=[1]), "result.totals must be two whole numbers"),
    (lambda d: d.update(strikes=[{"deal": 0, "decision": 0, "seat": 9, "kind": "late", "reason": "",
                                   "detail": "", "fallback": "pass"}]), "'seat' must be a seat 0..3"),
    (lambda d: d.update(strikes=[{"deal": 0, "decision": 0, "seat": 1, "kind": "slow", "reason": "",
                                   "detail": "", "fallback": "pass"}]), "'kind' must be one of 'late'"),
    (lambda d: d["time_control"].pop("grace_s"), "'grace_s' must be a number"),
    (lambda d: d.update(latencies_us=[["1"]]), "'latencies_us' must be a list of lists of whole numbers"),
    (lambda d: d.update(started_ms="now"), "'started_ms' must be a whole number"),
    (lambda d: d.update(asked_ms=[[0, 1.5]]), "'asked_ms' must be a list of lists of whole numbers"),
    (lambda d: d["bots"][0].update(version="a b"), "'version' must be a bot's version label"),
    (lambda d: d["bots"][0].update(version=2), "'version' must be a string"),
])
def test_a_malformed_record_is_a_record_error_naming_what_is_wrong(change: Any, message: str) -> None:
    with pytest.raises(RecordError, match=message):
        MatchRecord.from_dict(spoiled(change))


def test_text_that_is_not_json_is_a_record_error() -> None:
    with pytest.raises(RecordError, match="must be JSON"):
        MatchRecord.from_json("{not json")
    with pytest.raises(RecordError, match="a match record must be a JSON object, not list"):
        MatchRecord.from_json("[]")
