"""The built-in bots: always a legal answer, and runnable from the command line."""

from __future__ import annotations

import os
import random
import subprocess
import sys

import pytest
from belote_bot import Bot, HeuristicBot, Observation, RandomBot
from belote_bot.acting import legal_code

from arena.engine import Match, Ruleset, observe
from arena.engine.bots import HeuristicPlayer
from arena.referee.convert import observation_to_proto

PRESETS = ["classic", "classic-annonces", "club", "coinche"]


def play(bots: list[Bot], preset: str, deals: int, seed: int) -> int:
    """Play ``deals`` deals with one bot per seat, every decision through the wire message; count them."""
    decisions = 0
    rng = random.Random(seed)
    while deals > 0:
        match = Match(Ruleset.from_spec(preset), seed=rng.randrange(1 << 30))
        while not match.is_over and deals > 0:
            deal = match.new_deal()
            while not deal.is_over:
                seat = deal.to_act
                msg, legal = observation_to_proto(deal, seat, match_score=(match.totals[0], match.totals[1]),
                                                  held=match.held, deal_index=len(match.outcomes))
                obs = Observation.from_proto(msg, legal)
                code = legal_code(obs, bots[seat].act(obs))  # raises unless legal
                deal.apply(code)
                decisions += 1
            match.add(deal)
            deals -= 1
    return decisions


@pytest.mark.parametrize("preset", PRESETS)
def test_random_bot_always_answers_a_legal_action(preset: str) -> None:
    bots: list[Bot] = [RandomBot(seed=s) for s in range(4)]
    assert play(bots, preset, deals=150, seed=11) > 1500


@pytest.mark.parametrize("preset", PRESETS)
def test_heuristic_bot_always_answers_a_legal_action(preset: str) -> None:
    bots: list[Bot] = [HeuristicBot(), RandomBot(seed=1), HeuristicBot(), RandomBot(seed=2)]
    assert play(bots, preset, deals=150, seed=12) > 1500


def test_heuristic_bot_plays_as_the_engine_player() -> None:
    bot, player = HeuristicBot(), HeuristicPlayer()
    rng = random.Random(5)
    for preset in PRESETS:
        match = Match(Ruleset.from_spec(preset), seed=preset)
        for _ in range(20):
            deal = match.new_deal()
            while not deal.is_over:
                seat = deal.to_act
                msg, legal = observation_to_proto(deal, seat)
                expected = player.act(observe(deal, seat), rng)
                assert bot.act(Observation.from_proto(msg, legal)).code == expected
                deal.apply(expected)
            match.add(deal)
            if match.is_over:
                break


def test_random_bots_with_one_seed_play_alike() -> None:
    a, b = RandomBot(seed="x"), RandomBot(seed="x")
    match = Match(Ruleset.from_spec("coinche"), seed=1)
    deal = match.new_deal()
    while not deal.is_over:
        obs = Observation.from_proto(*observation_to_proto(deal, deal.to_act))
        choice = a.act(obs)
        assert b.act(obs) == choice
        deal.apply(choice.code)


def run_module(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "BELOTE_TOKEN"}
    return subprocess.run([sys.executable, "-m", *args], capture_output=True, text=True, timeout=60, env=env)


@pytest.mark.parametrize("module", ["belote_bot.bots.random", "belote_bot.bots.heuristic",
                                    "belote_bot.bots.search"])
def test_builtin_bot_command_prints_its_help(module: str) -> None:
    done = run_module(module, "-h")
    assert done.returncode == 0, done.stderr
    for option in ("--address", "--token", "--concurrency", "--name", "BELOTE_TOKEN"):
        assert option in done.stdout


def test_builtin_bot_command_rejects_a_bad_concurrency() -> None:
    done = run_module("belote_bot.bots.random", "--concurrency", "0")
    assert done.returncode == 2 and "concurrency" in done.stderr
