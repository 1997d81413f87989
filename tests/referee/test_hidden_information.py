"""No seat ever receives another seat's unplayed card.

Two raw bot clients (``BotService.Connect`` through grpc.aio, not the SDK, so
nothing is filtered on the way in) record every ``ConnectResponse`` they get,
in the order it arrives, and answer each action request with a seeded random
legal action (now and then a deliberately illegal one, so that strikes and
their fallbacks go over the wire too). After each match the full record (the
deck, the hands as the play starts, the bids and the plays) says what each
seat held at every moment; every card that any message mentions must then be

- in the receiving seat's own hand at that moment (only in messages addressed
  to that seat: an action request or a strike),
- already played, or the public retourne,
- or a meld of the scoring side, shown to everyone after the first card of
  trick 2 (docs/rules.md#declarations).

Public events reach a bot once per match even when it holds two seats, so they
may mention public cards only. The two seats a bot holds never see each
other's hand, and no message carries the match seed (it determines every hand).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import random
import re
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import grpc
import grpc.aio
import pytest
from belote.arena.v1 import bot_service_pb2 as bpb
from belote.arena.v1 import bot_service_pb2_grpc as bgrpc
from belote.arena.v1 import game_pb2 as pb

from arena.engine import CARDS, Card, Ruleset, format_action, format_cards, parse_action
from arena.engine.actions import BID, CHOOSE, COINCHE, DECL_SHIFT, NO_ACTION, PASS, REDEAL, SURCOINCHE, TAKE
from arena.engine.record import deal_from_record
from arena.harness import LocalArena, local_arena
from arena.records import MatchRecord, TimeControl

RULESETS = ("classic", "classic-annonces", "club", "coinche")
CARD_TOKEN = re.compile(r"\b([789TJQKA][SHDC])\b")
ILLEGAL_RATE = 0.03
#: strikes are part of what is checked, so a team never forfeits for them here
TIME = TimeControl(deadline=2.0, time_bank=10.0, max_strikes=1_000_000, grace=10.0)

_arrival = itertools.count()


def show(mask: int) -> str:
    return format_cards(mask) or "-"


def bit(card: int) -> int:
    return 1 << card


# --------------------------------------------------------------- the raw bot
@dataclass
class Received:
    order: int  # arrival order across both bots of the test
    at: float  # time.monotonic() on arrival
    msg: bpb.ConnectResponse


@dataclass
class RawBot:
    """A bot that speaks the wire protocol itself and keeps every message it gets."""

    name: str
    token: str
    seed: int
    log: list[Received] = field(default_factory=list)
    illegal_answers: int = 0
    welcome: asyncio.Event = field(default_factory=asyncio.Event)

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)
        self.changed = asyncio.Event()

    async def run(self, address: str, stop: asyncio.Event) -> None:
        async with grpc.aio.insecure_channel(address) as channel:
            call = bgrpc.BotServiceStub(channel).Connect()
            await call.write(bpb.ConnectRequest(hello=bpb.Hello(
                token=self.token, name=self.name, version="raw-test", concurrency=2,
            )))
            reader = asyncio.ensure_future(self._read(call))
            stopping = asyncio.ensure_future(stop.wait())
            await asyncio.wait({reader, stopping}, return_when=asyncio.FIRST_COMPLETED)
            if reader.done():
                stopping.cancel()
                reader.result()
                raise AssertionError(f"{self.name}: the referee ended the stream")
            await call.done_writing()
            await asyncio.wait_for(reader, 5)

    async def _read(self, call: Any) -> None:
        while True:
            msg = await call.read()
            if msg is grpc.aio.EOF:
                return
            self.log.append(Received(next(_arrival), time.monotonic(), msg))
            self.changed.set()
            kind = msg.WhichOneof("message")
            if kind == "welcome":
                self.welcome.set()
            elif kind == "action_request":
                req = msg.action_request
                await call.write(bpb.ConnectRequest(action_reply=bpb.ActionReply(
                    request_id=req.request_id, action=self._choose(req),
                )))

    def _choose(self, req: bpb.ActionRequest) -> int:
        legal = list(req.legal_actions)
        if self.rng.random() < ILLEGAL_RATE:
            # illegal answers that name no card, so that nothing the referee
            # echoes of them can be taken for a card of the hand
            candidates = [NO_ACTION, PASS, SURCOINCHE, COINCHE, REDEAL]
            illegal = [a for a in candidates if a not in legal]
            self.illegal_answers += 1
            return self.rng.choice(illegal)
        return self.rng.choice(legal)

    async def wait_for_match_end(self, match_id: str, seats: int = 2, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while True:
            self.changed.clear()
            ended = sum(1 for r in self.log if r.msg.HasField("match_ended")
                        and r.msg.match_ended.match_id == match_id)
            if ended >= seats:
                return
            left = deadline - time.monotonic()
            assert left > 0, f"{self.name} did not get MatchEnded of {match_id} for its {seats} seats"
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.changed.wait(), left)


# ------------------------------------------------ what the record says is true
@dataclass
class DealTruth:
    """One deal of a match record, rebuilt from its deck: each seat's hand at every moment."""

    index: int
    dealer: int
    annonces: bool
    retourne: int  # -1 in coinche
    bids: list[int]
    plays: list[int]
    dealt: list[int]  # the hands before the bidding (classic: 5 cards)
    start: list[int]  # the hands as the play starts (a thrown-in deal: as dealt)
    seat_of: list[int]  # the seat that took action k (bids then plays)
    shown: list[int]  # the melds shown of each seat (0 if none)
    shown_team: int | None
    shown_points: int
    outcome_tricks: list[tuple[int, list[int], int]]

    @property
    def actions(self) -> list[int]:
        return self.bids + self.plays

    def n_plays(self, k: int) -> int:
        return max(0, k - len(self.bids))

    def hand(self, seat: int, k: int) -> int:
        """Seat ``seat``'s cards after ``k`` actions of the deal."""
        if k < len(self.bids) or not self.plays:  # the bidding, or a deal thrown in
            return self.dealt[seat]
        hand = self.start[seat]
        for j, action in enumerate(self.plays[: self.n_plays(k)]):
            if self.seat_of[len(self.bids) + j] == seat:
                hand &= ~bit(action & 31)
        return hand

    def played(self, k: int) -> int:
        mask = 0
        for action in self.plays[: self.n_plays(k)]:
            mask |= bit(action & 31)
        return mask

    def shown_at(self, k: int) -> list[int]:
        """The melds everyone has seen after ``k`` actions: after the first card of trick 2."""
        if self.annonces and self.n_plays(k) >= 5:
            return self.shown
        return [0, 0, 0, 0]

    def public(self, k: int) -> int:
        mask = self.played(k)
        if self.retourne >= 0:
            mask |= bit(self.retourne)
        for m in self.shown_at(k):
            mask |= m
        return mask


