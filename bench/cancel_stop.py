"""How soon a cancel stops a tournament's matches on the other nodes of a queue.

    python bench/cancel_stop.py --redis redis://127.0.0.1:6379/0   # Redis (about a minute here)
    python bench/cancel_stop.py                                    # an embedded queue
    python bench/cancel_stop.py --quick                            # a few trials (CI)
    python bench/cancel_stop.py --json                             # one JSON object

Two nodes (``running_node``, in this process) share one queue: Redis with ``--redis`` (under a key
prefix of the bench's own, removed at the end), else an embedded one. SDK bots connect to node B
only, so a tournament's matches run there; the admin cancels it through node A's gRPC. Each trial
creates a round-robin of two bots whose matches would last minutes, waits until B runs them,
cancels, and times from the cancel's answer until none of the tournament's jobs is left (B has
stopped its matches: the secret may then be revealed). Trials alternate two ways:

- ``pushed``: as a node does: A publishes the cancel's notice and B stops its matches on it;
- ``polled``: that notice lost (A's publish fails): B finds the cancel at its next read of its
  running matches' tournaments, every ``--check-s`` (1 s, ``serve``'s): how every cancel
  reached the other nodes before the notice, and still the fallback.

Prints ``stop_ms_<way>_median`` and ``_max``, and ``ratio_pushed_to_polled`` (of the medians).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

_ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(_ROOT), str(_ROOT / "sdk")]  # run from a checkout

import grpc  # noqa: E402
from belote.arena.v1 import arena_service_pb2 as apb  # noqa: E402
from belote.arena.v1 import arena_service_pb2_grpc as agrpc  # noqa: E402
from belote_bot import Bot, Observation, RandomBot, run_async  # noqa: E402

from arena.node.run import NodeSettings, RunningNode, running_node  # noqa: E402
from arena.queue import CANCEL_NOTICE, Broker, BrokerUnavailable, EmbeddedBroker  # noqa: E402
from arena.referee.access import AccessPolicy  # noqa: E402
from arena.referee.registry import digest, new_token  # noqa: E402

ADMIN = new_token("adm")


class Slow(Bot):
    """A random bot that takes 30 ms a decision: a match of many deals lasts minutes."""

    act_inline = True

    def __init__(self, seed: int) -> None:
        self.inner = RandomBot(seed)

    async def act(self, obs: Observation) -> Any:
        await asyncio.sleep(0.03)
        return self.inner.act(obs)


class LosesCancelNotices:
    """Makes ``broker`` fail to publish a cancel's notice while ``lose`` is set (the polled way)."""

    def __init__(self, broker: Broker) -> None:
        self.lose = False
        publish = broker.publish_notice

        def maybe(kind: str, data: str = "") -> None:
            if self.lose and kind == CANCEL_NOTICE:
                raise BrokerUnavailable("the cancel's notice was lost (the bench's doing)")
            publish(kind, data)

        broker.publish_notice = maybe  # type: ignore[method-assign]


@contextlib.asynccontextmanager
async def two_nodes(redis_url: str, folder: Path, check_s: float) -> AsyncIterator[list[RunningNode]]:
    prefix = f"bench-cancel-{uuid.uuid4().hex[:8]}"
    brokers: list[Broker] = []
    for _ in range(2):
        if redis_url:
            from arena.queue.redis_broker import RedisBroker

            brokers.append(RedisBroker(redis_url, prefix=prefix))
        else:
            brokers.append(EmbeddedBroker(folder / "queue.sqlite3"))
    access = AccessPolicy(admin_sha256=digest(ADMIN))
    settings = [NodeSettings(poll_s=0.05, heartbeat_s=0.5, lease_s=30.0, drain_s=1.0, capacity=8,
                             node_id=name, cancel_check_s=check_s, access=access)
                for name in ("node-a", "node-b")]
    try:
        async with (running_node(brokers[0], settings[0], asyncio.Event()) as a,
                    running_node(brokers[1], settings[1], asyncio.Event()) as b):
            yield [a, b]
    finally:
        for broker in brokers:
            broker.close()
        if redis_url:
            import redis

            client = redis.Redis.from_url(redis_url)
            own = list(client.scan_iter(match=f"{prefix}:*"))
            if own:
                client.delete(*own)
            client.close()


