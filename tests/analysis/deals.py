"""Deals to analyse in the tests: seeded, under every preset, with random or heuristic contracts,
and a brute-force minimax (no pruning, no table, every legal action) to check the solver by."""

from __future__ import annotations

import random

from arena.analysis import Position
from arena.engine import PRESETS, Deal, Ruleset, deal_from_rng, observe, score_deal
from arena.engine.actions import CARD_FIELD
from arena.engine.bots import HeuristicPlayer, RandomPlayer
from arena.engine.deal import PLAY


def contract_position(preset: str, seed: int) -> Position:
    """A deal of ``preset`` from ``seed`` with a random contract (coinche: random value, capot
    contracts and multipliers too), before its first card."""
    rng = random.Random(seed)
    rules = Ruleset.from_spec(preset)
    deck = list(range(32))
    rng.shuffle(deck)
    hands = [sum(1 << c for c in deck[8 * s: 8 * s + 8]) for s in range(4)]
    value = rng.choice([80, 90, 100, 110, 120, 130, 140, 150, 160, 250])
    multiplier = rng.choice([1, 1, 2, 4])
    return Position.with_contract(rules, rng.randrange(4), hands, rng.randrange(4), rng.randrange(4),
                                  value, multiplier)


def heuristic_deal(preset: str, seed: int) -> Deal | None:
    """A seeded deal of ``preset`` bid by the heuristic bot at the four seats, before its first
    card (None: thrown in)."""
    rng = random.Random(seed)
    deal = deal_from_rng(PRESETS[preset], seed % 4, rng)
    player = HeuristicPlayer()
    while deal.phase is not PLAY and not deal.is_over:
        deal.apply(player.act(observe(deal, deal.to_act), rng))
    return None if deal.is_over else deal


def played_on(pos: Position, cards: int, seed: int, heuristic: bool = False) -> Position:
    """``pos`` after ``cards`` more actions of a random (or the heuristic) player at every seat."""
    rng = random.Random(seed)
    deal = pos.deal.copy()
    player = HeuristicPlayer() if heuristic else RandomPlayer()
    for _ in range(cards):
        deal.apply(player.act(observe(deal, deal.to_act), rng))
    return Position(deal, pos.solver)


def brute_force(deal: Deal, team: int) -> int:
    """``team``'s margin (its deal score less the other's) under perfect play: plain minimax over
    every legal action (words and declarations too), scored by the engine at the end."""
    if deal.is_over:
        score = score_deal(deal).score
        return score[team] - score[1 - team]
    values = []
    for action in deal.legal_actions():
        child = deal.copy()
        child.apply_unchecked(action)
        values.append(brute_force(child, team))
    return max(values) if deal.to_act & 1 == team else min(values)


def brute_card_values(deal: Deal) -> dict[int, int]:
    """The brute-force margin of each legal card for the side to play (its best words)."""
    team = deal.to_act & 1
    out: dict[int, int] = {}
    for action in deal.legal_actions():
        child = deal.copy()
        child.apply_unchecked(action)
        card = action & CARD_FIELD
        v = brute_force(child, team)
        out[card] = max(out.get(card, v), v)
    return out
