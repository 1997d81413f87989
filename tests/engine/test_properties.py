"""Properties of every deal (hypothesis): the invariants a rules engine must keep.

Each example plays one random deal, seeded, under a random ruleset, and checks
one invariant of docs/rules.md: every card played once, 162 card points a deal
(252 on a capot), legal sets never empty and inside the hand, a seat's
observation blind to the other seats' hidden cards, records that round-trip,
and the text forms of cards and actions.
"""

from __future__ import annotations

import dataclasses
import json
import random

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from arena.engine import (
    CARDS,
    PRESETS,
    Card,
    CardError,
    Deal,
    Match,
    Observation,
    Ruleset,
    cards_of,
    deal_record,
    format_action,
    format_cards,
    mask_of,
    observe,
    parse_action,
    parse_cards,
    replay_deal,
    score_deal,
)
from arena.engine.actions import BID, CARD_FIELD
from arena.engine.cards import ALL_CARDS_MASK, SUIT_MASKS, card_points, iter_bits

OVERRIDES = [
    {},
    {"must_undertrump": False},
    {"must_undertrump": True},
    {"belote": "declared"},
    {"belote": "automatic"},
]

presets = st.sampled_from(sorted(PRESETS))
rulesets = st.builds(
    lambda name, extra: Ruleset.from_spec({"preset": name, **extra}), presets, st.sampled_from(OVERRIDES)
)
seeds = st.integers(min_value=0, max_value=2**32)
masks = st.integers(min_value=0, max_value=ALL_CARDS_MASK)
suits = st.integers(min_value=0, max_value=3)

SETTINGS = settings(max_examples=120, deadline=None)


# ----------------------------------------------------------------- helpers
def new_deal(rules: Ruleset, seed: int) -> Deal:
    return Match(rules, seed).new_deal()


def random_actions(deal: Deal, seed: int) -> list[tuple[Deal, int]]:
    """Play ``deal`` to the end with uniformly random legal actions.

    Returns, for every step, a copy of the deal before the action and the action.
    """
    rng = random.Random(seed)
    steps = []
    while not deal.is_over:
        action = rng.choice(deal.legal_actions())
        steps.append((deal.copy(), action))
        deal.apply(action)
    return steps


def played_deal(rules: Ruleset, seed: int) -> Deal:
    deal = new_deal(rules, seed)
    random_actions(deal, seed)
    return deal


def finished_deal(rules: Ruleset, seed: int) -> Deal:
    """A random deal played to the end and not thrown in."""
    deal = played_deal(rules, seed)
    assume(not deal.thrown_in)
    return deal


def seat_of_each_play(deal: Deal) -> list[tuple[int, int]]:
    """(seat, card) of every card of the finished tricks, in playing order."""
    return [
        ((leader + i) & 3, card)
        for leader, cards, _ in deal.tricks
        for i, card in enumerate(cards)
    ]


# ------------------------------------------------------- cards played once
@SETTINGS
@given(rulesets, seeds)
def test_every_card_is_played_exactly_once_in_a_finished_deal(rules: Ruleset, seed: int) -> None:
    deal = finished_deal(rules, seed)
    cards = [a & CARD_FIELD for a in deal.plays]
    assert sorted(cards) == list(range(32))
    assert len(deal.tricks) == 8


@SETTINGS
@given(rulesets, seeds)
def test_each_seat_plays_exactly_the_eight_cards_it_held(rules: Ruleset, seed: int) -> None:
    deal = finished_deal(rules, seed)
    played = [0, 0, 0, 0]
    for seat, card in seat_of_each_play(deal):
        played[seat] |= 1 << card
    assert played == deal.initial_hands
    assert deal.hands == [0, 0, 0, 0]


# ------------------------------------------------------------ card points
@SETTINGS
@given(rulesets, seeds)
def test_card_points_total_162_a_deal(rules: Ruleset, seed: int) -> None:
    deal = finished_deal(rules, seed)
    assert sum(deal.trick_points) == 162


