"""Positions: built from the engine's deals and records, one before every card of a recorded deal."""

from __future__ import annotations

import pytest

from arena.analysis import Position, PositionError, Solver, card_values, positions_of_record_deal, solve
from arena.engine import Ruleset, deal_record, format_action
from tests.analysis.deals import contract_position, heuristic_deal, played_on


def recorded_deal(preset: str = "coinche", seed: int = 3) -> dict[str, object]:
    end = played_on(contract_position(preset, seed), 32, seed, heuristic=True)
    return dict(deal_record(end.deal))


def test_a_recorded_deal_gives_the_position_before_each_of_its_cards() -> None:
    record = recorded_deal()
    positions = positions_of_record_deal(record)
    plays = record["plays"]
    assert isinstance(plays, list) and len(positions) == len(plays) == 32
    for i, pos in enumerate(positions):
        assert pos.cards_played == i
        assert [format_action(a) for a in pos.deal.plays] == plays[:i]
    assert len({id(p.solver) for p in positions}) == 1  # one table for the deal


def test_the_card_played_is_one_of_the_legal_cards_valued() -> None:
    record = recorded_deal("classic", 5)
    positions = positions_of_record_deal(record)
    plays = record["plays"]
    assert isinstance(plays, list)
    for pos, text in list(zip(positions, plays, strict=True))[-8:]:
        values = card_values(pos)
        assert max(values.values()) == solve(pos)
        assert any(str(card) == str(text).split()[0] for card in values)


def test_a_deal_record_inside_a_match_record_takes_the_match_s_ruleset() -> None:
    record = recorded_deal()
    del record["ruleset"]
    with pytest.raises(PositionError):
        positions_of_record_deal(record)
    assert len(positions_of_record_deal(record, Ruleset.from_spec("coinche"))) == 32


def test_a_thrown_in_deal_has_no_position() -> None:
    record = recorded_deal()
    record["bids"], record["plays"] = ["pass"] * 4, []
    assert positions_of_record_deal(record) == []


def test_an_illegal_card_in_a_record_is_named() -> None:
    record = recorded_deal()
    plays = record["plays"]
    assert isinstance(plays, list)
    plays[1] = plays[0]
    with pytest.raises(PositionError, match=r"plays\[1\]"):
        positions_of_record_deal(record)


def test_a_position_is_in_the_card_play() -> None:
    deal = heuristic_deal("coinche", 0)
    assert deal is not None
    with pytest.raises(PositionError):
        Position.from_record({"ruleset": "coinche", "dealer": 0, "hands": deal_record(deal)["hands"],
                              "bids": [], "plays": []})


def test_a_solver_serves_the_positions_of_one_deal_only() -> None:
    one, other = contract_position("coinche", 1), contract_position("coinche", 2)
    with pytest.raises(PositionError, match="one deal"):
        Position.from_deal(other.deal, one.solver)
    assert Position.from_deal(one.deal, Solver(one.deal)).solver is not one.solver


def test_a_position_after_an_action_or_its_text_is_the_engine_s() -> None:
    pos = contract_position("coinche", 4)
    action = pos.legal_actions()[0]
    assert pos.after(action).deal.plays == pos.after(format_action(action)).deal.plays == [action]
    assert pos.after(action).solver is pos.solver
