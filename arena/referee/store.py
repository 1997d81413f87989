"""Finished match records, one JSON file each under ``<data>/matches/``.

Written once, atomically (a temporary file renamed into place), keyed by match
id; a second write of the same id is refused, so a result is never counted
twice. Without a folder the store keeps the latest records in memory. The
tournament queue keeps its own exactly-once store of results.
"""

from __future__ import annotations

import os
from pathlib import Path

from arena.records import MatchRecord

#: records kept by a store without a folder (the oldest are dropped first)
MEMORY_RECORDS = 1000


class RecordExistsError(ValueError):
    pass


class MatchStore:
    def __init__(self, root: Path | None) -> None:
        self.root = root
        self._memory: dict[str, MatchRecord] = {}
        if root is not None:
            root.mkdir(parents=True, exist_ok=True)

    def path(self, match_id: str) -> Path | None:
        return None if self.root is None else self.root / f"{match_id}.json"

    def put(self, record: MatchRecord) -> Path | None:
        match_id = record.match_id
        if self.get(match_id) is not None:
            raise RecordExistsError(f"match {match_id} already has a record")
        path = self.path(match_id)
        if path is None:
            self._memory[match_id] = record
            while len(self._memory) > MEMORY_RECORDS:  # no disk: keep the latest ones only
                self._memory.pop(next(iter(self._memory)))
            return None
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_text(record.to_json())
        os.replace(tmp, path)
        return path

    def get(self, match_id: str) -> MatchRecord | None:
        if match_id in self._memory:
            return self._memory[match_id]
        if not _safe_id(match_id):
            return None
        path = self.path(match_id)
        if path is None or not path.exists():
            return None
        return MatchRecord.from_json(path.read_text())

    def ids(self) -> list[str]:
        if self.root is None:
            return sorted(self._memory)
        return sorted(p.stem for p in self.root.glob("*.json"))


def _safe_id(match_id: str) -> bool:
    return bool(match_id) and "/" not in match_id and not match_id.startswith(".")
