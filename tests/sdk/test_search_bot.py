"""The search bot: its samples fit what is public, it answers legally, deterministically and in
time, and it beats the heuristic over duplicate deals."""

from __future__ import annotations

import argparse
import asyncio
import math
import random
import re
import time
from pathlib import Path
from typing import Any

import pytest
from belote_bot import Bot, HeuristicBot, Observation, RandomBot
from belote_bot.acting import legal_code
from belote_bot.bots.rollout import POLICIES, play_out
from belote_bot.bots.sampling import _announcements_hold, deal_of, knowledge_of, sample_hands
from belote_bot.bots.search import SearchBot, search, time_budget_s
from hypothesis import example, given, settings
from hypothesis import strategies as st

from arena.engine import Deal, Match, Ruleset, observe, score_deal
from arena.engine.bots import HeuristicPlayer, RandomPlayer
from arena.engine.cards import SUIT_MASKS
from arena.engine.deal import PACKETS, Phase
from arena.engine.dealing import shuffle_and_cut
from arena.engine.observation import Observation as EngineObservation
from arena.records import TimeControl
from arena.referee.convert import observation_to_proto

from .test_bots import run_module

PRESETS = ["classic", "classic-annonces", "club", "coinche"]
RULESETS = [*PRESETS, {"preset": "coinche", "must_undertrump": True},
            {"preset": "classic", "belote": "declared"}]


def position(spec: object, seed: int) -> tuple[Ruleset, Deal, int]:
    """A deal played at random (heuristic and random players mixed) up to a random decision that
    is not the last; the seat to act there."""
    rules = Ruleset.from_spec(spec)  # type: ignore[arg-type]
    rng = random.Random(seed)
    while True:
        match = Match(rules, seed=rng.randrange(1 << 30))
        deal = match.new_deal()
        players = [HeuristicPlayer() if rng.random() < 0.5 else RandomPlayer() for _ in range(4)]
        history = []
        while not deal.is_over:
            history.append(deal.copy())
            deal.apply(players[deal.to_act].act(observe(deal, deal.to_act), rng))
        if deal.thrown_in:
            continue
        d = rng.choice(history)
        return rules, d, d.to_act


def voids_shown(deal: Deal) -> list[int]:
    """Independently of the sampler: the suits each seat showed void in (did not follow)."""
    voids = [0, 0, 0, 0]
    for leader, cards in [*((lead, c) for lead, c, _ in deal.tricks), (deal.trick_leader, tuple(deal.trick))]:
        for pos, card in enumerate(cards):
            if pos and card >> 3 != cards[0] >> 3:
                voids[(leader + pos) & 3] |= SUIT_MASKS[cards[0] >> 3]
    return voids


@settings(max_examples=400, deadline=None)
@given(spec=st.sampled_from(RULESETS), seed=st.integers(0, 1 << 30), draw=st.integers(0, 1 << 30))
@example(spec="coinche", seed=153978291, draw=0)  # two seats announced on trick 1, one a cinquante
def test_samples_fit_everything_public(spec: object, seed: int, draw: int) -> None:
    rules, deal, seat = position(spec, seed)
    obs = observe(deal, seat)
    k = knowledge_of(obs, rules)
    truth = deal.hands
    played = deal.played_mask()
    # what is inferred is true of the real deal
    for s in range(4):
        assert not truth[s] & k.forbidden[s], f"seat {s} is said not to hold a card it holds"
        assert k.forced[s] & truth[s] == k.forced[s], f"seat {s} is said to hold a card it does not"
    rng = random.Random(draw)
    for _ in range(3):
        hands = sample_hands(k, rng)
        assert hands[seat] == truth[seat]
        seen = 0
        for s in range(4):
            assert not seen & hands[s], "a card in two hands"
            seen |= hands[s]
            assert not hands[s] & played, "a played card dealt again"
            assert hands[s].bit_count() == truth[s].bit_count(), "hand sizes"
            assert not hands[s] & voids_shown(deal)[s], f"seat {s} got a suit it showed void in"
            assert not hands[s] & k.forbidden[s]
        for s, mask in obs.shown_declarations:
            assert hands[s] & mask & ~played == mask & ~played, "shown melds stay in the hand"
        # the real deal is one that fits: the sample must fit too, never the last-resort fallback
        assert _announcements_hold(k, hands), "the sample could not have announced what was announced"
        if deal.phase == Phase.PLAY:
            assert seen | played == (1 << 32) - 1
            if not rules.is_coinche:
                assert (hands[deal.taker] | played) >> deal.retourne & 1, "the retourne is the taker's"
        else:
            assert not seen >> deal.retourne & 1 if deal.retourne >= 0 else True
        sample = deal_of(k, hands, rng)
        assert sample.phase == deal.phase and sample.to_act == seat
        assert observe(sample, seat) == obs, "the seat cannot tell the sample from the real deal"
        if sample.phase == Phase.PLAY:  # the sample plays on to its end
            play_out(sample, POLICIES["random"], rng)
            assert sample.is_over


