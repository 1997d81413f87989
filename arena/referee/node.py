"""A referee node: its bots, its matches, their spectators and records.

Everything outside the referee goes through :class:`Node`'s methods: the
gRPC edge (:mod:`arena.referee.service`), the queue worker of
:mod:`arena.node`, the harness. Each match on the node is one
:class:`LiveMatch`, from its start until it leaves the window of recent
matches; its record then stays in the :class:`MatchStore`.

Errors are :class:`NodeError` subclasses, picked by type; the edge maps them
to gRPC status codes.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import secrets
from dataclasses import dataclass, field
from pathlib import Path

from belote.arena.v1 import bot_service_pb2 as bpb
from belote.arena.v1 import game_pb2 as pb

from arena.engine import EngineError, Ruleset
from arena.records import MatchRecord, ResultReason, RulesetSpec, TimeControl
from arena.referee.live import LiveMatch, MatchState, MatchSummary, WatchQueue
from arena.referee.registry import BotEntry, BotRegistry, DuplicateBotError, RegistryError, UnknownBotError
from arena.referee.runner import MatchSpec, Seat
from arena.referee.sessions import BotLink, Hub, Writer
from arena.referee.store import MatchStore, RecordExistsError

__all__ = [
    "AlreadyExists", "BotNotConnected", "BotStatus", "FailedPrecondition", "InvalidArgument", "Limits",
    "LiveMatch", "MatchState", "MatchSummary", "NoFreeSeats", "Node", "NodeConfig", "NodeError", "NotFound",
    "ResourceExhausted", "SeatingError", "UnknownBot",
]

log = logging.getLogger("arena.referee")


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


class SeatingError(NodeError):
    """A match's bots cannot be seated here now (another node, or later, may seat them)."""


class UnknownBot(SeatingError, NotFound):
    pass


class BotNotConnected(SeatingError, FailedPrecondition):
    pass


class NoFreeSeats(SeatingError, ResourceExhausted):
    pass


@dataclass(frozen=True)
class Limits:
    """What one bot, one address or one match may hold of the node (docs/protocol.md#limits)."""

    #: seconds a new bot stream has to send its Hello before it is refused
    hello_timeout: float = 5.0
    #: seats one bot stream may play at once (a larger Hello.concurrency is read as this)
    max_concurrency: int = 256
    #: bot streams open at once from one address (a bot process opens one per node), and in all
    max_streams_per_peer: int = 16
    max_streams: int = 1024
    #: spectators (WatchMatch calls) of one match at once, and in all (the gRPC edge counts them)
    max_watchers_per_match: int = 64
    max_watchers: int = 1024


@dataclass(frozen=True)
class NodeConfig:
    data_dir: Path | None = None
    time: TimeControl = field(default_factory=TimeControl)
    #: one stream per token: a second one is refused, or with this set it takes
    #: over the bot's seats from the first (a bot restarted before the node noticed)
    replace_streams: bool = False
    node_id: str = ""
    limits: Limits = field(default_factory=Limits)


@dataclass(frozen=True, slots=True)
class BotStatus:
    """A registered bot as this node sees it now."""

    bot_id: str
    name: str
    connected: bool
    version: str
    concurrency: int
    seats_in_use: int


#: finished matches kept in memory: their summary, and the public events for late watchers
#: (their records stay in the store)
KEEP_RECENT = 64


