"""A referee node: its bots, its running matches, their spectators and records.

The gRPC services (:mod:`arena.referee.service`) are a thin edge over this;
errors here are :class:`NodeError` subclasses that the edge maps to gRPC
status codes.
"""

from __future__ import annotations

import asyncio
import collections
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from belote.arena.v1 import bot_service_pb2 as bpb
from belote.arena.v1 import game_pb2 as pb

from arena.engine import EngineError, Ruleset
from arena.referee.registry import BotEntry, BotRegistry, RegistryError, UnknownBotError
from arena.referee.runner import MatchRunner, MatchSpec, MatchState, Seat, TimeControl
from arena.referee.sessions import BotLink, Hub
from arena.referee.store import MatchStore


class NodeError(Exception):
    """Base of the node's errors; ``code`` names the gRPC status for the edge."""

    code = "INTERNAL"


class NotFound(NodeError):
    code = "NOT_FOUND"


class InvalidArgument(NodeError):
    code = "INVALID_ARGUMENT"


class FailedPrecondition(NodeError):
    code = "FAILED_PRECONDITION"


class ResourceExhausted(NodeError):
    code = "RESOURCE_EXHAUSTED"


class AlreadyExists(NodeError):
    code = "ALREADY_EXISTS"


@dataclass(frozen=True)
class NodeConfig:
    data_dir: Path | None = None
    time: TimeControl = field(default_factory=TimeControl)
    #: one stream per token: a second one is refused, or with this set it takes
    #: over the bot's seats from the first (a bot restarted before the node noticed)
    replace_streams: bool = False
    node_id: str = ""


_DONE = None
#: finished matches whose public events stay available to late watchers
KEEP_FINISHED_HISTORY = 64
#: finished matches whose state (summary, record) stays in memory
KEEP_FINISHED_MATCHES = 1000


