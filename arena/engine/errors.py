"""One error type per failure of the engine, all subclasses of :class:`EngineError`.

``EngineError`` subclasses ``ValueError`` so callers that only care that the
input was bad can catch that; the service edge maps these to gRPC statuses.
"""

from __future__ import annotations

from collections.abc import Sequence

#: the most characters of its input an error message quotes (a record may hold megabytes of text)
ECHO_CHARS = 40


def shown(value: object) -> str:
    """``repr(value)`` as an error message quotes it: whole when short, else its first
    :data:`ECHO_CHARS` characters and how many more there are."""
    text = repr(value)
    if len(text) <= ECHO_CHARS:
        return text
    return f"{text[:ECHO_CHARS]}... ({len(text) - ECHO_CHARS:,} more characters)"


class EngineError(ValueError):
    """Base class of every error the rules engine raises on bad input."""


class CardError(EngineError):
    """A card, or a set of cards, is malformed (bad text, wrong count, duplicate)."""


class RulesetError(EngineError):
    """An unknown preset or option, or an option with a bad value."""


class ActionError(EngineError):
    """An action's text cannot be parsed."""


class IllegalActionError(EngineError):
    """A well-formed action that the rules do not allow at this point.

    The message names the action, the seat and the legal choices.
    """

    def __init__(self, action: str, seat: int, legal: Sequence[str], reason: str = "") -> None:
        self.action = action
        self.seat = seat
        self.legal = tuple(legal)
        why = f" ({reason})" if reason else ""
        super().__init__(
            f"illegal action {shown(action)} by seat {seat}{why}; legal: {', '.join(self.legal) or 'none'}"
        )


class RecordError(EngineError):
    """A deal or match record is malformed or inconsistent with its ruleset."""
