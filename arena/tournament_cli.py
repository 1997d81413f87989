"""``belote-arena tournament``: create, follow, cancel and resume tournaments.

The tournament lives in the broker (Redis with ``--redis`` or $BELOTE_REDIS,
else the embedded queue in ``--data-dir``); any referee node sharing that
broker plays its matches.
"""

from __future__ import annotations

import argparse
import json
import secrets
import time
from pathlib import Path
from typing import Any

from arena.engine.errors import RulesetError
from arena.engine.rules import spec_from_text
from arena.queue import open_broker
from arena.queue.broker import Broker
from arena.queue.worker import advance_tournament, tournament_of
from arena.tournament import Standing, TournamentError, TournamentSpec


class TournamentCliError(Exception):
    """Printed as one line by the CLI, exit 1."""


def _broker(args: argparse.Namespace) -> Broker:
    import os

    url = getattr(args, "redis", None) or os.environ.get("BELOTE_REDIS") or None
    data = None if args.data_dir == "" else Path(args.data_dir)
    return open_broker(url, data)


def create(args: argparse.Namespace) -> int:
    spec_json: dict[str, Any] = {
        "tournament_id": args.id or f"t-{secrets.token_hex(4)}",
        "format": args.format,
        "bots": [b.strip() for b in args.bots.split(",") if b.strip()],
        "ruleset": spec_from_text(args.ruleset, "--ruleset"),
        "duplicate": args.duplicate or args.format == "sprt",
        "seed": args.seed or "",
    }
    for key in ("candidate", "deals", "target", "rounds"):
        value = getattr(args, key)
        if value:
            spec_json[key] = value
    if args.format == "sprt":
        spec_json["sprt"] = {"elo0": args.elo0, "elo1": args.elo1, "alpha": args.alpha,
                             "beta": args.beta, "batch_pairs": args.batch_pairs,
                             "max_pairs": args.max_pairs}
    try:
        spec = TournamentSpec.from_dict(spec_json)
    except (TournamentError, RulesetError) as e:
        raise TournamentCliError(str(e)) from None
    with _broker(args) as broker:
        if not broker.put_tournament(spec.tournament_id, spec.to_dict()):
            raise TournamentCliError(f"tournament {spec.tournament_id} exists")
        advance_tournament(broker, spec.tournament_id)  # enqueue the first stage, mark running
        jobs = broker.pending_count(spec.tournament_id)
    if args.json:
        print(json.dumps({"tournament_id": spec.tournament_id, "jobs": jobs}))
    else:
        print(f"tournament {spec.tournament_id}: {spec.format} of {', '.join(spec.bots)}, "
              f"{jobs} matches queued")
        print(f"follow it: belote-arena tournament status {spec.tournament_id} --watch")
    return 0


def status_json(broker: Broker, tournament_id: str) -> dict[str, Any]:
    found = broker.get_tournament(tournament_id)
    if found is None:
        raise TournamentCliError(f"no tournament {tournament_id!r}")
    spec_json, state = found
    tour = tournament_of(tournament_id, spec_json)
    results = broker.results(tournament_id)
    done = {r.match_id for r in results}
    scheduled = [j.match_id for stage in tour.stages(results) for p in stage.pairings for j in p.jobs]
    out: dict[str, Any] = {
        "tournament_id": tournament_id, "state": state, "format": tour.spec.format,
        "matches_done": len(done), "matches_scheduled": len(scheduled),
        "matches_queued": broker.pending_count(tournament_id),
        "standings": [_standing_json(s, tour.spec.duplicate) for s in tour.standings(results)],
    }
    if tour.spec.format == "sprt":
        st = tour.sprt_state(results)
        out["sprt"] = {"llr": round(st.llr, 4), "lower": round(st.lower, 4), "upper": round(st.upper, 4),
                       "decision": st.decision, "pairs": st.pairs, "pentanomial": list(st.pentanomial)}
    return out


def _standing_json(s: Standing, duplicate: bool) -> dict[str, Any]:
    return {"rank": s.rank, "bot": s.bot, "played": s.played, "wins": s.wins, "draws": s.draws,
            "losses": s.losses, "byes": s.byes, "score": s.score, "points_for": s.points_for,
            "points_against": s.points_against, "duplicate_diff": s.duplicate_diff,
            "diff": s.duplicate_diff if duplicate else s.point_diff, "buchholz": s.buchholz}


