"""A referee node: its bots, its matches, their spectators and records.

Everything outside the referee goes through :class:`Node`'s methods: the
gRPC edge (:mod:`arena.referee.service`), the queue worker of
:mod:`arena.node`, the harness. Each running match on the node is one
:class:`LiveMatch`. Once it is over its record is in the :class:`MatchStore`
and the node keeps nothing else of it but a small :class:`MatchSummary`
among the :data:`RECENT_SUMMARIES` latest: a node's memory does not grow
with the matches it has played. A late watcher of a finished match gets its
public events from :attr:`Node.replays` (:mod:`arena.referee.replays`): built
once from the record, off the event loop, and kept within a bound; a match that
ends here hands over the events it published.

Errors are :class:`NodeError` subclasses, picked by type; the edge maps them
to gRPC status codes.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import secrets
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from belote.arena.v1 import bot_service_pb2 as bpb
from belote.arena.v1 import game_pb2 as pb

from arena.datadir import private_dir
from arena.edge.guard import Tarpit
from arena.edge.rates import ReadRates
from arena.engine import EngineError, Ruleset
from arena.engine.dealing import derive_seed
from arena.metrics import NodeMetrics
from arena.records import (
    BOT_NAME_RULE,
    MAX_DEALS,
    MAX_TARGET,
    MatchRecord,
    ResultReason,
    RulesetSpec,
    valid_bot_name,
)
from arena.referee.access import Gate, Unauthenticated
from arena.referee.builds import BuildFailed
from arena.referee.convert import result_to_proto
from arena.referee.limits import Limits, NodeConfig
from arena.referee.live import EventFeed, LiveMatch, MatchState, MatchSummary
from arena.referee.registry import (
    BotEntry,
    BotRegistry,
    DuplicateBotError,
    RegistryError,
    RegistryUnavailable,
    StaleTokenError,
    UnknownBotError,
    check_owner,
)
from arena.referee.replay_views import (
    RecordSource,
    WatchReplay,
    facts_view,
    record_view,
    watch_view,
)
from arena.referee.replays import FACTS, RECORD, WATCH, Measured, ReplayFull, Replays, ReplaySlot
from arena.referee.runner import MatchSpec, Seat
from arena.referee.sessions import BotLink, Hub, Writer
from arena.referee.store import MatchStore, StoreError, UnreadableRecordError, valid_match_id
from arena.referee.versions import (
    MAX_VERSIONS,
    VERSION_RULE,
    VersionError,
    add_games,
    player_key,
    promote,
    seen,
    split_key,
    valid_version,
)

if TYPE_CHECKING:  # loaded by the node that makes analyses (arena.node.run), not by every node
    from arena.referee.analyses import Analyses

__all__ = [
    "AlreadyExists", "BotNotConnected", "BotStatus", "DamagedRecord", "FailedPrecondition",
    "InvalidArgument", "Limits", "LiveMatch", "MatchState", "MatchSummary", "NoFreeSeats", "Node",
    "NodeConfig", "NodeError", "NotFound", "ResourceExhausted", "SeatingError", "Unavailable", "UnknownBot",
    "check_seats",
]

log = logging.getLogger("arena.referee")

_V = TypeVar("_V", bound=Measured)


class NodeError(Exception):
    """Base of the node's errors; the gRPC edge maps each subclass to a status code."""


class NotFound(NodeError):
    pass


class InvalidArgument(NodeError):
    pass


class FailedPrecondition(NodeError):
    pass


class ResourceExhausted(NodeError):
    pass


class AlreadyExists(NodeError):
    pass


class Unavailable(NodeError):
    """What the node reads from cannot be read now: the queue out of reach, or a Redis that lost the
    arena's data. Retry later."""


class SeatingError(NodeError):
    """A match's bots cannot be seated here now (another node, or later, may seat them)."""


class UnknownBot(SeatingError, NotFound):
    pass


class BotNotConnected(SeatingError, FailedPrecondition):
    pass


class NoFreeSeats(SeatingError, ResourceExhausted):
    pass


class DamagedRecord(FailedPrecondition):
    """A stored record that cannot be read back (a damaged file): the match cannot be served."""


@dataclass(frozen=True, slots=True)
class BotStatus:
    """A registered bot as this node sees it now: by the link its name seats (:meth:`Node.play_link`),
    so a bot with versions is connected when its promoted version is."""

    bot_id: str
    name: str
    connected: bool
    version: str
    concurrency: int
    seats_in_use: int
    revoked: bool


#: finished matches whose summary the node keeps in memory, the latest first to be listed
#: (``summaries``); their records are in the store, and nothing else of them is kept
RECENT_SUMMARIES = 100



