"""A node's version tests on both brokers, step by step (the real broker, registry and tournaments, no
match played): a test starts once for a candidate whose versions are both connected here and whose bot
plays a ladder that is on; a change of the versions meanwhile leaves no test behind; a test made moot
by a promotion by hand is stopped."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from arena.node.versions import OPTIONS, Here, VersionTests, is_test
from arena.queue import Broker
from arena.referee.registry import BotEntry, BotRegistry
from arena.referee.versions import find, promote, seen
from arena.tournament import Tournaments, TournamentState
from tests.tournament.helpers import play_job

POOL = "coinche"


def setup(broker: Broker) -> tuple[BotRegistry, VersionTests, list[str]]:
    registry = BotRegistry()  # in memory: the versions' changes are the registry's own
    registry.register("alpha")
    registry.update_versions("alpha", lambda vs: seen(vs, "1", 1000))
    registry.update_versions("alpha", lambda vs: seen(vs, "2", 1001))
    counted: list[str] = []
    tests = VersionTests(broker, Tournaments(broker), registry.update_entry, counted=counted.append)
    return registry, tests, counted


def entry(registry: BotRegistry) -> BotEntry:
    found = registry.by_name("alpha")
    assert found is not None
    return found


def state(registry: BotRegistry, version: str) -> str:
    v = find(entry(registry).versions, version)
    return "" if v is None else v.state


def test_a_test_starts_once_when_both_versions_are_here_and_the_ladder_is_on(broker: Broker) -> None:
    registry, tests, counted = setup(broker)
    both = frozenset({"1", "2"})
    tests.run([Here(entry(registry), frozenset({"2"}))], {POOL: (4, 30.0)}, lambda p: {"alpha"})
    tests.run([Here(entry(registry), both)], {}, lambda p: {"alpha"})  # no ladder on
    tests.run([Here(entry(registry), both)], {POOL: (4, 30.0)}, lambda p: set())  # not opted in
    assert state(registry, "2") == "candidate" and broker.list_tournaments() == []
    tests.run([Here(entry(registry), both)], {POOL: (4, 30.0)}, lambda p: {"alpha"})
    v2 = find(entry(registry).versions, "2")
    assert v2 is not None and v2.state == "testing" and v2.against == "1" and is_test(v2.test)
    assert broker.list_tournaments() == [v2.test] and counted == ["started"]
    spec, tstate = broker.get_tournament(v2.test)  # type: ignore[misc]
    assert spec.format == "sprt" and spec.bots == ("alpha@2", "alpha@1") and spec.deals == 4
    assert spec.duplicate == "mirror" and spec.unrated_reason and spec.sprt_options == OPTIONS
    assert tstate is TournamentState.RUNNING and broker.pending_count(v2.test) > 0  # its first batch
    # a second look (another node's, or this one's next pass) starts nothing more
    tests.run([Here(entry(registry), both)], {POOL: (4, 30.0)}, lambda p: {"alpha"})
    assert broker.list_tournaments() == [v2.test] and counted == ["started"] and tests.running == 1


def test_a_candidate_promoted_by_hand_meanwhile_leaves_no_test_behind(broker: Broker) -> None:
    registry, tests, counted = setup(broker)
    stale = entry(registry)  # what the ladder thread read
    registry.update_versions("alpha", lambda vs: promote(vs, "2", "hand", 1100))  # then the owner acted
    tests.run([Here(stale, frozenset({"1", "2"}))], {POOL: (4, 30.0)}, lambda p: {"alpha"})
    [tid] = broker.list_tournaments()
    assert broker.get_tournament(tid)[1] is TournamentState.CANCELLED  # type: ignore[index]
    assert broker.pending_count(tid) == 0 and counted == []
    assert state(registry, "2") == "promoted"


def test_a_test_made_moot_by_a_promotion_by_hand_is_stopped_and_its_candidate_waits(broker: Broker) -> None:
    registry, tests, _ = setup(broker)
    registry.update_versions("alpha", lambda vs: seen(vs, "3", 1002))
    both = frozenset({"1", "2", "3"})
    tests.run([Here(entry(registry), both)], {POOL: (4, 30.0)}, lambda p: {"alpha"})
    test = find(entry(registry).versions, "2").test  # type: ignore[union-attr]
    registry.update_versions("alpha", lambda vs: promote(vs, "3", "hand", 1100))
    assert state(registry, "2") == "candidate"  # back to wait, against version 3 now
    tests.run([Here(entry(registry), both)], {POOL: (4, 30.0)}, lambda p: {"alpha"})
    v2 = find(entry(registry).versions, "2")
    assert v2 is not None and v2.state == "testing" and v2.against == "3" and v2.test != test


@pytest.mark.security
def test_two_versions_that_always_pass_get_no_verdict_from_no_evidence(broker: Broker) -> None:
    """The issue's case: versions 1 and 2 pass every bid, so every deal of the test is thrown in and
    every match drawn 0-0. The test rejected version 2 after 8 pairs (LLR -95) on no evidence at
    all; now each pair is set aside, the test ends at its most pairs without a verdict, and version 2
    is left undecided (not rejected), its evidence saying why."""
    registry = BotRegistry()
    registry.register("alpha")
    registry.update_versions("alpha", lambda vs: seen(vs, "1", 1000))
    registry.update_versions("alpha", lambda vs: seen(vs, "2", 1001))
    counted: list[str] = []
    tournaments = Tournaments(broker)
    tests = VersionTests(broker, tournaments, registry.update_entry, counted=counted.append,
                         options=replace(OPTIONS, max_pairs=8))
    both = frozenset({"1", "2"})
    tests.run([Here(entry(registry), both)], {POOL: (2, 30.0)}, lambda p: {"alpha"})
    tid = find(entry(registry).versions, "2").test  # type: ignore[union-attr]
    rng = random.Random(24)
    seats = {"alpha@1": 100, "alpha@2": 100}
    for _ in range(100):
        found = broker.get_tournament(tid)
        assert found is not None
        if not found[1].is_open:
            break
        for claim in broker.claim("node-1", 4, 60.0, seats):
            result = play_job(claim.job, {"alpha@1": "pass", "alpha@2": "pass"}, rng)
            assert result.totals == (0, 0) and not any(d.get("plays") for d in result.record.deals)
            broker.write_result(result)
            broker.ack(claim)
        tournaments.advance(tid)
    assert broker.get_tournament(tid)[1] is TournamentState.FINISHED  # type: ignore[index]
    tests.run([Here(entry(registry), both)], {POOL: (2, 30.0)}, lambda p: {"alpha"})
    v2 = find(entry(registry).versions, "2")
    assert v2 is not None and v2.state == "undecided" and v2.decision == ""
    assert (v2.pairs, v2.set_aside, v2.elo, v2.llr) == (0, 8, None, 0.0)
    assert state(registry, "1") == "promoted" and counted == ["started", "undecided"]
    # it waits for no test of its own: only a newer version, or a promotion by hand, moves it
    tests.run([Here(entry(registry), both)], {POOL: (2, 30.0)}, lambda p: {"alpha"})
    assert state(registry, "2") == "undecided" and broker.list_tournaments() == [tid]
