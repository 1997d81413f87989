"""What a bot author imports from ``belote_bot``, and what stays inside."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import belote_bot
import belote_bot.action
import belote_bot.client
import belote_bot.observation
import belote_bot.types
from belote_bot import Bot

PUBLIC = {
    "Bot", "Observation", "Action", "Card", "run", "run_async",
    # what the hooks receive
    "MatchInfo", "MatchResult", "Strike", "Event", "BidMade", "CardPlayed", "DealEnded", "DealStarted",
    "DeclarationsShown", "StrikeGiven", "TrickCompleted",
    "BotError", "AuthenticationError", "IllegalAnswerError",
    "RandomBot", "HeuristicBot", "SearchBot", "ShownMeld", "Trick", "__version__",
}


def test_the_package_exports_the_bot_authors_surface() -> None:
    assert set(belote_bot.__all__) == PUBLIC
    for name in PUBLIC:
        assert getattr(belote_bot, name) is not None, name


def test_the_plumbing_is_private() -> None:
    for name in ("INVALID_ACTION", "PHASE_NAMES", "legal_texts", "backoff_delay", "Client", "ActResult"):
        assert not hasattr(belote_bot, name), name
    for module in (belote_bot.types, belote_bot.action, belote_bot.observation, belote_bot.client):
        for name in ("INVALID_ACTION", "PHASE_NAMES", "legal_texts", "backoff_delay"):
            assert not hasattr(module, name), (module.__name__, name)
    assert not hasattr(belote_bot.client.Client, "handle")


def test_the_client_keeps_what_the_referee_tests_use() -> None:
    params = inspect.signature(belote_bot.client.Client).parameters
    assert list(params)[:4] == ["bot", "address", "token", "concurrency"] and "name" in params
    assert inspect.iscoroutinefunction(belote_bot.client.Client.run)


def test_a_plain_act_runs_in_a_thread_unless_the_bot_says_inline() -> None:
    assert Bot.act_inline is False
    assert belote_bot.RandomBot.act_inline and belote_bot.HeuristicBot.act_inline
    assert belote_bot.SearchBot.act_inline is False  # it searches for milliseconds: off the event loop
    assert "thread" in (Bot.__doc__ or "") and "act_inline" in (Bot.__doc__ or "")


def test_the_readme_documents_every_observation_field() -> None:
    docs = Path(__file__).resolve().parents[2] / "docs"
    # the site's pages for a bot's author: the tutorial's first bot and the SDK's reference
    section = "".join((docs / page).read_text() for page in ("tutorial/write-a-bot.md", "reference/sdk.md"))
    documented = set(re.findall(r"`(?:obs\.)?([a-z_]+)(?:\(|`)", section))
    fields = {name for name in dir(belote_bot.Observation) if not name.startswith("_")}
    fields -= {"from_proto"}  # a constructor for tests and replays
    assert fields - documented == set()
