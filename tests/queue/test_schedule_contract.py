"""Scheduled tournaments on both backends: stored once, each occurrence made exactly once by however
many nodes (threads or processes) ask at once, never an older occurrence after a newer one, and
nothing made for a schedule cancelled or made again meanwhile."""

from __future__ import annotations

import multiprocessing
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from arena.queue.broker import Broker
from arena.tournament import Tournaments, TournamentState
from arena.tournament.schedule import (
    Schedule,
    ScheduleError,
    ScheduleExists,
    Schedules,
    UnknownSchedule,
    draw,
)
from arena.tournament.spec import MAX_BOTS, TournamentError
from tests.queue import procs
from tests.queue.conftest import Store

T0 = 1_767_225_600  # 2026-01-01 00:00:00 UTC


def nightly(sid: str = "nightly", every: int = 86_400, at: str = "02:00", now: int = T0) -> Schedule:
    return Schedule.make(sid, every, at, ["alpha", "beta", "gamma"], {"format": "round-robin", "deals": 2},
                         now=now)


def test_a_schedule_is_stored_listed_and_cancelled(broker: Broker) -> None:
    schedules = Schedules(broker)
    s = nightly()
    schedules.create(s)
    with pytest.raises(ScheduleExists):
        schedules.create(nightly())
    [stored] = schedules.stored()
    assert stored.schedule == s and stored.last == 0
    assert s.first == T0 + 2 * 3600  # 02:00 of the day it was made, still ahead
    schedules.cancel("nightly")
    assert schedules.stored() == []
    with pytest.raises(UnknownSchedule):
        schedules.cancel("nightly")


def test_the_latest_occurrence_due_is_made_once_and_never_an_older_one(broker: Broker) -> None:
    schedules, tours = Schedules(broker), Tournaments(broker)
    s = nightly()
    schedules.create(s)
    assert schedules.run_due(T0 + 3600)[:2] == ([], s.first)  # nothing due before 02:00
    made, wake, _, _ = schedules.run_due(s.first + 5)
    assert made == ["nightly@20260101T020000Z"] and wake == s.first + 86_400
    assert schedules.run_due(s.first + 6)[0] == []  # asked again: made already
    # every node down for three days: the latest occurrence missed only, not the backlog
    made = schedules.run_due(s.first + 3 * 86_400 + 60).made
    assert made == ["nightly@20260104T020000Z"]
    # a node whose clock is a day behind makes nothing older than what was made
    assert schedules.run_due(s.first + 2 * 86_400 + 60)[0] == []
    assert broker.list_tournaments() == ["nightly@20260101T020000Z", "nightly@20260104T020000Z"]
    spec, state = tours._get("nightly@20260104T020000Z")
    assert state is TournamentState.CREATED and spec.bots == ("alpha", "beta", "gamma") and spec.deals == 2
    assert spec.unrated_reason == "" and len(spec.seed) == 64
    assert schedules.stored()[0].last == s.first + 3 * 86_400


def test_a_ladders_schedule_plays_the_bots_opted_in_at_each_occurrence(broker: Broker) -> None:
    schedules, tours = Schedules(broker), Tournaments(broker)
    s = Schedule.make("weekly", 7 * 86_400, "", [], {"format": "swiss", "ruleset": "coinche", "deals": 2},
                      now=T0, ladder="coinche")
    assert s.bots.text == "@ladder:coinche" and Schedule.from_json(s.to_json()) == s
    schedules.create(s)
    broker.ladder_add("coinche", "alpha")
    # one bot opted in: too few for a tournament, so the occurrence waits (made once there are enough)
    assert schedules.run_due(T0 + 1)[0] == []
    for bot in ("beta", "gamma"):
        broker.ladder_add("coinche", bot)
    assert schedules.run_due(T0 + 2)[0] == ["weekly@20260101T000000Z"]
    spec, _ = tours._get("weekly@20260101T000000Z")
    assert spec.bots == ("alpha", "beta", "gamma") and spec.format == "swiss"
    # the next occurrence reads the bots again: those opted in then
    broker.ladder_remove("coinche", "gamma")
    broker.ladder_add("coinche", "delta")
    assert schedules.run_due(T0 + 7 * 86_400)[0] == ["weekly@20260108T000000Z"]
    assert tours._get("weekly@20260108T000000Z")[0].bots == ("alpha", "beta", "delta")


