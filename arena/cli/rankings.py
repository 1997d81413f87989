"""``belote-arena rankings``: a pool's leaderboard, as a node's ``ArenaService.GetLeaderboard`` gives it.

The same table as the gRPC API, the JSON API (``/api/v1/leaderboard``) and the
web page: Bradley-Terry ratings with their 95% intervals and the likelihood
that each bot is stronger than the next one down, or the online Elo
(``--method elo``). ``--json`` prints the JSON API's object.
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from arena.cli.checks import CliError
from arena.cli.dial import call, cluster_flags

if TYPE_CHECKING:
    from belote.arena.v1 import arena_service_pb2 as apb


def leaderboard_json(reply: apb.GetLeaderboardResponse) -> dict[str, Any]:
    """The reply as the JSON API writes a leaderboard (``arena.ratings.leaderboard.Leaderboard.to_json``)."""
    def optional(e: apb.LeaderboardEntry, name: str) -> float | None:
        return getattr(e, name) if e.HasField(name) else None  # type: ignore[arg-type]  # a field name

    return {"pool": reply.pool, "method": reply.method, "total": reply.total, "offset": reply.offset,
            "entries": [{"rank": e.rank, "bot": e.bot, "rating": e.rating, "low": optional(e, "low"),
                         "high": optional(e, "high"), "games": e.games, "wins": e.wins, "draws": e.draws,
                         "losses": e.losses, "score": e.score, "los_next": optional(e, "los_next"),
                         "version": e.version, "version_games": e.version_games,
                         "promoted_how": e.promoted_how}
                        for e in reply.entries]}


def format_table(board: dict[str, Any]) -> list[str]:
    """The leaderboard as text lines: rank, bot, the version its row rates and how many of the bot's games
    that version played (when a bot said one), rating, its 95% interval, the likelihood of superiority
    over the next bot, games and their outcome."""
    versions = any(e.get("version") for e in board["entries"])  # columns only when a bot said one
    rows = [("#", "bot", *(("version", "its games") if versions else ()), "rating", "95% interval",
             "LOS next", "games", "won-drawn-lost", "score")]
    for e in board["entries"]:
        interval = "" if e["low"] is None else f"{e['low']:.0f} .. {e['high']:.0f}"
        los = "" if e["los_next"] is None else f"{100 * e['los_next']:.0f}%"
        version = (e.get("version") or "") + (" (by hand)" if e.get("promoted_how") == "hand" else "")
        own = str(e.get("version_games", e["games"])) if e.get("version") else ""
        rows.append((str(e["rank"]), e["bot"], *((version, own) if versions else ()), f"{e['rating']:.0f}",
                     interval, los, str(e["games"]), f"{e['wins']}-{e['draws']}-{e['losses']}",
                     f"{e['score']:.3f}"))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    method = {"bt": "Bradley-Terry", "elo": "online Elo", "openskill": "openskill, mixed partnerships"}.get(
        board["method"], board["method"])
    lines = [f"{board['pool'] or 'no pool yet'} ({method}, {board['total']} bots)"]
    for r in rows:
        lines.append("  ".join(c.ljust(w) if i in (1, 2) and (i == 1 or versions) else c.rjust(w)
                               for i, (c, w) in enumerate(zip(r, widths, strict=True))))
    return lines


def rankings(args: argparse.Namespace) -> int:
    if args.tournament and args.pool:
        raise CliError("give --pool or --tournament, not both")
    if not 1 <= args.limit <= 200:
        raise CliError(f"--limit must be a whole number from 1 to 200, not {args.limit}")
    if args.offset < 0:
        raise CliError(f"--offset must be 0 or more, not {args.offset}")
    pool = f"tournament:{args.tournament}" if args.tournament else args.pool
    reply = call(args, "GetLeaderboard", pool=pool, method=args.method, offset=args.offset, limit=args.limit)
    board = leaderboard_json(reply)
    if args.json:
        print(json.dumps(board))
    else:
        print("\n".join(format_table(board)))
        others = [p for p in reply.pools if p != reply.pool]
        if others:
            print(f"other pools: {', '.join(others)}")
    return 0


def add_rankings(sub: Any) -> None:
    r = sub.add_parser("rankings", help="a rating pool's leaderboard, with 95%% intervals")
    r.add_argument("--pool", default="", help="a ruleset preset (classic, coinche, ...; default: the one "
                                              "with the most games)")
    r.add_argument("--tournament", default="", help="one tournament's own ranking")
    r.add_argument("--method", choices=["bt", "elo", "openskill"], default="bt",
                   help="bt: Bradley-Terry with intervals (default); elo: the online Elo")
    r.add_argument("--limit", type=int, default=50)
    r.add_argument("--offset", type=int, default=0)
    cluster_flags(r)
    r.set_defaults(func=rankings)
