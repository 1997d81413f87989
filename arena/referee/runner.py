"""The match runner: asks each seat for its decisions, enforces time and legality.

For each decision the seat's bot gets its own observation and the legal
actions, and has ``deadline`` seconds plus what is left of its time bank, of
the node's running time: the node's own stalls are neither counted against
the limit nor taken from the bank (:mod:`arena.referee.deadlines`). A
late answer, an illegal one, or none at all is a *strike*: the bot is told
why, the fallback action is played (pass in the bidding, the cheapest legal
card in the play, without words) and the match goes on. ``max_strikes``
strikes of one team forfeit the match. A disconnected bot gets fallbacks (no
strike) until it returns; still away after ``grace`` seconds, it forfeits.
The runner never waits on a bot longer than its time.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from belote.arena.v1 import bot_service_pb2 as bpb
from belote.arena.v1 import game_pb2 as pb

from arena.edge.quietlog import quiet
from arena.engine import Deal, Match, Ruleset, format_action
from arena.engine.actions import NO_ACTION, PASS
from arena.engine.cards import card_strength, card_value
from arena.engine.deal import BIDDING
from arena.engine.record import DealRecord, deal_record
from arena.metrics import NodeMetrics
from arena.records import (
    MatchEnd,
    MatchRecord,
    ResultReason,
    SeatBot,
    StrikeEntry,
    StrikeReason,
    TimeControl,
)
from arena.referee import wire
from arena.referee.convert import STRIKE_REASONS, result_to_proto, ruleset_to_proto
from arena.referee.deadlines import BotTimeout
from arena.referee.encode import DealEncoder, action_request, request_head
from arena.referee.sessions import BotDisconnected, BotLink, Hub

__all__ = ["MatchRunner", "MatchSpec", "Seat", "TimeControl", "fallback_action"]

log = logging.getLogger("arena.referee")


@dataclass
class Seat:
    bot_id: str
    name: str
    link: BotLink


@dataclass
class MatchSpec:
    match_id: str
    rules: Ruleset
    seed: int | str
    seats: list[Seat]  # 0..3; team 0 is seats 0 and 2
    target: int | None = None
    time: TimeControl = field(default_factory=TimeControl)


def fallback_action(deal: Deal, legal: list[int]) -> int:
    """Pass in the bidding; in the play the cheapest legal card, without words."""
    if deal.phase is BIDDING:
        return PASS
    trump = deal.trump
    return min((a & 31 for a in legal), key=lambda c: (card_value(c, trump), card_strength(c, trump)))


#: takes each public event of the match, serialized (once for the bots and the watchers)
Publisher = Callable[[bytes], None]


class MatchRunner:
    def __init__(self, hub: Hub, spec: MatchSpec, publish: Publisher | None = None,
                 metrics: NodeMetrics | None = None, node_id: str = "") -> None:
        self.hub = hub
        self.spec = spec
        self.metrics = metrics
        #: the node's id, for the log lines
        self.node_id = node_id
        #: the match score and the deals played so far, and the record once it is over
        self.totals: tuple[int, int] = (0, 0)
        self.deals_played = 0
        self.record: MatchRecord | None = None
        self._publish = publish
        self._links = list({id(s.link): s.link for s in spec.seats}.values())
        self._bank = [spec.time.time_bank] * 4
        self._rtt_us = [0] * 4
        self._strikes = [0, 0]
        self._strike_log: list[StrikeEntry] = []
        self._latencies: list[list[int]] = []
        #: per deal, when each decision was asked (ms since the match's start; see MatchRecord.asked_ms)
        self._asked: list[list[int]] = []
        self._asked_at = 0
        self._started_ms = int(time.time() * 1000)
        self._started = time.perf_counter()  # the offsets run on the monotonic clock from the start
        self._forfeit: tuple[int, str] | None = None  # (seat, why)
        self._forfeit_winner: int | None = None
        #: the match id field of every ActionRequest of the match, serialized once
        self._request_head = request_head(spec.match_id)
        #: the serialized match id and deal index of the deal's events, and that deal's index
        self._event_head = b""
        self._event_head_index = -1

    # --------------------------------------------------------------- events
    def _event(self, deal_index: int, **kind: Any) -> None:
        ev = pb.PublicEvent(match_id=self.spec.match_id, deal_index=deal_index, **kind)
        self._queue_event(ev.SerializeToString())

    def _queue_event(self, data: bytes) -> None:
        """A serialized PublicEvent, framed once for every link of the match, to the bots and the
        watchers."""
        framed = wire.event_field(data)
        for link in self._links:
            link.queue_event(framed)
        if self._publish is not None:
            self._publish(data)

    def _action_played(self, deal_index: int, seat: int, action: int) -> None:
        """The event of an action played: the match's head of a deal's events (match id, deal
        index) and the ActionPlayed of (seat, action), both serialized once and remembered."""
        if deal_index != self._event_head_index:
            self._event_head_index = deal_index
            self._event_head = pb.PublicEvent(match_id=self.spec.match_id,
                                              deal_index=deal_index).SerializeToString()
        self._queue_event(self._event_head + action_played_field(seat, action))

    def _flush(self) -> None:
        for link in self._links:
            link.flush()

    # ------------------------------------------------------------------ run
    async def run(self) -> MatchRecord:
        """Play the match to its end; its record (also kept as :attr:`record`).

        Cancelled, it records the match as aborted and re-raises. A bug of its
        own aborts the match too, logged, rather than leaving its bots seated.
        """
        spec = self.spec
        match = Match(spec.rules, spec.seed, target=spec.target)
        players = [s.name for s in spec.seats]
        rules_pb = ruleset_to_proto(spec.rules)
        for seat, s in enumerate(spec.seats):
            s.link.post(bpb.ConnectResponse(match_started=bpb.MatchStarted(
                match_id=spec.match_id, seat=seat, ruleset=rules_pb, players=players,
                target=match.target,
            )))
        unfinished: Deal | None = None
        self._started_ms = int(time.time() * 1000)
        self._started = time.perf_counter()
        try:
            while not match.is_over and self._forfeit is None:
                deal = unfinished = match.new_deal()
                index = len(match.outcomes)
                self._latencies.append([])
                self._asked.append([])
                retourne = {"retourne": deal.retourne} if deal.retourne >= 0 else {}
                self._event(index, deal_started=pb.DealStarted(dealer=deal.dealer, **retourne))
                await self._play_deal(match, deal, index)
                if self._forfeit is not None:
                    break
                outcome = match.add(deal)
                unfinished = None
                if self.metrics is not None:
                    self.metrics.deals_played.inc()
                self.totals = (match.totals[0], match.totals[1])
                self.deals_played = len(match.outcomes)
                self._event(index, deal_ended=pb.DealEnded(
                    outcome_json=json.dumps(outcome.as_json()), score=outcome.score,
                    match_score=match.totals,
                ))
                self._flush()
        except asyncio.CancelledError:
            # the bots hear that it is over (unrecorded); the node does not wait for the words to leave
            end = self._finish(match, ResultReason.ABORTED, "the node stopped the match", unfinished)
            self._announce(end)
            raise
        except Exception:
            log.exception("match %s: the referee failed; the match is aborted", spec.match_id)
            end = self._finish(match, ResultReason.ABORTED, "the referee failed", unfinished)
        else:
            if self._forfeit is not None:
                seat, why = self._forfeit
                end = self._finish(match, ResultReason.FORFEIT, why, unfinished, forfeit_seat=seat)
            else:
                end = self._finish(match, ResultReason.FINISHED, "", None)
        self._announce(end)
        # the match is over once its bots have their last messages (or are gone)
        await asyncio.gather(*(link.drained() for link in self._links))
        assert self.record is not None
        return self.record

    def _elapsed_ms(self) -> int:
        return int((time.perf_counter() - self._started) * 1000)

    def _announce(self, end: MatchEnd) -> None:
        """Tell each seat how the match ended."""
        spec = self.spec
        result = result_to_proto(end, self.deals_played)
        for seat, s in enumerate(spec.seats):
            s.link.post(bpb.ConnectResponse(match_ended=bpb.MatchEnded(
                match_id=spec.match_id, seat=seat, result=result,
            )))

    async def _play_deal(self, match: Match, deal: Deal, index: int) -> None:
        score = (match.totals[0], match.totals[1])
        latencies = self._latencies[-1]
        asked = self._asked[-1]
        names = [s.name for s in self.spec.seats]
        count = self.metrics.decisions.decision if self.metrics is not None else None
        # the seat's observation, serialized by hand from the deal as it grows (see arena.referee.encode)
        encoder = DealEncoder(deal)
        while not deal.is_over:
            seat = deal.to_act
            obs = encoder.observation(seat, score, match.held, index)
            action, latency_us = await self._decide(deal, seat, obs, deal.legal_actions(), index)
            # counted before the forfeit's return: the decision that forfeits (a last strike, a seat
            # away past the grace) was asked too, and its strike counts (strikes / decisions <= 1)
            if count is not None:
                count(names[seat], latency_us)
            if self._forfeit is not None:
                return
            latencies.append(latency_us)
            asked.append(self._asked_at)
            tricks_before = len(deal.tricks)
            shown_before = deal.decl_shown
            deal.apply_unchecked(action)
            # sub-messages given as dicts are built in place (a message would be copied)
            self._action_played(index, seat, action)
            if len(deal.tricks) > tricks_before:
                leader, cards, winner = deal.tricks[-1]
                self._event(index, trick_completed={"leader": leader, "cards": cards, "winner": winner})
            if deal.decl_shown and not shown_before:
                melds = deal.shown_melds()
                team = {"team": deal.decl_team} if deal.decl_team is not None else {}
                self._event(index, declarations_shown=pb.DeclarationsShown(
                    points=deal.decl_points, melds=melds, **team,
                ))

    async def _decide(
        self, deal: Deal, seat: int, observation: bytes, legal: list[int], index: int,
    ) -> tuple[int, int]:
        """The seat's action and its latency in microseconds (-1 for a fallback); ``observation``
        is the seat's, serialized."""
        spec = self.spec
        tc = spec.time
        link = spec.seats[seat].link
        stalls = self.hub.deadlines.stalls
        self._asked_at = self._elapsed_ms()
        while True:
            if not link.connected:
                fallback = await self._absent(deal, seat, legal, link)
                if fallback is not None:
                    return fallback
                continue  # it came back: ask it
            rid = self.hub.next_request_id()
            request = action_request(rid, self._request_head, seat, legal, int(tc.deadline * 1000),
                                     int(self._bank[seat] * 1000), self._rtt_us[seat], observation)
            asked = stalls.mark()
            self._asked_at = int((asked[0] - self._started) * 1000)
            try:
                action = await self.hub.ask_encoded(link, rid, request, tc.deadline + self._bank[seat])
                break
            except BotTimeout:
                self._bank[seat] = 0.0
                return await self._strike(deal, seat, legal, rid, index, StrikeReason.LATE,
                                          f"no answer within {tc.deadline:g} s and the time bank")
            except BotDisconnected:
                continue  # it may come back within the grace period
        # the time it took, and what the bot is charged of it: the node's own stalls taken out
        # (arena.referee.deadlines)
        elapsed, charged = stalls.since(asked)
        if charged > tc.deadline:
            self._bank[seat] = max(0.0, self._bank[seat] - (charged - tc.deadline))
        latency_us = int(elapsed * 1e6)
        self._rtt_us[seat] = min(latency_us, 0xFFFFFFFF)
        if action not in legal:
            # the seat's legal actions name its own cards: they go in the private detail only
            detail = f"legal: {', '.join(format_action(a) for a in legal)}"
            if action == NO_ACTION:
                return await self._strike(deal, seat, legal, rid, index, StrikeReason.NO_ACTION,
                                          "no action: the bot had no answer", detail)
            return await self._strike(deal, seat, legal, rid, index, StrikeReason.ILLEGAL,
                                      "illegal action", f"answered {_safe_format(action)!r}; {detail}")
        return action, latency_us

    async def _absent(
        self, deal: Deal, seat: int, legal: list[int], link: BotLink,
    ) -> tuple[int, int] | None:
        """A disconnected seat: its fallback is played at once, no strike.

        When nobody in the match is connected, it waits for the bot (up to the
        deadline) first, so a match of absent bots does not race through
        thrown-in deals. None: the bot came back, ask it. Still away after the
        grace period: the team forfeits (both teams away: nobody wins).
        """
        tc = self.spec.time
        away_since = link.disconnected_at if link.disconnected_at is not None else time.monotonic()
        left = tc.grace - (time.monotonic() - away_since)
        if left > 0 and not any(s.link.connected for s in self.spec.seats):
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(min(tc.deadline, left)):
                    await link.connected_event.wait()
            if link.connected:
                return None
            left = tc.grace - (time.monotonic() - away_since)
        if left <= 0:
            others = [s.link for i, s in enumerate(self.spec.seats) if (i ^ seat) & 1]
            both_away = all(self._away_too_long(other) for other in others)
            self._forfeit = (seat, f"{link.name} stayed disconnected for more than {tc.grace:g} s"
                                   + ("; so did its opponent" if both_away else ""))
            self._forfeit_winner = None if both_away else 1 - (seat & 1)
        return fallback_action(deal, legal), -1

    def _away_too_long(self, link: BotLink) -> bool:
        return (not link.connected and link.disconnected_at is not None
                and time.monotonic() - link.disconnected_at > self.spec.time.grace)

    async def _strike(
        self, deal: Deal, seat: int, legal: list[int], rid: int, index: int, kind: StrikeReason,
        reason: str, detail: str = "",
    ) -> tuple[int, int]:
        """Give ``seat`` a strike: ``reason`` is public, ``detail`` goes to the seat's bot only."""
        team = seat & 1
        self._strikes[team] += 1
        fallback = fallback_action(deal, legal)
        tc = self.spec.time
        self._strike_log.append(StrikeEntry(
            deal=index, decision=len(deal.bids) + len(deal.plays), seat=seat, kind=kind, reason=reason,
            detail=detail, fallback=format_action(fallback),
        ))
        code = STRIKE_REASONS[kind]
        link = self.spec.seats[seat].link
        name = self.spec.seats[seat].name
        fields = {"event": "strike", "match_id": self.spec.match_id, "bot": name, "node": self.node_id,
                  "reason": kind.value}
        quiet.warning(("strike", name, kind.value), "match %s: strike for %s (%s): %s", self.spec.match_id,
                      name, kind.value, reason, extra=fields)
        if self.metrics is not None:
            self.metrics.strike(name, kind.value)
        link.post(bpb.ConnectResponse(strike=bpb.Strike(
            match_id=self.spec.match_id, seat=seat, request_id=rid, reason=reason, detail=detail,
            kind=code, fallback_action=fallback, strikes=self._strikes[team], max_strikes=tc.max_strikes,
        )))
        self._event(index, strike_given=pb.StrikeGiven(
            seat=seat, reason=reason, kind=code, fallback_action=fallback, strikes=self._strikes[team],
        ))
        if self._strikes[team] >= tc.max_strikes:
            self._forfeit_winner = 1 - team
            self._forfeit = (seat, f"{self.spec.seats[seat].name} reached {tc.max_strikes} strikes "
                                   f"(last: {reason})")
        return fallback, -1

    # --------------------------------------------------------------- result
    def _finish(
        self, match: Match, reason: ResultReason, detail: str, unfinished: Deal | None,
        forfeit_seat: int | None = None,
    ) -> MatchEnd:
        spec = self.spec
        winner: int | None = match.winner
        if reason is ResultReason.FORFEIT:
            winner = self._forfeit_winner
        elif reason is ResultReason.ABORTED:
            winner = None
        end = MatchEnd(totals=(match.totals[0], match.totals[1]), winner=winner, reason=reason,
                       detail=detail, forfeit_seat=forfeit_seat)
        unfinished_record: DealRecord | None = None
        if unfinished is not None:
            unfinished_record = deal_record(unfinished, with_ruleset=False)
        kept = len(match.outcomes) + (unfinished is not None)
        self.record = MatchRecord.of_match(
            spec.match_id, match, [s.name for s in spec.seats],
            bots=[SeatBot(i, s.bot_id, s.name, s.link.bot_version) for i, s in enumerate(spec.seats)],
            time_control=spec.time,
            latencies_us=self._latencies[:kept], strikes=self._strike_log, result=end,
            unfinished=unfinished_record, started_ms=self._started_ms, asked_ms=self._asked[:kept],
        )
        self.totals = end.totals
        self.deals_played = len(match.outcomes)
        if forfeit_seat is not None:
            name = spec.seats[forfeit_seat].name
            log.warning("match %s: %s forfeits: %s", spec.match_id, name, detail, extra={
                "event": "forfeit", "match_id": spec.match_id, "bot": name, "node": self.node_id})
            if self.metrics is not None:
                self.metrics.forfeit(name)
        return end


