"""The one class a bot author writes: subclass :class:`Bot`, implement :meth:`Bot.act`."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable
from typing import TypeAlias

from belote_bot.events import Event, MatchInfo, MatchResult, Strike
from belote_bot.types import Action, Observation

__all__ = ["ActResult", "Bot"]

#: what :meth:`Bot.act` may return: an action, its record text ("KH belote") or its code
ActResult: TypeAlias = Action | str | int


class Bot(ABC):
    """A bot: answers each decision of the seats it plays.

    One bot object plays every seat of its process (up to the ``concurrency``
    given to :func:`belote_bot.run`), seats of different matches interleaved,
    so keep per-match state keyed by ``obs.match_id`` and ``obs.seat``.

    ``act`` may be a plain method (it runs inline: keep it quick, or it holds
    up the other seats) or ``async def`` (each request then runs as its own
    task). The hooks may be plain or ``async``; they run in the order the
    referee's messages arrive, and the public events of a message come before
    its action request.
    """

    #: the name shown by the referee (``run(name=...)`` overrides it; default: the class name)
    name: str = ""
    #: the version sent in Hello (default: the SDK's)
    version: str = ""

    @abstractmethod
    def act(self, obs: Observation) -> ActResult | Awaitable[ActResult]:
        """Choose one of ``obs.legal_actions``.

        Raising, or returning anything not legal, is logged with the reason and
        answered as illegal at once: the referee gives a strike and plays its
        fallback action.
        """

    def on_match_start(self, info: MatchInfo) -> Awaitable[None] | None:
        """A match starts for one of this bot's seats."""
        return None

    def on_event(self, event: Event) -> Awaitable[None] | None:
        """A public event (bid, card, trick, declarations, deal result, strike) of a match."""
        return None

    def on_strike(self, strike: Strike) -> Awaitable[None] | None:
        """The referee played a fallback for this bot (it is also logged as a warning)."""
        return None

    def on_match_end(self, result: MatchResult) -> Awaitable[None] | None:
        """A match of one of this bot's seats is over."""
        return None
