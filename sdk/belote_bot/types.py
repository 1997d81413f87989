"""The values a bot handles, in one place: :class:`Action`, :class:`Observation` and their parts.

See :mod:`belote_bot.action` and :mod:`belote_bot.observation`.
"""

from belote_bot.action import INVALID_ACTION, Action, legal_texts
from belote_bot.observation import PHASE_NAMES, Observation, ShownMeld, Trick

__all__ = [
    "INVALID_ACTION",
    "PHASE_NAMES",
    "Action",
    "Observation",
    "ShownMeld",
    "Trick",
    "legal_texts",
]
