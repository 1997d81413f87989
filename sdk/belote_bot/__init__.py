"""Write a Belote or Coinche bot and play it on a Belote Arena referee.

The whole job is one class with one method::

    from belote_bot import Bot, run
    import random
    class MyBot(Bot):
        name = "my-bot"
        def act(self, obs):
            return random.choice(obs.legal_actions)
    run(MyBot(), "localhost:50051", token="...")

``obs`` is an :class:`Observation`: the seat's ``hand``, the public history
(``bids``, ``plays``, ``trick``, ``tricks``, ``trump``, ``taker``, scores) and
``legal_actions``, a list of :class:`Action` that print as the record text
(``"pass"``, ``"90H"``, ``"coinche"``, ``"JH"``, ``"KH belote"``). ``act`` may
return an Action, its text or its code. A plain ``act`` runs in a worker
thread, so a slow search never holds up the bot's other seats; an ``async
def act`` runs on the event loop (see :class:`Bot`). Optional hooks:
``on_match_start``, ``on_event``, ``on_strike``, ``on_match_end`` (see
:class:`Bot`). ``obs.to_engine()`` gives the engine's observation, so
:mod:`arena.engine` players and searchers work unchanged.

Built-in bots: ``python -m belote_bot.bots.random``,
``python -m belote_bot.bots.heuristic`` and ``python -m belote_bot.bots.search``
(``-h`` for the options; the token may come from ``BELOTE_TOKEN``).
"""

from typing import TYPE_CHECKING, Any

from arena.engine.cards import Card
from belote_bot.bot import Bot
from belote_bot.client import SDK_VERSION
from belote_bot.errors import AuthenticationError, BotError, IllegalAnswerError
from belote_bot.events import (
    BidMade,
    CardPlayed,
    DealEnded,
    DealStarted,
    DeclarationsShown,
    Event,
    MatchInfo,
    MatchResult,
    Strike,
    StrikeGiven,
    TrickCompleted,
)
from belote_bot.fleet import run, run_async
from belote_bot.types import Action, Observation, ShownMeld, Trick

if TYPE_CHECKING:
    from belote_bot.bots.heuristic import HeuristicBot
    from belote_bot.bots.random import RandomBot
    from belote_bot.bots.search import SearchBot

__version__ = SDK_VERSION


def __getattr__(name: str) -> Any:
    # the built-in bots load on first use, so that ``python -m belote_bot.bots.random`` runs its
    # module once, as __main__
    if name in ("HeuristicBot", "RandomBot", "SearchBot"):
        from belote_bot import bots

        return getattr(bots, name)
    raise AttributeError(f"module 'belote_bot' has no attribute {name!r}")


__all__ = [
    "Action",
    "AuthenticationError",
    "BidMade",
    "Bot",
    "BotError",
    "Card",
    "CardPlayed",
    "DealEnded",
    "DealStarted",
    "DeclarationsShown",
    "Event",
    "HeuristicBot",
    "IllegalAnswerError",
    "MatchInfo",
    "MatchResult",
    "Observation",
    "RandomBot",
    "SearchBot",
    "ShownMeld",
    "Strike",
    "StrikeGiven",
    "Trick",
    "TrickCompleted",
    "__version__",
    "run",
    "run_async",
]
