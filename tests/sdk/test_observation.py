"""Observation: built from the referee's wire message, it says what the engine's observe() says.

Random matches under every preset (and some option overrides) go through
``arena.referee.convert.observation_to_proto`` for every seat at every step;
the SDK's observation must give back ``arena.engine.observe(deal, seat)``
through ``to_engine()``, and its readable fields must match the deal.
"""

from __future__ import annotations

import random
import zlib
from collections.abc import Iterator
from typing import Any

import pytest
from belote.arena.v1 import bot_service_pb2 as bs
from belote.arena.v1 import game_pb2 as pb
from belote_bot import Action, Observation

from arena.engine import Deal, Match, Ruleset, cards_of, observe, parse_cards
from arena.engine import actions as A
from arena.engine.bots import HeuristicPlayer, Player, RandomPlayer
from arena.engine.cards import CARDS, SUITS, Card, card_strength, card_value, trick_winner
from arena.referee.convert import observation_to_proto

RULESETS: dict[str, str | dict[str, Any]] = {
    "classic": "classic",
    "classic-annonces": "classic-annonces",
    "club": "club",
    "coinche": "coinche",
    "classic, redeals": {"preset": "classic", "redeal_four_sevens": True, "redeal_low_hand": True},
    "coinche, automatic belote, redeals": {
        "preset": "coinche", "belote": "automatic", "redeal_four_sevens": True,
    },
    "classic, declared belote, annonces": {"preset": "classic-annonces", "belote": "declared"},
}
DEALS = 100


def states(spec: str | dict[str, Any], deals: int, seed: int) -> Iterator[tuple[Deal, Match, int]]:
    """Every state of ``deals`` deals of a match (the final one included), with its match and deal index."""
    rng = random.Random(seed)
    players: list[Player] = [HeuristicPlayer(), RandomPlayer(), RandomPlayer(), HeuristicPlayer()]
    done = 0
    while done < deals:
        match = Match(Ruleset.from_spec(spec), seed=rng.randrange(1 << 30))
        while not match.is_over and done < deals:
            deal = match.new_deal()
            while True:
                yield deal, match, len(match.outcomes)
                if deal.is_over:
                    break
                seat = deal.to_act
                deal.apply(players[seat].act(observe(deal, seat), rng))
            match.add(deal)
            done += 1


def sdk_observation(deal: Deal, match: Match, index: int, seat: int) -> Observation:
    msg, legal = observation_to_proto(
        deal, seat, match_score=(match.totals[0], match.totals[1]), held=match.held, deal_index=index,
    )
    return Observation.from_proto(msg, legal, request_id=7, match_id="m1")


@pytest.mark.parametrize("name", list(RULESETS))
def test_to_engine_equals_observe_for_every_seat_at_every_step(name: str) -> None:
    shown = 0
    for deal, match, index in states(RULESETS[name], DEALS, seed=zlib.crc32(name.encode())):
        for seat in range(4):
            obs = sdk_observation(deal, match, index, seat)
            expected = observe(deal, seat, (match.totals[0], match.totals[1]), match.held)
            assert obs.to_engine() == expected
            shown += bool(obs.shown_declarations)
    if Ruleset.from_spec(RULESETS[name]).annonces:
        assert shown, "no declarations were shown: the test saw none to check"


