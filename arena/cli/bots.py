"""``belote-arena bot`` and ``admin``: the credentials: bots' (register, list, rotate, revoke, and
the invites that let others register) and the admin's; and a bot's versions and its report (``bot
report NAME``: its statistics, head-to-head and recent matches).

A token is read from a file or a variable and written to a new file readable by its owner only,
never taken from or put on a command line.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

from arena.cli.checks import CliError, check_bot_name, one_line
from arena.cli.dial import ADDRESS_HELP, admin_token, credential_flags, open_remote, request, tls_flags
from arena.hints import default_address, shell


def _bot_token(args: argparse.Namespace) -> str:
    """A bot's own token: ``$BELOTE_TOKEN`` or ``--token-file`` (never the command line)."""
    from arena.credentials import CredentialError, read_secret

    if args.token_file:
        with one_line(CredentialError):
            return read_secret(Path(args.token_file))
    token = os.environ.get("BELOTE_TOKEN", "").strip()
    if not token:
        raise CliError("give the bot's token in $BELOTE_TOKEN or with --token-file")
    return token


def cmd_bot(args: argparse.Namespace) -> int:
    from arena.credentials import CredentialError, check_new_file
    from arena.remote import RemoteError

    action = args.action
    if args.owner:
        if action not in ("register", "invite"):
            raise CliError("--owner is for bot register and bot invite")
        check_bot_name("--owner", args.owner)
    if action == "register":
        if not args.name:
            raise CliError("bot register needs a NAME")
        check_bot_name("bot register", args.name)
        if args.token_file or not args.json:  # checked before the node makes a token only it will hold
            with one_line(CredentialError):
                check_new_file(Path(_new_token_file(args)), f"the token of {args.name}")
    elif action == "revoke" and args.name:
        check_bot_name("bot revoke", args.name)
    elif action == "rotate" and args.token_file and not os.access(Path(args.token_file).parent, os.W_OK):
        # the new token replaces the old in its file: a folder it cannot be written in loses it
        raise CliError(f"cannot write the bot's new token to {args.token_file}: its folder is not writable")
    elif action in ("versions", "promote", "report"):
        if not args.name:
            raise CliError(f"bot {action} needs the bot's NAME")
        check_bot_name(f"bot {action}", args.name)
        if action == "promote" and not args.version:
            raise CliError("bot promote needs the NAME and the VERSION to promote")
    if action == "versions":
        return _versions(args)
    if action == "report":
        return _report(args)
    # promote: by the bot's own token when one is given, else as the admin
    mine = action == "rotate" or (action == "revoke" and not args.name) or (
        action == "promote" and bool(args.token_file or os.environ.get("BELOTE_TOKEN", "").strip()))
    token = _bot_token(args) if mine else admin_token(args)
    with one_line(RemoteError, CredentialError), open_remote(args, token) as remote:
        if action == "register":
            bot_id, new = remote.register_bot(args.name, args.invite, ladder=args.ladder, owner=args.owner)
            _registered(args, bot_id, new)
        elif action == "rotate":
            reply = remote.call("RotateBotToken", request("RotateBotTokenRequest"))
            _rotated(args, reply.token)
        elif action == "revoke":
            remote.call("RevokeBot", request("RevokeBotRequest", name=args.name or ""))
            print(f"revoked {args.name or 'the bot'}: its token no longer works")
        elif action == "promote":
            remote.call("PromoteBotVersion", request("PromoteBotVersionRequest", name=args.name,
                                                     version=args.version))
            print(f"bot {args.name}: version {args.version} promoted by hand (the leaderboard marks it so); "
                  f"see {shell('belote-arena', 'bot', 'versions', args.name)}")
        elif action == "invite":
            code = remote.call("CreateInvite", request("CreateInviteRequest", owner=args.owner)).invite
            print(json.dumps({"invite": code}) if args.json else
                  f"invite code (good for one registration, shown once): {code}")
        else:
            bots = remote.list_bots()
            if args.json:
                print(json.dumps([{"bot_id": b.bot_id, "name": b.name, "connected": b.connected,
                                   "concurrency": b.concurrency, "seats_in_use": b.seats_in_use,
                                   "revoked": b.revoked} for b in bots]))
                return 0
            for b in bots:
                state = ("revoked" if b.revoked else
                         f"connected, {b.seats_in_use}/{b.concurrency} seats" if b.connected else "offline")
                print(f"{b.name:20} {b.bot_id:14} {state}")
    return 0


def elo_text(elo: float, low: float | None, high: float | None) -> str:
    """``+348 Elo (95%: -28 to +inf)`` (as arena.tournament.sprt.elo_text, which this light command
    does not load): an end None is unbounded."""
    def end(x: float | None, sign: str) -> str:
        return f"{sign}inf" if x is None else f"{x:+.0f}"

    return f"{elo:+.0f} Elo (95%: {end(low, '-')} to {end(high, '+')})"


