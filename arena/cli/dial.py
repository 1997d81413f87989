"""How a command reaches a node: the flags that say where it is, how to dial it (TLS) and where the
credential it gives is, and the :class:`arena.remote.Remote` they make.

gRPC and the generated code load when a command dials, never before: ``replay`` and ``selfplay``
never load them.
"""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING, Any

from arena.cli.checks import one_line
from arena.hints import DEFAULT_ADDRESS, DEFAULT_DATA_DIR, default_address

if TYPE_CHECKING:
    import grpc

    from arena.remote import Remote

ADDRESS_HELP = f"the node, HOST:PORT (default: $BELOTE_ADDRESS, else {DEFAULT_ADDRESS})"


def credential_flags(p: argparse.ArgumentParser, *, bot: bool) -> None:
    """The flags that say where credentials are: files and variables, never their values."""
    p.add_argument("--admin-token-file", metavar="FILE",
                   help="the admin credential (default: $BELOTE_ADMIN_TOKEN, else DATA_DIR/admin.token)")
    if not any(a.dest == "data_dir" for a in p._actions):
        p.add_argument("--data-dir", default=DEFAULT_DATA_DIR,
                       help="the node's data directory on this machine, where admin.token is")
    if bot:
        p.add_argument("--token-file", metavar="FILE",
                       help="register: where the new bot's token is kept (a new file, readable by you only; "
                            "default: NAME.token here, or printed with --json); rotate and revoke: the bot's "
                            "own token (default: $BELOTE_TOKEN), replaced by the new one on rotate")


def tls_flags(p: argparse.ArgumentParser) -> None:
    """How a remote command dials a node on TLS (the same choice as the bots' ``--tls-ca``)."""
    p.add_argument("--tls-ca", metavar="PEM", default=os.environ.get("BELOTE_TLS_CA", ""),
                   help="dial the node over TLS, trusting the CA certificates in PEM "
                        "(default: $BELOTE_TLS_CA; neither this nor --tls: plaintext)")
    p.add_argument("--tls", action="store_true",
                   help="dial the node over TLS, trusting the system's CA certificates")


def cluster_flags(p: argparse.ArgumentParser) -> None:
    """The flags of the commands on a cluster's tournaments and rankings (``tournament``, ``verify``,
    ``rankings``): a node of it, the admin credential, TLS, and ``--json``."""
    p.add_argument("--address", default=default_address(),
                   help=f"a node of the tournament's cluster (default: $BELOTE_ADDRESS, else "
                        f"{DEFAULT_ADDRESS})")
    p.add_argument("--admin-token-file", metavar="FILE",
                   help="the admin credential (default: $BELOTE_ADMIN_TOKEN, else DATA_DIR/admin.token)")
    p.add_argument("--data-dir", default=DEFAULT_DATA_DIR, help="the node's data directory on this machine")
    p.add_argument("--tls-ca", metavar="PEM", default=os.environ.get("BELOTE_TLS_CA", ""),
                   help="dial the node over TLS, trusting the CA certificates in PEM "
                        "(default: $BELOTE_TLS_CA)")
    p.add_argument("--tls", action="store_true", help="dial the node over TLS, trusting the system's CAs")
    p.add_argument("--json", action="store_true")


def admin_token(args: argparse.Namespace) -> str:
    """The admin credential the flags (or ``$BELOTE_ADMIN_TOKEN``) give; "" if none."""
    from arena.credentials import CredentialError
    from arena.credentials import admin_token as find_admin_token

    with one_line(CredentialError):
        return find_admin_token(getattr(args, "admin_token_file", None), getattr(args, "data_dir", None))


def open_remote(args: argparse.Namespace, token: str, timeout: float = 10.0) -> Remote:
    """The node ``args`` names, called with ``token``, each call given ``timeout`` seconds (a command
    with no token is told, when refused, where it looked for the admin credential)."""
    from arena.credentials import where_admin_looked
    from arena.remote import Remote, tell_once

    return Remote(args.address, token, credentials=_dial(args), timeout=timeout, on_wait=tell_once(),
                  no_token_note=where_admin_looked(getattr(args, "data_dir", None)))


def call(args: argparse.Namespace, rpc: str, /, timeout: float = 10.0, **fields: Any) -> Any:
    """One ArenaService call, ``rpc`` with its request's ``fields``, made with the admin credential if
    there is one; its answer. A refused or failed call is one line."""
    from arena.remote import RemoteError

    message = request(f"{rpc}Request", **fields)
    with one_line(RemoteError), open_remote(args, admin_token(args), timeout) as remote:
        return remote.call(rpc, message)


def _dial(args: argparse.Namespace) -> grpc.ChannelCredentials | None:
    """The remote commands' channel credentials: TLS with ``--tls-ca`` or ``--tls``, else plaintext."""
    from arena.remote import channel_credentials

    return channel_credentials(args.tls_ca or None, args.tls)


def request(message: str, **fields: Any) -> Any:
    """An ArenaService request message (the proto modules load only when a remote command runs)."""
    from belote.arena.v1 import arena_service_pb2 as apb

    return getattr(apb, message)(**fields)