async def until(check: Any, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not await asyncio.to_thread(check):
        if time.monotonic() > deadline:
            raise TimeoutError("the bench waited too long")
        await asyncio.sleep(0.002)


async def measure(redis_url: str, trials: int, check_s: float) -> dict[str, Any]:
    stop = asyncio.Event()
    stops: dict[str, list[float]] = {"pushed": [], "polled": []}
    with tempfile.TemporaryDirectory(prefix="belote-cancel-") as tmp:
        async with two_nodes(redis_url, Path(tmp), check_s) as (a, b):
            broker = a.worker.broker
            losing = LosesCancelNotices(broker)
            bots = []
            for i, name in enumerate(("north", "east")):
                _, token = b.node.register_bot(name)
                bots.append(asyncio.create_task(run_async(Slow(i), b.address, token, 8, stop=stop,
                                                          all_nodes=False, verbose=False)))
            while sum(x.connected for x in b.node.bots()) < 2:
                await asyncio.sleep(0.02)
            metadata = (("authorization", f"Bearer {ADMIN}"),)
            async with grpc.aio.insecure_channel(a.address) as channel:
                admin = agrpc.ArenaServiceStub(channel)
                for trial in range(2 * trials):
                    way = "pushed" if trial % 2 == 0 else "polled"
                    tid = f"cancel-{trial}"
                    await admin.CreateTournament(apb.CreateTournamentRequest(spec=apb.TournamentSpec(
                        tournament_id=tid, format="round-robin", bots=["north", "east"], ruleset="coinche",
                        deals=500)), metadata=metadata)
                    while sum(m.startswith(f"{tid}-") for m in b.worker.running) < 2:
                        await asyncio.sleep(0.01)
                    # a cancel lands anywhere in B's check interval, as an admin's would
                    await asyncio.sleep(0.3 + check_s * (trial // 2 % 5) / 5)
                    losing.lose = way == "polled"
                    await admin.CancelTournament(apb.CancelTournamentRequest(tournament_id=tid),
                                                 metadata=metadata)
                    cancelled = time.perf_counter()
                    await until(lambda tid=tid: broker.pending_count(tid) == 0, 10 * check_s + 10)
                    stops[way].append((time.perf_counter() - cancelled) * 1000)
                    losing.lose = False
            stop.set()
            await asyncio.gather(*bots, return_exceptions=True)
    out: dict[str, Any] = {"queue": "redis" if redis_url else "embedded", "trials": trials,
                           "check_s": check_s}
    for way, times in stops.items():
        out[f"stop_ms_{way}_median"] = round(statistics.median(times), 1)
        out[f"stop_ms_{way}_max"] = round(max(times), 1)
    out["ratio_pushed_to_polled"] = round(out["stop_ms_pushed_median"] / out["stop_ms_polled_median"], 3)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--redis", default="", help="a Redis URL (default: an embedded queue)")
    parser.add_argument("--trials", type=int, default=None, help="cancels each way (10; --quick 3)")
    parser.add_argument("--check-s", type=float, default=1.0,
                        help="node B's interval between reads of its tournaments' states (1.0, serve's)")
    parser.add_argument("--quick", action="store_true", help="a few trials (for CI)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    trials = args.trials or (3 if args.quick else 10)
    started = time.perf_counter()
    out = asyncio.run(measure(args.redis, trials, args.check_s))
    out["seconds"] = round(time.perf_counter() - started, 1)
    if args.json:
        print(json.dumps(out))
    else:
        for k, v in out.items():
            print(f"{k}={v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
