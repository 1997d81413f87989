"""A bot whose ladder matches end in its forfeit is paused from the ladder, with a backoff, kept in the
broker: the rules of :mod:`arena.node.pauses`, one test each, then the records on both backends."""

from __future__ import annotations

import threading
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.node.ladder import LadderSetting, ladder_job
from arena.node.pauses import POLICY, Conduct, Judged, PausePolicy, Pauses, after_match, notice_text, outcomes
from arena.queue import Broker
from arena.records import ResultReason
from tests.factories import result_of_job
from tests.queue.conftest import Store


def played(outcomes_: str, start: float = 1000.0, gap: float = 1.0,
           policy: PausePolicy = POLICY) -> tuple[Conduct, list[Conduct]]:
    """The conduct after ladder matches written ``gap`` seconds apart: ``F`` forfeited, ``.`` clean."""
    conduct, seen = Conduct(), []
    for k, c in enumerate(outcomes_):
        conduct = after_match(conduct, c == "F", "3 strikes: late", start + k * gap, policy)
        seen.append(conduct)
    return conduct, seen


def test_one_forfeit_is_a_mishap_two_of_the_last_five_pause_the_bot() -> None:
    one, _ = played("F....")
    assert not one.paused(1005.0) and one.recent == "F...."
    spread, _ = played("F.....F")  # the first one left the window of five
    assert not spread.paused(1007.0)
    two, _ = played("F..F")
    assert two.paused(1003.5) and two.until == 1003.0 + 60.0 and two.pauses == 1
    assert two.why.startswith("2 of its last 4 ladder matches ended in its forfeit (the last: 3 strikes")
    assert two.recent == "" and two.probation  # the forfeits that paused it are paid for


def test_the_pause_doubles_while_the_bot_forfeits_its_probation_up_to_an_hour() -> None:
    conduct, _ = played("FF")
    lengths = [conduct.until - conduct.since]
    for _ in range(8):
        conduct = after_match(conduct, True, "late", conduct.until + 1.0)  # its first match after the pause
        assert conduct.why.startswith("it forfeited its first ladder match after a pause")
        lengths.append(conduct.until - conduct.since)
    assert lengths == [60, 120, 240, 480, 960, 1920, 3600, 3600, 3600]


def test_a_clean_probation_lets_it_play_on_and_five_clean_matches_forgive_the_pauses() -> None:
    conduct, _ = played("FF")
    conduct = after_match(conduct, False, "", conduct.until + 1.0)
    assert not conduct.probation and not conduct.paused(conduct.until + 2.0) and conduct.pauses == 1
    once = after_match(conduct, True, "late", conduct.until + 5)
    again = after_match(once, True, "late", conduct.until + 6)
    assert again.until - again.since == 120.0  # not forgiven yet: the next pause is twice the first
    for k in range(4):
        conduct = after_match(conduct, False, "", conduct.until + 10.0 + k)
    assert conduct.pauses == 0 and conduct.forgiven  # five clean in a row: as a bot that never forfeited


def test_a_result_written_while_the_bot_is_paused_changes_nothing() -> None:
    conduct, _ = played("FF")
    during = after_match(conduct, True, "late", conduct.since + 10.0)  # a match under way at the pause
    assert during == conduct
    assert after_match(conduct, False, "", conduct.since + 10.0) == conduct  # nor uses its probation


def test_a_policy_with_no_forfeit_bound_never_pauses() -> None:
    off = PausePolicy(forfeits=0)
    conduct, _ = played("FFFFFFFF", policy=off)
    assert conduct == Conduct()
    for bad in ({"forfeits": 6, "window": 5}, {"window": 0}, {"first_s": 0.0},
                {"first_s": 10.0, "max_s": 5.0}, {"forgive": 0}):
        with pytest.raises(ValueError, match="pause policy"):
            PausePolicy(**bad)


@settings(max_examples=200, deadline=None)
@given(matches=st.lists(st.booleans(), max_size=60), gaps=st.lists(st.floats(0.1, 5000.0), min_size=60,
                                                                        max_size=60))
def test_a_bot_is_never_paused_before_two_forfeits_nor_longer_than_the_cap(matches: list[bool],
                                                                            gaps: list[float]) -> None:
    """Any run of ladder matches: a pause begins only on a forfeit, and either the second of the last five
    counted or a probation's; it never lasts more than an hour; a clean match never pauses."""
    conduct, now, counted = Conduct(), 0.0, ""
    for forfeited, gap in zip(matches, gaps, strict=False):
        now += gap
        before = conduct
        conduct = after_match(conduct, forfeited, "late", now)
        if conduct.paused(now) and not before.paused(now):
            assert forfeited
            assert before.probation or (before.recent + "F")[-5:].count("F") >= 2
            assert conduct.until <= now + POLICY.max_s  # as the pause is set (a difference would round)
        if not forfeited:
            assert not conduct.paused(now) or before.paused(now)
        counted = conduct.recent
        assert len(counted) <= POLICY.window
    assert Conduct.from_json(conduct.to_json()) == conduct


