"""Random simulation through every public entry point (OpenSpiel's ``random_sim_test``).

Matches of random and rule-based players under every preset and some option
overrides: every step checks the legal actions against a reference reading of
docs/rules.md, the observations, copies and unchecked actions, illegal actions;
every deal its cards, points, score and record; every match its dealers,
totals, end and record. The fast variant plays 250 deals a ruleset, the slow
one 500 more on another seed (9,000 deals in all; the engine was also checked
against two engines nobody here wrote over hundreds of thousands of decisions,
docs/rules.md, so more here bought CI minutes and no new finding: the slow one
played 1,000 a ruleset until the whole suite had to fit eight minutes on a
two-core laptop).
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from typing import Any

import pytest

from arena.engine import (
    CARDS,
    Deal,
    IllegalActionError,
    Match,
    MatchOverError,
    Ruleset,
    deal_from_rng,
    deal_record,
    format_action,
    match_record,
    observe,
    parse_action,
    replay_deal,
    replay_match,
    score_deal,
)
from arena.engine import actions as A
from arena.engine.bots import HeuristicPlayer, Player, RandomPlayer
from arena.engine.cards import ALL_CARDS_MASK
from arena.engine.deal import FIELDS
from arena.engine.record import match_outcome_json
from arena.engine.scoring import DealOutcome

RULESETS: dict[str, str | dict[str, Any]] = {
    "classic": "classic",
    "classic-annonces": "classic-annonces",
    "club": "club",
    "coinche": "coinche",
    "classic, no undertrump": {"preset": "classic", "must_undertrump": False},
    "coinche, must undertrump": {"preset": "coinche", "must_undertrump": True},
    "classic, declared belote": {"preset": "classic", "belote": "declared"},
    "coinche, automatic belote": {"preset": "coinche", "belote": "automatic"},
    "classic, redeals": {"preset": "classic", "redeal_four_sevens": True, "redeal_low_hand": True},
    "coinche, four sevens redeal": {"preset": "coinche", "redeal_four_sevens": True},
    "classic-annonces, 25 deals": {"preset": "classic-annonces", "deals": 25},
    "coinche, 25 deals, max bid 240": {"preset": "coinche", "deals": 25, "max_bid": 240},
}

FAST_DEALS = 250
SLOW_DEALS = 500


# ------------------------------------------------------ reference reading
# docs/rules.md#cards and #playing-a-card, on card texts, independent of the engine's tables.
TRUMP_ORDER = "78QKTA9J"  # low to high
PLAIN_ORDER = "789JQKTA"
TRUMP_VALUES = {"J": 20, "9": 14, "A": 11, "T": 10, "K": 4, "Q": 3, "8": 0, "7": 0}
PLAIN_VALUES = {"A": 11, "T": 10, "K": 4, "Q": 3, "J": 2, "9": 0, "8": 0, "7": 0}


def text(card: int) -> str:
    return str(CARDS[card & A.CARD_FIELD])


def beats(card: str, best: str, trump: str) -> bool:
    if card[1] == trump:
        return best[1] != trump or TRUMP_ORDER.index(card[0]) > TRUMP_ORDER.index(best[0])
    return card[1] == best[1] and PLAIN_ORDER.index(card[0]) > PLAIN_ORDER.index(best[0])


def best_position(trick: list[str], trump: str) -> int:
    pos = 0
    for i, card in enumerate(trick):
        if beats(card, trick[pos], trump):
            pos = i
    return pos


def reference_legal_cards(hand: list[str], trick: list[str], trump: str, partner_winning: bool,
                          must_undertrump: bool) -> set[str]:
    if not trick:
        return set(hand)
    led = trick[0][1]
    best = trick[best_position(trick, trump)]
    trumps = {c for c in hand if c[1] == trump}
    over = {c for c in trumps if beats(c, best, trump)}
    if led == trump:
        return over or trumps or set(hand)
    following = {c for c in hand if c[1] == led}
    if following:
        return following
    if partner_winning or not trumps:
        return set(hand)
    if best[1] == trump:
        return over or (trumps if must_undertrump else set(hand))
    return trumps


def reference_points(cards: list[str], trump: str) -> int:
    return sum((TRUMP_VALUES if c[1] == trump else PLAIN_VALUES)[c[0]] for c in cards)


def may_redeal(deal: Deal, seat: int) -> bool:
    """docs/rules.md#redeal-options, for a seat that has not spoken and no bid standing."""
    rules = deal.rules
    hand = [text(c) for c in range(32) if deal.hands[seat] >> c & 1]
    if rules.redeal_four_sevens and sum(c[0] == "7" for c in hand) == 4:
        return True
    if rules.redeal_low_hand:
        trump = text(deal.retourne)[1]
        return not any(c[1] == trump for c in hand) and reference_points(hand, "-") < 11
    return False


