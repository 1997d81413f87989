"""``belote-arena tournament``: create, follow, cancel, resume and audit tournaments; ``verify`` their
deals.

Every command talks to a node (``--address``) through ArenaService: the
queue (Redis, or the embedded one) stays private to the nodes. Creating,
cancelling, resuming and auditing need the admin credential ($BELOTE_ADMIN_TOKEN,
``--admin-token-file``, or ``admin.token`` in ``--data-dir``); following a
tournament and verifying it do not, unless the node requires a credential
for reads.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from arena.cli.checks import CliError, check_bot_name, check_whole, one_line
from arena.cli.dial import admin_token, call, cluster_flags, open_remote, request
from arena.hints import belote_arena
from arena.records import MAX_DEALS, MAX_TARGET
from arena.tournament.spec import MAX_BOTS, MAX_PAIRS, MAX_ROUNDS, TournamentError, check_callers_id

if TYPE_CHECKING:  # the command line imports grpc only when one of these commands runs
    from belote.arena.v1 import arena_service_pb2 as apb
    from rich.console import Console


# What a command is given is checked before a node is called: a bad value is one line, exit 1.
# The limits are the node's own (arena.records, arena.tournament.spec, the registry's names): the
# node checks them again, these only save a round trip.


def check_create(args: argparse.Namespace, schedule: bool = False) -> str:
    """Check the options; the pool of ``--bots @ladder:POOL`` (a schedule's only), else ""."""
    from arena.engine.rules import PRESETS
    from arena.tournament.schedule import ScheduleError, ladder_of

    with one_line(ScheduleError):
        pool = ladder_of(args.bots)
    with one_line(TournamentError):
        check_callers_id(args.id or "")  # a version test's id (a schedule's occurrences start with its id)
    if pool:
        if not schedule:
            raise CliError("--bots @ladder:POOL is for schedules (the pool's opted-in bots at each "
                           "occurrence); a tournament made now names its bots")
        if pool not in PRESETS:
            raise CliError(f"@ladder:POOL names a ruleset preset's pool, one of {', '.join(PRESETS)}, "
                           f"not {pool[:64]!r}")
    for bot in args.bots.split(",") if not pool else ():
        if bot.strip():
            check_bot_name("--bots", bot.strip())
    check_whole("--rounds", args.rounds, 1, MAX_ROUNDS)
    check_whole("--deals", args.deals, 1, MAX_DEALS)
    check_whole("--target", args.target, 1, MAX_TARGET)
    check_whole("--max-pairs", args.max_pairs, 2, MAX_PAIRS)
    check_whole("--batch-pairs", args.batch_pairs, 1, args.max_pairs)
    return pool


def check_status(args: argparse.Namespace) -> None:
    if not 0 < args.interval <= 3600:  # NaN fails too
        raise CliError(
            f"--interval must be more than 0 and up to 3600 seconds, not {args.interval:g}")


def spec_message(args: argparse.Namespace, schedule: bool = False) -> apb.TournamentSpec:
    """The tournament the options describe, as ArenaService takes it (checked first); a schedule's
    ``@ladder:POOL`` leaves its bots empty (the request names the pool)."""
    from belote.arena.v1 import arena_service_pb2 as apb

    pool = check_create(args, schedule)
    spec = apb.TournamentSpec(
        tournament_id=args.id, format=args.format,
        bots=[] if pool else [b.strip() for b in args.bots.split(",") if b.strip()],
        candidate=args.candidate or "",
        ruleset=args.ruleset, deals=args.deals or 0, target=args.target or 0,
        duplicate=args.duplicate is not None,
        duplicate_mode="" if args.duplicate in (None, _FORMAT_DEFAULT) else args.duplicate,
        rounds=args.rounds or 0, seed=args.seed,
    )
    if args.format == "sprt":
        spec.sprt.CopyFrom(apb.SprtOptions(elo0=args.elo0, elo1=args.elo1, alpha=args.alpha, beta=args.beta,
                                           batch_pairs=args.batch_pairs, max_pairs=args.max_pairs))
    return spec


def create(args: argparse.Namespace) -> int:
    spec = spec_message(args)
    reply = call(args, "CreateTournament", spec=spec)
    out = {"tournament_id": reply.tournament_id, "jobs": reply.jobs_queued, "commitment": reply.commitment,
           "unrated_reason": reply.unrated_reason, "duplicate_note": reply.duplicate_note}
    if args.json:
        print(json.dumps(out))
        return 0
    print(f"tournament {reply.tournament_id}: {args.format} of {', '.join(spec.bots)}, "
          f"{reply.jobs_queued} matches queued")
    tid = reply.tournament_id
    print(f"commitment to its secret: {reply.commitment} (keep it)")
    print(f"once it is over, check its deals against it: "
          f"{belote_arena(args, 'verify', tid, '--commitment', reply.commitment)}")
    if reply.unrated_reason:
        print(f"unrated: {reply.unrated_reason}")
    if reply.duplicate_note:
        print(f"{reply.duplicate_note}")
    print(f"follow it: {belote_arena(args, 'tournament', 'status', tid, '--watch')}")
    return 0


def status_json(t: apb.TournamentStatus) -> dict[str, Any]:
    spec = t.spec
    out: dict[str, Any] = {
        "tournament_id": spec.tournament_id, "state": t.state, "format": spec.format,
        "matches_done": t.matches_done, "matches_scheduled": t.matches_scheduled,
        "matches_queued": t.matches_queued,
        "standings": [_standing_json(s) for s in t.standings],
        "commitment": t.commitment, "secret": t.secret, "unrated_reason": t.unrated_reason,
        "waiting_for": list(t.waiting_for), "duplicate": spec.duplicate_mode,
        "duplicate_note": t.duplicate_note, "ended_at": t.ended_at or None, "ended_reason": t.ended_reason,
        "secret_revealed_at": t.secret_revealed_at or None,
        "secret_revealed_reason": t.secret_revealed_reason, "ending": t.ending,
    }
    if t.HasField("sprt"):
        st = t.sprt
        out["sprt"] = {"llr": round(st.llr, 4), "lower": round(st.lower, 4), "upper": round(st.upper, 4),
                       "decision": st.decision or None, "pairs": st.pairs,
                       "pentanomial": list(st.pentanomial), "set_aside": st.set_aside,
                       # the Elo estimate and its 95% interval (null ends: unbounded; all null before a pair)
                       "elo": round(st.elo, 1) if st.HasField("elo") else None,
                       "elo_low": round(st.elo_low, 1) if st.HasField("elo_low") else None,
                       "elo_high": round(st.elo_high, 1) if st.HasField("elo_high") else None}
    return out


def _standing_json(s: apb.Standing) -> dict[str, Any]:
    return {"rank": s.rank, "bot": s.bot, "played": s.played, "wins": s.wins, "draws": s.draws,
            "losses": s.losses, "byes": s.byes, "score": s.score, "points_for": s.points_for,
            "points_against": s.points_against, "duplicate_diff": s.duplicate_diff, "diff": s.diff,
            "buchholz": s.buchholz if s.HasField("buchholz") else None}


def on_terminal() -> bool:
    """Whether the output is a terminal (not a pipe, nor a file)."""
    return sys.stdout.isatty()


def console() -> Console:
    """rich's console for a table: a terminal's width on a terminal; into a pipe or a file, as wide as
    the table (a log keeps every value whole, never cut to a terminal's 80 columns with an ellipsis)."""
    from rich.console import Console

    return Console() if on_terminal() else Console(width=UNCUT_WIDTH, no_color=True)


#: the width of a table printed off a terminal: wider than any (its columns take what they need)
UNCUT_WIDTH = 10_000


def print_standings(status: dict[str, Any], args: argparse.Namespace) -> None:
    from rich.table import Table

    title = (f"{status['tournament_id']} ({status['format']}, {status['state']}): "
             f"{status['matches_done']}/{status['matches_scheduled']} matches")
    table = Table(title=title)
    for col in ("#", "bot", "played", "won", "drawn", "lost", "score", "for", "against", "diff"):
        table.add_column(col, justify="left" if col == "bot" else "right", no_wrap=True)
    for s in status["standings"]:
        table.add_row(str(s["rank"]), s["bot"], str(s["played"]), str(s["wins"]), str(s["draws"]),
                      str(s["losses"]), f"{s['score']:g}", str(s["points_for"]), str(s["points_against"]),
                      str(s["diff"]))
    console().print(table)
    if "sprt" in status:
        from arena.tournament.sprt import elo_text

        sp = status["sprt"]
        aside = f" ({sp['set_aside']} set aside: a leg with no card played)" if sp["set_aside"] else ""
        elo = "" if sp["elo"] is None else f", {elo_text(sp['elo'], sp['elo_low'], sp['elo_high'])}"
        print(f"SPRT: LLR {sp['llr']} in [{sp['lower']}, {sp['upper']}], {sp['pairs']} pairs{aside}{elo}, "
              f"decision {sp['decision'] or 'none yet'}")
    if status["waiting_for"]:
        print(f"waiting for {', '.join(status['waiting_for'])}: connected to no node")
    if status["unrated_reason"]:
        print(f"unrated: {status['unrated_reason']}")
    if status["duplicate_note"]:
        print(status["duplicate_note"])
    elif status["duplicate"]:
        print(f"{status['duplicate']} duplicate: no bot sees a deal from two seats")
    if status["duplicate"]:
        from arena.tournament.spec import DUPLICATE_SCORING

        print(DUPLICATE_SCORING.get(status["duplicate"], ""))
    if status["ending"]:
        print(status["ending"])
    if status["secret"]:
        verify = belote_arena(args, "verify", status["tournament_id"])
        print(f"secret {status['secret']}; check the deals: {verify}")


def _status(args: argparse.Namespace) -> dict[str, Any]:
    return status_json(call(args, "GetTournament", tournament_id=args.id).tournament)


def status(args: argparse.Namespace) -> int:
    check_status(args)
    if args.json:
        print(json.dumps(_status(args)))
        return 0
    if not args.watch:
        print_standings(_status(args), args)
        return 0
    st = _watch(args) if on_terminal() else _watch_lines(args)
    print_standings(st, args)
    return 0


def _over(st: dict[str, Any]) -> bool:
    """Over, and none of its matches can still be played (its secret is out)."""
    return st["state"] in ("finished", "cancelled") and bool(st["secret"])


def _watch_lines(args: argparse.Namespace) -> dict[str, Any]:
    """``--watch`` into a pipe or a file: a line each time its progress changes (a bar redrawn in place
    is a terminal's), then its status once it is over."""
    said = ""
    while True:
        st = _status(args)
        line = f"{args.id} ({st['state']}): {st['matches_done']}/{st['matches_scheduled']} matches"
        if line != said:
            print(line, flush=True)
            said = line
        if _over(st):
            return st
        time.sleep(args.interval)


def _watch(args: argparse.Namespace) -> dict[str, Any]:
    """``--watch`` on a terminal: a progress bar until it is over, then its status."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn()) as bar:
        task = bar.add_task(args.id, total=None)
        while True:
            st = _status(args)
            bar.update(task, completed=st["matches_done"], total=st["matches_scheduled"],
                       description=f"{args.id} ({st['state']})")
            if _over(st):
                return st
            time.sleep(args.interval)


def cancel(args: argparse.Namespace) -> int:
    call(args, "CancelTournament", tournament_id=args.id)
    print(f"tournament {args.id} cancelled: its queued matches are dropped, its running ones stopped "
          f"unrecorded; its secret is revealed once none of them can still be played, as its status says: "
          f"{belote_arena(args, 'tournament', 'status', args.id)}")
    return 0


def resume(args: argparse.Namespace) -> int:
    """After a cluster restart: enqueue (once) whatever the results so far call for."""
    st = status_json(call(args, "ResumeTournament", tournament_id=args.id).tournament)
    print(f"tournament {args.id} ({st['state']}): {st['matches_done']}/{st['matches_scheduled']} "
          f"matches done, {st['matches_queued']} queued")
    return 0


def list_(args: argparse.Namespace) -> int:
    rows = [{"tournament_id": t.tournament_id, "format": t.format, "state": t.state,
             "matches_done": t.matches_done}
            for t in call(args, "ListTournaments", version_tests=args.tests).tournaments]
    if args.json:
        print(json.dumps(rows))
    else:
        for r in rows:
            print(f"{r['tournament_id']:24} {r['format']:12} {r['state']:10} "
                  f"{r['matches_done']} matches done")
    return 0


def _every_text(every_s: int) -> str:
    for unit, size in (("d", 86_400), ("h", 3600), ("m", 60)):
        if every_s % size == 0:
            return f"{every_s // size}{unit}"
    return f"{every_s}s"


def schedule_json(msg: apb.Schedule) -> dict[str, Any]:
    from arena.tournament.schedule import iso

    return {"schedule_id": msg.schedule_id, "format": msg.spec.format, "bots": list(msg.spec.bots),
            "ladder": msg.ladder or None,
            "every_s": msg.every_s, "every": _every_text(msg.every_s), "at": msg.at or None,
            "next_at": msg.next_at, "next": iso(msg.next_at), "created_at": msg.created_at,
            "last_at": msg.last_at or None, "last_tournament_id": msg.last_tournament_id or None,
            "max_bots": msg.max_bots or None, "why": msg.why or None}


def schedule(args: argparse.Namespace) -> int:
    """``tournament schedule``: store a schedule (with ``list`` or ``cancel``: those)."""
    from arena.tournament.schedule import ScheduleError, parse_at, parse_every

    missing = [flag for flag, value in (("--every", args.every), ("--format", args.format),
                                        ("--bots", args.bots)) if value is None]
    if missing:
        raise CliError(f"tournament schedule needs {', '.join(missing)} "
                       "(or: tournament schedule list, tournament schedule cancel ID)")
    if args.max_bots is not None:
        if not args.bots.strip().startswith("@"):
            raise CliError("--max-bots bounds the bots of --bots @ladder:POOL (drawn from those opted in); "
                           "a list of names is played whole")
        check_whole("--max-bots", args.max_bots, 2, MAX_BOTS)
    with one_line(ScheduleError):
        every_s = parse_every(args.every)
        if args.at:
            parse_at(args.at, "--at")
    from arena.tournament.schedule import ladder_of

    spec = spec_message(args, schedule=True)
    spec.tournament_id = ""
    reply = call(args, "CreateSchedule", schedule_id=args.id, spec=spec, every_s=every_s, at=args.at or "",
                 ladder=ladder_of(args.bots), max_bots=args.max_bots or 0)
    out = schedule_json(reply.schedule)
    if args.json:
        print(json.dumps(out))
        return 0
    when = f"at {out['at']} UTC " if out["at"] else ""
    most = f" ({out['max_bots']} at most, drawn at random)" if out["max_bots"] else ""
    who = (f"the bots opted in to the {out['ladder']} ladder at each occurrence{most}" if out["ladder"]
           else ", ".join(out["bots"]))
    print(f"schedule {out['schedule_id']}: {out['format']} of {who}, every "
          f"{out['every']} {when}(UTC); next occurrence {out['next']}")
    if out["why"]:
        print(f"note: {out['why']}")
    print(f"each occurrence is the tournament {out['schedule_id']}@YYYYMMDDTHHMMSSZ; list them: "
          f"{belote_arena(args, 'tournament', 'list')}")
    return 0


def schedule_list(args: argparse.Namespace) -> int:
    rows = [schedule_json(s) for s in call(args, "ListSchedules").schedules]
    if args.json:
        print(json.dumps(rows))
        return 0
    if not rows:
        print("no schedule")
    for r in rows:
        at = f" at {r['at']}" if r["at"] else ""
        print(f"{r['schedule_id']:24} {r['format']:12} every {r['every']}{at}, next {r['next']}, "
              f"last {r['last_tournament_id'] or 'none yet'}")
        if r["why"]:
            print(f"{'':24} {r['why']}")
    return 0


def schedule_cancel(args: argparse.Namespace) -> int:
    call(args, "CancelSchedule", schedule_id=args.id)
    if args.json:
        print(json.dumps({"schedule_id": args.id, "cancelled": True}))
    else:
        print(f"schedule {args.id} cancelled: no more occurrences (the tournaments it made stay)")
    return 0


def verify(args: argparse.Namespace) -> int:
    """Check a finished tournament's deals against the commitment it published when it was created."""
    from arena.records import MatchRecord
    from arena.remote import RemoteError
    from arena.tournament.verify import verify_tournament

    t = call(args, "GetTournament", tournament_id=args.id).tournament
    if not t.secret:
        raise CliError(f"tournament {args.id} is {t.state}: its secret is revealed once it is over "
                       "and none of its matches can still be played")
    committed = args.commitment or t.commitment
    with one_line(RemoteError), open_remote(args, admin_token(args)) as remote:
        records = [MatchRecord.from_dict(remote.get_record(m)) for m in t.finished_matches]
    result = verify_tournament(args.id, t.secret, committed, records)
    if args.json:
        print(json.dumps({"tournament_id": args.id, "ok": result.ok, "matches": result.matches,
                          "deals": result.deals, "commitment": committed, "problems": result.problems}))
    elif result.ok:
        print(f"tournament {args.id}: the secret matches the commitment {committed}, and the "
              f"{result.deals} deals of its {result.matches} matches are the ones it dealt")
    else:
        print(f"tournament {args.id}: NOT verified")
        for problem in result.problems:
            print(f"  {problem}")
    return 0 if result.ok else 1


def _schedule_key(match_id: str) -> list[Any]:
    """A match id's place in its tournament's schedule: its numbers as numbers (``-r2-`` before ``-r10-``)."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", match_id)]


def _write_to(path: str, write: Callable[[BinaryIO], object]) -> None:
    """``write`` into ``-o PATH``: a file written beside it, then moved into place once whole (a failed
    export leaves no half file); ``-`` the standard output."""
    if path == "-":
        write(sys.stdout.buffer)
        sys.stdout.buffer.flush()
        return
    target = Path(path)
    if target.is_dir():
        raise CliError(f"-o {path} is a folder: name the file to write")
    temp = target.with_name(f".{target.name}.part")
    try:
        with temp.open("wb") as out:
            write(out)
        temp.replace(target)
    except OSError as e:
        raise CliError(f"cannot write {path}: {e.strerror}") from None
    finally:
        temp.unlink(missing_ok=True)


def export(args: argparse.Namespace) -> int:
    """Write a tournament's standings as CSV, or its records as JSON Lines or a zip (the API's files)."""
    from arena.tournament.export import standings_csv

    t = call(args, "GetTournament", tournament_id=args.id).tournament
    notes: list[str] = []
    if args.standings:
        _write_to(args.output, lambda out: out.write(standings_csv(status_json(t)["standings"]).encode()))
        what = f"the standings of {len(t.standings)} bots"
    else:
        counts = [0, 0, 0]  # written, sealed, aborted
        _write_to(args.output, lambda out: _write_records(args, t, out, counts))
        written, sealed, aborted = counts
        what = f"the records of {_count(written, 'match', 'matches')}"
        if sealed:
            notes.append(f"{_count(sealed, 'sealed table', 'sealed tables')} left out: a record is served "
                         f"once every table dealing its cards is over; export again then")
        if aborted:
            notes.append(f"{_count(aborted, 'aborted match has', 'aborted matches have')} no record")
    said = sys.stderr if args.output == "-" else sys.stdout
    where = "" if args.output == "-" else f" to {args.output}"
    print(f"tournament {args.id}: wrote {what}{where}", file=said)
    for note in notes:
        print(note, file=said)
    return 0


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _write_records(args: argparse.Namespace, t: apb.TournamentStatus, out: BinaryIO,
                   counts: list[int]) -> None:
    """Each finished match's record into ``out`` in schedule order, one at a time; ``counts``: those
    written, those left out sealed, and the aborted ones (no record)."""
    from arena.remote import RemoteError
    from arena.tournament.export import ZipStream, jsonl_line, record_file_name

    zipped = ZipStream() if args.records == "zip" else None
    with one_line(RemoteError), open_remote(args, admin_token(args)) as remote:
        for match_id in sorted(t.finished_matches, key=_schedule_key):
            try:
                asked = request("GetMatchRecordRequest", match_id=match_id)
                text = remote.call("GetMatchRecord", asked).record_json
            except RemoteError as e:
                left_out = {"FAILED_PRECONDITION": 1, "NOT_FOUND": 2}.get(e.code)  # sealed; aborted
                if left_out is None:
                    raise
                counts[left_out] += 1
                continue
            out.write(jsonl_line(text) if zipped is None
                      else zipped.add(record_file_name(match_id), text.encode()))
            counts[0] += 1
    if zipped is not None:
        out.write(zipped.close())


def check_audit(args: argparse.Namespace) -> None:
    from arena.tournament.audit import MAX_DEALS as MAX_AUDIT_DEALS
    from arena.tournament.detection import MAX_MARGIN_MS

    check_whole("--max-deals", args.max_deals, 1, MAX_AUDIT_DEALS)
    check_whole("--clock-margin-ms", args.clock_margin_ms, 0, MAX_MARGIN_MS)
    if not 0 < args.timeout <= 86_400:  # NaN fails too
        raise CliError(
            f"--timeout must be more than 0 and up to 86400 seconds, not {args.timeout:g}")


def audit_json(reply: apb.AuditTournamentResponse) -> dict[str, Any]:
    return {
        "tournament_id": reply.tournament_id, "alpha": reply.alpha, "min_deals": reply.min_deals,
        "clock_margin_ms": reply.clock_margin_ms, "deals_audited": reply.deals_audited,
        "deals_total": reply.deals_total, "decisions": reply.decisions, "seconds": round(reply.seconds, 3),
        "unreadable": list(reply.unreadable),
        "bots": [{
            "bot": b.bot, "unseen": b.unseen, "unseen_agree": b.unseen_agree, "seen": b.seen,
            "seen_agree": b.seen_agree, "ambiguous": b.ambiguous, "untimed": b.untimed, "single": b.single,
            "deals": b.deals, "difference": b.difference if b.HasField("difference") else None,
            "p_value": b.p_value if b.HasField("p_value") else None, "flagged": b.flagged,
        } for b in reply.bots],
    }


def _rate(agree: int, count: int) -> str:
    return f"{agree}/{count} {100 * agree / count:.0f}%" if count else "-"


def print_audit(audit: dict[str, Any]) -> None:
    from rich.table import Table

    table = Table(title=f"{audit['tournament_id']}: agreement with perfect-information play")
    for col in ("bot", "unseen", "seen", "ambiguous", "deals", "seen - unseen", "p", "flag"):
        table.add_column(col, justify="left" if col in ("bot", "flag") else "right", no_wrap=True)
    for b in audit["bots"]:
        diff = "-" if b["difference"] is None else f"{b['difference']:+.3f}"
        p = "-" if b["p_value"] is None else f"{b['p_value']:.2g}"
        table.add_row(b["bot"], _rate(b["unseen_agree"], b["unseen"]), _rate(b["seen_agree"], b["seen"]),
                      str(b["ambiguous"] + b["untimed"]), str(b["deals"]), diff, p,
                      "FLAGGED" if b["flagged"] else "")
    console().print(table)
    print(f"unseen: card decisions answered before the bot was shown that deal at another table; seen: "
          f"after. Flagged: p < {audit['alpha']:g} with at least {audit['min_deals']} deals compared.")
    print(f"{audit['deals_audited']} of {audit['deals_total']} deals audited, {audit['decisions']} "
          f"decisions, {audit['seconds']:.1f} s; clock margin {audit['clock_margin_ms']} ms")
    for line in audit["unreadable"]:
        print(f"not read: {line}")


def audit(args: argparse.Namespace) -> int:
    """Flag bots that play better once they could have seen a deal at another table (admin)."""
    check_audit(args)
    fields: dict[str, Any] = {"tournament_id": args.id, "max_deals": args.max_deals or 0}
    if args.clock_margin_ms is not None:
        fields["clock_margin_ms"] = args.clock_margin_ms
    out = audit_json(call(args, "AuditTournament", timeout=args.timeout, **fields))
    if args.json:
        print(json.dumps(out))
    else:
        print_audit(out)
    return 0


#: ``--duplicate`` with no mode: the format's (argparse passes a string const through ``type``)
_FORMAT_DEFAULT = "(the format's default)"


def _duplicate_mode(text: str) -> str:
    if text not in ("field", "mirror", _FORMAT_DEFAULT):
        raise argparse.ArgumentTypeError(f"a duplicate mode is field or mirror, not {text[:32]!r}")
    return text


def add_tournament(sub: Any) -> None:
    t = sub.add_parser("tournament", help="create, follow, cancel or resume a tournament")
    tsub = t.add_subparsers(dest="tournament_command", required=True)

    c = tsub.add_parser("create", help="queue a tournament")
    _tournament_options(c, required=True)
    c.add_argument("--id", default="", help="the tournament id (default: generated)")
    cluster_flags(c)
    c.set_defaults(func=create)

    sc = tsub.add_parser("schedule", help="make a tournament every --every (UTC), exactly once a time "
                                          "across the cluster; or list or cancel schedules")
    sc.add_argument("--every", help="the period: a whole number and s, m, h or d (24h; a minute at least "
                                    "unless the nodes allow less)")
    sc.add_argument("--at", help="HH:MM, UTC: the occurrences fall at that time of day (plus whole periods); "
                                 "default: from now, the first at once")
    _tournament_options(sc, required=False)
    sc.add_argument("--id", default="", help="the schedule id (default: generated); each occurrence's "
                                             "tournament is ID@YYYYMMDDTHHMMSSZ")
    sc.add_argument("--max-bots", type=int,
                    help=f"with --bots @ladder:POOL: the most bots an occurrence plays, drawn at random when "
                         f"more are opted in (default and at most {MAX_BOTS})")
    cluster_flags(sc)
    sc.set_defaults(func=schedule)
    scsub = sc.add_subparsers(dest="schedule_command", required=False)
    sl = scsub.add_parser("list", help="every schedule, its next occurrence and its last tournament")
    cluster_flags(sl)
    sl.set_defaults(func=schedule_list)
    sx = scsub.add_parser("cancel", help="no more occurrences of a schedule (its tournaments stay)")
    sx.add_argument("id")
    cluster_flags(sx)
    sx.set_defaults(func=schedule_cancel)

    _add_tournament_parsers(tsub)


def _tournament_options(c: argparse.ArgumentParser, *, required: bool) -> None:
    """The options of a tournament, ``tournament create``'s and ``tournament schedule``'s."""
    c.add_argument("--format", required=required,
                   choices=["round-robin", "gauntlet", "swiss", "knockout", "sprt", "partners"],
                   help="partners: 4+ bots at tables of four, partnerships rotating each round")
    c.add_argument("--bots", required=required,
                   help="bot names, comma separated (sprt: candidate,baseline); a schedule's may be "
                        "@ladder:POOL: the pool's opted-in bots at each occurrence")
    c.add_argument("--candidate", help="gauntlet: the bot that meets the field")
    c.add_argument("--ruleset", default="classic", help="a preset or a JSON ruleset object")
    c.add_argument("--deals", type=int, help="a fixed number of deals per match")
    c.add_argument("--target", type=int, help="play each match to this score instead")
    c.add_argument("--duplicate", nargs="?", const=_FORMAT_DEFAULT, type=_duplicate_mode,
                   metavar="field|mirror",
                   help="duplicate play (needs --deals). field (the default for round-robin, swiss and "
                        "partners): each deal at two tables by four different bots, each scored against "
                        "the one that held the same cards; no bot sees a deal from two seats (4+ bots; "
                        "partners 8+). mirror (sprt's, and only when asked elsewhere): each deal twice by "
                        "the same two bots with the hands exchanged, so both legs are seen by both bots; "
                        "the second legs run after the first ones, so that `tournament audit` can compare")
    c.add_argument("--rounds", type=int, help="repeats (round-robin, gauntlet), Swiss or partners rounds")
    c.add_argument("--seed", default="",
                   help="for tests and reproductions: the deals are then known in advance and the "
                        "tournament is unrated (default: a fresh random secret)")
    c.add_argument("--elo0", type=float, default=0.0)
    c.add_argument("--elo1", type=float, default=5.0)
    c.add_argument("--alpha", type=float, default=0.05)
    c.add_argument("--beta", type=float, default=0.05)
    c.add_argument("--batch-pairs", type=int, default=16)
    c.add_argument("--max-pairs", type=int, default=1000)


def _add_tournament_parsers(tsub: Any) -> None:
    s = tsub.add_parser("status", help="progress and standings")
    s.add_argument("id")
    s.add_argument("--watch", action="store_true", help="a progress bar until it is over")
    s.add_argument("--interval", type=float, default=1.0)
    cluster_flags(s)
    s.set_defaults(func=status)

    for name, fn, text in (("cancel", cancel, "stop a tournament: queued matches are dropped, running ones "
                                              "stopped unrecorded"),
                           ("resume", resume, "re-enqueue what the results call for (after a restart)")):
        p = tsub.add_parser(name, help=text)
        p.add_argument("id")
        cluster_flags(p)
        p.set_defaults(func=fn)

    ls = tsub.add_parser("list", help="every tournament (the version tests are listed apart: --tests)")
    ls.add_argument("--tests", action="store_true",
                    help="the version tests instead (the tournaments the arena makes between two versions "
                         "of a bot)")
    cluster_flags(ls)
    ls.set_defaults(func=list_)

    e = tsub.add_parser("export", help="write a tournament's standings as CSV, or its records (every "
                                       "finished match's) as JSON Lines or a zip")
    e.add_argument("id")
    what = e.add_mutually_exclusive_group(required=True)
    what.add_argument("--standings", choices=["csv"], help="its standings (safe to open in a spreadsheet)")
    what.add_argument("--records", choices=["jsonl", "zip"],
                      help="every finished match's record (docs/records.md): one a line, or one file each in "
                           "a zip; a table of duplicate play still sealed is left out until its twin is over")
    e.add_argument("-o", "--output", required=True, metavar="FILE", help="the file to write (- : the output)")
    cluster_flags(e)
    e.set_defaults(func=export)

    a = tsub.add_parser("audit", help="flag bots that play better once they could have seen a deal at "
                                      "another table (admin; docs/detection.md)")
    a.add_argument("id")
    a.add_argument("--max-deals", type=int,
                   help="the most deals to analyse (default 1000, at most 20000; about 0.06 s of the "
                        "node's CPU each)")
    a.add_argument("--clock-margin-ms", type=int,
                   help="the slack between the nodes' clocks (default 5): decisions closer than that to "
                        "the moment the bot was shown the deal elsewhere count neither way")
    a.add_argument("--timeout", type=float, default=1800.0, help="seconds to wait for the node's answer")
    cluster_flags(a)
    a.set_defaults(func=audit)


def add_verify(sub: Any) -> None:
    v = sub.add_parser("verify", help="check that a finished tournament's deals follow from its "
                                      "committed secret")
    v.add_argument("id", help="the tournament id")
    v.add_argument("--commitment", default="",
                   help="the commitment printed when the tournament was created (default: the node's)")
    cluster_flags(v)
    v.set_defaults(func=verify)
