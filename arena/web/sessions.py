"""The browsers signed in to read a node with private reads: random ids in a bounded table.

Signing in (``POST /api/v1/session``) checks a credential once; the browser's
cookie then holds a random session id (256 bits), never the credential, and
the node maps that id to a read-only session. So a stolen cookie reads, and
only until it expires or its browser signs out; it never becomes the admin's
or a bot's token, whatever credential opened it. The table is bounded: so
many sessions per credential (its oldest goes first) and in all (the oldest
goes first); a session ends with its cookie (:data:`SESSION_S`), at sign-out,
or when the node restarts (its browser signs in again).

A session is worth no more than the credential that opened it: each use asks
the node whether that credential still opens anything here (``opens``, given
the SHA-256 the session keeps). A bot's token rotated or revoked through any
node is known to every node's registry within a second (the broker's notices:
:data:`arena.node.bots.CUT_BOUND_S`), so from then on every session it opened,
on every node, reads nothing, and is forgotten.
"""

from __future__ import annotations

import hashlib
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

#: how long a browser stays signed in (its cookie's max-age)
SESSION_S = 12 * 3600
#: sessions at once in all, and per credential
MAX_SESSIONS = 4096
PER_CREDENTIAL = 16


@dataclass(frozen=True, slots=True)
class Session:
    #: the SHA-256 of the credential that opened it (to bound the sessions per credential, and to
    #: end them when it stops opening anything)
    holder: str
    expires: float


def _opens_anything(credential_sha256: str) -> bool:
    return True


class Sessions:
    """Session id -> read-only session, oldest first; each expires ``ttl`` seconds after sign-in,
    or as soon as ``opens(the SHA-256 of its credential)`` says no."""

    def __init__(self, ttl: float = SESSION_S, max_sessions: int = MAX_SESSIONS,
                 per_credential: int = PER_CREDENTIAL, clock: Callable[[], float] = time.monotonic,
                 opens: Callable[[str], bool] = _opens_anything) -> None:
        self.ttl = ttl
        self.max_sessions = max_sessions
        self.per_credential = per_credential
        self.clock = clock
        #: whether the credential of this SHA-256 still opens anything on the node (a bot's token not
        #: rotated nor revoked since): asked at each use, of what the node holds in memory
        self.opens = opens
        self._sessions: OrderedDict[str, Session] = OrderedDict()

    def __len__(self) -> int:
        return len(self._sessions)

    def open(self, credential: str) -> str:
        """A new session for a browser that showed ``credential`` (already checked); its id."""
        now = self.clock()
        self._expire(now)
        holder = hashlib.sha256(credential.encode()).hexdigest()
        mine = [sid for sid, s in self._sessions.items() if s.holder == holder]
        for sid in mine[:max(0, len(mine) - self.per_credential + 1)]:
            del self._sessions[sid]
        while len(self._sessions) >= self.max_sessions:
            self._sessions.popitem(last=False)
        sid = secrets.token_urlsafe(32)
        self._sessions[sid] = Session(holder, now + self.ttl)
        return sid

    def valid(self, sid: str) -> bool:
        """Whether ``sid`` names a session that has not expired, whose credential still opens
        anything here."""
        found = self._sessions.get(sid) if sid else None
        if found is None:
            return False
        if found.expires <= self.clock() or not self.opens(found.holder):
            del self._sessions[sid]
            return False
        return True

    def close(self, sid: str) -> None:
        """Sign-out: the session is forgotten."""
        self._sessions.pop(sid, None)

    def _expire(self, now: float) -> None:
        # sessions expire in the order they opened: the expired ones are the first
        while self._sessions:
            sid, first = next(iter(self._sessions.items()))
            if first.expires > now:
                return
            del self._sessions[sid]
