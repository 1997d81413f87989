"""The colver adapter bot: its code mappings, its mirror of the public game, and that it plays
legally from the observation alone. colver is an optional extra: the tests that run it skip
without it (``pip install -e '.[bench]'``)."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest
from belote_bot import Observation
from belote_bot.acting import legal_code
from belote_bot.bots.colver_ismcts import (
    COLVER_RULES,
    ColverIsmctsBot,
    MappingError,
    action_from_colver,
    action_to_colver,
    card_from_colver,
    card_to_colver,
    colver_legal,
    mirror,
    ruled_out,
    sample_hands,
)

from arena.engine import Card, Deal, Ruleset, deal_from_rng, parse_action
from arena.engine import actions as A
from arena.referee.convert import observation_to_proto

RULES = Ruleset.from_spec(COLVER_RULES)
#: every coinche bid colver knows, as our codes: pass, 80..160 and capot in each suit, coinche, surcoinche
OUR_BIDS = [A.PASS, *(A.bid_action(v, s) for v in [*range(80, 161, 10), A.CAPOT_VALUE] for s in range(4)),
            A.COINCHE, A.SURCOINCHE]


def needs_colver() -> object:
    return pytest.importorskip("colver", reason="colver is an optional extra: pip install -e '.[bench]'")


def observation(deal: Deal, seat: int | None = None) -> Observation:
    """What the referee sends the seat (the one to act by default)."""
    msg, legal = observation_to_proto(deal, deal.to_act if seat is None else seat)
    return Observation.from_proto(msg, legal)


def positions(deals: int, seed: int) -> Iterator[tuple[Deal, random.Random]]:
    """Every decision of ``deals`` random deals (the bidding kept short, so that most deals are played)."""
    for i in range(deals):
        rng = random.Random(seed + i)
        deal = deal_from_rng(RULES, i % 4, rng)
        while not deal.is_over:
            yield deal, rng
            legal = deal.legal_actions()
            bid_low = deal.phase == "bidding" and rng.random() < 0.7
            deal.apply(legal[0] if bid_low else rng.choice(legal))


# ------------------------------------------------------------------ mappings
def test_cards_map_both_ways() -> None:
    assert sorted(card_to_colver(c) for c in range(32)) == list(range(32))
    assert all(card_from_colver(card_to_colver(c)) == c for c in range(32))
    # colver's suit order is ours; its ranks run 7 8 9 J Q K 10 A
    assert [card_to_colver(Card.parse(t)) for t in ("7S", "TS", "JS", "AS", "9H", "TC", "QC")] == [
        0, 6, 3, 7, 10, 30, 28]


def test_cards_match_colvers_names() -> None:
    colver = needs_colver()
    names = {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}
    for c in range(32):
        text = str(Card(c))
        assert colver.Env.card_name(card_to_colver(c)) == text[0].replace("T", "10") + names[text[1]]  # type: ignore[attr-defined]


def test_bids_map_both_ways() -> None:
    assert [action_to_colver(b) for b in OUR_BIDS] == list(range(43))
    assert [action_from_colver(a, bidding=True) for a in range(43)] == OUR_BIDS
    assert action_to_colver(parse_action("90H")) == 6 and action_to_colver(parse_action("capotC")) == 40


def test_bids_match_colvers_names() -> None:
    colver = needs_colver()
    names = {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}
    for code in OUR_BIDS:
        text = A.format_action(code)
        expected = {"pass": "Pass", "coinche": "Coinche", "surcoinche": "Surcoinche"}.get(text)
        if expected is None:
            expected = ("Capot" if text.startswith("capot") else text[:-1]) + names[text[-1]]
        assert colver.Env.action_name(action_to_colver(code), 0) == expected  # type: ignore[attr-defined]


@pytest.mark.parametrize("text", ["170H", "take", "C", "KH belote", "AS tierce", "redeal"])
def test_what_colver_lacks_is_refused(text: str) -> None:
    with pytest.raises(MappingError):
        action_to_colver(parse_action(text))


def test_colver_codes_out_of_range_are_refused() -> None:
    with pytest.raises(MappingError):
        action_from_colver(43, bidding=True)
    with pytest.raises(MappingError):
        action_from_colver(32, bidding=False)


# ------------------------------------------------------------------ the sample
def replays(obs: Observation, hands_now: list[int]) -> bool:
    """Whether the public game replays legally in our engine from these hands."""
    initial = hands_now[:]
    for seat, action in obs.plays:
        initial[seat] |= 1 << (action.code & A.CARD_FIELD)
    deal = Deal.from_hands(RULES, obs.dealer, initial)
    for _, action in [*obs.bids, *obs.plays]:
        if action.code not in deal.legal_actions():
            return False
        deal.apply(action.code)
    return True


def test_sampled_hands_fit_everything_public() -> None:
    for n, (deal, rng) in enumerate(positions(40, seed=100)):
        if n % 3:
            continue
        obs = observation(deal)
        hands = sample_hands(obs, rng)
        assert hands[obs.seat] == obs.hand_mask
        assert [h.bit_count() for h in hands] == [m.bit_count() for m in deal.hands]
        assert hands[0] | hands[1] | hands[2] | hands[3] == sum(deal.hands)
        assert replays(obs, hands)
        banned = ruled_out(obs)
        for seat in range(4):
            assert not deal.hands[seat] & banned[seat], "a constraint excludes a card the seat holds"


def test_ruled_out_reads_the_rules() -> None:
    # hearts are trumps (seat 1 takes at 80); seat 1 leads the 7 of spades
    deal = Deal.from_hands(RULES, 0, [
        Card.parse("AS").mask | sum(Card.parse(t).mask for t in ("8H", "7D", "8D", "9D", "TD", "JD", "QD")),
        sum(Card.parse(t).mask for t in ("7S", "8S", "9S", "TS", "JS", "QS", "KS", "7H")),
        sum(Card.parse(t).mask for t in ("JH", "9H", "AH", "TH", "KH", "QH", "KD", "AD")),
        sum(Card.parse(t).mask for t in ("7C", "8C", "9C", "TC", "JC", "QC", "KC", "AC")),
    ])
    for bid in ("80H", "pass", "pass", "pass"):
        deal.apply(parse_action(bid))
    for card in ("7S", "JH", "7C", "AS"):  # seat 2 trumps, seat 3 discards, seat 0 follows
        deal.apply(parse_action(card))
    banned = ruled_out(observation(deal, 1))
    spades, hearts = 0xFF, 0xFF << 8
    assert banned[2] == spades  # void in spades; trumping shows nothing more
    # seat 3 discarded over an opponent's trump: no spade, no trump above the jack (none exists)
    assert banned[3] == spades
    # under must_undertrump it would have had to play any trump: no trump at all
    assert ruled_out(observation(deal, 1), must_undertrump=True)[3] == spades | hearts
    assert banned[0] == 0


# ------------------------------------------------------------------ the mirror
def test_the_mirror_offers_our_legal_actions() -> None:
    needs_colver()
    checked = {"bidding": 0, "play": 0}
    for deal, rng in positions(60, seed=7):
        obs = observation(deal)
        env = mirror(obs, sample_hands(obs, rng), seed=rng.getrandbits(32))
        assert env.current_player() == obs.seat
        assert colver_legal(env) == sorted(obs.legal_codes), (str(obs), env.legal_actions())
        checked[obs.phase] += 1
    assert checked["bidding"] > 200 and checked["play"] > 1000


def test_the_bidding_does_not_depend_on_the_sampled_hands() -> None:
    """colver bids from the acting seat's hand and the auction: other samples, the same bid."""
    needs_colver()
    seen = 0
    for deal, _ in positions(40, seed=300):
        if deal.phase != "bidding":
            continue
        obs = observation(deal)
        envs = [mirror(obs, sample_hands(obs, random.Random(k)), seed=k) for k in range(4)]
        bids = {env.action_smart_ismcts(2) for env in envs}
        assert len(bids) == 1
        seen += 1
    assert seen > 50


