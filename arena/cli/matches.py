"""``belote-arena match``: start a match on a node, follow it, cancel it, or fetch its record."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from arena.cli.analysis import analysis_flags
from arena.cli.checks import CliError, check_bot_name, check_whole, one_line
from arena.cli.dial import ADDRESS_HELP, admin_token, credential_flags, open_remote, request, tls_flags
from arena.cli.records import seats_line, team_name
from arena.hints import default_address
from arena.records import MAX_DEALS

if TYPE_CHECKING:
    from arena.remote import Remote

#: seconds ``match start`` waits for bots the node says are not connected yet (just started ones)
CONNECT_WAIT = 10.0


def check_match(args: argparse.Namespace) -> None:
    check_whole("--deals", args.deals, 0, MAX_DEALS, " (0: play to the target)")
    if args.action == "start":
        for bot in args.ids:
            check_bot_name("match start", bot)


def cmd_match(args: argparse.Namespace) -> int:
    from arena.remote import RemoteError

    check_match(args)
    with one_line(RemoteError), open_remote(args, admin_token(args)) as remote:
        if args.action == "start":
            if len(args.ids) not in (2, 4):
                raise CliError("match start takes two bots, TEAM0 TEAM1, or four, one a seat: "
                               "SEAT0 SEAT1 SEAT2 SEAT3 (team 0 is seats 0 and 2)")
            match_id = _start_match(args, remote)
            print(match_id, flush=True)
            players = _seated(remote, match_id)
            if args.watch:
                _print_result(remote.watch(match_id, players), players)
            return 0
        if len(args.ids) != 1:
            raise CliError(f"match {args.action} takes one MATCH_ID")
        if args.action == "watch":
            players = _seated(remote, args.ids[0])
            _print_result(remote.watch(args.ids[0], players), players)
        elif args.action == "cancel":
            remote.call("CancelMatch", request("CancelMatchRequest", match_id=args.ids[0]))
            print(f"match {args.ids[0]} cancelled: it is not recorded")
        elif args.action == "analyse":
            _analyse(args, remote.get_record(args.ids[0]))
        else:
            print(json.dumps(remote.get_record(args.ids[0])))
        return 0


def _analyse(args: argparse.Namespace, record: dict[str, Any]) -> None:
    """The match's analysis, made here from its record (the node serves the record once the match is
    over and no table dealing its cards is sealed: the same analysis as its web API's)."""
    from arena.cli.analysis import analysis_of_record, print_analysis, settings_of

    analysis = analysis_of_record(record, settings_of(args))
    if args.json:
        print(json.dumps(analysis))
    else:
        print_analysis(analysis, worst=args.worst)


def _start_match(args: argparse.Namespace, remote: Remote) -> str:
    """Start the match; while the node says one of its bots is not connected, try again for up to
    :data:`CONNECT_WAIT` seconds (a bot started a moment ago is still connecting), saying so once."""
    from arena.remote import RemoteError

    teams, seats = (args.ids, None) if len(args.ids) == 2 else (["", ""], args.ids)
    give_up = time.monotonic() + CONNECT_WAIT
    told = False
    while True:
        try:
            return str(remote.start_match(teams[0], teams[1], args.ruleset, seed=str(args.seed or ""),
                                          deals=args.deals or 0, seats=seats))
        except RemoteError as e:
            waiting = str(e).startswith("FAILED_PRECONDITION") and "is not connected" in str(e)
            if not waiting or time.monotonic() > give_up:
                raise
            if not told:
                told = True
                print(f"{str(e).partition(': ')[2]}: waiting up to {CONNECT_WAIT:g} s for it to connect",
                      file=sys.stderr, flush=True)
            time.sleep(0.25)


def _seated(remote: Remote, match_id: str) -> list[str]:
    """The bots at seats 0..3 of a match, printed as one line (empty if the node does not say)."""
    from arena.remote import RemoteError

    try:
        reply = remote.call("GetMatch", request("GetMatchRequest", match_id=match_id))
        players = list(reply.match.players)
    except RemoteError:
        return []  # watching says what is wrong with the match, if anything
    if len(players) != 4:
        return []
    print(seats_line(players), flush=True)
    return players


def _print_result(result: Any, players: Sequence[str] = ()) -> None:
    if result is None:
        return
    named = f" ({team_name(players, result.winner)})" if players and result.HasField("winner") else ""
    winner = f"team {result.winner}{named} wins" if result.HasField("winner") else "no winner"
    detail = f" ({result.detail})" if result.detail else ""
    print(f"match {result.reason}: {list(result.totals)}, {winner}{detail}")


def add_match(sub: Any) -> None:
    m = sub.add_parser("match", help="start, cancel, watch, fetch the record of or analyse a match on a node")
    m.add_argument("action", choices=["start", "cancel", "watch", "record", "analyse"])
    m.add_argument("ids", nargs="*", help="start: TEAM0 TEAM1, or SEAT0 SEAT1 SEAT2 SEAT3 for partners "
                   "that are different bots (bot names or ids); the others: MATCH_ID")
    m.add_argument("--address", default=default_address(), help=ADDRESS_HELP)
    tls_flags(m)
    m.add_argument("--ruleset", default="classic")
    m.add_argument("--deals", type=int, default=0, help="a fixed number of deals (default: to the target)")
    m.add_argument("--seed", default="", help="for tests and reproductions (default: the node's secret)")
    m.add_argument("--watch", action="store_true", help="follow the match once started")
    credential_flags(m, bot=False)
    analysis_flags(m)
    m.set_defaults(func=cmd_match)
