"""Run a referee node until SIGINT/SIGTERM (``belote-arena serve``)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from pathlib import Path

from arena.referee.node import Node, NodeConfig
from arena.referee.runner import TimeControl
from arena.referee.service import start_server, stop_server

log = logging.getLogger("arena.referee")


def install_uvloop() -> bool:
    """Use uvloop when it is installed (10-25% less CPU per decision)."""
    try:
        import uvloop
    except ImportError:
        return False
    uvloop.install()
    return True


async def serve_forever(
    listen: str, data_dir: Path | None, time_control: TimeControl, *,
    register: list[tuple[str, str]] | None = None, replace_streams: bool = False,
) -> None:
    node = Node(NodeConfig(data_dir=data_dir, time=time_control, replace_streams=replace_streams))
    for name, token in register or []:
        if node.registry.by_name(name) is None:
            node.register_bot(name, token)
    server, port = await start_server(node, listen)
    log.info("node %s listening on %s (port %d), data in %s", node.node_id, listen, port,
             data_dir or "memory")
    print(f"belote-arena node {node.node_id} listening on port {port}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    log.info("stopping: %d matches running", len(node.tasks))
    await stop_server(server, node)