def test_hidden_cards_do_not_reach_the_bot() -> None:
    """Two deals that differ only in cards seat 2 cannot see give it the same observation,
    the same sample and the same mirror (so the same decision, up to colver's clock)."""
    needs_colver()
    for i in range(20):
        rng = random.Random(i)
        deal = deal_from_rng(RULES, 1, rng)  # seat 2 speaks first
        other = Deal.from_hands(RULES, 1, _swap_hidden(deal.hands, 2, rng))
        a, b = observation(deal, 2), observation(other, 2)
        assert a.raw == b.raw
        assert sample_hands(a, random.Random(5)) == sample_hands(b, random.Random(5))
        assert mirror(a, sample_hands(a, random.Random(5)), 1).to_cfn() == \
            mirror(b, sample_hands(b, random.Random(5)), 1).to_cfn()
        bot_a, bot_b = ColverIsmctsBot(seed=3, time_ms=1), ColverIsmctsBot(seed=3, time_ms=1)
        assert bot_a.act(a) == bot_b.act(b)  # the bidding: no clock involved


def _swap_hidden(hands: list[int], seat: int, rng: random.Random) -> list[int]:
    """The hands with two cards swapped between two seats other than ``seat``."""
    x, y = [s for s in range(4) if s != seat][:2]
    cx = rng.choice([c for c in range(32) if hands[x] >> c & 1])
    cy = rng.choice([c for c in range(32) if hands[y] >> c & 1])
    out = hands[:]
    out[x] ^= 1 << cx | 1 << cy
    out[y] ^= 1 << cx | 1 << cy
    return out


def test_the_bot_plays_whole_deals_legally() -> None:
    needs_colver()
    bots = [ColverIsmctsBot(seed=s, time_ms=1) for s in range(4)]
    played = 0
    for i in range(3):
        deal = deal_from_rng(RULES, i % 4, random.Random(f"colver-legal/{i}"))
        while not deal.is_over:
            obs = observation(deal)
            deal.apply(legal_code(obs, bots[deal.to_act].act(obs)))  # raises unless legal
            played += deal.phase != "bidding"
    assert played > 0


def test_a_missing_colver_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from belote_bot.bots import colver_ismcts

    monkeypatch.setitem(sys.modules, "colver", None)  # import colver raises ImportError
    with pytest.raises(colver_ismcts.ColverMissingError, match=r"pip install -e '\.\[bench\]'"):
        ColverIsmctsBot()
    assert colver_ismcts.main(["--address", "localhost:1"]) == 2


def test_the_bot_refuses_a_ruleset_colver_does_not_play() -> None:
    needs_colver()
    deal = deal_from_rng(Ruleset.from_spec("classic"), 0, random.Random(1))
    with pytest.raises(MappingError, match="coinche only"):
        ColverIsmctsBot(seed=1, time_ms=1).act(observation(deal))


def test_the_command_prints_its_help() -> None:
    import subprocess
    import sys

    needs_colver()
    done = subprocess.run([sys.executable, "-m", "belote_bot.bots.colver_ismcts", "-h"], capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    for option in ("--address", "--token-file", "--concurrency", "--time-ms"):
        assert option in done.stdout
