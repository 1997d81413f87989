"""The node's data directory is its user's alone: folders 0700, files 0600, whatever the umask.

What a node keeps on disk holds secrets: the embedded queue (``arena.sqlite3``,
its ``-wal`` and ``-shm``) has every tournament's secret, ``admin.token`` the
admin credential, ``bots.json`` the bots' token digests, ``matches/`` records
of deals still sealed. Every folder the node makes there is created 0700 and
every file 0600 (the mode is set, not left to the umask). A folder that
already exists and lets its group or others in is tightened (its owner's bits
kept), and so are the node's own files in it (:data:`NODE_FILES`); the records
are in ``matches/``, tightened as a folder only, so that starting costs
nothing per record (an older record keeps its mode, behind a folder no one
else may enter). Each path tightened is logged once, as one line; a folder
the node may not change (another user's, such as a volume's mount point) is
logged once too, and left as it is: the node's files in it are private anyway.
"""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

#: what the node's folders and files may be: its own user's only
DIR_MODE = 0o700
FILE_MODE = 0o600
#: what a node writes directly in its data directory (the embedded queue with sqlite's companions,
#: the admin credential, the bot registry of a node alone): what :func:`private_dir` tightens there
NODE_FILES = ("arena.sqlite3", "arena.sqlite3-wal", "arena.sqlite3-shm", "arena.sqlite3-journal",
              "admin.token", "bots.json", "invites.json")

log = logging.getLogger("arena.datadir")
#: the paths already logged by this process (each once)
_logged: set[str] = set()


def _once(path: Path, message: str, *args: object) -> None:
    if str(path) not in _logged:
        _logged.add(str(path))
        log.warning(message, path, *args, extra={"event": "data_private"})


def _tighten(path: Path, mode: int) -> None:
    """Take from ``path`` what its mode ``mode`` gives its group and others; one log line."""
    try:
        os.chmod(path, mode & 0o700)
    except PermissionError:  # another user's (a volume's mount point): the files the node makes are private
        _once(path, "cannot make %s private to this user (its owner's: uid %d); its mode %s stays",
              path.stat().st_uid, oct(mode))
        return
    _once(path, "made %s private to its user: it was %s, now %s", oct(mode), oct(mode & 0o700))


def private_dir(path: Path, *, files: bool = True) -> Path:
    """Make ``path`` a folder only its user may enter (0700 when the node creates it), creating it
    (and its parents) if need be; with ``files``, tighten the node's own files in it too
    (:data:`NODE_FILES`). Returns ``path``."""
    try:
        path.mkdir(mode=DIR_MODE, parents=True)
        os.chmod(path, DIR_MODE)  # the umask may have taken more
    except FileExistsError:
        mode = stat.S_IMODE(path.stat().st_mode)
        if mode & 0o077:
            _tighten(path, mode)
    if files:
        for name in NODE_FILES:
            private_file(path / name)
    return path


def private_file(path: Path) -> None:
    """Take from ``path``, if it exists, what it gives its group and others."""
    try:
        found = path.lstat()
    except FileNotFoundError:
        return
    mode = stat.S_IMODE(found.st_mode)
    if mode & 0o077 and stat.S_ISREG(found.st_mode):  # never through a link
        _tighten(path, mode)


def create_private(path: Path) -> None:
    """Create ``path`` empty and 0600 if it does not exist (for a file another library opens, such
    as sqlite, which gives its ``-wal`` and ``-shm`` the mode of the database); tighten it if it does."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    except FileExistsError:
        private_file(path)
        return
    try:
        os.fchmod(fd, FILE_MODE)  # the umask may have taken more
    finally:
        os.close(fd)


def write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically (a temporary file renamed into place), 0600."""
    tmp = path.with_name(f".{path.name}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        os.fchmod(f.fileno(), FILE_MODE)  # an older temporary file keeps its mode through O_TRUNC
        f.write(text)
    os.replace(tmp, path)
