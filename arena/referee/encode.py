"""Observations and action requests serialized by hand, a deal's lists encoded as they grow.

:func:`arena.referee.convert.observation_to_proto` builds a seat's observation
as a message (from :func:`arena.engine.observe`) and protobuf serializes it:
about 7 us a decision, the largest part of the referee's own work. The bytes
are simple (a few varints, fixed32 masks and packed lists), and most of them
repeat from one decision to the next: the bids, the cards played and the
trick winners only grow during a deal. :class:`DealEncoder` keeps those lists
encoded and appends what was added since the last decision, and writes the
rest of the fields, in field-number order as protobuf does, from the same
fields of the deal that ``observe`` reads: the public state and the hand of
the seat asked, nothing else (so no other seat's card can reach the wire
through it either). The bytes are those of ``observation_to_proto(...)[0]
.SerializeToString()``: tests/referee/test_encode.py compares them at every
decision of every seat over random deals of each preset.
"""

from __future__ import annotations

from arena.engine import Deal
from arena.engine.deal import BIDDING, PLAY

#: Observation's fields: the tags (field number << 3 | wire type) as bytes
_SEAT, _DEALER, _PHASE, _HAND, _RETOURNE = b"\x08", b"\x10", b"\x18", b"\x25", b"\x28"
_BIDS, _PLAYS, _WINNERS, _TRUMP, _TAKER = b"\x32", b"\x3a", b"\x42", b"\x48", b"\x50"
_CONTRACT, _MULTIPLIER, _POINTS, _MELDS, _DECL_TEAM = b"\x58", b"\x60", b"\x6a", b"\x72", b"\x78"
_MATCH_SCORE, _HELD, _DEAL_INDEX = b"\x82\x01", b"\x88\x01", b"\x90\x01"
#: the Phase enum's numbers (game.proto): bidding, play, over
_PHASE_BYTES = {BIDDING: b"\x18\x01", PLAY: b"\x18\x02"}
_PHASE_OVER = b"\x18\x03"
#: ActionRequest's fields (bot_service.proto)
_REQUEST_ID, _MATCH_ID, _REQ_SEAT, _OBSERVATION, _LEGAL = b"\x08", b"\x12", b"\x18", b"\x22", b"\x2a"
_DEADLINE, _BANK, _RTT = b"\x30", b"\x38", b"\x40"

#: the varints of the small numbers, made once (actions, seats, points, counts)
_SMALL = [bytes((i,)) if i < 0x80 else bytes((i & 0x7F | 0x80, i >> 7)) for i in range(1 << 14)]


def varint(value: int) -> bytes:
    """``value`` (0 to 2**64 - 1) as a protobuf varint."""
    if value < 16384:
        return _SMALL[value]
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _packed(tag: bytes, data: bytes) -> bytes:
    return tag + varint(len(data)) + data if data else b""


def _uint(tag: bytes, value: int) -> bytes:
    """A proto3 scalar: absent when zero."""
    return tag + varint(value) if value else b""


def _fixed32(value: int) -> bytes:
    return value.to_bytes(4, "little")


class _Packed:
    """The packed varints of a list that only grows (a deal's bids, plays, tricks)."""

    __slots__ = ("count", "data", "source")

    def __init__(self) -> None:
        self.source: list[int] | None = None
        self.count = 0
        self.data = b""

    def update(self, values: list[int]) -> bytes:
        count = self.count
        if values is not self.source or len(values) < count:  # another list: start over
            self.source, count, self.data = values, 0, b""
        if len(values) > count:
            self.data += b"".join([varint(v) for v in values[count:]])
            self.count = len(values)
        return self.data


