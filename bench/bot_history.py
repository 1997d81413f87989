"""A bot's history and statistics: what reading them costs as the bot's games grow, and what writing
them adds to a result.

    python bench/bot_history.py            # about a minute here (2 shared cores)
    python bench/bot_history.py --quick    # a few seconds (tests/test_benches.py)
    python bench/bot_history.py --json     # one JSON object instead of name=value lines

A bot plays ``--small`` matches (as many as its history keeps), then, on a second store,
``--large`` (ten times as many; ``--quick``: twice): each match a real one of the engine
(``--deals`` coinche deals of random play), written with ``write_result`` as a node writes it, on
the embedded store (sqlite in a temporary folder) and, when one answers at ``--redis``, on Redis
(its own key prefix, deleted after). Then the reads a bot's page and ``bot report`` make are timed
(the best of ``--repeats``: other work on the machine only slows a read), each against the
reference measured in the same run on the same store: the bot's recent matches that its page read
before (``bot_matches(bot, 20)``, one read of a list kept with each result):

- ``page_vs_recent``: a page of 20 of its history, no filter (:func:`arena.node.history.history_page`);
- ``filtered_vs_recent``: a page with a filter that keeps one match in three (it reads the kept
  entries whole: at most ``HISTORY_KEPT``);
- ``stats_vs_recent``: its statistics and head-to-head (:func:`arena.node.history.bot_statistics`).

And what the history adds to a write: ``facts_vs_play``, the time to work out a result's facts
(:func:`arena.tournament.botstats.bot_games`, which replays the record) against the time the engine
took to play the match.

The last line is ``read_growth=G``: the slowest of the three reads with ``--large`` games against the
same read with ``--small`` (about 1: a read's cost does not grow with the bot's games).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

_ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(_ROOT), str(_ROOT / "sdk")]  # run from a checkout

from arena.engine import Match, Ruleset  # noqa: E402
from arena.node.history import HistoryQuery, bot_statistics, history_page  # noqa: E402
from arena.queue import Broker, EmbeddedBroker  # noqa: E402
from arena.tournament import MatchJob, MatchResult, Tournaments, TournamentSpec  # noqa: E402
from arena.tournament.botstats import HISTORY_KEPT, bot_games  # noqa: E402
from tests.factories import record_of_match  # noqa: E402


def play(n: int, deals: int) -> tuple[MatchResult, float]:
    """Match ``n`` of the bot ``hero`` against one of three opponents, and the seconds its play took."""
    rules = Ruleset.from_spec("coinche").with_options(deals=deals)
    start = time.perf_counter()
    match = Match(rules, f"bench-{n}")
    rng = random.Random(n)
    while not match.is_over:
        deal = match.new_deal()
        while not deal.is_over:
            deal.apply(rng.choice(deal.legal_actions()))
        match.add(deal)
    took = time.perf_counter() - start
    opponent = f"opp{n % 3}"
    job = MatchJob(f"bh-r1-{n}", "bh", "hero", opponent, "coinche", f"bench-{n}", deals=deals)
    return MatchResult.of_record(job, record_of_match(job.match_id, "hero", opponent, match)), took


def best_ms(call: Callable[[], Any], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return min(times) * 1000


def reads(broker: Broker, repeats: int) -> dict[str, float]:
    """The reads' medians (ms) and their ratios to the recent matches' read."""
    tournaments = Tournaments(broker)
    recent = best_ms(lambda: broker.bot_matches("hero", 20), repeats)
    page = best_ms(lambda: history_page(broker, tournaments, "hero", HistoryQuery()), repeats)
    filtered = best_ms(lambda: history_page(broker, tournaments, "hero", HistoryQuery(opponent="opp1")),
                         repeats)
    stats = best_ms(lambda: bot_statistics(broker, tournaments, "hero"), repeats)
    return {"recent_ms": recent, "page_ms": page, "filtered_ms": filtered, "stats_ms": stats,
            "page_vs_recent": page / recent, "filtered_vs_recent": filtered / recent,
            "stats_vs_recent": stats / recent}


def fill(broker: Broker, games: int, results: list[MatchResult]) -> None:
    broker.put_tournament(TournamentSpec(tournament_id="bh", format="round-robin", bots=("hero", "opp0")))
    for r in results[:games]:
        broker.write_result(r)


def stores(redis_url: str) -> list[tuple[str, Callable[[Path, str], Broker]]]:
    out: list[tuple[str, Callable[[Path, str], Broker]]] = [
        ("embedded", lambda d, name: EmbeddedBroker(d / f"{name}.sqlite3"))]
    try:
        import redis

        redis.Redis.from_url(redis_url, socket_connect_timeout=0.5).ping()
    except Exception:  # no Redis here: the embedded store alone
        return out
    from arena.queue.redis_broker import RedisBroker

    out.append(("redis", lambda d, name: RedisBroker(redis_url,
                                                     prefix=f"bench-history-{uuid.uuid4().hex[:8]}")))
    return out


def drop(broker: Broker) -> None:
    """Delete a Redis store's own keys (its prefix); an embedded one goes with its folder."""
    keys = getattr(broker, "keys", None)
    client = getattr(broker, "_redis", None)
    if keys is not None and client is not None:
        own = list(client.scan_iter(match=keys.pattern(), count=1000))
        for i in range(0, len(own), 500):
            client.delete(*own[i:i + 500])
    broker.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer games and repeats (a few seconds)")
    parser.add_argument("--small", type=int, default=HISTORY_KEPT)
    parser.add_argument("--large", type=int, default=HISTORY_KEPT * 10)
    parser.add_argument("--deals", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=50)
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/0")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.quick:
        args.small, args.large, args.repeats = HISTORY_KEPT, HISTORY_KEPT * 2, 15
    played = [play(n, args.deals) for n in range(args.large)]
    results = [r for r, _ in played]
    facts = best_ms(lambda: [bot_games(r, ("coinche",), 0.0) for r in results[:20]], 5) / 20
    play_ms = statistics.median(t for _, t in played) * 1000  # (the median: each match is another)
    out: dict[str, Any] = {"facts_ms": facts, "play_ms": play_ms, "facts_vs_play": facts / play_ms}
    growth = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for kind, open_store in stores(args.redis):
            figures = {}
            for size, games in (("small", args.small), ("large", args.large)):
                broker = open_store(Path(tmp), f"{kind}-{size}")
                try:
                    fill(broker, games, results)
                    figures[size] = reads(broker, args.repeats)
                finally:
                    drop(broker)
            out[kind] = figures
            for read in ("page_ms", "filtered_ms", "stats_ms"):
                growth = max(growth, figures["large"][read] / figures["small"][read])
    out["read_growth"] = growth
    if args.json:
        print(json.dumps(out, indent=1))
        return
    print(f"a result's facts {facts:.2f} ms ({facts / args.deals:.2f} ms a deal) against its play "
          f"{play_ms:.2f} ms ({args.deals} coinche deals of random play)")
    for kind in ("embedded", "redis"):
        if kind not in out:
            continue
        for size, games in (("small", args.small), ("large", args.large)):
            f = out[kind][size]
            print(f"{kind} {games} games: recent {f['recent_ms']:.2f} ms, page {f['page_ms']:.2f} ms, "
                  f"filtered {f['filtered_ms']:.2f} ms, stats {f['stats_ms']:.2f} ms")
        large = out[kind]["large"]
        for name in ("page_vs_recent", "filtered_vs_recent", "stats_vs_recent"):
            print(f"{kind}.{name}={large[name]:.2f}")
    print(f"facts_vs_play={out['facts_vs_play']:.3f}")
    print(f"read_growth={growth:.2f}")


if __name__ == "__main__":
    main()
