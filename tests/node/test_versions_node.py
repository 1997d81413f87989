"""Bot versions on a real node (gRPC, the worker, the ladder thread) with real SDK bots, on the embedded
queue and on Redis: each version the bot connects with is kept; a new one is tested against the
promoted one by an SPRT on the ladder, promoted when it is better and rejected when it is not, without
anyone acting after ``ladder start``."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator

import pytest
from belote_bot import Bot, HeuristicBot, MatchInfo, RandomBot, run_async

from arena.node.ladder import Ladders
from arena.node.rankings import Rankings
from arena.node.run import NodeSettings, RunningNode, running_node
from arena.node.versions import is_test
from arena.queue import Broker
from arena.ratings.leaderboard import Entry
from arena.ratings.pools import LADDER_PREFIX
from arena.referee.versions import Version, find, promote, seen
from tests.referee.arena_helpers import until

POOL = "coinche"


def versioned(bot: Bot, version: str) -> Bot:
    bot.version = version
    return bot


def versions(running: RunningNode, name: str) -> tuple[Version, ...]:
    entry = running.node.bot_named(name)
    return () if entry is None else entry.versions


def state(running: RunningNode, name: str, version: str) -> str:
    v = find(versions(running, name), version)
    return "" if v is None else v.state


@contextlib.asynccontextmanager
async def node(broker: Broker) -> AsyncIterator[RunningNode]:
    settings = NodeSettings(poll_s=10.0, heartbeat_s=0.2, lease_s=10.0, drain_s=1.0,
                            capacity=8, absent_timeout_s=3600.0)
    async with running_node(broker, settings, asyncio.Event()) as running:
        yield running


@pytest.mark.slow
def test_a_better_version_is_promoted_and_a_worse_one_rejected(broker: Broker) -> None:
    async def main() -> None:
        async with node(broker) as running:
            _, token = running.node.register_bot("alpha")
            stop = asyncio.Event()
            tasks: list[asyncio.Task[None]] = []

            def connect(bot: Bot) -> None:
                tasks.append(asyncio.create_task(run_async(bot, running.address, token, 4, name="alpha",
                                                           stop=stop, ladder=True)))
            try:
                ladders = Ladders(broker)
                await asyncio.to_thread(ladders.start, POOL, 2)
                connect(versioned(RandomBot(1), "1"))
                await until(lambda: state(running, "alpha", "1") == "promoted", 15, "version 1 kept")
                first = find(versions(running, "alpha"), "1")
                assert first is not None and first.how == "first"
                connect(versioned(HeuristicBot(2), "2"))  # the same token, another stream
                await until(lambda: state(running, "alpha", "2") == "promoted", 90, "version 2 promoted")
                v2 = find(versions(running, "alpha"), "2")
                assert v2 is not None and v2.how == "sprt" and v2.decision == "H1" and v2.pairs >= 2
                assert v2.elo is not None and v2.elo > 0
                assert state(running, "alpha", "1") == "retired"
                connect(versioned(RandomBot(3), "3"))
                await until(lambda: state(running, "alpha", "3") == "rejected", 90, "version 3 rejected")
                v3 = find(versions(running, "alpha"), "3")
                assert v3 is not None and v3.decision == "H0" and v3.against == "2"
                assert state(running, "alpha", "2") == "promoted"
                # the tests were not rated in the pool: the bot's versions never show on its leaderboard
                assert not any("@" in bot for bot in broker.pool_ratings(POOL))
                tests = [t for t in broker.list_tournaments() if is_test(t)]
                assert len(tests) == 2
                await until(lambda: running.node.free_seats().get("alpha", 0) == 4, 20, "the games counted")
            finally:
                stop.set()
                await asyncio.gather(*tasks, return_exceptions=True)

    asyncio.run(asyncio.wait_for(main(), 200))


class Counted(RandomBot):
    """A random bot that counts the ladder matches it was seated in."""

    def __init__(self, seed: int) -> None:
        super().__init__(seed)
        self.ladder_matches = 0

    def on_match_start(self, info: MatchInfo) -> None:
        if info.match_id.startswith(LADDER_PREFIX):
            self.ladder_matches += 1


@pytest.mark.slow
@pytest.mark.security
def test_a_rejected_version_plays_no_rated_game_while_the_promoted_one_is_away(broker: Broker) -> None:
    """The issue's run: version 2 (a random bot) was rejected; while version 1, the promoted one,
    reconnected, the ladder seated version 2 under the bot's name, and its matches were recorded and
    rated as the bot's. Now the bot is away while its promoted version is: the ladder pairs it again
    once version 1 is back, and version 2 plays no ladder match."""
    async def main() -> None:
        async with node(broker) as running:
            registry = running.node._registry
            _, token = running.node.register_bot("alpha")
            _, beta_token = running.node.register_bot("beta")
            now = int(time.time())
            kept = (Version("1", now, now, "promoted", "first", changed=now),
                    Version("2", now, now, "rejected", decision="H0", llr=-3.0, pairs=8, changed=now))
            await asyncio.to_thread(registry.update_versions, "alpha", lambda _: kept)
            await until(lambda: state(running, "alpha", "2") == "rejected", 10, "the versions kept")
            stop, first_stop = asyncio.Event(), asyncio.Event()
            rejected = Counted(2)
            rejected.version = "2"

            def play(bot: Bot, tok: str, halt: asyncio.Event) -> asyncio.Task[None]:
                return asyncio.create_task(run_async(bot, running.address, tok, 4, name=bot.name or "bot",
                                                     stop=halt, ladder=True))

            def games(bot: str) -> int:
                return broker.pool_ratings(POOL).get(bot, (0.0, 0))[1]

            tasks = [play(versioned(HeuristicBot(1), "1"), token, first_stop), play(rejected, token, stop),
                     play(HeuristicBot(3), beta_token, stop)]
            try:
                await asyncio.to_thread(Ladders(broker).start, POOL, 1)
                await until(lambda: games("alpha") >= 3, 60, "ladder games with version 1")
                # version 1 goes away (a restart, a network blip) for longer than the ladder takes to pair
                first_stop.set()
                await tasks[0]
                await until(lambda: "alpha@1" not in running.node.connected_bots(), 10, "version 1 away")
                await asyncio.sleep(3.0)
                tasks[0] = play(versioned(HeuristicBot(1), "1"), token, stop)
                played = games("alpha")
                await until(lambda: games("alpha") >= played + 3, 60, "ladder games with version 1 back")
                assert rejected.ladder_matches == 0
            finally:
                stop.set()
                first_stop.set()
                await asyncio.gather(*tasks, return_exceptions=True)

    asyncio.run(asyncio.wait_for(main(), 200))


@pytest.mark.slow
def test_the_leaderboard_rates_the_promoted_version_on_its_own_games(broker: Broker) -> None:
    """The issue's run: right after version 3 was promoted the leaderboard read ``highbot 3 ... 347 games``,
    nearly all of them version 1's, at version 1's rating. Now the row rates the promoted version: right
    after its promotion, none of the games are its own and its interval is wider than the one before
    it's; as it plays, its own games count, and each version keeps its own rating."""
    async def main() -> None:
        async with node(broker) as running:
            registry = running.node._registry
            _, token = running.node.register_bot("alpha")
            _, beta_token = running.node.register_bot("beta")
            stop, first_stop = asyncio.Event(), asyncio.Event()

            def play(bot: Bot, tok: str, halt: asyncio.Event) -> asyncio.Task[None]:
                return asyncio.create_task(run_async(bot, running.address, tok, 4, name=bot.name or "bot",
                                                     stop=halt, ladder=True))

            def promoted_of(name: str) -> str | None:
                entry = running.node.bot_named(name)
                return None if entry is None else entry.promoted_version

            rankings = Rankings(broker, ttl=0, promoted=promoted_of)  # the node's, never a kept board

            def row(bot: str) -> Entry | None:
                if POOL not in broker.pools():
                    return None
                board = rankings.leaderboard(POOL, limit=200)
                return next((e for e in board.entries if e.bot == bot), None)

            def own(bot: str) -> int:
                r = row(bot)
                return -1 if r is None else r.version_games

            tasks = [play(versioned(HeuristicBot(1), "1"), token, first_stop),
                     play(RandomBot(3), beta_token, stop)]
            try:
                await asyncio.to_thread(Ladders(broker).start, POOL, 1)
                await until(lambda: state(running, "alpha", "1") == "promoted", 15, "version 1 kept")
                await until(lambda: own("alpha") >= 6, 60, "games of version 1")
                first_stop.set()
                await tasks[0]
                settled = -1
                while settled != (settled := broker.pool_ratings(POOL)["alpha"][1]):
                    await asyncio.sleep(1.5)  # its last matches ended and written
                before = row("alpha")
                assert before is not None and (before.version, before.version_games) == ("1", before.games)
                now = int(time.time())
                await asyncio.to_thread(registry.update_versions, "alpha",
                                        lambda vs: promote(seen(vs, "2", now) or vs, "2", "hand", now))
                await until(lambda: (r := row("alpha")) is not None and r.version == "2", 10, "2 promoted")
                after = row("alpha")
                assert after is not None and (after.version_games, after.games) == (0, before.games)
                assert after.rating == pytest.approx(before.rating)  # where version 1 left it
                assert after.low is not None and after.high is not None
                assert before.low is not None and before.high is not None
                assert after.high - after.low > before.high - before.low  # none of its own games yet
                tasks[0] = play(versioned(HeuristicBot(2), "2"), token, stop)
                await until(lambda: own("alpha") >= 4, 60, "games of version 2")
                rated = {r.version: r for r in await asyncio.to_thread(rankings.versions, "alpha")
                         if r.pool == POOL}
                assert set(rated) == {"1", "2"} and not rated["2"].inherited
                assert rated["1"].games >= before.version_games and rated["2"].games >= 4
            finally:
                stop.set()
                first_stop.set()
                await asyncio.gather(*tasks, return_exceptions=True)

    asyncio.run(asyncio.wait_for(main(), 200))