# ---------------------------------------------------------------- checks
def state_of(deal: Deal) -> tuple[object, ...]:
    """Every field of a deal, lists copied: equal states mean an untouched deal."""
    return tuple(
        v[:] if isinstance(v := getattr(deal, name), list) else v for name in FIELDS
    )


def check_legal_actions(deal: Deal) -> list[int]:
    legal = deal.legal_actions()
    assert legal, "no legal action while the deal is not over"
    assert len(set(legal)) == len(legal)
    for action in legal:
        assert parse_action(format_action(action)) == action
    if deal.phase == "bidding":
        assert all(A.is_bid(a) for a in legal)
        assert A.PASS in legal
        seat_spoke = any((deal.dealer + 1 + i) & 3 == deal.to_act for i in range(len(deal.bids)))
        if not seat_spoke and deal.standing < 0 and deal.deck is not None:
            assert (A.REDEAL in legal) == may_redeal(deal, deal.to_act)
        else:
            assert A.REDEAL not in legal
        return legal
    assert deal.phase == "play"
    seat = deal.to_act
    hand = [text(c) for c in range(32) if deal.hands[seat] >> c & 1]
    trick = [text(c) for c in deal.trick]
    trump = "SHDC"[deal.trump]
    partner_winning = bool(trick) and (deal.trick_leader + best_position(trick, trump)) & 3 == seat ^ 2
    expected = reference_legal_cards(hand, trick, trump, partner_winning, deal.rules.must_undertrump)
    assert {text(a) for a in legal} == expected, (hand, trick)
    assert sum(1 << (a & A.CARD_FIELD) for a in {a & A.CARD_FIELD for a in legal}) == deal.legal_cards()
    return legal


def check_observations(deal: Deal, legal: list[int]) -> None:
    for seat in range(4):
        obs = observe(deal, seat)
        assert obs.seat == seat and obs.to_act == deal.to_act and obs.phase == deal.phase
        assert obs.hand == deal.hands[seat]
        assert obs.legal_actions == (tuple(legal) if seat == deal.to_act else ())
        assert obs.bids == tuple(deal.bids) and obs.plays == tuple(deal.plays)


def check_cards_conserved(deal: Deal) -> None:
    if deal.phase != "play":
        return
    hands = deal.hands
    assert all(hands[i] & hands[j] == 0 for i in range(4) for j in range(i + 1, 4))
    played = deal.played_mask()
    assert (hands[0] | hands[1] | hands[2] | hands[3]) & played == 0
    assert hands[0] | hands[1] | hands[2] | hands[3] | played == ALL_CARDS_MASK
    assert len(deal.plays) == 4 * len(deal.tricks) + len(deal.trick)


def an_illegal_action(deal: Deal, legal: list[int]) -> int:
    if deal.phase == "bidding":
        return 0  # a card during the bidding
    return next(c for c in range(32) if not deal.hands[deal.to_act] >> c & 1)


def check_illegal_action_is_refused(deal: Deal, legal: list[int]) -> None:
    before = state_of(deal)
    with pytest.raises(IllegalActionError) as err:
        deal.apply(an_illegal_action(deal, legal))
    assert err.value.seat == deal.to_act
    assert set(err.value.legal) == {format_action(a) for a in legal}
    assert state_of(deal) == before


def check_copy_does_not_touch_the_original(deal: Deal, legal: list[int], rng: random.Random) -> None:
    before = state_of(deal)
    copy = deal.copy()
    copy.apply_unchecked(rng.choice(legal))
    assert state_of(deal) == before


def check_copy_played_to_the_end(deal: Deal, rng: random.Random) -> None:
    """A copy played out with unchecked actions scores like any deal, the original untouched."""
    before = state_of(deal)
    copy = deal.copy()
    while not copy.is_over:
        copy.apply_unchecked(rng.choice(copy.legal_actions()))
    check_finished_deal(copy, score_deal(copy))
    assert state_of(deal) == before


def check_tricks(deal: Deal) -> None:
    trump = "SHDC"[deal.trump]
    for leader, cards, winner in deal.tricks:
        shown = [text(c) for c in cards]
        assert winner == (leader + best_position(shown, trump)) & 3
    for (_, _, winner), (leader, _, _) in zip(deal.tricks, deal.tricks[1:], strict=False):
        assert leader == winner
    assert deal.tricks[0][0] == (deal.dealer + 1) & 3


