"""A finished match's public events, rebuilt from its record, are the ones its watchers saw live.

The node keeps nothing of a finished match but its record: a spectator who
comes after the end gets the events rebuilt from it
(:mod:`arena.referee.replay_events`). The property test plays matches through
the real runner, hub and bot links over in-memory streams (thousands of
decisions a second, so hypothesis can try many), with bots that pass, answer
illegally, say they have no answer or stay silent; the gRPC tests check the
same thing end to end, including a node restarted on its data folder.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from belote.arena.v1 import arena_service_pb2 as apb
from belote.arena.v1 import bot_service_pb2 as bpb
from belote.arena.v1 import game_pb2 as gpb
from belote_bot import Bot, HeuristicBot, Observation, RandomBot
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.engine import PRESETS, RecordError, Ruleset
from arena.engine.actions import NO_ACTION, PASS
from arena.harness import local_arena
from arena.records import MatchRecord, ResultReason, TimeControl
from arena.referee.node import NodeConfig
from arena.referee.replay_events import public_events
from arena.referee.runner import MatchRunner, MatchSpec, Seat
from arena.referee.sessions import BotLink, Hub

from .arena_helpers import FAST, ScriptedBot, arena_stub, arun, collect, fail, node_server, result_pb

pytestmark = pytest.mark.reliability


# ------------------------------------------------------- in-memory matches
@dataclass(frozen=True)
class Temper:
    """How a bot behaves, decision by decision (each a probability)."""

    #: in the bidding, pass (a deal where all four pass is thrown in)
    passes: float = 0.0
    #: answer an action that is not legal, or the no-action code: a strike
    bad: float = 0.0
    #: answer nothing: a late strike once the deadline is over
    silent: float = 0.0


def answer_of(rng: random.Random, temper: Temper, legal: list[int]) -> int | None:
    r = rng.random()
    if r < temper.silent:
        return None
    if r < temper.silent + temper.bad:
        return rng.choice([NO_ACTION, *sorted(set(range(40)) - set(legal))])
    if PASS in legal and rng.random() < temper.passes:
        return PASS
    return rng.choice(legal)


def in_memory_writer(
    link: BotLink, rng: random.Random, temper: Temper,
) -> Callable[[bytes], Awaitable[None]]:
    """A bot stream without gRPC: what the link writes is parsed and its requests answered."""
    loop = asyncio.get_running_loop()

    async def write(data: bytes) -> None:
        msg = bpb.ConnectResponse.FromString(data)
        requests = [msg.action_request] if msg.HasField("action_request") else list(msg.action_requests)
        for req in requests:
            action = answer_of(rng, temper, list(req.legal_actions))
            if action is not None:
                loop.call_soon(link.resolve, req.request_id, action)

    return write


async def play_in_memory(
    rules: Ruleset, seed: int, temper: Temper, max_strikes: int = 3,
) -> tuple[list[gpb.PublicEvent], MatchRecord]:
    """One match through the real runner and hub over in-memory streams: what it published, its record."""
    hub = Hub()
    rng = random.Random(seed)
    links = [hub.link(f"bot-{i}", f"bot{i}") for i in range(2)]
    streams = [link.attach(in_memory_writer(link, rng, temper), name=link.name, version="", concurrency=2)
               for link in links]
    seats = [Seat(links[i & 1].bot_id, links[i & 1].name, links[i & 1]) for i in range(4)]
    # a silent seat costs the deadline; the time bank is empty, so each silence is a strike
    clock = TimeControl(deadline=0.005, time_bank=0.0, max_strikes=max_strikes, grace=1.0)
    published: list[gpb.PublicEvent] = []
    spec = MatchSpec(f"m-{seed:012x}", rules, seed, seats, time=clock)
    # the runner publishes each event serialized (as it queues it for the bots)
    record = await MatchRunner(hub, spec, publish=lambda data: published.append(
        gpb.PublicEvent.FromString(data))).run()
    for link, stream in zip(links, streams, strict=True):
        link.detach(stream)
    return published, record


def rebuilt(record: MatchRecord) -> list[gpb.PublicEvent]:
    """The events rebuilt from the record as the store gives it back (through its JSON)."""
    return list(public_events(MatchRecord.from_json(record.to_json())))


def kinds(events: list[gpb.PublicEvent]) -> set[str]:
    return {e.WhichOneof("event") or "" for e in events}


TEMPERS = st.builds(
    Temper, passes=st.sampled_from([0.0, 0.5, 0.9]), bad=st.sampled_from([0.0, 0.02, 0.1]),
    silent=st.sampled_from([0.0, 0.01]),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(preset=st.sampled_from(sorted(PRESETS)), deals=st.integers(1, 4), seed=st.integers(0, 2**32),
       temper=TEMPERS, max_strikes=st.integers(1, 6), redeals=st.booleans())
def test_the_events_rebuilt_from_a_record_are_those_published_live(
    preset: str, deals: int, seed: int, temper: Temper, max_strikes: int, redeals: bool,
) -> None:
    rules = Ruleset.from_spec(preset).with_options(deals=deals)
    if redeals:  # a redeal is a bid that throws the deal in
        rules = rules.with_options(redeal_four_sevens=True, redeal_low_hand=not rules.is_coinche)
    published, record = arun(play_in_memory(rules, seed, temper, max_strikes))
    assert rebuilt(record) == published


@pytest.mark.parametrize(("what", "preset", "temper", "max_strikes", "expected"), [
    pytest.param("strikes", "coinche", Temper(bad=0.1, silent=0.02), 6, {"strike_given"}, id="strikes"),
    pytest.param("a forfeit mid-deal", "coinche", Temper(bad=0.3), 1, {"strike_given"}, id="forfeit"),
    pytest.param("declarations", "coinche", Temper(), 3, {"declarations_shown"}, id="declarations"),
    pytest.param("thrown-in deals", "coinche", Temper(passes=0.95), 3, {"deal_ended"}, id="thrown-in"),
    pytest.param("a retourne, trumps chosen in two rounds", "classic-annonces", Temper(passes=0.6), 3,
                 {"declarations_shown"}, id="classic"),
])
def test_rebuilt_events_cover_each_kind_of_match(
    what: str, preset: str, temper: Temper, max_strikes: int, expected: set[str],
) -> None:
    """Fixed seeds where each kind of event the rebuild must place right does happen."""
    seen: set[str] = set()
    thrown_in = forfeits = 0
    for seed in range(12):
        rules = Ruleset.from_spec(preset).with_options(deals=4)
        published, record = arun(play_in_memory(rules, seed, temper, max_strikes))
        assert rebuilt(record) == published, f"seed {seed}"
        seen |= kinds(published)
        thrown_in += sum(not d["plays"] for d in record.deals)
        forfeits += record.unfinished_deal is not None
    assert expected <= seen, what
    if what == "thrown-in deals":
        assert thrown_in > 0
    if what == "a forfeit mid-deal":
        assert forfeits > 0


def test_a_record_whose_actions_do_not_replay_is_a_record_error() -> None:
    _, record = arun(play_in_memory(Ruleset.from_spec("coinche").with_options(deals=1), 5, Temper()))
    deal = dict(record.deals[0])
    deal["plays"] = [*deal["plays"][:-1], deal["plays"][0]]  # a card played twice
    spoiled = MatchRecord.from_dict({**record.to_dict(), "deals": [deal]})
    with pytest.raises(RecordError):
        list(public_events(spoiled))


# ----------------------------------------------------------- over gRPC
def gated(gate: asyncio.Event, inner: Bot, script: Callable[[int, Observation], Any] | None = None) -> Bot:
    """``inner``, whose first decision waits for ``gate`` (the live watcher is in before any action),
    and whose decisions ``script`` may replace (a failure: a strike)."""
    async def first(obs: Observation) -> Any:
        await gate.wait()
        return inner.act(obs)

    def decide(n: int, obs: Observation) -> Any:
        if n == 0:
            return first(obs)
        return script(n, obs) if script is not None else None

    return ScriptedBot(decide, inner)


class Passer(Bot):
    """Passes whenever it may (every deal it bids in first is thrown in if the other bot passes too)."""

    act_inline = True

    def __init__(self, inner: Bot) -> None:
        self.inner = inner

    def act(self, obs: Observation) -> Any:
        if obs.deal_index == 0 and "pass" in [str(a) for a in obs.legal_actions]:
            return "pass"
        return self.inner.act(obs)


def test_a_late_watcher_and_a_restarted_node_show_the_events_the_live_watcher_saw(tmp_path: Path) -> None:
    """Strikes, declarations and a thrown-in first deal, seen live, after the end, and after a restart."""
    async def played() -> tuple[str, list[apb.WatchMatchResponse], list[apb.WatchMatchResponse]]:
        async with local_arena(data_dir=tmp_path, time=FAST) as arena:
            gate = asyncio.Event()
            # alpha's 5th and 9th decisions fail: two strikes, below the limit of three
            await arena.connect("alpha", gated(gate, Passer(HeuristicBot(1)),
                                               lambda n, obs: fail() if n in (5, 9) else None))
            await arena.connect("beta", gated(gate, Passer(RandomBot(2))))
            async with arena_stub(arena.address, arena.admin_token) as stub:
                started = await stub.StartMatch(apb.StartMatchRequest(
                    team0_bot="alpha", team1_bot="beta", ruleset="coinche", seed="replay", deals=6))
                call = stub.WatchMatch(apb.WatchMatchRequest(match_id=started.match_id))
                first = await call.read()
                assert isinstance(first, apb.WatchMatchResponse)
                gate.set()
                live = [first, *await collect(call)]
                late = await collect(stub.WatchMatch(apb.WatchMatchRequest(match_id=started.match_id)))
            return started.match_id, live, late

    mid, live, late = arun(played())

    async def after_restart() -> list[apb.WatchMatchResponse]:
        async with node_server(NodeConfig(data_dir=tmp_path, time=FAST)) as (_, address), \
                arena_stub(address) as stub:
            return await collect(stub.WatchMatch(apb.WatchMatchRequest(match_id=mid)))

    restarted = arun(after_restart())
    assert live == late == restarted
    events = [m.event for m in live[:-1]]
    record = MatchRecord.from_json((tmp_path / "matches" / f"{mid}.json").read_text())
    assert live[-1].result == result_pb(record) and record.result.reason is ResultReason.FINISHED
    assert {"strike_given", "declarations_shown", "deal_ended"} <= kinds(events)
    assert len(record.strikes) == 2
    assert not record.deals[0]["plays"], "the first deal is thrown in"
