"""Finished match records, one JSON file each under ``<data>/matches/``.

Written once, atomically (a temporary file renamed into place), keyed by match
id; a second write of the same id is refused, so a result is never counted
twice. Each read opens the file, reads it and closes it: the store holds no
file open between calls.

Without a folder the store keeps the latest :data:`MEMORY_RECORDS` records in
memory, as their JSON text (a 100-deal match is about 100 kB of it, a
few times less than the parsed record), and drops the oldest first: a node
without a data folder (tests, the harness, ``play_local``) stays bounded and
writes nothing to disk. The tournament queue keeps its own exactly-once store
of results.
"""

from __future__ import annotations

import collections
import contextlib
import re
from pathlib import Path

from arena.datadir import private_dir, write_private
from arena.engine import RecordError
from arena.records import MatchRecord

#: records kept by a store without a folder (the oldest are dropped first)
MEMORY_RECORDS = 100

#: a match id the store accepts: a file name, never a path (the node's ``m-<hex>``, a tournament's
#: ``<tournament id>-r<round>-<index>[-leg<n>]``)
MATCH_ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:@-]{0,199}")


class StoreError(ValueError):
    """Base of the store's errors."""


class RecordExistsError(StoreError):
    pass


class BadMatchIdError(StoreError):
    pass


class UnreadableRecordError(StoreError):
    """A stored record that is not a match record (a damaged or foreign file)."""


def valid_match_id(match_id: str) -> bool:
    return isinstance(match_id, str) and MATCH_ID_RE.fullmatch(match_id) is not None


class MatchStore:
    def __init__(self, root: Path | None) -> None:
        self.root = root
        #: without a folder: match id -> record JSON, oldest first
        self._memory: collections.OrderedDict[str, str] = collections.OrderedDict()
        if root is not None:
            private_dir(root, files=False)  # its user's only; tightening each record would cost a start

    def path(self, match_id: str) -> Path | None:
        return None if self.root is None else self.root / f"{match_id}.json"

    def put(self, record: MatchRecord) -> Path | None:
        match_id = record.match_id
        if not valid_match_id(match_id):
            raise BadMatchIdError(f"cannot store a record under the match id {match_id!r}")
        if self.has(match_id):
            raise RecordExistsError(f"match {match_id} already has a record")
        path = self.path(match_id)
        if path is None:
            self._memory[match_id] = record.to_json()
            while len(self._memory) > MEMORY_RECORDS:  # no disk: keep the latest ones only
                self._memory.popitem(last=False)
            return None
        write_private(path, record.to_json())
        return path

    def has(self, match_id: str) -> bool:
        if not valid_match_id(match_id):
            return False
        path = self.path(match_id)
        return match_id in self._memory if path is None else path.exists()

    def text(self, match_id: str) -> str | None:
        """The JSON text of ``match_id``'s record, unread, or None; :class:`UnreadableRecordError` for a
        file that cannot be read."""
        if not valid_match_id(match_id):
            return None
        path = self.path(match_id)
        if path is None:
            return self._memory.get(match_id)
        try:
            return path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError) as e:
            raise UnreadableRecordError(f"the record of match {match_id} cannot be read: {e}") from None

    def get(self, match_id: str) -> MatchRecord | None:
        """The record of ``match_id``, or None; :class:`UnreadableRecordError` for a damaged one."""
        text = self.text(match_id)
        if text is None:
            return None
        try:
            return MatchRecord.from_json(text)
        except RecordError as e:
            raise UnreadableRecordError(f"the record of match {match_id} is damaged: {e}") from None

    def forget_tournament(self, tournament_id: str) -> int:
        """Delete the records of ``tournament_id``'s matches (their ids start with its id and a dash: a
        version test the arena forgot); how many. Lists the folder: from a thread, now and then."""
        prefix = f"{tournament_id}-"
        if not valid_match_id(prefix + "x"):
            return 0
        if self.root is None:
            gone = [m for m in self._memory if m.startswith(prefix)]
            for match_id in gone:
                del self._memory[match_id]
            return len(gone)
        count = 0
        for path in self.root.glob(f"{prefix}*.json"):  # an id holds no glob character (MATCH_ID_RE)
            with contextlib.suppress(FileNotFoundError):  # another thread's delete
                path.unlink()
                count += 1
        return count

    def ids(self) -> list[str]:
        if self.root is None:
            return sorted(self._memory)
        return sorted(p.stem for p in self.root.glob("*.json"))

    def latest(self, count: int) -> list[str]:
        """The ids of the ``count`` records written last, oldest first."""
        if count <= 0:
            return []
        if self.root is None:
            return list(self._memory)[-count:]
        stamped = []
        for p in self.root.glob("*.json"):
            try:
                stamped.append((p.stat().st_mtime_ns, p.stem))
            except OSError:  # removed meanwhile
                continue
        return [match_id for _, match_id in sorted(stamped)[-count:]]