class Node:
    def __init__(
        self, config: NodeConfig | None = None, *, registry: BotRegistry | None = None,
        store: MatchStore | None = None, metrics: NodeMetrics | None = None,
    ) -> None:
        config = config or NodeConfig()
        self.config = config
        self.node_id = config.node_id or f"node-{secrets.token_hex(3)}"
        data = config.data_dir
        if data is not None:
            private_dir(data)
        self._registry = registry or BotRegistry(data / "bots.json" if data else None)
        self.gate = Gate(config.access, self._registry)
        self._secret = config.secret or secrets.token_hex(32)
        self._store = store or MatchStore(data / "matches" if data else None)
        limits = config.limits
        #: finished matches' views, from this node's store first (the node of a queue adds its results)
        self.replays = Replays(
            [self._store_source], max_bytes=limits.replay_cache_bytes,
            per_address=limits.max_replays_per_address, total=limits.max_replays,
            bytes_per_s=limits.replay_bytes_per_s, messages_per_s=limits.replay_messages_per_s,
            tarpit=Tarpit(limits.refusal_hold, limits.max_streams_per_peer, limits.max_streams))
        #: finished matches' analyses (arena.referee.analyses), when the node makes them
        self.analyses: Analyses | None = None
        #: what each address may read a second, over gRPC and HTTP alike (the edges charge it)
        self.read_rates = ReadRates(limits.read_rate_per_peer, limits.read_burst_per_peer)
        # a bot that cannot take a message within its own time for a decision is gone
        self._hub = Hub(write_timeout=config.time.deadline + config.time.time_bank)
        #: the running matches
        self._matches: dict[str, LiveMatch] = {}
        #: the summaries of the latest finished or aborted ones, oldest first
        self._recent: collections.OrderedDict[str, MatchSummary] = collections.OrderedDict()
        #: the matches played to their end (finished or forfeited, not aborted) here since the node
        #: started: started by an admin or taken from the queue alike
        self.matches_completed = 0
        self.peer_addresses: list[str] = []
        #: the node's Prometheus metrics (its own registry)
        self.metrics = metrics or NodeMetrics(config.time)
        self.metrics.connected_bots.set_function(
            lambda: sum(1 for link in self._hub.links.values() if link.connected))
        self.metrics.matches_running.set_function(lambda: len(self._matches))
        self.metrics.rpc.streams = self._stream_messages
        self._hub.deadlines.stalls.stats = self.metrics.stalls
        #: what tells the world the node is draining (the gRPC edge adds its health service's)
        self.drain_hooks: list[Callable[[], Awaitable[None]]] = []
        self.draining = False
        #: called on the loop when seats here may have freed: a bot's stream opened (with ""), a match
        #: ended (with its id); the queue worker claims then (:meth:`free_seats` changed)
        self.seat_hooks: list[Callable[[str], None]] = []
        #: the matches each (bot, version) played here not yet counted in the registry, and the
        #: timer and tasks that write them (:meth:`write_version_games`)
        self._version_games: dict[tuple[str, str], int] = {}
        self._games_flush: asyncio.TimerHandle | None = None
        self._flushes: set[asyncio.Task[None]] = set()
        self._remember_stored()

    def free_seats(self) -> dict[str, int]:
        """The free seats of each bot connected here now, by name (those with none left out): what a
        job must fit to start here. A bot's name alone counts the seats of the link it seats
        (:meth:`play_link`: none while its promoted version is away); each version connected here
        counts its own under ``name@version``."""
        out: dict[str, int] = {}
        for bot_id, links in self._hub.by_bot.items():
            entry = self._registry.by_id(bot_id)
            if entry is None:
                continue
            if (link := self.play_link(entry)) is not None and (free := link.free_seats) > 0:
                out[entry.name] = free
            for link in links:
                if link.bot_version and (free := link.free_seats) > 0:
                    out[player_key(entry.name, link.bot_version)] = free
        return out

    def ladder_bots(self) -> frozenset[str]:
        """The bots connected here that asked to play the ladder, by name: at their registration, or in
        the Hello of a stream (a node with a queue opts them in: arena.node.ladder)."""
        out = set()
        for bot_id, links in self._hub.by_bot.items():
            on = [link for link in links if link.connected]
            entry = self._registry.by_id(bot_id) if on else None
            if entry is None or not self.plays_here(entry):
                continue  # away: its promoted version is not connected here
            if any(link.ladder for link in on) or entry.ladder:
                out.add(entry.name)
        return frozenset(out)

    def play_link(self, entry: BotEntry) -> BotLink | None:
        """The link the bot's name alone seats (a tournament's match, the ladder's, a match naming the
        bot), connected or not; None when it never connected here.

        A bot that never said a version: its streams that say none, as ever. A bot with versions: its
        promoted version's, and nothing else. Never a candidate, a version under test or a rejected
        one, nor a stream that says no version (none of them was tested): while the promoted version
        is away (a reconnection, a crash), the bot is away, whatever else of it is connected here.
        Its first version plays as the bot once the registry keeps it promoted (the node's copy:
        another first version may win the write). ``name@version`` seats each version by its own
        link (:meth:`version_link`), for its tests.
        """
        if not entry.versions:
            return self._hub.links.get(entry.bot_id)
        promoted = entry.promoted_version
        return self.version_link(entry, promoted) if promoted else None

    def plays_here(self, entry: BotEntry) -> bool:
        """Whether the bot's name can be seated here now: the link it seats is connected."""
        link = self.play_link(entry)
        return link is not None and link.connected

    def _away(self, entry: BotEntry) -> str:
        """Why the bot's name cannot be seated here (its play link is not connected)."""
        promoted = entry.promoted_version
        if not entry.versions:
            return f"bot {entry.name} is not connected to this node"
        if not promoted:
            return f"bot {entry.name} has no promoted version: only a promoted version plays as the bot"
        return (f"bot {entry.name} is away: its promoted version {promoted} is not connected to this node "
                "(only the promoted version plays as the bot)")

    def version_link(self, entry: BotEntry, bot_version: str) -> BotLink | None:
        """The link of one version of the bot on this node (None: that version never connected here)."""
        return self._hub.links.get(f"{entry.bot_id}@{bot_version}")

    def versioned_here(self) -> list[tuple[BotEntry, frozenset[str]]]:
        """The bots with two versions or more kept, a version of which is connected here now: each
        with the versions connected here (what a node's version tests look at)."""
        out = []
        for bot_id, links in self._hub.by_bot.items():
            on = frozenset(link.bot_version for link in links if link.bot_version and link.connected)
            entry = self._registry.by_id(bot_id) if on else None
            if entry is not None and len(entry.versions) >= 2:
                out.append((entry, on))
        return out

    def connected_versions(self, entry: BotEntry) -> list[str]:
        """The versions of the bot connected here now."""
        return [link.bot_version for link in self._hub.version_links(entry.bot_id) if link.connected]

    def _seats_changed(self, match_id: str = "") -> None:
        for hook in self.seat_hooks:
            hook(match_id)

    async def begin_drain(self) -> None:
        """The node takes no new work from now on: it says so (health NOT_SERVING), once."""
        if self.draining:
            return
        self.draining = True
        for hook in self.drain_hooks:
            await hook()

    def _stream_messages(self) -> dict[tuple[str, str, str], tuple[int, int]]:
        """The bot streams' messages (received, sent) since the node started (the links are kept)."""
        links = self._hub.links.values()
        received = sum(link.messages_received for link in links)
        sent = sum(link.messages_sent for link in links)
        return {("bidi_stream", "belote.arena.v1.BotService", "Connect"): (received, sent)}

    @property
    def requests_sent(self) -> int:
        """Action requests sent to bots since the node started (one per decision asked)."""
        return self._hub.requests_sent

    # ----------------------------------------------------------------- bots
    # The registry is read from memory (arena.referee.registry); what writes it, or reads what is
    # stored, runs in a thread: its backend may be the broker.
    def register_bot(self, name: str, ladder: bool = False, owner: str = "") -> tuple[BotEntry, str]:
        """Register a bot; its entry and its token (made here, shown once). Blocks on the registry's
        backend: for setting a node up (tests, the harness); the edge calls :meth:`register`."""
        try:
            return self._registry.register(name, ladder, owner)
        except DuplicateBotError as e:
            raise AlreadyExists(str(e)) from None
        except RegistryError as e:
            raise InvalidArgument(str(e)) from None

    async def register(self, name: str, ladder: bool = False, owner: str = "") -> tuple[BotEntry, str]:
        """:meth:`register_bot`, off the event loop."""
        return await asyncio.to_thread(self.register_bot, name, ladder, owner)

    async def check_new_bot(self, name: str) -> None:
        """Raise unless ``name`` could be registered now (before an invite is spent on it)."""
        if not valid_bot_name(name):
            raise InvalidArgument(f"bad bot name {name!r}: {BOT_NAME_RULE}")
        stored = self._registry.by_name(name) or await asyncio.to_thread(self._registry.stored, name)
        if stored is not None:
            raise AlreadyExists(f"a bot named {name!r} is already registered")

    async def rotate_token(self, entry: BotEntry) -> str:
        """A new token for the bot whose token was shown (``entry``); the old one stops working, and
        the streams opened with it are cut, on every node (:meth:`enforce_registry`)."""
        try:
            _, token = await asyncio.to_thread(self._registry.rotate, entry)
        except StaleTokenError as e:
            raise Unauthenticated(str(e)) from None
        await self._settle(entry.bot_id)
        return token

    async def revoke_bot(self, name: str) -> BotEntry:
        """Revoke a bot for good: its token stops working and its streams are cut, on every node."""
        try:
            revoked = await asyncio.to_thread(self._registry.revoke, name)
        except UnknownBotError:
            raise UnknownBot(f"no bot named {name!r}") from None
        await self._settle(revoked.bot_id)
        return revoked

    async def _settle(self, bot_id: str) -> None:
        """After a write made here: the registry's copy has it (from the notices, when they bring
        it), and the streams it ends are cut."""
        if self._registry.notified:
            await self._registry.catch_up()
        self.enforce_registry([bot_id])

    def enforce_registry(self, bot_ids: Iterable[str] | None = None) -> int:
        """Cut the streams (of those bots, or of all) opened with a token that no longer opens one:
        a revoked bot's, or one rotated since. How many were cut. The registry's copy must be
        current: the node calls it after each change it applies (its own, or another node's). A
        change of a bot connected here may change what its name seats (a version promoted, a first
        version kept): the seat hooks are told (the worker looks at the queue again)."""
        by_bot = self._hub.by_bot
        ids = list(by_bot) if bot_ids is None else list(bot_ids)
        if any(bot_id in by_bot for bot_id in ids):
            self._seats_changed()
        cut = 0
        for link in [link for bot_id in ids for link in by_bot.get(bot_id, ())]:
            entry = self._registry.by_id(link.bot_id)
            if not link.connected or entry is None:
                continue
            if entry.revoked:
                link.disconnect("the bot was revoked")
            elif link.token_sha256 != entry.token_sha256:
                link.disconnect("its token was rotated: the stream of the new token takes over")
            else:
                continue
            cut += 1
        return cut

    async def create_invite(self, owner: str = "") -> str:
        try:
            check_owner(owner)
        except RegistryError as e:
            raise InvalidArgument(str(e)) from None
        return await asyncio.to_thread(self._registry.create_invite, owner)

    def bot_named(self, name: str) -> BotEntry | None:
        return self._registry.by_name(name)

    async def find_bots(self, names: Sequence[str]) -> list[BotEntry | None]:
        """The bots of ``names`` (None for an unknown one), after catching up with the other nodes if
        one is unknown here (registered elsewhere a moment ago)."""
        found = [self._registry.by_name(n) for n in names]
        if None in found:
            await self._registry.catch_up()
            found = [self._registry.by_name(n) for n in names]
        return found

    async def know_bots(self, keys: Iterable[str]) -> None:
        """Catch up with the other nodes if a bot of ``keys`` (ids or names) is unknown here."""
        if any(key and self._registry.by_id(key) is None and self._registry.by_name(key) is None
               for key in keys):
            await self._registry.catch_up()

    def authenticate(self, token: str) -> BotEntry | None:
        return self._registry.authenticate(token)

    def link_for(self, entry: BotEntry, bot_version: str = "") -> BotLink:
        """The link of the bot's streams that say ``bot_version`` (its own; "": none), made if new. A
        bot keeps at most MAX_VERSIONS version links here: a new one takes the place of the one
        disconnected longest with no seat in use, and :class:`ResourceExhausted` when none is."""
        if bot_version and self.version_link(entry, bot_version) is None:
            held = self._hub.version_links(entry.bot_id)
            if len(held) >= MAX_VERSIONS:
                idle = [link for link in held if not link.connected and link.seats_in_use == 0]
                if not idle:
                    raise ResourceExhausted(f"bot {entry.name} has {len(held)} versions connected or "
                                            f"playing here, the most a bot may")
                self._hub.drop(min(idle, key=lambda link: link.disconnected_at or 0.0))
        return self._hub.link(entry.bot_id, entry.name, bot_version)

    def attach_stream(
        self, entry: BotEntry, writer: Writer, *, name: str, version: str, concurrency: int,
        ladder: bool = False, bot_version: str = "",
    ) -> tuple[BotLink, int, bool]:
        """A bot's stream opens with the token ``entry`` was found by: (its link, the stream id,
        whether it resumes seats it held).

        The link remembers that token's digest. A second stream for a connected bot is refused
        (:class:`AlreadyExists`) unless the node lets new streams take over, or the connected one
        was opened with a token rotated since: the stream of the bot's current token takes over.
        A token rotated or revoked since it was shown is :class:`Unauthenticated`.
        """
        current = self._registry.by_id(entry.bot_id)
        if current is None or current.revoked or current.token_sha256 != entry.token_sha256:
            raise Unauthenticated("this token was rotated or revoked meanwhile")
        if bot_version and not valid_version(bot_version):
            raise InvalidArgument(f"bad Hello.bot_version {bot_version[:40]!r}: {VERSION_RULE}")
        link = self.link_for(current, bot_version)
        if link.connected and link.token_sha256 == current.token_sha256 and not self.config.replace_streams:
            of = f" at version {bot_version}" if bot_version else ""
            raise AlreadyExists(f"bot {entry.name} is already connected{of} on another stream")
        resumed = link.seats_in_use > 0
        stream_id = link.attach(writer, name=name or entry.name, version=version, concurrency=concurrency,
                                token_sha256=current.token_sha256, ladder=ladder)
        self._seats_changed()
        return link, stream_id, resumed

    # ------------------------------------------------------------- versions
    async def note_version(self, entry: BotEntry, bot_version: str) -> None:
        """A stream of ``bot_version`` of the bot opened: the registry keeps the version (first and
        last seen; a new one is promoted when the bot has none, else a candidate). No write when the
        copy says it was seen a moment ago; the write, when one is due, runs in a thread."""
        now = int(time.time())
        current = self._registry.by_id(entry.bot_id)
        if current is None or seen(current.versions, bot_version, now) is None:
            return
        try:
            written = await asyncio.to_thread(self._registry.update_versions, entry.name,
                                              lambda versions: seen(versions, bot_version, int(time.time())))
        except RegistryError as e:
            log.warning("bot %s: version %s could not be recorded: %s", entry.name, bot_version, e)
            return
        if written is not None and not self._registry.notified:
            self._seats_changed()  # a first version kept plays as the bot now (else: on the notice)

    async def promote_version(self, name: str, version: str) -> tuple[BotEntry, BotEntry]:
        """Promote a version of bot ``name`` by hand; (its entry before, after). :class:`UnknownBot`,
        or :class:`FailedPrecondition` naming what is wrong (no such version, already promoted)."""
        before = self._registry.by_name(name)
        if before is None:
            raise UnknownBot(f"no bot named {name[:80]!r}")
        if not valid_version(version):
            raise InvalidArgument(f"bad version {version[:40]!r}: {VERSION_RULE}")
        try:
            after = await asyncio.to_thread(
                self._registry.update_versions, name,
                lambda versions: promote(versions, version, "hand", int(time.time())), strict=True)
        except VersionError as e:
            raise FailedPrecondition(str(e)) from None
        except RegistryError as e:
            raise Unavailable(str(e)) from None
        if after is None:
            raise FailedPrecondition(f"bot {name} is revoked")
        await self._settle(after.bot_id)
        return before, after

    def _count_version_game(self, link: BotLink) -> None:
        key = (link.name, link.bot_version)
        self._version_games[key] = self._version_games.get(key, 0) + 1
        if self._games_flush is None:
            loop = asyncio.get_running_loop()
            self._games_flush = loop.call_later(VERSION_GAMES_EVERY_S, self._flush_version_games)

    def _flush_version_games(self) -> None:
        self._games_flush = None
        games, self._version_games = self._version_games, {}
        task = asyncio.get_running_loop().create_task(asyncio.to_thread(self.write_version_games, games))
        self._flushes.add(task)
        task.add_done_callback(self._flushes.discard)

    async def flush_version_games(self) -> None:
        """Write now what the versions played here and was not written yet, and wait until the
        registry's copy has it."""
        if self._games_flush is not None:
            self._games_flush.cancel()
            self._flush_version_games()
        if self._flushes:
            await asyncio.gather(*self._flushes, return_exceptions=True)
            if self._registry.notified:
                await self._registry.catch_up()

    def write_version_games(self, games: dict[tuple[str, str], int]) -> None:
        """Add the matches each version played here to its count in the registry (blocks: a thread).
        A count that could not be written is lost, never counted twice: it says how much a version
        played, and no result depends on it."""
        by_bot: dict[str, dict[str, int]] = {}
        for (name, version), n in games.items():
            by_bot.setdefault(name, {})[version] = n
        for name, counts in by_bot.items():
            try:
                self._registry.update_versions(name, lambda versions, c=counts: add_games(versions, c))  # type: ignore[misc]
            except RegistryError as e:
                log.warning("bot %s: the games of its versions could not be counted: %s", name, e)

    def _status(self, entry: BotEntry) -> BotStatus:
        link = self.play_link(entry)
        return BotStatus(
            bot_id=entry.bot_id, name=entry.name, connected=link is not None and link.connected,
            version=link.version if link else "", concurrency=link.concurrency if link else 0,
            seats_in_use=link.seats_in_use if link else 0, revoked=entry.revoked,
        )

    def _readable(self) -> None:
        try:
            self._registry.check()
        except RegistryUnavailable as e:
            raise Unavailable(str(e)) from None

    def registry_page(self, offset: int, limit: int) -> tuple[int, list[BotEntry]]:
        """How many bots are registered, and those from the ``offset``-th on (by name), at most
        ``limit``: a cost that grows with ``limit``, never with the registry.
        :class:`Unavailable` if the registry's store lost it."""
        self._readable()
        return self._registry.count(), self._registry.page(offset, limit)

    def bot_page(self, offset: int, limit: int) -> tuple[int, list[BotStatus]]:
        """:meth:`registry_page`, each bot as this node sees it."""
        total, entries = self.registry_page(offset, limit)
        return total, [self._status(e) for e in entries]

    def seen_on_page(self, page: Sequence[BotEntry]) -> list[tuple[int, BotStatus]]:
        """The bots of ``page`` a stream of which ever opened here, each as this node sees it, with its
        place on the page. The others look as registered: not connected, no version, no seats."""
        by_bot = self._hub.by_bot
        return [(i, self._status(e)) for i, e in enumerate(page) if e.bot_id in by_bot]

    def bot_status(self, name: str) -> BotStatus | None:
        """The bot of that name as this node sees it (None: unknown); :class:`Unavailable` as above."""
        self._readable()
        entry = self._registry.by_name(name)
        return None if entry is None else self._status(entry)

    def bots(self) -> list[BotStatus]:
        """Every registered bot, by name (a cost that grows with the registry: tests and tools)."""
        return [self._status(e) for e in self._registry.all()]

    def connected_bots(self) -> list[str]:
        """The names of the bots that play here now (their name seats: :meth:`plays_here`), and
        ``name@version`` for each version connected (a job naming it can start here): what the node's
        heartbeat says is present. A bot whose promoted version is away is not, whatever else of it
        is connected: its tournament matches wait for it, and forfeit as any absent bot's do."""
        out: list[str] = []
        for bot_id, links in self._hub.by_bot.items():
            on = [link for link in links if link.connected]
            if on:
                entry = self._registry.by_id(bot_id)
                if entry is not None and self.plays_here(entry):
                    out.append(entry.name)
                out.extend(player_key(link.name, link.bot_version) for link in on if link.bot_version)
        return out

    def tell(self, bot: str, kind: str, text: str, until: int = 0) -> int:
        """Send a :class:`Notice` (``kind``, ``text``, ``until``: docs/protocol.md) to each stream of ``bot``
        connected here (every version's) that was not told it yet (the same kind and end): a node may
        call it at every look, a stream hears it once. How many streams were told now."""
        entry = self._registry.by_name(bot)
        notice = bpb.Notice(kind=kind, text=text, until=until)
        told = 0
        for link in self._hub.by_bot.get(entry.bot_id, ()) if entry is not None else ():
            key = (kind, until)
            if link.connected and key not in link.notices_told:
                if len(link.notices_told) >= 16:
                    link.notices_told.clear()  # bounded: the kinds are few, their ends change slowly
                link.notices_told.add(key)
                link.post(bpb.ConnectResponse(notice=notice))
                told += 1
        return told

    async def set_peers(self, addresses: list[str]) -> None:
        """The other live nodes changed: tell every connected bot (the SDK connects to them)."""
        addresses = sorted(set(addresses))
        if addresses == self.peer_addresses:
            return
        self.peer_addresses = addresses
        msg = bpb.Peers(addresses=addresses)
        for link in self._hub.links.values():
            if link.connected:
                link.post(bpb.ConnectResponse(peers=msg))

    def _seat(self, keys: Sequence[str]) -> list[tuple[BotEntry, BotLink, str]]:
        """The bot and link of each seat 0..3; :class:`SeatingError` if they cannot sit here now.

        A bot named at several seats plays them all over its one link, and needs a free
        seat of its concurrency for each.
        """
        seats: list[tuple[BotEntry, BotLink, str]] = []
        resolved: dict[str, tuple[BotEntry, BotLink, str]] = {}
        for key in keys:
            if key not in resolved:
                name, version = split_key(key)
                try:
                    entry = self._registry.resolve(name)
                except UnknownBotError as e:
                    raise UnknownBot(str(e)) from None
                if entry.revoked:
                    raise BotNotConnected(f"bot {entry.name} is revoked")
                if version:
                    link = self.version_link(entry, version)
                    if link is None or not link.connected:
                        raise BotNotConnected(f"version {version[:40]} of bot {entry.name} is not "
                                              "connected to this node")
                    resolved[key] = (entry, link, player_key(entry.name, version))
                else:
                    played = self.play_link(entry)
                    if played is None or not played.connected:
                        raise BotNotConnected(self._away(entry))
                    resolved[key] = (entry, played, entry.name)
            seats.append(resolved[key])
        sides = [{id(link) for _, link, _ in seats[side::2]} for side in (0, 1)]
        if sides[0] & sides[1] and len(sides[0] | sides[1]) > 1:
            raise InvalidArgument(_BOTH_SIDES)  # the same bot under its name and its id
        need = collections.Counter(id(link) for _, link, _ in seats)
        for entry, link, shown in {id(link): seat for seat in seats for link in (seat[1],)}.values():
            if link.connected and link.token_sha256 != entry.token_sha256:
                self.enforce_registry([entry.bot_id])  # a stream of a token rotated since: never seated
            if not link.connected:
                raise BotNotConnected(f"bot {shown} is not connected to this node")
            if link.free_seats < need[id(link)]:
                raise NoFreeSeats(
                    f"bot {shown} has {link.free_seats} free seats of {link.concurrency}; "
                    f"the match needs {need[id(link)]}"
                )
        return seats

    # -------------------------------------------------------------- matches
    def start_match(
        self, team0: str, team1: str, ruleset: RulesetSpec | Ruleset = "classic",
        *, seed: int | str | None = None, target: int | None = None, deals: int | None = None,
        match_id: str | None = None, seats: Sequence[str] | None = None,
    ) -> str:
        """Start a match between two connected bots (by name or id); returns its id at once.

        With ``seats`` (and ``team0``, ``team1`` empty), the bot of each seat 0..3 instead:
        partners may be two different bots (:func:`check_seats` says which seatings are legal).
        """
        keys = check_seats(team0, team1, seats)
        if deals is not None and not 0 <= deals <= MAX_DEALS:
            raise InvalidArgument(f"deals must be 1 to {MAX_DEALS} (0: play to the target), not {deals}")
        if target is not None and not 0 <= target <= MAX_TARGET:
            raise InvalidArgument(f"target must be 1 to {MAX_TARGET} (0: the ruleset's), not {target}")
        if match_id is not None and not valid_match_id(match_id):
            raise InvalidArgument(f"bad match id {match_id!r}: 1 to 200 letters, digits or _ . : @ -, "
                                  "starting with a letter or digit")
        try:
            rules = Ruleset.from_spec(ruleset)
            if deals:
                rules = rules.with_options(deals=deals)
            if rules.deals is not None and rules.deals > MAX_DEALS:
                raise InvalidArgument(f"deals must be 1 to {MAX_DEALS}, not {rules.deals}")
            if target is None and rules.target > MAX_TARGET:
                raise InvalidArgument(f"target must be 1 to {MAX_TARGET}, not {rules.target}")
        except EngineError as e:
            raise InvalidArgument(str(e)) from None
        seated = self._seat(keys)
        match_id = match_id or f"m-{secrets.token_hex(6)}"
        # an aborted match (among the recent ones, unrecorded) may be played again under its id
        if match_id in self._matches or self._store.has(match_id):
            raise AlreadyExists(f"match {match_id} exists")
        links = [link for _, link, _ in seated]  # one a seat: a bot at two seats holds two
        spec = MatchSpec(
            match_id=match_id, rules=rules,
            seed=derive_seed(self._secret, f"match/{match_id}") if seed is None or seed == "" else seed,
            seats=[Seat(entry.bot_id, shown, link) for entry, link, shown in seated],
            target=target or None, time=self.config.time,
        )
        live = LiveMatch(self._hub, spec, self.metrics, self.node_id)
        for link in links:
            link.seats_in_use += 1
        self._matches[match_id] = live
        live.task = asyncio.get_running_loop().create_task(self._run(live, links), name=match_id)
        return match_id

    async def _run(self, live: LiveMatch, links: list[BotLink]) -> MatchRecord:
        try:
            return await live.runner.run()
        finally:
            for link in links:
                link.seats_in_use -= 1
            self._seats_changed(live.match_id)
            record = live.runner.record
            if record is not None and record.result.reason is not ResultReason.ABORTED:
                for link in {id(link): link for link in links}.values():
                    if link.bot_version:
                        self._count_version_game(link)
            try:
                if record is not None and record.result.reason is not ResultReason.ABORTED:
                    self._store.put(record)
            except (OSError, StoreError) as e:
                # its waiters still get the record (the queue worker writes the result from it)
                log.error("match %s: its record could not be kept here: %s", live.match_id, e)
            finally:
                # its waiters hold the live match until they have the record; the node lets it go
                live.end()
                del self._matches[live.match_id]
                if record is not None:
                    self._remember(MatchSummary.of_record(record))
                    self._ended(record)
                    if record.result.reason is not ResultReason.ABORTED:  # its events are its replay's
                        result = result_to_proto(record.result, record.deals_played)
                        self.replays.hand_over(live.match_id, live.history, result.SerializeToString())
                        if self.analyses is not None:
                            self.analyses.ended(live.match_id)

    def _ended(self, record: MatchRecord) -> None:
        """One log line and the count of a match that ended here."""
        result = record.result
        outcome = result.reason.value
        self.metrics.matches_finished.labels(outcome).inc()
        if result.reason is not ResultReason.ABORTED:
            self.matches_completed += 1
        team0, team1 = record.team_names()
        winner = "nobody" if result.winner is None else (team0, team1)[result.winner]
        log.info("match %s %s: %s %d - %d %s, won by %s", record.match_id, outcome, team0, result.totals[0],
                 result.totals[1], team1, winner, extra={
                     "event": "match_end", "match_id": record.match_id, "node": self.node_id,
                     "bot": f"{team0},{team1}", "outcome": outcome})

    def _remember(self, summary: MatchSummary) -> None:
        self._recent[summary.match_id] = summary
        self._recent.move_to_end(summary.match_id)
        while len(self._recent) > RECENT_SUMMARIES:
            self._recent.popitem(last=False)

    def _remember_stored(self) -> None:
        """A node started on a data folder lists the latest records already there."""
        for match_id in self._store.latest(RECENT_SUMMARIES):
            try:
                record = self._store.get(match_id)
            except UnreadableRecordError as e:
                log.warning("%s", e)
                continue
            if record is not None:
                self._remember(MatchSummary.of_record(record))

    def _store_source(self, match_id: str) -> RecordSource | None:
        """The stored record's text, unread (called in a thread: its reader reads it)."""
        try:
            text = self._store.text(match_id)
        except UnreadableRecordError as e:
            log.error("%s", e)
            raise DamagedRecord(str(e)) from None
        return None if text is None else RecordSource(text, MatchRecord.from_json)

    def _stored(self, match_id: str) -> MatchRecord | None:
        try:
            return self._store.get(match_id)
        except UnreadableRecordError as e:
            log.error("%s", e)
            raise DamagedRecord(str(e)) from None

    def is_running(self, match_id: str) -> bool:
        return match_id in self._matches

    async def wait(self, match_id: str) -> MatchRecord:
        """The match's record once it is over.

        Those who wait while the match runs get its record even if it is not
        kept (an aborted match's, or one the store could not write); waiting
        on a match already over gives its stored record, or :class:`NotFound`.
        """
        live = self._matches.get(match_id)
        if live is not None:
            await live.done.wait()
            if live.record is not None:
                return live.record
        return self.record(match_id)

    def cancel_match(self, match_id: str) -> bool:
        """Stop a running match here, unrecorded; False if it is not running."""
        live = self._matches.get(match_id)
        if live is None or live.task is None or live.task.done():
            return False
        live.task.cancel()
        return True

    def latest_stored(self, count: int) -> list[str]:
        """The ids of the ``count`` records stored here last (a look at the whole store: call it in a
        thread)."""
        return self._store.latest(count)

    def stored_record(self, match_id: str) -> MatchRecord | None:
        """The record of a match played to its end here, from the store (None if there is none)."""
        return self._stored(match_id)

    def record(self, match_id: str) -> MatchRecord:
        record = self._stored(match_id)
        if record is not None:
            return record
        if match_id in self._matches:
            raise FailedPrecondition(f"match {match_id} is still running; watch it instead")
        recent = self._recent.get(match_id)
        if recent is not None and recent.state is MatchState.ABORTED:
            raise NotFound(f"match {match_id} was aborted; it has no record")
        if recent is not None:
            raise NotFound(f"the record of match {match_id} is not kept here")
        raise NotFound(f"no match {match_id!r} on this node")

    def summary(self, match_id: str, *, stored: bool = True) -> MatchSummary:
        """What anyone may ask of the match; with ``stored`` False, of a running or recent one only
        (the others' are in their records, whose reading grows with their deals)."""
        live = self._matches.get(match_id)
        if live is not None:
            return live.summary()
        recent = self._recent.get(match_id)
        if recent is not None:
            return recent
        record = self._stored(match_id) if stored else None
        if record is None:
            raise NotFound(f"no match {match_id!r} on this node")
        return MatchSummary.of_record(record)

    def summaries(self) -> list[MatchSummary]:
        """The running matches, then the latest finished ones (oldest first; the others: ``summary``)."""
        return [live.summary() for live in self._matches.values()] + list(self._recent.values())

    def watch(self, match_id: str) -> tuple[Iterator[pb.PublicEvent], EventFeed]:
        """A running match's public events so far, and a feed of the next ones (``get()``, None at
        the end); :class:`NotFound` if it is not running here (a finished one: :meth:`replay`).

        The events come lazily, as they are read, and a watcher that does not
        read holds nothing but its place.
        """
        live = self._matches.get(match_id)
        if live is None:
            raise NotFound(f"match {match_id!r} is not running on this node")
        return live.watch()

    async def replay_slot(self, address: str) -> ReplaySlot:
        """A place among the replays running at once (per address, and in all), for a read of a
        finished match from ``address``; :class:`ResourceExhausted` if there is none."""
        try:
            return await self.replays.gate.enter(address)
        except ReplayFull as e:
            raise ResourceExhausted(str(e)) from None

    async def replay_view(self, match_id: str, kind: str,
                          build: Callable[[RecordSource], tuple[_V, str]]) -> _V | None:
        """A finished match's ``kind`` view, kept or built once (:meth:`Replays.view`); None if no
        record of it is found. :class:`DamagedRecord` for a record that cannot be read,
        :class:`Unavailable` when the build process stopped (or the queue cannot be read)."""
        try:
            return await self.replays.view(match_id, kind, build)
        except UnreadableRecordError as e:
            log.error("%s", e)
            raise DamagedRecord(str(e)) from None
        except BuildFailed as e:
            raise Unavailable(str(e)) from None

    async def finished_summary(self, match_id: str) -> MatchSummary:
        """The summary of a match that is not running here: the node's own among its latest, else
        from its record, read once in the build process and kept (:meth:`replay_view`: a record's
        reading grows with its deals); :class:`NotFound` if there is none."""
        recent = self._recent.get(match_id)
        if recent is not None:
            return recent
        facts = await self.replay_view(match_id, FACTS, facts_view)
        if facts is None:
            raise NotFound(f"no match {match_id!r} on this node")
        aborted = facts.result.reason is ResultReason.ABORTED
        return MatchSummary(
            match_id=facts.match_id, state=MatchState.ABORTED if aborted else MatchState.FINISHED,
            players=facts.players, ruleset=facts.ruleset, totals=facts.result.totals,
            deals_played=facts.deals_played, seed=facts.seed, result=facts.result)

    async def finished_record(self, match_id: str) -> str:
        """A finished match's record, as JSON text: read once in the build process and kept, as
        :meth:`record` says otherwise (:class:`FailedPrecondition` while it runs, :class:`NotFound`
        for an aborted or unknown one)."""
        if match_id in self._matches:
            raise FailedPrecondition(f"match {match_id} is still running; watch it instead")
        body = await self.replay_view(match_id, RECORD, record_view)
        if body is None:
            self.record(match_id)  # its error: aborted, not kept, or unknown
            raise NotFound(f"no match {match_id!r} on this node")
        return body.data.decode()

    async def replay(self, match_id: str) -> WatchReplay:
        """A finished match's public events and result, as WatchMatch sends them: kept, or built
        once from its record, off the event loop (:mod:`arena.referee.replays`), so that a watcher
        who comes late, even long after the end, still sees the whole match. An aborted match,
        unrecorded, has only its result to show; :class:`NotFound` for a match unknown here."""
        view = await self.replay_view(match_id, WATCH, watch_view)
        if view is not None:
            return view
        recent = self._recent.get(match_id)
        if recent is None or recent.result is None:
            raise NotFound(f"no match {match_id!r} on this node")
        return WatchReplay((), result_to_proto(recent.result, recent.deals_played).SerializeToString())

    def unwatch(self, match_id: str, feed: EventFeed) -> None:
        """A watcher left (nothing to undo: a feed is only a position in the match's events)."""

    async def shutdown(self) -> None:
        tasks = [live.task for live in self._matches.values() if live.task is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self.flush_version_games()
        self.replays.close()
        if self.analyses is not None:
            self.analyses.close()


#: how often a node writes the matches its bots' versions played (a registry write a bot at most)
VERSION_GAMES_EVERY_S = 30.0
_BOTH_SIDES = ("a bot may sit on both sides only in a match of that bot alone (a mirror match): "
               "with partners from other bots it would see an opponent's hand and be rated "
               "against itself")


def check_seats(team0: str, team1: str, seats: Sequence[str] | None) -> list[str]:
    """The bot key of each seat 0..3, from one of the two forms of a match's bots.

    Either ``team0`` and ``team1`` (one bot a side, each at its two seats) or
    ``seats``, four keys (seat 0..3; team 0 is seats 0 and 2), never both.
    In the seats form a bot may hold both seats of its side, but it may sit on
    both sides only when it holds all four (a mirror match, as ``team0 ==
    team1``): a bot that partners another bot and also opposes it would see
    one of its opponents' hands over its stream, and its result would rate it
    against itself. :class:`InvalidArgument` says which rule a request breaks.
    """
    if seats is None or len(seats) == 0:
        return [team0, team1, team0, team1]  # an empty name is an unknown bot, as it always was
    if team0 or team1:
        raise InvalidArgument("give the bots as team0 and team1 or as the four seats, not both")
    if len(seats) != 4:
        raise InvalidArgument(f"seats must name the bot of each of the 4 seats, not {len(seats)}")
    if not all(seats):
        raise InvalidArgument("every seat must name a bot")
    keys = list(seats)
    if set(keys[0::2]) & set(keys[1::2]) and len(set(keys)) > 1:
        raise InvalidArgument(_BOTH_SIDES)
    return keys

