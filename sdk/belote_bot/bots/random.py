"""A bot that plays any legal action, uniformly.

    python -m belote_bot.bots.random --address HOST:PORT [--token-file FILE] [--concurrency N] [--name NAME]

(the token from $BELOTE_TOKEN, or the file)
"""

from __future__ import annotations

import random
import sys
from collections.abc import Sequence

from belote_bot.bot import Bot
from belote_bot.types import Action, Observation

__all__ = ["RandomBot", "main"]


class RandomBot(Bot):
    """Uniform among the legal actions, from its own seeded ``random.Random``."""

    name = "random"
    act_inline = True  # a few microseconds: no thread hop

    def __init__(self, seed: int | str | None = None) -> None:
        self.rng = random.Random(seed)

    def act(self, obs: Observation) -> Action:
        return self.rng.choice(obs.legal_actions)


def main(argv: Sequence[str] | None = None) -> int:
    from belote_bot.cli import bot_main

    return bot_main(RandomBot, "python -m belote_bot.bots.random", "Play uniformly random legal actions.",
                    argv)


if __name__ == "__main__":
    sys.exit(main())
