"""The metrics' label sets stay bounded whatever the bots do: a bot that connects a new version label for
each match, or a registry that keeps growing, cannot make a node's scrape grow without end.

Every metric of arena/metrics.py whose labels a bot or a user chooses: ``decisions_total{bot}``,
``strikes_total{bot,reason}``, ``forfeits_total{bot}`` (a bot's name, never its version: before, one
series per ``name@version``), ``rating{pool,bot}`` (the preset pools' top ``MAX_LIMIT``),
``ladder_matches_total{pool}`` (the presets' pools); the gRPC counters are labelled by the methods the
server registered, never one a caller names. Past :data:`MAX_BOT_LABELS` bots, the rest count together
under ``bot="_other"``; ``promtool check metrics`` still passes.
"""

from __future__ import annotations

import shutil
import subprocess
from typing import Any

import grpc
import pytest
from belote.arena.v1 import arena_service_pb2 as apb
from belote_bot import HeuristicBot, RandomBot
from prometheus_client.parser import text_string_to_metric_families

from arena.metrics import MAX_BOT_LABELS, OTHER_BOTS, NodeMetrics
from arena.referee.node import Node
from tests.node.test_metrics import samples, total
from tests.referee.arena_helpers import arena_stub, arun, connect_client, node_server, until
from tests.referee.test_version_streams import ADMIN, config

pytestmark = pytest.mark.security

#: the versions the bot cycles through, a match each
VERSIONS = 6


def series(text: str, family: str) -> list[dict[str, str]]:
    """The label sets of a family's samples in an exposition."""
    return [dict(s.labels) for f in text_string_to_metric_families(text) if f.name == family
            for s in f.samples if s.name == family + "_total" or s.name == family]


def lint(text: str) -> None:
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.skip("promtool is not installed (Debian's prometheus package): the lint was not run")
    checked = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True, text=True,
                             timeout=30)
    assert checked.returncode == 0 and not (checked.stdout + checked.stderr).strip(), checked.stdout + \
        checked.stderr


async def versioned(node: Node, address: str, version: str, token: str | None = None) -> object:
    bot = HeuristicBot(1) if version == "1" else RandomBot(int(version[1:]))
    bot.version = version
    return await connect_client(node, address, bot, "delta", token=token, concurrency=2)


async def play_as_new_version(node: Node, address: str, admin: Any, token: str, label: str) -> None:
    """Connect version ``label`` of delta, play a match of it against version 1, and leave."""
    other = await versioned(node, address, label, token=token)
    key = f"delta@{label}"
    await until(lambda: key in node.connected_bots(), 5, label)
    started = await admin.StartMatch(apb.StartMatchRequest(team0_bot=key, team1_bot="delta@1",
                                                           ruleset="coinche", deals=1))
    await node.wait(started.match_id)
    other.stop.set()  # type: ignore[attr-defined]
    await until(lambda: key not in node.connected_bots(), 5, label)


def test_a_bot_cycling_version_labels_adds_no_series() -> None:
    """A bot connects a new version label before each match and plays it (as a version test would):
    its decisions and strikes stay one series, under its name."""
    async def main() -> str:
        async with node_server(config()) as (node, address):
            first = await versioned(node, address, "1")
            async with arena_stub(address, ADMIN) as admin:
                for i in range(2, VERSIONS + 2):
                    await play_as_new_version(node, address, admin, first.token, f"v{i}")  # type: ignore[attr-defined]
            first.stop.set()  # type: ignore[attr-defined]
            return node.metrics.exposition().decode()

    text = arun(main(), 120)
    assert series(text, "belote_arena_decisions") == [{"bot": "delta"}]
    values = samples(text)
    assert total(values, "belote_arena_decisions_total", bot="delta") > VERSIONS * 8  # every match's
    assert {s["bot"] for s in series(text, "belote_arena_strikes")} <= {"delta"}
    lint(text)


def test_bots_past_the_bound_count_together_under_other() -> None:
    """However many bots play (names are cheap where registration is open), a metric names
    :data:`MAX_BOT_LABELS` of them; the others count together, so the sums stay right."""
    metrics = NodeMetrics()
    many = MAX_BOT_LABELS + 500
    for i in range(many):
        for version in ("", "@1", "@2"):
            name = f"bot{i:05d}{version}"
            metrics.decisions.decision(name, 1000)
            metrics.strike(name, "late")
            metrics.forfeit(name)
    text = metrics.exposition().decode()
    values = samples(text)
    for family, per_bot in (("belote_arena_decisions", 3), ("belote_arena_strikes", 3),
                            ("belote_arena_forfeits", 3)):
        bots = [s["bot"] for s in series(text, family)]
        assert len(bots) == MAX_BOT_LABELS + 1 and OTHER_BOTS in bots, family
        assert total(values, family + "_total") == many * per_bot
        assert total(values, family + "_total", bot=OTHER_BOTS) == (many - MAX_BOT_LABELS) * per_bot
        assert not any("@" in b for b in bots)
    lint(text)


def test_no_caller_names_a_grpc_label() -> None:
    """A call to a method the server does not have answers UNIMPLEMENTED and adds no series."""
    async def main() -> str:
        async with node_server(config()) as (node, address):
            async with grpc.aio.insecure_channel(address) as channel:
                for i in range(20):
                    with pytest.raises(grpc.aio.AioRpcError) as missing:
                        call: Any = channel.unary_unary(f"/belote.arena.v1.ArenaService/Nothing{i}")
                        await call(b"")
                    assert missing.value.code() is grpc.StatusCode.UNIMPLEMENTED
            return node.metrics.exposition().decode()

    text = arun(main())
    assert "Nothing" not in text
