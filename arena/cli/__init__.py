"""The ``belote-arena`` command: ``main`` reads the command line and runs one command.

Each command group has a module of its own: :mod:`~arena.cli.records` (``replay``,
``selfplay``), :mod:`~arena.cli.serve` (``serve``, ``demo``), :mod:`~arena.cli.bots` (``bot``,
``admin``), :mod:`~arena.cli.matches` (``match``), :mod:`~arena.cli.tournament`
(``tournament``, ``verify``), :mod:`~arena.cli.rankings` (``rankings``) and :mod:`~arena.cli.ladder`
(``ladder``); they share :mod:`~arena.cli.checks` (bad input, one line) and :mod:`~arena.cli.dial`
(reaching a node).

Exit codes: 0 success; 1 bad input (a malformed or illegal record, an unknown
ruleset); 2 a usage error. Bad input prints one ``error:`` line, never a
traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

# replay and selfplay need the engine alone: every other command imports what it needs itself
from arena.cli import analysis, bots, ladder, matches, rankings, records, serve, tournament
from arena.cli.checks import CliError
from arena.engine import EngineError

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="belote-arena", description="Belote Arena: referee, tournaments, ratings"
    )
    sub = p.add_subparsers(dest="command", required=True)
    records.add_replay(sub)
    records.add_selfplay(sub)
    analysis.add_analyse(sub)
    serve.add_serve(sub)
    serve.add_demo(sub)
    tournament.add_tournament(sub)
    bots.add_bot(sub)
    matches.add_match(sub)
    bots.add_admin(sub)
    tournament.add_verify(sub)
    rankings.add_rankings(sub)
    ladder.add_ladder(sub)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command not in ("replay", "selfplay", "analyse"):
        _quiet_grpc()  # before any command loads gRPC
    if (hasattr(args, "seed") and isinstance(args.seed, str) and args.seed.lstrip("-").isdigit()
            and args.command != "tournament"):  # a tournament's seed is a string, kept as typed
        args.seed = int(args.seed)
    try:
        return int(args.func(args))
    except (CliError, EngineError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # e.g. piped into head
        sys.stderr.close()
        return 0


def _quiet_grpc() -> None:
    """Keep gRPC core's INFO lines off (unless ``$GRPC_VERBOSITY`` says otherwise); its errors show.

    It logs a line for every failed TLS handshake: on a node any stranger could fill the log with
    them, and a command would print two lines for one refusal. gRPC reads the variable once, when
    it loads, so this runs before a command imports it.
    """
    import os

    os.environ.setdefault("GRPC_VERBOSITY", "ERROR")
