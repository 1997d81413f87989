"""Duplicate play on real matches: the same decks in both legs, and the point difference."""

from __future__ import annotations

import dataclasses
import random

import pytest

from arena.engine.bots import HeuristicPlayer, RandomPlayer
from arena.tournament import (
    MatchJob,
    Tournament,
    TournamentError,
    TournamentSpec,
    deal_scores,
    duplicate_score,
)
from tests.factories import result_of_job
from tests.tournament.helpers import play_job, play_match, result_of, scheduled, synthetic


def pair_jobs(ruleset: str = "classic", deals: int = 6, seed: str = "dup") -> tuple[MatchJob, MatchJob]:
    t = Tournament(TournamentSpec.from_dict({
        "tournament_id": "d", "format": "round-robin", "bots": ["A", "B"], "ruleset": ruleset,
        "deals": deals, "duplicate": True, "seed": seed,
    }))
    leg0, leg1 = scheduled(t)
    return leg0, leg1


@pytest.mark.parametrize("ruleset", ["classic", "coinche", "club", "classic-annonces"])
@pytest.mark.parametrize("seed", ["s1", "s2", "s3"])
def test_both_legs_deal_the_same_decks_and_the_score_is_the_sum_of_deal_differences(
    ruleset: str, seed: str,
) -> None:
    leg0, leg1 = pair_jobs(ruleset, deals=8, seed=seed)
    rng = random.Random(seed)
    # A is heuristic, B random: each leg seats A at team 0 (leg 0), then at team 1 (leg 1)
    m0 = play_match(leg0.ruleset, leg0.seed, leg0.deals, (HeuristicPlayer(), RandomPlayer()), rng)
    m1 = play_match(leg1.ruleset, leg1.seed, leg1.deals, (RandomPlayer(), HeuristicPlayer()), rng)
    assert len(m0.deals) == len(m1.deals) == 8
    for d0, d1 in zip(m0.deals, m1.deals, strict=True):
        assert d0.deck is not None and d0.deck == d1.deck  # the very same cards, in the same order
        assert d0.dealer == d1.dealer
        assert d0.packets == d1.packets
    r0, r1 = result_of(leg0, m0), result_of(leg1, m1)
    by_hand = sum(o.score[0] - o.score[1] for o in m0.outcomes) + sum(
        o.score[1] - o.score[0] for o in m1.outcomes
    )
    assert duplicate_score(r0, r1) == by_hand
    assert duplicate_score(r1, r0) == -by_hand  # from B's side
    # with a fixed number of deals the totals are the sums of the deal scores
    assert by_hand == (r0.totals[0] - r0.totals[1]) + (r1.totals[1] - r1.totals[0])
    assert deal_scores(r0) == tuple(o.score for o in m0.outcomes)


@pytest.mark.parametrize("ruleset", ["classic", "coinche"])
def test_the_same_player_on_both_sides_scores_a_zero_difference(ruleset: str) -> None:
    """Deterministic players: leg 1 replays leg 0 with the teams' names swapped, luck cancels."""
    leg0, leg1 = pair_jobs(ruleset, deals=10)
    rng = random.Random(0)
    kinds = {"A": "heuristic", "B": "heuristic"}
    r0, r1 = play_job(leg0, kinds, rng), play_job(leg1, kinds, rng)
    assert r0.totals == r1.totals
    assert duplicate_score(r0, r1) == 0


