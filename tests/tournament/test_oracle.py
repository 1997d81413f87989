"""The perfect-information oracle: the engine's legal cards, the minimax value, bounded cost."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from arena.engine import Deal, Match, Ruleset, observe
from arena.engine.bots import HeuristicPlayer, RandomPlayer
from arena.engine.deal import Phase
from arena.tournament.oracle import best_cards, legal_mask, tricks_left

RULESETS = ("coinche", "classic", {"preset": "coinche", "must_undertrump": False}, "classic-annonces")


def positions(ruleset: object, seeds: range, *, left: int = 8) -> Iterator[Deal]:
    """Card decisions of random deals (random and heuristic play), with at most ``left`` tricks left."""
    rules = Ruleset.from_spec(ruleset)  # type: ignore[arg-type]
    players = (RandomPlayer(), HeuristicPlayer())
    for seed in seeds:
        rng = random.Random(seed)
        deal = Match(rules, seed).new_deal()
        while not deal.is_over:
            if deal.phase is Phase.PLAY and tricks_left(deal) <= left:
                yield deal
            deal.apply(players[seed & 1].act(observe(deal, deal.to_act), rng))


def test_the_oracle_s_legal_cards_are_the_engine_s() -> None:
    checked = 0
    for ruleset in RULESETS:
        for deal in positions(ruleset, range(60)):
            mask = legal_mask(deal.hands[deal.to_act], list(deal.trick), deal.trick_best, deal.trick_winner,
                              deal.to_act, deal.trump, deal.rules.must_undertrump)
            assert mask == deal.legal_cards()
            checked += 1
    assert checked > 5000


def minimax(deal: Deal, team: int) -> int:
    """The best final card points of ``team`` minus the other's (252 to 0 for a capot), both sides
    playing their best with every card known: the plain definition, on the engine, no pruning."""
    if deal.is_over:
        points = list(deal.trick_points)
        won = deal.tricks_won
        if won[1] == 0:
            points = [252, 0]
        elif won[0] == 0:
            points = [0, 252]
        return points[team] - points[1 - team]
    mine = deal.to_act & 1 == team
    values = []
    mask = deal.legal_cards()
    for card in range(32):
        if mask >> card & 1:
            child = deal.copy()
            child.apply_unchecked(card)
            values.append(minimax(child, team))
    return max(values) if mine else min(values)


@pytest.mark.parametrize("ruleset", RULESETS)
def test_an_exact_answer_is_the_minimax_of_the_true_deal(ruleset: object) -> None:
    compared = 0
    for deal in positions(ruleset, range(12), left=3):
        if deal.legal_cards().bit_count() < 2:
            continue
        team = deal.to_act & 1
        now = deal.trick_points[team] - deal.trick_points[1 - team]
        values = {}
        for card in range(32):
            if deal.legal_cards() >> card & 1:
                child = deal.copy()
                child.apply_unchecked(card)
                values[card] = minimax(child, team) - now
        answer = best_cards(deal, exact_tricks=3)
        assert answer is not None and answer.exact
        top = max(values.values())
        assert answer.value == top
        assert answer.best == sum(1 << c for c, v in values.items() if v == top)
        assert answer.legal == deal.legal_cards()
        compared += 1
    assert compared > 30


def test_the_answer_before_the_last_tricks_is_an_estimate_the_same_every_time() -> None:
    deal = next(d for d in positions("coinche", range(5))
                if tricks_left(d) == 8 and d.legal_cards().bit_count() > 2)
    before = deal.copy()
    first, again = best_cards(deal), best_cards(deal)
    assert first is not None and not first.exact
    assert first == again
    assert first.best & ~deal.legal_cards() == 0 and first.best
    assert deal.hands == before.hands and deal.plays == before.plays  # the deal is not changed


def test_a_search_gives_up_at_its_node_limit() -> None:
    deal = next(d for d in positions("coinche", range(5), left=4) if d.legal_cards().bit_count() > 2)
    assert best_cards(deal, node_limit=20) is None
    assert best_cards(deal) is not None


def test_the_oracle_answers_card_decisions_only() -> None:
    deal = Match(Ruleset.from_spec("coinche"), 1).new_deal()
    with pytest.raises(ValueError, match="card decisions"):
        best_cards(deal)


def late_position(hands: list[str], trump: str, leader: int) -> Deal:
    """A deal at its last tricks, set up card by card (the six tricks before are left blank)."""
    from arena.engine import parse_cards

    deal = Deal(Ruleset.from_spec("coinche"), dealer=3)
    deal.hands = [sum(1 << c for c in parse_cards(h)) for h in hands]
    deal.phase = Phase.PLAY
    deal.trump = "SHDC".index(trump)
    deal.taker = 0
    deal.to_act = deal.trick_leader = leader
    deal.tricks = [(0, (), 0)] * (8 - len(hands[0].split()))
    deal.tricks_won = [3, 3]
    return deal


def test_low_cards_of_a_suit_are_one_choice_only_when_nobody_holds_a_card_between_them() -> None:
    # 9S wins the lead over east's 8S and keeps the lead for 7S, which nobody can follow: 7S first
    # loses the trick to 8S. Both are worth no points, but they are not the same card here.
    deal = late_position(["7S 9S", "8S KD", "QD JD", "AD TD"], trump="H", leader=0)
    answer = best_cards(deal)
    assert answer is not None and answer.exact
    assert answer.best == 1 << 2  # 9S alone
    # with east's 8S elsewhere (west's), 7S and 9S are still not the same: west follows either way
    same = late_position(["7S 9S", "QC KD", "QD JD", "8S TD"], trump="H", leader=0)
    answer = best_cards(same)
    assert answer is not None and answer.best == 1 << 2
    # with no spade left elsewhere they are: both win, both keep the lead
    alike = late_position(["7S 9S", "QC KD", "QD JD", "AD TD"], trump="H", leader=0)
    answer = best_cards(alike)
    assert answer is not None and answer.best == (1 << 0) | (1 << 2)
