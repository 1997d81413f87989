"""Who may call what on a node: the admin credential, bot tokens, the registration policy.

A caller shows a credential in the ``authorization: Bearer <token>`` metadata
(a bot's ``Connect`` stream may put its token in ``Hello`` instead). It is
the node's admin credential, a bot's token, or nothing. The :class:`Gate`
answers who the caller is and whether it may do a thing:

- an admin may do everything; a bot token may open its own stream, rotate its
  token and revoke itself; reading (bots, matches, finished records,
  tournaments) is open to anyone unless the node requires a credential for
  reads;
- registering a bot follows the node's :class:`Registration` policy: admins
  only, anyone holding an invite code, or anyone (so many per address and
  window);
- a missing or wrong credential is :class:`Unauthenticated`; a right one for
  the wrong thing is :class:`PermissionDenied`; an address that keeps showing
  wrong credentials or invite codes, or registering too fast, is throttled for
  a while.

Credentials are compared as SHA-256 digests in constant time, and never
logged.
"""

from __future__ import annotations

import asyncio
import hmac
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import NoReturn

from arena.referee.registry import BotEntry, BotRegistry, digest


class AccessError(Exception):
    """Base of the access errors (the gRPC edge maps each to its status code)."""


class Unauthenticated(AccessError):
    """No credential where one is needed, or one this node does not know."""


class PermissionDenied(AccessError):
    """A credential this node knows, for something it does not allow."""


class Throttled(AccessError):
    """Too many wrong credentials, or registrations, from one address: retry later."""


class Registration(StrEnum):
    """Who may register a bot (``serve --registration``)."""

    ADMIN = "admin"
    INVITE = "invite"
    OPEN = "open"


class Role(StrEnum):
    ADMIN = "admin"
    BOT = "bot"
    ANYONE = "anyone"


@dataclass(frozen=True)
class AccessPolicy:
    #: the SHA-256 (hex) of the admin credential; "" means no admin call is possible
    admin_sha256: str = ""
    registration: Registration = Registration.ADMIN
    #: reading needs a credential (an admin's or a bot's)
    private_reads: bool = False
    #: open registration: so many per address per window
    registrations_per_window: int = 5
    #: wrong credentials an address may show per window before it is throttled
    failures_per_window: int = 20
    window_s: float = 60.0


@dataclass(frozen=True)
class Caller:
    role: Role
    #: the bot whose token was shown (role BOT)
    bot: BotEntry | None = None


class SlidingWindow:
    """At most ``limit`` events per key in any ``window_s`` seconds (memory bounded by ``max_keys``)."""

    def __init__(self, limit: int, window_s: float, clock: Callable[[], float] = time.monotonic,
                 max_keys: int = 10_000) -> None:
        self.limit = limit
        self.window_s = window_s
        self.clock = clock
        self.max_keys = max_keys
        self._events: dict[str, deque[float]] = {}

    def _recent(self, key: str) -> deque[float]:
        now = self.clock()
        events = self._events.get(key)
        if events is None:
            if len(self._events) >= self.max_keys:  # forget the addresses quiet for a window
                self._events = {k: v for k, v in self._events.items() if v and now - v[-1] < self.window_s}
            events = self._events[key] = deque()
        while events and now - events[0] >= self.window_s:
            events.popleft()
        return events

    def full(self, key: str) -> bool:
        return len(self._recent(key)) >= self.limit

    def retry_after(self, key: str) -> float:
        events = self._recent(key)
        return max(0.0, self.window_s - (self.clock() - events[0])) if events else 0.0

    def add(self, key: str) -> None:
        self._recent(key).append(self.clock())


