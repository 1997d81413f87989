"""Mirror duplicate legs one after the other, through each broker: no pair's second leg is enqueued
before its first leg has a result, in every format, whatever order the results come in and
whichever node advances; and a tournament whose stage an older node enqueued whole (both legs at
once) still finishes once, each pair counted once.

A bot that remembers the hands it held in one leg knows its opponents' hands in the other. Legs
played in step give it that knowledge in both legs, and the audit (docs/detection.md) then has no
play before it to compare with; legs played one after the other give it a clean before and after.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.queue.broker import Broker, Claim
from arena.tournament import MatchJob, Tournaments, TournamentSpec, TournamentState
from arena.tournament.jobs import Ending
from arena.tournament.summary import ResultSummary
from tests.factories import result_of_job
from tests.queue.conftest import Store

_ids = itertools.count()


class Watched:
    """A broker as a tournament store that checks each stage it is asked to enqueue: no leg 1 whose
    leg 0 has no result; and keeps every job enqueued."""

    def __init__(self, broker: Broker, enqueued: list[str]) -> None:
        self.broker = broker
        self.enqueued = enqueued

    def enqueue_once(self, key: str, jobs: Sequence[MatchJob]) -> bool:
        for job in jobs:
            if job.tags.get("leg") == 1:
                first = job.match_id.removesuffix("-leg1") + "-leg0"
                assert self.broker.has_result(first), f"{job.match_id} enqueued ({key}) before {first} ended"
        done = self.broker.enqueue_once(key, jobs)
        if done:
            self.enqueued += [j.match_id for j in jobs]
        return done

    # the rest of the store, as the broker keeps it
    def put_tournament(self, spec: TournamentSpec) -> bool:
        return self.broker.put_tournament(spec)

    def get_tournament(self, tournament_id: str) -> tuple[TournamentSpec, TournamentState] | None:
        return self.broker.get_tournament(tournament_id)

    def set_tournament_state(self, tournament_id: str, state: TournamentState, *,
                             expect: TournamentState | None = None, reason: str = "") -> bool:
        return self.broker.set_tournament_state(tournament_id, state, expect=expect, reason=reason)

    def tournament_ending(self, tournament_id: str) -> Ending:
        return self.broker.tournament_ending(tournament_id)

    def tournament_states(self, ids: Sequence[str]) -> dict[str, TournamentState]:
        return self.broker.tournament_states(ids)

    def list_tournaments(self) -> list[str]:
        return self.broker.list_tournaments()

    def summaries(self, tournament_id: str, start: int = 0) -> list[ResultSummary]:
        return self.broker.summaries(tournament_id, start)

    def pending_count(self, tournament_id: str | None = None) -> int:
        return self.broker.pending_count(tournament_id)


def two_brokers(store: Store) -> tuple[Broker, Broker]:
    """Two brokers on the store, as two nodes have (the same two for every example of a test)."""
    while len(store.opened) < 2:
        store.open()
    return store.opened[0], store.opened[1]


def mirror_spec(fmt: str, bots: int, rounds: int, batch: int, most: int) -> TournamentSpec:
    names = [f"b{i}" for i in range(bots)]
    fields: dict[str, Any] = {"tournament_id": f"m{next(_ids)}", "format": fmt, "bots": names, "deals": 1,
                              "duplicate": "mirror", "seed": "legs"}
    if fmt == "gauntlet":
        fields["candidate"] = names[-1]
    if fmt in ("round-robin", "swiss", "partners"):
        fields["rounds"] = rounds
    if fmt == "sprt":
        fields["bots"] = ["new", "old"]
        fields["sprt"] = {"elo0": 0, "elo1": 100, "batch_pairs": min(batch, most), "max_pairs": most}
    return TournamentSpec.from_dict(fields)


def play_out(broker: Broker, nodes: Sequence[Tournaments], tid: str, data: st.DataObject,
             limit: int = 2_000) -> Counter[str]:
    """Play the tournament's jobs as nodes would, finishing any running match next (drawn), its
    winner drawn, one node or another advancing after each; how many times each match was played."""
    played: Counter[str] = Counter()
    running: list[Claim] = []
    for _ in range(limit):
        running += broker.claim("node", 1_000, 60.0)
        if not running:
            return played
        claim = running.pop(data.draw(st.integers(0, len(running) - 1), label="next result"))
        winner = data.draw(st.sampled_from([0, 1, None]), label="winner")
        totals = (1, 0) if winner == 0 else (0, 1) if winner == 1 else (0, 0)
        broker.write_result(result_of_job(claim.job, totals, winner))
        broker.ack(claim)
        played[claim.job.match_id] += 1
        for node in data.draw(st.sampled_from([nodes[:1], nodes[1:], nodes]), label="advancing"):
            node.advance(tid)
    raise AssertionError("the tournament did not end")


FORMATS = ["round-robin", "gauntlet", "swiss", "knockout", "sprt", "partners"]


@pytest.mark.security
@given(fmt=st.sampled_from(FORMATS), bots=st.integers(2, 7), rounds=st.integers(1, 3),
       batch=st.integers(1, 4), most=st.integers(2, 9), data=st.data())
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_no_second_leg_is_enqueued_before_its_first_leg_has_a_result(
    store: Store, fmt: str, bots: int, rounds: int, batch: int, most: int, data: st.DataObject,
) -> None:
    if fmt == "partners":
        bots = max(bots, 4)
    spec = mirror_spec(fmt, bots, rounds, batch, most)
    broker, other = two_brokers(store)
    enqueued: list[str] = []
    nodes = [Tournaments(Watched(broker, enqueued)), Tournaments(Watched(other, enqueued))]
    nodes[0].create(spec)
    played = play_out(broker, nodes, spec.tournament_id, data)
    assert broker.get_tournament(spec.tournament_id) == (spec, TournamentState.FINISHED)
    assert sorted(enqueued) == sorted(played) and set(played.values()) == {1}  # each match once
    stages = nodes[0].tournament(spec).stages(broker.summaries(spec.tournament_id))
    assert {j.match_id for s in stages for j in s.jobs} >= set(played)
    if fmt != "sprt":  # (an sprt decided in a batch leaves the rest of it unplayed)
        assert len(played) == sum(len(s.jobs) for s in stages)


@pytest.mark.reliability
@pytest.mark.parametrize("fmt", ["round-robin", "swiss", "sprt"])
@given(data=st.data())
@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_a_stage_an_older_node_enqueued_whole_finishes_once(
    store: Store, fmt: str, data: st.DataObject,
) -> None:
    """Before the legs were apart a stage was enqueued whole under its key ("/all", "/round/1",
    "/batch/1"). A node of this version takes such a tournament over where it stands: it enqueues
    nothing of that stage again (its first half keeps the key; its second waits for the queue to
    empty), and every pair is counted once."""
    spec = mirror_spec(fmt, 4, 2, 3, 3)
    broker, other = two_brokers(store)
    tid = spec.tournament_id
    nodes = [Tournaments(broker), Tournaments(other)]
    assert broker.put_tournament(spec)
    first = nodes[0].tournament(spec).stages([])[0]
    assert broker.enqueue_once(first.key, first.jobs)  # what an older node did: both legs at once
    assert broker.set_tournament_state(tid, TournamentState.RUNNING, expect=TournamentState.CREATED)
    played = play_out(broker, nodes, tid, data)
    assert broker.get_tournament(tid) == (spec, TournamentState.FINISHED)
    assert set(played.values()) == {1}  # no match played twice
    stages = nodes[0].tournament(spec).stages(broker.summaries(tid))
    pairs = {j.tags["pair"] for s in stages for j in s.jobs if j.match_id in played}
    if fmt != "sprt":
        assert len(played) == 2 * len(pairs) == sum(len(s.jobs) for s in stages)
    counted = broker.pair_counts(f"tournament:{tid}")
    finished = {p for p in pairs if f"{p}-leg0" in played and f"{p}-leg1" in played}
    assert sum(c.games for c in counted.values()) == len(finished)  # each pair once


@pytest.mark.reliability
def test_an_sprt_that_decides_among_its_second_legs_ends_there(store: Store) -> None:
    """The SPRT reads the finished pairs in order, a pair finished with its second leg: it decides
    after seven pairs won (the fewest it can decide on at [0, 100]), the batch's other second legs
    still queued, and the tournament ends."""
    spec = TournamentSpec.from_dict({"tournament_id": f"m{next(_ids)}", "format": "sprt",
                                     "bots": ["new", "old"], "deals": 1, "seed": "legs",
                                     "sprt": {"elo0": 0, "elo1": 100, "batch_pairs": 12, "max_pairs": 24}})
    broker, _ = two_brokers(store)
    nodes = Tournaments(broker)
    nodes.create(spec)

    def play(claims: list[Claim]) -> None:
        for claim in claims:
            new_team = 0 if claim.job.team0 == "new" else 1
            broker.write_result(result_of_job(claim.job, (1, 0) if new_team == 0 else (0, 1), new_team))
            broker.ack(claim)
            nodes.advance(spec.tournament_id)

    firsts = broker.claim("node", 100, 60.0)
    tid = spec.tournament_id
    assert sorted(c.job.match_id for c in firsts) == sorted(f"{tid}-r1-{i}-leg0" for i in range(12))
    play(firsts)
    seconds = broker.claim("node", 100, 60.0)
    assert len(seconds) == 12 and all(c.job.tags["leg"] == 1 for c in seconds)
    play(seconds[:7])
    assert broker.get_tournament(spec.tournament_id) == (spec, TournamentState.FINISHED)
    progress = nodes.progress(spec.tournament_id)
    assert progress.sprt is not None and progress.sprt.decision == "H1" and progress.sprt.pairs == 7
    assert progress.matches_queued == 5 and not progress.secret_revealed  # the rest still out
    play(seconds[7:])
    assert broker.claim("node", 100, 60.0) == []  # no second batch
    assert nodes.progress(spec.tournament_id).secret_revealed
