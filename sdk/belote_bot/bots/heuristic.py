"""The engine's rule-based player as a bot (see :mod:`arena.engine.bots`).

    python -m belote_bot.bots.heuristic --address HOST:PORT [--token-file FILE] [--concurrency N]

(the token from $BELOTE_TOKEN, or the file)
"""

from __future__ import annotations

import random
import sys
from collections.abc import Sequence

from arena.engine.bots import HeuristicPlayer
from belote_bot.bot import Bot
from belote_bot.types import Action, Observation

__all__ = ["HeuristicBot", "main"]


class HeuristicBot(Bot):
    """Takes with the jack or nine of trump and support, loads points on the partner's tricks,
    otherwise wins cheaply or throws the cheapest card; says belote and declares what it may."""

    name = "heuristic"
    act_inline = True  # tens of microseconds: no thread hop

    def __init__(self, seed: int | str | None = None) -> None:
        self.rng = random.Random(seed)
        self.player = HeuristicPlayer()

    def act(self, obs: Observation) -> Action:
        return Action.of(self.player.act(obs.to_engine(), self.rng))


def main(argv: Sequence[str] | None = None) -> int:
    from belote_bot.cli import bot_main

    return bot_main(HeuristicBot, "python -m belote_bot.bots.heuristic", "Play the rule-based heuristic.",
                    argv)


if __name__ == "__main__":
    sys.exit(main())
