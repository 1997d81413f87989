"""A bot's history and statistics: kept with each result, in its atomic write, on both backends.

Each distinct bot of a written result gets an entry at the head of its
history (the newest ``HISTORY_KEPT`` kept) with the rating change the write
made in each pool, and its counters added to its aggregates and its
head-to-head, which are kept forever. A result written twice counts once. A
duplicate leg's entry shows no rating change until its pair's game counts,
which is on the second leg's entry. The Bradley-Terry history keeps one point
per fit of a pool, at most one every ``every`` games, however many nodes fit
it at once.
"""

from __future__ import annotations

import random
import sqlite3
import time

import pytest

from arena.engine import Ruleset
from arena.queue.broker import Broker, Write
from arena.queue.embedded import EmbeddedBroker
from arena.tournament import MatchJob, MatchResult, Tournament, TournamentSpec, TournamentState
from arena.tournament.botstats import HISTORY_KEPT
from tests.factories import result_of_job, tournament_spec
from tests.tournament.helpers import play_job


def played(tid: str, n: int, team0: str = "alpha", team1: str = "beta", ruleset: str = "coinche",
           match_id: str = "") -> MatchResult:
    job = MatchJob(match_id or f"{tid}-r1-{n}", tid, team0, team1, ruleset, f"seed{n}", deals=4)
    return play_job(job, {team0: "heuristic", team1: "random"}, random.Random(n))


def test_a_result_adds_an_entry_and_its_counters_to_each_bot_once(broker: Broker) -> None:
    broker.put_tournament(tournament_spec("t1", ruleset=Ruleset.from_spec("coinche")))
    r = played("t1", 0)
    assert broker.write_result(r) is True
    assert broker.write_result(r) is False  # a replayed job: nothing counted twice
    (a,) = broker.bot_history("alpha")
    (b,) = broker.bot_history("beta")
    assert a["match_id"] == b["match_id"] == r.match_id
    assert (a["opponent"], b["opponent"]) == ("beta", "alpha")
    assert a["totals"] == list(r.totals) and b["totals"] == list(r.totals)[::-1]
    results = {0: ("win", "loss"), 1: ("loss", "win"), None: ("draw", "draw")}[r.winner]
    assert (a["result"], b["result"]) == results
    assert set(a["rating_change"]) == {"tournament:t1", "coinche"}
    assert a["rating_change"]["coinche"] == pytest.approx(-b["rating_change"]["coinche"])
    assert (a["rating_change"]["coinche"] > 0) == (r.winner == 0)
    stats_a, h2h_a = broker.bot_counters("alpha")
    stats_b, h2h_b = broker.bot_counters("beta")
    assert stats_a["matches"] == stats_b["matches"] == 1
    assert stats_a["deals"] + stats_a.get("thrown_in", 0) == r.record.deals_played
    # one side's contracts are the other's defence; a margin won by one is lost by the other
    assert stats_a.get("taker.n", 0) == stats_b.get("defence.n", 0)
    assert h2h_a["beta n"] == h2h_b["alpha n"] == stats_a["deals"]
    assert h2h_a.get("beta sum", 0) == -h2h_b.get("alpha sum", 0)
    decisions = sum(len(t) for t in r.record.latencies_us)
    assert stats_a["decisions"] + stats_b["decisions"] == decisions


