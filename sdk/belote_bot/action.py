"""Actions: one decision (a bid, or a card with its words) as its wire code and its record text.

An :class:`Action` wraps the uint32 code of the wire (see ``game.proto``) and
prints as the record text (``pass``, ``90H``, ``capotS``, ``coinche``, ``JH``,
``KH belote``, ``AS tierce``); :meth:`Action.parse` reads it back.
"""

from __future__ import annotations

from dataclasses import dataclass

from arena.engine import actions as A
from arena.engine.actions import format_action, parse_action
from arena.engine.cards import CARDS, SUITS, Card
from arena.engine.errors import ActionError

__all__ = ["Action"]

_CARD_CODE_LIMIT = 1 << (A.DECL_SHIFT + 8)  # card, belote, rebelote, four 2-bit declaration counts
_FIRST_VALUE_BID = A.bid_action(80, 0)
_LAST_VALUE_BID = A.bid_action(A.CAPOT_VALUE, 3)


def _is_action_code(code: int) -> bool:
    if code < 0:
        return False
    if code < A.BID:
        return code < _CARD_CODE_LIMIT
    return code <= A.SURCOINCHE or _FIRST_VALUE_BID <= code <= _LAST_VALUE_BID


@dataclass(frozen=True, slots=True, order=True)
class Action:
    """One decision: a bid or a card play with its words, as its wire code.

    ``str(action)`` is the record text and :meth:`parse` reads it back;
    ``int(action)`` is the code. Build one with ``Action(code)``,
    ``Action.parse("KH belote")`` or pick one from
    :attr:`Observation.legal_actions`.
    """

    code: int

    def __post_init__(self) -> None:
        if isinstance(self.code, bool) or not isinstance(self.code, int) or not _is_action_code(self.code):
            raise ActionError(f"{self.code!r} is not an action code (see game.proto)")

    @classmethod
    def parse(cls, text: str) -> Action:
        """Read the record text (``"90H"``, ``"KH belote"``); raises :class:`ActionError`."""
        return cls.of(parse_action(text))

    @classmethod
    def of(cls, code: int) -> Action:
        """The action of ``code``, shared (actions are immutable)."""
        action = _ACTIONS.get(code)
        if action is None:
            action = cls(code)
            if len(_ACTIONS) < 1 << 16:
                _ACTIONS[code] = action
        return action

    def __str__(self) -> str:
        return format_action(self.code)

    def __repr__(self) -> str:
        return f"Action({format_action(self.code)!r})"

    def __int__(self) -> int:
        return self.code

    # ------------------------------------------------------------- bids
    @property
    def is_bid(self) -> bool:
        return self.code >= A.BID

    @property
    def is_pass(self) -> bool:
        return self.code == A.PASS

    @property
    def is_take(self) -> bool:
        """Classic round one: take the retourne's suit."""
        return self.code == A.TAKE

    @property
    def is_coinche(self) -> bool:
        return self.code == A.COINCHE

    @property
    def is_surcoinche(self) -> bool:
        return self.code == A.SURCOINCHE

    @property
    def is_redeal(self) -> bool:
        return self.code == A.REDEAL

    @property
    def value(self) -> int | None:
        """A coinche bid's value (250 for capot), else None."""
        return A.bid_value(self.code) if A.is_value_bid(self.code) else None

    @property
    def is_capot(self) -> bool:
        return self.value == A.CAPOT_VALUE

    # ------------------------------------------------------------- plays
    @property
    def is_play(self) -> bool:
        return self.code < A.BID

    @property
    def card(self) -> Card | None:
        """The card played, or None for a bid."""
        return CARDS[self.code & A.CARD_FIELD] if self.code < A.BID else None

    @property
    def suit(self) -> str | None:
        """The suit letter of a card, of a coinche bid or of a classic round-two choice; else None."""
        code = self.code
        if code < A.BID:
            return SUITS[(code & A.CARD_FIELD) >> 3]
        if A.is_value_bid(code):
            return SUITS[A.bid_suit(code)]
        if A.CHOOSE <= code < A.CHOOSE + 4:
            return SUITS[code - A.CHOOSE]
        return None

    @property
    def says_belote(self) -> bool:
        return self.code < A.BID and bool(self.code & A.BELOTE_WORD)

    @property
    def says_rebelote(self) -> bool:
        return self.code < A.BID and bool(self.code & A.REBELOTE_WORD)

    @property
    def declared_kinds(self) -> tuple[str, ...]:
        """The declarations announced with this card, e.g. ``("tierce", "tierce")``."""
        if self.code >= A.BID:
            return ()
        counts = A.decl_counts(self.code >> A.DECL_SHIFT)
        return tuple(kind for kind, n in zip(A.DECL_KINDS, counts, strict=True) for _ in range(n))


_ACTIONS: dict[int, Action] = {}
