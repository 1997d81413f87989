"""``belote-arena ladder``: start, stop and follow a pool's ladder, opt bots in and out.

A pool's ladder (:mod:`arena.node.ladder`) keeps its opted-in bots playing rated
matches with no tournament made. Every command talks to a node (``--address``)
through ArenaService, which stores the change in the cluster's queue: every node
follows it at once. Starting, stopping, adding and removing need the admin
credential ($BELOTE_ADMIN_TOKEN, ``--admin-token-file``, or ``admin.token`` in
``--data-dir``); ``status`` does not, unless the node requires a credential for
reads.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import TYPE_CHECKING, Any

from arena.cli.checks import CliError, check_bot_name, check_whole
from arena.cli.dial import call, cluster_flags
from arena.cli.rankings import format_table, leaderboard_json
from arena.hints import belote_arena
from arena.records import MAX_DEALS

if TYPE_CHECKING:  # the command line imports grpc only when one of these commands runs
    from belote.arena.v1 import arena_service_pb2 as apb

#: a ladder match's deals when --deals is not given (arena.node.ladder.DEFAULT_DEALS, which imports
#: the queue: the node says the same)
DEFAULT_DEALS = 8
#: the latest pairings ``ladder status`` prints
PICKS_SHOWN = 5
#: the version tests' H1 bound when not given, and its range (arena.node.versions.ELO1, MIN_ELO1 and
#: MAX_ELO1, for the same reason; tests/cli checks they agree)
TEST_ELO1 = 30.0
MIN_TEST_ELO1, MAX_TEST_ELO1 = 1.0, 400.0


def check_pool(pool: str) -> None:
    """A ruleset preset's pool, checked before the node is called (the node checks it again)."""
    from arena.engine.rules import PRESETS

    if pool not in PRESETS:
        raise CliError(f"--pool must be a ruleset preset, one of {', '.join(PRESETS)}, not {pool[:64]!r}")


def ladder_json(msg: apb.Ladder, picks: bool = True) -> dict[str, Any]:
    """A ladder as ``--json`` prints it; its latest pairings with why unless ``picks`` is False (a
    list of the ladders: ListLadders leaves them out)."""
    out = {"pool": msg.pool, "on": msg.on, "deals": msg.deals, "bots": list(msg.bots),
           "in_progress": msg.in_progress, "version_test_elo1": msg.version_test_elo1}
    if picks:
        out["picks"] = [{"a": p.bot_a, "b": p.bot_b, "match_id": p.match_id, "at": p.at, "why": p.why}
                        for p in msg.picks]
        out["bot_states"] = [
            {"bot": b.bot, "opponents": [{"bot": o.bot, "games": o.games, "wins": o.wins, "draws": o.draws,
                                          "losses": o.losses} for o in b.opponents],
             "other_games": b.other_games, "paused_until": b.paused_until, "paused_why": b.paused_why,
             "pauses": b.pauses}
            for b in msg.bot_states]
    return out


def opponents_text(state: dict[str, Any]) -> str:
    """A bot's opponents by games, most first: ``search 12, heuristic 9, random 1 (+4 others)``."""
    listed = ", ".join(f"{o['bot']} {o['games']}" for o in state["opponents"])
    others = f" (+{state['other_games']} against others)" if state["other_games"] else ""
    return (listed or "no game yet") + others


def describe(ladder: dict[str, Any]) -> str:
    """One line: the ladder's state, its matches and its bots."""
    deals = ladder["deals"]
    state = (f"on, matches of {deals} deal{'' if deals == 1 else 's'}, new versions tested for "
             f"+{ladder['version_test_elo1']:g} Elo" if ladder["on"] else "off")
    bots = ladder["bots"]
    who = f"{len(bots)} bot{'' if len(bots) == 1 else 's'}" + (f": {', '.join(bots)}" if bots else "")
    return f"ladder {ladder['pool']}: {state}, {ladder['in_progress']} matches in progress; {who}"


def start(args: argparse.Namespace) -> int:
    check_pool(args.pool)
    check_whole("--deals", args.deals, 1, MAX_DEALS)
    if not MIN_TEST_ELO1 <= args.version_test_elo1 <= MAX_TEST_ELO1:
        raise CliError(f"--version-test-elo1 must be from {MIN_TEST_ELO1:g} to {MAX_TEST_ELO1:g}, "
                       f"not {args.version_test_elo1:g}")
    out = ladder_json(call(args, "StartLadder", pool=args.pool, deals=args.deals,
                           version_test_elo1=args.version_test_elo1).ladder)
    if args.json:
        print(json.dumps(out))
        return 0
    print(describe(out))
    if len(out["bots"]) < 2:
        print("fewer than two bots are opted in, so it has no one to pair yet (ladder add opts bots in)")
    print(f"follow it: {belote_arena(args, 'ladder', 'status', '--pool', args.pool)}")
    return 0


def stop(args: argparse.Namespace) -> int:
    check_pool(args.pool)
    out = ladder_json(call(args, "StopLadder", pool=args.pool).ladder)
    if args.json:
        print(json.dumps(out))
        return 0
    print(describe(out))
    print("its matches queued or running are played out; its bots and deals are kept")
    print(f"start it again: "
          f"{belote_arena(args, 'ladder', 'start', '--pool', args.pool, '--deals', str(out['deals']))}")
    return 0