def print_standings(status: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    title = (f"{status['tournament_id']} ({status['format']}, {status['state']}): "
             f"{status['matches_done']}/{status['matches_scheduled']} matches")
    table = Table(title=title)
    for col in ("#", "bot", "played", "won", "drawn", "lost", "score", "for", "against", "diff"):
        table.add_column(col, justify="left" if col == "bot" else "right", no_wrap=True)
    for s in status["standings"]:
        diff = s["diff"]
        table.add_row(str(s["rank"]), s["bot"], str(s["played"]), str(s["wins"]), str(s["draws"]),
                      str(s["losses"]), f"{s['score']:g}", str(s["points_for"]), str(s["points_against"]),
                      str(diff))
    Console().print(table)
    if "sprt" in status:
        sp = status["sprt"]
        print(f"SPRT: LLR {sp['llr']} in [{sp['lower']}, {sp['upper']}], {sp['pairs']} pairs, "
              f"decision {sp['decision'] or 'none yet'}")


def status(args: argparse.Namespace) -> int:
    with _broker(args) as broker:
        if args.json:
            print(json.dumps(status_json(broker, args.id)))
            return 0
        if not args.watch:
            print_standings(status_json(broker, args.id))
            return 0
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                      TimeElapsedColumn()) as progress:
            task = progress.add_task(args.id, total=None)
            while True:
                st = status_json(broker, args.id)
                progress.update(task, completed=st["matches_done"], total=st["matches_scheduled"],
                                description=f"{args.id} ({st['state']})")
                if st["state"] in ("finished", "cancelled"):
                    break
                time.sleep(args.interval)
        print_standings(st)
    return 0


def cancel(args: argparse.Namespace) -> int:
    with _broker(args) as broker:
        found = broker.get_tournament(args.id)
        if found is None:
            raise TournamentCliError(f"no tournament {args.id!r}")
        if found[1] in ("finished", "cancelled"):
            raise TournamentCliError(f"tournament {args.id} is already {found[1]}")
        broker.set_tournament_state(args.id, "cancelled")
    print(f"tournament {args.id} cancelled: its queued matches will not be played")
    return 0


def resume(args: argparse.Namespace) -> int:
    """After a cluster restart: enqueue (once) whatever the results so far call for."""
    with _broker(args) as broker:
        if broker.get_tournament(args.id) is None:
            raise TournamentCliError(f"no tournament {args.id!r}")
        advance_tournament(broker, args.id)
        st = status_json(broker, args.id)
    print(f"tournament {args.id} ({st['state']}): {st['matches_done']}/{st['matches_scheduled']} "
          f"matches done, {st['matches_queued']} queued")
    return 0


def list_(args: argparse.Namespace) -> int:
    with _broker(args) as broker:
        rows = []
        for tid in broker.list_tournaments():
            found = broker.get_tournament(tid)
            if found is not None:
                rows.append({"tournament_id": tid, "format": found[0].get("format"), "state": found[1],
                             "matches_done": len(broker.results(tid))})
    if args.json:
        print(json.dumps(rows))
    else:
        for r in rows:
            print(f"{r['tournament_id']:24} {r['format']:12} {r['state']:10} "
                  f"{r['matches_done']} matches done")
    return 0


def add_parser(sub: Any) -> None:
    t = sub.add_parser("tournament", help="create, follow, cancel or resume a tournament")
    tsub = t.add_subparsers(dest="tournament_command", required=True)

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--redis", metavar="URL", help="the cluster's Redis (default: $BELOTE_REDIS)")
        p.add_argument("--data-dir", default="arena-data", help="the embedded queue's folder (no Redis)")
        p.add_argument("--json", action="store_true")

    c = tsub.add_parser("create", help="queue a tournament")
    c.add_argument("--format", required=True,
                   choices=["round-robin", "gauntlet", "swiss", "knockout", "sprt"])
    c.add_argument("--bots", required=True, help="bot names, comma separated (sprt: candidate,baseline)")
    c.add_argument("--candidate", help="gauntlet: the bot that meets the field")
    c.add_argument("--ruleset", default="classic", help="a preset or a JSON ruleset object")
    c.add_argument("--deals", type=int, help="a fixed number of deals per match")
    c.add_argument("--target", type=int, help="play each match to this score instead")
    c.add_argument("--duplicate", action="store_true", help="play each deal twice with the hands exchanged")
    c.add_argument("--rounds", type=int, help="repeats (round-robin, gauntlet) or Swiss rounds")
    c.add_argument("--seed", default="", help="the root of every deal (default: the tournament id)")
    c.add_argument("--id", default="", help="the tournament id (default: generated)")
    c.add_argument("--elo0", type=float, default=0.0)
    c.add_argument("--elo1", type=float, default=5.0)
    c.add_argument("--alpha", type=float, default=0.05)
    c.add_argument("--beta", type=float, default=0.05)
    c.add_argument("--batch-pairs", type=int, default=16)
    c.add_argument("--max-pairs", type=int, default=1000)
    common(c)
    c.set_defaults(func=create)

    s = tsub.add_parser("status", help="progress and standings")
    s.add_argument("id")
    s.add_argument("--watch", action="store_true", help="a progress bar until it is over")
    s.add_argument("--interval", type=float, default=1.0)
    common(s)
    s.set_defaults(func=status)

    for name, fn, text in (("cancel", cancel, "stop a tournament: queued matches are dropped"),
                           ("resume", resume, "re-enqueue what the results call for (after a restart)")):
        p = tsub.add_parser(name, help=text)
        p.add_argument("id")
        common(p)
        p.set_defaults(func=fn)

    ls = tsub.add_parser("list", help="every tournament")
    common(ls)
    ls.set_defaults(func=list_)