@SETTINGS
@given(rulesets, seeds)
def test_card_points_scored_are_162_or_252_on_a_capot(rules: Ruleset, seed: int) -> None:
    deal = finished_deal(rules, seed)
    outcome = score_deal(deal)
    capot = 8 in deal.tricks_won
    assert sum(outcome.card_points) == (252 if capot else 162)
    if capot:
        assert outcome.capot == deal.tricks_won.index(8)
        assert outcome.card_points[outcome.capot] == 252
    else:
        assert outcome.capot is None


@SETTINGS
@given(rulesets, seeds)
def test_trick_points_are_the_points_of_the_cards_won_plus_dix_de_der(rules: Ruleset, seed: int) -> None:
    deal = finished_deal(rules, seed)
    won = [0, 0]
    for _, cards, winner in deal.tricks:
        won[winner & 1] |= mask_of(cards)
    last_winner = deal.tricks[-1][2] & 1
    expected = [card_points(won[t], deal.trump) + (10 if t == last_winner else 0) for t in (0, 1)]
    assert deal.trick_points == expected


# ---------------------------------------------------------- legal actions
@SETTINGS
@given(rulesets, seeds)
def test_legal_actions_are_never_empty_while_the_deal_is_not_over(rules: Ruleset, seed: int) -> None:
    deal = new_deal(rules, seed)
    for before, _ in random_actions(deal, seed):
        assert not before.is_over
        assert before.legal_actions()
    assert deal.legal_actions() == []


@SETTINGS
@given(rulesets, seeds)
def test_legal_cards_are_always_in_the_hand_of_the_seat_to_act(rules: Ruleset, seed: int) -> None:
    deal = new_deal(rules, seed)
    for before, _ in random_actions(deal, seed):
        if before.phase != "play":
            assert all(a >= BID for a in before.legal_actions())
            continue
        hand = before.hands[before.to_act]
        legal = before.legal_actions()
        assert all(a < BID for a in legal)
        assert mask_of({a & CARD_FIELD for a in legal}) & ~hand == 0
        assert before.legal_cards() == mask_of({a & CARD_FIELD for a in legal})


@SETTINGS
@given(rulesets, seeds)
def test_legal_actions_hold_no_duplicates(rules: Ruleset, seed: int) -> None:
    deal = new_deal(rules, seed)
    for before, _ in random_actions(deal, seed):
        legal = before.legal_actions()
        assert len(set(legal)) == len(legal)


# ------------------------------------------------------------ observation
def redistribute_hidden(deal: Deal, observer: int, kept: int, seed: int) -> list[int]:
    """The hands of ``deal`` with the other seats' cards outside ``kept`` shuffled among them.

    Each other seat keeps its hand size and the cards of ``kept`` it holds.
    """
    rng = random.Random(seed)
    hands = list(deal.initial_hands)
    others = [s for s in range(4) if s != observer]
    pool = [c for s in others for c in cards_of(hands[s] & ~kept)]
    rng.shuffle(pool)
    for s in others:
        n = (hands[s] & ~kept).bit_count()
        hands[s] = (hands[s] & kept) | mask_of(pool[:n])
        pool = pool[n:]
    return hands


def public_view(obs: Observation) -> Observation:
    """An observation without the melds shown to everyone (they reveal hidden cards by the rules)."""
    return dataclasses.replace(obs, shown_declarations=(), declarations_team=None)


@settings(max_examples=250, deadline=None)
@given(rulesets, seeds, st.integers(0, 3), st.integers(0, 32), seeds)
def test_an_observation_does_not_change_when_only_other_seats_hidden_cards_change(
    rules: Ruleset, seed: int, observer: int, prefix: int, shuffle_seed: int,
) -> None:
    played = finished_deal(rules, seed)
    # cards the others play in the first ``prefix`` plays are public by then; so is the retourne
    kept = mask_of({a & CARD_FIELD for a in played.plays[:prefix]})
    if played.retourne >= 0:
        kept |= 1 << played.retourne
    retourne = played.retourne
    a = Deal.from_hands(rules, played.dealer, played.initial_hands, retourne)
    other_hands = redistribute_hidden(played, observer, kept, shuffle_seed)
    b = Deal.from_hands(rules, played.dealer, other_hands, retourne)
    actions = played.bids + played.plays[:prefix]
    compared = 0
    for action in [*actions, None]:
        obs_a, obs_b = observe(a, observer), observe(b, observer)
        if a.declared == b.declared:
            assert obs_a == obs_b
        else:
            assert public_view(obs_a) == public_view(obs_b)
        compared += 1
        if action is None or action not in b.legal_actions():
            break
        a.apply(action)
        b.apply(action)
    # the bidding never depends on the hands given by a record, so it is always compared
    assert compared > len(played.bids)


