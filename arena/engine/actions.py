"""Actions as small integers, and their text form used in records.

Every decision of a deal is one ``int``:

- a card play: the card (0..31), plus :data:`BELOTE_WORD` or
  :data:`REBELOTE_WORD` when the player says it, plus the kinds of the
  declarations announced with the first card (a count per kind, see
  :func:`decl_code`) shifted by :data:`DECL_SHIFT`;
- a bid: :data:`BID` plus a small code (pass, take, a suit in round two,
  coinche, surcoinche, redeal, or a value and a suit).

Text forms (docs/records.md#action-text): ``pass``, ``take``, ``H`` (round two), ``90H``,
``capotS``, ``coinche``, ``surcoinche``, ``redeal``; ``JH``, ``KH belote``,
``QH rebelote``, ``AS tierce cinquante``, ``JC carre``.
"""

from __future__ import annotations

from typing import Final

from arena.engine.cards import CARD_TEXTS, SUITS, Card
from arena.engine.errors import ActionError, CardError, shown

# Final: the compiled build inlines these numbers (see cards.py)
BELOTE_WORD: Final = 1 << 5
REBELOTE_WORD: Final = 1 << 6
DECL_SHIFT: Final = 7
CARD_FIELD: Final = 31

BID: Final = 1 << 16
PASS: Final = BID | 0
TAKE: Final = BID | 1
#: round two of the classic bidding: ``CHOOSE + suit``
CHOOSE: Final = BID | 2
REDEAL: Final = BID | 6
COINCHE: Final = BID | 7
SURCOINCHE: Final = BID | 8
_VALUE_BASE: Final = 16
CAPOT_VALUE: Final = 250

#: the reply that says "I have no action" (what the SDK sends when ``act`` fails): it is never
#: legal, so the referee gives a strike and plays the fallback at once instead of waiting
NO_ACTION: Final = 0xFFFFFFFF

#: declaration kinds, in the order of their count fields in a decl code
DECL_KINDS: Final = ("tierce", "cinquante", "cent", "carre")
TIERCE: Final = 0
CINQUANTE: Final = 1
CENT: Final = 2
CARRE: Final = 3


def bid_action(value: int, suit: int) -> int:
    """A coinche bid; ``value`` 80..max_bid by tens, or :data:`CAPOT_VALUE`."""
    return BID | (_VALUE_BASE + (value // 10) * 4 + suit)


def is_bid(action: int) -> bool:
    return action >= BID


def is_value_bid(action: int) -> bool:
    return action >= BID + _VALUE_BASE


def bid_value(action: int) -> int:
    return ((action - BID - _VALUE_BASE) >> 2) * 10


def bid_suit(action: int) -> int:
    return (action - BID - _VALUE_BASE) & 3


def decl_code(counts: tuple[int, int, int, int]) -> int:
    """Pack the number of declarations of each kind (2 bits each)."""
    return counts[0] | counts[1] << 2 | counts[2] << 4 | counts[3] << 6


def decl_counts(code: int) -> tuple[int, int, int, int]:
    return (code & 3, code >> 2 & 3, code >> 4 & 3, code >> 6 & 3)


#: the texts of the actions formatted so far: records write every bid and card played. Bounded: a
#: bot's answer may be any number, and the referee formats an illegal one for its strike
_TEXTS: dict[int, str] = {}
_TEXTS_KEPT: Final = 4096


def format_action(action: int) -> str:
    """The text of ``action`` ("pass", "80H", "JH belote", ...), remembered for the next time."""
    text = _TEXTS.get(action)
    if text is None:
        text = _format_action(action)
        if len(_TEXTS) < _TEXTS_KEPT:
            _TEXTS[action] = text
    return text


def _format_action(action: int) -> str:
    if action >= BID:
        if action == PASS:
            return "pass"
        if action == TAKE:
            return "take"
        if CHOOSE <= action < CHOOSE + 4:
            return SUITS[action - CHOOSE]
        if action == REDEAL:
            return "redeal"
        if action == COINCHE:
            return "coinche"
        if action == SURCOINCHE:
            return "surcoinche"
        value = bid_value(action)
        suit = SUITS[bid_suit(action)]
        return f"capot{suit}" if value == CAPOT_VALUE else f"{value}{suit}"
    words = [CARD_TEXTS[action & CARD_FIELD]]
    if action & BELOTE_WORD:
        words.append("belote")
    if action & REBELOTE_WORD:
        words.append("rebelote")
    for kind, n in zip(DECL_KINDS, decl_counts(action >> DECL_SHIFT), strict=False):
        words.extend([kind] * n)
    return " ".join(words)


_BID_WORDS = {"pass": PASS, "take": TAKE, "redeal": REDEAL, "coinche": COINCHE,
              "surcoinche": SURCOINCHE}


def parse_action(text: str) -> int:
    """Parse the text form of an action; raises :class:`ActionError` if malformed.

    Whether the action is legal is for the deal to say.
    """
    if not isinstance(text, str) or not text.strip():
        raise ActionError(f"malformed action {shown(text)}: expected a bid such as 'pass' or a card "
                          "such as 'JH'")
    words = text.strip().split()
    head = words[0]
    low = head.lower()
    if len(words) == 1:
        if low in _BID_WORDS:
            return _BID_WORDS[low]
        if len(head) == 1 and head.upper() in SUITS:
            return CHOOSE + SUITS.index(head.upper())
        if low.startswith("capot") and len(head) == 6 and head[5].upper() in SUITS:
            return bid_action(CAPOT_VALUE, SUITS.index(head[5].upper()))
        digits = head[:-1]
        # "7H" .. "10H" are cards; a bid's value is two digits or more and not 10
        if digits.isdigit() and digits not in ("7", "8", "9", "10") and head[-1].upper() in SUITS:
            value = int(head[:-1])
            if value % 10 or not 80 <= value <= 240:
                raise ActionError(f"malformed bid {shown(text)}: the value is a multiple of 10 from 80")
            return bid_action(value, SUITS.index(head[-1].upper()))
    try:
        card = Card.parse(head)
    except CardError:
        raise ActionError(
            f"malformed action {shown(text)}: expected pass, take, a suit, a bid such as '90H' or "
            "'capotS', coinche, surcoinche, or a card such as 'JH' with optional words"
        ) from None
    action = int(card)
    counts = [0, 0, 0, 0]
    for w in words[1:]:
        lw = w.lower().replace("é", "e")
        if lw == "belote" and not action & BELOTE_WORD:
            action |= BELOTE_WORD
        elif lw == "rebelote" and not action & REBELOTE_WORD:
            action |= REBELOTE_WORD
        elif lw in DECL_KINDS and counts[DECL_KINDS.index(lw)] < 3:
            counts[DECL_KINDS.index(lw)] += 1
        else:
            raise ActionError(
                f"malformed action {shown(text)}: unknown or repeated word {shown(w)} "
                "(known: belote, rebelote, tierce, cinquante, cent, carre)"
            )
    c = (counts[0], counts[1], counts[2], counts[3])
    return action | decl_code(c) << DECL_SHIFT