@pytest.mark.parametrize("name", list(RULESETS))
def test_readable_fields_match_the_deal(name: str) -> None:
    for deal, match, index in states(RULESETS[name], DEALS // 2, seed=1 + zlib.crc32(name.encode())):
        seat = deal.to_act if deal.to_act >= 0 else deal.dealer
        obs = sdk_observation(deal, match, index, seat)
        assert (obs.seat, obs.team, obs.partner, obs.dealer, obs.phase) == (
            seat, seat & 1, seat ^ 2, deal.dealer, deal.phase)
        assert (obs.request_id, obs.match_id, obs.deal_index) == (7, "m1", index)
        assert obs.hand == cards_of(deal.hands[seat])
        assert obs.hand_mask == deal.hands[seat]
        assert [a.code for a in obs.legal_actions] == (deal.legal_actions() if deal.to_act == seat else [])
        assert obs.legal_cards == (cards_of(deal.legal_cards()) if deal.to_act == seat else [])
        assert all(c in obs.hand for c in obs.legal_cards)
        assert obs.retourne == (CARDS[deal.retourne] if deal.retourne >= 0 else None)
        assert obs.trump == (SUITS[deal.trump] if deal.trump >= 0 else None)
        assert obs.trump_index == (deal.trump if deal.trump >= 0 else None)
        assert obs.taker == (deal.taker if deal.taker >= 0 else None)
        assert (obs.contract_value, obs.multiplier) == (deal.contract_value, deal.multiplier)
        assert obs.trick_points == tuple(deal.trick_points)
        assert obs.match_score == (match.totals[0], match.totals[1]) and obs.held == match.held
        assert obs.bids == [((deal.dealer + 1 + i) & 3, Action(b)) for i, b in enumerate(deal.bids)]
        assert [tuple(t) for t in obs.tricks] == [(lead, tuple(cs), win) for lead, cs, win in deal.tricks]
        assert obs.to_act == deal.to_act
        if deal.phase == "play":
            assert obs.trick_leader == deal.trick_leader
            assert obs.trick == [((deal.trick_leader + i) & 3, CARDS[c]) for i, c in enumerate(deal.trick)]
        else:
            assert obs.trick == [] and obs.trick_leader is None
        # each card was played by a seat that held it, and every play is there once
        assert [a.code for _, a in obs.plays] == deal.plays
        for s, a in obs.plays:
            assert a.card is not None and deal.initial_hands[s] >> a.card & 1
        assert obs.played_cards == cards_of(deal.played_mask())
        for trick in obs.tricks:
            assert [c for _, c in trick.by_seat] == list(trick.cards)
            assert all(deal.initial_hands[s] >> c & 1 for s, c in trick.by_seat)


@pytest.mark.parametrize("name", ["classic", "coinche", "classic, declared belote, annonces"])
def test_card_helpers_agree_with_the_engine(name: str) -> None:
    """trick_winner, card_points, card_strength and wins_trick say what the engine's rules say,
    at every step of random deals; wins_trick is checked by playing the card into the trick."""
    checked = 0
    for deal, match, index in states(RULESETS[name], DEALS // 2, seed=2 + zlib.crc32(name.encode())):
        if deal.to_act < 0:
            continue
        seat = deal.to_act
        obs = sdk_observation(deal, match, index, seat)
        for card in CARDS:
            assert obs.card_points(card) == card_value(card, deal.trump)
            assert obs.card_points(str(card)) == obs.card_points(card)
            assert obs.card_strength(card) == card_strength(card, deal.trump)
        if deal.phase != "play" or not deal.trick:
            assert obs.trick_winner is None
            assert all(obs.wins_trick(c) for c in obs.legal_cards)
            continue
        assert obs.trick_winner == deal.trick_winner
        assert obs.trick_winner == trick_winner(deal.trick_leader, deal.trick, deal.trump)
        for card in obs.legal_cards:
            after = trick_winner(deal.trick_leader, [*deal.trick, card], deal.trump)
            assert obs.wins_trick(card) == (after == seat), (str(card), obs)
            assert obs.wins_trick(str(card)) == obs.wins_trick(card)
            checked += 1
    assert checked > 500


def test_card_helpers_read_like_the_rules() -> None:
    # hearts are trump; seat 0 led the ace of spades, seat 1 cut with the 7 of hearts
    plays = [int(c) for c in parse_cards("AS 7H")]
    hand = Card.parse("JH").mask | Card.parse("9H").mask | Card.parse("8H").mask
    msg = pb.Observation(seat=2, dealer=3, phase=pb.PHASE_PLAY, hand=hand, plays=plays, trump=1, taker=0,
                         multiplier=1)
    obs = Observation.from_proto(msg, [int(Card.parse(c)) for c in ("JH", "9H", "8H")])
    assert obs.trick_winner == 1
    assert (obs.card_points("JH"), obs.card_points("9H"), obs.card_points("AS"), obs.card_points("9S")) == (
        20, 14, 11, 0)
    strength = obs.card_strength
    assert strength("JH") > strength("9H") > strength("AH") > strength("AS")
    assert obs.wins_trick("JH") and obs.wins_trick("9H") and obs.wins_trick("8H")
    # had seat 1 cut with the 9, only the jack would overtrump it
    msg.ClearField("plays")
    msg.plays.extend(int(c) for c in parse_cards("AS 9H"))
    cut_with_nine = Observation.from_proto(msg, [])
    assert cut_with_nine.wins_trick("JH") and not cut_with_nine.wins_trick("8H")


def test_tricks_are_rebuilt_from_plays_and_winners() -> None:
    # dealer 3: seat 0 leads trick 1; seat 2 wins it and leads trick 2
    plays = [int(c) for c in parse_cards("7S AS 8S 9S JH 7H")]
    msg = pb.Observation(seat=1, dealer=3, phase=pb.PHASE_PLAY, plays=plays, trick_winners=[2], trump=1,
                         taker=0, multiplier=1)
    obs = Observation.from_proto(msg, [])
    assert [(t.leader, " ".join(map(str, t.cards)), t.winner) for t in obs.tricks] == [(0, "7S AS 8S 9S", 2)]
    assert obs.tricks[0].by_seat == ((0, Card.parse("7S")), (1, Card.parse("AS")),
                                     (2, Card.parse("8S")), (3, Card.parse("9S")))
    assert [(s, str(c)) for s, c in obs.trick] == [(2, "JH"), (3, "7H")]
    assert obs.trick_leader == 2 and obs.to_act == 0
    assert [f"{s}:{a}" for s, a in obs.plays] == ["0:7S", "1:AS", "2:8S", "3:9S", "2:JH", "3:7H"]
    assert obs.trump == "H" and obs.is_trump(Card.parse("7H")) and not obs.is_trump(Card.parse("AS"))


def test_a_request_carries_its_times_and_prints_its_cards() -> None:
    hand = Card.parse("JH").mask | Card.parse("KH").mask
    msg = pb.Observation(seat=2, dealer=1, phase=pb.PHASE_PLAY, hand=hand, trump=1, taker=2, multiplier=1)
    kh_belote = int(Card.parse("KH")) | A.BELOTE_WORD
    legal = [int(Card.parse("JH")), int(Card.parse("KH")), kh_belote]
    request = bs.ActionRequest(request_id=42, match_id="abc", seat=2, observation=msg, legal_actions=legal,
                               deadline_ms=500, time_bank_ms=2000, last_round_trip_us=180)
    obs = Observation(request, received_at=0.0)
    assert obs.raw is request and obs.proto is request.observation
    assert (obs.request_id, obs.match_id, obs.deadline_ms, obs.time_bank_ms, obs.last_round_trip_us) == (
        42, "abc", 500, 2000, 180)
    assert [str(c) for c in obs.hand] == ["JH", "KH"]
    assert [str(a) for a in obs.legal_actions] == ["JH", "KH", "KH belote"]
    assert [str(c) for c in obs.legal_cards] == ["JH", "KH"]
    assert str(obs.play(Card.parse("KH"))) == "KH belote" and str(obs.play("KH", words=False)) == "KH"
    assert obs.is_legal("KH belote") and obs.is_legal(kh_belote)
    assert not obs.is_legal("QH") and not obs.is_legal("?")
    with pytest.raises(ValueError):
        obs.play("AS")
    assert "hand='JH KH'" in repr(obs)
    fresh = Observation(request)
    assert 0 < fresh.time_left() <= 2.5
