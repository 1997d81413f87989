"""Run a whole node: the referee's gRPC server, the queue worker, the heartbeat.

``belote-arena serve`` runs one of these (:func:`serve_forever`), the demo
and the tests too (:func:`running_node`). Every node is the same: the state
that must outlive a node (jobs, leases, results, ratings, tournaments, the bot
registry, who is alive) is in the broker (Redis, or sqlite on one machine).
Each node sends a heartbeat with the address bots should use for it, and tells
its bots the other live nodes so they connect to every node.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

from arena.node.worker import Worker
from arena.queue import Broker, BrokerError
from arena.records import TimeControl
from arena.referee.node import Limits, Node, NodeConfig
from arena.referee.registry import BotEntry, BotRegistry
from arena.referee.service import start_server, stop_server
from arena.referee.store import MatchStore
from arena.tournament import Tournaments

log = logging.getLogger("arena.node")


class BrokerRegistryBackend:
    """The bot registry kept in the broker, shared by every node."""

    def __init__(self, broker: Broker) -> None:
        self.broker = broker

    def load(self) -> list[BotEntry]:
        return [BotEntry(**json.loads(e)) for e in self.broker.bot_entries()]

    def add(self, entry: BotEntry) -> bool:
        return self.broker.add_bot(entry.name, json.dumps(asdict(entry)))


@dataclass(frozen=True)
class NodeSettings:
    listen: str = "127.0.0.1:0"
    #: the address bots use for this node (default: the listen address)
    advertise: str = ""
    data_dir: Path | None = None
    time: TimeControl = field(default_factory=TimeControl)
    capacity: int = 4
    lease_s: float = 30.0
    drain_s: float = 60.0
    poll_s: float = 0.25
    heartbeat_s: float = 2.0
    replace_streams: bool = False
    node_id: str = ""
    #: what one bot, address or match may hold of the node
    limits: Limits = field(default_factory=Limits)


@dataclass
class RunningNode:
    node: Node
    worker: Worker
    #: this node's view of the broker's tournaments (the worker advances them)
    tournaments: Tournaments
    address: str
    port: int


async def _heartbeat(node: Node, broker: Broker, address: str, every: float) -> None:
    while True:
        try:
            await asyncio.to_thread(broker.heartbeat, node.node_id, address, every * 5)
            peers = await asyncio.to_thread(broker.live_nodes)
            await node.set_peers([a for nid, a in peers.items() if nid != node.node_id])
        except BrokerError as e:
            log.warning("heartbeat failed: %s", e)
        await asyncio.sleep(every)


@contextlib.asynccontextmanager
async def running_node(
    broker: Broker, config: NodeSettings, stop: asyncio.Event,
) -> AsyncIterator[RunningNode]:
    """Run a node until the block exits; then drain its matches and stop it."""
    registry = BotRegistry(BrokerRegistryBackend(broker))
    store = MatchStore(config.data_dir / "matches" if config.data_dir else None)
    node = Node(NodeConfig(data_dir=None, time=config.time, replace_streams=config.replace_streams,
                           node_id=config.node_id, limits=config.limits), registry=registry, store=store)
    server, port = await start_server(node, config.listen)
    host = config.listen.rsplit(":", 1)[0]
    address = config.advertise or f"{'127.0.0.1' if host in ('0.0.0.0', '[::]', '') else host}:{port}"
    tournaments = Tournaments(broker)
    worker = Worker(node, broker, capacity=config.capacity, lease_s=config.lease_s,
                    poll_s=config.poll_s, drain_s=config.drain_s, tournaments=tournaments)
    worker_task = asyncio.create_task(worker.run(stop), name="worker")
    beat = asyncio.create_task(_heartbeat(node, broker, address, config.heartbeat_s), name="heartbeat")
    log.info("node %s serving on %s (advertised %s), %d match slots", node.node_id, config.listen,
             address, config.capacity)
    try:
        yield RunningNode(node, worker, tournaments, address, port)
    finally:
        stop.set()
        with contextlib.suppress(Exception):
            await worker_task  # drains: each running match finishes or is released
        beat.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await beat
        await stop_server(server, node, grace=1.0)


async def serve_forever(
    broker: Broker, config: NodeSettings, *, register: list[tuple[str, str]] | None = None,
) -> None:
    """``belote-arena serve``: run a node until SIGINT or SIGTERM, then drain it."""
    import signal

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    async with running_node(broker, config, stop) as running:
        for name, token in register or []:
            if running.node.bot_named(name) is None:
                running.node.register_bot(name, token)
        print(f"belote-arena node {running.node.node_id} listening on port {running.port} "
              f"(bots connect to {running.address})", flush=True)
        await stop.wait()
        log.info("stopping: draining %d running matches", len(running.worker.running))
