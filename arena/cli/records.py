"""``belote-arena replay`` and ``selfplay``: a record's every action checked, and deals played in-process.

They need the engine alone: this module loads neither grpc, redis nor the referee
(``tests/test_layers.py`` checks it), so checking a record is quick and needs no node.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from collections.abc import Sequence
from typing import Any

from arena.cli.checks import CliError
from arena.cli.serve import MAX_STRIKES
from arena.engine import Match, Ruleset, observe
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
from arena.hints import shell
from arena.records import MAX_DEALS, side_name

# The largest record there can be, in bytes: what ``replay`` reads at most (a larger input, such as
# /dev/zero, is refused, not read to its end). A match record (docs/records.md) has at most
# MAX_DEALS deals and an unfinished one; each deal, as the engine writes it, is under 2,000 bytes:
# its hands and deck (64 cards of 6 bytes written: 384), its bids (coinche: at most 10 rising bids
# with 2 passes between them, a coinche, a surcoinche and the last 3 passes: under 40 actions of 12
# bytes: 480), its 32 plays (14 bytes each with a belote word, and declaration words on the first
# cards: 608) and its dealer, retourne, packets and keys (150); the largest of 1,000 coinche deals
# measured 767. An arena record adds each deal's latencies and the times its decisions were asked
# (``latencies_us`` and ``asked_ms``: at most 72 decisions of 12 bytes each, twice: 1,800), at most
# 2 x MAX_STRIKES strikes (serve's limit on --max-strikes) of under 1,000 bytes (the answer, the
# legal actions, the fallback and the reason: about 600) and a few kilobytes of players, bots, time
# control and result: 5.8 MB written compactly. A record pretty-printed takes more room (2.5x with
# an indent of 2), hence the margin of 4: 23.2 MB.
DEAL_BYTES = 2_000
DEAL_TIMES_BYTES = 1_800
STRIKE_BYTES = 1_000
RECORD_FIXED_BYTES = 8_192
MAX_RECORD_BYTES = 4 * ((MAX_DEALS + 1) * (DEAL_BYTES + DEAL_TIMES_BYTES)
                        + 2 * MAX_STRIKES * STRIKE_BYTES + RECORD_FIXED_BYTES)


def _read_record(path: str) -> bytes:
    """The bytes of ``path`` (standard input for ``-``), read no further than the largest record
    there can be (:data:`MAX_RECORD_BYTES`): anything larger is refused, not read to its end."""
    try:
        if path == "-":
            data = sys.stdin.buffer.read(MAX_RECORD_BYTES + 1)
        else:
            with open(path, "rb") as f:
                # a file known too large is refused unread; /dev/zero or a pipe (size 0) is read so far
                if os.fstat(f.fileno()).st_size > MAX_RECORD_BYTES:
                    raise CliError(_too_large(path))
                data = f.read(MAX_RECORD_BYTES + 1)
    except OSError as e:
        raise CliError(f"cannot read {path}: {e.strerror or e}") from None
    if len(data) > MAX_RECORD_BYTES:
        raise CliError(_too_large(path))
    return data


def _too_large(path: str) -> str:
    return (f"{_named(path)} is larger than the largest record there can be ({MAX_RECORD_BYTES:,} "
            f"bytes, for {MAX_DEALS:,} deals): not a record")


def _named(path: str) -> str:
    return "the standard input" if path == "-" else path


def _load_json(path: str) -> Any:
    data = _read_record(path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise CliError(f"{_named(path)} is not UTF-8 text (byte {e.start:,} is not): not a record") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise CliError(f"{_named(path)} is not valid JSON: {e.msg} at line {e.lineno} column "
                       f"{e.colno}") from None
    except RecursionError:
        raise CliError(f"{_named(path)} is not a record: its JSON is nested too deeply") from None


def _describe_deal(o: DealOutcome, players: Sequence[str] = ()) -> list[str]:
    """The deal's lines; with ``players`` (the bots at seats 0..3), each seat and team named."""
    def seat(s: int) -> str:
        return f"seat {s} ({players[s]})" if players else f"seat {s}"

    def team(t: int) -> str:
        return f"team {t} ({team_name(players, t)})" if players else f"team {t}"

    if o.thrown_in:
        return ["  thrown in: no score"]
    lines = []
    contract = SUITS[o.trump]
    if o.value:
        contract = (f"capot{contract}" if o.value == 250 else f"{o.value}{contract}") + (
            {1: "", 2: " coinched", 4: " surcoinched"}[o.multiplier]
        )
    lines.append(f"  takers: {team(o.takers)}  trump/contract: {contract}")
    for i, (leader, cards, winner) in enumerate(o.tricks, 1):
        shown = " ".join(str(CARDS[c]) for c in cards)
        lines.append(f"  trick {i}: {seat(leader)} leads  {shown}  -> {seat(winner)}")
    made = {True: "made", False: "failed (dedans)", None: "litige"}[o.made]
    lines.append(f"  card points {o.card_points[0]}-{o.card_points[1]}  belote: "
                 f"{team(o.belote) if o.belote is not None else 'none'}  "
                 f"declarations {o.declarations[0]}-{o.declarations[1]}")
    lines.append(f"  {made}; score {o.score[0]}-{o.score[1]}"
                 + (f"; {o.held_for_next_deal} held for the next deal" if o.held_for_next_deal else ""))
    return lines


