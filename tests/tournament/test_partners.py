"""The partners format: tables of four bots, partnerships rotating, standings per bot."""

from __future__ import annotations

import random
from collections import Counter
from itertools import combinations

import pytest

from arena.engine import Match, Ruleset, observe
from arena.engine.bots import HeuristicPlayer, Player, RandomPlayer
from arena.records import MatchEnd, MatchRecord, ResultReason, SeatBot, TimeControl
from arena.tournament import MatchJob, MatchResult, Tournament, TournamentError, TournamentSpec
from arena.tournament.partners import PartnerRound, partner_rounds
from tests.tournament.helpers import run, synthetic


def bots(n: int) -> tuple[str, ...]:
    return tuple(f"b{i}" for i in range(n))


Pairs = Counter[frozenset[str]]


def tallies(rounds: list[PartnerRound]) -> tuple[Pairs, Pairs, Counter[str]]:
    partners: Counter[frozenset[str]] = Counter()
    opponents: Counter[frozenset[str]] = Counter()
    played: Counter[str] = Counter()
    for rnd in rounds:
        for t in rnd.tables:
            partners.update([frozenset((t[0], t[2])), frozenset((t[1], t[3]))])
            opponents.update(frozenset((t[i], t[j])) for i in (0, 2) for j in (1, 3))
            played.update(t)
    return partners, opponents, played


@pytest.mark.parametrize(("n", "rounds"), [(4, 3), (5, 10), (8, 7), (8, 14), (9, 8), (12, 11), (16, 15)])
def test_every_bot_partners_and_opposes_every_other_about_equally(n: int, rounds: int) -> None:
    schedule = partner_rounds(bots(n), rounds, "seed")
    partners, opponents, played = tallies(schedule)
    pairs = [frozenset(p) for p in combinations(bots(n), 2)]
    p_counts, o_counts = [partners[p] for p in pairs], [opponents[p] for p in pairs]
    assert max(p_counts) - min(p_counts) <= 2, sorted(p_counts)
    assert max(o_counts) - min(o_counts) <= 3, sorted(o_counts)
    assert max(played.values()) - min(played.values()) <= 1  # the sitting out rotates
    for rnd in schedule:
        seated = [b for t in rnd.tables for b in t]
        assert len(seated) == len(set(seated)) == n - n % 4  # four distinct bots a table, each once
        assert sorted(seated + list(rnd.sitting_out)) == sorted(bots(n))


def test_four_bots_partner_each_other_once_in_three_rounds() -> None:
    partners, opponents, _ = tallies(partner_rounds(bots(4), 3, "any"))
    assert set(partners.values()) == {1} and len(partners) == 6
    assert set(opponents.values()) == {2}


def test_the_schedule_is_the_seed_s_alone() -> None:
    assert partner_rounds(bots(9), 6, "s") == partner_rounds(bots(9), 6, "s")
    assert partner_rounds(bots(9), 6, "s") != partner_rounds(bots(9), 6, "t")


def test_a_partners_tournament_needs_four_bots() -> None:
    with pytest.raises(TournamentError, match="at least 4"):
        TournamentSpec("t", "partners", bots(3))
    assert TournamentSpec("t", "partners", bots(6)).round_count == 5
    assert TournamentSpec("t", "partners", bots(6), rounds=2).round_count == 2
    spec = TournamentSpec("t", "partners", bots(5), deals=2, duplicate="mirror")
    assert TournamentSpec.from_dict(spec.to_dict()) == spec


def test_its_jobs_seat_four_distinct_bots_with_the_sides_named_after_them() -> None:
    tour = Tournament(TournamentSpec("t", "partners", bots(6), rounds=4))
    key, jobs = tour.jobs_for([])
    assert key == "t/all"
    assert len(jobs) == 4  # one table a round, two bots sitting out
    for job in jobs:
        assert job.is_mixed and len(set(job.seat_bots)) == 4
        n, e, s, w = job.seat_bots
        assert (job.team0, job.team1) == (f"{n}+{s}", f"{e}+{w}")
        assert MatchJob.from_json(job.to_json()) == job
    seated = Counter(b for j in jobs for b in j.seat_bots)
    assert seated + Counter(tour.stages([])[0].byes) == Counter(dict.fromkeys(bots(6), 4))  # play or sit out