def test_announced_declarations_are_dealt_by_construction() -> None:
    """Over many positions where another seat announced declarations (on trick 1, or not shown
    since), no sample falls back to a deal that could not have announced them (random
    rejection missed about 1 in 170: a cent or a carré is rare in a random deal)."""
    rng = random.Random(7)
    positions = samples = fallbacks = 0
    specs: list[object] = ["coinche", "classic-annonces", {"preset": "coinche", "must_undertrump": True}]
    for i in range(600):
        rules, deal, seat = position(specs[i % 3], 50_000 + i)
        k = knowledge_of(observe(deal, seat), rules)
        if not any(k.announced[s] for s in range(4) if s != seat):
            continue
        positions += 1
        for _ in range(5):
            samples += 1
            fallbacks += not _announcements_hold(k, sample_hands(k, rng))
    assert positions > 150
    assert fallbacks == 0, f"{fallbacks} of {samples} samples"


def test_a_rare_announcement_is_sampled_in_proportion() -> None:
    """Seat 3's cinquante (the hypothesis example): every sample holds one, and the samples'
    melds are spread like those of uniform deals that fit (rejection from plain shuffles)."""
    rules, deal, seat = position("coinche", 153978291)
    k = knowledge_of(observe(deal, seat), rules)
    assert k.announced[3] and not k.shown[3]
    rng = random.Random(11)
    others = [s for s in range(4) if s != seat]
    unseen = [c for c in range(32) if k.unseen >> c & 1]

    def uniform() -> list[int]:
        while True:
            rng.shuffle(unseen)
            hands = [0, 0, 0, 0]
            hands[seat] = k.own
            pos = 0
            for s in others:
                for c in unseen[pos:pos + k.sizes[s]]:
                    hands[s] |= 1 << c
                pos += k.sizes[s]
            if all(not hands[s] & k.forbidden[s] for s in others) and _announcements_hold(k, hands):
                return hands

    n = 400  # the reference needs ~500 shuffles a deal: a cinquante is rare
    sampled = [sample_hands(k, rng, weighted=False) for _ in range(n)]
    reference = [uniform() for _ in range(n)]
    for hands in sampled:
        assert _announcements_hold(k, hands)
    for c in range(32):
        p = sum(h[3] >> c & 1 for h in sampled) / n
        q = sum(h[3] >> c & 1 for h in reference) / n
        assert abs(p - q) < 0.1, (c, p, q)  # ~3 standard errors; measured at most 0.05


def test_a_bidder_is_sampled_with_its_trumps_more_often() -> None:
    rules = Ruleset.from_spec("coinche")
    match = Match(rules, seed=3)
    deal = match.new_deal()
    seat = deal.to_act
    bidder = (seat + 1) & 3
    deal.apply(0x10000)  # pass
    deal.apply(_bid(120, 1))  # 120 hearts by the next seat
    deal.apply(0x10000)
    deal.apply(0x10000)
    obs = observe(deal, seat)
    assert obs.to_act == seat
    k = knowledge_of(obs, rules)
    rng = random.Random(1)
    jack = 1 << (8 + 4)
    if not jack & k.unseen:
        pytest.skip("the seat holds the jack of hearts")
    n = 400
    weighted = sum(bool(sample_hands(k, rng)[bidder] & jack) for _ in range(n)) / n
    plain = sum(bool(sample_hands(k, rng, weighted=False)[bidder] & jack) for _ in range(n)) / n
    assert weighted > plain + 0.15