def test_the_bot_is_told_why_for_how_long_and_what_comes_next() -> None:
    conduct, _ = played("FF", start=0.0)
    text = notice_text("late", conduct)
    assert text.startswith("late is paused from the ladder for 60 s, until 00:01:01 UTC: 2 of its last 2 "
                           "ladder matches ended in its forfeit (the last: 3 strikes: late).")
    assert "a forfeit in its first ladder match pauses it again for 2 min" in text
    second = replace(conduct, pauses=3, since=0.0, until=240.0)
    assert "for 4 min, until 00:04:00 UTC (its pause 3 in a row)" in notice_text("late", second)


def test_a_forfeit_counts_against_the_side_that_forfeited_and_the_other_played_clean() -> None:
    job = ladder_job(LadderSetting("coinche", on=True), "north", "late")  # late at seats 1 and 3
    clean = result_of_job(job, (100, 62), 0)
    end = replace(clean.record.result, winner=0, reason=ResultReason.FORFEIT, forfeit_seat=3,
                  detail="seat 3 (late): 3 strikes")
    forfeit = replace(clean, record=replace(clean.record, result=end))
    assert outcomes(forfeit) == {"north": (False, ""), "late": (True, "seat 3 (late): 3 strikes")}
    assert outcomes(clean) == {"north": (False, ""), "late": (False, "")}


# ------------------------------------------------------------------ in the broker
def test_the_records_of_two_nodes_meet_in_the_broker_and_a_restart_keeps_the_pause(store: Store) -> None:
    """Two nodes record the late bot's matches at once (threads on two connections): every forfeit is
    counted (compare and swap), one of them pauses it, and a third node, or a restart, reads the pause."""
    first, second = Pauses(store.open()), Pauses(store.open())
    assert first.read(["late", "north"]) == {}
    assert first.record("north", False) is None and first.read(["north"]) == {}  # clean: nothing stored
    paused: list[Conduct] = []

    def record(pauses: Pauses) -> None:
        found = pauses.record("late", True, "3 strikes", now=1000.0)
        if found is not None:
            paused.append(found)

    threads = [threading.Thread(target=record, args=(p,)) for p in (first, second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(paused) == 1 and paused[0].until == 1060.0  # the second forfeit paused it, once
    restarted = Pauses(store.open())
    assert set(restarted.paused(["late", "north"], now=1030.0)) == {"late"}
    assert restarted.paused(["late"], now=1061.0) == {}
    assert restarted.lift("late") is False  # over by then (at the test's clock); forgotten all the same
    assert restarted.read(["late"]) == {}


def test_a_conduct_stored_unreadable_counts_as_none(broker: Broker) -> None:
    assert broker.swap_ladder_conduct("late", "{not json", "") is True
    assert broker.swap_ladder_conduct("late", "x", "") is False  # not what the caller read
    assert Pauses(broker).read(["late"]) == {"late": Conduct()}
    assert broker.swap_ladder_conduct("late", "", "{not json") is True
    assert broker.ladder_conducts(["late", "nobody"]) == {}


def test_a_ladder_result_is_counted_before_it_is_written_and_a_paused_bot_s_forfeit_refused(
        broker: Broker) -> None:
    """``judge``, as the worker asks it before it writes a ladder result: the late bot's second forfeit
    pauses it (the result is written: it is what paused it); a forfeit of it while paused is refused,
    and counts nothing; its opponent's clean matches store nothing."""
    pauses = Pauses(broker)
    job = ladder_job(LadderSetting("coinche", on=True), "north", "late")
    clean = result_of_job(job, (100, 62), 0)
    end = replace(clean.record.result, reason=ResultReason.FORFEIT, forfeit_seat=1, detail="late: 3 strikes")
    forfeit = replace(clean, record=replace(clean.record, result=end))
    assert pauses.judge(forfeit, now=100.0) == Judged()
    second = pauses.judge(forfeit, now=101.0)
    assert second.refused == "" and [bot for bot, _ in second.paused] == ["late"]
    during = pauses.judge(forfeit, now=120.0)
    assert during.refused == "late" and during.conduct == second.paused[0][1]
    assert pauses.read(["late"])["late"] == second.paused[0][1]  # nothing more counted
    assert pauses.judge(clean, now=120.0) == Judged()  # north clean, late paused: nothing changes
    assert pauses.read(["north"]) == {}
