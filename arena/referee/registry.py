"""Registered bots, their tokens, and invite codes.

Tokens are made by the node (192 random bits), shown once, and kept only as
their SHA-256: in ``bots.json`` of the node's data directory, or in the broker
when nodes share their bots (see :mod:`arena.node`), so a restarted node still
knows them. A bot's owner may rotate its token or revoke the bot with that
token; a revoked bot keeps its name (its history stays its own) but can no
longer connect. An invite code, made by an admin, is good for one
registration; it is kept hashed too.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import secrets
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Protocol

from arena.datadir import write_private
from arena.records import BOT_NAME_RULE, valid_bot_name


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
    #: the SHA-256 of its token ("" once revoked)
    token_sha256: str
    revoked: bool = False


def digest(secret: str) -> str:
    """The SHA-256 (hex) under which a token or an invite code is kept."""
    return hashlib.sha256(secret.encode()).hexdigest()


def new_token(prefix: str) -> str:
    """A fresh secret of 192 random bits; the prefix keeps it from starting with '-' (an option)."""
    return f"{prefix}_{secrets.token_urlsafe(24)}"


class RegistryBackend(Protocol):
    """Where bot entries and invites are kept: a file for one node, the broker for a cluster."""

    def load(self) -> list[BotEntry]: ...

    def add(self, entry: BotEntry) -> bool:
        """Store a new entry; False if its name is taken (atomically, across nodes)."""
        ...

    def replace(self, entry: BotEntry) -> None:
        """Overwrite the entry of that name (a rotated token, a revocation)."""
        ...

    def add_invite(self, code_sha256: str) -> None: ...

    def take_invite(self, code_sha256: str) -> bool:
        """Use an invite: True once per invite (atomically, across nodes), False after or if unknown."""
        ...


class FileBackend:
    """``bots.json`` (and ``invites.json``) in the node's data directory, or memory with no path."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._entries: dict[str, BotEntry] = {}
        self._invites: set[str] = set()
        if path is not None and path.exists():
            for item in json.loads(path.read_text()):
                e = BotEntry(**item)
                self._entries[e.name] = e
        invites = self._invites_path()
        if invites is not None and invites.exists():
            self._invites = set(json.loads(invites.read_text()))

    def _invites_path(self) -> Path | None:
        return None if self.path is None else self.path.with_name("invites.json")

    def load(self) -> list[BotEntry]:
        return list(self._entries.values())

    def add(self, entry: BotEntry) -> bool:
        if entry.name in self._entries:
            return False
        self._entries[entry.name] = entry
        self._save()
        return True

    def replace(self, entry: BotEntry) -> None:
        self._entries[entry.name] = entry
        self._save()

    def add_invite(self, code_sha256: str) -> None:
        self._invites.add(code_sha256)
        self._save()

    def take_invite(self, code_sha256: str) -> bool:
        if code_sha256 not in self._invites:
            return False
        self._invites.remove(code_sha256)
        self._save()
        return True

    def _save(self) -> None:
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_private(self.path, json.dumps([asdict(e) for e in self._entries.values()], indent=1))
        invites = self._invites_path()
        assert invites is not None
        write_private(invites, json.dumps(sorted(self._invites)))


class BotRegistry:
    def __init__(self, backend: RegistryBackend | Path | None = None) -> None:
        self._backend: RegistryBackend = (
            backend if backend is not None and not isinstance(backend, Path) else FileBackend(backend)
        )
        self._by_id: dict[str, BotEntry] = {}
        self._by_digest: dict[str, BotEntry] = {}
        self._reload()

    def _reload(self) -> None:
        """The entries as the backend has them now (another node may have added, rotated or revoked)."""
        entries = self._backend.load()
        self._by_id = {e.bot_id: e for e in entries}
        self._by_digest = {e.token_sha256: e for e in entries if not e.revoked}

    def register(self, name: str) -> tuple[BotEntry, str]:
        """Register a bot under ``name``; its entry and its token, made here and shown once."""
        if not valid_bot_name(name):
            raise RegistryError(f"bad bot name {name!r}: {BOT_NAME_RULE}")
        token = new_token("bt")
        entry = BotEntry(bot_id=f"bot-{secrets.token_hex(4)}", name=name, token_sha256=digest(token))
        if not self._backend.add(entry):
            raise DuplicateBotError(f"a bot named {name!r} is already registered")
        self._reload()
        return entry, token

    def authenticate(self, token: str) -> BotEntry | None:
        """The bot whose token this is (not revoked), checked against the backend as it is now."""
        if not token:
            return None
        self._reload()
        return self._by_digest.get(digest(token))

    def known(self, token: str) -> BotEntry | None:
        """:meth:`authenticate` against the entries read last, without asking the backend."""
        return self._by_digest.get(digest(token)) if token else None

    def rotate(self, entry: BotEntry) -> tuple[BotEntry, str]:
        """A new token for the bot; the old one stops working."""
        token = new_token("bt")
        rotated = dataclasses.replace(entry, token_sha256=digest(token))
        self._backend.replace(rotated)
        self._reload()
        return rotated, token

    def revoke(self, entry: BotEntry) -> BotEntry:
        revoked = dataclasses.replace(entry, token_sha256="", revoked=True)
        self._backend.replace(revoked)
        self._reload()
        return revoked

    def create_invite(self) -> str:
        code = new_token("inv")
        self._backend.add_invite(digest(code))
        return code

    def take_invite(self, code: str) -> bool:
        return bool(code) and self._backend.take_invite(digest(code))

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
