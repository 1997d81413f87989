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
    given to :func:`belote_bot.run`, on each node), seats of different matches
    interleaved, so keep per-match state keyed by ``obs.match_id`` and
    ``obs.seat``.

    Where the code runs:

    - a plain ``act`` runs in a worker thread (one per seat acting at once),
      so a bot that searches for half a second never holds up the stream's
      reads, pings or its other seats. ``act`` may therefore run in several
      threads at once, for different seats: state it shares across seats
      (and with the hooks) needs a lock, or keep it per ``(match_id, seat)``.
      Pure-Python work shares the interpreter lock: a CPU-bound act slows the
      other seats' answers by a few milliseconds, not by its whole search;
    - set :attr:`act_inline` to run a plain ``act`` on the event loop instead:
      for acts that take microseconds it saves the thread hop (some tens of
      microseconds), but while it runs nothing else is read or answered;
    - an ``async def act`` runs on the event loop, each request as its own
      task (await slow work, e.g. ``loop.run_in_executor``);
    - the hooks (``on_match_start``, ``on_event``, ``on_strike``,
      ``on_match_end``) run on the event loop, plain or ``async``, in the order
      the referee's messages arrive; the public events of a message come
      before its action requests. They may run while an ``act`` of another
      seat (or of the same match, when the referee ended it) is running.

    When the stream to the referee drops, the answers of acts still running
    are dropped: the referee stopped waiting for them (it asks again once the
    bot is back, or plays a fallback for a seat whose bot stays away).
    """

    #: the name shown by the referee (``run(name=...)`` overrides it; default: the class name)
    name: str = ""
    #: the bot's own version, sent in Hello (default: the SDK's name and version, as text). A label of
    #: 1 to 32 letters, digits, ``_``, ``.`` or ``-`` (``"2"``, ``"1.4-rc1"``) is also the version the
    #: arena keeps and tests: a new one plays an SPRT against the promoted one before it plays as the bot
    version: str = ""
    #: run a plain ``act`` on the event loop rather than in a worker thread (for acts of microseconds)
    act_inline: bool = False

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
