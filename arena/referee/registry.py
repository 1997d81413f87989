"""Registered bots and their tokens.

A token is shown once, at registration; only its SHA-256 is kept, in
``bots.json`` of the node's data directory, so a restarted node still knows
its bots.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
from dataclasses import asdict, dataclass
from pathlib import Path

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


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


class BotRegistry:
    def __init__(self, path: Path | None = None) -> None:
        self._path = path
        self._by_id: dict[str, BotEntry] = {}
        self._by_digest: dict[str, BotEntry] = {}
        if path is not None and path.exists():
            for item in json.loads(path.read_text()):
                self._add(BotEntry(**item))

    def _add(self, entry: BotEntry) -> None:
        self._by_id[entry.bot_id] = entry
        self._by_digest[entry.token_sha256] = entry

    def _save(self) -> None:
        if self._path is None:
            return
        self._path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self._path.with_suffix(".tmp")
        tmp.write_text(json.dumps([asdict(e) for e in self._by_id.values()], indent=1))
        os.replace(tmp, self._path)

    def register(self, name: str, token: str | None = None) -> tuple[BotEntry, str]:
        """Register a bot; returns its entry and its token (generated unless given)."""
        if not isinstance(name, str) or not NAME_RE.match(name):
            raise RegistryError(
                f"bad bot name {name!r}: 1 to 64 letters, digits, '_', '.' or '-', starting "
                "with a letter or digit"
            )
        if any(e.name == name for e in self._by_id.values()):
            raise DuplicateBotError(f"a bot named {name!r} is already registered")
        token = token or secrets.token_urlsafe(24)
        if _digest(token) in self._by_digest:
            raise DuplicateBotError("that token is already in use")
        entry = BotEntry(bot_id=f"bot-{secrets.token_hex(4)}", name=name, token_sha256=_digest(token))
        self._add(entry)
        self._save()
        return entry, token

    def authenticate(self, token: str) -> BotEntry | None:
        if not token:
            return None
        return self._by_digest.get(_digest(token))

    def resolve(self, key: str) -> BotEntry:
        """A bot by id or by name."""
        if key in self._by_id:
            return self._by_id[key]
        for e in self._by_id.values():
            if e.name == key:
                return e
        raise UnknownBotError(f"no bot with id or name {key!r}")

    def by_name(self, name: str) -> BotEntry | None:
        return next((e for e in self._by_id.values() if e.name == name), None)

    def all(self) -> list[BotEntry]:
        return sorted(self._by_id.values(), key=lambda e: e.name)
