"""The ``belote-arena`` command.

Exit codes: 0 success; 1 bad input (a malformed or illegal record, an unknown
ruleset); 2 a usage error. Bad input prints one ``error:`` line, never a
traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import sys
import time
from collections.abc import Iterator, Sequence
from typing import Any

from arena.engine import EngineError, Match, Ruleset, observe
from arena.engine.bots import PLAYERS
from arena.engine.cards import CARDS, SUITS
from arena.engine.record import (
    match_outcome_json,
    match_record,
    replay_deal,
    replay_match,
)
from arena.engine.rules import spec_from_text
from arena.engine.scoring import DealOutcome
from arena.tournament_cli import TournamentCliError
from arena.tournament_cli import add_parser as add_tournament_parser

# replay and selfplay need the engine alone: every other command imports what it needs itself


class CliError(Exception):
    """Bad input to a command: printed as one line, exit 1."""


@contextlib.contextmanager
def _one_line(*errors: type[Exception]) -> Iterator[None]:
    """The errors of a command's layer (a refused RPC, an unreachable broker) are printed as one line."""
    try:
        yield
    except errors as e:
        raise CliError(str(e)) from None


# ------------------------------------------------------------------ replay
def _load_json(path: str) -> Any:
    try:
        if path == "-":
            text = sys.stdin.read()
        else:
            with open(path, encoding="utf-8") as f:
                text = f.read()
    except OSError as e:
        raise CliError(f"cannot read {path}: {e.strerror or e}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise CliError(f"{path} is not valid JSON: {e.msg} at line {e.lineno} column {e.colno}") from None


def _describe_deal(o: DealOutcome) -> list[str]:
    if o.thrown_in:
        return ["  thrown in: no score"]
    lines = []
    contract = SUITS[o.trump]
    if o.value:
        contract = (f"capot{contract}" if o.value == 250 else f"{o.value}{contract}") + (
            {1: "", 2: " coinched", 4: " surcoinched"}[o.multiplier]
        )
    lines.append(f"  takers: team {o.takers}  trump/contract: {contract}")
    for i, (leader, cards, winner) in enumerate(o.tricks, 1):
        shown = " ".join(str(CARDS[c]) for c in cards)
        lines.append(f"  trick {i}: seat {leader} leads  {shown}  -> seat {winner}")
    made = {True: "made", False: "failed (dedans)", None: "litige"}[o.made]
    lines.append(f"  card points {o.card_points[0]}-{o.card_points[1]}  belote: "
                 f"{'team ' + str(o.belote) if o.belote is not None else 'none'}  "
                 f"declarations {o.declarations[0]}-{o.declarations[1]}")
    lines.append(f"  {made}; score {o.score[0]}-{o.score[1]}"
                 + (f"; {o.held_for_next_deal} held for the next deal" if o.held_for_next_deal else ""))
    return lines


def cmd_replay(args: argparse.Namespace) -> int:
    rec = _load_json(args.file)
    if not isinstance(rec, dict):
        raise CliError(f"{args.file}: a record is a JSON object, not {type(rec).__name__}")
    if "deals" in rec:
        match, outcomes = replay_match(rec)
        if args.json:
            print(json.dumps(match_outcome_json(match)))
            return 0
        for i, o in enumerate(outcomes):
            print(f"deal {i + 1} (dealer seat {match.deals[i].dealer}):")
            print("\n".join(_describe_deal(o)))
        w = "not decided" if match.winner is None else f"team {match.winner} wins"
        print(f"match: {match.totals[0]}-{match.totals[1]}, {w}")
        return 0
    _, outcome = replay_deal(rec)
    if args.json:
        print(json.dumps(outcome.as_json()))
    else:
        print("\n".join(_describe_deal(outcome)))
    return 0


# ---------------------------------------------------------------- selfplay
def cmd_selfplay(args: argparse.Namespace) -> int:
    rules = Ruleset.from_spec(spec_from_text(args.ruleset, "--ruleset"))
    if args.deals < 1:
        raise CliError("--deals must be at least 1")
    names = args.players.split(",")
    if len(names) != 2 or any(n not in PLAYERS for n in names):
        raise CliError(
            f"--players takes two of {', '.join(PLAYERS)} separated by a comma, not {args.players!r}"
        )
    players = [PLAYERS[n]() for n in names]
    rng = random.Random(f"selfplay/{args.seed}")
    match = Match(rules.with_options(deals=args.deals), args.seed)
    stats = {k: [0, 0] for k in ("taken", "made", "failed", "capots", "belotes", "coinched")}
    litiges = thrown_in = decisions = 0
    start = time.perf_counter()
    while not match.is_over:
        deal = match.new_deal()
        while not deal.is_over:
            seat = deal.to_act
            obs = observe(deal, seat, (match.totals[0], match.totals[1]), match.held)
            deal.apply(players[seat & 1].act(obs, rng))
            decisions += 1
        o = match.add(deal)
        if o.thrown_in:
            thrown_in += 1
            continue
        stats["taken"][o.takers] += 1
        if o.made is None:
            litiges += 1
        else:
            stats["made" if o.made else "failed"][o.takers] += 1
        if o.capot is not None:
            stats["capots"][o.capot] += 1
        if o.belote is not None:
            stats["belotes"][o.belote] += 1
        if o.multiplier > 1:
            stats["coinched"][o.takers] += 1
    elapsed = time.perf_counter() - start
    summary: dict[str, Any] = {
        "ruleset": rules.to_spec(), "deals": args.deals, "seed": args.seed,
        "players": names, "points": list(match.totals), "winner": match.winner,
        **stats, "litiges": litiges, "thrown_in": thrown_in, "decisions": decisions,
        "seconds": round(elapsed, 3), "deals_per_second": round(args.deals / elapsed, 1),
    }
    if args.record:
        try:
            with open(args.record, "w", encoding="utf-8") as f:
                json.dump(match_record(match, [f"{names[0]} (team 0)", f"{names[1]} (team 1)"]), f)
        except OSError as e:
            raise CliError(f"cannot write {args.record}: {e.strerror or e}") from None
        summary["record"] = args.record
    if args.json:
        print(json.dumps(summary))
        return 0
    print(f"selfplay: {args.deals} deals of {rules.preset}, seed {args.seed}, "
          f"team 0 {names[0]} (seats 0, 2) vs team 1 {names[1]} (seats 1, 3)")
    print(f"{'':14}{'team 0':>10}{'team 1':>10}")
    print(f"{'points':14}{match.totals[0]:>10}{match.totals[1]:>10}")
    for k in ("taken", "made", "failed", "coinched", "capots", "belotes"):
        print(f"{k:14}{stats[k][0]:>10}{stats[k][1]:>10}")
    print(f"litiges {litiges}, thrown in {thrown_in}, {decisions} decisions")
    print(f"time {elapsed:.2f} s ({args.deals / elapsed:.0f} deals/s)")
    if args.record:
        print(f"match record written to {args.record} (check it: belote-arena replay {args.record})")
    return 0


# ------------------------------------------------------------ node, remote
def cmd_serve(args: argparse.Namespace) -> int:
    import asyncio
    import logging
    from pathlib import Path

    from arena.node.run import NodeSettings, serve_forever
    from arena.queue import BrokerError, open_broker
    from arena.records import TimeControl
    from arena.referee.node import Limits
    from arena.referee.serve import install_uvloop

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    install_uvloop()
    register = []
    for item in args.register or []:
        name, _, token = item.partition("=")
        if not token:
            raise CliError(f"--register takes NAME=TOKEN, not {item!r}")
        register.append((name, token))
    tc = TimeControl(deadline=args.deadline, time_bank=args.time_bank, max_strikes=args.max_strikes,
                     grace=args.grace)
    data = None if args.data_dir == "" else Path(args.data_dir)
    limits = Limits(hello_timeout=args.hello_timeout, max_concurrency=args.max_concurrency,
                    max_streams_per_peer=args.max_streams_per_address, max_streams=args.max_streams,
                    max_watchers_per_match=args.max_watchers_per_match, max_watchers=args.max_watchers)
    settings = NodeSettings(
        listen=args.listen, advertise=args.advertise, data_dir=data, time=tc, capacity=args.capacity,
        lease_s=args.lease, drain_s=args.drain, replace_streams=args.replace_streams, limits=limits,
    )
    with _one_line(BrokerError):
        broker = open_broker(_redis_url(args), data)
    try:
        asyncio.run(serve_forever(broker, settings, register=register))
    finally:
        broker.close()
    return 0


def _redis_url(args: argparse.Namespace) -> str | None:
    import os

    url: str | None = getattr(args, "redis", None) or os.environ.get("BELOTE_REDIS") or None
    return url


def cmd_demo(args: argparse.Namespace) -> int:
    from arena.demo import main as demo_main

    rulesets = [r.strip() for r in args.rulesets.split(",") if r.strip()]
    for r in rulesets:
        Ruleset.from_spec(r)
    if args.rounds < 1:
        raise CliError("--rounds must be at least 1")
    return demo_main(args.data_dir, args.deals or None, args.rounds, args.seed, rulesets)


def cmd_bot(args: argparse.Namespace) -> int:
    from arena import remote

    with _one_line(remote.RemoteError):
        if args.action == "register":
            if not args.name:
                raise CliError("bot register needs a NAME")
            bot_id, token = remote.register_bot(args.address, args.name)
            if args.json:
                print(json.dumps({"bot_id": bot_id, "name": args.name, "token": token}))
            else:
                print(f"registered {args.name} as {bot_id}\ntoken (shown once): {token}")
                # --token=T: a generated token may start with "-", which argparse takes for an option
                print(f"run it: python -m belote_bot.bots.random --address {args.address} --token={token}")
            return 0
        bots = remote.list_bots(args.address)
        if args.json:
            print(json.dumps([{"bot_id": b.bot_id, "name": b.name, "connected": b.connected,
                               "concurrency": b.concurrency, "seats_in_use": b.seats_in_use} for b in bots]))
            return 0
        for b in bots:
            state = f"connected, {b.seats_in_use}/{b.concurrency} seats" if b.connected else "offline"
            print(f"{b.name:20} {b.bot_id:14} {state}")
        return 0


def cmd_match(args: argparse.Namespace) -> int:
    from arena import remote

    with _one_line(remote.RemoteError):
        if args.action == "start":
            if len(args.ids) != 2:
                raise CliError("match start takes two bots: TEAM0 TEAM1")
            match_id = remote.start_match(args.address, args.ids[0], args.ids[1], args.ruleset,
                                          seed=str(args.seed or ""), deals=args.deals or 0)
            print(match_id, flush=True)
            if args.watch:
                _print_result(remote.watch(args.address, match_id))
            return 0
        if len(args.ids) != 1:
            raise CliError(f"match {args.action} takes one MATCH_ID")
        if args.action == "watch":
            _print_result(remote.watch(args.address, args.ids[0]))
            return 0
        print(json.dumps(remote.get_record(args.address, args.ids[0])))
        return 0


def _print_result(result: Any) -> None:
    if result is None:
        return
    winner = f"team {result.winner} wins" if result.HasField("winner") else "no winner"
    detail = f" ({result.detail})" if result.detail else ""
    print(f"match {result.reason}: {list(result.totals)}, {winner}{detail}")


# -------------------------------------------------------------------- main
def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="belote-arena", description="Belote Arena: referee, tournaments, ratings"
    )
    sub = p.add_subparsers(dest="command", required=True)

    r = sub.add_parser("replay", help="check every action of a deal or match record and print the outcome")
    r.add_argument("file", help="a JSON deal or match record (docs/records.md); - for standard input")
    r.add_argument("--json", action="store_true", help="print the outcome as JSON")
    r.set_defaults(func=cmd_replay)

    s = sub.add_parser("selfplay", help="play deals in-process between built-in players")
    s.add_argument("--ruleset", default="coinche", help="a preset name or a JSON ruleset object")
    s.add_argument("--deals", type=int, default=100)
    s.add_argument("--seed", default="0")
    s.add_argument("--players", default="heuristic,random", help="team 0 and team 1 players")
    s.add_argument("--record", metavar="FILE", help="write the match record to FILE")
    s.add_argument("--json", action="store_true", help="print the summary as JSON")
    s.set_defaults(func=cmd_selfplay)

    v = sub.add_parser("serve", help="run a referee node")
    v.add_argument("--listen", default="127.0.0.1:50051", help="address:port to listen on")
    v.add_argument("--data-dir", default="arena-data", help="where bots and match records are kept")
    v.add_argument("--deadline", type=float, default=1.0, help="seconds per decision")
    v.add_argument("--time-bank", type=float, default=10.0, help="extra seconds per seat per match")
    v.add_argument("--max-strikes", type=int, default=3, help="strikes that forfeit a match")
    v.add_argument("--grace", type=float, default=10.0, help="seconds a disconnected bot keeps its seats")
    v.add_argument("--register", action="append", metavar="NAME=TOKEN",
                   help="register a bot with a known token at start (repeatable)")
    v.add_argument("--redis", metavar="URL", help="share jobs and results through Redis "
                   "(default: $BELOTE_REDIS, else an embedded queue in --data-dir)")
    v.add_argument("--advertise", default="", help="the address bots use for this node (host:port)")
    v.add_argument("--capacity", type=int, default=4, help="matches this node plays at once")
    v.add_argument("--lease", type=float, default=30.0, help="seconds a claimed job is held between renewals")
    v.add_argument("--drain", type=float, default=60.0,
                   help="on SIGTERM, seconds running matches may take to finish before being requeued")
    v.add_argument("--hello-timeout", type=float, default=5.0,
                   help="seconds a bot stream has to send its Hello")
    v.add_argument("--max-concurrency", type=int, default=256, help="seats one bot stream may play at once")
    v.add_argument("--max-streams-per-address", type=int, default=16,
                   help="bot streams open at once from one address (an IPv6 /64)")
    v.add_argument("--max-streams", type=int, default=1024, help="bot streams open at once in all")
    v.add_argument("--max-watchers-per-match", type=int, default=64, help="spectators of one match at once")
    v.add_argument("--max-watchers", type=int, default=1024, help="spectators at once in all")
    v.add_argument("--replace-streams", action="store_true",
                   help="a new stream with a connected token takes over (default: refused)")
    v.set_defaults(func=cmd_serve)

    d = sub.add_parser("demo", help="a node, the built-in bots over gRPC, a round-robin, a leaderboard")
    d.add_argument("--data-dir", default="arena-data", help="where the demo's records go")
    d.add_argument("--deals", type=int, default=0, help="deals per match (default: play to the target)")
    d.add_argument("--rounds", type=int, default=10, help="matches per pairing, seating and ruleset")
    d.add_argument("--seed", type=int, default=1)
    d.add_argument("--rulesets", default="classic,coinche")
    d.set_defaults(func=cmd_demo)

    add_tournament_parser(sub)

    b = sub.add_parser("bot", help="register or list bots on a node")
    b.add_argument("action", choices=["register", "list"])
    b.add_argument("name", nargs="?")
    b.add_argument("--address", default="127.0.0.1:50051")
    b.add_argument("--json", action="store_true")
    b.set_defaults(func=cmd_bot)

    m = sub.add_parser("match", help="start, watch or fetch the record of a match on a node")
    m.add_argument("action", choices=["start", "watch", "record"])
    m.add_argument("ids", nargs="*", help="start: TEAM0 TEAM1 (bot names or ids); watch/record: MATCH_ID")
    m.add_argument("--address", default="127.0.0.1:50051")
    m.add_argument("--ruleset", default="classic")
    m.add_argument("--deals", type=int, default=0, help="a fixed number of deals (default: to the target)")
    m.add_argument("--seed", default="")
    m.add_argument("--watch", action="store_true", help="follow the match once started")
    m.set_defaults(func=cmd_match)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if (hasattr(args, "seed") and isinstance(args.seed, str) and args.seed.lstrip("-").isdigit()
            and args.command != "tournament"):  # a tournament's seed is a string, kept as typed
        args.seed = int(args.seed)
    try:
        return int(args.func(args))
    except (CliError, EngineError, TournamentCliError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # e.g. piped into head
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    sys.exit(main())
