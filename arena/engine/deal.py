"""One deal: the distribution, the bidding, the card play, as a state machine.

The API follows OpenSpiel's: :attr:`Deal.to_act` is the seat to act,
:meth:`Deal.legal_actions` its choices (see :mod:`arena.engine.actions`),
:meth:`Deal.apply` checks and plays one, :meth:`Deal.outcome` scores a deal
that is over. Chance is outside: a deal starts from a deck (see
:func:`arena.engine.dealing.shuffle_and_cut`) or from known hands (a record).

For bots that search, :meth:`Deal.copy` is cheap and
:meth:`Deal.apply_unchecked` plays an action without validating it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from enum import StrEnum
from typing import Any, Final

from arena.engine import actions as A
from arena.engine.actions import BELOTE_WORD, BID, DECL_SHIFT, REBELOTE_WORD, format_action
from arena.engine.cards import (
    ALL_CARDS_MASK,
    BYTE_CARDS,
    CARDS,
    KING,
    PLAIN_BYTE_POINTS,
    PLAIN_POINTS,
    PLAIN_STRENGTH,
    QUEEN,
    SEVEN,
    SUIT_MASKS,
    TRUMP_ABOVE,
    TRUMP_POINTS,
    TRUMP_STRENGTH,
    cards_of,
)
from arena.engine.declarations import RANK_MASKS, Meld, compare_declarations, declaration_choices
from arena.engine.errors import CardError, IllegalActionError
from arena.engine.rules import Ruleset


class Phase(StrEnum):
    """Where a deal stands. The values are the words of records and of the SDK's ``obs.phase``."""

    BIDDING = "bidding"
    PLAY = "play"
    OVER = "over"


# Final: the compiled build keeps these in C variables instead of looking them up by name
BIDDING: Final = Phase.BIDDING
PLAY: Final = Phase.PLAY
OVER: Final = Phase.OVER

#: coinche distribution patterns (cards per packet), chosen by the seed
PACKETS: Final[tuple[tuple[int, int, int], ...]] = ((3, 3, 2), (3, 2, 3), (2, 3, 3))


_VALUE_BIDS: dict[tuple[int, int], tuple[int, ...]] = {}


def _value_bids(low: int, max_bid: int) -> tuple[int, ...]:
    """Every coinche bid from ``low`` up to ``max_bid``, then the capots (cached)."""
    key = (low, max_bid)
    bids = _VALUE_BIDS.get(key)
    if bids is None:
        values = [*range(low, max_bid + 1, 10), A.CAPOT_VALUE]
        bids = _VALUE_BIDS[key] = tuple(A.bid_action(v, s) for v in values for s in range(4))
    return bids


#: every field of a deal: its ``__slots__`` in the pure build (a compiled class has none to read)
FIELDS: Final[tuple[str, ...]] = (
    "_annonces",
    "_belote_declared",
    "_bidding_known",
    "_coinche",
    "_spoken",
    "_undertrump",
    "belote_said",
    "belote_scored",
    "belote_seat",
    "bidder",
    "bids",
    "dealer",
    "deck",
    "decl_kinds",
    "decl_points",
    "decl_shown",
    "decl_team",
    "declared",
    "hands",
    "initial_hands",
    "multiplier",
    "packets",
    "passes",
    "phase",
    "plays",
    "retourne",
    "round",
    "rules",
    "standing",
    "taker",
    "thrown_in",
    "to_act",
    "trick",
    "trick_best",
    "trick_leader",
    "trick_points",
    "trick_winner",
    "tricks",
    "tricks_won",
    "trump",
)


