"""The SDK's errors: one base, :class:`BotError`."""

from __future__ import annotations

__all__ = ["AuthenticationError", "BotError", "IllegalAnswerError", "TlsConfigError"]


class BotError(Exception):
    """Base class of the SDK's errors."""


class AuthenticationError(BotError):
    """The referee refused the token (UNAUTHENTICATED): the client stops for good."""


class IllegalAnswerError(BotError, ValueError):
    """``act`` returned something that is not one of the legal actions."""


class TlsConfigError(BotError, ValueError):
    """The TLS CA file given to the SDK cannot be read or holds no PEM certificate."""
