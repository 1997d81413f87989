"""Engine values to wire messages: observations, rulesets, events.

Everything a bot receives about a deal is built here from
:func:`arena.engine.observe`, i.e. from one seat's information state, so no
other seat's hand can reach the wire through these functions. The runner
sends the same bytes made faster by hand (:mod:`arena.referee.encode`, which
reads the same fields of the deal); :func:`observation_to_proto` stays their
reference, and the tests compare the two at every decision.
"""

from __future__ import annotations

from belote.arena.v1 import game_pb2 as pb

from arena.engine import Deal, Ruleset, observe
from arena.engine.deal import Phase
from arena.records import MatchEnd, StrikeReason

PHASES = {Phase.BIDDING: pb.PHASE_BIDDING, Phase.PLAY: pb.PHASE_PLAY, Phase.OVER: pb.PHASE_OVER}
STRIKE_REASONS = {
    StrikeReason.LATE: pb.STRIKE_REASON_LATE,
    StrikeReason.ILLEGAL: pb.STRIKE_REASON_ILLEGAL,
    StrikeReason.NO_ACTION: pb.STRIKE_REASON_NO_ACTION,
}


def ruleset_to_proto(rules: Ruleset) -> pb.Ruleset:
    return pb.Ruleset(
        preset=rules.preset, game=rules.game, target=rules.target, annonces=rules.annonces,
        belote=rules.belote, belote_counts_against_takers=rules.belote_counts_against_takers,
        must_undertrump=rules.must_undertrump, cut_min=rules.cut_min, rounding=rules.rounding,
        max_bid=rules.max_bid, deals=rules.deals or 0, redeal_low_hand=rules.redeal_low_hand,
        redeal_four_sevens=rules.redeal_four_sevens,
    )


def result_to_proto(end: MatchEnd, deals: int) -> pb.MatchResult:
    """How a match ended, as MatchEnded and the spectators' last message carry it."""
    result = pb.MatchResult(totals=end.totals, reason=end.reason, detail=end.detail, deals=deals)
    if end.winner is not None:
        result.winner = end.winner
    if end.forfeit_seat is not None:
        result.forfeit_seat = end.forfeit_seat
    return result


def observation_to_proto(
    deal: Deal, seat: int, *, match_score: tuple[int, int] = (0, 0), held: int = 0,
    deal_index: int = 0,
) -> tuple[pb.Observation, list[int]]:
    """Seat ``seat``'s observation and its legal actions (empty if not its turn)."""
    o = observe(deal, seat, match_score, held)
    msg = pb.Observation(
        seat=seat,
        dealer=o.dealer,
        phase=PHASES[o.phase],
        hand=o.hand,
        bids=o.bids,
        plays=o.plays,
        trick_winners=[w for _, _, w in o.tricks],
        contract_value=o.contract_value,
        multiplier=o.multiplier,
        trick_points=o.trick_points,
        match_score=[max(0, s) for s in o.match_score],
        held=o.held,
        deal_index=deal_index,
    )
    if o.retourne >= 0:
        msg.retourne = o.retourne
    if o.trump >= 0:
        msg.trump = o.trump
    if o.taker >= 0:
        msg.taker = o.taker
    if o.declarations_team is not None:
        msg.declarations_team = o.declarations_team
        melds = [0, 0, 0, 0]
        for s, mask in o.shown_declarations:
            melds[s] |= mask
        msg.shown_melds.extend(melds)
    return msg, list(o.legal_actions)
