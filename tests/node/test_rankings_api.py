"""The rankings over gRPC and the CLI: ``GetLeaderboard``, ``GetBot`` and ``belote-arena rankings``.

A real node on an embedded queue plays real tournaments between SDK bots over
gRPC; the rankings are then read as a stranger would.
"""

from __future__ import annotations

import asyncio
import json
import re
import urllib.request
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
import pytest
from belote.arena.v1 import arena_service_pb2 as apb
from belote_bot import HeuristicBot, RandomBot

from arena.cli import main as cli_main
from arena.harness import local_arena
from arena.web import web_for
from tests.node.test_tournament_trust import ADMIN, connect, create, finished, node
from tests.referee.arena_helpers import arena_stub, arun, until

BOTS = ("strong", "weak", "weak-b")


async def status_of(call: Any) -> grpc.StatusCode:
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await call
    code: grpc.StatusCode = info.value.code()
    return code


def test_a_rated_tournament_ranks_its_bots_with_intervals_in_its_preset_and_its_own_pool(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    async def main() -> None:
        stop = asyncio.Event()
        async with node(tmp_path) as running:
            tasks = [connect(running, "strong", HeuristicBot(1), stop),
                     connect(running, "weak", RandomBot(2), stop),
                     connect(running, "weak-b", RandomBot(3), stop)]
            async with arena_stub(running.address, ADMIN) as admin:
                reply = await create(admin, tournament_id="league", format="round-robin", bots=list(BOTS),
                                     ruleset="classic", deals=2, rounds=2)
                assert not reply.unrated_reason
                await create(admin, tournament_id="rerun", format="round-robin", bots=["strong", "weak"],
                             ruleset="coinche", deals=1, seed="given")
                await until(lambda: finished(running, "league") and finished(running, "rerun"), timeout=60,
                            what="the tournaments to finish")
            async with arena_stub(running.address) as stranger:
                board = await stranger.GetLeaderboard(apb.GetLeaderboardRequest(pool="classic"))
                assert board.pool == "classic" and board.method == "bt" and board.total == 3
                assert set(board.pools) == {"classic", "tournament:league", "tournament:rerun"}
                assert {e.bot for e in board.entries} == set(BOTS)
                ratings = [e.rating for e in board.entries]
                assert ratings == sorted(ratings, reverse=True)
                # competition ranks: equal ratings (equal records) share a rank
                assert [e.rank for e in board.entries] == [1 + sum(r > x for r in ratings) for x in ratings]
                assert abs(sum(ratings) / 3 - 1500) < 1e-6  # anchored on the mean
                results = running.worker.broker.results("league")
                for e in board.entries:
                    assert e.HasField("low") and e.low < e.rating < e.high
                    played = sum(e.bot in (r.team0, r.team1) for r in results)
                    assert e.games == played == e.wins + e.draws + e.losses > 0
                assert [e.HasField("los_next") for e in board.entries] == [True, True, False]
                assert all(0 <= e.los_next <= 1 for e in board.entries[:2])
                # the default pool is the preset with the most games; a tournament has its own
                assert (await stranger.GetLeaderboard(apb.GetLeaderboardRequest())).pool == "classic"
                own = await stranger.GetLeaderboard(apb.GetLeaderboardRequest(pool="tournament:league"))
                assert [(e.bot, e.games) for e in own.entries] == [(e.bot, e.games) for e in board.entries]
                # an unrated tournament (its seed was given) counts in its own pool only
                rerun = await stranger.GetLeaderboard(apb.GetLeaderboardRequest(pool="tournament:rerun"))
                assert rerun.total == 2
                # a page, the online Elo
                page = await stranger.GetLeaderboard(
                    apb.GetLeaderboardRequest(pool="classic", offset=1, limit=1))
                assert [e.bot for e in page.entries] == [board.entries[1].bot] and page.total == 3
                elo = await stranger.GetLeaderboard(apb.GetLeaderboardRequest(pool="classic", method="elo"))
                assert {e.bot for e in elo.entries} == set(BOTS)
                assert not any(e.HasField("low") or e.HasField("los_next") for e in elo.entries)
                # bad requests
                bad = grpc.StatusCode.INVALID_ARGUMENT
                for request, code in (
                    (apb.GetLeaderboardRequest(pool="coinche"), grpc.StatusCode.NOT_FOUND),
                    (apb.GetLeaderboardRequest(pool="classic", method="glicko"), bad),
                    (apb.GetLeaderboardRequest(pool="classic", limit=201), bad),
                ):
                    assert await status_of(stranger.GetLeaderboard(request)) == code, request
                # a bot: its ratings in each pool, its recent matches
                bot = await stranger.GetBot(apb.GetBotRequest(name="strong"))
                assert bot.bot.name == "strong" and bot.bot.connected
                assert {r.pool for r in bot.ratings} == {"classic", "tournament:league", "tournament:rerun"}
                classic = next(r for r in bot.ratings if r.pool == "classic")
                top = next(e for e in board.entries if e.bot == "strong")
                assert (classic.rating, classic.rank, classic.games) == (top.rating, top.rank, top.games)
                assert bot.recent_matches and all("strong" in m.players for m in bot.recent_matches)
                ghost = stranger.GetBot(apb.GetBotRequest(name="ghost"))
                assert await status_of(ghost) == grpc.StatusCode.NOT_FOUND

            # the CLI prints the same leaderboard, as text and as the JSON API's object, which the
            # node's HTTP API serves too
            argv = ["rankings", "--address", running.address, "--pool", "classic",
                    "--data-dir", str(tmp_path)]
            assert await asyncio.to_thread(cli_main, [*argv, "--json"]) == 0
            printed = json.loads(capsys.readouterr().out)
            assert [(e["bot"], round(e["rating"], 6), round(e["low"], 6)) for e in printed["entries"]] == [
                (e.bot, round(e.rating, 6), round(e.low, 6)) for e in board.entries]
            async with web_for(running, "127.0.0.1:0") as site:
                url = f"{site.url}/api/v1/leaderboard?pool=classic"
                body = await asyncio.to_thread(lambda: urllib.request.urlopen(url, timeout=10).read())
            served = json.loads(body)
            # the page's own: whether each bot is connected now, and which ratings are provisional
            del served["provisional_rule"]
            for e in served["entries"]:
                del e["connected"], e["provisional"]
            assert served == printed
            assert await asyncio.to_thread(cli_main, argv) == 0
            text = capsys.readouterr().out
            assert "Bradley-Terry" in text and "95% interval" in text
            # each bot's row by its rank and whole name ("weak" is also the start of "weak-b")
            rows = {m.group(2): int(m.group(1)) for m in re.finditer(r"^(\d+)\s+(\S+)\s", text, re.M)}
            assert rows[board.entries[0].bot] < rows[board.entries[2].bot]
            assert await asyncio.to_thread(cli_main, ["rankings", "--address", running.address,
                                                      "--tournament", "league", "--json",
                                                      "--data-dir", str(tmp_path)]) == 0
            assert json.loads(capsys.readouterr().out)["pool"] == "tournament:league"
            stop.set()
            await asyncio.gather(*tasks, return_exceptions=True)

    arun(main(), timeout=120)


def test_a_node_alone_has_no_leaderboard_but_knows_its_bots() -> None:
    async def main() -> None:
        async with local_arena() as arena, arena_stub(arena.address) as stub:
            arena.node.register_bot("alpha")
            code = await status_of(stub.GetLeaderboard(apb.GetLeaderboardRequest()))
            assert code == grpc.StatusCode.UNIMPLEMENTED
            bot = await stub.GetBot(apb.GetBotRequest(name="alpha"))
            assert bot.bot.name == "alpha" and not bot.ratings
            assert await status_of(stub.GetBot(apb.GetBotRequest(name="beta"))) == grpc.StatusCode.NOT_FOUND

    arun(main())


def test_the_rankings_command_checks_its_flags_before_calling(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["rankings", "--limit", "0"]) == 1
    assert "--limit must be" in capsys.readouterr().err
    assert cli_main(["rankings", "--pool", "classic", "--tournament", "t1"]) == 1
    assert "not both" in capsys.readouterr().err


def test_a_partners_tournament_is_ranked_by_openskill_over_grpc_the_cli_and_http(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    names = ("pa", "pb", "pc", "pd")

    async def main() -> None:
        stop = asyncio.Event()
        async with node(tmp_path) as running:
            tasks = [connect(running, name, HeuristicBot(i) if i == 0 else RandomBot(i), stop)
                     for i, name in enumerate(names)]
            async with arena_stub(running.address, ADMIN) as admin:
                await create(admin, tournament_id="mixed", format="partners", bots=list(names),
                             ruleset="coinche", deals=1, rounds=3)
                await until(lambda: finished(running, "mixed"), timeout=60, what="the tournament to finish")
            async with arena_stub(running.address) as stranger:
                board = await stranger.GetLeaderboard(apb.GetLeaderboardRequest(pool="coinche",
                                                                                method="openskill"))
                assert board.method == "openskill" and {e.bot for e in board.entries} == set(names)
                assert all(e.games == 3 and e.low < e.rating < e.high for e in board.entries)
                bt = await stranger.GetLeaderboard(apb.GetLeaderboardRequest(pool="coinche"))
                assert bt.total == 0  # mixed sides move no Bradley-Terry count
                # a bot's own ratings say so too: openskill in the pools of its mixed games
                entry = next(e for e in board.entries if e.bot == "pa")
                got = await stranger.GetBot(apb.GetBotRequest(name="pa"))
                mine = [r for r in got.ratings if r.pool == "coinche"]
                assert [(r.method, r.rank, r.rating, r.games) for r in mine] == [
                    ("openskill", entry.rank, entry.rating, 3)]
            argv = ["rankings", "--address", running.address, "--pool", "coinche", "--method", "openskill",
                    "--data-dir", str(tmp_path)]
            assert await asyncio.to_thread(cli_main, [*argv, "--json"]) == 0
            printed = json.loads(capsys.readouterr().out)
            assert [e["bot"] for e in printed["entries"]] == [e.bot for e in board.entries]
            async with web_for(running, "127.0.0.1:0") as site:
                url = f"{site.url}/api/v1/leaderboard?pool=coinche&method=openskill"
                page = await asyncio.to_thread(lambda: json.load(urllib.request.urlopen(url, timeout=10)))
                assert [e["bot"] for e in page["entries"]] == [e.bot for e in board.entries]
                url = f"{site.url}/api/v1/bots/pa"
                detail = await asyncio.to_thread(lambda: json.load(urllib.request.urlopen(url, timeout=10)))
                assert [(r["pool"], r["method"], r["rank"]) for r in detail["ratings"]
                        if r["pool"] == "coinche"] == [("coinche", "openskill", entry.rank)]
            assert await asyncio.to_thread(cli_main, argv) == 0
            assert "openskill" in capsys.readouterr().out
            stop.set()
            await asyncio.gather(*tasks, return_exceptions=True)

    arun(main(), timeout=90)
