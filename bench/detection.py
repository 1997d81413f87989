"""Detection: what an audit costs, how often it flags honest bots, and how soon it flags cheaters.

    python bench/detection.py            # about 15 minutes here (2 shared cores)
    python bench/detection.py --quick    # about 10 s: 10 honest pairs, 20 of the cheater, one repeat
    python bench/detection.py --json     # one JSON object instead of name=value lines

Mirror duplicate pairs of one deal each are played locally (the SDK's bots against the pure
engine, ``tests/tournament/mirror_play.py``), each deal played first at a table chosen by a
seeded coin, and audited with :mod:`arena.tournament.detection`. It prints:

- the cost, in CPU time: ``oracle_ms_per_decision`` (the perfect-information search, over the
  card decisions with a choice), ``audit_ms_per_deal`` (all of an audit, per deal), and, as the
  reference measured in the same run, ``replay_ms_per_deal`` (replaying the same deals with
  every action checked) with ``audit_vs_replay``, their ratio;
- the false flags: honest pairs (heuristic against heuristic, and against the search bot)
  audited 20 pairs at a time: ``honest_audits``, ``honest_flags`` (expected: 1% of them) and
  ``honest_p_below_0.05`` (expected: 5%);
- the power: the share of audits that flag a bot remembering hands after 5, 10 and 20 pairs
  when it uses what it remembers at every card it could (``rate`` 1), and after 20, 40 and 80
  pairs when it does at a third of them.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

_ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(_ROOT), str(_ROOT / "sdk")]  # run from a checkout

from belote_bot import Bot, HeuristicBot, SearchBot  # noqa: E402

from arena.records import MatchRecord  # noqa: E402
from arena.tournament.detection import TableAnalysis, analyse_record, audit  # noqa: E402
from tests.tournament.mirror_play import play_pairs  # noqa: E402
from tests.tournament.remembering_bot import RememberingBot  # noqa: E402


def always(name: str, bot: Bot) -> Callable[[int], tuple[str, Bot]]:
    """The same bot for every pair (it keeps its memory across them)."""
    return lambda i: (name, bot)


def analysed(records: list[MatchRecord]) -> tuple[list[TableAnalysis], float]:
    """The analyses, and the CPU seconds they took (CPU time: the machine may be shared)."""
    started = time.process_time()
    out = [analyse_record(r) for r in records]
    return out, time.process_time() - started


def replay_seconds(records: list[MatchRecord]) -> float:
    started = time.process_time()
    for r in records:
        r.replay(deals=r.deals_played)
    return time.process_time() - started


def honest(pairs: int, search_iterations: int) -> dict[str, Any]:
    """Honest pairs, audited 20 at a time; and the cost of the audit against the replay."""
    out: dict[str, Any] = {}
    p_values: list[float] = []
    flags = 0
    seconds = replayed = 0.0
    decisions = nodes = deals = 0
    for name, make in (("heuristic", lambda i: ("heuristic-b", HeuristicBot(11))),
                       ("search", lambda i: ("search", SearchBot(seed=12, iterations=search_iterations)))):
        records = play_pairs(lambda i: ("heuristic", HeuristicBot(10)), make, pairs=pairs, deals=1,
                             order="deal", seed=f"bench-honest-{name}")
        analyses, spent = analysed(records)
        seconds += spent
        replayed += replay_seconds(records)
        deals += sum(a.deals for a in analyses)
        decisions += sum(a.card_decisions - a.forced for a in analyses)
        nodes += sum(a.nodes for a in analyses)
        for start in range(0, len(analyses), 40):
            for row in audit(analyses[start:start + 40]).bots:
                if row.p_value is not None:
                    p_values.append(row.p_value)
                    flags += row.flagged
    out["honest_audits"] = len(p_values)
    out["honest_flags"] = flags
    out["honest_p_below_0.01"] = sum(p < 0.01 for p in p_values)
    out["honest_p_below_0.05"] = sum(p < 0.05 for p in p_values)
    out["honest_p_median"] = round(statistics.median(p_values), 3) if p_values else None
    out["oracle_ms_per_decision"] = round(1000 * seconds / max(1, decisions), 2)
    out["oracle_nodes_per_decision"] = round(nodes / max(1, decisions))
    out["audit_ms_per_deal"] = round(1000 * seconds / max(1, deals), 1)
    out["replay_ms_per_deal"] = round(1000 * replayed / max(1, deals), 2)
    out["audit_vs_replay"] = round(seconds / max(replayed, 1e-9), 1)
    return out


def power(repeats: int, rate: float, checkpoints: tuple[int, ...]) -> dict[str, Any]:
    """The share of audits after each of ``checkpoints`` pairs that flag a bot remembering hands."""
    flagged = dict.fromkeys(checkpoints, 0)
    for k in range(repeats):
        records = play_pairs(always("remembering", RememberingBot(rate=rate, seed=k)),
                             always("heuristic", HeuristicBot(k)), pairs=max(checkpoints), deals=1,
                             order="deal", seed=f"bench-power-{rate}-{k}")
        analyses = [analyse_record(r) for r in records]
        for n in checkpoints:
            rows = {b.bot: b for b in audit(analyses[:2 * n]).bots}
            flagged[n] += rows["remembering"].flagged
    tag = f"rate_{rate:.2g}"
    return {f"flagged_after_{n}_pairs_{tag}": round(v / repeats, 2) for n, v in flagged.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer pairs and repeats (for CI)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    # --quick checks that each part runs and that its figures say what the audit promises: 10 honest
    # pairs of each kind are still one audit a bot (4 in all), and the cheater at every card is
    # flagged after 20 pairs, not after 5; a third of the cards is looked at once, after 20 (the
    # pairs cost about 70 ms each, the honest ones with the search bot more)
    pairs, honest_pairs, repeats, iterations = (20, 10, 1, 4) if args.quick else (200, 200, 10, 6)
    started = time.perf_counter()
    out: dict[str, Any] = {"pairs_per_bot": pairs, "honest_pairs_per_bot": honest_pairs, "repeats": repeats}
    out.update(honest(honest_pairs, iterations))
    out.update(power(repeats, 1.0, (5, 10, 20)))
    out.update(power(repeats, 1 / 3, (20,) if args.quick else (20, 40, 80)))
    out["seconds"] = round(time.perf_counter() - started, 1)
    if args.json:
        print(json.dumps(out))
    else:
        for k, v in out.items():
            print(f"{k}={v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
