"""One bot cannot make tournaments without end (issue 24): a bound on how often its versions are tested.

Before: a bot that connected a new version label each time the last one was decided made 40 test
tournaments in 185 s (about 780 an hour), with no admin involved; the first page of the public
tournaments list was all its tests. On both brokers, with the real registry and tournaments (no match
played: each test ends by its tournament's end, as a decision would).
"""

from __future__ import annotations

import functools
from dataclasses import replace
from pathlib import Path

import pytest

from arena.node import versions
from arena.node.versions import (
    DAY_S,
    TESTS_A_DAY,
    TESTS_KEPT,
    Here,
    VersionTestLimits,
    VersionTests,
    forget_records,
    is_test,
    sweep_records,
)
from arena.queue import Broker
from arena.referee.registry import BotEntry, BotRegistry
from arena.referee.store import MatchStore
from arena.referee.versions import find, seen
from arena.tournament import Tournaments

POOL = "coinche"
LADDER = {POOL: (4, 30.0)}


def entry(registry: BotRegistry, name: str) -> BotEntry:
    found = registry.by_name(name)
    assert found is not None
    return found


@pytest.mark.security
def test_a_bot_cycling_version_labels_gets_the_day_s_tests_and_no_more(broker: Broker) -> None:
    registry = BotRegistry()
    registry.register("hostile")
    registry.update_versions("hostile", lambda vs: seen(vs, "1", 1000))
    tournaments = Tournaments(broker)
    clock = Clock(2000.0)
    tests = VersionTests(broker, tournaments, registry.update_entry, clock=clock)
    made: list[str] = []
    for n in range(2, 42):  # 40 labels, each connected as soon as the last one's test is decided
        label = str(n)
        clock.now += 185 / 40
        registry.update_versions("hostile", functools.partial(seen, version=label, now=int(clock.now)))
        here = [Here(entry(registry, "hostile"), frozenset({"1", label}))]
        tests.run(here, LADDER, lambda p: {"hostile"})
        v = find(entry(registry, "hostile").versions, label)
        assert v is not None
        if v.state != "testing":
            break  # it waits: the bot's tests a day are used
        made.append(v.test)
        tournaments.cancel(v.test)  # its test ends (cancelled: no verdict, so undecided)...
        tests.run([Here(entry(registry, "hostile"), frozenset({"1", label}))], LADDER, lambda p: {"hostile"})
        assert find(entry(registry, "hostile").versions, label).state == "undecided"  # type: ignore[union-attr]
    print(f"{len(made)} tests made for 40 labels")
    assert len(made) == TESTS_A_DAY, f"{len(made)} tests made in a row by one bot"
    # and the arena keeps the tournaments of its latest few only: the others are forgotten whole
    assert [t for t in broker.list_tournaments() if is_test(t)] == made[-TESTS_KEPT:]
    assert all(broker.results(t) == [] and broker.get_tournament(t) is None for t in made[:-TESTS_KEPT])
    ended = find(entry(registry, "hostile").versions, "2")
    assert ended is not None and ended.state == "undecided" and ended.test == made[0]  # its evidence
    # the candidate past them waits, and says why and until when, not dropped
    waiting = find(entry(registry, "hostile").versions, label)
    assert waiting is not None and waiting.state == "candidate"
    why = tests.reasons(entry(registry, "hostile"))[label]
    assert f"the most a bot may ({TESTS_A_DAY} a day)" in why and "the next may start at" in why, why
    assert tests.waiting["hostile"] == why
    # a day after its first test began, its next one starts
    clock.now += DAY_S
    tests.run([Here(entry(registry, "hostile"), frozenset({"1", label}))], LADDER, lambda p: {"hostile"})
    assert find(entry(registry, "hostile").versions, label).state == "testing"  # type: ignore[union-attr]
    assert "hostile" not in tests.waiting


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def three_bots(registry: BotRegistry, owners: dict[str, str], clock: Clock) -> None:
    """Bots of ``owners`` (name -> owner), each with version 1 promoted and a candidate 2, the candidates
    seen in the order of ``owners``, a second apart."""
    for name, owner in owners.items():
        registry.register(name)
        registry.update_entry(name, functools.partial(replace, owner=owner))
        registry.update_versions(name, lambda vs: seen(vs, "1", int(clock.now)))
    for name in owners:
        clock.now += 1
        registry.update_versions(name, lambda vs: seen(vs, "2", int(clock.now)))


