"""The compose stack's one-shot jobs, run in the belote-arena image (deploy/compose.yaml).

    python stack.py secrets                            make /secrets/admin.token once (kept in a volume)
    python stack.py bots --address A NAME...           register each bot without a token file yet, and
                                                       write its token to /secrets/NAME.token
    python stack.py ladder --address A --pool P        start the pool's ladder (the bots ask to play it
                                                       with --ladder): it keeps them playing rated
                                                       matches, and the dashboard moving

Credentials live in the ``secrets`` volume only, in files readable by the image's user: never
on a command line, in an environment variable or in a log. Every step is idempotent, so the
stack restarts as it is; ``docker compose down -v`` starts it over (new credentials, empty Redis).
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

SECRETS = Path(os.environ.get("BELOTE_SECRETS", "/secrets"))
ADMIN = SECRETS / "admin.token"


def write_private(path: Path, text: str) -> None:
    """Write a new file readable by this user only, atomically (a rename: no half-written token)."""
    tmp = path.with_suffix(".tmp")
    tmp.unlink(missing_ok=True)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text + "\n")
    tmp.rename(path)


def make_secrets(_: argparse.Namespace) -> int:
    if ADMIN.is_file() and ADMIN.read_text(encoding="utf-8").strip():
        print(f"admin credential: kept ({ADMIN})")
        return 0
    write_private(ADMIN, f"adm_{secrets.token_urlsafe(32)}")
    print(f"admin credential: made ({ADMIN})")
    return 0


def cli(*argv: str) -> str:
    """Run ``belote-arena ARGV`` with the admin credential from its file; its standard output."""
    done = subprocess.run(["belote-arena", *argv, "--admin-token-file", str(ADMIN)],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"belote-arena {argv[0]} {argv[1]}: {done.stderr.strip() or done.returncode}")
    return done.stdout


def register_bots(args: argparse.Namespace) -> int:
    for name in args.names:
        path = SECRETS / f"{name}.token"
        if path.is_file():
            print(f"bot {name}: registered already")
            continue
        reply = json.loads(cli("bot", "register", name, "--address", args.address, "--json"))
        write_private(path, reply["token"])
        print(f"bot {name}: registered as {reply['bot_id']}, token in {path}")
    return 0


def ladder(args: argparse.Namespace) -> int:
    """Start the pool's ladder: the bots that ask (``--ladder``) are opted in as they connect, before
    or after this runs, and play rated matches for as long as it is on; no loop here to keep alive.
    Starting a ladder on already only sets its deals again, so a restarted stack starts it as it was."""
    print(cli("ladder", "start", "--pool", args.pool, "--deals", str(args.deals), "--address", args.address)
          .strip(), flush=True)
    return 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="job", required=True)
    sub.add_parser("secrets").set_defaults(func=make_secrets)
    b = sub.add_parser("bots")
    b.add_argument("--address", required=True)
    b.add_argument("names", nargs="+")
    b.set_defaults(func=register_bots)
    lad = sub.add_parser("ladder")
    lad.add_argument("--address", required=True)
    lad.add_argument("--pool", default="coinche")
    lad.add_argument("--deals", type=int, default=4)
    lad.set_defaults(func=ladder)
    args = p.parse_args()
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
