"""The built-in bots: :class:`RandomBot`, :class:`HeuristicBot` and :class:`SearchBot`, each runnable
with ``python -m``.

    python -m belote_bot.bots.random -h
    python -m belote_bot.bots.heuristic -h
    python -m belote_bot.bots.search -h
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from belote_bot.bots.heuristic import HeuristicBot
    from belote_bot.bots.random import RandomBot
    from belote_bot.bots.search import SearchBot

__all__ = ["HeuristicBot", "RandomBot", "SearchBot"]


def __getattr__(name: str) -> Any:
    # loaded on first use, so that ``python -m belote_bot.bots.random`` runs its module once
    if name == "RandomBot":
        from belote_bot.bots.random import RandomBot

        return RandomBot
    if name == "HeuristicBot":
        from belote_bot.bots.heuristic import HeuristicBot

        return HeuristicBot
    if name == "SearchBot":
        from belote_bot.bots.search import SearchBot

        return SearchBot
    raise AttributeError(f"module 'belote_bot.bots' has no attribute {name!r}")