def _versions(args: argparse.Namespace) -> int:
    """``bot versions NAME``: each version, and the latest test with its LLR against the bounds."""
    from google.protobuf.json_format import MessageToDict

    from arena.remote import RemoteError

    with one_line(RemoteError), open_remote(args, admin_token(args)) as remote:
        reply = remote.call("GetBotVersions", request("GetBotVersionsRequest", name=args.name))
    if args.json:
        print(json.dumps(MessageToDict(reply, preserving_proto_field_name=True)))
        return 0
    if not reply.versions:
        print(f"bot {reply.bot} has said no version (its SDK's Bot.version, or --bot-version)")
        return 0
    print(f"bot {reply.bot}: promoted version {reply.promoted or '-'}")
    print(f"{'version':12} {'state':10} {'how':6} {'games':>6} {'first seen (UTC)':20} test")
    for v in reply.versions:
        test = ""
        if v.test_id:
            elo = ""
            if v.HasField("elo"):
                elo = ", " + elo_text(v.elo, v.elo_low if v.HasField("elo_low") else None,
                                      v.elo_high if v.HasField("elo_high") else None)
            aside = f", {v.set_aside} set aside" if v.set_aside else ""
            ended = v.decision or ("under way" if v.state == "testing" else "no decision")
            test = f"against {v.against}: {ended} (LLR {v.llr:.2f}, {v.pairs} pairs{aside}{elo})"
        seen = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(v.first_seen))
        print(f"{v.version:12} {v.state:10} {v.how or '-':6} {v.games:>6} {seen:20} {test or v.waiting}")
    if reply.ratings:
        print("ratings, each version on its own games (an inherited one: from the version before it, "
              "its interval widened, until it plays):")
        print(f"  {'pool':16} {'version':12} {'rating':>6}  {'95% interval':13} {'games':>6}")
        for r in reply.ratings:
            version = r.version or "(no version)"
            interval = f"{r.low:5.0f} .. {r.high:<5.0f}"
            note = "  inherited" if r.inherited else ""
            print(f"  {r.pool:16} {version:12} {r.rating:6.0f}  {interval} {r.games:>6}{note}")
    if reply.HasField("test"):
        t = reply.test
        aside = f" ({t.set_aside} set aside: a leg with no card played)" if t.set_aside else ""
        elo = "" if not t.HasField("elo") else ", " + elo_text(
            t.elo, t.elo_low if t.HasField("elo_low") else None,
            t.elo_high if t.HasField("elo_high") else None)
        print(f"test {t.tournament_id} ({t.state}): {t.candidate} against {t.against}, LLR {t.llr:.2f} in "
              f"[{t.lower:.2f}, {t.upper:.2f}] after {t.pairs} pairs{aside}{elo}, H0 elo {t.elo0:g}, "
              f"H1 elo {t.elo1:g}{', ' + t.decision if t.decision else ''}")
        print(reply.note)
    return 0


def _report(args: argparse.Namespace) -> int:
    """``bot report NAME``: its statistics, its head-to-head and its recent matches (GetBotReport)."""
    from arena.remote import RemoteError

    if not 1 <= args.limit <= 100:
        raise CliError(f"--limit must be from 1 to 100, not {args.limit}")
    with one_line(RemoteError), open_remote(args, admin_token(args)) as remote:
        reply = remote.call("GetBotReport", request(
            "GetBotReportRequest", name=args.name, limit=args.limit, opponent=args.opponent or "",
            result=args.result or "", pool=args.pool or "", tournament=args.tournament or ""))
    report = json.loads(reply.report_json)
    if args.json:
        print(json.dumps(report))
        return 0
    for line in report_lines(report):
        print(line)
    return 0


def _mean_text(m: dict[str, Any], signed: bool = False) -> str:
    """``95.2 (95%: 80.1 to 110.3, 20 deals)``, or ``-`` with no deal."""
    if not m.get("n"):
        return "-"
    f = "+.1f" if signed else ".1f"
    return f"{m['mean']:{f}} (95%: {m['low']:{f}} to {m['high']:{f}}, {m['n']} deals)"


def _pair(taken: int, made: int) -> str:
    return f"{made}/{taken}"