def check_finished_deal(deal: Deal, outcome: DealOutcome) -> None:
    assert deal.is_over and deal.to_act == -1 and deal.legal_actions() == []
    if deal.thrown_in:
        assert outcome.thrown_in and outcome.score == (0, 0)
        assert deal.plays == []
        return
    assert sorted(a & A.CARD_FIELD for a in deal.plays) == list(range(32))
    check_tricks(deal)
    assert sum(deal.trick_points) == 162
    assert sum(deal.tricks_won) == 8
    capot = 8 in deal.tricks_won
    assert sum(outcome.card_points) == (252 if capot else 162)
    belote = 20 if outcome.belote is not None else 0
    declared = deal.decl_points if deal.decl_team is not None else 0
    if deal.rules.is_coinche:
        check_coinche_score(deal, outcome, belote)
    else:
        # classic scores are exact: nothing is created or lost but the litige points held
        assert sum(outcome.score) + outcome.held_for_next_deal == sum(outcome.card_points) + belote + declared
        assert (outcome.made is None) == (outcome.held_for_next_deal > 0)


def check_coinche_score(deal: Deal, outcome: DealOutcome, belote: int) -> None:
    takers, value = outcome.takers, outcome.value
    assert all(s % 10 == 0 and s >= 0 for s in outcome.score)
    assert outcome.made is not None and outcome.held_for_next_deal == 0
    if outcome.made:
        assert outcome.score[takers] >= value
    else:
        assert outcome.score[takers] in (0, 20)
        assert outcome.score[1 - takers] >= (160 + value) * outcome.multiplier
    if value == A.CAPOT_VALUE and outcome.made:
        assert deal.tricks_won[takers] == 8


def check_deal_record(deal: Deal, outcome: DealOutcome) -> None:
    record = deal_record(deal)
    replayed, replayed_outcome = replay_deal(json.loads(json.dumps(record)))
    assert replayed_outcome == outcome
    assert deal_record(replayed) == record


def check_match(match: Match) -> None:
    first = match.first_dealer
    assert [d.dealer for d in match.deals] == [(first + i) & 3 for i in range(len(match.deals))]
    assert match.totals == [sum(o.score[t] for o in match.outcomes) for t in (0, 1)]
    t0, t1 = match.totals
    if match.rules.deals is not None:
        assert match.is_over == (len(match.deals) == match.rules.deals)
    elif match.is_over:
        assert max(t0, t1) >= match.target and t0 != t1
    else:
        assert max(t0, t1) < match.target or t0 == t1
    if match.is_over:
        assert match.winner == (None if t0 == t1 else int(t1 > t0))
        with pytest.raises(MatchOverError):
            match.new_deal()
    record = match_record(match)
    replayed, outcomes = replay_match(json.loads(json.dumps(record)))
    assert outcomes == match.outcomes
    assert match_outcome_json(replayed) == match_outcome_json(match)
    assert match_record(replayed) == record


# ------------------------------------------------------------ simulation
PLAYERS: tuple[Player, ...] = (RandomPlayer(), RandomPlayer(), HeuristicPlayer())


def play_deal(deal: Deal, players: tuple[Player, Player], rng: random.Random) -> None:
    """Play a deal to the end, checking every step."""
    check_point = rng.randrange(40)
    while not deal.is_over:
        legal = check_legal_actions(deal)
        check_observations(deal, legal)
        check_cards_conserved(deal)
        check_illegal_action_is_refused(deal, legal)
        check_copy_does_not_touch_the_original(deal, legal, rng)
        if len(deal.bids) + len(deal.plays) == check_point:
            check_copy_played_to_the_end(deal, rng)
        seat = deal.to_act
        deal.apply(players[seat & 1].act(observe(deal, seat), rng))


def simulate(spec: str | dict[str, Any], deals: int, seed: int) -> Iterator[Match]:
    """Play matches of ``spec`` until ``deals`` deals are played; yields each match when done."""
    rules = Ruleset.from_spec(spec)
    rng = random.Random(f"sim/{seed}")
    played = 0
    while played < deals:
        match = Match(rules, f"{seed}/{played}")
        players = (rng.choice(PLAYERS), rng.choice(PLAYERS))
        while not match.is_over and played < deals:
            deal = match.new_deal()
            play_deal(deal, players, rng)
            outcome = score_deal(deal)
            check_finished_deal(deal, outcome)
            check_deal_record(deal, outcome)
            match.add(deal)
            played += 1
        check_match(match)
        yield match


