"""A bot's own version in its Hello: ``Bot.version`` when it is a label the arena keeps, else only text;
``--bot-version`` on the built-in bots' command lines, a bad label refused before anything connects."""

from __future__ import annotations

import logging

import pytest
from belote_bot import RandomBot
from belote_bot.cli import bot_main
from belote_bot.client import Client, bot_version_of


def test_a_label_is_the_bots_version_and_other_text_only_shown(caplog: pytest.LogCaptureFixture) -> None:
    bot = RandomBot(1)
    assert bot_version_of(bot) == "" and Client(bot, token="t").version.startswith("belote_bot/")
    bot.version = "1.4-rc1"
    client = Client(bot, token="t")
    assert (client.bot_version, client.version) == ("1.4-rc1", "1.4-rc1")
    bot.version = "my bot, v2"
    with caplog.at_level(logging.WARNING, logger="belote_bot"):
        assert bot_version_of(bot) == ""
    assert "is not a version label" in caplog.text and "keeps and tests no version" in caplog.text


def test_a_bad_bot_version_on_the_command_line_is_one_line_and_nothing_runs(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = bot_main(lambda seed: RandomBot(1), "random", "a bot", ["--bot-version", "two words",
                                                                   "--address", "127.0.0.1:9"])
    err = capsys.readouterr().err
    assert code == 2 and "--bot-version must be 1 to 32 letters" in err and len(err.splitlines()) == 1
