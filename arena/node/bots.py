"""The bot registry of the nodes of a queue: kept in the broker, current on every node.

Every node holds the whole registry in memory (:class:`~arena.referee.registry.BotRegistry`)
and reads it from there: authenticating a caller, seating a bot, a page of
``ListBots`` never wait on the broker. Every write (a registration, a rotated
token, a revocation) announces itself with a ``bot`` notice in the same atomic
step (:mod:`arena.queue.broker`); each node's :class:`~arena.node.notices.NoticeWatcher`
re-reads the entries named and applies them, then the node cuts the streams
opened with a token that no longer opens one (a revoked bot's, a rotated
token's): within milliseconds on every node while Redis answers, and well
within :data:`CUT_BOUND_S` (docs/protocol.md#one-stream-per-token). A node that may have
missed notices re-reads the whole registry, in the watcher's thread.

If the store lost the arena's data (a Redis that restarted empty) the node
keeps what it knew and says so for every read of the registry (``ListBots``,
``GetBot``, the web's bot pages): UNAVAILABLE, "lost the arena's data".
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import TypeVar

from arena.node.notices import NoticeWatcher
from arena.queue import BOT_NOTICE, Broker, BrokerError
from arena.referee.node import Node
from arena.referee.registry import BotEntry, BotRegistry, RegistryUnavailable

#: the time within which a rotation or a revocation cuts the old token's streams on every node whose
#: broker answers (seconds): what docs/protocol.md promises and tests/cluster/test_token_cut.py checks
CUT_BOUND_S = 1.0
#: tries of a compare-and-set of an entry that other nodes keep changing under it
UPDATE_TRIES = 10
#: what every failure of the registry's store says first (the words the CLI recognizes as the node's)
STORE = "the tournament queue"

_T = TypeVar("_T")


class BrokerRegistryBackend:
    """The bot registry kept in the broker, shared by every node; each change announced."""

    notifies = True

    def __init__(self, broker: Broker) -> None:
        self.broker = broker

    def _call(self, call: Callable[[], _T]) -> _T:
        try:
            return call()
        except BrokerError as e:
            raise RegistryUnavailable(f"{STORE}: {e}") from None

    def load(self) -> list[BotEntry]:  # the watcher's, in its thread: the broker's own errors
        return [BotEntry.from_json(e) for e in self.broker.bot_entries()]

    def get(self, names: Sequence[str]) -> list[BotEntry]:
        return [BotEntry.from_json(e) for e in self._call(lambda: self.broker.get_bots(names)).values()]

    def add(self, entry: BotEntry) -> bool:
        return self._call(lambda: self.broker.add_bot(entry.name, entry.to_json()))

    def update(self, name: str, change: Callable[[BotEntry], BotEntry | None]) -> BotEntry | None:
        for _ in range(UPDATE_TRIES):
            stored = self._call(lambda: self.broker.get_bots([name])).get(name)
            if stored is None:
                return None
            new = change(BotEntry.from_json(stored))
            if new is None:
                return None
            text = new.to_json()
            if self._call(lambda: self.broker.replace_bot(name, text, expect=stored)):  # noqa: B023
                return new
        raise RegistryUnavailable(f"{STORE}: the entry of bot {name} kept changing while it was updated")

    def add_invite(self, code_sha256: str) -> None:
        self._call(lambda: self.broker.add_invite(code_sha256))

    def take_invite(self, code_sha256: str) -> bool:
        return self._call(lambda: self.broker.take_invite(code_sha256))


def keep_current(watcher: NoticeWatcher, registry: BotRegistry, node: Node,
                 loop: asyncio.AbstractEventLoop) -> None:
    """Keep ``registry`` (``node``'s) current from ``watcher``'s notices, and cut what they end."""

    def changed(names: list[str]) -> None:
        fresh = registry.refresh(list(dict.fromkeys(names)))
        loop.call_soon_threadsafe(node.enforce_registry, [e.bot_id for e in fresh])

    def reread() -> None:
        registry.load()
        loop.call_soon_threadsafe(node.enforce_registry, None)

    def lost(error: BrokerError) -> None:
        registry.unavailable = f"{STORE}: {error}"

    watcher.on(BOT_NOTICE, changed)
    watcher.on_gap(reread)
    watcher.on_lost(lost)
    registry.catch_up = watcher.caught_up
