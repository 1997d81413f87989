"""A node's /metrics and its log lines, over a real tournament.

A real node (embedded queue, its web server, SDK bots over real gRPC, one of
them always late) plays a round-robin. A scrape taken while matches run passes
``promtool check metrics``; the counters after it match what the records say
happened; no label value is a match id or a token; a whole tournament's JSON
log lines name the events that matter with their fields, and hold no token and
no seed.
"""

from __future__ import annotations

import asyncio
import io
import json
import logging
import shutil
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from belote_bot import Action, HeuristicBot, Observation, RandomBot
from prometheus_client.parser import text_string_to_metric_families

from arena.logformat import JsonFormatter
from arena.metrics import decision_buckets
from arena.queue import Claim
from arena.records import ResultReason, StrikeReason, TimeControl
from arena.tournament import MatchJob
from arena.web import web_for
from tests.node.test_tournament_trust import ADMIN, create, finished, node
from tests.referee.arena_helpers import arena_stub, arun, until

TIME = TimeControl(deadline=0.1, time_bank=0.2, max_strikes=3, grace=5.0)
TOURNAMENT = "metrics-rr"


class LateBot(RandomBot):
    """Answers long after its deadline and time bank (0.3 s), every time: a strike (late) per
    decision. Long after: a limit is extended by the node's own stalls, which a loaded machine
    makes (arena.referee.deadlines), and an answer 0.1 s late could then come in time."""

    async def act(self, obs: Observation) -> Action:  # type: ignore[override]
        await asyncio.sleep(1.0)
        return super().act(obs)


def scrape(url: str) -> str:
    with urllib.request.urlopen(f"{url}/metrics", timeout=10) as reply:
        assert reply.headers["Content-Type"].startswith("text/plain; version=0.0.4")
        text: str = reply.read().decode()
        return text


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """(sample name, sorted labels) -> value."""
    out = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def total(values: dict[tuple[str, tuple[tuple[str, str], ...]], float], name: str, **labels: str) -> float:
    return sum(v for (n, ls), v in values.items()
               if n == name and all((k, w) in ls for k, w in labels.items()))


def connect_bot(running: Any, name: str, bot: Any, stop: asyncio.Event, tokens: list[str]) -> Any:
    from belote_bot import run_async

    _, token = running.node.register_bot(name)
    tokens.append(token)
    return asyncio.create_task(run_async(bot, running.address, token, 8, stop=stop, all_nodes=False,
                                         verbose=False))


