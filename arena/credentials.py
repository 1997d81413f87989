"""Where the admin credential comes from: never the command line, so that ``ps`` never shows it.

A node takes it from ``$BELOTE_ADMIN_TOKEN``, else from ``--admin-token-file``,
else from ``admin.token`` in its data directory, which it creates (readable
by its own user only) on first start. The command line on the same machine
finds it the same way, so that on one machine nothing needs to be passed
around; on another machine, copy the file or set the variable.
"""

from __future__ import annotations

import os
import secrets
import stat
import tempfile
from pathlib import Path

from arena.datadir import private_dir

ADMIN_ENV = "BELOTE_ADMIN_TOKEN"
ADMIN_FILE = "admin.token"


class CredentialError(Exception):
    """A credential file that cannot be read, or holds nothing."""


def read_secret(path: Path) -> str:
    try:
        text = path.read_text(encoding="utf-8").strip()
    except OSError as e:
        raise CredentialError(f"cannot read the credential file {path}: {e.strerror or e}") from None
    if not text:
        raise CredentialError(f"the credential file {path} is empty")
    return text


def write_secret(path: Path, secret: str) -> None:
    """Write ``secret`` to a new file readable and writable by this user only."""
    private_dir(path.parent)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, stat.S_IRUSR | stat.S_IWUSR)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(secret + "\n")


def admin_token(token_file: str | None, data_dir: str | None) -> str:
    """The admin credential for a client: the variable, the file given, the data directory's; "" if none."""
    env = os.environ.get(ADMIN_ENV, "").strip()
    if env:
        return env
    if token_file:
        return read_secret(Path(token_file))
    if data_dir:
        path = Path(data_dir) / ADMIN_FILE
        if path.is_file():
            return read_secret(path)
    return ""


def node_admin_token(token_file: str | None, data_dir: Path | None) -> tuple[str, str]:
    """The admin credential of a starting node, and where it is: the variable, the file given, or
    the data directory's file, made on first start (with no data directory, a private temporary
    file)."""
    env = os.environ.get(ADMIN_ENV, "").strip()
    if env:
        return env, f"${ADMIN_ENV}"
    if token_file:
        return read_secret(Path(token_file)), token_file
    token = f"adm_{secrets.token_urlsafe(32)}"
    if data_dir is None:
        fd, name = tempfile.mkstemp(prefix="belote-admin-", suffix=".token")
        with os.fdopen(fd, "w", encoding="utf-8") as f:  # mkstemp makes it 0600
            f.write(token + "\n")
        return token, name
    path = data_dir / ADMIN_FILE
    if path.is_file():
        private_dir(data_dir)  # a data directory an older version made readable to all is tightened
        return read_secret(path), str(path)
    write_secret(path, token)
    return token, str(path)