def status(args: argparse.Namespace) -> int:
    if args.pool:
        check_pool(args.pool)
        check_whole("--limit", args.limit, 1, 200)
        reply = call(args, "GetLadder", pool=args.pool, limit=args.limit)
        out = ladder_json(reply.ladder)
        board = leaderboard_json(reply.standings)
        if args.json:
            print(json.dumps({**out, "standings": board}))
            return 0
        print(describe(out))
        if board["entries"]:
            print("\n".join(format_table(board)))
        else:
            print(f"no rated game in the pool {args.pool} yet")
        if out["picks"]:
            print("the latest pairings, and why:")
            for p in out["picks"][:PICKS_SHOWN]:
                print(f"  {time.strftime('%H:%M:%S', time.gmtime(p['at']))} {p['why']}")
        if out["bot_states"]:
            print("each bot's games in the pool, by opponent:")
            width = max(len(b["bot"]) for b in out["bot_states"])
            for b in out["bot_states"]:
                print(f"  {b['bot']:<{width}}  {opponents_text(b)}")
        for b in out["bot_states"]:
            if b["paused_until"]:
                print(f"paused: {b['paused_why']}")
        return 0
    rows = [ladder_json(m, picks=False) for m in call(args, "ListLadders").ladders]
    if args.json:
        print(json.dumps(rows))
    elif not rows:
        print("no ladder: none started, no bot opted in")
    else:
        for row in rows:
            print(describe(row))
    return 0


def _bots(args: argparse.Namespace) -> list[str]:
    check_pool(args.pool)
    for bot in args.bots:
        check_bot_name("the bots", bot)
    return list(dict.fromkeys(args.bots))


def add(args: argparse.Namespace) -> int:
    bots = _bots(args)
    reply = call(args, "AddLadderBot", pool=args.pool, bots=bots)
    out = ladder_json(reply.ladder)
    added = list(reply.added)
    if args.json:
        print(json.dumps({**out, "added": added}))
        return 0
    already = [b for b in bots if b not in added]
    print(f"{', '.join(added) or 'no bot'} opted in to the ladder {args.pool}"
          + (f" ({', '.join(already)} already in)" if already else ""))
    print(describe(out))
    if not out["on"]:
        print(f"it is off; start it: {belote_arena(args, 'ladder', 'start', '--pool', args.pool)}")
    return 0


def remove(args: argparse.Namespace) -> int:
    bots = _bots(args)
    reply = call(args, "RemoveLadderBot", pool=args.pool, bots=bots)
    out = ladder_json(reply.ladder)
    removed = list(reply.removed)
    if args.json:
        print(json.dumps({**out, "removed": removed}))
        return 0
    absent = [b for b in bots if b not in removed]
    print(f"{', '.join(removed) or 'no bot'} taken out of the ladder {args.pool}"
          + (f" ({', '.join(absent)} not in)" if absent else "")
          + (": their matches queued or running are played out" if removed else ""))
    print(describe(out))
    return 0


def add_ladder(sub: Any) -> None:
    lad = sub.add_parser("ladder", help="a pool's ladder: its opted-in bots keep playing rated matches, "
                                        "no tournament made")
    lsub = lad.add_subparsers(dest="ladder_command", required=True)

    def pool_flag(p: argparse.ArgumentParser, *, required: bool = True) -> None:
        p.add_argument("--pool", required=required, default="",
                       help="a ruleset preset (classic, coinche, ...): the ladder's matches are played under "
                            "it and rated in its pool")

    s = lsub.add_parser("start", help="start a pool's ladder (admin), or change its deals")
    pool_flag(s)
    s.add_argument("--deals", type=int, default=DEFAULT_DEALS,
                   help=f"the deals of each match (default {DEFAULT_DEALS}: short, so that a tournament's "
                        "match waits little for a bot's seat)")
    s.add_argument("--version-test-elo1", type=float, default=TEST_ELO1, metavar="ELO",
                   help=f"a bot's new version is tested (SPRT) against its promoted one for this many Elo "
                        f"better, on the match scale (H0: no better; default {TEST_ELO1:g}: see "
                        "docs/ratings.md; a larger bound decides sooner but only catches larger gains)")
    cluster_flags(s)
    s.set_defaults(func=start)

    x = lsub.add_parser("stop", help="stop a pool's ladder (admin): its matches under way are played out")
    pool_flag(x)
    cluster_flags(x)
    x.set_defaults(func=stop)

    st = lsub.add_parser("status", help="a pool's ladder and its standings; without --pool, every ladder")
    pool_flag(st, required=False)
    st.add_argument("--limit", type=int, default=50, help="the standings' length (at most 200)")
    cluster_flags(st)
    st.set_defaults(func=status)

    for name, fn, text in (("add", add, "opt registered bots in to a pool's ladder (admin)"),
                           ("remove", remove, "take bots out of a pool's ladder (admin)")):
        p = lsub.add_parser(name, help=text)
        pool_flag(p)
        p.add_argument("bots", nargs="+", metavar="BOT")
        cluster_flags(p)
        p.set_defaults(func=fn)