@SETTINGS
@given(rulesets, seeds, st.integers(0, 3))
def test_an_observation_shows_the_seat_its_own_hand_and_legal_actions_only_on_its_turn(
    rules: Ruleset, seed: int, seat: int,
) -> None:
    deal = new_deal(rules, seed)
    for before, _ in random_actions(deal, seed):
        obs = observe(before, seat)
        assert obs.hand == before.hands[seat]
        expected = tuple(before.legal_actions()) if before.to_act == seat else ()
        assert obs.legal_actions == expected


# ---------------------------------------------------------------- records
@SETTINGS
@given(rulesets, seeds)
def test_a_deal_record_round_trips_through_json_text(rules: Ruleset, seed: int) -> None:
    deal = played_deal(rules, seed)
    record = deal_record(deal)
    replayed, outcome = replay_deal(json.loads(json.dumps(record)))
    assert outcome == score_deal(deal)
    assert deal_record(replayed) == record


@SETTINGS
@given(rulesets, seeds)
def test_a_record_of_the_core_fields_alone_replays_to_the_same_outcome(rules: Ruleset, seed: int) -> None:
    deal = played_deal(rules, seed)
    core = {k: v for k, v in deal_record(deal).items() if k in ("ruleset", "dealer", "retourne", "hands",
                                                                 "bids", "plays")}
    _, outcome = replay_deal(json.loads(json.dumps(core)))
    assert outcome == score_deal(deal)


# ------------------------------------------------------------- text forms
@given(st.sampled_from(CARDS))
def test_a_card_parses_back_from_its_text(card: Card) -> None:
    assert Card.parse(str(card)) == card
    assert Card.parse(str(card).lower()) == card


def test_every_card_has_a_distinct_two_letter_text() -> None:
    texts = [str(c) for c in CARDS]
    assert len(set(texts)) == 32
    assert all(len(t) == 2 and t[0] in "789TJQKA" and t[1] in "SHDC" for t in texts)


@given(st.sampled_from([c for c in CARDS if str(c)[0] == "T"]))
def test_a_ten_parses_from_10_as_well_as_t(card: Card) -> None:
    assert Card.parse("10" + str(card)[1]) == card


@SETTINGS
@given(rulesets, seeds)
def test_every_legal_action_parses_back_from_its_text(rules: Ruleset, seed: int) -> None:
    deal = new_deal(rules, seed)
    for before, _ in random_actions(deal, seed):
        for action in before.legal_actions():
            assert parse_action(format_action(action)) == action


# ----------------------------------------------------------- mask helpers
@given(masks)
def test_a_mask_is_rebuilt_from_its_cards(mask: int) -> None:
    cards = cards_of(mask)
    assert mask_of(cards) == mask
    assert cards == sorted(cards)
    assert list(iter_bits(mask)) == [int(c) for c in cards]


@given(masks)
def test_format_cards_and_parse_cards_round_trip(mask: int) -> None:
    assert mask_of(parse_cards(format_cards(mask))) == mask
    assert mask_of(parse_cards(format_cards(mask).split())) == mask


@given(st.lists(st.sampled_from(CARDS), min_size=2))
def test_a_card_given_twice_is_a_card_error(cards: list[Card]) -> None:
    with pytest.raises(CardError, match="given twice"):
        mask_of([*cards, cards[0]])


@given(suits)
def test_the_32_cards_are_worth_152_points_whatever_the_trump(trump: int) -> None:
    assert card_points(ALL_CARDS_MASK, trump) == 152
    assert card_points(SUIT_MASKS[trump], trump) == 62
    assert all(card_points(SUIT_MASKS[s], trump) == 30 for s in range(4) if s != trump)


@given(masks, masks, suits)
def test_card_points_add_up_over_disjoint_sets(a: int, b: int, trump: int) -> None:
    b &= ~a
    assert card_points(a | b, trump) == card_points(a, trump) + card_points(b, trump)
