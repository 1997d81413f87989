"""``belote-arena tournament``: create, follow, cancel and resume tournaments.

The tournament lives in the broker (Redis with ``--redis`` or $BELOTE_REDIS,
else the embedded queue in ``--data-dir``); any referee node sharing that
broker plays its matches.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import secrets
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the command line imports the queue only when a tournament command runs
    from arena.queue import Broker
    from arena.tournament import Progress, Standing, Tournaments


class TournamentCliError(Exception):
    """Printed as one line by the CLI, exit 1."""


# What a command is given is checked before the queue is opened: a bad value is one line, exit 1.
# The limits of a match are the node's (arena.referee.node.MAX_DEALS and MAX_TARGET), the bot
# names the registry's (arena.referee.registry.NAME_RE): tests/test_tournament_cli.py checks
# they agree. A tournament of bots no node can seat, or of matches no node plays, is refused here
# rather than dead-lettered job by job.
MAX_DEALS = 1000
MAX_TARGET = 10_000
MAX_ROUNDS = 100
MAX_PAIRS = 100_000
BOT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


def _check_whole(flag: str, value: int | None, low: int, high: int) -> None:
    if value is not None and not low <= value <= high:
        raise TournamentCliError(f"{flag} must be a whole number from {low} to {high}, not {value}")


def check_create(args: argparse.Namespace) -> None:
    for bot in args.bots.split(","):
        if bot.strip() and not BOT_NAME.fullmatch(bot.strip()):
            raise TournamentCliError(f"bad bot name {bot.strip()!r} in --bots: 1 to 64 letters, digits, "
                                     "'_', '.' or '-', starting with a letter or digit")
    _check_whole("--rounds", args.rounds, 1, MAX_ROUNDS)
    _check_whole("--deals", args.deals, 1, MAX_DEALS)
    _check_whole("--target", args.target, 1, MAX_TARGET)
    _check_whole("--max-pairs", args.max_pairs, 2, MAX_PAIRS)
    _check_whole("--batch-pairs", args.batch_pairs, 1, args.max_pairs)


def check_status(args: argparse.Namespace) -> None:
    if not 0 < args.interval <= 3600:  # NaN fails too
        raise TournamentCliError(
            f"--interval must be more than 0 and up to 3600 seconds, not {args.interval:g}")


@contextlib.contextmanager
def _tournaments(args: argparse.Namespace) -> Iterator[Tournaments]:
    """The tournaments of the broker the arguments name; its errors become one line."""
    from arena.engine import EngineError
    from arena.queue import BrokerError, open_broker
    from arena.tournament import TournamentError, Tournaments

    url = getattr(args, "redis", None) or os.environ.get("BELOTE_REDIS") or None
    data = None if args.data_dir == "" else Path(args.data_dir)
    try:
        broker: Broker = open_broker(url, data)
        with broker:
            yield Tournaments(broker)
    except (BrokerError, TournamentError, EngineError) as e:
        raise TournamentCliError(str(e)) from None


def create(args: argparse.Namespace) -> int:
    from arena.engine.rules import spec_from_text
    from arena.tournament import TournamentSpec

    check_create(args)
    with _tournaments(args) as tournaments:
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
            if value is not None:
                spec_json[key] = value
        if args.format == "sprt":
            spec_json["sprt"] = {"elo0": args.elo0, "elo1": args.elo1, "alpha": args.alpha,
                                 "beta": args.beta, "batch_pairs": args.batch_pairs,
                                 "max_pairs": args.max_pairs}
        spec = TournamentSpec.from_dict(spec_json)
        tournaments.create(spec)  # stored, and its first stage enqueued
        jobs = tournaments.store.pending_count(spec.tournament_id)
    if args.json:
        print(json.dumps({"tournament_id": spec.tournament_id, "jobs": jobs}))
    else:
        print(f"tournament {spec.tournament_id}: {spec.format} of {', '.join(spec.bots)}, "
              f"{jobs} matches queued")
        print(f"follow it: belote-arena tournament status {spec.tournament_id} --watch")
    return 0


def status_json(progress: Progress) -> dict[str, Any]:
    spec = progress.spec
    out: dict[str, Any] = {
        "tournament_id": spec.tournament_id, "state": str(progress.state), "format": spec.format,
        "matches_done": progress.matches_done, "matches_scheduled": progress.matches_scheduled,
        "matches_queued": progress.matches_queued,
        "standings": [_standing_json(s, spec.duplicate) for s in progress.standings],
    }
    st = progress.sprt
    if st is not None:
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
    check_status(args)
    with _tournaments(args) as tournaments:
        if args.json:
            print(json.dumps(status_json(tournaments.progress(args.id))))
            return 0
        if not args.watch:
            print_standings(status_json(tournaments.progress(args.id)))
            return 0
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                      TimeElapsedColumn()) as bar:
            task = bar.add_task(args.id, total=None)
            while True:
                progress = tournaments.progress(args.id)
                bar.update(task, completed=progress.matches_done, total=progress.matches_scheduled,
                           description=f"{args.id} ({progress.state})")
                if not progress.state.is_open:
                    break
                time.sleep(args.interval)
        print_standings(status_json(progress))
    return 0


def cancel(args: argparse.Namespace) -> int:
    with _tournaments(args) as tournaments:
        tournaments.cancel(args.id)
    print(f"tournament {args.id} cancelled: its queued matches will not be played")
    return 0


def resume(args: argparse.Namespace) -> int:
    """After a cluster restart: enqueue (once) whatever the results so far call for."""
    with _tournaments(args) as tournaments:
        tournaments.progress(args.id)  # an unknown id is an error
        tournaments.advance(args.id)
        progress = tournaments.progress(args.id)
    print(f"tournament {args.id} ({progress.state}): {progress.matches_done}/"
          f"{progress.matches_scheduled} matches done, {progress.matches_queued} queued")
    return 0


def list_(args: argparse.Namespace) -> int:
    with _tournaments(args) as tournaments:
        store = tournaments.store
        rows = []
        for tid in store.list_tournaments():
            found = store.get_tournament(tid)
            if found is not None:
                rows.append({"tournament_id": tid, "format": found[0].format, "state": str(found[1]),
                             "matches_done": len(store.results(tid))})
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
