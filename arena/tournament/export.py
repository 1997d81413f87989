"""A tournament's standings as CSV and its records as JSON Lines or a zip: the files its exports hold.

The API (``/api/v1/tournaments/{id}/standings.csv``, ``records.jsonl``, ``records.zip``) and the command
line (``belote-arena tournament export``) write the same bytes with these. Nothing here reads a store:
the caller hands over the standings, and the records one at a time, and sends each piece as it comes,
so an export of any size holds one record in memory at a time.

CSV cells are safe to open in a spreadsheet: a text cell starting with ``=``, ``+``, ``-``, ``@``, a
tab or a carriage return (which a spreadsheet would run as a formula) is written with a leading
apostrophe, as OWASP advises; numbers are written as numbers.
"""

from __future__ import annotations

import csv
import io
import json
import re
import zipfile
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["STANDINGS_COLUMNS", "ZipStream", "csv_cell", "jsonl_line", "record_file_name", "standings_csv"]

#: the standings file's columns, in order (``diff``: the duplicate difference in duplicate play, else
#: points for minus against; ``buchholz``: Swiss only, else empty)
STANDINGS_COLUMNS = ("rank", "bot", "played", "wins", "draws", "losses", "byes", "score", "points_for",
                     "points_against", "diff", "buchholz")

#: what a spreadsheet reads as the start of a formula
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: Any) -> str | int | float:
    """One cell: a number as it is, None as empty, a text made inert if a spreadsheet would run it."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int | float):
        return value
    text = str(value)
    return "'" + text if text.startswith(FORMULA_START) else text


def standings_csv(standings: Iterable[Mapping[str, Any]]) -> str:
    """The standings (each a mapping with :data:`STANDINGS_COLUMNS`) as CSV text, a header first."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(STANDINGS_COLUMNS)
    for s in standings:
        writer.writerow([csv_cell(_whole(s.get(c))) for c in STANDINGS_COLUMNS])
    return out.getvalue()


def _whole(value: Any) -> Any:
    """A score of 2.0 as 2, 2.5 as it is (what a reader of the table expects)."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


def jsonl_line(record_json: str | bytes) -> bytes:
    """A record's JSON as one line of a JSON Lines file (compact, its newline last)."""
    text = record_json.decode() if isinstance(record_json, bytes) else record_json
    if "\n" in text or "\r" in text:
        text = json.dumps(json.loads(text), separators=(",", ":"))
    return text.encode() + b"\n"


#: what a record's file name inside a zip keeps of its match id
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def record_file_name(match_id: str) -> str:
    """The name of a match's record inside a tournament's zip: ``{match_id}.json`` (plain characters)."""
    return f"{_UNSAFE.sub('_', match_id)[:120] or 'match'}.json"


class _Drain(io.RawIOBase):
    """Where a :class:`zipfile.ZipFile` writes: bytes kept until taken (it cannot seek: the zip
    writes each entry's sizes after its data, so nothing needs to be gone back to)."""

    def __init__(self) -> None:
        super().__init__()
        self._parts: list[bytes] = []

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        chunk = bytes(data)
        self._parts.append(chunk)
        return len(chunk)

    def take(self) -> bytes:
        out, self._parts = b"".join(self._parts), []
        return out


class ZipStream:
    """A zip written a file at a time: :meth:`add` gives the bytes of that file's entry, :meth:`close`
    the zip's directory. Their concatenation is the zip; only one file is held at a time."""

    def __init__(self) -> None:
        self._drain = _Drain()
        self._zip = zipfile.ZipFile(self._drain, "w", compression=zipfile.ZIP_DEFLATED)

    def add(self, name: str, data: bytes) -> bytes:
        self._zip.writestr(name, data)
        return self._drain.take()

    def close(self) -> bytes:
        self._zip.close()
        return self._drain.take()