class Gate:
    """Decides, for one node, who a caller is and what it may do."""

    def __init__(self, policy: AccessPolicy, registry: BotRegistry,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.policy = policy
        self.registry = registry
        self._failures = SlidingWindow(policy.failures_per_window, policy.window_s, clock)
        self._registrations = SlidingWindow(policy.registrations_per_window, policy.window_s, clock)

    def _known(self, token: str, peer: str) -> Caller | None:
        """Who shows ``token``, by what this node knows now; None for a token it does not know (not
        counted yet). :class:`Throttled` for an address that showed too many wrong ones."""
        if not token:
            return Caller(Role.ANYONE)
        if self.is_admin(token):
            return Caller(Role.ADMIN)
        bot = self.registry.known(token)
        if bot is not None:  # a bot behind the same address as a guesser still connects
            return Caller(Role.BOT, bot)
        if self._failures.full(peer):
            raise self._throttled(peer)
        return None

    def _wrong(self, peer: str) -> NoReturn:
        self._failures.add(peer)
        raise Unauthenticated("unknown or revoked credential (token)")

    def _throttled(self, peer: str) -> Throttled:
        return Throttled(f"too many wrong credentials from this address; retry in "
                         f"{self._failures.retry_after(peer):.0f} s")

    def is_admin(self, token: str) -> bool:
        """Is ``token`` the node's admin credential? (Nothing is counted or looked up.)"""
        admin = self.policy.admin_sha256
        return bool(admin and token) and hmac.compare_digest(digest(token), admin)

    def still_opens(self, credential_sha256: str) -> bool:
        """Does the credential whose SHA-256 this is still open anything here: the admin's, or a
        bot's token not rotated nor revoked since? (Asked of the registry's copy in memory: what
        outlives the showing of a credential, a web session, ends with it.)"""
        admin = self.policy.admin_sha256
        if admin and credential_sha256 and hmac.compare_digest(credential_sha256, admin):
            return True
        return self.registry.by_token_sha256(credential_sha256) is not None

    def caller(self, token: str, peer: str) -> Caller:
        """Who shows ``token``: an admin, a bot, or anyone (no token). A wrong token is
        :class:`Unauthenticated`, counted against ``peer``; too many, :class:`Throttled`.

        Asked of the registry's copy in memory, never its backend: it may run on the event loop.
        A token made on another node an instant ago may be unknown here yet: :meth:`identify`
        waits for the registry to catch up before it says so."""
        who = self._known(token, peer)
        if who is None:
            self._wrong(peer)
        return who

    async def identify(self, token: str, peer: str) -> Caller:
        """:meth:`caller`, but a token this node does not know is looked for again once the
        registry has caught up with the other nodes' changes (a bot registered, or a token
        rotated, on another node a moment ago)."""
        who = self._known(token, peer)
        if who is None:
            await self.registry.catch_up()
            who = self._known(token, peer)
            if who is None:
                self._wrong(peer)
        return who

    async def bot_stream(self, token: str, peer: str) -> BotEntry:
        """The bot a ``Connect`` stream is for: only a bot's own token opens one."""
        if not token:
            raise Unauthenticated("missing bot token: put it in Hello or the authorization metadata")
        who = await self.identify(token, peer)
        if who.bot is None:
            raise PermissionDenied("the admin credential does not open a bot's stream: use the bot's token")
        return who.bot

    @staticmethod
    def require_admin(who: Caller, what: str) -> None:
        if who.role is Role.ADMIN:
            return
        if who.role is Role.ANYONE:
            raise Unauthenticated(f"{what} needs the admin credential")
        raise PermissionDenied(f"{what} needs the admin credential, not a bot's token")

    def require_reader(self, who: Caller) -> None:
        if self.policy.private_reads and who.role is Role.ANYONE:
            raise Unauthenticated("this node requires a credential to read")

    async def register(self, who: Caller, peer: str, invite: str) -> None:
        """May ``who`` register a bot now? Under the invite policy the invite is used up here (in a
        thread: the registry's backend is the broker's)."""
        if who.role is Role.ADMIN:
            return
        policy = self.policy.registration
        if policy is Registration.ADMIN:
            self.require_admin(who, "registering a bot on this node")
        if self._registrations.full(peer):
            raise Throttled(f"too many registrations from this address; retry in "
                            f"{self._registrations.retry_after(peer):.0f} s")
        if policy is Registration.INVITE:
            if self._failures.full(peer):
                # as for wrong tokens: a guesser's address is not answered for a while, whatever it
                # shows (an invite from another address still works)
                raise self._throttled(peer)
            if not await asyncio.to_thread(self.registry.take_invite, invite):  # the broker's, maybe
                self._failures.add(peer)
                raise PermissionDenied("registering a bot on this node needs a valid invite code"
                                       if invite else "registering a bot on this node needs an invite code")
        self._registrations.add(peer)