class Node:
    def __init__(
        self, config: NodeConfig | None = None, *, registry: BotRegistry | None = None,
        store: MatchStore | None = None,
    ) -> None:
        config = config or NodeConfig()
        self.config = config
        self.node_id = config.node_id or f"node-{secrets.token_hex(3)}"
        data = config.data_dir
        self._registry = registry or BotRegistry(data / "bots.json" if data else None)
        self._store = store or MatchStore(data / "matches" if data else None)
        # a bot that cannot take a message within its own time for a decision is gone
        self._hub = Hub(write_timeout=config.time.deadline + config.time.time_bank)
        #: running matches, then the most recent finished ones (oldest first)
        self._matches: dict[str, LiveMatch] = {}
        self._recent: collections.deque[str] = collections.deque()
        self.peer_addresses: list[str] = []

    @property
    def requests_sent(self) -> int:
        """Action requests sent to bots since the node started (one per decision asked)."""
        return self._hub.requests_sent

    # ----------------------------------------------------------------- bots
    def register_bot(self, name: str, token: str | None = None) -> tuple[BotEntry, str]:
        """Register a bot; its entry and its token (generated unless given)."""
        try:
            return self._registry.register(name, token)
        except DuplicateBotError as e:
            raise AlreadyExists(str(e)) from None
        except RegistryError as e:
            raise InvalidArgument(str(e)) from None

    def bot_named(self, name: str) -> BotEntry | None:
        return self._registry.by_name(name)

    def authenticate(self, token: str) -> BotEntry | None:
        return self._registry.authenticate(token)

    def link_for(self, entry: BotEntry) -> BotLink:
        return self._hub.link(entry.bot_id, entry.name)

    def attach_stream(
        self, entry: BotEntry, writer: Writer, *, name: str, version: str, concurrency: int,
    ) -> tuple[BotLink, int, bool]:
        """A bot's stream opens: (its link, the stream id, whether it resumes seats it held).

        A second stream for a connected bot is refused (:class:`AlreadyExists`)
        unless the node lets new streams take over.
        """
        link = self.link_for(entry)
        if link.connected and not self.config.replace_streams:
            raise AlreadyExists(f"bot {entry.name} is already connected on another stream")
        resumed = link.seats_in_use > 0
        stream_id = link.attach(writer, name=name or entry.name, version=version, concurrency=concurrency)
        return link, stream_id, resumed

    def bots(self) -> list[BotStatus]:
        out = []
        for entry in self._registry.all():
            link = self._hub.links.get(entry.bot_id)
            connected = link is not None and link.connected
            out.append(BotStatus(
                bot_id=entry.bot_id, name=entry.name, connected=connected,
                version=link.version if link else "", concurrency=link.concurrency if link else 0,
                seats_in_use=link.seats_in_use if link else 0,
            ))
        return out

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

    def _seat(self, team0: str, team1: str) -> list[tuple[BotEntry, BotLink]]:
        """The two teams' bots and links; :class:`SeatingError` if they cannot sit here now."""
        teams = []
        for key in (team0, team1):
            try:
                entry = self._registry.resolve(key)
            except UnknownBotError as e:
                raise UnknownBot(str(e)) from None
            teams.append((entry, self.link_for(entry)))
        need: collections.Counter[str] = collections.Counter()
        for entry, _ in teams:
            need[entry.bot_id] += 2
        for entry, link in teams:
            if not link.connected:
                raise BotNotConnected(f"bot {entry.name} is not connected to this node")
            if link.free_seats < need[entry.bot_id]:
                raise NoFreeSeats(
                    f"bot {entry.name} has {link.free_seats} free seats of {link.concurrency}; "
                    f"the match needs {need[entry.bot_id]}"
                )
        return teams

    # -------------------------------------------------------------- matches
    def start_match(
        self, team0: str, team1: str, ruleset: RulesetSpec | Ruleset = "classic",
        *, seed: int | str | None = None, target: int | None = None, deals: int | None = None,
        match_id: str | None = None,
    ) -> str:
        """Start a match between two connected bots (by name or id); returns its id at once."""
        try:
            rules = Ruleset.from_spec(ruleset)
            if deals:
                rules = rules.with_options(deals=deals)
        except EngineError as e:
            raise InvalidArgument(str(e)) from None
        teams = self._seat(team0, team1)
        match_id = match_id or f"m-{secrets.token_hex(6)}"
        if match_id in self._matches or self._store.get(match_id) is not None:
            raise AlreadyExists(f"match {match_id} exists")
        seats = [Seat(teams[i & 1][0].bot_id, teams[i & 1][0].name, teams[i & 1][1]) for i in range(4)]
        links = [link for _, link in teams]
        spec = MatchSpec(
            match_id=match_id, rules=rules,
            seed=secrets.randbits(48) if seed is None or seed == "" else seed,
            seats=seats, target=target or None, time=self.config.time,
        )
        live = LiveMatch(self._hub, spec)
        for link in links:
            link.seats_in_use += 2
        self._matches[match_id] = live
        live.task = asyncio.get_running_loop().create_task(self._run(live, links), name=match_id)
        return match_id

    async def _run(self, live: LiveMatch, links: list[BotLink]) -> MatchRecord:
        try:
            return await live.runner.run()
        finally:
            for link in links:
                link.seats_in_use -= 2
            record = live.runner.record
            try:
                if record is not None and record.result.reason is not ResultReason.ABORTED:
                    self._store.put(record)
            except (OSError, RecordExistsError) as e:
                # its waiters still get the record (the queue worker writes the result from it)
                log.error("match %s: its record could not be kept here: %s", live.match_id, e)
            finally:
                live.end()
                self._recent.append(live.match_id)
                while len(self._recent) > KEEP_RECENT:
                    self._matches.pop(self._recent.popleft(), None)

    def is_running(self, match_id: str) -> bool:
        live = self._matches.get(match_id)
        return live is not None and live.record is None and not live.done.is_set()

    async def wait(self, match_id: str) -> MatchRecord:
        """The match's record once it is over (an aborted match's too, though it is not kept)."""
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

    def stored_record(self, match_id: str) -> MatchRecord | None:
        """The record of a match played to its end here, from the store (None if there is none)."""
        return self._store.get(match_id)

    def record(self, match_id: str) -> MatchRecord:
        record = self._store.get(match_id)
        if record is not None:
            return record
        live = self._matches.get(match_id)
        if live is not None and live.record is None:
            raise FailedPrecondition(f"match {match_id} is still running; watch it instead")
        if live is not None and live.record is not None:
            raise NotFound(f"match {match_id} was aborted; it has no record")
        raise NotFound(f"no match {match_id!r} on this node")

    def summary(self, match_id: str) -> MatchSummary:
        live = self._matches.get(match_id)
        if live is not None:
            return live.summary()
        record = self._store.get(match_id)
        if record is None:
            raise NotFound(f"no match {match_id!r} on this node")
        return MatchSummary.of_record(record)

    def summaries(self) -> list[MatchSummary]:
        """Every match this node knows: the running and recent ones, then the stored records."""
        out = [live.summary() for live in self._matches.values()]
        known = set(self._matches)
        for match_id in self._store.ids():
            if match_id not in known:
                record = self._store.get(match_id)
                if record is not None:
                    out.append(MatchSummary.of_record(record))
        return out

    def watch(self, match_id: str) -> tuple[list[pb.PublicEvent], WatchQueue | None]:
        """The match's public events so far, and a queue of the next ones ending with None.

        The queue is None once the match is over; the history is kept for the
        running matches and the recent finished ones, so a watcher that
        arrives late still sees the whole match.
        """
        live = self._matches.get(match_id)
        if live is None:
            if self._store.get(match_id) is None:
                raise NotFound(f"no match {match_id!r} on this node")
            return [], None
        history = list(live.history)
        if live.done.is_set():
            return history, None
        q: WatchQueue = asyncio.Queue()
        live.watchers.append(q)
        return history, q

    def unwatch(self, match_id: str, q: WatchQueue) -> None:
        live = self._matches.get(match_id)
        if live is not None and q in live.watchers:
            live.watchers.remove(q)

    async def shutdown(self) -> None:
        tasks = [live.task for live in self._matches.values() if live.task is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
