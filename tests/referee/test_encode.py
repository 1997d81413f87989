"""The hand-made bytes of :mod:`arena.referee.encode` are protobuf's own.

At every decision of random deals of each preset (random legal actions: coinche bids and
surcoinches, declarations and belote words get played too), each seat's observation from the
incremental :class:`DealEncoder` is compared with ``observation_to_proto``'s, built from
``observe`` (one seat's information state): the same bytes, and parsed, the same message. So the
encoder carries exactly what ``observe`` lets a seat see, and a bot parses what it parsed before.
"""

from __future__ import annotations

import random

import pytest
from belote.arena.v1 import bot_service_pb2 as bpb
from belote.arena.v1 import game_pb2 as pb

from arena.engine import Match
from arena.engine.rules import PRESETS
from arena.referee.convert import observation_to_proto
from arena.referee.encode import DealEncoder, action_request, request_head, varint
from arena.referee.runner import action_played_field, action_text


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_every_observation_of_random_deals_is_protobuf_s_own_bytes(name: str) -> None:
    rng = random.Random(f"encode/{name}")
    compared = 0
    for m in range(6):
        match = Match(PRESETS[name].with_options(deals=3), f"encode/{name}/{m}")
        while not match.is_over:
            deal = match.new_deal()
            index = len(match.outcomes)
            score = (match.totals[0], match.totals[1])
            encoder = DealEncoder(deal)
            while not deal.is_over:
                for seat in range(4):  # the one to act and the others: each sees its own
                    want, legal = observation_to_proto(deal, seat, match_score=score, held=match.held,
                                                       deal_index=index)
                    got = encoder.observation(seat, score, match.held, index)
                    assert got == want.SerializeToString(), (name, m, index, seat, len(deal.plays))
                    assert pb.Observation.FromString(got) == want
                    # the runner asks the seat to act with the deal's legal actions: observe's
                    assert legal == (deal.legal_actions() if seat == deal.to_act else [])
                    compared += 1
                deal.apply(rng.choice(deal.legal_actions()))
            match.add(deal)
    assert compared > 1000


def test_a_deal_s_encoder_follows_a_list_that_was_replaced() -> None:
    """The packed lists are appended to as the deal grows; a list replaced (a copy of the deal, a
    deal rebuilt) is encoded again from its start, not appended to stale bytes."""
    match = Match(PRESETS["classic"], "encode/replaced")
    deal = match.new_deal()
    encoder = DealEncoder(deal)
    encoder.observation(0, (0, 0), 0, 0)
    deal.apply(deal.legal_actions()[-1])
    deal.bids = list(deal.bids)  # another list, same values
    want, _ = observation_to_proto(deal, 1, match_score=(0, 0), held=0, deal_index=0)
    assert encoder.observation(1, (0, 0), 0, 0) == want.SerializeToString()


def test_action_requests_are_protobuf_s_own_bytes() -> None:
    obs = pb.Observation(seat=2, hand=0x0F0F00F1, bids=[1, 130, 16384], match_score=[0, 510], deal_index=3)
    data = obs.SerializeToString()
    for rid, legal, bank, rtt in ((1, [0], 0, 0), (2**40 + 7, [5, 9, 200, 1 << 20], 12_000, 0xFFFFFFFF)):
        want = bpb.ActionRequest(request_id=rid, match_id="m-0a1b2c3d4e5f", seat=2, observation=obs,
                                 legal_actions=legal, deadline_ms=2000, time_bank_ms=bank,
                                 last_round_trip_us=rtt)
        got = action_request(rid, request_head("m-0a1b2c3d4e5f"), 2, legal, 2000, bank, rtt, data)
        assert bpb.ActionRequest.FromString(got) == want
        assert got == want.SerializeToString()


@pytest.mark.parametrize("value", [0, 1, 127, 128, 16383, 16384, 2**32 - 1, 2**63 + 5, 2**64 - 1])
def test_varints_are_protobuf_s(value: int) -> None:
    # a uint64 field of value: its tag, then the varint (protobuf writes no field for zero)
    assert varint(value) == (bpb.ActionReply(request_id=value).SerializeToString()[1:] if value else b"\x00")


def test_action_played_events_are_protobuf_s_own_bytes() -> None:
    """The runner's ``action_played`` events: a deal's head (match id, deal index) and the field of
    (seat, action), each made once, are the bytes of the whole message."""
    for seat, action, index in ((0, 0, 0), (3, 31, 2), (1, 1 << 9 | 12, 7), (2, 200, 0)):
        head = pb.PublicEvent(match_id="m-0a1b2c3d4e5f", deal_index=index).SerializeToString()
        want = pb.PublicEvent(match_id="m-0a1b2c3d4e5f", deal_index=index, action_played=pb.ActionPlayed(
            seat=seat, action=action, text=action_text(action)))
        assert head + action_played_field(seat, action) == want.SerializeToString()
        assert head + action_played_field(seat, action) == want.SerializeToString()  # remembered
