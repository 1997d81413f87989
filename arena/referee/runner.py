"""The match runner: asks each seat for its decisions, enforces time and legality.

For each decision the seat's bot gets its own observation and the legal
actions, and has ``deadline`` seconds plus what is left of its time bank. A
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
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from belote.arena.v1 import bot_service_pb2 as bpb
from belote.arena.v1 import game_pb2 as pb

from arena.engine import Deal, Match, Ruleset, format_action
from arena.engine.actions import PASS
from arena.engine.cards import card_strength, card_value
from arena.engine.record import deal_record, match_record
from arena.referee import wire
from arena.referee.convert import observation_to_proto, ruleset_to_proto
from arena.referee.sessions import BotDisconnected, BotLink, BotTimeout, Hub


@dataclass(frozen=True)
class TimeControl:
    deadline: float = 1.0
    time_bank: float = 10.0
    max_strikes: int = 3
    grace: float = 10.0


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


@dataclass
class MatchState:
    """What is known of a match while it runs and after."""

    spec: MatchSpec
    state: str = "running"
    totals: list[int] = field(default_factory=lambda: [0, 0])
    deals_played: int = 0
    result: pb.MatchResult | None = None
    record: dict[str, Any] | None = None


def fallback_action(deal: Deal, legal: list[int]) -> int:
    """Pass in the bidding; in the play the cheapest legal card, without words."""
    if deal.phase == "bidding":
        return PASS
    trump = deal.trump
    return min((a & 31 for a in legal), key=lambda c: (card_value(c, trump), card_strength(c, trump)))


Publisher = Callable[[pb.PublicEvent], None]


class MatchRunner:
    def __init__(self, hub: Hub, spec: MatchSpec, publish: Publisher | None = None) -> None:
        self.hub = hub
        self.spec = spec
        self.state = MatchState(spec)
        self._publish = publish
        self._links = list({id(s.link): s.link for s in spec.seats}.values())
        self._bank = [spec.time.time_bank] * 4
        self._rtt_us = [0] * 4
        self._strikes = [0, 0]
        self._strike_log: list[dict[str, Any]] = []
        self._latencies: list[list[int]] = []
        self._forfeit: tuple[int, str] | None = None  # (seat, why)
        self._forfeit_winner: int | None = None

    # --------------------------------------------------------------- events
    def _event(self, deal_index: int, **kind: Any) -> None:
        ev = pb.PublicEvent(match_id=self.spec.match_id, deal_index=deal_index, **kind)
        framed = wire.event_field(ev.SerializeToString())  # once for every link of the match
        for link in self._links:
            link.queue_event(framed)
        if self._publish is not None:
            self._publish(ev)

    def _flush(self) -> None:
        for link in self._links:
            link.flush()

    # ------------------------------------------------------------------ run
    async def run(self) -> MatchState:
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
        try:
            while not match.is_over and self._forfeit is None:
                deal = unfinished = match.new_deal()
                index = len(match.outcomes)
                self._latencies.append([])
                retourne = {"retourne": deal.retourne} if deal.retourne >= 0 else {}
                self._event(index, deal_started=pb.DealStarted(dealer=deal.dealer, **retourne))
                await self._play_deal(match, deal, index)
                if self._forfeit is not None:
                    break
                outcome = match.add(deal)
                unfinished = None
                self.state.totals = list(match.totals)
                self.state.deals_played = len(match.outcomes)
                self._event(index, deal_ended=pb.DealEnded(
                    outcome_json=json.dumps(outcome.as_json()), score=outcome.score,
                    match_score=match.totals,
                ))
                self._flush()
        except asyncio.CancelledError:
            self._finish(match, "aborted", "the node stopped the match", unfinished)
            raise
        if self._forfeit is not None:
            seat, why = self._forfeit
            self._finish(match, "forfeit", why, unfinished, forfeit_seat=seat)
        else:
            self._finish(match, "finished", "", None)
        result = self.state.result
        assert result is not None
        for seat, s in enumerate(spec.seats):
            s.link.post(bpb.ConnectResponse(match_ended=bpb.MatchEnded(
                match_id=spec.match_id, seat=seat, result=result,
            )))
        # the match is over once its bots have their last messages (or are gone)
        await asyncio.gather(*(link.drained() for link in self._links))
        return self.state

    async def _play_deal(self, match: Match, deal: Deal, index: int) -> None:
        score = (match.totals[0], match.totals[1])
        latencies = self._latencies[-1]
        while not deal.is_over:
            seat = deal.to_act
            obs, legal = observation_to_proto(
                deal, seat, match_score=score, held=match.held, deal_index=index,
            )
            action, latency_us = await self._decide(deal, seat, obs, legal, index)
            if self._forfeit is not None:
                return
            latencies.append(latency_us)
            tricks_before = len(deal.tricks)
            shown_before = deal.decl_shown
            deal.apply_unchecked(action)
            # sub-messages given as dicts are built in place (a message would be copied)
            self._event(index, action_played={"seat": seat, "action": action, "text": action_text(action)})
            if len(deal.tricks) > tricks_before:
                leader, cards, winner = deal.tricks[-1]
                self._event(index, trick_completed={"leader": leader, "cards": cards, "winner": winner})
            if deal.decl_shown and not shown_before:
                melds = [0, 0, 0, 0]
                if deal.decl_team is not None:
                    for s in range(4):
                        if s & 1 == deal.decl_team:
                            for m in deal.declared[s]:
                                melds[s] |= m.mask
                team = {"team": deal.decl_team} if deal.decl_team is not None else {}
                self._event(index, declarations_shown=pb.DeclarationsShown(
                    points=deal.decl_points, melds=melds, **team,
                ))

    async def _decide(
        self, deal: Deal, seat: int, obs: pb.Observation, legal: list[int], index: int,
    ) -> tuple[int, int]:
        """The seat's action and its latency in microseconds (-1 for a fallback)."""
        spec = self.spec
        tc = spec.time
        link = spec.seats[seat].link
        observation: bytes | None = None
        while True:
            if not link.connected:
                fallback = await self._absent(deal, seat, legal, link)
                if fallback is not None:
                    return fallback
                continue  # it came back: ask it
            if observation is None:  # serialized once, framed into each request for it
                observation = wire.observation_field(obs.SerializeToString())
            rid = self.hub.next_request_id()
            request = bpb.ActionRequest(
                request_id=rid, match_id=spec.match_id, seat=seat,
                legal_actions=legal, deadline_ms=int(tc.deadline * 1000),
                time_bank_ms=int(self._bank[seat] * 1000), last_round_trip_us=self._rtt_us[seat],
            )
            start = time.perf_counter()
            try:
                # the request's bytes and its observation's: ActionRequest(observation=obs, ...)
                action = await self.hub.ask_encoded(link, rid, request.SerializeToString() + observation,
                                                    tc.deadline + self._bank[seat])
                break
            except BotTimeout:
                self._bank[seat] = 0.0
                return await self._strike(deal, seat, legal, rid, index,
                                          f"no answer within {tc.deadline:g} s and the time bank")
            except BotDisconnected:
                continue  # it may come back within the grace period
        elapsed = time.perf_counter() - start
        if elapsed > tc.deadline:
            self._bank[seat] = max(0.0, self._bank[seat] - (elapsed - tc.deadline))
        latency_us = int(elapsed * 1e6)
        self._rtt_us[seat] = min(latency_us, 0xFFFFFFFF)
        if action not in legal:
            text = "no action" if action == 0xFFFFFFFF else _safe_format(action)
            return await self._strike(
                deal, seat, legal, rid, index,
                f"illegal action {text!r}; legal: {', '.join(format_action(a) for a in legal)}",
            )
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
        self, deal: Deal, seat: int, legal: list[int], rid: int, index: int, reason: str,
    ) -> tuple[int, int]:
        team = seat & 1
        self._strikes[team] += 1
        fallback = fallback_action(deal, legal)
        tc = self.spec.time
        self._strike_log.append({
            "deal": index, "decision": len(deal.bids) + len(deal.plays), "seat": seat,
            "reason": reason, "fallback": format_action(fallback),
        })
        link = self.spec.seats[seat].link
        link.post(bpb.ConnectResponse(strike=bpb.Strike(
            match_id=self.spec.match_id, seat=seat, request_id=rid, reason=reason,
            fallback_action=fallback, strikes=self._strikes[team], max_strikes=tc.max_strikes,
        )))
        # the legal actions are the seat's own cards: only its Strike message names them
        self._event(index, strike_given=pb.StrikeGiven(
            seat=seat, reason=reason.split("; legal: ")[0], fallback_action=fallback,
            strikes=self._strikes[team],
        ))
        if self._strikes[team] >= tc.max_strikes:
            self._forfeit_winner = 1 - team
            self._forfeit = (seat, f"{self.spec.seats[seat].name} reached {tc.max_strikes} strikes "
                                   f"(last: {reason})")
        return fallback, -1

    # --------------------------------------------------------------- result
    def _finish(
        self, match: Match, reason: str, detail: str, unfinished: Deal | None,
        forfeit_seat: int | None = None,
    ) -> None:
        spec = self.spec
        totals = list(match.totals)
        winner: int | None = match.winner
        if reason == "forfeit" and forfeit_seat is not None:
            winner = self._forfeit_winner
        elif reason == "aborted":
            winner = None
        result = pb.MatchResult(totals=totals, reason=reason, detail=detail,
                                deals=len(match.outcomes))
        if winner is not None:
            result.winner = winner
        if forfeit_seat is not None:
            result.forfeit_seat = forfeit_seat
        record = match_record(match, [s.name for s in spec.seats])
        record.update({
            "match_id": spec.match_id,
            "bots": [{"seat": i, "bot_id": s.bot_id, "name": s.name} for i, s in enumerate(spec.seats)],
            "time_control": {"deadline_s": spec.time.deadline, "time_bank_s": spec.time.time_bank,
                             "max_strikes": spec.time.max_strikes, "grace_s": spec.time.grace},
            "latencies_us": self._latencies[: len(match.outcomes) + (unfinished is not None)],
            "strikes": self._strike_log,
            "result": {"totals": totals, "winner": winner, "reason": reason, "detail": detail,
                       "forfeit_seat": forfeit_seat},
        })
        if unfinished is not None:
            record["unfinished_deal"] = deal_record(unfinished, with_ruleset=False)
        self.state.totals = totals
        self.state.deals_played = len(match.outcomes)
        self.state.result = result
        self.state.record = record
        self.state.state = "finished" if reason != "aborted" else "aborted"


#: the record texts of the actions played so far (a few hundred codes at most)
_ACTION_TEXTS: dict[int, str] = {}


def action_text(action: int) -> str:
    """``format_action(action)``, remembered: the same codes are played again and again."""
    text = _ACTION_TEXTS.get(action)
    if text is None:
        text = _ACTION_TEXTS[action] = format_action(action)
    return text


def _safe_format(action: int) -> str:
    try:
        return format_action(action)
    except Exception:
        return str(action)
