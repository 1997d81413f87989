"""Registered bots, their tokens, and invite codes.

Tokens are made by the node (192 random bits), shown once, and kept only as
their SHA-256: in ``bots.json`` of the node's data directory, or in the broker
when nodes share their bots (see :mod:`arena.node`), so a restarted node still
knows them. A bot's owner may rotate its token or revoke the bot with that
token; a revoked bot keeps its name (its history stays its own) but can no
longer connect. An invite code, made by an admin, is good for one
registration; it is kept hashed too.

The node reads the registry from memory: :class:`BotRegistry` keeps every
entry, indexed by id, name and token digest, with the names in order for
paging, so that authenticating a caller, seating a bot or listing a page of
bots costs the same with 5 or 50,000 bots and never waits on the backend.
What touches the backend (a write, a read of stored entries) blocks: the node
calls it from a thread, never its event loop. The copy is kept current:

- a backend of one node (:class:`FileBackend`) changes only through this
  registry, which applies each write to its copy as it makes it;
- a backend shared by nodes (the broker's, ``notifies``) announces every change
  to every node, this one included; the node's notice reader
  (:mod:`arena.node.notices`) re-reads the changed entries and applies them
  here (:meth:`BotRegistry.refresh`), in order, or re-reads everything
  (:meth:`BotRegistry.load`) when it may have missed some.
"""

from __future__ import annotations

import bisect
import dataclasses
import hashlib
import json
import secrets
import threading
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

from arena.datadir import write_private
from arena.records import BOT_NAME_RULE, valid_bot_name
from arena.referee.versions import Version, VersionError, promoted

_V = TypeVar("_V")


class RegistryError(ValueError):
    """A bad bot name, a duplicate, or an unknown bot."""


class DuplicateBotError(RegistryError):
    pass


class UnknownBotError(RegistryError):
    pass


class StaleTokenError(RegistryError):
    """The token shown was rotated or revoked meanwhile (on this node or another)."""


class RegistryUnavailable(RegistryError):
    """The backend lost the registry (a Redis that restarted empty): the node cannot tell who is
    registered until it restarts on it."""


