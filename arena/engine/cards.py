"""Cards, suits and card sets as 32-bit masks.

A card is an integer 0..31: ``suit * 8 + rank``. Suits are ordered
spades, hearts, diamonds, clubs (``S H D C``, 0..3); ranks in sequence order
``7 8 9 T J Q K A`` (0..7). A set of cards is an ``int`` whose bit ``card`` is
set, so the eight cards of a suit are one byte: bits ``8*suit .. 8*suit+7``.
This bit order is also the wire order of every card mask the arena sends.

:class:`Card` is an ``int`` that prints and parses as rank then suit (``"JH"``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Final, TypeVar

from arena.engine.errors import CardError, shown

# The constants are Final: the compiled build then inlines the numbers and keeps the tables in C
# variables, instead of looking each one up by name in the module at every use.
SUITS: Final = "SHDC"
RANKS: Final = "789TJQKA"
SPADES: Final = 0
HEARTS: Final = 1
DIAMONDS: Final = 2
CLUBS: Final = 3
SEVEN: Final = 0
EIGHT: Final = 1
NINE: Final = 2
TEN: Final = 3
JACK: Final = 4
QUEEN: Final = 5
KING: Final = 6
ACE: Final = 7

ALL_CARDS_MASK: Final = (1 << 32) - 1
SUIT_MASKS: Final[tuple[int, ...]] = tuple(0xFF << (8 * s) for s in range(4))

# Strength within a trick (higher wins), indexed by rank.
TRUMP_STRENGTH: Final[tuple[int, ...]] = (0, 1, 6, 4, 7, 2, 3, 5)  # J 9 A T K Q 8 7
PLAIN_STRENGTH: Final[tuple[int, ...]] = (0, 1, 2, 6, 3, 4, 5, 7)  # A T K Q J 9 8 7
TRUMP_POINTS: Final[tuple[int, ...]] = (0, 0, 14, 10, 20, 3, 4, 11)
PLAIN_POINTS: Final[tuple[int, ...]] = (0, 0, 0, 10, 2, 3, 4, 11)


def _byte_table(values: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(sum(values[r] for r in range(8) if b >> r & 1) for b in range(256))


def _above_table(strength: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(
        sum(1 << r for r in range(8) if strength[r] > strength[q]) for q in range(8)
    )


#: points of the ranks in a byte (one suit of a mask), plain or trump
PLAIN_BYTE_POINTS: Final = _byte_table(PLAIN_POINTS)
TRUMP_BYTE_POINTS: Final = _byte_table(TRUMP_POINTS)
#: TRUMP_ABOVE[rank]: byte of the ranks that beat ``rank`` as trumps
TRUMP_ABOVE: Final = _above_table(TRUMP_STRENGTH)


#: BYTE_CARDS[suit][byte]: the card indices of one suit's byte of a mask
BYTE_CARDS: Final[tuple[tuple[tuple[int, ...], ...], ...]] = tuple(
    tuple(tuple(8 * s + r for r in range(8) if b >> r & 1) for b in range(256)) for s in range(4)
)


_T = TypeVar("_T")


def python_class(cls: type[_T]) -> type[_T]:
    """Leave a class as it is. For the compiled engine: mypyc makes a class with a decorator other
    than its own an ordinary Python class instead of a native (compiled) one; its methods are still
    compiled. :class:`Card` must be one, as a native class cannot subclass ``int``. The others that
    are one behave as in the pure build where a native class would not: class attributes read on
    the class, attributes of their own, copy and pickle; and the frozen dataclasses are faster as
    one (their generated ``__init__`` sets each field through ``object.__setattr__``, slower on a
    native class). :class:`~arena.engine.deal.Deal` is the native class, with ``__slots__`` in the
    pure build. (mypyc's own ``@mypyc_attr(native_class=False)`` says the same but comes from
    ``mypy_extensions``, and the engine uses the standard library only.)"""
    return cls


@python_class
class Card(int):
    """One of the 32 cards; an ``int`` 0..31 that prints as ``"JH"``."""

    __slots__ = ()

    @property
    def suit(self) -> int:
        return self >> 3

    @property
    def rank(self) -> int:
        return self & 7

    @property
    def mask(self) -> int:
        return 1 << self

    @classmethod
    def of(cls, rank: int, suit: int) -> Card:
        return CARDS[suit * 8 + rank]

    @classmethod
    def parse(cls, text: str) -> Card:
        """Parse ``"JH"`` (rank then suit; ``10`` is accepted for ``T``)."""
        t = text.strip().upper()
        if t.startswith("10"):
            t = "T" + t[2:]
        if len(t) != 2 or t[0] not in RANKS or t[1] not in SUITS:
            raise CardError(
                f"malformed card {shown(text)}: expected a rank of {' '.join(RANKS)} "
                f"then a suit of {' '.join(SUITS)}, as in 'JH'"
            )
        return CARDS[SUITS.index(t[1]) * 8 + RANKS.index(t[0])]

    def __str__(self) -> str:
        return RANKS[self & 7] + SUITS[self >> 3]

    def __repr__(self) -> str:
        return f"Card({str(self)!r})"


CARDS: Final[tuple[Card, ...]] = tuple(int.__new__(Card, i) for i in range(32))
#: the text of each card ("7S" ... "AC"), made once: records and outcomes write every card played
CARD_TEXTS: Final[tuple[str, ...]] = tuple(RANKS[i & 7] + SUITS[i >> 3] for i in range(32))


def mask_of(cards: Iterable[int]) -> int:
    """The mask of some cards; a card given twice is an error."""
    m = 0
    for c in cards:
        if not 0 <= c < 32:
            raise CardError(f"card index {c} out of range 0..31")
        if m >> c & 1:
            raise CardError(f"card {CARDS[c]} given twice")
        m |= 1 << c
    return m


def cards_of(mask: int) -> list[Card]:
    """The cards of a mask, in index order (suit S H D C, then rank 7..A)."""
    out = []
    while mask:
        low = mask & -mask
        out.append(CARDS[low.bit_length() - 1])
        mask ^= low
    return out


def iter_bits(mask: int) -> Iterator[int]:
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def parse_cards(texts: Iterable[str] | str) -> list[Card]:
    """Parse a list of card texts, or one string of them separated by spaces."""
    items = texts.split() if isinstance(texts, str) else list(texts)
    if not all(isinstance(t, str) for t in items):
        raise CardError(f"cards must be strings such as 'JH', got {shown(items)}")
    cards = [Card.parse(t) for t in items]
    mask_of(cards)  # rejects duplicates
    return cards


def format_cards(mask: int) -> str:
    return " ".join([CARD_TEXTS[c] for c in cards_of(mask)])


def card_value(card: int, trump: int) -> int:
    """Points of one card with ``trump`` as trump suit."""
    return TRUMP_POINTS[card & 7] if card >> 3 == trump else PLAIN_POINTS[card & 7]


def card_strength(card: int, trump: int) -> int:
    """Rank of one card for winning tricks: every trump (8..15) above every plain card (0..7)."""
    return 8 + TRUMP_STRENGTH[card & 7] if card >> 3 == trump else PLAIN_STRENGTH[card & 7]


def card_points(mask: int, trump: int) -> int:
    """Card points of a set of cards with ``trump`` as trump suit (-1: none)."""
    total = 0
    for s in range(4):
        b = (mask >> (8 * s)) & 0xFF
        if b:
            total += TRUMP_BYTE_POINTS[b] if s == trump else PLAIN_BYTE_POINTS[b]
    return total


def beats(card: int, best: int, trump: int) -> bool:
    """Whether ``card`` takes the trick from ``best``, the card winning it so far.

    ``best`` is of the led suit or a trump (no other card can be winning). A trump beats every
    plain card and the lower trumps; a plain card beats only a lower card of its own suit.
    """
    if card >> 3 == trump:
        return best >> 3 != trump or TRUMP_STRENGTH[card & 7] > TRUMP_STRENGTH[best & 7]
    return card >> 3 == best >> 3 and PLAIN_STRENGTH[card & 7] > PLAIN_STRENGTH[best & 7]


def trick_winner(leader: int, cards: Sequence[int], trump: int) -> int:
    """The seat winning a trick led by ``leader`` (complete or in progress); -1 if it is empty.

    The highest trump wins, else the highest card of the led suit.
    """
    if not cards:
        return -1
    best_pos = 0
    for pos in range(1, len(cards)):
        if beats(cards[pos], cards[best_pos], trump):
            best_pos = pos
    return (leader + best_pos) & 3
