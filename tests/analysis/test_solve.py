"""The solver is exact: it agrees with a brute-force minimax on endgames of every preset, and its
principal variation, played through the engine, scores what it said."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from arena.analysis import (
    Position,
    PositionError,
    Solver,
    action_values,
    card_values,
    principal_actions,
    principal_variation,
    scores,
    solve,
)
from arena.engine import PRESETS, score_deal
from tests.analysis.deals import brute_card_values, brute_force, contract_position, heuristic_deal, played_on

presets = st.sampled_from(sorted(PRESETS))
seeds = st.integers(0, 2**32)


def endgame(preset: str, seed: int, tricks_left: int, into_trick: int) -> Position:
    return played_on(contract_position(preset, seed), 32 - 4 * tricks_left + into_trick, seed)


@settings(max_examples=150, deadline=None)
@given(presets, seeds, st.integers(1, 3), st.integers(0, 3))
def test_the_value_of_an_endgame_is_the_brute_force_minimax(
    preset: str, seed: int, tricks_left: int, into_trick: int,
) -> None:
    pos = endgame(preset, seed, tricks_left, into_trick)
    assert solve(pos) == brute_force(pos.deal, pos.team)


@settings(max_examples=100, deadline=None)
@given(presets, seeds, st.integers(1, 3), st.integers(0, 3))
def test_the_value_of_each_card_of_an_endgame_is_the_brute_force_minimax(
    preset: str, seed: int, tricks_left: int, into_trick: int,
) -> None:
    pos = endgame(preset, seed, tricks_left, into_trick)
    assert card_values(pos) == brute_card_values(pos.deal)


@pytest.mark.slow
@settings(max_examples=25, deadline=None)
@given(presets, seeds, st.integers(0, 3))
def test_four_tricks_from_the_end_the_solver_is_the_brute_force_minimax(
    preset: str, seed: int, into_trick: int,
) -> None:
    pos = endgame(preset, seed, 4, into_trick)
    # one brute-force pass for both checks (it was two, half the test's time): the position's value for
    # the side to play (``pos.team``) is the best of its cards' values, each the best of its words
    brute = brute_card_values(pos.deal)
    assert card_values(pos) == brute
    assert solve(pos) == max(brute.values())


# a deal of each preset: it was 12 examples of presets drawn at random, of which half or more were
# thrown in (4 or 5 deals solved, some preset often none); now 4 deals solved, every preset's (one
# example is hypothesis's simplest, seed 0 on: the same 4 deals each run; the endgame tests above still
# draw positions at random)
@pytest.mark.parametrize("preset", sorted(PRESETS))
@settings(max_examples=1, deadline=None)
@given(seed=seeds)
def test_the_principal_variation_of_a_whole_deal_scores_through_the_engine_what_the_solver_said(
    preset: str, seed: int,
) -> None:
    deal = heuristic_deal(preset, seed)
    while deal is None:  # thrown in: the next seed's (a bidding is cheap, a solve is not)
        seed += 1
        deal = heuristic_deal(preset, seed)
    pos = Position.from_deal(deal)
    value = solve(pos)
    line = principal_actions(pos)
    end = deal.copy()
    for action in line:
        end.apply(action)  # checked: every action legal
    score = score_deal(end).score
    team = pos.team
    assert score[team] - score[1 - team] == value
    assert scores(pos) == score
    assert [int(c) for c in principal_variation(pos)] == [a & 31 for a in line]


@settings(max_examples=15, deadline=None)
@given(presets, seeds, st.integers(0, 3))
@example("classic", 7186, 0)  # the takers lead with no sure point: a quick bound of 0 hid their capot
def test_in_the_first_trick_a_position_is_worth_its_best_action_declarations_included(
    preset: str, seed: int, into_trick: int,
) -> None:
    pos = played_on(contract_position(preset, seed), into_trick, seed)
    values = action_values(pos)
    assert solve(pos) == max(values.values())
    for action, value in values.items():
        child = pos.after(action)
        assert value == (solve(child) if child.team == pos.team else -solve(child))


@settings(max_examples=6, deadline=None)
@given(st.sampled_from(["coinche", "classic-annonces"]), seeds, st.integers(0, 3))
def test_declarations_left_out_as_never_better_change_no_value(
    preset: str, seed: int, into_trick: int,
) -> None:
    pos = played_on(contract_position(preset, seed), into_trick, seed)
    every = Position(pos.deal, Solver(pos.deal, dominance=False))
    assert solve(pos) == solve(every)


def test_a_finished_deal_has_no_value_to_find() -> None:
    pos = played_on(contract_position("coinche", 1), 32, 1)
    with pytest.raises(PositionError):
        solve(pos)