def worst_text(w: dict[str, Any]) -> str:
    """A worst decision of the analysis in a line: ``deal 2, trick 5: QH, better AH (34 points, mistake)``
    (deals and tricks counted from 1; a bidding's: its contract and the par contract)."""
    where = f"deal {int(w.get('deal', 0)) + 1}, " + (
        "bidding" if w.get("kind") == "bidding" else f"trick {int(w.get('trick', 0)) + 1}")
    better = " or ".join(str(b) for b in w.get("better") or ()) or "-"
    label = f", {w['label']}" if w.get("label") else ""
    return f"{where}: {w.get('played', '?')}, better {better} ({w.get('loss', 0)} points{label})"


def report_lines(report: dict[str, Any]) -> list[str]:
    """The lines ``bot report`` prints of a report's JSON (docs/web.md#a-bots-history-and-statistics)."""
    s = report["statistics"]
    c = s["contracts"]
    rate = f" ({100 * c['made'] / c['taken']:.0f}%)" if c["taken"] else ""
    lines = [
        f"bot {report['bot']}: {s['matches']} matches ({s['wins']} won, {s['draws']} drawn, "
        f"{s['losses']} lost), {s['forfeits']} forfeited, {s['deals']} deals played "
        f"({s['thrown_in']} thrown in)",
        f"contracts: {c['taken']} taken, {c['made']} made{rate}",
    ]
    if c["by_level"]:
        lines.append("  made/taken by level: " + ", ".join(f"{r['level']} {_pair(r['taken'], r['made'])}"
                                                          for r in c["by_level"]))
        lines.append("  made/taken by trump: " + ", ".join(f"{r['trump']} {_pair(r['taken'], r['made'])}"
                                                          for r in c["by_trump"]))
    co, cap = s["coinches"], s["capots"]
    lines += [
        f"coinches: {co['said']} said, {co['against']} against its contracts, "
        f"{co['surcoinches']} surcoinches; capots: {cap['made']} made, {cap['against']} against",
        f"points per deal: as taker {_mean_text(s['points_per_deal']['taker'])}; "
        f"in defence {_mean_text(s['points_per_deal']['defence'])}",
        f"declarations: {s['declarations']['points']} points in {s['declarations']['deals']} deals; "
        f"belote: {s['belotes']}",
    ]
    st, t = s["strikes"], s["decision_ms"]
    p50 = "-" if t["p50"] is None else f"{t['p50']:g} ms"
    p99 = "-" if t["p99"] is None else f"{t['p99']:g} ms"
    lines += [
        f"strikes: {st['late']} late, {st['illegal']} illegal, {st['no_action']} no action; "
        f"{s['fallbacks']} fallbacks played",
        f"decision time: p50 {p50}, p99 {p99} ({t['decisions']} decisions; within 25%)",
    ]
    if s["accuracy"]:
        lines.append("accuracy over time (oldest first): " + ", ".join(
            f"{a['accuracy']:.1f}" for a in s["accuracy"]))
    lines.append("")
    if report["head_to_head"]:
        lines.append(f"head-to-head:\n  {'opponent':20} {'games':>5} {'won':>4} {'drawn':>5} {'lost':>4}  "
                     "points per deal (margin)")
        for r in report["head_to_head"]:
            lines.append(f"  {r['opponent']:20} {r['games']:>5} {r['wins']:>4} {r['draws']:>5} "
                         f"{r['losses']:>4}  {_mean_text(r['points_per_deal'], signed=True)}")
    else:
        lines.append("head-to-head: no match yet")
    lines.append("")
    matches = report.get("matches") or []
    total = report.get("total", len(matches))
    lines.append(f"recent matches ({len(matches)} of {total} kept that pass the filters):" if matches
                 else "recent matches: none")
    for m in matches:
        when = time.strftime("%Y-%m-%d %H:%M", time.gmtime(float(m.get("at") or 0)))
        if m.get("sealed"):
            lines.append(f"  {when}  {m['match_id']:28} {m['opponent']:16} sealed (another table deals its "
                         "cards: shown once it is over)")
            continue
        change = ", ".join(f"{d:+.1f} {p}" for p, d in sorted(m.get("rating_change", {}).items()))
        accuracy = "" if m.get("accuracy") is None else f"  accuracy {m['accuracy']:.1f}"
        lines.append(f"  {when}  {m['match_id']:28} {m['opponent']:16} {m['result']:5} "
                     f"{m['totals'][0]:>5}-{m['totals'][1]:<5} {change or 'unrated'}{accuracy}")
        for w in m.get("worst_decisions") or ():
            lines.append(f"      {worst_text(w)}")
    return lines


def _new_token_file(args: argparse.Namespace) -> str:
    """Where ``bot register`` keeps the new token: ``--token-file``, else NAME.token here."""
    return str(args.token_file or f"{args.name}.token")