def test_metrics_and_logs_of_a_real_tournament(tmp_path: Path) -> None:
    logs = io.StringIO()
    handler = logging.StreamHandler(logs)
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    old_level = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    tokens: list[str] = []
    during: list[str] = []

    async def main() -> tuple[str, Any, list[Any]]:
        stop = asyncio.Event()
        async with node(tmp_path, time=TIME, capacity=2) as running, \
                web_for(running, "127.0.0.1:0") as site:
            bots = [connect_bot(running, "alpha", HeuristicBot(seed=1), stop, tokens),
                    connect_bot(running, "beta", RandomBot(seed=2), stop, tokens),
                    connect_bot(running, "late", LateBot(seed=3), stop, tokens)]
            await until(lambda: sum(b.connected for b in running.node.bots()) == 3, 10, "the bots")
            async with arena_stub(running.address, ADMIN) as admin:
                await create(admin, tournament_id=TOURNAMENT, format="round-robin",
                             bots=["alpha", "beta", "late"], ruleset="classic", deals=2)
                # a scrape while matches run (the late bot's last a second or more)
                await until(lambda: any(s.state.value == "running" for s in running.node.summaries()),
                            20, "a running match")
                during.append(await asyncio.to_thread(scrape, site.url))
                await until(lambda: finished(running, TOURNAMENT), 60, "the tournament to finish")
            broker = running.worker.broker
            results = broker.results(TOURNAMENT)
            # the exactly-once guard: a result written again is refused, and counted
            first = results[0]
            job = MatchJob(first.match_id, TOURNAMENT, first.team0, first.team1, "classic", "")
            await running.worker._finish(Claim(job, running.node.node_id, 1, time.time() + 5, "0"),
                                         first.record)
            after = await asyncio.to_thread(scrape, site.url)
            stop.set()
            await asyncio.gather(*bots, return_exceptions=True)
            return after, running, results

    try:
        after, running, results = arun(main(), timeout=100)
    finally:
        root.removeHandler(handler)
        root.setLevel(old_level)

    # ---- the counters match what happened
    values = samples(after)
    records = [r.record for r in results]
    assert len(records) == 6  # 3 bots, each pair twice (both seatings)
    forfeits = [r for r in records if r.result.reason is ResultReason.FORFEIT]
    assert len(forfeits) == 4  # every match of the late bot
    # the records play every decision but the one that forfeits (the late bot's third strike): it
    # counts too, so that strikes / decisions is a rate (the late bot's 12 strikes were once over 8)
    decisions = sum(len(deal) for r in records for deal in r.latencies_us) + len(forfeits)
    assert decisions > len(forfeits)
    assert total(values, "belote_arena_decisions_total") == decisions
    answered = sum(1 for r in records for deal in r.latencies_us for lat in deal if lat >= 0)
    assert total(values, "belote_arena_decision_seconds_count") == answered
    buckets = {float(ls[0][1]) for (n, ls), _ in values.items() if n == "belote_arena_decision_seconds_bucket"
               and ls[0][1] != "+Inf"}
    assert buckets == set(decision_buckets(TIME))
    for bot in ("alpha", "beta", "late"):
        assert 0 < total(values, "belote_arena_decisions_total", bot=bot) < decisions
    assert total(values, "belote_arena_matches_finished_total") == len(records)
    assert total(values, "belote_arena_matches_finished_total", outcome="forfeit") == 4
    assert total(values, "belote_arena_forfeits_total", bot="late") == 4
    late_strikes = sum(1 for r in records for s in r.strikes if s.kind is StrikeReason.LATE)
    assert late_strikes == 12
    assert total(values, "belote_arena_strikes_total", bot="late", reason="late") == late_strikes
    # the late bot is struck on each of its decisions, the forfeiting one included: a strike rate of 100%
    assert total(values, "belote_arena_decisions_total", bot="late") == late_strikes
    for bot in ("alpha", "beta", "late"):
        assert total(values, "belote_arena_strikes_total", bot=bot) \
            <= total(values, "belote_arena_decisions_total", bot=bot)
    assert total(values, "belote_arena_strikes_total", bot="alpha") == 0
    assert total(values, "belote_arena_deals_played_total") == sum(len(r.deals) for r in records)
    assert total(values, "belote_arena_results_written_total") == len(records)
    assert total(values, "belote_arena_results_duplicate_total") == 1
    # a claim counts once it starts: each match once, however often a claim found its bots busy
    # (three bots, two slots: a claim may be given back) and was released
    assert total(values, "belote_arena_queue_jobs_claimed_total") == len(records)
    assert total(values, "belote_arena_queue_jobs_released_total") == running.worker.released
    assert total(values, "belote_arena_queue_jobs_reclaimed_total") == 0
    assert total(values, "belote_arena_queue_dead_letters_total") == 0
    assert total(values, "belote_arena_queue_jobs_waiting") == 0
    assert total(values, "belote_arena_node_capacity") == 2
    assert total(values, "belote_arena_live_nodes") == 1
    assert total(values, "belote_arena_matches_running") == 0
    assert total(values, "belote_arena_connected_bots") == 3
    assert total(values, "belote_arena_bot_streams") == 3
    assert {b for (n, ls), _ in values.items() if n == "belote_arena_rating" for k, b in ls if k == "bot"} \
        == {"alpha", "beta", "late"}
    # gRPC, with go-grpc-prometheus's names and labels
    connect = {"grpc_service": "belote.arena.v1.BotService", "grpc_method": "Connect",
               "grpc_type": "bidi_stream"}
    # a stream for each bot open at the scrape; a bot whose stream a loaded machine dropped came back on
    # another (4 started, 1 handled, once), so the open ones are counted, not the started ones
    started = total(values, "grpc_server_started_total", **connect)
    assert started >= 3 and started - total(values, "grpc_server_handled_total", **connect) == 3
    assert total(values, "grpc_server_msg_received_total", **connect) > 0
    assert total(values, "grpc_server_msg_sent_total", **connect) > 0
    create_call = {"grpc_service": "belote.arena.v1.ArenaService", "grpc_method": "CreateTournament"}
    assert total(values, "grpc_server_handled_total", grpc_code="OK", grpc_type="unary", **create_call) == 1
    assert total(values, "grpc_server_handling_seconds_count", **create_call) == 1
    assert total(values, "process_cpu_seconds_total") > 0
    # the node's own stalls (none to speak of here, but the families are there for the dashboards)
    for name in ("belote_arena_loop_stall_seconds_count", "belote_arena_loop_stall_seconds_sum",
                 "belote_arena_deadline_extensions_total"):
        assert (name, ()) in values, name
    assert any(n.startswith("python_gc_") for n, _ in values)

    # ---- bounded labels: never a match id or a token
    label_values = {v for text in (after, *during) for (_, ls) in samples(text) for _, v in ls}
    match_ids = {r.match_id for r in records}
    assert not label_values & match_ids
    assert not any(t in v for t in tokens for v in label_values)
    assert not any(TOURNAMENT in v for v in label_values)

    # ---- one JSON line per event that matters, with its fields; no token, no seed
    lines = [json.loads(line) for line in logs.getvalue().splitlines()]
    events: dict[str, list[dict[str, Any]]] = {}
    for line in lines:
        assert {"time", "level", "logger", "message"} <= set(line)
        events.setdefault(line.get("event", ""), []).append(line)
    for event in ("node_start", "node_stop", "bot_connected", "bot_disconnected", "strike", "forfeit",
                  "match_end"):
        assert event in events, f"no {event} line"
        assert all(line["node"] == running.node.node_id for line in events[event])
    assert {line["match_id"] for line in events["match_end"]} == match_ids
    assert {line["match_id"] for line in events["forfeit"]} == {r.match_id for r in forfeits}
    assert {line["bot"] for line in events["forfeit"]} == {"late"}
    assert {line["bot"] for line in events["bot_connected"]} == {"alpha", "beta", "late"}
    everything = logs.getvalue()
    assert not any(token in everything for token in tokens)
    seeds = {r.seed for r in records if r.seed}
    assert len(seeds) == len(records)
    assert not any(seed in everything for seed in seeds)

    # ---- promtool is clean on the scrape taken during the tournament
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.skip("promtool is not installed (Debian's prometheus package): the lint was not run")
    checked = subprocess.run([promtool, "check", "metrics"], input=during[0], capture_output=True, text=True,
                             timeout=30)
    assert checked.returncode == 0 and not (checked.stdout + checked.stderr).strip(), checked.stdout + \
        checked.stderr



