"""The command line shared by the built-in bots: ``python -m belote_bot.bots.random -h``."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Callable, Sequence

from belote_bot.bot import Bot
from belote_bot.client import DEFAULT_ADDRESS, TOKEN_ENV, VERSION_LABEL, AuthenticationError
from belote_bot.errors import TlsConfigError
from belote_bot.fleet import run
from belote_bot.tls import TLS_CA_ENV

__all__ = ["bot_main"]


def _parser(prog: str, description: str) -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog=prog, description=description)
    ap.add_argument("--address", default=os.environ.get("BELOTE_ADDRESS", DEFAULT_ADDRESS),
                    help="the referee node, HOST:PORT (default: $BELOTE_ADDRESS or %(default)s)")
    ap.add_argument("--token-file", default=None, metavar="FILE",
                    help=f"a file holding the bot's token (default: ${TOKEN_ENV}); never the token "
                         "itself on the command line, where other users of the machine see it")
    ap.add_argument("--tls-ca", default=os.environ.get(TLS_CA_ENV) or None, metavar="PEM",
                    help="connect over TLS and check the node's certificate against the CA "
                         f"certificates in PEM (default: ${TLS_CA_ENV}; without it nor --tls: plaintext)")
    ap.add_argument("--tls", action="store_true",
                    help="connect over TLS, checking the node's certificate against the system's roots")
    ap.add_argument("--concurrency", type=int, default=4,
                    help="how many seats this process plays at once (default: %(default)s)")
    ap.add_argument("--ladder", action="store_true",
                    help="ask to play the ladder: a node with a queue opts the bot in to every pool "
                         "whose ladder is on while it is connected (unless an admin took it out)")
    ap.add_argument("--name", default=None, help="the name shown by the referee")
    ap.add_argument("--bot-version", default=None, metavar="LABEL",
                    help="the bot's own version (1 to 32 letters, digits, '_', '.' or '-'): the arena "
                         "keeps each version, lets each hold its own stream, and tests a new one "
                         "against the promoted one before it plays as the bot")
    ap.add_argument("--seed", default=None, help="seed of the bot's own random source")
    ap.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"],
                    help="logging level (default: %(default)s)")
    return ap


def bot_main(
    make_bot: Callable[[str | None], Bot], prog: str, description: str, argv: Sequence[str] | None = None,
    *, options: Callable[[argparse.ArgumentParser], None] | None = None,
    configure: Callable[[Bot, argparse.Namespace], None] | None = None,
) -> int:
    """Parse the command line, run the bot made by ``make_bot(seed)``; returns the exit status.

    ``options`` adds a bot's own options to the parser; ``configure(bot, args)`` applies them.
    """
    parser = _parser(prog, description)
    if options is not None:
        options(parser)
    args = parser.parse_args(argv)
    if args.concurrency < 1:
        print(f"{prog}: --concurrency must be at least 1", file=sys.stderr)
        return 2
    if args.bot_version is not None and not VERSION_LABEL.fullmatch(args.bot_version):
        print(f"{prog}: --bot-version must be 1 to 32 letters, digits, '_', '.' or '-', starting with a "
              f"letter or digit, not {args.bot_version[:40]!r}", file=sys.stderr)
        return 2
    logging.basicConfig(level=args.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    token = None  # run() reads $BELOTE_TOKEN
    if args.token_file:
        try:
            with open(args.token_file, encoding="utf-8") as f:
                token = f.read().strip()
        except OSError as exc:
            print(f"{prog}: cannot read {args.token_file}: {exc.strerror or exc}", file=sys.stderr)
            return 2
    bot = make_bot(args.seed)
    if configure is not None:
        configure(bot, args)
    if args.bot_version is not None:
        bot.version = args.bot_version
    try:
        run(bot, args.address, token, args.concurrency, name=args.name,
            tls_ca=args.tls_ca, tls=args.tls, ladder=args.ladder)
    except (AuthenticationError, TlsConfigError) as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 2
    return 0
