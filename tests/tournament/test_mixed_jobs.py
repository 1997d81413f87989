"""Jobs whose sides are two different bots: their seats travel with them, the common form is kept."""

from __future__ import annotations

import json

from arena.queue.broker import rating_plan
from arena.records import MatchEnd, MatchRecord, ResultReason, TimeControl, side_name
from arena.tournament import MatchJob, MatchResult


def test_a_mixed_job_names_its_seats_and_its_sides() -> None:
    job = MatchJob.seated("m1", "t1", ("a", "b", "c", "d"), ruleset="classic", seed="s")
    assert job.is_mixed and job.seat_bots == ("a", "b", "c", "d")
    assert (job.team0, job.team1) == ("a+c", "b+d")
    assert MatchJob.from_json(job.to_json()) == job


def test_a_job_of_one_bot_a_side_keeps_the_team_form_on_the_wire() -> None:
    job = MatchJob.seated("m1", "t1", ("a", "b", "a", "b"), ruleset="classic", seed="s")
    assert not job.is_mixed and job.seats is None and (job.team0, job.team1) == ("a", "b")
    assert "seats" not in json.loads(job.to_json())
    assert job == MatchJob("m1", "t1", "a", "b", "classic", "s")
    assert MatchJob.from_json(job.to_json()) == job


def test_a_side_name_joins_two_bots_and_keeps_one() -> None:
    assert side_name("a", "a") == "a"
    assert side_name("a", "b") == "a+b"


def test_a_mixed_result_moves_no_bradley_terry_or_elo_pool_but_queues_for_openskill() -> None:
    job = MatchJob.seated("m1", "t1", ("a", "b", "c", "d"), ruleset="classic", seed="s")
    record = MatchRecord(match_id="m1", ruleset="classic", seed="s", players=job.seat_bots, deals=(), bots=(),
                         time_control=TimeControl(), latencies_us=(), strikes=(),
                         result=MatchEnd((501, 80), 0, ResultReason.FINISHED))
    result = MatchResult.of_record(job, record)
    assert result.is_mixed and result.seat_bots == ("a", "b", "c", "d")
    plan = rating_plan(result, None)
    assert plan.mixed and plan.counted_pools == () and plan.mixed_pools == ("tournament:t1",)
    assert plan.mixed_game("m1", 1.0).to_text() == "m1 a+c b+d 1.0"
