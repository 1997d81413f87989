"""Observations: what one seat may know when it must act, and its legal answers.

An :class:`Observation` wraps one ``ActionRequest``: the seat's own hand, the
public history of the deal, the scores and the legal actions, with cards as
:class:`arena.engine.Card` (an ``int`` 0..31 that prints as ``"JH"``).

Suits are letters here (``"S" "H" "D" "C"``): :attr:`Observation.trump`,
:attr:`Action.suit`. The engine's :attr:`Card.suit` is the suit's index 0..3
(the index of its letter in ``SUITS``); :meth:`Observation.is_trump` spares
the comparison.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from functools import cached_property
from typing import NamedTuple

from belote.arena.v1 import bot_service_pb2, game_pb2

from arena.engine import actions as A
from arena.engine.actions import DECL_KINDS, parse_action
from arena.engine.cards import CARDS, SUITS, Card, beats, cards_of, trick_winner
from arena.engine.cards import card_strength as engine_card_strength
from arena.engine.cards import card_value as engine_card_value
from arena.engine.deal import Phase
from arena.engine.declarations import shown_melds as engine_shown_melds
from arena.engine.errors import ActionError
from arena.engine.observation import Observation as EngineObservation
from belote_bot.action import Action

__all__ = ["Observation", "ShownMeld", "Trick", "shown_melds"]

_PHASE_NAMES = {
    game_pb2.PHASE_BIDDING: "bidding",
    game_pb2.PHASE_PLAY: "play",
    game_pb2.PHASE_OVER: "over",
}


class Trick(NamedTuple):
    """A completed trick: its leader, its four cards in playing order, its winner."""

    leader: int
    cards: tuple[Card, ...]
    winner: int

    @property
    def by_seat(self) -> tuple[tuple[int, Card], ...]:
        """(seat, card) in playing order."""
        return tuple(((self.leader + i) & 3, c) for i, c in enumerate(self.cards))


class ShownMeld(NamedTuple):
    """A meld shown by the scoring side after the first card of trick 2."""

    seat: int
    #: "tierce", "cinquante", "cent" or "carre"
    kind: str
    cards: tuple[Card, ...]
    points: int
    mask: int


def shown_melds(seat_masks: Iterable[int], team: int | None, trump: int = -1) -> list[ShownMeld]:
    """The melds shown by ``team``, from the shown cards of each seat (one mask per seat)."""
    if team is None:
        return []
    return [
        ShownMeld(seat, DECL_KINDS[m.kind], tuple(cards_of(m.mask)), m.points, m.mask)
        for seat, seat_mask in enumerate(seat_masks)
        if seat & 1 == team
        for m in engine_shown_melds(seat_mask, trump)
    ]


def _pair(values: Iterable[int]) -> tuple[int, int]:
    v = list(values)
    return (v[0] if v else 0, v[1] if len(v) > 1 else 0)


class Observation:
    """One decision of one seat: what it may know and what it may answer.

    Built from the ``ActionRequest`` the referee sent (:attr:`raw`); every
    field is computed on first use. :meth:`to_engine` gives the engine's
    :class:`arena.engine.Observation`, equal to ``arena.engine.observe(deal,
    seat)``, for engine-level players and searchers.
    """

    def __init__(self, request: bot_service_pb2.ActionRequest, received_at: float | None = None) -> None:
        self.raw = request
        self.proto: game_pb2.Observation = request.observation
        #: ``time.monotonic()`` when the request was read
        self.received_at = time.monotonic() if received_at is None else received_at

    @classmethod
    def from_proto(
        cls, observation: game_pb2.Observation, legal_actions: Iterable[int], *, request_id: int = 0,
        match_id: str = "", deadline_ms: int = 0, time_bank_ms: int = 0, last_round_trip_us: int = 0,
    ) -> Observation:
        """An observation from its parts (tests, replays); the request is built around them."""
        return cls(bot_service_pb2.ActionRequest(
            request_id=request_id, match_id=match_id, seat=observation.seat, observation=observation,
            legal_actions=list(legal_actions), deadline_ms=deadline_ms, time_bank_ms=time_bank_ms,
            last_round_trip_us=last_round_trip_us,
        ))

    def __repr__(self) -> str:
        hand = " ".join(map(str, self.hand))
        legal = " | ".join(map(str, self.legal_actions))
        return (f"Observation(match={self.match_id!r}, deal={self.deal_index}, seat={self.seat}, "
                f"phase={self.phase!r}, hand='{hand}', legal='{legal}')")

    # ------------------------------------------------------------ request
    @property
    def request_id(self) -> int:
        return self.raw.request_id

    @property
    def match_id(self) -> str:
        return self.raw.match_id

    @property
    def deadline_ms(self) -> int:
        """Time for this decision before the time bank is drawn on."""
        return self.raw.deadline_ms

    @property
    def time_bank_ms(self) -> int:
        return self.raw.time_bank_ms

    @property
    def last_round_trip_us(self) -> int:
        """The round trip of this seat's previous answer as the referee measured it."""
        return self.raw.last_round_trip_us

    def time_left(self) -> float:
        """Seconds left before the deadline and the time bank are both spent (network not counted)."""
        budget = (self.raw.deadline_ms + self.raw.time_bank_ms) / 1000
        return budget - (time.monotonic() - self.received_at)

    # --------------------------------------------------------------- seats
    @property
    def seat(self) -> int:
        return self.proto.seat

    @property
    def team(self) -> int:
        """0 for seats 0 and 2, 1 for seats 1 and 3."""
        return self.proto.seat & 1

    @property
    def partner(self) -> int:
        return self.proto.seat ^ 2

    @property
    def dealer(self) -> int:
        return self.proto.dealer

    @cached_property
    def phase(self) -> str:
        """"bidding", "play" or "over"."""
        return _PHASE_NAMES.get(self.proto.phase, "over")

    @property
    def deal_index(self) -> int:
        return self.proto.deal_index

    # ---------------------------------------------------------------- hand
    @cached_property
    def hand(self) -> list[Card]:
        """The seat's own cards now, by suit (S H D C) then rank (7..A)."""
        return cards_of(self.proto.hand)

    @property
    def hand_mask(self) -> int:
        return self.proto.hand

    @cached_property
    def legal_actions(self) -> list[Action]:
        return [Action.of(code) for code in self.raw.legal_actions]

    @cached_property
    def legal_codes(self) -> frozenset[int]:
        return frozenset(self.raw.legal_actions)

    @cached_property
    def legal_cards(self) -> list[Card]:
        """The cards this seat may play (empty in the bidding)."""
        mask = 0
        for code in self.raw.legal_actions:
            if code < A.BID:
                mask |= 1 << (code & A.CARD_FIELD)
        return cards_of(mask)

    def is_legal(self, action: Action | str | int) -> bool:
        if isinstance(action, str):
            try:
                action = parse_action(action)
            except ActionError:
                return False
        return int(action) in self.legal_codes

    def play(self, card: Card | str, *, words: bool = True) -> Action:
        """The legal action playing ``card``.

        With ``words`` it says belote or rebelote when it may and announces the
        declaration kinds of the highest code (most of the highest kinds), as
        the built-in heuristic does; without, the bare card.
        """
        c = Card.parse(card) if isinstance(card, str) else card
        choices = [a for a in self.raw.legal_actions if a < A.BID and a & A.CARD_FIELD == c]
        if not choices:
            legal = " ".join(map(str, self.legal_cards)) or "none"
            raise ActionError(f"{c} is not a legal card for seat {self.seat}; legal: {legal}")
        return Action.of(max(choices, key=lambda a: a >> 5) if words else min(choices))

    # ---------------------------------------------------------- the bidding
    @cached_property
    def retourne(self) -> Card | None:
        """Classic: the turned-up card (public); None in coinche."""
        return CARDS[self.proto.retourne] if self.proto.HasField("retourne") else None

    @cached_property
    def bids(self) -> list[tuple[int, Action]]:
        """Every bid so far as (seat, bid), from the seat after the dealer."""
        first = self.proto.dealer + 1
        return [((first + i) & 3, Action.of(code)) for i, code in enumerate(self.proto.bids)]

    @cached_property
    def trump_index(self) -> int | None:
        """The trump suit as an index 0..3 (like ``Card.suit``) once the contract is known."""
        return self.proto.trump if self.proto.HasField("trump") else None

    @property
    def trump(self) -> str | None:
        """The trump suit's letter once the contract is known."""
        t = self.trump_index
        return None if t is None else SUITS[t]

    @property
    def _trump(self) -> int:
        """The engine's trump: the suit's index, -1 before the contract."""
        return -1 if self.trump_index is None else self.trump_index

    def is_trump(self, card: Card | int) -> bool:
        return self.trump_index is not None and card >> 3 == self.trump_index

    @cached_property
    def taker(self) -> int | None:
        return self.proto.taker if self.proto.HasField("taker") else None

    @property
    def contract_value(self) -> int:
        """Coinche: the contract (or standing bid) value, 250 for capot; 0 in classic."""
        return self.proto.contract_value

    @property
    def multiplier(self) -> int:
        """1, 2 after a coinche, 4 after a surcoinche."""
        return self.proto.multiplier or 1

    # ------------------------------------------------------------ the play
    @cached_property
    def _play_layout(self) -> tuple[list[Trick], int, list[tuple[int, Card]], list[tuple[int, Action]]]:
        """Completed tricks, the current leader, the current trick, and every play with its seat."""
        plays = list(self.proto.plays)
        winners = list(self.proto.trick_winners)
        leader = (self.proto.dealer + 1) & 3
        tricks: list[Trick] = []
        seated: list[tuple[int, Action]] = []
        for i, code in enumerate(plays):
            k, pos = divmod(i, 4)
            if pos == 0 and k:
                leader = winners[k - 1] if k - 1 < len(winners) else leader
            seated.append(((leader + pos) & 3, Action.of(code)))
        for k, winner in enumerate(winners):
            lead = winners[k - 1] if k else (self.proto.dealer + 1) & 3
            cards = tuple(CARDS[a & A.CARD_FIELD] for a in plays[4 * k:4 * k + 4])
            tricks.append(Trick(lead, cards, winner))
        done = len(winners)
        current_leader = winners[-1] if winners else (self.proto.dealer + 1) & 3
        current = [((current_leader + i) & 3, CARDS[a & A.CARD_FIELD])
                   for i, a in enumerate(plays[4 * done:])]
        return tricks, current_leader, current, seated

    @property
    def plays(self) -> list[tuple[int, Action]]:
        """Every card played so far as (seat, action with its words), in playing order."""
        return self._play_layout[3]

    @property
    def tricks(self) -> list[Trick]:
        """The completed tricks."""
        return self._play_layout[0]

    @property
    def trick(self) -> list[tuple[int, Card]]:
        """The trick in progress as (seat, card), in playing order."""
        return self._play_layout[2] if self.phase == "play" else []

    @property
    def trick_leader(self) -> int | None:
        """The seat that led (or leads) the trick in progress; None outside the play."""
        return self._play_layout[1] if self.phase == "play" else None

    @cached_property
    def trick_winner(self) -> int | None:
        """The seat winning the trick in progress so far; None when no card of it is played."""
        current = self.trick
        if not current:
            return None
        trump = self._trump
        return trick_winner(current[0][0], [c for _, c in current], trump)

    # ---------------------------------------------------------- card values
    def card_points(self, card: Card | str) -> int:
        """What ``card`` is worth in this deal: 20 for the jack of trump, 11 for a plain ace, ..."""
        c = Card.parse(card) if isinstance(card, str) else card
        return engine_card_value(c, self._trump)

    def card_strength(self, card: Card | str) -> int:
        """How strong ``card`` is in a trick: 8..15 for trumps (jack highest), 0..7 for plain cards
        (ace highest). Only cards of the led suit or trumps can win a trick."""
        c = Card.parse(card) if isinstance(card, str) else card
        return engine_card_strength(c, self._trump)

    def wins_trick(self, card: Card | str) -> bool:
        """Whether playing ``card`` now would make this seat the winner of the trick so far
        (always True when leading); the seats after it may still take it back."""
        c = Card.parse(card) if isinstance(card, str) else card
        current = self.trick
        if not current:
            return True
        winner = self.trick_winner
        assert winner is not None
        best = dict(current)[winner]
        return beats(c, best, self._trump)

    @cached_property
    def played_cards(self) -> list[Card]:
        """Every card played so far, by suit then rank."""
        mask = 0
        for a in self.proto.plays:
            mask |= 1 << (a & A.CARD_FIELD)
        return cards_of(mask)

    @cached_property
    def trick_points(self) -> tuple[int, int]:
        """Trick points taken by team 0 and team 1 so far."""
        return _pair(self.proto.trick_points)

    # --------------------------------------------------------- declarations
    @cached_property
    def declarations_team(self) -> int | None:
        """The team whose declarations score, once shown (after the first card of trick 2)."""
        return self.proto.declarations_team if self.proto.HasField("declarations_team") else None

    @cached_property
    def shown_declarations(self) -> list[ShownMeld]:
        """The melds of the side whose declarations score, once shown (empty before)."""
        return shown_melds(self.proto.shown_melds, self.declarations_team, self._trump)

    # --------------------------------------------------------------- match
    @cached_property
    def match_score(self) -> tuple[int, int]:
        """The match score of team 0 and team 1 before this deal."""
        return _pair(self.proto.match_score)

    @property
    def held(self) -> int:
        """Classic litige points held for the next played deal."""
        return self.proto.held

    # -------------------------------------------------------------- engine
    @cached_property
    def to_act(self) -> int:
        """The seat to act (this seat, in a request), -1 when the deal is over."""
        phase = self.phase
        if phase == "bidding":
            return (self.proto.dealer + 1 + len(self.proto.bids)) & 3
        if phase == "play":
            return (self._play_layout[1] + len(self._play_layout[2])) & 3
        return -1

    def to_engine(self) -> EngineObservation:
        """The engine's observation, equal to ``arena.engine.observe(deal, seat, match_score, held)``."""
        o = self.proto
        phase = self.phase
        tricks, leader, current, _ = self._play_layout
        if phase == "play":
            trick_leader = leader
        elif phase == "over" and tricks:
            trick_leader = tricks[-1].leader
        else:
            trick_leader = -1
        return EngineObservation(
            seat=o.seat,
            dealer=o.dealer,
            phase=Phase(phase),
            to_act=self.to_act,
            hand=o.hand,
            retourne=o.retourne if o.HasField("retourne") else -1,
            bids=tuple(o.bids),
            plays=tuple(o.plays),
            trump=o.trump if o.HasField("trump") else -1,
            taker=o.taker if o.HasField("taker") else -1,
            contract_value=o.contract_value,
            multiplier=o.multiplier or 1,
            trick_leader=trick_leader,
            trick=tuple(int(c) for _, c in current) if phase == "play" else (),
            trick_winner=self.trick_winner if self.trick_winner is not None else -1,
            tricks=tuple((t.leader, tuple(int(c) for c in t.cards), t.winner) for t in tricks),
            trick_points=self.trick_points,
            shown_declarations=tuple((m.seat, m.mask) for m in self.shown_declarations),
            declarations_team=self.declarations_team,
            legal_actions=tuple(self.raw.legal_actions),
            match_score=self.match_score,
            held=o.held,
        )
