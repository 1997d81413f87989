"""Checking that a tournament's deals followed from the secret it committed to.

When a tournament is created, the node publishes the SHA-256 of the
tournament's secret (its *commitment*); when it is over, it reveals the
secret. Every match seed is the HMAC-SHA256 of the match's pairing under
the secret (:func:`arena.engine.dealing.derive_seed`, over the pairing's
place ``r{round}-{board}``, or a field quartet's board set ``r{round}-{board}-s{set}``:
:func:`arena.tournament.tables.seed_label`), and every deck of a
match follows from its seed. So anyone holding the commitment, the secret and
the records can check that nobody, the operator included, chose the deals:
:func:`verify_tournament` does, record by record.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from arena.engine import EngineError, Ruleset
from arena.engine.cards import CARDS
from arena.engine.dealing import commitment, deal_from_rng, deal_rng, derive_seed, first_dealer
from arena.records import MatchRecord
from arena.tournament.tables import seed_label


@dataclass
class Verification:
    """What was checked, and every problem found (none: the deals are the committed ones)."""

    matches: int = 0
    deals: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def dealt_from_seed(record: MatchRecord) -> str:
    """The first deal of ``record`` whose deck is not the one its seed deals ("" if none).

    Deal ``i`` is dealt by seat ``(first_dealer(seed) + i) % 4`` from
    ``deal_rng(seed, i)``: the shuffle, the cut and, in coinche, the packets.
    """
    rules = Ruleset.from_spec(record.ruleset)
    dealer = first_dealer(record.seed)
    deals = list(record.deals)
    if record.unfinished_deal is not None:
        deals.append(record.unfinished_deal)
    for i, recorded in enumerate(deals):
        expected = deal_from_rng(rules, (dealer + i) & 3, deal_rng(record.seed, i))
        if recorded.get("dealer") != expected.dealer:
            return f"deal {i}: dealt by seat {recorded.get('dealer')}, the seed says seat {expected.dealer}"
        deck = [str(CARDS[c]) for c in expected.deck or ()]
        if recorded.get("deck") != deck:
            return f"deal {i}: its deck is not the one the seed deals"
        if expected.packets is not None and list(recorded.get("packets", [])) != list(expected.packets):
            return f"deal {i}: its packets are not the ones the seed deals"
    return ""


def verify_tournament(
    tournament_id: str, secret: str, committed: str, records: Iterable[MatchRecord], *, replay: bool = True,
) -> Verification:
    """Check ``secret`` against the ``committed`` hash, then every record's seed and decks (and,
    with ``replay``, that every recorded action was legal)."""
    out = Verification()
    if commitment(secret) != committed.strip().lower():
        out.problems.append("the revealed secret does not hash to the commitment")
    for record in records:
        out.matches += 1
        expected = derive_seed(secret, seed_label(tournament_id, record.match_id))
        if not record.deals and record.unfinished_deal is None:
            continue  # forfeited before any card was dealt (an absent bot): nothing to check
        out.deals += len(record.deals)
        if str(record.seed) != expected:
            out.problems.append(f"{record.match_id}: its seed is not the one the secret gives")
            continue
        try:
            wrong = dealt_from_seed(record)
            if not wrong and replay and record.deals:
                record.replay(deals=record.deals_played)
        except EngineError as e:
            wrong = f"its record does not replay: {e}"
        if wrong:
            out.problems.append(f"{record.match_id}: {wrong}")
    return out
