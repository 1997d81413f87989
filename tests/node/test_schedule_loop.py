"""The node's schedule loop says why a ladder's occurrence is not made, once per cause, and makes one
with more bots opted in than a tournament takes (on both backends)."""

from __future__ import annotations

import logging

import pytest

from arena.node.schedules import ScheduleLoop
from arena.queue import Broker
from arena.tournament import Tournaments
from arena.tournament.schedule import Schedule, Schedules
from arena.tournament.spec import MAX_BOTS


def ladder_loop(broker: Broker) -> ScheduleLoop:
    """A loop (not started: each look is run here) with a weekly Swiss of the coinche ladder, due now."""
    Schedules(broker).create(Schedule.make("weekly", 7 * 86_400, "", [], {
        "format": "swiss", "ruleset": "coinche", "deals": 2}, ladder="coinche"))
    return ScheduleLoop(broker, Tournaments(broker))


def lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    out = [r.getMessage() for r in caplog.records if r.name == "arena.node"]
    caplog.clear()
    return out


def test_an_occurrence_waiting_for_bots_is_logged_once_per_cause(
    broker: Broker, caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, "arena.node")
    loop = ladder_loop(broker)
    for _ in range(5):  # each rescan finds it waiting still: one line in all
        loop.run_once()
    [line] = lines(caplog)
    assert line.startswith("schedule weekly: its occurrence due ")
    assert line.endswith("waits for bots: 0 are opted in to the coinche ladder (a tournament needs 2 to 256 "
                         "bots, not 0); it is made once there are enough")
    assert caplog.records == [] and loop.made == []
    broker.ladder_add("coinche", "alpha")
    loop.run_once()
    loop.run_once()
    [line] = lines(caplog)
    assert "1 is opted in" in line  # a new cause: said once more
    broker.ladder_add("coinche", "beta")
    loop.run_once()
    [made] = loop.made
    assert lines(caplog) == [f"scheduled tournament {made} made"]
    loop.run_once()
    assert lines(caplog) == []


@pytest.mark.security
def test_a_flood_of_opted_in_bots_still_makes_the_occurrence_and_says_how(
    broker: Broker, caplog: pytest.LogCaptureFixture,
) -> None:
    """A flood of bots opting in (257 > 256, the most a tournament takes) made no tournament before,
    and said nothing: the occurrence is made with 256 of them drawn, and the line says so."""
    caplog.set_level(logging.INFO, "arena.node")
    for i in range(MAX_BOTS + 1):
        broker.ladder_add("coinche", f"bot{i:03d}")
    loop = ladder_loop(broker)
    loop.run_once()
    [made] = loop.made
    assert lines(caplog) == [f"scheduled tournament {made} made: 256 of the 257 bots opted in to the coinche "
                             "ladder, drawn at random (an occurrence plays 256 at most)"]
    spec, _ = Tournaments(broker)._get(made)
    assert len(spec.bots) == MAX_BOTS