def seat_names(rec: dict[str, Any]) -> list[str]:
    """The names at seats 0..3 a record's free-form ``players`` gives: one a seat (the arena's), or
    one a team (``selfplay``'s, each ending in " (team N)", left out here); else none."""
    players = rec.get("players")
    if not isinstance(players, list) or not all(isinstance(p, str) and p for p in players):
        return []
    if len(players) == 2:
        teams = [p.removesuffix(f" (team {t})") for t, p in enumerate(players)]
        return [teams[s & 1] for s in range(4)]
    return list(players) if len(players) == 4 else []


def team_name(players: Sequence[str], team: int) -> str:
    """A side's name, from the bots at seats 0..3 (:func:`arena.records.side_name`)."""
    return side_name(players[team], players[team + 2])


def seats_line(players: Sequence[str]) -> str:
    """Who sits where: ``seats: 0 alpha, 1 beta, 2 alpha, 3 beta (team 0: alpha, team 1: beta)``."""
    return (f"seats: {', '.join(f'{seat} {name}' for seat, name in enumerate(players))} "
            f"(team 0: {team_name(players, 0)}, team 1: {team_name(players, 1)})")


def cmd_replay(args: argparse.Namespace) -> int:
    rec = _load_json(args.file)
    if not isinstance(rec, dict):
        raise CliError(f"{args.file}: a record is a JSON object, not {type(rec).__name__}")
    if "deals" in rec:
        match, outcomes = replay_match(rec)
        if args.json:
            print(json.dumps(match_outcome_json(match)))
            return 0
        players = seat_names(rec)
        if players:
            print(seats_line(players))
        for i, o in enumerate(outcomes):
            dealer = match.deals[i].dealer
            print(f"deal {i + 1} (dealer seat {dealer}{', ' + players[dealer] if players else ''}):")
            print("\n".join(_describe_deal(o, players)))
        named = f" ({team_name(players, match.winner)})" if players and match.winner is not None else ""
        w = "not decided" if match.winner is None else f"team {match.winner}{named} wins"
        print(f"match: {match.totals[0]}-{match.totals[1]}, {w}")
        return 0
    _, outcome = replay_deal(rec)
    if args.json:
        print(json.dumps(outcome.as_json()))
    else:
        print("\n".join(_describe_deal(outcome)))
    return 0


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
        check = shell("belote-arena", "replay", args.record)
        print(f"match record written to {args.record}; check it: {check}")
    return 0


def add_replay(sub: Any) -> None:
    r = sub.add_parser("replay", help="check every action of a deal or match record and print the outcome")
    r.add_argument("file", help="a JSON deal or match record (docs/records.md); - for standard input")
    r.add_argument("--json", action="store_true", help="print the outcome as JSON")
    r.set_defaults(func=cmd_replay)


def add_selfplay(sub: Any) -> None:
    s = sub.add_parser("selfplay", help="play deals in-process between built-in players")
    s.add_argument("--ruleset", default="coinche", help="a preset name or a JSON ruleset object")
    s.add_argument("--deals", type=int, default=100)
    s.add_argument("--seed", default="0")
    s.add_argument("--players", default="heuristic,random", help="team 0 and team 1 players")
    s.add_argument("--record", metavar="FILE", help="write the match record to FILE")
    s.add_argument("--json", action="store_true", help="print the summary as JSON")
    s.set_defaults(func=cmd_selfplay)
