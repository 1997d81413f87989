"""Chance: the seeded shuffle, the cut and the coinche packets.

Everything random in a match derives from the match seed through
:func:`deal_rng`, a private ``random.Random`` per deal, so a match replays
identically and no global random state is touched.
"""

from __future__ import annotations

import hashlib
import hmac
import random
from collections.abc import Callable
from typing import Final

from arena.engine.deal import PACKETS, Deal
from arena.engine.rules import Ruleset


def deal_rng(match_seed: int | str, index: int) -> random.Random:
    """The random source of deal ``index`` of the match with ``match_seed``.

    Seeding with a string hashes it with SHA-512 (``random`` version 2), which
    is the same on every platform and Python version.
    """
    return random.Random(f"belote-arena/{match_seed}/{index}")


def derive_seed(secret: str, label: str) -> str:
    """A match seed derived from a secret: HMAC-SHA256 over ``label`` (a match or pair id), as hex.

    Knowing the seeds of some matches (their records are public once over)
    tells nothing of the secret, nor of the seeds of the other matches.
    """
    return hmac.new(secret.encode(), label.encode(), hashlib.sha256).hexdigest()


def commitment(secret: str) -> str:
    """The SHA-256 (hex) of a secret: published first, it lets anyone check the secret revealed later."""
    return hashlib.sha256(secret.encode()).hexdigest()


def first_dealer(match_seed: int | str) -> int:
    return random.Random(f"belote-arena/{match_seed}/dealer").randrange(4)


def _below(getrandbits: Callable[[int], int], n: int) -> int:
    """A random int in ``[0, n)``: ``random.Random._randbelow`` (``getrandbits`` until below ``n``)."""
    k = n.bit_length()
    r = getrandbits(k)
    while r >= n:
        r = getrandbits(k)
    return r


def _shuffled_and_cut(rng: random.Random, cut_min: int) -> list[int]:
    """What ``shuffle_and_cut`` does with ``rng.shuffle`` and ``rng.randint``, drawn the same way
    from the same generator (CPython's algorithm) without their Python-level calls per card."""
    deck = list(range(32))
    getrandbits = rng.getrandbits
    for i in range(31, 0, -1):
        j = _below(getrandbits, i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    cut = cut_min + _below(getrandbits, 33 - 2 * cut_min)
    return deck[cut:] + deck[:cut]


def _by_the_book(rng: random.Random, cut_min: int) -> list[int]:
    deck = list(range(32))
    rng.shuffle(deck)
    cut = rng.randint(cut_min, 32 - cut_min)
    return deck[cut:] + deck[:cut]


def _same_draws() -> bool:
    """Whether :func:`_shuffled_and_cut` and :func:`_below` draw as ``random.Random`` does here:
    the same decks, the same choice, and the generators left in the same state."""
    for i, cut_min in enumerate((3, 2, 1, 16, 3, 3, 3, 3)):
        ours, theirs = random.Random(f"check/{i}"), random.Random(f"check/{i}")
        if _shuffled_and_cut(ours, cut_min) != _by_the_book(theirs, cut_min):
            return False
        if _below(ours.getrandbits, 3) != theirs.choice(range(3)) or ours.random() != theirs.random():
            return False
    return True


#: checked once at import, so that a Python whose ``random`` draws differently keeps its own methods
_FAST_DRAWS: Final = _same_draws()


def shuffle_and_cut(rng: random.Random, cut_min: int) -> list[int]:
    """A shuffled deck cut once, each pile holding at least ``cut_min`` cards.

    The deck is ``rng.shuffle`` of the 32 cards, cut at ``rng.randint(cut_min, 32 - cut_min)``; for a
    plain ``random.Random`` the same draws are made inline, which is what makes dealing cheap.
    """
    if _FAST_DRAWS and type(rng) is random.Random and 1 <= cut_min <= 16:
        return _shuffled_and_cut(rng, cut_min)
    return _by_the_book(rng, cut_min)


def deal_from_rng(rules: Ruleset, dealer: int, rng: random.Random) -> Deal:
    """Shuffle, cut and distribute a new deal."""
    deck = shuffle_and_cut(rng, rules.cut_min)
    if not rules.is_coinche:
        packets = (3, 3, 2)
    elif _FAST_DRAWS and type(rng) is random.Random:
        packets = PACKETS[_below(rng.getrandbits, 3)]  # rng.choice(PACKETS)
    else:
        packets = rng.choice(PACKETS)
    return Deal.from_deck(rules, dealer, deck, packets)