def _registered(args: argparse.Namespace, bot_id: str, token: str) -> None:
    """Keep a new bot's token in its file (``--json`` without ``--token-file``: print it), and say
    how to run a bot with it."""
    from arena.credentials import CredentialError, save_secret
    from arena.hints import run_bot, shipped_bot

    reply: dict[str, str] = {"bot_id": bot_id, "name": args.name}
    if args.json and not args.token_file:
        print(json.dumps({**reply, "token": token}))
        return
    path = _new_token_file(args)
    try:
        save_secret(Path(path), token, f"the token of {args.name}")
    except CredentialError as e:
        # the bot is registered now, and this is its token's only copy: shown rather than lost
        raise CliError(f"{e}; {args.name} is registered as {bot_id}, and its token, shown this once, is "
                       f"{token}") from None
    if args.json:
        print(json.dumps({**reply, "token_file": path}))
        return
    print(f"registered {args.name} as {bot_id}; its token is in {path} (readable by you only, shown nowhere "
          f"else: a token never goes on a command line)")
    module = shipped_bot(args.name)
    if module is None:
        print(f"your bot reads it from there: run(MyBot(), {args.address!r}, "
              f"token=open({path!r}).read().strip()); or the random bot plays under this name")
    print(f"run it: {run_bot(args, module or 'random', path)}")


def _rotated(args: argparse.Namespace, token: str) -> None:
    """The new token of a rotation: in the bot's ``--token-file``, replacing the old one; else printed
    once (the old one came from ``$BELOTE_TOKEN``)."""
    from arena.credentials import replace_secret

    if args.token_file:
        replace_secret(Path(args.token_file), token, "the bot's new token")
        print(json.dumps({"token_file": args.token_file}) if args.json else
              f"the bot's new token is in {args.token_file}, in place of the old one, which no longer works: "
              f"restart the bot's processes, which read it when they start")
    elif args.json:
        print(json.dumps({"token": token}))
    else:
        print(f"the bot's new token (shown once; the old one no longer works): {token}\n"
              f"give it to the bot's processes as $BELOTE_TOKEN (or in a file: --token-file), and restart "
              f"them")


def cmd_admin(args: argparse.Namespace) -> int:
    """``admin token``: a fresh admin credential, printed, or written to a new private file."""
    from arena.credentials import CredentialError, new_admin_token, save_secret

    token = new_admin_token()
    if not args.file:
        print(token)
        return 0
    with one_line(CredentialError):
        save_secret(Path(args.file), token, "the admin credential")
    print(f"a new admin credential in {args.file} (readable by you only; 256 random bits): start every node "
          f"with {shell('--admin-token-file', args.file)}, and give the commands the same option")
    return 0


def add_bot(sub: Any) -> None:
    b = sub.add_parser("bot", help="register, list, rotate or revoke bots, make an invite, show or "
                                   "promote a bot's versions, report a bot's statistics and history")
    b.add_argument("action", choices=["register", "list", "rotate", "revoke", "invite", "versions",
                                      "promote", "report"])
    b.add_argument("name", nargs="?", help="register: the new bot's name; revoke: a bot (admin); versions, "
                                           "promote, report: the bot")
    b.add_argument("version", nargs="?", help="promote: the version to promote (by the bot's token in "
                                              "$BELOTE_TOKEN or --token-file, else as the admin)")
    b.add_argument("--invite", default="", help="register: an invite code (a node whose policy is invite)")
    b.add_argument("--ladder", action="store_true",
                   help="register: the bot asks to play the ladder whenever it is connected (opted in to "
                        "every pool whose ladder is on, as the bots' --ladder does for one run)")
    b.add_argument("--owner", default="",
                   help="register (admin), invite: who owns the bot (the bot registered with the invite); "
                        "its version tests take turns with those of the owner's other bots")
    b.add_argument("--limit", type=int, default=10, help="report: the recent matches listed (1 to 100)")
    b.add_argument("--opponent", help="report: only the matches against this bot")
    b.add_argument("--result", choices=["win", "draw", "loss"], help="report: only the matches it won, drew "
                                                                     "or lost")
    b.add_argument("--pool", help="report: only the matches counted in this rating pool")
    b.add_argument("--tournament", help="report: only the matches of this tournament (ladder:POOL: a "
                                        "ladder's)")
    b.add_argument("--address", default=default_address(), help=ADDRESS_HELP)
    tls_flags(b)
    b.add_argument("--json", action="store_true")
    credential_flags(b, bot=True)
    b.set_defaults(func=cmd_bot)


def add_admin(sub: Any) -> None:
    a = sub.add_parser("admin", help="make an admin credential")
    a.add_argument("action", choices=["token"])
    a.add_argument("--file", metavar="FILE",
                   help="write it to FILE, a new file readable by you only (default: print it)")
    a.set_defaults(func=cmd_admin)