def test_a_bots_history_is_newest_first_paged_and_bounded(broker: Broker,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    kept = 4
    for module in ("arena.queue.embedded", "arena.queue.redis_broker"):
        monkeypatch.setattr(f"{module}.HISTORY_KEPT", kept)
    written = [result_of_job(MatchJob(f"t1-r1-{n}", "t1", "alpha", f"opp{n}", "classic", f"s{n}"),
                             (1001, 500), 0) for n in range(kept + 3)]
    for r in written:
        broker.write_result(r)
    newest = [r.match_id for r in reversed(written)]
    assert [e["match_id"] for e in broker.bot_history("alpha")] == newest[:kept]
    assert [e["match_id"] for e in broker.bot_history("alpha", 1, 2)] == newest[1:3]
    assert broker.bot_history("alpha", -1) == [] and broker.bot_history("alpha", 0, 0) == []
    assert broker.bot_history("nobody") == []
    # the aggregates count every game, the trimmed ones too
    stats, h2h = broker.bot_counters("alpha")
    assert stats["matches"] == stats["wins"] == kept + 3
    assert sorted(k.split()[0] for k in h2h if k.endswith(" w")) == sorted(f"opp{n}" for n in range(kept + 3))
    assert broker.bot_counters("nobody") == ({}, {})
    assert HISTORY_KEPT >= 100


def test_a_mirror_duplicate_pairs_rating_change_is_on_its_second_leg(broker: Broker) -> None:
    broker.put_tournament(tournament_spec("d1", ruleset=Ruleset.from_spec("coinche"), duplicate="mirror",
                                          deals=4))
    first = played("d1", 7, match_id="d1-r1-0-leg0")
    second = played("d1", 7, "beta", "alpha", match_id="d1-r1-0-leg1")
    broker.write_result(first)
    (e1,) = broker.bot_history("alpha")
    assert e1["rating_change"] == {}  # the pair's game waits for its other leg
    broker.write_result(second)
    e2, _ = broker.bot_history("alpha")
    assert e2["match_id"] == second.match_id and set(e2["rating_change"]) == {"tournament:d1", "coinche"}
    assert broker.bot_counters("alpha")[0]["matches"] == 2


def test_a_mixed_match_goes_to_each_of_its_bots_with_its_partner(broker: Broker) -> None:
    job = MatchJob.seated("m1-r1-0", "m1", ("alpha", "beta", "gamma", "delta"), ruleset="coinche",
                          seed="mx", deals=2)
    r = play_job(job, {b: "random" for b in ("alpha", "beta", "gamma", "delta")}, random.Random(3))
    broker.write_result(r)
    (a,) = broker.bot_history("alpha")
    assert (a["partner"], a["opponent"], a["rating_change"]) == ("gamma", "beta+delta", {})
    (d,) = broker.bot_history("delta")
    assert (d["partner"], d["opponent"]) == ("beta", "alpha+gamma")


def test_a_pools_bt_history_keeps_one_point_a_fit_however_many_nodes_fit(broker: Broker) -> None:
    point = {"alpha": (10, 12.5, 3.0, 22.0), "beta": (10, -12.5, -22.0, -3.0)}
    assert broker.note_bt_history("coinche", 10, point, every=10) is True
    assert broker.note_bt_history("coinche", 15, point, every=10) is False  # too soon: another node did
    assert broker.note_bt_history("coinche", 20, {"alpha": (20, 30.0, 20.0, 40.0)}, every=10) is True
    assert broker.bt_history("coinche", "alpha") == [(10, 10, 12.5, 3.0, 22.0), (20, 20, 30.0, 20.0, 40.0)]
    assert broker.bt_history("coinche", "beta") == [(10, 10, -12.5, -22.0, -3.0)]
    assert broker.bt_history("classic", "alpha") == [] and broker.bt_history("coinche", "nobody") == []


def test_a_job_replayed_after_its_node_died_is_in_the_history_once(broker: Broker) -> None:
    """Node n1 plays the match and dies before its write is acked; n2 reclaims it, plays it again and
    finishes it; then n1's write comes late: the bot's history and counters hold the match once."""
    broker.put_tournament(tournament_spec("t1", ruleset=Ruleset.from_spec("coinche")))
    r = played("t1", 3)
    broker.enqueue([MatchJob(r.match_id, "t1", "alpha", "beta", "coinche", "seed3", deals=4)])
    [first] = broker.claim("n1", 1, 0.2)
    time.sleep(0.4)  # n1 "died": its lease runs out
    [second] = broker.claim("n2", 1, 5.0)
    assert second.delivery == 2
    (done,) = broker.finish([(second, r)])
    (late,) = broker.finish([(first, r)])
    assert (done.write, late.write) == (Write.WRITTEN, Write.DUPLICATE)
    assert [e["match_id"] for e in broker.bot_history("alpha")] == [r.match_id]
    assert broker.bot_counters("alpha")[0]["matches"] == broker.bot_counters("beta")[0]["matches"] == 1


def test_a_mirror_pairs_legs_count_in_no_statistic_until_the_pair_is_over(broker: Broker) -> None:
    broker.put_tournament(tournament_spec("d2", ruleset=Ruleset.from_spec("coinche"), duplicate="mirror",
                                          deals=4))
    broker.write_result(played("d2", 8, match_id="d2-r1-0-leg0"))
    (entry,) = broker.bot_history("alpha")
    assert entry["grouped"] is True and "counters" not in entry
    assert broker.bot_counters("alpha") == ({}, {}) and broker.bot_counters("beta") == ({}, {})
    broker.write_result(played("d2", 8, "beta", "alpha", match_id="d2-r1-0-leg1"))
    for bot, other in (("alpha", "beta"), ("beta", "alpha")):
        stats, h2h = broker.bot_counters(bot)
        assert stats["matches"] == 2 and h2h[f"{other} w"] + h2h.get(f"{other} d", 0) + h2h.get(
            f"{other} l", 0) == 2


def test_a_field_quartets_tables_count_when_its_fourth_is_written(broker: Broker) -> None:
    spec = TournamentSpec("q1", "round-robin", ("ann", "bob", "cat", "dan"),
                          ruleset=Ruleset.from_spec("coinche"), deals=2, duplicate="field")
    broker.put_tournament(spec)
    tables = Tournament(spec).stages([])[0].pairings[0].jobs
    for job in tables[:3]:
        broker.write_result(result_of_job(job, (300, 100), 0))
    bots = sorted({b for job in tables for b in job.seat_bots})
    assert all(broker.bot_counters(b) == ({}, {}) for b in bots)
    assert all(len(broker.bot_history(b)) >= 1 for b in {b for job in tables[:3] for b in job.seat_bots})
    broker.write_result(result_of_job(tables[3], (300, 100), 0))
    played_in = {b: sum(b in job.seat_bots for job in tables) for b in bots}
    assert {b: broker.bot_counters(b)[0]["matches"] for b in bots} == played_in
    broker.write_result(result_of_job(tables[3], (300, 100), 0))  # written again: nothing more
    assert {b: broker.bot_counters(b)[0]["matches"] for b in bots} == played_in


def test_a_forgotten_tournament_leaves_no_counters_held(broker: Broker) -> None:
    spec = tournament_spec("vt:x:1", "sprt", ruleset=Ruleset.from_spec("coinche"), duplicate="mirror",
                           deals=4, unrated_reason="a test")
    broker.put_tournament(spec)
    broker.write_result(played("vt:x:1", 2, match_id="vt:x:1-r1-0-leg0"))  # its pair never completes
    broker.set_tournament_state("vt:x:1", TournamentState.FINISHED)
    assert broker.forget_tournament("vt:x:1")
    if isinstance(broker, EmbeddedBroker):
        assert broker.path is not None
        with sqlite3.connect(broker.path) as db:
            assert db.execute("SELECT COUNT(*) FROM bot_pending").fetchone() == (0,)
    else:
        assert not list(broker._redis.scan_iter(match=f"{broker.keys.prefix}:bpend:*"))  # type: ignore[attr-defined]
