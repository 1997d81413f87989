"""Mirror duplicate pairs played locally: SDK bots' ``act`` against the pure engine, recorded as
the referee records them (a fast path for the detection tests and ``bench/detection.py``).

Each leg is a :class:`~arena.engine.Match` of the pair's seed with a fixed number of deals, as a
tournament's job plays it; every decision goes to the seat's bot as the referee would send it
(``observation_to_proto``, then the SDK's :class:`Observation`) and its answer is checked. The
records come from :meth:`MatchRecord.of_match`, as the runner's do, with a virtual clock: each
decision is asked 1 ms after the one before it (whichever leg it is in) and answered 0.5 ms
later. How the two legs' decisions interleave is ``order``:

- ``"sequential"``: leg 0 whole, then leg 1;
- ``"deal"``: deal by deal, a seeded coin choosing which leg plays each deal first;
- ``"lockstep"``: both legs at once, one decision each in turn;
- ``"drift"``: both legs at once, each step a seeded coin choosing the leg that moves (legs that
  run together on a node drift apart like this).
"""

from __future__ import annotations

import asyncio
import inspect
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from belote.arena.v1 import bot_service_pb2 as bpb
from belote_bot.acting import legal_code
from belote_bot.bot import Bot
from belote_bot.events import MatchInfo
from belote_bot.types import Observation

from arena.engine import Deal, Match, Ruleset
from arena.records import MatchEnd, MatchRecord, ResultReason, SeatBot, TimeControl
from arena.referee.convert import observation_to_proto, ruleset_to_proto

ORDERS = ("sequential", "deal", "lockstep", "drift")


def _wait(value: Any) -> Any:
    if inspect.isawaitable(value):
        async def wait() -> Any:
            return await value

        return asyncio.run(wait())
    return value


@dataclass
class _Leg:
    match_id: str
    players: tuple[str, str, str, str]
    bots: tuple[Bot, Bot, Bot, Bot]
    match: Match
    started_ms: int = -1
    deal: Deal | None = None
    latencies: list[list[int]] = field(default_factory=list)
    asked: list[list[int]] = field(default_factory=list)
    request: int = 0

    @property
    def is_over(self) -> bool:
        return self.match.is_over

    def start(self, now: int) -> None:
        self.started_ms = now
        rules = self.match.rules
        for seat, bot in enumerate(self.bots):
            _wait(bot.on_match_start(MatchInfo.from_proto(bpb.MatchStarted(
                match_id=self.match_id, seat=seat, ruleset=ruleset_to_proto(rules),
                players=list(self.players), target=self.match.target))))

    def deal_index(self) -> int:
        return len(self.match.outcomes)

    def step(self, now: int) -> None:
        """Play one decision of the current deal (dealing it first if needed)."""
        if self.started_ms < 0:
            self.start(now)
        if self.deal is None:
            self.deal = self.match.new_deal()
            self.latencies.append([])
            self.asked.append([])
        deal = self.deal
        seat = deal.to_act
        m = self.match
        msg, legal = observation_to_proto(deal, seat, match_score=(m.totals[0], m.totals[1]), held=m.held,
                                          deal_index=self.deal_index())
        self.request += 1
        obs = Observation.from_proto(msg, legal, request_id=self.request, match_id=self.match_id,
                                     deadline_ms=1000, time_bank_ms=10_000)
        answer = _wait(self.bots[seat].act(obs))
        deal.apply(legal_code(obs, answer))  # an illegal answer raises: these bots never give one
        self.latencies[-1].append(500)
        self.asked[-1].append(now - self.started_ms)
        if deal.is_over:
            self.match.add(deal)
            self.deal = None

    def in_deal(self, index: int) -> bool:
        return not self.is_over and self.deal_index() == index

    def record(self) -> MatchRecord:
        m = self.match
        end = MatchEnd(totals=(m.totals[0], m.totals[1]), winner=m.winner, reason=ResultReason.FINISHED)
        return MatchRecord.of_match(
            self.match_id, m, self.players,
            bots=[SeatBot(s, f"local-{name}", name) for s, name in enumerate(self.players)],
            time_control=TimeControl(), latencies_us=self.latencies, strikes=[], result=end,
            started_ms=self.started_ms, asked_ms=self.asked)


def play_pair(a: tuple[str, Bot], b: tuple[str, Bot], *, seed: str, deals: int, ruleset: str = "coinche",
              pair_id: str = "t-r1-0", order: str = "deal", rng: random.Random | None = None,
              start_ms: int = 1_700_000_000_000) -> tuple[MatchRecord, MatchRecord, int]:
    """The two legs of one mirror pair (A at team 0 in leg 0, at team 1 in leg 1) and the clock
    after them. The same bot object plays both seats of its side, as over one stream."""
    if order not in ORDERS:
        raise ValueError(f"order is one of {ORDERS}, not {order!r}")
    rng = rng or random.Random(f"mirror/{seed}")
    rules = Ruleset.from_spec(ruleset).with_options(deals=deals)
    (na, ba), (nb, bb) = a, b
    legs = [
        _Leg(f"{pair_id}-leg0", (na, nb, na, nb), (ba, bb, ba, bb), Match(rules, seed)),
        _Leg(f"{pair_id}-leg1", (nb, na, nb, na), (bb, ba, bb, ba), Match(rules, seed)),
    ]
    now = start_ms

    def step(leg: _Leg) -> None:
        nonlocal now
        leg.step(now)
        now += 1

    if order == "sequential":
        for leg in legs:
            while not leg.is_over:
                step(leg)
    elif order == "deal":
        for i in range(deals):
            first = rng.randrange(2)
            for leg in (legs[first], legs[1 - first]):
                while leg.in_deal(i):
                    step(leg)
    else:
        turn = 0
        while not all(leg.is_over for leg in legs):
            choice = turn if order == "lockstep" else rng.randrange(2)
            turn ^= 1
            leg = legs[choice] if not legs[choice].is_over else legs[1 - choice]
            step(leg)
    return legs[0].record(), legs[1].record(), now


def play_pairs(make_a: Callable[[int], tuple[str, Bot]], make_b: Callable[[int], tuple[str, Bot]], *,
               pairs: int, deals: int, ruleset: str = "coinche", order: str = "deal", seed: str = "audit",
               tournament_id: str = "t", first: int = 0) -> list[MatchRecord]:
    """``pairs`` mirror pairs, numbered from ``first``, each with a fresh seed; the bots come from
    ``make_a(i)`` and ``make_b(i)`` (return the same objects to keep a bot's memory across pairs)."""
    records: list[MatchRecord] = []
    now = 1_700_000_000_000 + first * 1_000_000
    for i in range(first, first + pairs):
        leg0, leg1, now = play_pair(make_a(i), make_b(i), seed=f"{seed}/{i}", deals=deals, ruleset=ruleset,
                                    pair_id=f"{tournament_id}-r{i + 1}-0", order=order,
                                    rng=random.Random(f"{seed}/order/{i}"), start_ms=now + 1000)
        records += [leg0, leg1]
    return records
