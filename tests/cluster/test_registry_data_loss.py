"""A Redis that lost the arena's data is said so by every read of the bot registry, never an empty list.

A node (``belote-arena serve`` with its web server) on a Redis database of the
test's own, with a registered bot; then every key of the arena is deleted, as
a Redis restarted empty would have them. ``bot list`` exits non-zero with the
words ``tournament status`` uses ("lost the arena's data"); ``ListBots`` and
``GetBot`` are UNAVAILABLE and the web's bot pages 503, saying the same.
Before, ``bot list`` printed nothing and exited 0.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import grpc
import pytest
from belote.arena.v1 import arena_service_pb2 as apb
from belote.arena.v1 import arena_service_pb2_grpc as agrpc

from tests.cluster.procs import PREFIX, Procs, cli, free_port, redis_url, register_bots, wait_for

pytestmark = [pytest.mark.reliability, pytest.mark.slow]

LOST = "lost the arena's data"


def http_error(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as reply:
            return int(reply.status), reply.read().decode()
    except urllib.error.HTTPError as e:
        return int(e.code), str(json.loads(e.read()).get("error", ""))


def test_every_read_of_the_registry_says_redis_lost_the_data(
        procs: Procs, own_db: tuple[Any, int], tmp_path: Path) -> None:
    client, db = own_db
    http_port = free_port()
    node = procs.ready(procs.start_node("node", tmp_path / "node", redis=redis_url(db),
                                        http=f"127.0.0.1:{http_port}"))
    register_bots(node.address, ["alpha"])
    listed = cli("bot", "list", "--address", node.address)
    assert "alpha" in listed.stdout

    arena_keys = list(client.scan_iter(match=f"{PREFIX}:*", count=1000))
    client.delete(*arena_keys)  # Redis restarted empty (the database's own mark stays: it is ours)

    def lost() -> Any:
        done = cli("bot", "list", "--address", node.address, check=False)
        return done if done.returncode != 0 else None

    done = wait_for("bot list to say the data is lost", lost, 15, every=0.2)
    assert LOST in done.stderr and done.stdout == "", (done.stdout, done.stderr)

    with grpc.insecure_channel(node.address) as channel:
        stub = agrpc.ArenaServiceStub(channel)
        for call in (lambda: stub.ListBots(apb.ListBotsRequest(), timeout=10),
                     lambda: stub.GetBot(apb.GetBotRequest(name="alpha"), timeout=10)):
            with pytest.raises(grpc.RpcError) as refused:
                call()
            error: Any = refused.value
            assert error.code() == grpc.StatusCode.UNAVAILABLE
            assert LOST in error.details()
    for path in ("/api/v1/bots", "/api/v1/bots/alpha"):
        status, message = http_error(f"http://127.0.0.1:{http_port}{path}")
        assert status == 503 and LOST in message, (path, status, message)
