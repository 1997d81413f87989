"""Chance: the seeded shuffle, the cut and the coinche packets.

Everything random in a match derives from the match seed through
:func:`deal_rng`, a private ``random.Random`` per deal, so a match replays
identically and no global random state is touched.
"""

from __future__ import annotations

import hashlib
import hmac
import random

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


def shuffle_and_cut(rng: random.Random, cut_min: int) -> list[int]:
    """A shuffled deck cut once, each pile holding at least ``cut_min`` cards."""
    deck = list(range(32))
    rng.shuffle(deck)
    cut = rng.randint(cut_min, 32 - cut_min)
    return deck[cut:] + deck[:cut]


def deal_from_rng(rules: Ruleset, dealer: int, rng: random.Random) -> Deal:
    """Shuffle, cut and distribute a new deal."""
    deck = shuffle_and_cut(rng, rules.cut_min)
    packets = rng.choice(PACKETS) if rules.is_coinche else (3, 3, 2)
    return Deal.from_deck(rules, dealer, deck, packets)