class Deal:
    """The whole state of one deal, hidden cards included (the referee's view)."""

    __slots__ = FIELDS

    rules: Ruleset
    dealer: int
    deck: tuple[int, ...] | None
    packets: tuple[int, int, int] | None
    retourne: int
    hands: list[int]
    initial_hands: list[int]
    phase: Phase
    to_act: int
    bids: list[int]
    round: int
    passes: int
    standing: int
    bidder: int
    multiplier: int
    trump: int
    taker: int
    thrown_in: bool
    plays: list[int]
    trick: list[int]
    trick_leader: int
    trick_winner: int
    trick_best: int
    tricks: list[tuple[int, tuple[int, ...], int]]
    trick_points: list[int]
    tricks_won: list[int]
    belote_seat: int
    belote_said: bool
    belote_scored: bool
    declared: list[tuple[Meld, ...]]
    decl_kinds: list[int]
    decl_team: int | None
    decl_points: int
    decl_shown: bool
    _bidding_known: bool
    _spoken: int
    # the options of ``rules`` that the hot paths read, as plain attributes (the ruleset is frozen)
    _coinche: bool
    _annonces: bool
    _belote_declared: bool
    _undertrump: bool

    # ------------------------------------------------------------------ setup
    def __init__(self, rules: Ruleset, dealer: int) -> None:
        if not 0 <= dealer < 4:
            raise ValueError(f"dealer must be a seat 0..3, not {dealer}")
        self.rules = rules
        self._coinche = rules.game == "coinche"  # rules.is_coinche, without a Python call
        self._annonces = rules.annonces
        self._belote_declared = rules.belote == "declared"
        self._undertrump = rules.must_undertrump
        self.dealer = dealer
        self.deck = None
        self.packets = None
        self.retourne = -1
        self.hands = [0, 0, 0, 0]
        self.initial_hands = [0, 0, 0, 0]
        self.phase = BIDDING
        self.to_act = (dealer + 1) & 3
        self.bids = []
        self.round = 1
        self.passes = 0
        self.standing = -1
        self.bidder = -1
        self.multiplier = 1
        self.trump = -1
        self.taker = -1
        self.thrown_in = False
        self.plays = []
        self.trick = []
        self.trick_leader = -1
        self.trick_winner = -1
        self.trick_best = -1
        self.tricks = []
        self.trick_points = [0, 0]
        self.tricks_won = [0, 0]
        self.belote_seat = -1
        self.belote_said = False
        self.belote_scored = False
        self.declared = [(), (), (), ()]
        self.decl_kinds = [0, 0, 0, 0]
        self.decl_team = None
        self.decl_points = 0
        self.decl_shown = False
        self._bidding_known = True
        self._spoken = 0  # bit per seat: has spoken in the bidding

    @classmethod
    def from_deck(
        cls, rules: Ruleset, dealer: int, deck: Sequence[int],
        packets: tuple[int, int, int] = (3, 3, 2),
    ) -> Deal:
        """Deal from a deck (after the cut), first card to the seat after the dealer.

        Classic: 3 then 2 cards each, the next card turned up (the retourne);
        the rest is dealt when somebody takes. Coinche: all 32 cards in the
        given packets.
        """
        seen = 0
        for c in deck:
            if 0 <= c < 32:
                seen |= 1 << c
        if len(deck) != 32 or seen != ALL_CARDS_MASK:
            raise CardError("a deck holds each of the 32 cards once")
        d = cls(rules, dealer)
        cards = d.deck = tuple(deck)
        coinche = d._coinche
        if coinche:
            if packets not in PACKETS:
                raise ValueError(f"packets must be one of {PACKETS}, not {packets}")
            d.packets = packets
        sizes = packets if coinche else (3, 2)
        hands = d.hands
        pos = 0
        for n in sizes:
            for i in range(1, 5):
                seat = (dealer + i) & 3
                hand = hands[seat]
                for p in range(pos, pos + n):
                    hand |= 1 << cards[p]
                hands[seat] = hand
                pos += n
        if not coinche:
            d.retourne = cards[pos]
        else:
            d._start_play_hands()
        return d

    @classmethod
    def from_hands(cls, rules: Ruleset, dealer: int, hands: Sequence[int], retourne: int = -1) -> Deal:
        """A deal from the hands as the play starts (a record).

        In classic the retourne is needed and is part of the taker's hand; the
        hands during the bidding are not known, so the bidding is only checked
        for legality (a redeal on a low hand cannot be offered). Classic
        records of a thrown-in deal may give the five-card hands instead.
        """
        d = cls(rules, dealer)
        seen = 0
        for h in hands:
            if seen & h:
                raise CardError(f"card {cards_of(seen & h)[0]} is in two hands")
            seen |= h
        sizes = [h.bit_count() for h in hands]
        if len(hands) != 4:
            raise CardError(f"a deal has four hands, got {len(hands)}")
        if rules.is_coinche:
            if retourne != -1:
                raise CardError("a coinche deal has no retourne")
            if sizes != [8, 8, 8, 8]:
                raise CardError(f"each hand holds 8 cards, got {sizes}")
            d.hands = list(hands)
            d._start_play_hands()
            return d
        if not 0 <= retourne < 32:
            raise CardError("a classic deal needs its retourne")
        if sizes == [5, 5, 5, 5]:
            if seen >> retourne & 1:
                raise CardError(f"the retourne {CARDS[retourne]} is also in a hand")
            d.hands = list(hands)
        elif sizes == [8, 8, 8, 8]:
            if not seen >> retourne & 1:
                raise CardError(f"the retourne {CARDS[retourne]} is in no hand")
            d.hands = list(hands)
            d._bidding_known = False
        else:
            raise CardError(f"each hand holds 8 cards (5 in a thrown-in classic deal), got {sizes}")
        d.retourne = retourne
        return d

    def copy(self) -> Deal:
        """A cheap independent copy: lists are copied, immutable values shared."""
        c = Deal(self.rules, self.dealer)  # not Deal.__new__: a compiled Deal has no such step
        c._bidding_known = self._bidding_known
        c._spoken = self._spoken
        c.belote_said = self.belote_said
        c.belote_scored = self.belote_scored
        c.belote_seat = self.belote_seat
        c.bidder = self.bidder
        c.bids = self.bids[:]
        c.dealer = self.dealer
        c.deck = self.deck
        c.decl_kinds = self.decl_kinds[:]
        c.decl_points = self.decl_points
        c.decl_shown = self.decl_shown
        c.decl_team = self.decl_team
        c.declared = self.declared[:]
        c.hands = self.hands[:]
        c.initial_hands = self.initial_hands[:]
        c.multiplier = self.multiplier
        c.packets = self.packets
        c.passes = self.passes
        c.phase = self.phase
        c.plays = self.plays[:]
        c.retourne = self.retourne
        c.round = self.round
        c.rules = self.rules
        c.standing = self.standing
        c.taker = self.taker
        c.thrown_in = self.thrown_in
        c.to_act = self.to_act
        c.trick = self.trick[:]
        c.trick_best = self.trick_best
        c.trick_leader = self.trick_leader
        c.trick_points = self.trick_points[:]
        c.trick_winner = self.trick_winner
        c.tricks = self.tricks[:]
        c.tricks_won = self.tricks_won[:]
        c.trump = self.trump
        return c

    def __reduce__(self) -> tuple[Callable[..., Deal], tuple[Any, ...]]:
        """Pickle and ``copy`` a deal field by field, through the constructor: the same in the
        compiled build, whose class cannot be made without it."""
        return _rebuilt, (self.rules, self.dealer, tuple(getattr(self, name) for name in FIELDS))

    # ---------------------------------------------------------------- queries
    @property
    def is_over(self) -> bool:
        return self.phase is OVER

    @property
    def takers(self) -> int:
        """The takers' team (0 or 1), -1 before the contract."""
        return self.taker & 1 if self.taker >= 0 else -1

    @property
    def contract_value(self) -> int:
        return A.bid_value(self.standing) if self.standing >= 0 else 0

    @property
    def trick_number(self) -> int:
        return len(self.tricks)

    def current_winner(self) -> int:
        """The seat winning the trick in progress (-1 if it is empty)."""
        return self.trick_winner

    def legal_actions(self) -> list[int]:
        if self.phase is PLAY:
            return self._legal_plays()
        if self.phase is BIDDING:
            return self._legal_bids()
        return []

    def legal_cards(self) -> int:
        """The mask of the cards the seat to act may play (0 outside the play)."""
        return self._legal_card_mask() if self.phase is PLAY else 0

    def format_legal(self) -> list[str]:
        return [format_action(a) for a in self.legal_actions()]

    # ---------------------------------------------------------------- bidding
    def _legal_bids(self) -> list[int]:
        seat = self.to_act
        out = [A.PASS]
        if self._coinche:
            if self.multiplier == 1:
                low = self.contract_value + 10 if self.standing >= 0 else 80
                if low <= A.CAPOT_VALUE:
                    out.extend(_value_bids(low, self.rules.max_bid))
                if self.standing >= 0 and (self.bidder ^ seat) & 1:
                    out.append(A.COINCHE)
            elif self.multiplier == 2 and not (self.bidder ^ seat) & 1:
                out.append(A.SURCOINCHE)
        elif not self._bidding_known and not self.hands[seat] >> self.retourne & 1:
            pass  # dealt from the hands as the play starts: only the retourne's holder took
        elif self.round == 1:
            out.append(A.TAKE)
        else:
            rs = self.retourne >> 3
            out.extend(A.CHOOSE + s for s in range(4) if s != rs)
        if self._may_redeal(seat):
            out.append(A.REDEAL)
        return out

    def _may_redeal(self, seat: int) -> bool:
        r = self.rules
        if not (r.redeal_low_hand or r.redeal_four_sevens) or not self._bidding_known:
            return False
        if self._spoken >> seat & 1 or self.standing >= 0:
            return False
        hand = self.hands[seat]
        if r.redeal_four_sevens and hand & RANK_MASKS[SEVEN] == RANK_MASKS[SEVEN]:
            return True
        if r.redeal_low_hand:
            rs = self.retourne >> 3
            points = sum(PLAIN_BYTE_POINTS[(hand >> (8 * s)) & 0xFF] for s in range(4))
            return not hand & SUIT_MASKS[rs] and points < 11
        return False

    def _apply_bid(self, action: int) -> None:
        seat = self.to_act
        self.bids.append(action)
        self._spoken |= 1 << seat
        if action == A.REDEAL:
            self._throw_in()
            return
        if self._coinche:
            if action == A.PASS:
                self.passes += 1
                if self.standing < 0:
                    if self.passes == 4:
                        self._throw_in()
                        return
                elif self.passes == 3:
                    self._set_contract(self.bidder, A.bid_suit(self.standing))
                    return
            elif action == A.COINCHE:
                self.multiplier = 2
                self.passes = 0
            elif action == A.SURCOINCHE:
                self.multiplier = 4
                self._set_contract(self.bidder, A.bid_suit(self.standing))
                return
            else:
                self.standing = action
                self.bidder = seat
                self.passes = 0
        else:
            if action == A.PASS:
                self.passes += 1
                if self.passes == 4:
                    self.round = 2
                elif self.passes == 8:
                    self._throw_in()
                    return
            elif action == A.TAKE:
                self._set_contract(seat, self.retourne >> 3)
                self._complete_classic_hands()
                return
            else:
                self._set_contract(seat, action - A.CHOOSE)
                self._complete_classic_hands()
                return
        self.to_act = (seat + 1) & 3

    def _set_contract(self, seat: int, trump: int) -> None:
        self.taker = seat
        self.trump = trump
        if not self._coinche:
            self.bidder = seat
        if self._coinche:
            self._start_play()

    def _complete_classic_hands(self) -> None:
        """The taker gets the retourne and 2 more cards, the others 3 each."""
        if self.deck is not None and self._bidding_known:
            pos = 21
            for i in range(1, 5):
                seat = (self.dealer + i) & 3
                n = 2 if seat == self.taker else 3
                for c in self.deck[pos:pos + n]:
                    self.hands[seat] |= 1 << c
                pos += n
            self.hands[self.taker] |= 1 << self.retourne
        elif self._bidding_known:
            raise CardError("a classic deal given by its 5-card hands cannot be played")
        self._start_play_hands()
        self._start_play()

    def _throw_in(self) -> None:
        self.thrown_in = True
        self.phase = OVER
        self.to_act = -1

    def _start_play_hands(self) -> None:
        self.initial_hands = self.hands[:]

    def _start_play(self) -> None:
        self.phase = PLAY
        self.to_act = self.trick_leader = (self.dealer + 1) & 3
        t = self.trump
        k, q = 1 << (8 * t + KING), 1 << (8 * t + QUEEN)
        for seat in range(4):
            if self.hands[seat] & k and self.hands[seat] & q:
                self.belote_seat = seat

    # ------------------------------------------------------------------- play
    def _legal_card_mask(self) -> int:
        seat = self.to_act
        hand = self.hands[seat]
        if not self.trick:
            return hand
        t = self.trump
        tshift = 8 * t
        led = self.trick[0] >> 3
        trumps = hand & SUIT_MASKS[t]
        best = self.trick_best
        if led == t:
            if not trumps:
                return hand
            higher = trumps & (TRUMP_ABOVE[best & 7] << tshift)
            return higher or trumps
        following = hand & SUIT_MASKS[led]
        if following:
            return following
        if self.trick_winner == (seat ^ 2) or not trumps:
            return hand
        if best >> 3 == t:
            higher = trumps & (TRUMP_ABOVE[best & 7] << tshift)
            if higher:
                return higher
            return trumps if self._undertrump else hand
        return trumps

    def _legal_plays(self) -> list[int]:
        mask = self._legal_card_mask()
        out: list[int] = []
        for s in range(4):
            b = (mask >> (8 * s)) & 0xFF
            if b:
                out += BYTE_CARDS[s][b]
        seat = self.to_act
        if seat == self.belote_seat and self._belote_declared:
            t8 = 8 * self.trump
            k, q = t8 + KING, t8 + QUEEN
            hand = self.hands[seat]
            both = hand >> k & 1 and hand >> q & 1
            extra = []
            for c in out:
                if c in (k, q):
                    if both:
                        extra.append(c | BELOTE_WORD)
                    elif self.belote_said:
                        extra.append(c | REBELOTE_WORD)
            out.extend(extra)
        if self._annonces and not self.tricks:
            choices = declaration_choices(self.hands[seat], self.trump)
            if len(choices) > 1:
                out = [a | code << DECL_SHIFT for code in sorted(choices) for a in out]
        return out

    def _apply_play(self, action: int) -> None:
        seat = self.to_act
        card = action & 31
        self.plays.append(action)
        hands = self.hands
        hands[seat] = hands[seat] & ~(1 << card)  # not &=: compiled, a native int operation
        t = self.trump
        suit = card >> 3
        rank = card & 7
        trick = self.trick
        if not trick:
            self.trick_winner = seat
            self.trick_best = card
            if len(self.tricks) == 1 and self._annonces:
                self._show_declarations()
        else:
            # cards.beats(card, best, t), inlined: this is the hot path of every rollout
            best = self.trick_best
            bsuit = best >> 3
            if suit == t:
                if bsuit != t or TRUMP_STRENGTH[rank] > TRUMP_STRENGTH[best & 7]:
                    self.trick_winner = seat
                    self.trick_best = card
            elif suit == bsuit and PLAIN_STRENGTH[rank] > PLAIN_STRENGTH[best & 7]:
                self.trick_winner = seat
                self.trick_best = card
        trick.append(card)
        if seat == self.belote_seat and suit == t and (rank in (KING, QUEEN)):
            self._belote_card(seat, action)
        if not self.tricks and self._annonces:
            code = action >> DECL_SHIFT
            self.decl_kinds[seat] = code
            if code:
                self.declared[seat] = declaration_choices(self.hands[seat] | (1 << card), t)[code]
        if len(trick) == 4:
            winner = self.trick_winner
            pts = 0
            for c in trick:
                pts += TRUMP_POINTS[c & 7] if c >> 3 == t else PLAIN_POINTS[c & 7]
            team = winner & 1
            tricks = self.tricks
            tricks.append((self.trick_leader, tuple(trick), winner))
            won = self.tricks_won
            won[team] = won[team] + 1
            points = self.trick_points
            if len(tricks) == 8:
                points[team] = points[team] + pts + 10
                self.phase = OVER
                self.to_act = -1
                self.trick = []
                return
            points[team] = points[team] + pts
            self.trick = []
            self.trick_leader = self.to_act = winner
            self.trick_winner = -1
            self.trick_best = -1
        else:
            self.to_act = (seat + 1) & 3

    def _belote_card(self, seat: int, action: int) -> None:
        other = 8 * self.trump + (KING + QUEEN - (action & 7))
        first = self.hands[seat] >> other & 1
        if not self._belote_declared:
            if not first:
                self.belote_scored = True
        elif first:
            self.belote_said = bool(action & BELOTE_WORD)
        else:
            self.belote_scored = self.belote_said and bool(action & REBELOTE_WORD)

    def _show_declarations(self) -> None:
        self.decl_team, self.decl_points = compare_declarations(self.declared)
        self.decl_shown = True

    # ---------------------------------------------------------------- actions
    def apply(self, action: int) -> None:
        """Check that ``action`` is legal for the seat to act, then play it."""
        legal = self.legal_actions()
        if action not in legal:
            raise IllegalActionError(
                format_action(action) if action >= 0 else str(action),
                self.to_act,
                [format_action(a) for a in legal],
                self._why_illegal(action),
            )
        self.apply_unchecked(action)

    def apply_unchecked(self, action: int) -> None:
        """Play ``action`` without checking it: for search, on actions from :meth:`legal_actions`."""
        if action >= BID:
            self._apply_bid(action)
        else:
            self._apply_play(action)

    def _why_illegal(self, action: int) -> str:
        if self.phase == OVER:
            return "the deal is over"
        if self.phase == BIDDING and action < BID:
            return "the bidding is not over"
        if (self.phase == BIDDING and not self._bidding_known
                and (action == A.TAKE or A.CHOOSE <= action < A.CHOOSE + 4)):
            return (f"in the recorded hands the retourne {CARDS[self.retourne]} is not in seat "
                    f"{self.to_act}'s hand, so that seat did not take")
        if self.phase == PLAY and action >= BID:
            return "the card play has started"
        if self.phase == PLAY:
            card = action & 31
            if not self.hands[self.to_act] >> card & 1:
                return f"seat {self.to_act} does not hold {CARDS[card]}"
            if action & (BELOTE_WORD | REBELOTE_WORD) and self.rules.belote == "automatic":
                return "belote is automatic under this ruleset: play the card without words"
            if action >> DECL_SHIFT and not self.rules.annonces:
                return "declarations are off under this ruleset"
        return ""

    # ---------------------------------------------------------------- scoring
    def belote_team(self) -> int | None:
        """The team credited with belote-rebelote (known once both cards are played)."""
        return self.belote_seat & 1 if self.belote_scored else None

    def shown_melds(self) -> list[int]:
        """Each seat's declared melds as one card mask: the scoring team's, once shown (0 otherwise)."""
        melds = [0, 0, 0, 0]
        if self.decl_shown and self.decl_team is not None:
            for s in range(4):
                if s & 1 == self.decl_team:
                    for m in self.declared[s]:
                        melds[s] |= m.mask
        return melds

    def played_mask(self) -> int:
        m = 0
        for a in self.plays:
            m |= 1 << (a & 31)
        return m


def _rebuilt(rules: Ruleset, dealer: int, values: tuple[Any, ...]) -> Deal:
    """The deal of :meth:`Deal.__reduce__`."""
    deal = Deal(rules, dealer)
    for name, value in zip(FIELDS, values, strict=True):
        setattr(deal, name, value)
    return deal
