"""``belote-arena analyse RECORD.json`` and the table ``match analyse ID`` prints: every decision of a
match analysed (docs/analysis.md), with no server for a local record (a bot author's self-play).

Like ``replay``, it needs the engine alone (and the pure analysis): no grpc, redis or referee.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from typing import Any

from arena.analysis.decisions import Settings, analyse, parse_fallbacks
from arena.cli.checks import CliError, check_whole
from arena.cli.records import _load_json, seat_names, seats_line
from arena.engine import RecordError
from arena.records import MatchRecord

__all__ = ["add_analyse", "analysis_of_record", "cmd_analyse", "print_analysis", "record_parts"]

MARKS = {"inaccuracy": "?!", "mistake": "?", "blunder": "??"}


def record_parts(data: Mapping[str, Any]) -> tuple[dict[str, Any], list[tuple[int, int]]]:
    """The engine's match record in ``data`` (an arena match record, an engine match record, or one
    deal record) and the places the referee played for a struck bot."""
    if "bots" in data and "result" in data:  # the arena's record (GetMatchRecord, the download)
        record = MatchRecord.from_dict(data)
        return record.engine_record(), parse_fallbacks([s.to_dict() for s in record.strikes])
    if "deals" in data:
        return dict(data), parse_fallbacks(data.get("strikes", []) if isinstance(data.get("strikes"), list)
                                           else [])
    if "hands" in data:  # a deal record: a match of that one deal
        deal = {k: v for k, v in data.items() if k != "ruleset"}
        return {"ruleset": data.get("ruleset", "classic"), "deals": [deal]}, []
    raise CliError("not a record: a match record has 'deals', a deal record 'hands' (docs/records.md)")


def analysis_of_record(data: Mapping[str, Any], settings: Settings | None = None) -> dict[str, Any]:
    record, fallbacks = record_parts(data)
    names = seat_names(record)
    if names:  # selfplay's record names a player a team: one a seat here
        record["players"] = names
    return analyse(record, fallbacks=fallbacks, settings=settings)


def _signed(n: int | float | None) -> str:
    if n is None:
        return "-"
    return f"+{n}" if n > 0 else f"{n}"


def _contract(c: Mapping[str, Any] | None) -> str:
    return "all pass" if not c else f"{c['text']} by team {c['takers']}"


def print_analysis(a: Mapping[str, Any], *, worst: int = 5, out: Any = None) -> None:
    """The analysis as tables: each deal, each bot, each team, the worst decisions."""
    out = out or sys.stdout
    players: list[str] = list(a.get("players") or [])

    def say(line: str = "") -> None:
        print(line, file=out)

    if len(players) == 4 and all(players):
        say(seats_line(players))
    say(f"{'deal':>4}  {'contract':<18} {'result':>7} {'luck':>6} {'skill':>6}  {'par':<18} "
        f"{'bidding lost':<14} accuracy by seat 0-3")
    for d in a["deals"]:
        b = d.get("bidding") or {}
        contract = "thrown in" if d.get("thrown_in") else _contract(b.get("contract"))
        par = _contract((b.get("par") or {}).get("contract")) if "par" in b else "-"
        lost = b.get("bidding_loss")
        lost_text = "-" if lost is None else "nothing" if lost[0] == 0 else \
            f"team {0 if lost[0] > 0 else 1}: {abs(lost[0])}"
        acc = " ".join("-" if x is None else f"{x:g}" for x in d.get("accuracy", [None] * 4))
        say(f"{d['index'] + 1:>4}  {contract:<18} {_signed(d['result'][0]):>7} "
            f"{_signed((d.get('luck') or [None])[0]):>6} {_signed((d.get('skill') or [None])[0]):>6}  "
            f"{par:<18} {lost_text:<14} {acc}")
    say("(result, luck and skill: team 0's, its deal score less team 1's; team 1's are their opposites)")
    say()
    say(f"{'bot':<20} {'decisions':>9} {'accuracy':>8} {'?!':>3} {'?':>3} {'??':>3} {'loss/decision':>13} "
        f"{'second opinion':>14}")
    for bot in a["bots"]:
        acc = "-" if bot["accuracy"] is None else f"{bot['accuracy']:g}"
        lpd = "-" if bot["loss_per_decision"] is None else f"{bot['loss_per_decision']:g}"
        second = (bot.get("second_opinion") or {}).get("loss_per_decision")
        say(f"{bot['bot']:<20} {bot['decisions']:>9} {acc:>8} {bot['inaccuracies']:>3} {bot['mistakes']:>3} "
            f"{bot['blunders']:>3} {lpd:>13} {'-' if second is None else f'{second:g}':>14}")
    for t in a["teams"]:
        say(f"team {t['team']} ({t['name']}): result {t['result']} = luck {t['luck']} + skill {t['skill']}")
    shown = list(a.get("worst", []))[:worst]
    if shown:
        say()
        say("worst decisions:")
    for n, w in enumerate(shown, start=1):
        label = f" {MARKS[w['label']]} ({w['label']})" if w.get("label") in MARKS else ""
        if w["kind"] == "bidding":
            say(f"{n:>3}. deal {w['deal'] + 1}, the bidding: {w['bot']} reached {w['played']}{label}; better "
                f"{' or '.join(w['better'])}: {w['loss']} points lost")
        else:
            say(f"{n:>3}. deal {w['deal'] + 1}, trick {w['trick'] + 1}: {w['bot']} (seat {w['seat']}) played "
                f"{w['played']}{label}; better {' or '.join(w['better'])}: {w['loss']} points lost "
                f"(double-dummy margin {_signed(w.get('best_value'))} against {_signed(w.get('value'))})")
    say()
    say(a.get("note", ""))


#: the second opinion's samples a decision at most (each costs a rollout of every legal card)
MAX_SAMPLES = 1000


def settings_of(args: argparse.Namespace) -> Settings:
    check_whole("--samples", args.samples, 0, MAX_SAMPLES)
    check_whole("--worst", args.worst, 0, 1000)
    return Settings(second_opinion_samples=args.samples, par=not args.no_par, worst=max(10, args.worst))


def cmd_analyse(args: argparse.Namespace) -> int:
    settings = settings_of(args)
    data = _load_json(args.file)
    if not isinstance(data, dict):
        raise CliError(f"{args.file}: a record is a JSON object, not {type(data).__name__}")
    try:
        analysis = analysis_of_record(data, settings)
    except (RecordError, ValueError, KeyError, TypeError) as e:
        raise CliError(f"{args.file}: {e}") from None
    if args.json:
        print(json.dumps(analysis))
    else:
        print_analysis(analysis, worst=args.worst)
    return 0


def analysis_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print the analysis as JSON (docs/analysis.md)")
    p.add_argument("--worst", type=int, default=5, metavar="N",
                   help="the worst decisions listed (default: 5)")
    p.add_argument("--samples", type=int, default=Settings().second_opinion_samples, metavar="N",
                   help="the second opinion's sampled hands a decision (0: none; default: %(default)s)")
    p.add_argument("--no-par", action="store_true", help="leave the bidding's par out (quicker)")


def add_analyse(sub: Any) -> None:
    a = sub.add_parser("analyse", help="analyse every decision of a match record, with no server "
                       "(docs/analysis.md)")
    a.add_argument("file", help="a JSON match record (the arena's or selfplay's) or deal record; - for "
                   "standard input")
    analysis_flags(a)
    a.set_defaults(func=cmd_analyse)