def _bid(value: int, suit: int) -> int:
    from arena.engine.actions import bid_action

    return bid_action(value, suit)


def play(bots: list[Bot], preset: str, deals: int, seed: int) -> int:
    """Play ``deals`` deals, every decision through the SDK's observation; count the decisions."""
    decisions = 0
    rng = random.Random(seed)
    match = Match(Ruleset.from_spec(preset), seed=rng.randrange(1 << 30))
    for _ in range(deals):
        if match.is_over:
            match = Match(Ruleset.from_spec(preset), seed=rng.randrange(1 << 30))
        deal = match.new_deal()
        while not deal.is_over:
            msg, legal = observation_to_proto(deal, deal.to_act, deal_index=len(match.outcomes))
            obs = Observation.from_proto(msg, legal, match_id="m")
            deal.apply(legal_code(obs, bots[deal.to_act].act(obs)))  # raises unless legal
            decisions += 1
        match.add(deal)
    return decisions


@pytest.mark.parametrize("preset", PRESETS)
def test_search_bot_always_answers_a_legal_action(preset: str) -> None:
    search_bot = SearchBot(seed=1, iterations=3)
    bots: list[Bot] = [search_bot, RandomBot(seed=1), search_bot, RandomBot(seed=2)]
    assert play(bots, preset, deals=6, seed=5) > 60


@pytest.mark.parametrize("rollout", ["random", "epsilon"])
def test_every_rollout_policy_plays_legally(rollout: str) -> None:
    bot = SearchBot(seed=2, iterations=2, rollout=rollout)
    assert play([bot, HeuristicBot(), bot, HeuristicBot()], "coinche", deals=3, seed=6) > 30


def sdk_observation(deal: Deal, **request: int) -> Observation:
    msg, legal = observation_to_proto(deal, deal.to_act)
    return Observation.from_proto(msg, legal, match_id="det", **request)


def test_same_seed_same_observation_same_action() -> None:
    for i in range(25):
        _, deal, _ = position(PRESETS[i % 4], 1000 + i)
        obs = sdk_observation(deal)
        a, b = SearchBot(seed="s", iterations=12), SearchBot(seed="s", iterations=12)
        first = a.act(obs)
        assert b.act(obs) == first
        assert a.act(obs) == first  # no state carried from one decision to the next


def test_the_search_evaluates_every_candidate_on_each_sample() -> None:
    rules, deal, seat = position("coinche", 77)
    obs = observe(deal, seat)
    result = search(obs, rules, random.Random(0), iterations=5)
    assert result.action in obs.legal_actions
    if result.samples:
        assert result.samples == 5 and result.rollouts == 5 * len(result.values)


#: A bot's time is measured in this thread's CPU time (the search runs in the caller's thread): what
#: its search spent, which a loaded machine does not stretch. Its own clock is the wall's, so on a
#: loaded machine it stops sooner in CPU time, never later.


@pytest.mark.parametrize("preset", ["classic", "coinche"])
def test_it_answers_within_its_budget(preset: str) -> None:
    bot = SearchBot(seed=3, budget_ms=30)
    for i in range(6):
        _, deal, _ = position(preset, 300 + i)
        obs = sdk_observation(deal)
        started = time.thread_time()
        assert obs.is_legal(bot.act(obs))
        assert time.thread_time() - started < 0.030 + 0.25  # one sample past the budget at most


def test_it_takes_its_time_from_the_deadline_and_never_past_it() -> None:
    bot = SearchBot(seed=4)
    _, deal, _ = position("coinche", 400)
    obs = sdk_observation(deal, deadline_ms=80, time_bank_ms=0)
    started = time.thread_time()
    bot.act(obs)
    assert time.thread_time() - started < 0.080
    assert time_budget_s(1000, 10_000) == pytest.approx(0.5 + 0.2)
    assert time_budget_s(50, 0) == pytest.approx(0.020)  # the safety margin bites first
    assert time_budget_s(10, 0) == 0.0
    for deadline in (0, 20, 100, 1000):
        for bank in (0, 100, 5000):
            assert time_budget_s(deadline, bank, 3000) <= max(0.0, (deadline + bank) / 1000 - 0.030)


