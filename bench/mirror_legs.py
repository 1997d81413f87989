"""Mirror duplicate legs one after the other: what it costs a tournament in time.

    python bench/mirror_legs.py            # about two minutes here (2 shared cores)
    python bench/mirror_legs.py --quick    # about half a minute (CI)
    python bench/mirror_legs.py --json     # one JSON object instead of name=value lines

A mirror tournament enqueues each stage in two halves, every pair's first leg, then, once they
are all over, every second leg (``Tournament.jobs_for``), so that the audit (docs/detection.md)
has play from before a bot saw each deal to compare with play after. One node (``running_node``
on an embedded queue, in this process) plays them with SDK bots over gRPC that take
``--think-ms`` a decision (``asyncio.sleep``, as a bot elsewhere on the network takes its time), so
a match lasts as long as its bots make it, not as long as this machine's CPU does. Each tournament
is timed from its creation to its end (best of ``--repeats``), against the reference measured in
the same run, a plain tournament of the same number of matches, all queued at once:

- ``round_robin_plentiful_vs_plain``: 4 bots, a mirror round-robin (6 pairs, 12 matches) against
  the same round-robin without duplicate (12 matches, both seatings), with a match slot for each;
- ``round_robin_scarce_vs_plain``: 6 bots (15 pairs, 30 matches) on 4 slots;
- ``sprt_vs_plain``: an sprt of one batch of ``--pairs`` pairs (wide bounds, so it plays them all)
  against a plain round-robin of the same two bots over ``--pairs`` rounds, with a slot for each.

With slots for every match a stage lasts its first legs, then its second legs: about twice its
longest match (before the legs were apart, both ran at once: about 1). With few slots they stay
busy either way, and only the wait for each half's last match is lost: about 1.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

_ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(_ROOT), str(_ROOT / "sdk")]  # run from a checkout

from belote_bot import Bot, Observation, RandomBot, run_async  # noqa: E402

from arena.node.run import NodeSettings, RunningNode, running_node  # noqa: E402
from arena.queue import EmbeddedBroker  # noqa: E402
from arena.records import TimeControl  # noqa: E402
from arena.tournament import TournamentSpec, TournamentState  # noqa: E402


class Thinking(Bot):
    """A random bot that takes ``think_s`` for each decision."""

    act_inline = True

    def __init__(self, seed: int, think_s: float) -> None:
        self.inner = RandomBot(seed)
        self.think_s = think_s

    async def act(self, obs: Observation) -> Any:
        await asyncio.sleep(self.think_s)
        return self.inner.act(obs)


async def timed(running: RunningNode, spec: TournamentSpec) -> float:
    """Seconds from the tournament's creation to its end."""
    broker = running.worker.broker
    started = time.perf_counter()
    await asyncio.to_thread(running.tournaments.create, spec)
    while True:
        found = await asyncio.to_thread(broker.get_tournament, spec.tournament_id)
        if found is not None and found[1] is TournamentState.FINISHED and \
                not await asyncio.to_thread(broker.pending_count, spec.tournament_id):
            return time.perf_counter() - started
        await asyncio.sleep(0.02)


async def on_a_node(capacity: int, bots: list[str], think_s: float,
                    tournaments: list[dict[str, Any]], repeats: int) -> list[float]:
    """The best time of each tournament (spec fields less its id) on one node of ``capacity`` slots."""
    stop = asyncio.Event()
    with tempfile.TemporaryDirectory() as tmp:
        broker = EmbeddedBroker(Path(tmp) / "queue.sqlite3")
        settings = NodeSettings(data_dir=Path(tmp) / "node", capacity=capacity, poll_s=0.02,
                                time=TimeControl(deadline=5.0, time_bank=30.0))
        tasks: list[asyncio.Task[None]] = []
        try:
            async with running_node(broker, settings, stop) as running:
                for i, name in enumerate(bots):
                    _, token = running.node.register_bot(name)
                    tasks.append(asyncio.create_task(run_async(
                        Thinking(i, think_s), running.address, token, 2 * capacity, name=name, stop=stop,
                        all_nodes=False, verbose=False)))
                while sum(b.connected for b in running.node.bots()) < len(bots):
                    await asyncio.sleep(0.05)
                best = [float("inf")] * len(tournaments)
                for r in range(repeats):
                    for k, fields in enumerate(tournaments):
                        spec = TournamentSpec.from_dict({"tournament_id": f"t{k}-{r}", "ruleset": "coinche",
                                                         "seed": "mirror-legs", **fields})
                        best[k] = min(best[k], await timed(running, spec))
                return best
        finally:
            stop.set()
            with contextlib.suppress(Exception):
                await asyncio.gather(*tasks, return_exceptions=True)
            broker.close()


async def measure(quick: bool, think_ms: float, deals: int, pairs: int, repeats: int) -> dict[str, Any]:
    think = think_ms / 1000
    out: dict[str, Any] = {"think_ms": think_ms, "deals": deals, "pairs": pairs, "repeats": repeats}
    four = [f"b{i}" for i in range(4)]
    mirror, plain = ({"format": "round-robin", "bots": four, "deals": deals, "duplicate": d}
                     for d in ("mirror", ""))
    m, p = await on_a_node(12, four, think, [mirror, plain], repeats)
    out |= {"round_robin_plentiful_mirror_s": round(m, 2), "round_robin_plentiful_plain_s": round(p, 2),
            "round_robin_plentiful_vs_plain": round(m / p, 2)}
    if not quick:
        six = [f"b{i}" for i in range(6)]
        mirror, plain = ({"format": "round-robin", "bots": six, "deals": deals, "duplicate": d}
                         for d in ("mirror", ""))
        m, p = await on_a_node(4, six, think, [mirror, plain], repeats)
        out |= {"round_robin_scarce_mirror_s": round(m, 2), "round_robin_scarce_plain_s": round(p, 2),
                "round_robin_scarce_vs_plain": round(m / p, 2)}
    two = ["new", "old"]
    sprt = {"format": "sprt", "bots": two, "deals": deals, "duplicate": "mirror",
            "sprt": {"elo0": 0, "elo1": 5, "alpha": 1e-9, "beta": 1e-9,  # wide: it plays every pair
                     "batch_pairs": pairs, "max_pairs": pairs}}
    plain = {"format": "round-robin", "bots": two, "deals": deals, "rounds": pairs}
    s, p = await on_a_node(2 * pairs, two, think, [sprt, plain], repeats)
    out |= {"sprt_s": round(s, 2), "sprt_plain_s": round(p, 2), "sprt_vs_plain": round(s / p, 2)}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="plentiful slots only, one repeat (for CI)")
    parser.add_argument("--think-ms", type=float, default=10.0, help="each bot's time a decision (10)")
    parser.add_argument("--deals", type=int, default=2, help="coinche deals a match (2)")
    parser.add_argument("--pairs", type=int, default=None, help="pairs of the sprt's batch (8; --quick 4)")
    parser.add_argument("--repeats", type=int, default=None, help="tournaments of each kind, best kept (3)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    pairs = args.pairs or (4 if args.quick else 8)
    repeats = args.repeats or (1 if args.quick else 3)
    started = time.perf_counter()
    out = asyncio.run(measure(args.quick, args.think_ms, args.deals, pairs, repeats))
    out["seconds"] = round(time.perf_counter() - started, 1)
    if args.json:
        print(json.dumps(out))
    else:
        for k, v in out.items():
            print(f"{k}={v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
