"""Luck and skill of a deal (docs/analysis.md#luck-and-skill): luck is what the heuristic bot makes of the
same cards at all four seats, skill the rest, and the two add up to the deal's result exactly."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.analysis.luck import dealt_deal, heuristic_result, luck_and_skill
from arena.engine import PRESETS, Match, match_record
from arena.engine.bots import HeuristicPlayer, Player, RandomPlayer
from arena.engine.observation import observe


def played_match(preset: str, seed: str, deals: int, players: list[Player],
                 rng_seed: int = 0) -> dict[str, Any]:
    """The engine's record of a match of ``deals`` deals between ``players`` (seats 0..3)."""
    match = Match(PRESETS[preset].with_options(deals=deals), seed=seed)
    rng = random.Random(rng_seed)
    while not match.is_over:
        deal = match.new_deal()
        while not deal.is_over:
            deal.apply(players[deal.to_act].act(observe(deal, deal.to_act), rng))
        match.add(deal)
    return match_record(match, [p.name for p in players])


MIXES: list[list[Player]] = [
    [HeuristicPlayer(), RandomPlayer(), HeuristicPlayer(), RandomPlayer()],
    [RandomPlayer(), RandomPlayer(), RandomPlayer(), RandomPlayer()],
    [RandomPlayer(), HeuristicPlayer(), HeuristicPlayer(), RandomPlayer()]]


@settings(max_examples=125, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(preset=st.sampled_from(sorted(PRESETS)), seed=st.integers(0, 2**32),
       mix=st.integers(0, len(MIXES) - 1))
def test_luck_plus_skill_is_the_result_on_every_deal(preset: str, seed: int, mix: int) -> None:
    """125 matches of 8 deals, every preset: 1,000 deals, each one's luck plus its skill its result."""
    record = played_match(preset, str(seed), 8, MIXES[mix], seed)
    rows = luck_and_skill(record)
    assert len(rows) == 8
    for result, luck, skill in rows:
        assert luck is not None and skill is not None
        assert luck + skill == result


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_a_deal_the_heuristic_plays_at_every_seat_is_all_luck(preset: str) -> None:
    heuristic = HeuristicPlayer()
    record = played_match(preset, "all-luck", 6, [heuristic] * 4)
    for result, luck, skill in luck_and_skill(record):
        assert (luck, skill) == (result, 0)


def test_luck_is_read_from_the_deck_even_where_the_hands_alone_would_not_tell() -> None:
    """A classic deal's hands as the play starts do not say what the taker held before the second
    distribution: the deck does; without deck or seed, there is no luck to tell."""
    record = played_match("classic", "deck", 4, MIXES[0])
    rules = PRESETS["classic"]
    for i, deal in enumerate(record["deals"]):
        assert dealt_deal(deal, rules, None, i) is not None
        bare = {k: v for k, v in deal.items() if k not in ("deck", "packets")}
        from_seed = dealt_deal(bare, rules, "deck", i)
        from_deck = dealt_deal(deal, rules)
        assert from_seed is not None and from_deck is not None
        assert heuristic_result(from_seed) == heuristic_result(from_deck)
        assert dealt_deal(bare, rules, "another seed", i) is None
        assert dealt_deal(bare, rules, None, i) is None