class Node:
    def __init__(
        self, config: NodeConfig | None = None, *, registry: BotRegistry | None = None,
        store: MatchStore | None = None,
    ) -> None:
        config = config or NodeConfig()
        self.config = config
        self.node_id = config.node_id or f"node-{secrets.token_hex(3)}"
        data = config.data_dir
        self.registry = registry or BotRegistry(data / "bots.json" if data else None)
        self.store = store or MatchStore(data / "matches" if data else None)
        # a bot that cannot take a message within its own time for a decision is gone
        self.hub = Hub(write_timeout=config.time.deadline + config.time.time_bank)
        self.matches: dict[str, MatchState] = {}
        self.tasks: dict[str, asyncio.Task[MatchState]] = {}
        self._watchers: dict[str, list[asyncio.Queue[pb.PublicEvent | None]]] = {}
        self._history: dict[str, list[pb.PublicEvent]] = {}
        self._finished_history: collections.deque[str] = collections.deque()
        self._finished: collections.deque[str] = collections.deque()
        self.peer_addresses: list[str] = []

    async def set_peers(self, addresses: list[str]) -> None:
        """The other live nodes changed: tell every connected bot (the SDK connects to them)."""
        addresses = sorted(set(addresses))
        if addresses == self.peer_addresses:
            return
        self.peer_addresses = addresses
        msg = bpb.Peers(addresses=addresses)
        for link in self.hub.links.values():
            if link.connected:
                link.post(bpb.ConnectResponse(peers=msg))

    # ----------------------------------------------------------------- bots
    def register_bot(self, name: str, token: str | None = None) -> tuple[BotEntry, str]:
        try:
            return self.registry.register(name, token)
        except RegistryError as e:
            raise (AlreadyExists if "already" in str(e) else InvalidArgument)(str(e)) from None

    def link_for(self, entry: BotEntry) -> BotLink:
        return self.hub.link(entry.bot_id, entry.name)

    def bots(self) -> list[tuple[BotEntry, BotLink | None]]:
        return [(e, self.hub.links.get(e.bot_id)) for e in self.registry.all()]

    def _resolve(self, key: str) -> BotEntry:
        try:
            return self.registry.resolve(key)
        except UnknownBotError as e:
            raise NotFound(str(e)) from None

    # -------------------------------------------------------------- matches
    def start_match(
        self, team0: str, team1: str, ruleset: str | dict[str, Any] | Ruleset = "classic",
        *, seed: int | str | None = None, target: int | None = None, deals: int | None = None,
        match_id: str | None = None,
    ) -> str:
        """Start a match between two connected bots; returns its id at once."""
        try:
            rules = Ruleset.from_spec(ruleset)
            if deals:
                rules = rules.with_options(deals=deals)
        except EngineError as e:
            raise InvalidArgument(str(e)) from None
        entries = [self._resolve(team0), self._resolve(team1)]
        links = [self.link_for(entry) for entry in entries]
        need: dict[str, int] = {}
        for entry in entries:
            need[entry.bot_id] = need.get(entry.bot_id, 0) + 2
        for entry, link in zip(entries, links, strict=True):
            if not link.connected:
                raise FailedPrecondition(f"bot {entry.name} is not connected to this node")
            if link.free_seats < need[entry.bot_id]:
                raise ResourceExhausted(
                    f"bot {entry.name} has {link.free_seats} free seats of {link.concurrency}; "
                    f"the match needs {need[entry.bot_id]}"
                )
        match_id = match_id or f"m-{secrets.token_hex(6)}"
        if match_id in self.tasks or self.store.get(match_id) is not None:
            raise AlreadyExists(f"match {match_id} exists")
        seats = [Seat(entries[i & 1].bot_id, entries[i & 1].name, links[i & 1]) for i in range(4)]
        for link in links:
            link.seats_in_use += 2
        spec = MatchSpec(
            match_id=match_id, rules=rules,
            seed=secrets.randbits(48) if seed is None or seed == "" else seed,
            seats=seats, target=target or None, time=self.config.time,
        )
        runner = MatchRunner(self.hub, spec, publish=lambda ev: self._publish(match_id, ev))
        self.matches[match_id] = runner.state
        self._watchers[match_id] = []
        self._history[match_id] = []
        task = asyncio.get_running_loop().create_task(self._run(runner, links), name=match_id)
        self.tasks[match_id] = task
        return match_id

    async def _run(self, runner: MatchRunner, links: list[BotLink]) -> MatchState:
        match_id = runner.spec.match_id
        try:
            state = await runner.run()
        finally:
            for link in links:
                link.seats_in_use -= 2
            if runner.state.state == "finished" and runner.state.record is not None:
                self.store.put(match_id, runner.state.record)
            for q in self._watchers.pop(match_id, []):
                q.put_nowait(_DONE)
            self._finished_history.append(match_id)
            while len(self._finished_history) > KEEP_FINISHED_HISTORY:
                self._history.pop(self._finished_history.popleft(), None)
            self._finished.append(match_id)
            while len(self._finished) > KEEP_FINISHED_MATCHES:
                # a long-running node keeps only the latest states in memory; records stay in the store
                self.matches.pop(self._finished.popleft(), None)
            self.tasks.pop(match_id, None)
        return state

    async def wait(self, match_id: str) -> MatchState:
        task = self.tasks.get(match_id)
        if task is not None:
            return await task
        return self.get_match(match_id)

    def _publish(self, match_id: str, event: pb.PublicEvent) -> None:
        history = self._history.get(match_id)
        if history is not None:
            history.append(event)
        for q in self._watchers.get(match_id, ()):
            q.put_nowait(event)

    def watch(
        self, match_id: str,
    ) -> tuple[list[pb.PublicEvent], asyncio.Queue[pb.PublicEvent | None] | None]:
        """The match's public events so far, and a queue of the next ones ending with None.

        The queue is None once the match is over; the history is kept for the
        running matches and the last few finished ones, so a watcher that
        arrives late still sees the whole match.
        """
        history = list(self._history.get(match_id, ()))
        if match_id not in self._watchers:
            if not history and match_id not in self.matches and self.store.get(match_id) is None:
                raise NotFound(f"no match {match_id!r} on this node")
            return history, None
        q: asyncio.Queue[pb.PublicEvent | None] = asyncio.Queue()
        self._watchers[match_id].append(q)
        return history, q

    def unwatch(self, match_id: str, q: asyncio.Queue[pb.PublicEvent | None]) -> None:
        qs = self._watchers.get(match_id)
        if qs and q in qs:
            qs.remove(q)

    def get_match(self, match_id: str) -> MatchState:
        state = self.matches.get(match_id)
        if state is not None:
            return state
        raise NotFound(f"no match {match_id!r} on this node")

    def get_record(self, match_id: str) -> dict[str, Any]:
        record = self.store.get(match_id)
        if record is not None:
            return record
        state = self.matches.get(match_id)
        if state is not None:
            raise FailedPrecondition(f"match {match_id} is still running; watch it instead")
        raise NotFound(f"no match {match_id!r} on this node")

    def list_records(self) -> list[str]:
        return self.store.ids()

    async def shutdown(self) -> None:
        for task in list(self.tasks.values()):
            task.cancel()
        await asyncio.gather(*self.tasks.values(), return_exceptions=True)