#: the record texts of the actions played so far (a few hundred codes at most)
_ACTION_TEXTS: dict[int, str] = {}


def action_text(action: int) -> str:
    """``format_action(action)``, remembered: the same codes are played again and again."""
    text = _ACTION_TEXTS.get(action)
    if text is None:
        text = _ACTION_TEXTS[action] = format_action(action)
    return text


#: the ``action_played`` fields of PublicEvents, by (seat, action): the same few hundred again and again
_ACTION_PLAYED: dict[tuple[int, int], bytes] = {}
_ACTION_PLAYED_TAG = pb.PublicEvent.DESCRIPTOR.fields_by_name["action_played"].number << 3 | 2


def action_played_field(seat: int, action: int) -> bytes:
    """The serialized ``PublicEvent.action_played`` field of ``seat`` playing ``action`` (its text
    included), made once per (seat, action)."""
    key = (seat, action)
    data = _ACTION_PLAYED.get(key)
    if data is None:
        played = pb.ActionPlayed(seat=seat, action=action, text=action_text(action)).SerializeToString()
        data = _ACTION_PLAYED[key] = wire.field(_ACTION_PLAYED_TAG, played)
    return data


def _safe_format(action: int) -> str:
    try:
        return format_action(action)
    except Exception:
        return str(action)
