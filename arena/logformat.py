"""The node's log lines: ``text`` (one line each) or ``json`` (one JSON object a line).

The lines that matter (a node's start and stop, a bot's connection and
disconnection, a strike, a forfeit, a match's end, a job reclaimed, a dead
letter) carry their fields as the record's ``extra``: ``event``, ``match_id``,
``bot``, ``node``. In JSON they are keys of the object beside ``time``,
``level``, ``logger`` and ``message``; in text they are in the message already.
No field ever holds a token or a card: the code that logs chooses them.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime

__all__ = ["FORMATS", "JsonFormatter", "configure"]

FORMATS = ("text", "json")
TEXT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
#: what every LogRecord has: anything else on a record came from ``extra``
_STANDARD = frozenset(logging.LogRecord("", 0, "", 0, "", (), None).__dict__) | {"message", "asctime"}


class JsonFormatter(logging.Formatter):
    """One JSON object a line: time (UTC, ISO 8601), level, logger, message, and the record's fields."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in record.__dict__.items():
            if key not in _STANDARD and not key.startswith("_") and key not in out:
                out[key] = value if isinstance(value, str | int | float | bool | None) else str(value)
        if record.exc_info:
            out["error"] = self.formatException(record.exc_info).splitlines()[-1]
        return json.dumps(out, ensure_ascii=False)


def configure(fmt: str = "text", level: int = logging.INFO) -> None:
    """The root logger's one handler, on stderr, in ``fmt`` (``text`` or ``json``)."""
    if fmt not in FORMATS:
        raise ValueError(f"log format must be one of {', '.join(FORMATS)}, not {fmt!r}")
    handler = logging.StreamHandler()
    handler.setFormatter(JsonFormatter() if fmt == "json" else logging.Formatter(TEXT))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