def test_the_stronger_bot_wins_the_pairs_and_the_standings_agree() -> None:
    t = Tournament(TournamentSpec.from_dict({
        "tournament_id": "h", "format": "round-robin", "bots": ["smart", "rand1", "rand2"],
        "ruleset": "coinche", "deals": 6, "duplicate": True, "rounds": 2,
    }))
    kinds = {"smart": "heuristic", "rand1": "random", "rand2": "random"}
    rng = random.Random(3)
    results = [play_job(j, kinds, rng) for j in scheduled(t)]
    assert t.is_finished(results)
    by_id = {r.match_id: r for r in results}
    games = t.games(results)
    assert len(games) == 6
    for g in games:
        leg0, leg1 = (by_id[f"h-r{g.round}-{g.index}-leg{k}"] for k in (0, 1))
        assert g.difference == duplicate_score(leg0, leg1)
        assert g.score_a == (1.0 if g.difference > 0 else 0.0 if g.difference < 0 else 0.5)
    table = {s.bot: s for s in t.standings(results)}
    assert sum(s.duplicate_diff for s in table.values()) == 0
    assert table["smart"].duplicate_diff == sum(
        g.difference if g.a == "smart" else -g.difference for g in games if "smart" in (g.a, g.b)
        if g.difference is not None
    )
    assert t.standings(results)[0].bot == "smart"


def test_deal_scores_add_up_to_the_totals_of_fixed_length_matches() -> None:
    rng = random.Random(11)
    for i in range(30):
        ruleset = ["classic", "coinche", "club"][i % 3]
        m = play_match(ruleset, f"m{i}", 5, (RandomPlayer(), HeuristicPlayer()), rng)
        job = MatchJob(f"x-r1-{i}", "x", "p", "q", ruleset, f"m{i}", deals=5)
        scores = deal_scores(result_of(job, m))
        assert len(scores) == 5
        assert (sum(s[0] for s in scores), sum(s[1] for s in scores)) == tuple(m.totals)


def test_legs_that_are_not_a_pair_are_refused() -> None:
    leg0, leg1 = pair_jobs()
    rng = random.Random(1)
    kinds = {"A": "random", "B": "random"}
    r0, r1 = play_job(leg0, kinds, rng), play_job(leg1, kinds, rng)
    with pytest.raises(TournamentError, match="not the two legs of a duplicate pair: teams"):
        duplicate_score(r0, r0)
    other_seed = dataclasses.replace(r1, record=dataclasses.replace(r1.record, seed="elsewhere"))
    with pytest.raises(TournamentError, match=f"seeds '{r0.record.seed}' and 'elsewhere' differ"):
        duplicate_score(r0, other_seed)


def test_a_record_that_does_not_replay_is_named() -> None:
    leg0, _ = pair_jobs()
    r0 = play_job(leg0, {"A": "random", "B": "random"}, random.Random(2))
    deals = list(r0.record.deals)
    deals[1] = {**deals[1], "plays": list(reversed(deals[1]["plays"]))}
    broken = dataclasses.replace(r0, record=dataclasses.replace(r0.record, deals=tuple(deals)))
    with pytest.raises(TournamentError, match=r"match d-r1-0-leg0: its record does not replay: deals\[1\]"):
        deal_scores(broken)


def test_a_forfeited_leg_decides_the_pair_by_match_results() -> None:
    t = Tournament(TournamentSpec.from_dict({
        "tournament_id": "f", "format": "round-robin", "bots": ["A", "B"], "deals": 4, "duplicate": True,
    }))
    leg0, leg1 = scheduled(t)
    rng = random.Random(5)
    played = play_job(leg0, {"A": "random", "B": "heuristic"}, rng)
    # B forfeits leg 1 (seated at team 0): A wins it; leg 0 decides whether A wins or draws the pair
    forfeit = synthetic(leg1, 1, (0, 0), reason="forfeit")
    (game,) = t.games([played, forfeit])
    expected = {1.0: 1.0, 0.5: 1.0, 0.0: 0.5}[played.score0()]
    assert game.score_a == expected
    assert game.legs_score_a == (played.score0() + 1.0) / 2


def test_a_result_without_deals_has_no_deal_scores() -> None:
    job = MatchJob("z-r1-0", "z", "a", "b", "classic", "s", deals=2)
    empty = result_of_job(job, (0, 0), 1, reason="forfeit")
    assert deal_scores(empty) == ()