class DealEncoder:
    """The serialized observations of one deal, for any seat, at any point of the deal.

    Most fields change a few times a deal at most (the phase, the contract, the declarations,
    the trick points, the bids once the play starts): each run of them is kept serialized with
    the values it was made from, and made again when one of those changed.
    """

    __slots__ = ("_bids", "_bids_count", "_bids_data", "_contract", "_contract_key", "_decl", "_decl_shown",
                 "_head",
                 "_plays", "_points", "_points_key", "_tail", "_tail_key", "_winners_count",
                 "_winners_data", "deal")

    def __init__(self, deal: Deal) -> None:
        self.deal = deal
        #: seat, dealer and phase fields, by (seat, phase)
        self._head: dict[tuple[int, object], bytes] = {}
        #: retourne and bids fields, for that many bids
        self._bids = _Packed()
        self._bids_count = -1
        self._bids_data = b""
        self._plays = _Packed()
        self._winners_count = 0
        self._winners_data = b""
        #: trump, taker, contract and multiplier fields, for those values
        self._contract_key: tuple[int, int, int, int] | None = None
        self._contract = b""
        self._points_key: tuple[int, int] | None = None
        self._points = b""
        #: shown melds and declarations team, once shown
        self._decl_shown = False
        self._decl = b""
        #: the last fields (match score, held, deal index), for the arguments they were made from
        self._tail_key: tuple[tuple[int, int], int, int] | None = None
        self._tail = b""

    def _trick_winners(self) -> bytes:
        tricks = self.deal.tricks
        if len(tricks) < self._winners_count:  # cannot happen in a deal; be exact anyway
            self._winners_count, self._winners_data = 0, b""
        if len(tricks) > self._winners_count:
            self._winners_data += b"".join([varint(t[2]) for t in tricks[self._winners_count:]])
            self._winners_count = len(tricks)
        return self._winners_data

    def observation(self, seat: int, match_score: tuple[int, int], held: int, deal_index: int) -> bytes:
        """Seat ``seat``'s Observation, serialized: what ``observation_to_proto`` gives, as bytes."""
        deal = self.deal
        small = _SMALL
        phase = deal.phase
        head = self._head.get((seat, phase))
        if head is None:
            head = self._head[(seat, phase)] = b"".join((
                _SEAT + small[seat] if seat else b"", _DEALER + small[deal.dealer] if deal.dealer else b"",
                _PHASE_BYTES.get(phase, _PHASE_OVER)))
        hand = deal.hands[seat]
        parts = [head, _HAND + hand.to_bytes(4, "little") if hand else b""]
        bids = deal.bids
        if len(bids) != self._bids_count or bids is not self._bids.source:
            data = self._bids.update(bids)
            self._bids_count = len(bids)
            self._bids_data = b"".join((
                _RETOURNE + small[deal.retourne] if deal.retourne >= 0 else b"",
                _BIDS + varint(len(data)) + data if data else b""))
        parts.append(self._bids_data)
        data = self._plays.update(deal.plays)
        if data:
            parts += (_PLAYS, varint(len(data)), data)
        if deal.tricks:
            data = self._trick_winners()
            parts += (_WINNERS, varint(len(data)), data)
        key = (deal.trump, deal.taker, deal.contract_value, deal.multiplier)
        if key != self._contract_key:
            self._contract_key = key
            trump, taker, contract, multiplier = key
            self._contract = b"".join((
                _TRUMP + small[trump] if trump >= 0 else b"", _TAKER + small[taker] if taker >= 0 else b"",
                _uint(_CONTRACT, contract), _uint(_MULTIPLIER, multiplier)))
        parts.append(self._contract)
        points = deal.trick_points
        pkey = (points[0], points[1])
        if pkey != self._points_key:
            self._points_key = pkey
            data = varint(pkey[0]) + varint(pkey[1])
            self._points = _POINTS + small[len(data)] + data
        parts.append(self._points)
        if deal.decl_shown != self._decl_shown:
            self._decl_shown = deal.decl_shown
            self._decl = self._declarations()
        parts.append(self._decl)
        tkey = (match_score, held, deal_index)
        if tkey != self._tail_key:
            self._tail_key = tkey
            score = varint(max(0, match_score[0])) + varint(max(0, match_score[1]))
            self._tail = _packed(_MATCH_SCORE, score) + _uint(_HELD, held) + _uint(_DEAL_INDEX, deal_index)
        parts.append(self._tail)
        return b"".join(parts)

    def _declarations(self) -> bytes:
        """The shown melds and the declarations team, once they are shown (nothing before)."""
        deal = self.deal
        team = deal.decl_team if deal.decl_shown else None
        if team is None:
            return b""
        melds = [0, 0, 0, 0]
        for s in range(4):
            if s & 1 == team:
                for m in deal.declared[s]:
                    melds[s] |= m.mask
        return _MELDS + b"\x10" + b"".join([_fixed32(m) for m in melds]) + _DECL_TEAM + varint(team)


#: ActionRequest's seat field, by seat (absent for seat 0)
_SEAT_FIELDS = (b"", _REQ_SEAT + b"\x01", _REQ_SEAT + b"\x02", _REQ_SEAT + b"\x03")


def request_head(match_id: str) -> bytes:
    """The ``match_id`` field of a match's ActionRequests, made once per match."""
    data = match_id.encode()
    return _MATCH_ID + varint(len(data)) + data


def action_request(request_id: int, head: bytes, seat: int, legal: list[int], deadline_ms: int,
                   time_bank_ms: int, last_round_trip_us: int, observation: bytes) -> bytes:
    """A serialized ActionRequest (``head``: :func:`request_head`; ``observation``: serialized)."""
    # one byte each, most often (cards without words, and bids): bytes() packs them at once
    packed = bytes(legal) if legal and max(legal) < 0x80 else b"".join([varint(a) for a in legal])
    return b"".join((
        _uint(_REQUEST_ID, request_id), head, _SEAT_FIELDS[seat],
        _OBSERVATION, varint(len(observation)), observation,
        _LEGAL + varint(len(packed)) + packed if packed else b"",
        _uint(_DEADLINE, deadline_ms), _uint(_BANK, time_bank_ms), _uint(_RTT, last_round_trip_us),
    ))