def test_a_ladders_schedule_takes_only_the_formats_without_a_named_candidate() -> None:
    with pytest.raises(ScheduleError, match="a ladder's bots play"):
        Schedule.make("x", 3600, "", [], {"format": "sprt", "ruleset": "coinche", "deals": 2}, now=T0,
                      ladder="coinche")


def test_without_at_the_first_occurrence_is_at_once(broker: Broker) -> None:
    schedules = Schedules(broker)
    schedules.create(nightly("now", every=3600, at=""))
    assert schedules.run_due(T0)[0] == ["now@20260101T000000Z"]


def test_a_cancelled_or_remade_schedule_makes_nothing_of_the_old_one(broker: Broker) -> None:
    schedules = Schedules(broker)
    old = nightly()
    schedules.create(old)
    text = old.to_json()
    schedules.cancel("nightly")  # between a node's read and its write
    assert not broker.add_occurrence("nightly", text, old.first, old.spec_for(old.first))
    new = Schedule.make("nightly", 3600, "", ["alpha", "beta"], {"format": "round-robin"}, now=T0 + 1)
    schedules.create(new)
    assert not broker.add_occurrence("nightly", text, old.first, old.spec_for(old.first))
    assert broker.list_tournaments() == []


def test_a_tournament_id_taken_is_not_overwritten(broker: Broker) -> None:
    """A schedule made again under the id of one cancelled: the occurrences already made stay as
    they are, and count as its last."""
    schedules = Schedules(broker)
    s = nightly()
    schedules.create(s)
    [tid] = schedules.run_due(s.first).made
    before = broker.get_tournament(tid)
    schedules.cancel("nightly")
    schedules.create(nightly())
    assert schedules.run_due(s.first)[0] == []
    assert broker.get_tournament(tid) == before
    assert schedules.stored()[0].last == s.first


def test_concurrent_nodes_threads_make_each_occurrence_once(broker: Broker) -> None:
    for i in range(3):
        Schedules(broker).create(nightly(f"s{i}", every=60, at=""))
    start = threading.Barrier(8)

    def run(now: int) -> list[str]:
        start.wait()
        return Schedules(broker).run_due(now)[0]

    for occurrence in range(3):
        with ThreadPoolExecutor(8) as pool:
            made = [t for ids in pool.map(run, [T0 + occurrence * 60 + 1] * 8) for t in ids]
        assert len(made) == 3 and len(set(made)) == 3
    assert len(broker.list_tournaments()) == 9


def test_concurrent_nodes_processes_make_each_occurrence_once(store: Store) -> None:
    broker = store.open()
    for i in range(2):
        Schedules(broker).create(nightly(f"s{i}", every=60, at=""))
    ctx = multiprocessing.get_context("spawn")
    n = 4
    start, out = ctx.Barrier(n), ctx.Queue()
    workers = [ctx.Process(target=procs.run_schedules, args=(store.spec(), T0 + 61, start, out))
               for _ in range(n)]
    for w in workers:
        w.start()
    try:
        made = [t for _ in range(n) for t in out.get(timeout=60)]
    finally:
        for w in workers:
            w.join(30)
    assert [w.exitcode for w in workers] == [0] * n
    assert sorted(made) == ["s0@20260101T000100Z", "s1@20260101T000100Z"]
    assert sorted(broker.list_tournaments()) == sorted(made)


def ladder_schedule(sid: str = "weekly", max_bots: int = 0, **options: object) -> Schedule:
    return Schedule.make(sid, 7 * 86_400, "", [], {"format": "swiss", "ruleset": "coinche", "deals": 2,
                                                   **options}, now=T0, ladder="coinche", max_bots=max_bots)


