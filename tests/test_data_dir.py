"""What a node keeps in its data directory is its user's alone: folders 0700, files 0600.

The embedded queue holds every tournament's secret, ``admin.token`` the admin
credential, ``bots.json`` the token digests, ``matches/`` sealed records: each
test writes them for real (a node playing a match, the embedded queue on
sqlite, ``belote-arena serve``) and reads the modes back from the disk.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import stat
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from belote_bot import RandomBot

from arena.credentials import node_admin_token
from arena.harness import local_arena
from arena.queue import DATABASE_NAME, open_broker
from arena.referee.node import Node, NodeConfig
from arena.referee.registry import new_token

from .referee.arena_helpers import FAST, arun

#: the admin credential an older version of the node made (as strong as today's)
OLDER_ADMIN = new_token("adm")

pytestmark = pytest.mark.security


@contextlib.contextmanager
def umask(mask: int) -> Iterator[None]:
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


def modes(root: Path) -> dict[str, str]:
    """Every folder and file under ``root`` (itself included), by path relative to it, with its mode."""
    found = {".": oct(stat.S_IMODE(root.stat().st_mode))}
    for path in root.rglob("*"):
        found[str(path.relative_to(root))] = oct(stat.S_IMODE(path.lstat().st_mode))
    return found


def private(found: dict[str, str], root: Path) -> dict[str, str]:
    """The entries of ``found`` that are not their user's only (folders 0700, files 0600)."""
    return {name: mode for name, mode in found.items()
            if mode != (oct(0o700) if (root / name).is_dir() else oct(0o600))}


def fill(data: Path) -> dict[str, str]:
    """Write everything a node of the embedded queue writes: its admin credential, the queue (with
    its -wal and -shm), bots and invites, and a finished match's record; the modes, read while the
    queue is open (sqlite removes its -wal and -shm when it closes)."""
    node_admin_token(None, data)
    broker = open_broker(None, data)

    async def play() -> None:
        async with local_arena(data_dir=data, time=FAST) as arena:
            await arena.connect("alpha", RandomBot(1))
            await arena.connect("beta", RandomBot(2))
            await arena.node.create_invite()
            record = await arena.play("alpha", "beta", deals=1)
            assert (data / "matches" / f"{record.match_id}.json").is_file()

    try:
        arun(play())
        return modes(data)
    finally:
        broker.close()


def test_everything_a_node_writes_in_its_data_dir_is_its_users_only_whatever_the_umask(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("BELOTE_ADMIN_TOKEN", raising=False)
    data = tmp_path / "data"
    with umask(0):  # the loosest: every file would be 0666 and folder 0777 if left to it
        found = fill(data)
    written = ("admin.token", DATABASE_NAME, f"{DATABASE_NAME}-wal", f"{DATABASE_NAME}-shm", "bots.json",
               "invites.json", "matches")
    assert set(written) <= set(found), found
    assert private(found, data) == {}
    assert private(modes(data), data) == {}


def test_a_data_dir_an_older_version_left_open_is_tightened_and_logged_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.delenv("BELOTE_ADMIN_TOKEN", raising=False)
    data = tmp_path / "data"
    with umask(0o022):  # as a node before this fix left it: folders 0755, files 0644
        (data / "matches").mkdir(parents=True)
        db = sqlite3.connect(data / DATABASE_NAME)
        db.execute("CREATE TABLE t (x)")
        db.close()
        (data / "admin.token").write_text(f"{OLDER_ADMIN}\n")
        (data / "bots.json").write_text("[]")
        (data / "matches" / "m-older.json").write_text("{}")
    assert private(modes(data), data)
    with caplog.at_level(logging.WARNING, logger="arena.datadir"), umask(0o022):
        for _ in range(2):  # two starts in one process: one line per path
            assert node_admin_token(None, data)[0] == OLDER_ADMIN
            open_broker(None, data).close()
            Node(NodeConfig(data_dir=data))
    # an older record keeps its mode, behind a folder no one else may enter
    assert private(modes(data), data) == {"matches/m-older.json": oct(0o644)}
    lines = [r.getMessage() for r in caplog.records if "private to its user" in r.getMessage()]
    assert sorted(lines) == sorted(set(lines)) and len(lines) == 5, lines  # data, matches, three files
    assert all(not r.exc_info for r in caplog.records)


@pytest.mark.slow
def test_serve_makes_its_data_dir_its_users_only(tmp_path: Path) -> None:
    """``belote-arena serve`` on a data folder an older version left open, under the usual umask."""
    from tests.cluster.procs import NodeProc, Procs, register_bots

    data = tmp_path / "data"
    with umask(0o022):
        data.mkdir()
        procs = Procs(tmp_path)
        try:
            proc = procs.spawn("node", [sys.executable, "-m", "arena.cli", "serve", "--listen", "127.0.0.1:0",
                                        "--data-dir", str(data)])
            node = procs.ready(NodeProc(proc.name, proc.popen, proc.log))
            register_bots(node.address, ["alpha"])
            found = modes(data)
            assert DATABASE_NAME in found and "matches" in found, found
            assert private(found, data) == {}
        finally:
            procs.close()
