"""The commands a command suggests ("follow it: belote-arena tournament status ID --watch"), written
so that they run as printed: with the options the command was given to reach its node (address,
TLS) and to find its credentials (admin token file, data directory), each quoted for the shell.

A hint that left them out dialled the default address, or looked for the admin credential in the
default folder, and failed: ``tournament create --address 127.0.0.1:50261`` suggested a ``status``
that asked 127.0.0.1:50051.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex

#: where the commands dial by default (``$BELOTE_ADDRESS`` changes it, for the bots and the commands)
DEFAULT_ADDRESS = "127.0.0.1:50051"
ADDRESS_ENV = "BELOTE_ADDRESS"
#: the node's data folder, and where the commands look for its admin credential, by default
DEFAULT_DATA_DIR = "arena-data"
#: the built-in bots, ``python -m belote_bot.bots.NAME``
SHIPPED_BOTS = ("random", "heuristic", "search")


def default_address() -> str:
    """The ``--address`` of a command given none: ``$BELOTE_ADDRESS``, else :data:`DEFAULT_ADDRESS`."""
    return os.environ.get(ADDRESS_ENV, "").strip() or DEFAULT_ADDRESS


def shell(*words: str) -> str:
    """``words`` as one shell command line, each quoted if it needs to be."""
    return " ".join(shlex.quote(w) for w in words)


def dial_options(args: argparse.Namespace) -> list[str]:
    """The options that reach the node ``args`` reached: its address (always: ``$BELOTE_ADDRESS``
    may be unset where the hint runs) and TLS."""
    out = ["--address", args.address]
    if getattr(args, "tls_ca", ""):
        out += ["--tls-ca", args.tls_ca]
    elif getattr(args, "tls", False):
        out.append("--tls")
    return out


def carried(args: argparse.Namespace) -> list[str]:
    """The options of ``args`` a ``belote-arena`` hint repeats: the address when it is not the
    default, TLS, and where the admin credential is when it is not in the default place."""
    out = dial_options(args)
    if args.address == DEFAULT_ADDRESS:
        out = out[2:]
    if getattr(args, "admin_token_file", None):
        out += ["--admin-token-file", args.admin_token_file]
    data_dir = getattr(args, "data_dir", None)
    if data_dir is not None and data_dir != DEFAULT_DATA_DIR:
        out += ["--data-dir", data_dir]
    return out


def belote_arena(args: argparse.Namespace, *words: str) -> str:
    """``belote-arena WORDS`` with the options of ``args`` that reach the same node the same way."""
    return shell("belote-arena", *words, *carried(args))


def shipped_bot(name: str) -> str | None:
    """The built-in bot a bot named ``name`` is, if its name says so (``heuristic``, ``heuristic-b``,
    ``random2``); else None."""
    for bot in SHIPPED_BOTS:
        if re.fullmatch(rf"{bot}(?:[-_.0-9][A-Za-z0-9_.-]*)?", name):
            return bot
    return None


def run_bot(args: argparse.Namespace, module: str, token_file: str) -> str:
    """The command line that runs the built-in bot ``module`` with the token in ``token_file``, on
    the node ``args`` reached."""
    return shell("python", "-m", f"belote_bot.bots.{module}", "--token-file", token_file, *dial_options(args))
