"""A referee node in this process, on loopback, with bots connected over real gRPC.

For a bot author, one call plays a bot against the built-in ones::

    from arena.harness import play_local
    print(play_local(MyBot(), opponent="heuristic", matches=4, ruleset="coinche"))

Everything goes through the same server and SDK code as in production: the
bot connects with its token over a real ``BotService.Connect`` stream.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from belote_bot import Bot, HeuristicBot, RandomBot, SearchBot, run_async

from arena.edge.tls import server_credentials
from arena.records import MatchRecord, TimeControl
from arena.referee.access import AccessPolicy
from arena.referee.arena_service import ArenaServicer
from arena.referee.node import Limits, Node, NodeConfig
from arena.referee.registry import digest, new_token
from arena.referee.service import start_server, stop_server

BUILTIN_BOTS: dict[str, type[Bot]] = {"random": RandomBot, "heuristic": HeuristicBot, "search": SearchBot}


@dataclass
class LocalArena:
    """A running node and the bots connected to it."""

    node: Node
    address: str
    #: this node's admin credential (for the ArenaService calls that need one)
    admin_token: str = ""
    #: the CA the bots check the node's certificate against (None: the node is plaintext)
    tls_ca: Path | None = None
    tasks: list[asyncio.Task[None]] = field(default_factory=list)
    stop: asyncio.Event = field(default_factory=asyncio.Event)

    async def connect(self, name: str, bot: Bot, concurrency: int = 8) -> str:
        """Register ``bot`` under ``name``, connect it, and wait until it is seated."""
        entry, token = await self.node.register(name)
        task = asyncio.get_running_loop().create_task(
            run_async(bot, self.address, token, concurrency, name=name, stop=self.stop, tls_ca=self.tls_ca),
            name=f"bot-{name}",
        )
        self.tasks.append(task)
        # a bot that says its version connects as that version's stream, and its name seats it once
        # the registry keeps the version promoted (a new bot's first version is): wait for what the
        # name seats, not for the unversioned link, which such a bot never opens
        waiter = asyncio.ensure_future(self._seated(entry.name, bot.version))
        done, _ = await asyncio.wait({waiter, task}, timeout=10, return_when=asyncio.FIRST_COMPLETED)
        if waiter not in done:
            waiter.cancel()
            if task.done() and task.exception() is not None:
                raise RuntimeError(f"bot {name} could not connect: {task.exception()}")
            raise RuntimeError(f"bot {name} did not connect within 10 s")
        return entry.bot_id

    async def _seated(self, name: str, bot_version: str) -> None:
        """Return once the bot ``name`` connected and its name seats that stream."""
        entry = self.node.bot_named(name)
        assert entry is not None
        await self.node.link_for(entry, bot_version).connected_event.wait()
        while True:
            entry = self.node.bot_named(name)
            link = None if entry is None else self.node.play_link(entry)
            if link is not None and link.connected:
                return
            await asyncio.sleep(0.01)

    async def play(self, team0: str, team1: str, ruleset: Any = "classic", **kw: Any) -> MatchRecord:
        """Play one match to its end; its record."""
        match_id = self.node.start_match(team0, team1, ruleset, **kw)
        return await self.node.wait(match_id)

    async def play_seated(self, seats: Sequence[str], ruleset: Any = "classic", **kw: Any) -> MatchRecord:
        """Play one match with the bot of each seat 0..3 (partners may differ); its record."""
        match_id = self.node.start_match("", "", ruleset, seats=seats, **kw)
        return await self.node.wait(match_id)


@contextlib.asynccontextmanager
async def local_arena(
    data_dir: Path | None = None, time: TimeControl | None = None, listen: str = "127.0.0.1:0", *,
    access: AccessPolicy | None = None, tls: tuple[Path, Path, Path] | None = None,
    limits: Limits | None = None, arena_service: Callable[[Node], ArenaServicer] | None = None,
) -> AsyncIterator[LocalArena]:
    """Start a node on an ephemeral loopback port; stop it and its bots on exit.

    The node gets a fresh admin credential (``arena.admin_token``) unless
    ``access`` says otherwise. With ``tls`` = (certificate, key, CA), all PEM
    files, the node serves TLS and the bots :meth:`LocalArena.connect`
    connects check its certificate against the CA (the certificate must name
    127.0.0.1). ``arena_service`` makes its ArenaService (the node's own by
    default). ``listen`` on ``localhost:0`` takes both loopback addresses, so
    that a test may call from two (``[::1]`` and ``127.0.0.1``).
    """
    admin = new_token("adm")
    access = access or AccessPolicy(admin_sha256=digest(admin))
    credentials = None if tls is None else server_credentials(tls[0], tls[1])
    node = Node(NodeConfig(data_dir=data_dir, time=time or TimeControl(), access=access,
                           limits=limits or Limits()))
    server, port = await start_server(node, listen, credentials=credentials,
                                      arena=None if arena_service is None else arena_service(node))
    arena = LocalArena(node, f"127.0.0.1:{port}", admin if access.admin_sha256 == digest(admin) else "",
                       tls_ca=None if tls is None else tls[2])
    try:
        yield arena
    finally:
        arena.stop.set()
        await stop_server(server, node, grace=0.5)
        for t in arena.tasks:
            t.cancel()
        await asyncio.gather(*arena.tasks, return_exceptions=True)


@dataclass
class LocalResult:
    #: the records of the matches, in order (the bot played team 0 in the even ones)
    matches: list[MatchRecord]
    wins: int
    losses: int
    draws: int
    points_for: int
    points_against: int
    #: the referee's strikes of the bot, over all the matches (each played its fallback)
    strikes: int = 0
    #: those strikes by kind: ``late``, ``illegal``, ``no_action``
    strikes_by_kind: dict[str, int] = field(default_factory=dict)

    def __str__(self) -> str:
        kinds = ", ".join(f"{kind} {n}" for kind, n in sorted(self.strikes_by_kind.items()))
        struck = f"{self.strikes} strikes ({kinds})" if self.strikes else "no strike"
        return (f"{len(self.matches)} matches: {self.wins} won, {self.losses} lost, {self.draws} drawn; "
                f"points {self.points_for}-{self.points_against}; {struck}")


async def play_local_async(
    bot: Bot, opponent: str | Bot = "heuristic", *, matches: int = 2, ruleset: Any = "classic",
    deals: int | None = None, seed: int | str = 0, time: TimeControl | None = None,
) -> LocalResult:
    """Play ``matches`` matches (alternating sides) of ``bot`` against ``opponent``."""
    rival = BUILTIN_BOTS[opponent]() if isinstance(opponent, str) else opponent
    async with local_arena(time=time) as arena:
        await arena.connect("candidate", bot)
        await arena.connect("opponent", rival)
        records = []
        for i in range(matches):
            sides: Sequence[str] = ("candidate", "opponent") if i % 2 == 0 else ("opponent", "candidate")
            records.append(await arena.play(sides[0], sides[1], ruleset, seed=f"{seed}/{i}", deals=deals))
    result = LocalResult(records, 0, 0, 0, 0, 0)
    for i, record in enumerate(records):
        me = i % 2
        result.points_for += record.totals[me]
        result.points_against += record.totals[1 - me]
        if record.winner is None:
            result.draws += 1
        elif record.winner == me:
            result.wins += 1
        else:
            result.losses += 1
        for strike in record.strikes:
            if strike.seat & 1 == me:
                result.strikes += 1
                kind = str(strike.kind)
                result.strikes_by_kind[kind] = result.strikes_by_kind.get(kind, 0) + 1
    return result


def play_local(bot: Bot, opponent: str | Bot = "heuristic", **kw: Any) -> LocalResult:
    """Synchronous :func:`play_local_async`."""
    return asyncio.run(play_local_async(bot, opponent, **kw))
