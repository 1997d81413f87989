"""The values a bot handles, in one place: :class:`Action`, :class:`Observation` and their parts.

See :mod:`belote_bot.action` and :mod:`belote_bot.observation`.
"""

from belote_bot.action import Action
from belote_bot.observation import Observation, ShownMeld, Trick

__all__ = ["Action", "Observation", "ShownMeld", "Trick"]
