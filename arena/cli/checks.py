"""Bad input to a command: the one-line error it is, and the checks every command shares.

What a command is given is checked before it does anything: a bad value is one ``error:`` line and
exit 1. The limits of a match and of a bot's name are the node's own (the node checks them again:
these only save a round trip); the others keep a value from being absurd (an infinite deadline, a
drain of a year) rather than from being unusual.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from arena.records import BOT_NAME_RULE, valid_bot_name


class CliError(Exception):
    """Bad input to a command: printed as one line, exit 1."""


@contextlib.contextmanager
def one_line(*errors: type[Exception]) -> Iterator[None]:
    """The errors of a command's layer (a refused RPC, an unreachable broker) are printed as one line."""
    try:
        yield
    except errors as e:
        raise CliError(str(e)) from None


def check_whole(flag: str, value: int | None, low: int, high: int, note: str = "") -> None:
    """A whole number from ``low`` to ``high``; None, a flag not given, passes."""
    if value is not None and not low <= value <= high:
        raise CliError(f"{flag} must be a whole number from {low} to {high}{note}, not {value}")


def check_seconds(flag: str, value: float, high: float, *, zero: bool) -> None:
    """A duration: finite, at most ``high``; more than 0, or at least 0 when ``zero``."""
    if not (0 <= value <= high and (zero or value > 0)):  # NaN fails every comparison
        low = "from 0" if zero else "more than 0 and"
        raise CliError(f"{flag} must be {low} up to {high:g} seconds, not {value:g}")


def check_address(flag: str, address: str, *, any_port: bool) -> None:
    """HOST:PORT, the port from 1 to 65535 (or 0, a free port, when ``any_port``)."""
    host, _, port = address.rpartition(":")
    low = 0 if any_port else 1
    if not host or any(c.isspace() for c in host) or not port.isdigit() or not low <= int(port) <= 65535:
        raise CliError(f"{flag} must be HOST:PORT with a port from {low} to 65535, not {address!r}")


def check_bot_name(what: str, name: str) -> None:
    if not valid_bot_name(name):
        raise CliError(f"bad bot name {name!r} in {what}: {BOT_NAME_RULE}")