@pytest.mark.security
def test_a_flood_of_opted_in_bots_cannot_stop_a_ladders_schedule(broker: Broker) -> None:
    """More bots opted in than a tournament takes (257 > 256): the occurrence plays as many as it may,
    drawn at random from the occurrence's id (anyone can check the draw), and says so."""
    schedules, tours = Schedules(broker), Tournaments(broker)
    schedules.create(ladder_schedule())
    opted = [f"bot{i:03d}" for i in range(MAX_BOTS + 1)]
    for bot in opted:
        broker.ladder_add("coinche", bot)
    run = schedules.run_due(T0 + 1)
    assert run.made == ["weekly@20260101T000000Z"] and run.waiting == {}
    spec, _ = tours._get("weekly@20260101T000000Z")
    assert len(spec.bots) == MAX_BOTS and set(spec.bots) < set(opted) and list(spec.bots) == sorted(spec.bots)
    assert list(spec.bots) == draw(opted, MAX_BOTS, "weekly@20260101T000000Z")
    assert "256 of the 257 bots opted in to the coinche ladder, drawn at random" in run.drawn[
        "weekly@20260101T000000Z"]
    # each occurrence draws again: over the weeks, no bot is left out for good
    assert schedules.run_due(T0 + 7 * 86_400).made == ["weekly@20260108T000000Z"]
    assert tours._get("weekly@20260108T000000Z")[0].bots != spec.bots
    # the list says so too, before the next occurrence
    [why] = [schedules.why(s, T0 + 7 * 86_400 + 1) for s in schedules.stored()]
    assert why == ("257 bots are opted in to the coinche ladder, more than an occurrence plays (256): "
                   "each occurrence draws 256 of them at random")


def test_a_ladders_schedule_may_play_fewer_bots_than_a_tournament_takes(broker: Broker) -> None:
    schedules, tours = Schedules(broker), Tournaments(broker)
    s = ladder_schedule(max_bots=8)
    assert Schedule.from_json(s.to_json()) == s and s.max_bots == 8
    schedules.create(s)
    for i in range(20):
        broker.ladder_add("coinche", f"bot{i:02d}")
    assert schedules.run_due(T0 + 1).made == ["weekly@20260101T000000Z"]
    assert len(tours._get("weekly@20260101T000000Z")[0].bots) == 8
    with pytest.raises(ScheduleError, match="max_bots bounds a ladder's bots"):
        Schedule.make("named", 3600, "", ["alpha", "beta"], {"format": "round-robin"}, now=T0, max_bots=8)
    for bad in (1, MAX_BOTS + 1):
        with pytest.raises(ScheduleError, match=f"max_bots must be from 2 to {MAX_BOTS}"):
            ladder_schedule(max_bots=bad)
    with pytest.raises(TournamentError, match="field duplicate needs at least 4 bots"):
        ladder_schedule(max_bots=3, duplicate="field")  # refused when made, not at each occurrence


def test_a_ladders_schedule_with_too_few_bots_says_why_it_waits(broker: Broker) -> None:
    schedules = Schedules(broker)
    schedules.create(ladder_schedule())
    run = schedules.run_due(T0 + 1)
    assert run.made == [] and run.waiting == {"weekly": (
        "its occurrence due 2026-01-01 00:00:00 UTC waits for bots: 0 are opted in to the coinche ladder "
        "(a tournament needs 2 to 256 bots, not 0); it is made once there are enough")}
    [stored] = schedules.stored()
    assert schedules.why(stored, T0 + 2) == run.waiting["weekly"]
    broker.ladder_add("coinche", "alpha")
    assert "1 is opted in" in schedules.run_due(T0 + 3).waiting["weekly"]
    broker.ladder_add("coinche", "beta")
    run = schedules.run_due(T0 + 4)
    assert run.made == ["weekly@20260101T000000Z"] and run.waiting == {}
    assert schedules.why(schedules.stored()[0], T0 + 5) == ""