@pytest.mark.parametrize("spec", RULESETS.values(), ids=RULESETS.keys())
def test_random_deals_keep_every_invariant(spec: str | dict[str, Any]) -> None:
    outcomes = [o for m in simulate(spec, FAST_DEALS, seed=1) for o in m.outcomes]
    assert len(outcomes) == FAST_DEALS
    assert any(not o.thrown_in for o in outcomes)


@pytest.mark.slow
@pytest.mark.parametrize("spec", RULESETS.values(), ids=RULESETS.keys())
def test_thousands_of_random_deals_keep_every_invariant(spec: str | dict[str, Any]) -> None:
    outcomes = [o for m in simulate(spec, SLOW_DEALS, seed=2) for o in m.outcomes]
    assert len(outcomes) == SLOW_DEALS


# ------------------------------------------------------- seeds and dealers
def play_out(match: Match, deals: int, seed: int = 0, pass_only: bool = False) -> list[Deal]:
    """Play ``deals`` deals of a match with random players (or players who only pass)."""
    rng = random.Random(seed)
    for _ in range(deals):
        deal = match.new_deal()
        while not deal.is_over:
            deal.apply(A.PASS if pass_only else rng.choice(deal.legal_actions()))
        match.add(deal)
    return match.deals


def dealt(deal: Deal) -> tuple[object, ...]:
    return (deal.dealer, deal.deck, deal.packets, deal.retourne, tuple(deal.initial_hands or deal.hands))


@pytest.mark.parametrize("preset", ["classic", "coinche"])
def test_the_same_seed_gives_the_same_deals(preset: str) -> None:
    rules = Ruleset.from_spec({"preset": preset, "deals": 6})
    first = play_out(Match(rules, seed=7), 6)
    again = play_out(Match(rules, seed=7), 6)
    assert [dealt(d) for d in first] == [dealt(d) for d in again]


@pytest.mark.parametrize("preset", ["classic", "coinche"])
def test_a_different_seed_gives_different_deals(preset: str) -> None:
    rules = Ruleset.from_spec({"preset": preset, "deals": 6})
    first = play_out(Match(rules, seed=7), 6)
    other = play_out(Match(rules, seed=8), 6)
    assert all(a.deck != b.deck for a, b in zip(first, other, strict=True))


def test_the_deals_of_a_match_differ_from_one_another() -> None:
    deals = play_out(Match(Ruleset.from_spec({"preset": "coinche", "deals": 6}), seed=3), 6)
    assert len({d.deck for d in deals}) == 6


def test_the_first_dealer_is_drawn_from_the_seed() -> None:
    rules = Ruleset.from_spec("classic")
    dealers = [Match(rules, seed).first_dealer for seed in range(40)]
    assert set(dealers) == {0, 1, 2, 3}
    assert dealers == [Match(rules, seed).first_dealer for seed in range(40)]


def test_the_cut_leaves_at_least_cut_min_cards_in_each_pile() -> None:
    from arena.engine.dealing import shuffle_and_cut

    for cut_min in (2, 3):
        for seed in range(200):
            shuffled = list(range(32))
            random.Random(seed).shuffle(shuffled)
            cut = shuffle_and_cut(random.Random(seed), cut_min)
            at = shuffled.index(cut[0])
            assert cut == shuffled[at:] + shuffled[:at]
            assert cut_min <= at <= 32 - cut_min


def test_dealing_draws_what_random_shuffle_randint_and_choice_draw() -> None:
    """The deck and the packets are drawn inline for speed: the same draws as the methods."""
    from arena.engine import dealing
    from arena.engine.deal import PACKETS

    class Subclass(random.Random):  # not a plain Random: dealt with its own methods
        pass

    assert dealing._FAST_DRAWS, "this Python's random draws differently: the inline draws are off"
    rules = Ruleset.from_spec("coinche")
    for seed in range(300):
        cut_min = 1 + seed % 16
        ours, theirs, sub = random.Random(seed), random.Random(seed), Subclass(seed)
        deck = list(range(32))
        theirs.shuffle(deck)
        cut = theirs.randint(cut_min, 32 - cut_min)
        assert dealing.shuffle_and_cut(ours, cut_min) == deck[cut:] + deck[:cut]
        assert dealing.shuffle_and_cut(sub, cut_min) == deck[cut:] + deck[:cut]
        assert ours.getstate() == theirs.getstate() == sub.getstate()
        deal = deal_from_rng(rules, 0, random.Random(seed))
        theirs = random.Random(seed)
        assert deal.deck == tuple(dealing._by_the_book(theirs, rules.cut_min))
        assert deal.packets == theirs.choice(PACKETS)