def seat_after(dealer: int, i: int) -> int:
    return (dealer + i) & 3


def deal_truth(index: int, rec: Mapping[str, Any], rules: Ruleset) -> DealTruth:
    dealer = rec["dealer"]
    deck = [int(Card.parse(c)) for c in rec["deck"]]
    assert sorted(deck) == list(range(32)), f"deal {index}: the record's deck is not 32 distinct cards"
    bids = [parse_action(t) for t in rec["bids"]]
    plays = [parse_action(t) for t in rec["plays"]]
    recorded = [sum(bit(Card.parse(c)) for c in h) for h in rec["hands"]]
    dealt = [0, 0, 0, 0]
    pos = 0
    if rules.is_coinche:
        assert "retourne" not in rec
        retourne = -1
        packets = rec["packets"]
    else:
        retourne = deck[20]
        assert rec["retourne"] == str(CARDS[retourne]), f"deal {index}: the retourne is not deck[20]"
        packets = [3, 2]
    for n in packets:
        for i in range(1, 5):
            seat = seat_after(dealer, i)
            for c in deck[pos:pos + n]:
                dealt[seat] |= bit(c)
            pos += n
    thrown_in = not plays
    if rules.is_coinche or thrown_in:
        start = dealt[:]
    else:
        takes = [j for j, b in enumerate(bids) if b == TAKE or CHOOSE <= b < CHOOSE + 4]
        assert len(takes) == 1 and takes[0] == len(bids) - 1, f"deal {index}: bids {rec['bids']}"
        taker = seat_after(dealer, 1 + takes[0])
        start = dealt[:]
        pos = 21
        for i in range(1, 5):
            seat = seat_after(dealer, i)
            n = 2 if seat == taker else 3
            for c in deck[pos:pos + n]:
                start[seat] |= bit(c)
            pos += n
        start[taker] |= bit(retourne)
    assert recorded == start, (
        f"deal {index}: the record's hands {rec['hands']} are not those its deck deals "
        f"{[show(h) for h in start]}"
    )
    assert all(h.bit_count() == (8 if rules.is_coinche else 5) for h in dealt)
    if plays:
        assert all(h.bit_count() == 8 for h in start)

    # the engine, replaying the record with every action checked, says who plays
    # when and which melds the scoring side showed
    deal = deal_from_record({**rec, "plays": []}, rules)
    seat_of = [seat_after(dealer, 1 + j) for j in range(len(bids))]
    for action in plays:
        seat_of.append(deal.to_act)
        deal.apply(action)
    assert deal.is_over, f"deal {index} of the record is not over"
    shown = [0, 0, 0, 0]
    if deal.decl_shown and deal.decl_team is not None:
        for s in range(4):
            if s & 1 == deal.decl_team:
                for meld in deal.declared[s]:
                    shown[s] |= meld.mask
    for s in range(4):
        if shown[s]:
            first = next(a for j, a in enumerate(plays) if seat_of[len(bids) + j] == s)
            assert first >> DECL_SHIFT, f"deal {index}: seat {s} shows melds it did not announce"
            assert shown[s] & ~start[s] == 0, f"deal {index}: seat {s} shows cards it never held"
    return DealTruth(
        index=index, dealer=dealer, annonces=rules.annonces, retourne=retourne, bids=bids, plays=plays,
        dealt=dealt, start=start, seat_of=seat_of, shown=shown,
        shown_team=deal.decl_team if deal.decl_shown else None, shown_points=deal.decl_points,
        outcome_tricks=[(lead, list(cards), win) for lead, cards, win in deal.tricks],
    )