def test_standings_give_each_bot_its_side_s_result() -> None:
    spec = TournamentSpec("t", "partners", bots(4), rounds=3)
    tour = Tournament(spec)
    # the side holding b0 always wins 2-1
    results, _ = run(tour, lambda job: synthetic(job, 0 if "b0" in job.seat_bots[0::2] else 1,
                                                 (2, 1) if "b0" in job.seat_bots[0::2] else (1, 2)))
    assert tour.is_finished(results)
    table = {s.bot: s for s in tour.standings(results)}
    assert set(table) == set(bots(4))
    assert table["b0"].rank == 1 and table["b0"].wins == 3 and table["b0"].played == 3
    for b in bots(4)[1:]:
        assert table[b].played == 3
        assert table[b].wins == 1 and table[b].losses == 2  # it partnered b0 once
    assert table["b0"].points_for == 6 and table["b0"].points_against == 3


def test_duplicate_partners_swap_the_sides_on_the_same_deals() -> None:
    spec = TournamentSpec("t", "partners", bots(4), rounds=3, deals=2, duplicate="mirror",
                          ruleset=Ruleset.from_spec("coinche"))
    tour = Tournament(spec)
    _, jobs = tour.jobs_for([])
    assert len(jobs) == 6
    kinds: dict[str, Player] = {"b0": HeuristicPlayer(), "b1": RandomPlayer(), "b2": RandomPlayer(),
                                "b3": RandomPlayer()}
    rng = random.Random(1)

    def play(job: MatchJob) -> MatchResult:
        rules = Ruleset.from_spec(job.ruleset).with_options(deals=job.deals)
        match = Match(rules, job.seed)
        while not match.is_over:
            deal = match.new_deal()
            while not deal.is_over:
                seat = deal.to_act
                deal.apply(kinds[job.seat_bots[seat]].act(observe(deal, seat), rng))
            match.add(deal)
        seats = job.seat_bots
        record = MatchRecord.of_match(
            job.match_id, match, seats, bots=[SeatBot(i, b, b) for i, b in enumerate(seats)],
            time_control=TimeControl(), strikes=[],
            latencies_us=[[0] * (len(d.bids) + len(d.plays)) for d in match.deals],
            result=MatchEnd((match.totals[0], match.totals[1]), match.winner, ResultReason.FINISHED))
        return MatchResult.of_record(job, record)

    for leg0, leg1 in zip(jobs[0::2], jobs[1::2], strict=True):
        n, e, s, w = leg0.seat_bots
        assert leg1.seat_bots == (e, n, w, s) and leg1.seed == leg0.seed
        assert (leg1.team0, leg1.team1) == (leg0.team1, leg0.team0)
    results, _ = run(tour, play)
    games = tour.games(results)
    assert len(games) == 3 and all(g.difference is not None for g in games)
    assert {s.bot: s.played for s in tour.standings(results)} == dict.fromkeys(bots(4), 3)


def test_bot_games_are_the_crosstable_s_games_between_bots() -> None:
    tour = Tournament(TournamentSpec("t", "partners", bots(4), rounds=3))
    results, _ = run(tour, lambda job: synthetic(job, 0))
    assert len(tour.games(results)) == 3
    games = tour.bot_games(results)
    assert len(games) == 6 and all("+" not in g.a + g.b for g in games)


@pytest.mark.reliability
def test_the_largest_partners_schedule_is_made_in_bounded_work() -> None:
    """An admin's largest partners tournament (MAX_BOTS bots, MAX_ROUNDS rounds) is scheduled with
    a few shuffles a round, not 48: the node makes it once, in a worker thread, in well under a
    second here (a generous ceiling below, for loaded machines)."""
    import time

    from arena.tournament.spec import MAX_BOTS, MAX_ROUNDS

    bots = [f"b{i}" for i in range(MAX_BOTS)]
    started = time.perf_counter()
    rounds = partner_rounds(bots, MAX_ROUNDS, "big")
    assert time.perf_counter() - started < 30
    assert len(rounds) == MAX_ROUNDS
    assert all(len(r.tables) == MAX_BOTS // 4 for r in rounds)
