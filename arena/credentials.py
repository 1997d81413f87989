"""Where the admin credential comes from: never the command line, so that ``ps`` never shows it.

A node takes it from ``$BELOTE_ADMIN_TOKEN``, else from ``--admin-token-file``,
else from ``admin.token`` in its data directory, which it creates (readable
by its own user only) on first start. The command line on the same machine
finds it the same way, so that on one machine nothing needs to be passed
around; on another machine, copy the file or set the variable.

A credential must be hard to guess: :func:`check_admin_credential` refuses one
with less than 128 random bits (too short, too few different characters), on
the node and on the command line alike. ``belote-arena admin token`` makes one
(:func:`new_admin_token`).
"""

from __future__ import annotations

import math
import os
import secrets
import stat
import tempfile
from pathlib import Path

from arena.datadir import private_dir, write_private

ADMIN_ENV = "BELOTE_ADMIN_TOKEN"
ADMIN_FILE = "admin.token"
#: what an admin credential must have, at least: its characters, and how many different ones
MIN_ADMIN_LENGTH = 32
MIN_ADMIN_DISTINCT = 10
#: the random bits an admin credential must be able to hold, its characters counted at the bits of
#: the smallest usual alphabet holding them all (digits, hex, letters and digits, base64, printable)
MIN_ADMIN_BITS = 128
_ALPHABETS = (("0123456789", 10), ("0123456789abcdef", 16), ("0123456789ABCDEF", 16),
              ("0123456789abcdefghijklmnopqrstuvwxyz", 36), ("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ", 36),
              ("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", 62),
              ("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-_", 64))
#: how to make a good one, for the error messages
MAKE_ONE = ("make one with `belote-arena admin token --file admin.token`, and give every node and command "
            "`--admin-token-file admin.token` (or its content in $BELOTE_ADMIN_TOKEN)")


class CredentialError(Exception):
    """A credential file that cannot be read, or holds nothing; an admin credential too weak."""


def new_admin_token() -> str:
    """A fresh admin credential: 256 random bits (``adm_`` and 43 base64url characters)."""
    return f"adm_{secrets.token_urlsafe(32)}"


def credential_bits(text: str) -> float:
    """The most random bits ``text`` can hold: its length times the bits of a character of the
    smallest usual alphabet holding all its characters (95 printable ones for any other)."""
    size = next((n for chars, n in _ALPHABETS if set(text) <= set(chars)), 95)
    return len(text) * math.log2(size)


def check_admin_credential(text: str, where: str) -> str:
    """``text``, the admin credential found in ``where``, if it can hold 128 random bits; else a
    :class:`CredentialError` saying what is required."""
    if (len(text) < MIN_ADMIN_LENGTH or len(set(text)) < MIN_ADMIN_DISTINCT
            or credential_bits(text) < MIN_ADMIN_BITS):
        raise CredentialError(
            f"the admin credential in {where} is too weak ({len(text)} characters, {len(set(text))} "
            f"different): an admin credential needs {MIN_ADMIN_BITS} random bits or more, so at least "
            f"{MIN_ADMIN_LENGTH} characters, {MIN_ADMIN_DISTINCT} or more of them different (digits only: "
            f"{math.ceil(MIN_ADMIN_BITS / math.log2(10))}); {MAKE_ONE}")
    return text


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


def save_secret(path: Path, secret: str, what: str) -> None:
    """Write ``secret`` (``what`` it is, for the errors) to ``path``, a new file readable and writable
    by this user only; the folder it is in is left as it is. A file already there is never replaced
    (it may be a credential in use): a :class:`CredentialError`, as is a file that cannot be made."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, stat.S_IRUSR | stat.S_IWUSR)
    except FileExistsError:
        raise CredentialError(_exists(path, what)) from None
    except OSError as e:
        raise CredentialError(f"cannot write {what} to {path}: {e.strerror or e}") from None
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        os.fchmod(f.fileno(), stat.S_IRUSR | stat.S_IWUSR)  # whatever the umask
        f.write(secret + "\n")


def replace_secret(path: Path, secret: str, what: str) -> None:
    """Write ``secret`` in place of what ``path`` holds, atomically (a reader sees the old one or
    the new one), readable and writable by this user only."""
    try:
        write_private(path, secret + "\n")
    except OSError as e:
        raise CredentialError(f"cannot write {what} to {path}: {e.strerror or e}") from None


def _exists(path: Path, what: str) -> str:
    return (f"{path} exists: it may hold a credential in use, so {what} is not written over it (give "
            "another file, or remove it first)")


def check_new_file(path: Path, what: str) -> None:
    """Before anything is made that only ``path`` will keep (a bot's token, shown nowhere else): a
    :class:`CredentialError` if it exists, or its folder does not."""
    if path.exists():
        raise CredentialError(_exists(path, what))
    if not path.parent.is_dir():
        raise CredentialError(f"cannot write {what} to {path}: the folder {path.parent} does not exist")


def admin_token(token_file: str | None, data_dir: str | None) -> str:
    """The admin credential for a client: the variable, the file given, the data directory's; "" if none.

    One too weak for a node to accept is a :class:`CredentialError` (no node has it)."""
    env = os.environ.get(ADMIN_ENV, "").strip()
    if env:
        return check_admin_credential(env, f"${ADMIN_ENV}")
    if token_file:
        return check_admin_credential(read_secret(Path(token_file)), token_file)
    if data_dir:
        path = Path(data_dir) / ADMIN_FILE
        if path.is_file():
            return check_admin_credential(read_secret(path), str(path))
    return ""


def where_admin_looked(data_dir: str | None) -> str:
    """For a command that found no admin credential and was refused: where it looked, and how to
    make one."""
    dir_file = f"{Path(data_dir) / ADMIN_FILE} does not exist (--data-dir)" if data_dir else "no --data-dir"
    return (f"this command found no admin credential (${ADMIN_ENV} is not set, no --admin-token-file was "
            f"given, {dir_file}). A node started with neither keeps its own in DIR/{ADMIN_FILE} of its "
            f"--data-dir DIR: on its machine give the command the same --data-dir; elsewhere, {MAKE_ONE}")


def given_admin_token(token_file: str | None) -> tuple[str, str] | None:
    """The admin credential a node is given, checked, and where it is: ``$BELOTE_ADMIN_TOKEN``, else
    ``token_file``; None if neither (the node keeps its own in its data directory)."""
    env = os.environ.get(ADMIN_ENV, "").strip()
    if env:
        return check_admin_credential(env, f"${ADMIN_ENV}"), f"${ADMIN_ENV}"
    if token_file:
        return check_admin_credential(read_secret(Path(token_file)), token_file), token_file
    return None


def node_admin_token(token_file: str | None, data_dir: Path | None) -> tuple[str, str]:
    """The admin credential of a starting node, and where it is: the variable, the file given, or
    the data directory's file, made on first start (with no data directory, a private temporary
    file)."""
    given = given_admin_token(token_file)
    if given is not None:
        return given
    token = new_admin_token()
    if data_dir is None:
        fd, name = tempfile.mkstemp(prefix="belote-admin-", suffix=".token")
        with os.fdopen(fd, "w", encoding="utf-8") as f:  # mkstemp makes it 0600
            f.write(token + "\n")
        return token, name
    path = data_dir / ADMIN_FILE
    if path.is_file():
        private_dir(data_dir)  # a data directory an older version made readable to all is tightened
        return check_admin_credential(read_secret(path), str(path)), str(path)
    write_secret(path, token)
    return token, str(path)
