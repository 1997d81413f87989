"""Luck and skill of a deal, as gnubg splits a game: what the cards gave, and what play made of them.

*Luck* is the result the reference bots reach with the same cards: the built-in
heuristic bot (:class:`arena.engine.bots.HeuristicPlayer`, deterministic) at all
four seats, with the same deck, dealer and ruleset, the bidding included. *Skill*
is the deal's result less its luck. A result is team 0's deal score less team
1's (team 1's is its opposite), so luck and skill add up to the result exactly,
deal by deal and over a match.

The deal as dealt comes from the record's ``deck`` (and coinche ``packets``) when
it has one (every arena record does); a coinche deal is also whole from its
hands (dealt all at once), and a classic one from its match seed when the deck
that seed deals gives the recorded hands. A classic deal with none of these
(the taker's hand before the second distribution is unknown) has no luck.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from arena.engine.bots import HeuristicPlayer
from arena.engine.cards import Card, mask_of, parse_cards
from arena.engine.deal import PACKETS, Deal
from arena.engine.dealing import deal_from_rng, deal_rng
from arena.engine.errors import EngineError
from arena.engine.observation import observe
from arena.engine.rules import Ruleset
from arena.engine.scoring import score_deal

__all__ = ["dealt_deal", "heuristic_result", "luck_and_skill", "margin"]

_HEURISTIC = HeuristicPlayer()


def margin(score: tuple[int, int] | list[int]) -> int:
    """Team 0's deal score less team 1's."""
    return int(score[0]) - int(score[1])


def _hands(rec: Mapping[str, Any]) -> list[int]:
    return [mask_of(parse_cards(h)) for h in rec.get("hands", [])]


def dealt_deal(rec: Mapping[str, Any], rules: Ruleset, seed: int | str | None = None,
               index: int = 0) -> Deal | None:
    """Deal ``index`` of a record as it was dealt, before its first bid; None when the record does
    not tell (a classic deal without its deck, whose seed deals other hands)."""
    dealer = int(rec["dealer"])
    try:
        if "deck" in rec:
            deck = [int(c) for c in parse_cards(rec["deck"])]
            packets = tuple(rec.get("packets", (3, 3, 2))) if rules.is_coinche else (3, 3, 2)
            if packets not in PACKETS:
                return None
            return Deal.from_deck(rules, dealer, deck, (int(packets[0]), int(packets[1]), int(packets[2])))
        if rules.is_coinche:
            return Deal.from_hands(rules, dealer, _hands(rec))
        if seed is None:
            return None
        deal = deal_from_rng(rules, dealer, deal_rng(seed, index))
        if _plays_as_recorded(deal, rec):
            return deal
    except (EngineError, ValueError, KeyError, TypeError):
        return None
    return None


def _plays_as_recorded(deal: Deal, rec: Mapping[str, Any]) -> bool:
    """Whether the record's bids, on ``deal``, give the record's hands and retourne (its seed dealt it)."""
    from arena.engine.actions import parse_action

    if "retourne" in rec and deal.retourne != Card.parse(rec["retourne"]):
        return False
    trial = deal.copy()
    try:
        for text in rec.get("bids", []):
            trial.apply(parse_action(text))
    except EngineError:
        return False
    hands = _hands(rec)
    shown = trial.initial_hands if any(trial.initial_hands) else trial.hands
    return list(shown) == hands


def heuristic_result(dealt: Deal) -> int:
    """Team 0's deal score less team 1's when the heuristic bot plays all four seats of ``dealt``
    (a deal before its first bid), the bidding included; 0 for a deal it throws in."""
    deal = dealt.copy()
    rng = random.Random(0)  # the heuristic draws nothing from it
    while not deal.is_over:
        deal.apply_unchecked(_HEURISTIC.act(observe(deal, deal.to_act), rng))
    return margin(score_deal(deal).score)


def luck_and_skill(record: Mapping[str, Any]) -> list[tuple[int, int | None, int | None]]:
    """Each deal of a match record (the engine's, replayed and checked) as ``(result, luck, skill)``,
    team 0's: the result is the deal's score as the match wrote it down (litige points received
    included), luck the heuristic's result on its cards, skill the difference (None, None: a deal
    whose cards as dealt the record does not give)."""
    from arena.engine.record import replay_match

    match, outcomes = replay_match(record)
    seed = record.get("seed")
    out: list[tuple[int, int | None, int | None]] = []
    for index, (rec, outcome) in enumerate(zip(record["deals"], outcomes, strict=True)):
        result = margin(outcome.score)
        dealt = dealt_deal(rec, match.rules, seed if isinstance(seed, int | str) else None, index)
        if dealt is None:
            out.append((result, None, None))
            continue
        luck = heuristic_result(dealt)
        out.append((result, luck, result - luck))
    return out