@dataclass(frozen=True)
class BotEntry:
    bot_id: str
    name: str
    #: the SHA-256 of its token ("" once revoked)
    token_sha256: str
    revoked: bool = False
    #: each version it connected with (:mod:`arena.referee.versions`); none for a bot that never said one
    versions: tuple[Version, ...] = ()
    #: it asked, at its registration, to play the ladder whenever it is connected
    ladder: bool = False
    #: who owns it, as the admin said when registering it or making its invite ("": nobody said, and it
    #: is its own owner): the version tests take turns by owner (:func:`owner_of`)
    owner: str = ""
    #: when its version tests of the last day started (unix seconds, oldest first): the arena tests a
    #: bot's versions a number of times a day at most (arena.node.versions)
    tests_started: tuple[int, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        if not self.versions:
            del data["versions"]  # as entries were before versions: older nodes read them
        else:
            data["versions"] = [v.to_dict() for v in self.versions]
        for optional in ("ladder", "owner", "tests_started"):  # as entries were before them
            if not data[optional]:
                del data[optional]
        if self.tests_started:
            data["tests_started"] = list(self.tests_started)
        return data

    def to_json(self) -> str:
        return json.dumps(self.to_dict())

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> BotEntry:
        versions = tuple(Version.from_dict(v) for v in data.get("versions") or ())
        return cls(bot_id=data["bot_id"], name=data["name"], token_sha256=data["token_sha256"],
                   revoked=bool(data.get("revoked", False)), versions=versions,
                   ladder=bool(data.get("ladder", False)), owner=str(data.get("owner") or ""),
                   tests_started=tuple(int(t) for t in data.get("tests_started") or ()))

    @classmethod
    def from_json(cls, text: str) -> BotEntry:
        return cls.from_dict(json.loads(text))

    @property
    def owner_of(self) -> str:
        """Whom its version tests count against: its owner, or the bot itself when nobody said."""
        return self.owner or self.name

    @property
    def promoted_version(self) -> str:
        """The version it plays as in tournaments and the ladder ("": none said)."""
        p = promoted(self.versions)
        return "" if p is None else p.version


def digest(secret: str) -> str:
    """The SHA-256 (hex) under which a token or an invite code is kept."""
    return hashlib.sha256(secret.encode()).hexdigest()


#: an invite made for an owner ends with this and the owner's name (neither a token's nor a name's character)
OWNER_SEP = "@"
OWNER_RULE = "an owner is named as a bot is: " + BOT_NAME_RULE


def check_owner(owner: str) -> str:
    """``owner``, if it names one ("" names nobody)."""
    if owner and not valid_bot_name(owner):
        raise RegistryError(f"bad owner {owner[:80]!r}: {OWNER_RULE}")
    return owner


def invite_owner(code: str) -> str:
    """Whom the invite ``code`` was made for ("": nobody said)."""
    _, sep, owner = code.rpartition(OWNER_SEP)
    return owner if sep and valid_bot_name(owner) else ""


def new_token(prefix: str) -> str:
    """A fresh secret of 192 random bits; the prefix keeps it from starting with '-' (an option)."""
    return f"{prefix}_{secrets.token_urlsafe(24)}"


class RegistryBackend(Protocol):
    """Where bot entries and invites are kept: a file for one node, the broker for a cluster.

    Every method blocks on the backend (call it from a thread)."""

    #: every change is announced to every node (which then calls :meth:`BotRegistry.refresh`);
    #: False: the registry is the backend's only writer and applies its own writes
    @property
    def notifies(self) -> bool: ...

    def load(self) -> list[BotEntry]: ...

    def get(self, names: Sequence[str]) -> list[BotEntry]:
        """The stored entries of those of ``names`` that are registered."""
        ...

    def add(self, entry: BotEntry) -> bool:
        """Store a new entry; False if its name is taken (atomically, across nodes)."""
        ...

    def update(self, name: str, change: Callable[[BotEntry], BotEntry | None]) -> BotEntry | None:
        """Replace the stored entry of ``name`` by ``change(stored)`` atomically (no other write comes
        between the read and the write); None, writing nothing, if there is no such entry or
        ``change`` returns None."""
        ...

    def add_invite(self, code_sha256: str) -> None: ...

    def take_invite(self, code_sha256: str) -> bool:
        """Use an invite: True once per invite (atomically, across nodes), False after or if unknown."""
        ...


class FileBackend:
    """``bots.json`` (and ``invites.json``) in the node's data directory, or memory with no path."""

    notifies = False

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._entries: dict[str, BotEntry] = {}
        self._invites: set[str] = set()
        self._lock = threading.Lock()  # the node writes from threads
        if path is not None and path.exists():
            for item in json.loads(path.read_text()):
                e = BotEntry.from_dict(item)
                self._entries[e.name] = e
        invites = self._invites_path()
        if invites is not None and invites.exists():
            self._invites = set(json.loads(invites.read_text()))

    def _invites_path(self) -> Path | None:
        return None if self.path is None else self.path.with_name("invites.json")

    def load(self) -> list[BotEntry]:
        with self._lock:
            return list(self._entries.values())

    def get(self, names: Sequence[str]) -> list[BotEntry]:
        with self._lock:
            return [self._entries[n] for n in dict.fromkeys(names) if n in self._entries]

    def add(self, entry: BotEntry) -> bool:
        with self._lock:
            if entry.name in self._entries:
                return False
            self._entries[entry.name] = entry
            self._save()
            return True

    def update(self, name: str, change: Callable[[BotEntry], BotEntry | None]) -> BotEntry | None:
        with self._lock:
            stored = self._entries.get(name)
            new = None if stored is None else change(stored)
            if new is not None:
                self._entries[name] = new
                self._save()
            return new

    def add_invite(self, code_sha256: str) -> None:
        with self._lock:
            self._invites.add(code_sha256)
            self._save()

    def take_invite(self, code_sha256: str) -> bool:
        with self._lock:
            if code_sha256 not in self._invites:
                return False
            self._invites.remove(code_sha256)
            self._save()
            return True

    def _save(self) -> None:
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_private(self.path, json.dumps([e.to_dict() for e in self._entries.values()], indent=1))
        invites = self._invites_path()
        assert invites is not None
        write_private(invites, json.dumps(sorted(self._invites)))


@dataclass
class _Entries:
    """The registry's copy of the entries, indexed."""

    by_id: dict[str, BotEntry] = field(default_factory=dict)
    by_name: dict[str, BotEntry] = field(default_factory=dict)
    #: the entries not revoked, by token digest
    by_digest: dict[str, BotEntry] = field(default_factory=dict)
    #: every name, sorted, and the entries in the same order (a page of bots is a slice)
    names: list[str] = field(default_factory=list)
    ordered: list[BotEntry] = field(default_factory=list)

    @classmethod
    def of(cls, entries: Iterable[BotEntry]) -> _Entries:
        out = cls()
        for e in entries:
            out.by_id[e.bot_id] = out.by_name[e.name] = e
        out.by_digest = {e.token_sha256: e for e in out.by_id.values() if not e.revoked}
        out.names = sorted(out.by_name)
        out.ordered = [out.by_name[n] for n in out.names]
        return out

    def put(self, entry: BotEntry) -> None:
        old = self.by_id.get(entry.bot_id)
        if old is not None and self.by_digest.get(old.token_sha256) is old:
            del self.by_digest[old.token_sha256]
        if old is not None and old.name != entry.name:  # names never change; a stored oddity
            self.by_name.pop(old.name, None)
            at = bisect.bisect_left(self.names, old.name)
            del self.names[at], self.ordered[at]
        at = bisect.bisect_left(self.names, entry.name)
        if entry.name in self.by_name:
            self.ordered[at] = entry
        else:
            self.names.insert(at, entry.name)
            self.ordered.insert(at, entry)
        self.by_id[entry.bot_id] = self.by_name[entry.name] = entry
        if not entry.revoked:
            self.by_digest[entry.token_sha256] = entry


class PerEntry(Generic[_V]):
    """A value made from a bot's entry (a serialized row, say), kept until the entry changes: a
    page of many bots then costs a lookup a bot. One value a registered bot at most."""

    def __init__(self, make: Callable[[BotEntry], _V]) -> None:
        self.make = make
        self._kept: dict[str, tuple[BotEntry, _V]] = {}

    def values(self, entries: Iterable[BotEntry]) -> list[_V]:
        """The value of each entry, in order (a tight loop: a page may hold a thousand)."""
        kept, make = self._kept, self.make
        out: list[_V] = []
        add = out.append
        for entry in entries:
            value = kept.get(entry.bot_id)
            if value is None or value[0] is not entry:  # new, or changed since (entries are never mutated)
                value = kept[entry.bot_id] = (entry, make(entry))
            add(value[1])
        return out


async def _nothing_to_catch_up() -> None:
    return None


class BotRegistry:
    """The bots of a node, read from memory; see the module's docstring for how it is kept current.

    The reads (:meth:`authenticate`, :meth:`by_name`, :meth:`page`, ...) touch only the copy and
    may run on the event loop. :meth:`register`, :meth:`rotate`, :meth:`revoke`, the invites,
    :meth:`load` and :meth:`refresh` block on the backend: run them in a thread.
    """

    def __init__(self, backend: RegistryBackend | Path | None = None, *, load: bool = True) -> None:
        self._backend: RegistryBackend = (
            backend if backend is not None and not isinstance(backend, Path) else FileBackend(backend)
        )
        self._entries = _Entries()
        self._lock = threading.Lock()  # the copy changes from threads; the loop reads it
        #: why the registry cannot be read ("": it can): the backend lost it
        self.unavailable = ""
        #: waits until the copy has caught up with the changes other nodes made so far (set by the
        #: node's notice reader; a backend of one node has none to catch up with)
        self.catch_up: Callable[[], Awaitable[None]] = _nothing_to_catch_up
        if load:
            self.load()

    @property
    def notified(self) -> bool:
        """Whether changes reach the copy through the backend's notices (else each write applies its own)."""
        return self._backend.notifies

    # ------------------------------------------------------------ the backend (blocking)
    def load(self) -> None:
        """Read every entry from the backend and make it the copy (another node may have changed any)."""
        fresh = _Entries.of(self._backend.load())  # built outside the lock: readers never wait on it
        with self._lock:
            self._entries = fresh

    def refresh(self, names: Sequence[str]) -> list[BotEntry]:
        """Read the entries of ``names`` from the backend into the copy (they changed); the fresh ones."""
        fresh = self._backend.get(names)
        self._apply(fresh)
        return fresh

    def _apply(self, entries: Iterable[BotEntry]) -> None:
        with self._lock:
            for entry in entries:
                self._entries.put(entry)

    def _applied(self, entry: BotEntry) -> BotEntry:
        """A write made here: into the copy now, unless the backend's notices bring it."""
        if not self._backend.notifies:
            self._apply([entry])
        return entry

    def register(self, name: str, ladder: bool = False, owner: str = "") -> tuple[BotEntry, str]:
        """Register a bot under ``name`` (asking to play the ladder, with ``ladder``; owned by ``owner``);
        its entry and its token, made here and shown once."""
        if not valid_bot_name(name):
            raise RegistryError(f"bad bot name {name!r}: {BOT_NAME_RULE}")
        check_owner(owner)
        token = new_token("bt")
        entry = BotEntry(bot_id=f"bot-{secrets.token_hex(4)}", name=name, token_sha256=digest(token),
                         ladder=ladder, owner=owner)
        if not self._backend.add(entry):
            raise DuplicateBotError(f"a bot named {name!r} is already registered")
        # a new bot: nothing newer of it can be in the copy, so it goes in now, notices or not
        with self._lock:
            if entry.bot_id not in self._entries.by_id:
                self._entries.put(entry)
        return entry, token

    def stored(self, name: str) -> BotEntry | None:
        """The entry of ``name`` as the backend has it now (None: not registered)."""
        found = self._backend.get([name])
        return found[0] if found else None

    def rotate(self, entry: BotEntry) -> tuple[BotEntry, str]:
        """A new token for the bot whose token has the digest ``entry.token_sha256``; the old one stops
        working. :class:`StaleTokenError` if that token was rotated or revoked meanwhile."""
        token = new_token("bt")

        def change(stored: BotEntry) -> BotEntry | None:
            if stored.revoked or stored.token_sha256 != entry.token_sha256:
                return None
            return dataclasses.replace(stored, token_sha256=digest(token))

        rotated = self._backend.update(entry.name, change)
        if rotated is None:
            raise StaleTokenError("this token was rotated or revoked meanwhile")
        return self._applied(rotated), token

    def revoke(self, name: str) -> BotEntry:
        """Revoke the bot for good; :class:`UnknownBotError` if there is none of that name."""
        revoked = self._backend.update(
            name, lambda stored: dataclasses.replace(stored, token_sha256="", revoked=True))
        if revoked is None:
            raise UnknownBotError(f"no bot named {name!r}")
        return self._applied(revoked)

    def update_versions(
        self, name: str, change: Callable[[tuple[Version, ...]], tuple[Version, ...] | None],
        *, strict: bool = False,
    ) -> BotEntry | None:
        """Change the versions of bot ``name`` atomically (:mod:`arena.referee.versions`' changes);
        the entry written, or None when ``change`` returns None or raises :class:`VersionError` (it
        no longer applies: another node made the same change first; ``strict`` raises it instead),
        or there is no such bot (or it is revoked)."""

        def apply(stored: BotEntry) -> BotEntry | None:
            versions = change(stored.versions)
            return None if versions is None else dataclasses.replace(stored, versions=versions)

        return self.update_entry(name, apply, strict=strict)

    def update_entry(self, name: str, change: Callable[[BotEntry], BotEntry | None], *,
                     strict: bool = False) -> BotEntry | None:
        """Change the entry of bot ``name`` atomically, as :meth:`update_versions` does its versions (a
        version test's start changes its versions and its ``tests_started`` in one step)."""

        def apply(stored: BotEntry) -> BotEntry | None:
            if stored.revoked:
                return None
            try:
                return change(stored)
            except VersionError:
                if strict:
                    raise
                return None

        changed = self._backend.update(name, apply)
        return None if changed is None else self._applied(changed)

    def create_invite(self, owner: str = "") -> str:
        """A code good for one registration; with ``owner``, the bot registered with it is theirs (the
        code carries the owner's name after an ``@``: kept only as its digest, it cannot be changed)."""
        code = new_token("inv") + (f"{OWNER_SEP}{check_owner(owner)}" if owner else "")
        self._backend.add_invite(digest(code))
        return code

    def take_invite(self, code: str) -> bool:
        return bool(code) and self._backend.take_invite(digest(code))

    # ------------------------------------------------------------ the copy (no I/O)
    def authenticate(self, token: str) -> BotEntry | None:
        """The bot whose token this is (not revoked)."""
        return self._entries.by_digest.get(digest(token)) if token else None

    def by_token_sha256(self, token_sha256: str) -> BotEntry | None:
        """The bot whose token has this SHA-256 (not revoked, nor rotated since)."""
        return self._entries.by_digest.get(token_sha256) if token_sha256 else None

    #: the same question for a throttled address (kept as its own name: it never asks the backend)
    known = authenticate

    def by_id(self, bot_id: str) -> BotEntry | None:
        return self._entries.by_id.get(bot_id)

    def by_name(self, name: str) -> BotEntry | None:
        return self._entries.by_name.get(name)

    def resolve(self, key: str) -> BotEntry:
        """A bot by id or by name."""
        entries = self._entries
        found = entries.by_id.get(key) or entries.by_name.get(key)
        if found is None:
            raise UnknownBotError(f"no bot with id or name {key!r}")
        return found

    def check(self) -> None:
        """Raise :class:`RegistryUnavailable` if the backend lost the registry."""
        if self.unavailable:
            raise RegistryUnavailable(self.unavailable)

    def count(self) -> int:
        return len(self._entries.names)

    def page(self, offset: int, limit: int) -> list[BotEntry]:
        """The bots from the ``offset``-th on, by name, at most ``limit`` of them."""
        with self._lock:
            return self._entries.ordered[offset:offset + max(0, limit)]

    def all(self) -> list[BotEntry]:
        """Every bot, by name (a cost that grows with the registry: for tests and small tools)."""
        return self.page(0, self.count())