# --------------------------------------------------------------- the checker
@dataclass
class Cursor:
    """Where a bot's stream stands in the match: deal index and actions seen."""

    deal: int = -1
    k: int = 0
    deals_ended: int = 0


class StreamChecker:
    """Replays one bot's messages of one match against the match's truth."""

    def __init__(self, bot: RawBot, record: MatchRecord, seed: str) -> None:
        self.bot = bot
        self.record = record
        self.seed = seed
        self.rules = Ruleset.from_spec(record.ruleset)
        self.deals = [deal_truth(i, d, self.rules) for i, d in enumerate(record.deals)]
        self.match_id = record.match_id
        self.seats = [s for s in range(4) if record.players[s] == bot.name]
        assert len(self.seats) == 2
        self.cursor = Cursor()
        self.requests = 0
        self.strikes = 0
        self.where = ""

    # ------------------------------------------------------------ helpers
    def truth(self) -> DealTruth:
        assert 0 <= self.cursor.deal < len(self.deals), f"{self.where}: no deal {self.cursor.deal}"
        return self.deals[self.cursor.deal]

    def allowed(self, seat: int | None) -> int:
        d, k = self.truth(), self.cursor.k
        mask = d.public(k)
        if seat is not None:
            mask |= d.hand(seat, k)
        return mask

    def check_mentions(self, mask: int, what: str, seat: int | None, extra: int = 0) -> None:
        """Every card of ``mask`` is public now, or (for a seat's own message) in its hand."""
        d, k = self.truth(), self.cursor.k
        leaked = mask & ~(self.allowed(seat) | extra)
        if not leaked:
            return
        owners = [s for s in range(4) if d.hand(s, k) & leaked]
        partner = [s for s in owners if seat is not None and s == seat ^ 2]
        receiver = f"seat {seat}" if seat is not None else f"{self.bot.name}'s public events"
        own = show(d.hand(seat, k)) if seat is not None else "-"
        raise AssertionError(
            f"{self.where}: {what} mentions {show(leaked)}, unplayed cards of seat(s) {owners}"
            f"{' (its partner, held by the same bot)' if partner else ''}, sent to {receiver} "
            f"(deal {d.index}, after {k} actions; its hand {own}, "
            f"public {show(d.public(k))})"
        )

    def check_text(self, text: str, what: str, seat: int | None, extra: int = 0) -> None:
        mask = 0
        for token in CARD_TOKEN.findall(text):
            mask |= bit(Card.parse(token))
        self.check_mentions(mask, f"{what} {text!r}", seat, extra)

    def check_json(self, value: Any, what: str) -> None:
        if isinstance(value, str):
            if re.fullmatch(r"[789TJQKA][SHDC]", value):
                self.check_mentions(bit(Card.parse(value)), what, None)
        elif isinstance(value, dict):
            for key, v in value.items():
                self.check_json(v, f"{what}.{key}")
        elif isinstance(value, list):
            for i, v in enumerate(value):
                self.check_json(v, f"{what}[{i}]")

    # --------------------------------------------------------------- run
    def run(self, received: list[Received]) -> None:
        seed_bytes = self.seed.encode()
        started: list[int] = []
        ended: list[int] = []
        for n, r in enumerate(received):
            msg = r.msg
            kind = msg.WhichOneof("message")
            self.where = f"{self.bot.name} message {n} (#{r.order}, {kind}) of match {self.match_id}"
            assert seed_bytes not in msg.SerializeToString(), f"{self.where} carries the match seed"
            for i, ev in enumerate(msg.events):
                self.where = f"{self.bot.name} message {n} ({kind}) event {i}"
                self.event(ev)
            self.where = f"{self.bot.name} message {n} ({kind}) of match {self.match_id}"
            if kind == "match_started":
                ms = msg.match_started
                assert ms.match_id == self.match_id
                assert self.cursor.deal == -1, f"{self.where}: MatchStarted after the first deal began"
                assert self.seed not in str(ms), f"{self.where}: MatchStarted carries the seed"
                started.append(ms.seat)
            elif kind == "action_request":
                self.request(msg.action_request)
            elif kind == "strike":
                self.strike(msg.strike)
            elif kind == "match_ended":
                me = msg.match_ended
                assert me.match_id == self.match_id
                assert tuple(me.result.totals) == self.record.totals
                ended.append(me.seat)
            else:
                assert kind == "flush", f"{self.where}: unexpected {kind} during a match"
        assert sorted(started) == self.seats, f"{self.bot.name}: MatchStarted for seats {started}"
        assert sorted(ended) == self.seats, f"{self.bot.name}: MatchEnded for seats {ended}"
        assert self.cursor.deal == len(self.deals) - 1, "not every deal was announced"
        assert self.cursor.deals_ended == len(self.deals), "not every deal end was announced"
        assert self.cursor.k == len(self.deals[-1].actions), "not every action was announced"

    def event(self, ev: pb.PublicEvent) -> None:
        assert ev.match_id == self.match_id, f"{self.where}: an event of match {ev.match_id}"
        kind = ev.WhichOneof("event")
        if kind == "deal_started":
            assert ev.deal_index == self.cursor.deal + 1, f"{self.where}: deal {ev.deal_index} starts"
            assert self.cursor.deal < 0 or self.cursor.deals_ended == self.cursor.deal + 1
            self.cursor.deal, self.cursor.k = ev.deal_index, 0
            d = self.truth()
            assert ev.deal_started.dealer == d.dealer
            if d.retourne >= 0:
                assert ev.deal_started.retourne == d.retourne
            else:
                assert not ev.deal_started.HasField("retourne")
            if ev.deal_started.HasField("retourne"):
                self.check_mentions(bit(ev.deal_started.retourne), "DealStarted.retourne", None)
            return
        assert ev.deal_index == self.cursor.deal, f"{self.where}: an event of deal {ev.deal_index}"
        d = self.truth()
        if kind == "action_played":
            ap = ev.action_played
            k = self.cursor.k
            assert k < len(d.actions), f"{self.where}: more actions than the record has"
            assert (ap.seat, ap.action) == (d.seat_of[k], d.actions[k]), (
                f"{self.where}: action {k} is {format_action(ap.action)} by seat {ap.seat}, the record "
                f"says {format_action(d.actions[k])} by seat {d.seat_of[k]}"
            )
            assert ap.text == format_action(ap.action)
            self.cursor.k += 1  # the card is public from now on
            if ap.action < BID:
                self.check_mentions(bit(ap.action & 31), "ActionPlayed.action", None)
            self.check_text(ap.text, "ActionPlayed.text", None)
        elif kind == "trick_completed":
            tc = ev.trick_completed
            n = d.n_plays(self.cursor.k)
            assert n % 4 == 0 and n > 0, f"{self.where}: a trick completed after {n} cards"
            lead, cards, winner = d.outcome_tricks[n // 4 - 1]
            assert (tc.leader, list(tc.cards), tc.winner) == (lead, cards, winner)
            for c in tc.cards:
                self.check_mentions(bit(c), "TrickCompleted.cards", None)
        elif kind == "declarations_shown":
            ds = ev.declarations_shown
            assert d.annonces and d.n_plays(self.cursor.k) == 5, (
                f"{self.where}: declarations shown after {d.n_plays(self.cursor.k)} cards"
            )
            assert list(ds.melds) == d.shown, f"{self.where}: melds {[show(m) for m in ds.melds]}"
            assert (ds.team if ds.HasField("team") else None) == d.shown_team
            assert ds.points == d.shown_points
            for s, m in enumerate(ds.melds):
                self.check_mentions(m, f"DeclarationsShown.melds[{s}]", None)
        elif kind == "deal_ended":
            assert self.cursor.k == len(d.actions), f"{self.where}: the deal ends before its last action"
            assert self.cursor.deals_ended == ev.deal_index
            self.cursor.deals_ended += 1
            outcome = json.loads(ev.deal_ended.outcome_json)
            self.check_json(outcome, "DealEnded.outcome_json")
            tricks = [(t["leader"], [int(Card.parse(c)) for c in t["cards"]], t["winner"])
                      for t in outcome.get("tricks", [])]
            assert tricks == d.outcome_tricks
        elif kind == "strike_given":
            sg = ev.strike_given
            k = self.cursor.k
            # told before the fallback is played: the fallback is that next action
            assert sg.fallback_action == d.actions[k] and sg.seat == d.seat_of[k], (
                f"{self.where}: the fallback {format_action(sg.fallback_action)} is not the next action"
            )
            about_to_play = bit(sg.fallback_action & 31) if sg.fallback_action < BID else 0
            self.check_mentions(about_to_play, "StrikeGiven.fallback_action", None, extra=about_to_play)
            self.check_text(sg.reason, "StrikeGiven.reason", None)
            assert sg.kind != pb.STRIKE_REASON_UNSPECIFIED
        else:
            raise AssertionError(f"{self.where}: unknown event {kind}")

    def request(self, req: bpb.ActionRequest) -> None:
        self.requests += 1
        assert req.match_id == self.match_id
        seat = req.seat
        assert seat in self.seats, f"{self.where}: a request for seat {seat}, not one of {self.seats}"
        obs = req.observation
        assert obs.seat == seat
        assert obs.deal_index == self.cursor.deal, f"{self.where}: a request of deal {obs.deal_index}"
        d = self.truth()
        k = len(obs.bids) + len(obs.plays)
        assert k == self.cursor.k, (
            f"{self.where}: the request comes after {k} actions but {self.cursor.k} were announced"
        )
        assert d.seat_of[k] == seat, f"{self.where}: seat {seat} asked, seat {d.seat_of[k]} is to act"
        assert list(obs.bids) == d.bids[: len(obs.bids)]
        assert list(obs.plays) == d.plays[: len(obs.plays)]
        assert len(obs.plays) == 0 or len(obs.bids) == len(d.bids)
        hand = d.hand(seat, k)
        assert obs.hand == hand, (
            f"{self.where}: observation.hand {show(obs.hand)} is not seat {seat}'s hand {show(hand)} "
            f"(deal {d.index}, after {k} actions)"
        )
        partner = d.hand(seat ^ 2, k) & ~d.public(k)
        assert not obs.hand & partner, f"{self.where}: seat {seat} is sent its partner's cards"
        self.check_mentions(obs.hand, "Observation.hand", seat)
        if d.retourne >= 0:
            assert obs.HasField("retourne") and obs.retourne == d.retourne
        if obs.HasField("retourne"):
            self.check_mentions(bit(obs.retourne), "Observation.retourne", seat)
        for b in obs.bids:
            assert b >= BID, f"{self.where}: a bid code {b} that is a card"
        for p in obs.plays:
            self.check_mentions(bit(p & 31), "Observation.plays", seat)
        if obs.shown_melds:
            assert list(obs.shown_melds) == d.shown_at(k), (
                f"{self.where}: shown_melds {[show(m) for m in obs.shown_melds]} after {d.n_plays(k)} cards"
            )
            assert obs.declarations_team == d.shown_team
        else:
            assert d.shown_at(k) == [0, 0, 0, 0], f"{self.where}: the shown melds are missing"
        for s, m in enumerate(obs.shown_melds):
            self.check_mentions(m, f"Observation.shown_melds[{s}]", seat)
        mentioned = 0
        for a in req.legal_actions:
            if a < BID:
                mentioned |= bit(a & 31)
        assert mentioned & ~hand == 0, f"{self.where}: legal cards {show(mentioned)} outside the hand"
        self.check_mentions(mentioned, "ActionRequest.legal_actions", seat)
        for m in (mentioned, obs.hand):
            assert not m & partner, f"{self.where}: seat {seat} sees its partner's hand"

    def strike(self, st: bpb.Strike) -> None:
        self.strikes += 1
        d = self.truth()
        k = self.cursor.k
        assert st.match_id == self.match_id and st.seat in self.seats
        assert st.seat == d.seat_of[k] and st.fallback_action == d.actions[k]
        if st.fallback_action < BID:
            self.check_mentions(bit(st.fallback_action & 31), "Strike.fallback_action", st.seat)
        self.check_text(st.reason, "Strike.reason", None)  # the public sentence names no card
        self.check_text(st.detail, "Strike.detail", st.seat)  # what the seat answered: its own cards
        assert st.kind != pb.STRIKE_REASON_UNSPECIFIED


# ------------------------------------------------------------ playing matches
def match_messages(bot: RawBot, match_id: str, since: int) -> list[Received]:
    """The bot's messages of one match: from its MatchStarted to its last MatchEnded."""
    out = []
    inside = False
    for r in bot.log[since:]:
        msg = r.msg
        kind = msg.WhichOneof("message")
        if kind == "match_started" and msg.match_started.match_id == match_id:
            inside = True
        if inside:
            out.append(r)
        if kind == "match_ended" and msg.match_ended.match_id == match_id and \
                sum(1 for x in out if x.msg.HasField("match_ended")) == 2:
            break
    return out


def schedule(matches: int, deals: int) -> Iterator[tuple[int, str, int]]:
    for i in range(matches):
        yield i, RULESETS[i % len(RULESETS)], deals


@dataclass
class Tally:
    matches: int = 0
    deals: int = 0
    requests: int = 0
    strikes: int = 0
    messages: int = 0
    shown: int = 0
    rulesets: set[str] = field(default_factory=set)


async def play_and_check(matches: int, deals: int, salt: str) -> Tally:
    tally = Tally()
    async with local_arena(time=TIME) as arena:
        bots = await connect_raw_bots(arena)
        stop = asyncio.Event()
        tasks = [asyncio.ensure_future(b.run(arena.address, stop)) for b in bots]
        try:
            await asyncio.wait_for(asyncio.gather(*(b.welcome.wait() for b in bots)), 10)
            for i, ruleset, n in schedule(matches, deals):
                seed = f"seed-that-must-stay-secret-{salt}-{i}-{random.Random(i).getrandbits(40):x}"
                team0, team1 = (bots[0], bots[1]) if i % 2 == 0 else (bots[1], bots[0])
                marks = [len(b.log) for b in bots]
                assert not any(t.done() for t in tasks), [t for t in tasks if t.done()]
                record = await arena.play(team0.name, team1.name, ruleset, seed=seed, deals=n)
                assert record.result.reason == "finished", record.result
                assert record.seed == seed
                for bot, mark in zip(bots, marks, strict=True):
                    await bot.wait_for_match_end(record.match_id)
                    received = match_messages(bot, record.match_id, mark)
                    checker = StreamChecker(bot, record, seed)
                    checker.run(received)
                    tally.requests += checker.requests
                    tally.strikes += checker.strikes
                    tally.messages += len(received)
                tally.matches += 1
                tally.deals += record.deals_played
                tally.shown += sum(1 for d in checker.deals if any(d.shown))
                tally.rulesets.add(ruleset)
            # every illegal answer, and nothing else, was a strike
            assert tally.strikes == sum(b.illegal_answers for b in bots)
            # nothing but Welcome arrived outside the matches checked above
            for bot in bots:
                kinds = {r.msg.WhichOneof("message") for r in bot.log}
                assert kinds <= {"welcome", "match_started", "action_request", "flush", "strike",
                                 "match_ended"}, kinds
        finally:
            stop.set()
            await asyncio.gather(*tasks, return_exceptions=True)
    return tally


async def connect_raw_bots(arena: LocalArena) -> list[RawBot]:
    bots = []
    for n, name in enumerate(("raw-north-south", "raw-east-west")):
        _, token = arena.node.register_bot(name)
        bots.append(RawBot(name, token, seed=1000 + n))
    return bots


# -------------------------------------------------------------------- tests
def test_no_seat_receives_another_seats_unplayed_card() -> None:
    tally = asyncio.run(play_and_check(matches=16, deals=2, salt="fast"))
    assert tally.matches == 16 and tally.deals == 32
    assert tally.rulesets == set(RULESETS)
    assert tally.requests > 16 * 2 * 32  # every card of every deal was asked for
    assert tally.strikes > 0, "no strike was exercised; raise ILLEGAL_RATE"
    assert tally.shown > 0, "no declaration was shown"


@pytest.mark.slow
def test_no_seat_receives_another_seats_unplayed_card_over_hundreds_of_deals() -> None:
    tally = asyncio.run(play_and_check(matches=40, deals=10, salt="slow"))
    assert tally.deals >= 400
    assert tally.rulesets == set(RULESETS)
    assert tally.shown > 0, "no declaration was ever shown"
    assert tally.strikes > 10


def test_match_started_has_no_seed_field() -> None:
    names = {f.name for f in bpb.MatchStarted.DESCRIPTOR.fields}
    assert not any("seed" in n for n in names), names
    for message in (bpb.ConnectResponse, bpb.ActionRequest, pb.Observation, pb.PublicEvent,
                    bpb.MatchEnded, pb.MatchResult):
        assert not any("seed" in f.name for f in message.DESCRIPTOR.fields), message.DESCRIPTOR.name