def look(tests: VersionTests, registry: BotRegistry, names: list[str]) -> None:
    here = [Here(e, frozenset(v.version for v in e.versions)) for e in (entry(registry, n) for n in names)]
    tests.run(here, LADDER, lambda p: set(names))


def under_test(registry: BotRegistry, names: list[str]) -> list[str]:
    return [n for n in names if any(v.state == "testing" for v in entry(registry, n).versions)]


def end_test(tournaments: Tournaments, registry: BotRegistry, name: str) -> None:
    [v] = [v for v in entry(registry, name).versions if v.state == "testing"]
    tournaments.cancel(v.test)


def test_bots_waiting_take_turns_the_longest_waiting_first_within_the_node_s_bound(broker: Broker) -> None:
    registry, clock = BotRegistry(), Clock(5000.0)
    names = ["ann", "bob", "cid"]
    three_bots(registry, {n: "" for n in names}, clock)
    tournaments = Tournaments(broker)
    tests = VersionTests(broker, tournaments, registry.update_entry, clock=clock,
                         limits=VersionTestLimits(at_once=1))
    look(tests, registry, names)
    assert under_test(registry, names) == ["ann"] and tests.running == 1  # the first candidate seen
    assert "1st in line" in tests.waiting["bob"] and "2nd in line" in tests.waiting["cid"]
    assert "the most at once (1)" in tests.waiting["bob"]
    # ann's test ends and ann has a new candidate at once: bob and cid waited longer, and go first
    clock.now += 60
    registry.update_versions("ann", lambda vs: seen(vs, "3", int(clock.now)))
    end_test(tournaments, registry, "ann")
    look(tests, registry, names)  # decides ann's
    look(tests, registry, names)
    assert under_test(registry, names) == ["bob"]
    for name in ("bob", "cid", "ann"):  # then cid, then ann: a turn each
        assert under_test(registry, names) == [name]
        clock.now += 60
        end_test(tournaments, registry, name)
        look(tests, registry, names)
        look(tests, registry, names)
    assert under_test(registry, names) == []  # each has had its test: nothing left to test


def test_one_owner_s_bots_have_one_test_at_a_time_and_the_others_go_on(broker: Broker) -> None:
    registry, clock = BotRegistry(), Clock(5000.0)
    names = ["ann", "ann2", "bob"]
    three_bots(registry, {"ann": "alice", "ann2": "alice", "bob": ""}, clock)
    tests = VersionTests(broker, Tournaments(broker), registry.update_entry, clock=clock,
                         limits=VersionTestLimits(at_once=3, per_owner=1))
    look(tests, registry, names)
    assert under_test(registry, names) == ["ann", "bob"]
    assert tests.waiting == {"ann2": "its owner's bots (alice) have 1 version test under way, the most at "
                                     "once (1)"}
    assert tests.reasons(entry(registry, "ann2")) == {"2": tests.waiting["ann2"]}


def test_a_node_deletes_its_records_of_the_tests_forgotten_and_of_no_other(broker: Broker,
                                                                          tmp_path: Path) -> None:
    store = MatchStore(tmp_path / "matches")
    names = ["vt:alpha:2:1000-r1-0-leg0", "vt:alpha:2:1000-r1-0-leg1", "vt:alpha:3:2000-r1-0-leg0",
             "vt:alpha:2:10000-r1-0-leg0", "league-r1-0", "m-0a1b"]
    for name in names:
        (tmp_path / "matches" / f"{name}.json").write_text("{}")
    assert forget_records(store, ["vt:alpha:2:1000", "league"]) == 2  # a test's only (its notice's data)
    assert store.ids() == sorted(names[2:])
    # the broker still has one of the tests left: a node that missed the notices deletes the other's
    broker.put_tournament(versions.test_spec("alpha", "3", "2", "vt:alpha:3:2000", "coinche", 1))
    assert sweep_records(store, broker) == 1
    assert store.ids() == sorted(["vt:alpha:3:2000-r1-0-leg0", "league-r1-0", "m-0a1b"])