@pytest.mark.parametrize("preset", ["classic", "coinche"])
def test_the_dealer_rotates_each_deal_thrown_in_deals_included(preset: str) -> None:
    match = Match(Ruleset.from_spec({"preset": preset, "deals": 12}), seed=5)
    play_out(match, 6, pass_only=True)
    deals = play_out(match, 6, seed=1)
    assert all(d.thrown_in for d in deals[:6])
    assert [d.dealer for d in deals] == [(match.first_dealer + i) % 4 for i in range(12)]


@pytest.mark.parametrize("preset", ["classic", "coinche"])
def test_the_seat_after_the_dealer_speaks_and_leads_first(preset: str) -> None:
    rng = random.Random(0)
    for seed in range(12):
        deal = Match(Ruleset.from_spec(preset), seed).new_deal()
        first = (deal.dealer + 1) % 4
        assert deal.to_act == first
        while deal.phase == "bidding":
            deal.apply(rng.choice(deal.legal_actions()))
        if not deal.is_over:
            assert deal.to_act == deal.trick_leader == first


def test_a_redeal_on_four_sevens_throws_the_deal_in_and_the_next_seat_deals() -> None:
    rules = Ruleset.from_spec({"preset": "coinche", "redeal_four_sevens": True})
    match = Match(rules, seed=2)
    sevens = iter([0, 8, 16, 24])  # 7S 7H 7D 7C
    others = iter([c for c in range(32) if c & 7])
    # packets 3-3-2: the seat after the dealer gets the deck's cards 0-2, 12-14 and 24-25
    deck = [next(sevens) if i in (0, 1, 2, 12) else next(others) for i in range(32)]
    deal = Deal.from_deck(rules, match.next_dealer, deck, (3, 3, 2))
    assert A.REDEAL in deal.legal_actions()
    deal.apply(A.REDEAL)
    assert match.add(deal).thrown_in
    assert match.new_deal().dealer == (deal.dealer + 1) % 4
    check_deal_record(deal, score_deal(deal))


def test_a_deal_by_another_dealer_is_refused_by_the_match() -> None:
    match = Match(Ruleset.from_spec("coinche"), seed=1)
    deal = match.new_deal()
    while not deal.is_over:
        deal.apply(A.PASS)
    stranger = Deal.from_hands(deal.rules, (deal.dealer + 1) % 4, deal.initial_hands)
    while not stranger.is_over:
        stranger.apply(A.PASS)
    with pytest.raises(ValueError, match="dealt by seat"):
        match.add(stranger)


def test_new_deal_called_twice_deals_the_same_cards() -> None:
    """The cards of a deal depend on the match seed and the deal's index only."""
    match = Match(Ruleset.from_spec("classic"), seed=11)
    assert dealt(match.new_deal()) == dealt(match.new_deal())


@pytest.mark.parametrize("seed", range(20))
def test_classic_deals_five_cards_each_and_turns_up_a_sixth(seed: int) -> None:
    deal = Match(Ruleset.from_spec("classic"), seed).new_deal()
    assert [h.bit_count() for h in deal.hands] == [5, 5, 5, 5]
    assert not (deal.hands[0] | deal.hands[1] | deal.hands[2] | deal.hands[3]) >> deal.retourne & 1


@pytest.mark.parametrize("seed", range(20))
def test_coinche_deals_all_32_cards_in_the_seeded_packets(seed: int) -> None:
    deal = Match(Ruleset.from_spec("coinche"), seed).new_deal()
    assert [h.bit_count() for h in deal.hands] == [8, 8, 8, 8]
    assert deal.hands[0] | deal.hands[1] | deal.hands[2] | deal.hands[3] == ALL_CARDS_MASK
    assert deal.packets in ((3, 3, 2), (3, 2, 3), (2, 3, 3))


@pytest.mark.parametrize("preset", ["classic", "club"])
def test_after_the_taking_the_taker_holds_the_retourne_and_everyone_eight_cards(preset: str) -> None:
    for seed in range(20):
        deal = Match(Ruleset.from_spec(preset), seed).new_deal()
        retourne = deal.retourne
        deal.apply(A.TAKE)
        assert [h.bit_count() for h in deal.hands] == [8, 8, 8, 8]
        assert deal.hands[deal.taker] >> retourne & 1
        assert deal.hands[0] | deal.hands[1] | deal.hands[2] | deal.hands[3] == ALL_CARDS_MASK