def test_the_rpc_interceptor_counts_each_call_by_its_status_code() -> None:
    """go-grpc-prometheus's counters: an answered call is OK, a refused one counts under its code,
    bytes that do not decode under INVALID_ARGUMENT (the guard refuses them after this count starts)."""
    import grpc
    import grpc.aio
    from belote.arena.v1 import arena_service_pb2 as apb
    from belote.arena.v1 import arena_service_pb2_grpc as agrpc

    from arena.referee.node import Limits, Node, NodeConfig
    from arena.referee.service import start_server, stop_server

    async def main() -> str:
        node = Node(NodeConfig(limits=Limits(refusal_hold=0)))
        server, port = await start_server(node)
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                stub = agrpc.ArenaServiceStub(channel)
                await stub.ListBots(apb.ListBotsRequest())
                with pytest.raises(grpc.aio.AioRpcError) as missing:
                    await stub.GetMatch(apb.GetMatchRequest(match_id="m-nowhere"))
                assert missing.value.code() is grpc.StatusCode.NOT_FOUND
                raw: Any = channel.unary_unary("/belote.arena.v1.ArenaService/GetMatch")
                with pytest.raises(grpc.aio.AioRpcError) as bad:
                    await raw(b"\xff\xff\xff")
                assert bad.value.code() is grpc.StatusCode.INVALID_ARGUMENT
        finally:
            # a call is counted once its handler is done, which may be a moment after its caller has
            # the status (CI once read the exposition in between): stopping the server waits for them
            await stop_server(server, node)
        return node.metrics.exposition().decode()

    values = samples(arun(main()))
    arena = {"grpc_service": "belote.arena.v1.ArenaService", "grpc_type": "unary"}
    assert total(values, "grpc_server_handled_total", grpc_method="ListBots", grpc_code="OK", **arena) == 1
    get = {"grpc_method": "GetMatch", **arena}
    assert total(values, "grpc_server_started_total", **get) == 2
    assert total(values, "grpc_server_handled_total", grpc_code="NOT_FOUND", **get) == 1
    assert total(values, "grpc_server_handled_total", grpc_code="INVALID_ARGUMENT", **get) == 1
    assert total(values, "grpc_server_msg_received_total", **get) == 2
    assert total(values, "grpc_server_msg_sent_total", **get) == 0
    assert total(values, "grpc_server_handling_seconds_count", **get) == 2
    assert "m-nowhere" not in str(values)
