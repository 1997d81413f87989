"""A result's summary: what a tournament reads of it, the same answers as the whole result gives."""

from __future__ import annotations

import dataclasses
import json
import random

import pytest

from arena.tournament import Tournament, TournamentError, TournamentSpec
from arena.tournament.summary import DETAIL_MAX, ResultSummary
from tests.tournament.helpers import play_job, scheduled, synthetic


def duplicate_round_robin() -> Tournament:
    return Tournament(TournamentSpec.from_dict({
        "tournament_id": "d", "format": "round-robin", "bots": ["A", "B", "C"], "deals": 3, "duplicate": True,
    }))


def test_a_summary_survives_its_json() -> None:
    t = duplicate_round_robin()
    jobs = scheduled(t)
    r = play_job(jobs[0], {"A": "random", "B": "heuristic", "C": "random"}, random.Random(1))
    s = ResultSummary.of_result(r, deals=True)
    assert ResultSummary.from_json(s.to_json()) == s
    assert s.deal_diff is not None and s.deals_played == 3 and s.seed == str(r.record.seed)
    assert len(s.to_json()) < 400 < len(r.to_json())


def test_a_tournament_gives_the_same_from_summaries_as_from_results() -> None:
    t = duplicate_round_robin()
    jobs = scheduled(t)
    rng = random.Random(2)
    results = [play_job(j, {"A": "random", "B": "heuristic", "C": "heuristic"}, rng) for j in jobs]
    summaries = [ResultSummary.of_result(r, deals=True) for r in results]
    fresh = duplicate_round_robin()
    assert fresh.standings(summaries) == t.standings(results)
    assert fresh.games(summaries) == t.games(results)
    assert fresh.overview(summaries).standings == t.standings(results)


def test_a_record_that_does_not_replay_is_named_when_its_pair_is_scored() -> None:
    t = duplicate_round_robin()
    jobs = scheduled(t)
    rng = random.Random(3)
    leg0, leg1 = (play_job(j, {"A": "random", "B": "random", "C": "random"}, rng) for j in jobs[:2])
    deals = list(leg0.record.deals)
    deals[1] = {**deals[1], "plays": list(reversed(deals[1]["plays"]))}
    broken = dataclasses.replace(leg0, record=dataclasses.replace(leg0.record, deals=tuple(deals)))
    s = ResultSummary.of_result(broken, deals=True)
    assert s.deal_diff is None and "does not replay" in s.replay_error
    assert ResultSummary.from_json(s.to_json()) == s
    summaries = [s, ResultSummary.of_result(leg1, deals=True)]
    with pytest.raises(TournamentError, match=r"match d-r1-0-leg0: its record does not replay: deals\[1\]"):
        duplicate_round_robin().games(summaries)


def test_a_long_detail_is_cut_and_an_unreadable_summary_is_an_error() -> None:
    t = Tournament(TournamentSpec(tournament_id="t", format="round-robin", bots=("a", "b")))
    job, _ = scheduled(t)
    r = synthetic(job, 1, reason="forfeit")
    long = dataclasses.replace(r, record=dataclasses.replace(
        r.record, result=dataclasses.replace(r.record.result, detail="x" * 5000, forfeit_seat=2)))
    s = ResultSummary.of_result(long, deals=False)
    assert len(s.detail) == DETAIL_MAX and s.forfeit_seat == 2 and s.deal_diff is None
    assert s.end.reason == "forfeit" and s.score0() == 0.0
    for bad in ("", "[]", "{}", '{"match_id": "m"}', s.to_json().replace('"winner":1', '"winner":7')):
        with pytest.raises(TournamentError, match="a stored result summary is unreadable"):
            ResultSummary.from_json(bad)


def partners_duplicate() -> Tournament:
    return Tournament(TournamentSpec.from_dict({
        "tournament_id": "p", "format": "partners", "bots": ["A", "B", "C", "D", "E"], "rounds": 3,
        "deals": 2, "duplicate": True, "seed": "fixed",
    }))


def test_a_mixed_summary_names_each_seat_and_an_older_one_means_one_bot_a_side() -> None:
    t = partners_duplicate()
    jobs = scheduled(t)
    r = play_job(jobs[0], dict.fromkeys("ABCDE", "random"), random.Random(4))
    s = ResultSummary.of_result(r, deals=True)
    assert s.is_mixed and s.seats == s.seat_bots == r.seat_bots == jobs[0].seat_bots
    assert (s.team0, s.team1) == (r.team0, r.team1) and "+" in s.team0
    assert ResultSummary.from_json(s.to_json()) == s
    # a summary of one bot a side writes no seats, and one written before seats existed reads so
    plain = dataclasses.replace(s, team0="A", team1="B", seats=None)
    assert "seats" not in plain.to_dict()
    old = ResultSummary.from_json(plain.to_json())
    assert old.seats is None and not old.is_mixed and old.seat_bots == ("A", "B", "A", "B")
    written = json.dumps(list(s.seat_bots), separators=(",", ":"))
    assert f'"seats":{written}' in s.to_json()
    for bad in ('"A"', '["A", "B"]', '["A", "B", "C", 4]'):
        with pytest.raises(TournamentError, match="a stored result summary is unreadable"):
            ResultSummary.from_json(s.to_json().replace(f'"seats":{written}', f'"seats":{bad}'))


def test_a_partners_tournament_gives_the_same_from_summaries_as_from_results() -> None:
    t = partners_duplicate()
    jobs = scheduled(t)
    rng = random.Random(5)
    kinds = {"A": "heuristic", "B": "random", "C": "random", "D": "heuristic", "E": "random"}
    results = [play_job(j, kinds, rng) for j in jobs]
    summaries = [ResultSummary.of_result(r, deals=True) for r in results]
    fresh = partners_duplicate()
    assert fresh.standings(summaries) == t.standings(results)
    assert fresh.bot_games(summaries) == t.bot_games(results)
    overview = fresh.overview(summaries)
    assert overview.standings == t.standings(results) and overview.bot_games == t.bot_games(results)
    assert {s.bot for s in overview.standings} == set("ABCDE")


def test_a_result_whose_seats_differ_from_its_job_is_refused() -> None:
    t = partners_duplicate()
    jobs = scheduled(t)
    rng = random.Random(6)
    leg0, leg1 = (ResultSummary.of_result(play_job(j, dict.fromkeys("ABCDE", "random"), rng), deals=True)
                  for j in jobs[:2])
    assert partners_duplicate().games([leg0, leg1])
    n, e, so, w = leg0.seat_bots
    swapped = dataclasses.replace(leg0, seats=(so, e, n, w))  # the same side, its seats swapped
    with pytest.raises(TournamentError, match="but its job seats"):
        partners_duplicate().standings([swapped, leg1])
