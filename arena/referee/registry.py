"""Registered bots and their tokens.

A token is shown once, at registration; only its SHA-256 is kept: in
``bots.json`` of the node's data directory, or in Redis when nodes share their
bots (see :mod:`arena.queue`), so a restarted node still knows them.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Protocol

#: a bot's name: 1 to 64 ASCII letters, digits, ``_``, ``.`` or ``-``, starting with a letter or digit
#: (README, docs/protocol.md#string-fields-and-their-values); the whole name must match
NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
NAME_RULE = "1 to 64 letters, digits, '_', '.' or '-', starting with a letter or digit"


def valid_name(name: object) -> bool:
    return isinstance(name, str) and NAME_RE.fullmatch(name) is not None


class RegistryError(ValueError):
    """A bad bot name, a duplicate, or an unknown bot."""


class DuplicateBotError(RegistryError):
    pass


class UnknownBotError(RegistryError):
    pass


@dataclass(frozen=True)
class BotEntry:
    bot_id: str
    name: str
    token_sha256: str


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class RegistryBackend(Protocol):
    """Where bot entries are kept: a file for one node, Redis for a cluster."""

    def load(self) -> list[BotEntry]: ...

    def add(self, entry: BotEntry) -> bool:
        """Store a new entry; False if its name is taken (atomically, across nodes)."""
        ...


class FileBackend:
    """``bots.json`` in the node's data directory (or nothing kept, with no path)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._entries: dict[str, BotEntry] = {}
        if path is not None and path.exists():
            for item in json.loads(path.read_text()):
                e = BotEntry(**item)
                self._entries[e.name] = e

    def load(self) -> list[BotEntry]:
        return list(self._entries.values())

    def add(self, entry: BotEntry) -> bool:
        if entry.name in self._entries:
            return False
        self._entries[entry.name] = entry
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_suffix(".tmp")
            tmp.write_text(json.dumps([asdict(e) for e in self._entries.values()], indent=1))
            os.replace(tmp, self.path)
        return True


class BotRegistry:
    def __init__(self, backend: RegistryBackend | Path | None = None) -> None:
        self._backend: RegistryBackend = (
            backend if backend is not None and not isinstance(backend, Path) else FileBackend(backend)
        )
        self._by_id: dict[str, BotEntry] = {}
        self._by_digest: dict[str, BotEntry] = {}
        self._reload()

    def _reload(self) -> None:
        for entry in self._backend.load():
            self._add(entry)

    def _add(self, entry: BotEntry) -> None:
        self._by_id[entry.bot_id] = entry
        self._by_digest[entry.token_sha256] = entry

    def register(self, name: str, token: str | None = None) -> tuple[BotEntry, str]:
        """Register a bot; returns its entry and its token (generated unless given)."""
        if not valid_name(name):
            raise RegistryError(f"bad bot name {name!r}: {NAME_RULE}")
        # a prefix keeps a token from starting with '-' (a command line would read it as an option)
        token = token or f"bt_{secrets.token_urlsafe(24)}"
        self._reload()
        if _digest(token) in self._by_digest:
            raise DuplicateBotError("that token is already in use")
        entry = BotEntry(bot_id=f"bot-{secrets.token_hex(4)}", name=name, token_sha256=_digest(token))
        if not self._backend.add(entry):
            raise DuplicateBotError(f"a bot named {name!r} is already registered")
        self._add(entry)
        return entry, token

    def authenticate(self, token: str) -> BotEntry | None:
        if not token:
            return None
        digest = _digest(token)
        if digest not in self._by_digest:
            self._reload()  # registered on another node since
        return self._by_digest.get(digest)

    def resolve(self, key: str) -> BotEntry:
        """A bot by id or by name."""
        for attempt in range(2):
            if key in self._by_id:
                return self._by_id[key]
            for e in self._by_id.values():
                if e.name == key:
                    return e
            if attempt == 0:
                self._reload()
        raise UnknownBotError(f"no bot with id or name {key!r}")

    def by_name(self, name: str) -> BotEntry | None:
        for attempt in range(2):
            found = next((e for e in self._by_id.values() if e.name == name), None)
            if found is not None or attempt:
                return found
            self._reload()  # registered on another node since
        return None

    def all(self) -> list[BotEntry]:
        self._reload()
        return sorted(self._by_id.values(), key=lambda e: e.name)