def test_without_any_time_left_it_answers_the_heuristics_choice() -> None:
    rules, deal, seat = position("classic", 500)
    obs: EngineObservation = observe(deal, seat)
    result = search(obs, rules, random.Random(1), stop_at=0.0)
    assert result.action in obs.legal_actions


def duplicate_duel(preset: str, deals: int, search_bot: Bot, seed: str) -> list[float]:
    """Per deal, the search side's mean score margin over the two seatings of the same cards."""
    rules = Ruleset.from_spec(preset)
    heuristic = HeuristicBot(seed=9)
    margins = []
    for n in range(deals):
        rng = random.Random(f"{seed}/{n}")
        deck = shuffle_and_cut(rng, rules.cut_min)
        packets = rng.choice(PACKETS) if rules.is_coinche else (3, 3, 2)
        both = []
        for side in (0, 1):
            bots = [search_bot, heuristic] * 2 if side == 0 else [heuristic, search_bot] * 2
            deal = Deal.from_deck(rules, n & 3, deck, packets)
            while not deal.is_over:
                msg, legal = observation_to_proto(deal, deal.to_act, deal_index=n)
                obs = Observation.from_proto(msg, legal, match_id=f"duel/{side}")
                deal.apply(legal_code(obs, bots[deal.to_act].act(obs)))
            score = score_deal(deal).score
            both.append(score[side] - score[1 - side])
        margins.append(sum(both) / 2)
    return margins


@pytest.mark.slow
def test_it_beats_the_heuristic_over_duplicate_deals() -> None:
    margins = duplicate_duel("classic", 40, SearchBot(seed=1, iterations=25), "beat")
    mean = sum(margins) / len(margins)
    sd = math.sqrt(sum((m - mean) ** 2 for m in margins) / (len(margins) - 1))
    assert mean - 1.96 * sd / math.sqrt(len(margins)) > 0, (mean, sd)


def test_it_plays_a_match_on_a_referee() -> None:
    from arena.harness import local_arena

    async def main() -> None:
        clock = TimeControl(deadline=0.1, time_bank=1.0, max_strikes=3, grace=0.5)
        async with local_arena(time=clock) as arena:
            await arena.connect("search", SearchBot(seed=1), concurrency=2)
            await arena.connect("heuristic", HeuristicBot(), concurrency=2)
            record = await arena.play("search", "heuristic", "coinche", seed=5, deals=1)
            assert record.deals_played == 1
            assert not record.strikes, record.strikes

    asyncio.run(asyncio.wait_for(main(), 60))


def test_the_guides_examples_make_bots_that_play() -> None:
    guide = (Path(__file__).resolve().parents[2] / "docs" / "search-bot.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", guide, re.S)
    ran = 0
    for block in blocks:
        if "play_local" in block:
            continue  # whole matches over gRPC: the referee test above plays one
        scope: dict[str, Any] = {}
        exec(compile(block, "docs/search-bot.md", "exec"), scope)  # our own docs
        bot = scope["bot"]
        bot.iterations = 3
        assert play([bot, HeuristicBot(), bot, HeuristicBot()], "coinche", deals=2, seed=8) > 20
        ran += 1
    assert ran == 2


def test_a_search_that_fails_answers_the_heuristics_choice(monkeypatch: pytest.MonkeyPatch) -> None:
    from belote_bot.bots import search as search_module

    def broken(*args: object, **kw: object) -> None:
        raise RuntimeError("no deal fits the public history")

    monkeypatch.setattr(search_module, "search", broken)
    _, deal, seat = position("coinche", 600)
    obs = sdk_observation(deal)
    expected = HeuristicPlayer().act(observe(deal, seat), random.Random(0))
    assert SearchBot(seed=1, iterations=2).act(obs).code == expected


def test_its_command_takes_a_budget_and_a_rollout_policy() -> None:
    from belote_bot.bots.search import _configure, _options

    done = run_module("belote_bot.bots.search", "-h")
    assert done.returncode == 0, done.stderr
    assert "--budget-ms" in done.stdout and "--rollout" in done.stdout
    parser = argparse.ArgumentParser()
    _options(parser)
    bot = SearchBot()
    _configure(bot, parser.parse_args(["--budget-ms", "25", "--rollout", "random"]))
    assert bot.budget_ms == 25 and bot.policy is POLICIES["random"]
