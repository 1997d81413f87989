"""Quiet logs: one line per problem, never a traceback for what a peer sent, at a bounded rate.

A hostile or broken peer can cause the same problem thousands of times a
second; a log line each time would fill the disk and hide everything else.
:class:`QuietLog` logs a problem (named by a key the code chooses, such as
``"undecodable ConnectRequest"``) at most once every ``every`` seconds, and the
next line it lets through says how many it held back. :class:`QuietFilter`
does the same for records the node does not write itself (grpc's own logger
logs a cut stream or a failed batch at ERROR with a traceback): it makes each
one line, the exception's type and message in place of its traceback.

The keys are kept in a bounded table (the least recently seen is forgotten
first), so a flood of distinct keys costs bounded memory.
"""

from __future__ import annotations

import logging
import re
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping
from typing import Any

#: seconds between two lines of the same problem (default)
EVERY = 10.0
#: problems remembered at once; the least recently seen is forgotten first
MAX_KEYS = 1024
#: the longest line a filtered record keeps (characters)
MAX_LINE = 400
#: an object's address in a message ("<... object at 0x7f3a...>"): not part of what the problem is
_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")
#: the loggers grpc writes to from the server's code paths
GRPC_LOGGERS = ("grpc._cython.cygrpc", "grpc._server", "grpc.aio._server", "grpc._common")


class RateLimit:
    """Per key: whether a line may go out now, and how many were held back since the last one."""

    def __init__(self, every: float = EVERY, *, max_keys: int = MAX_KEYS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.every = every
        self.max_keys = max_keys
        self.clock = clock
        #: key -> [time of the last line let through, lines held back since]
        self._seen: OrderedDict[Hashable, list[float]] = OrderedDict()

    def admit(self, key: Hashable) -> int | None:
        """None: hold this line back; else the number of lines held back before it."""
        now = self.clock()
        entry = self._seen.get(key)
        if entry is None:
            self._seen[key] = [now, 0]
            if len(self._seen) > self.max_keys:
                self._seen.popitem(last=False)
            return 0
        self._seen.move_to_end(key)
        if now - entry[0] < self.every:
            entry[1] += 1
            return None
        held = int(entry[1])
        entry[0], entry[1] = now, 0
        return held


def _held_note(held: int, every: float) -> str:
    return f" ({held} more like it in the last {every:g} s)" if held else ""


class QuietLog:
    """A logger's lines about problems, each key at most once every ``every`` seconds."""

    def __init__(self, logger: logging.Logger, every: float = EVERY, *, max_keys: int = MAX_KEYS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.logger = logger
        self.limit = RateLimit(every, max_keys=max_keys, clock=clock)

    def log(self, level: int, key: Hashable, msg: str, *args: Any,
            extra: Mapping[str, object] | None = None) -> bool:
        """Log ``msg % args`` as one line unless ``key`` was logged less than ``every`` seconds ago;
        ``extra``: the record's fields (match id, bot, node: what a JSON log line carries)."""
        if not self.logger.isEnabledFor(level):
            return False
        held = self.limit.admit(key)
        if held is None:
            return False
        text = (msg % args if args else msg).replace("\n", " ")
        fields = dict(extra) if extra else {}
        if held:
            fields["held_back"] = held
        self.logger.log(level, "%s%s", text, _held_note(held, self.limit.every), extra=fields or None)
        return True

    def info(self, key: Hashable, msg: str, *args: Any, extra: Mapping[str, object] | None = None) -> bool:
        return self.log(logging.INFO, key, msg, *args, extra=extra)

    def warning(self, key: Hashable, msg: str, *args: Any, extra: Mapping[str, object] | None = None) -> bool:
        return self.log(logging.WARNING, key, msg, *args, extra=extra)


class QuietFilter(logging.Filter):
    """Makes a logger's records of WARNING and above one line each, without traceback, rate-limited
    per message and exception type (records below WARNING pass untouched)."""

    def __init__(self, every: float = EVERY, *, max_keys: int = MAX_KEYS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self.limit = RateLimit(every, max_keys=max_keys, clock=clock)

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING:
            return True
        try:
            text = record.getMessage()
        except Exception:  # a record whose arguments do not fit its message
            text = str(record.msg)
        exc = record.exc_info[1] if record.exc_info else None
        # a kind of problem: where, what was said, and the exception's type (one line per kind)
        held = self.limit.admit((record.name, _ADDRESS.sub("0x", str(record.msg)[:MAX_LINE]),
                                 type(exc).__name__ if exc is not None else ""))
        if held is None:
            return False
        if exc is not None:
            text = f"{text}: {type(exc).__name__}: {exc}"
        text = " ".join(text.split())
        if len(text) > MAX_LINE:
            text = text[:MAX_LINE] + "..."
        record.msg, record.args = text + _held_note(held, self.limit.every), None
        record.exc_info, record.exc_text, record.stack_info = None, None, None
        return True


#: the referee's problems, from every one of its modules (one rate limit for all)
quiet = QuietLog(logging.getLogger("arena.referee"))


def quiet_grpc_logs(every: float = EVERY) -> None:
    """Put a :class:`QuietFilter` on grpc's loggers (once per process)."""
    for name in GRPC_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, QuietFilter) for f in logger.filters):
            logger.addFilter(QuietFilter(every))
