"""Results for tournament tests: real matches played by the engine, or synthetic ones."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

from arena.engine import Match, Ruleset, observe
from arena.engine import actions as A
from arena.engine.bots import HeuristicPlayer, Player, RandomPlayer
from arena.engine.observation import Observation
from arena.tournament import MatchJob, MatchResult, Tournament
from tests.factories import record_of_match, result_of_job


class PassingPlayer:
    """Passes at every bid (and plays a random card if its partner or an opponent took): four of
    them throw in every deal, so their matches end 0-0 with no card played."""

    name = "pass"

    def act(self, obs: Observation, rng: random.Random) -> int:
        return A.PASS if A.PASS in obs.legal_actions else rng.choice(obs.legal_actions)


PLAYERS: dict[str, Callable[[], Player]] = {"random": RandomPlayer, "heuristic": HeuristicPlayer,
                                            "pass": PassingPlayer}


def play_match(
    ruleset: Any, seed: str, deals: int | None, players: Sequence[Player], rng: random.Random,
    target: int | None = None,
) -> Match:
    """A whole match, the way a referee plays a job: fixed deals folded into the ruleset. ``players``:
    team 0's and team 1's, or one a seat 0..3."""
    rules = Ruleset.from_spec(ruleset)
    if deals is not None:
        rules = rules.with_options(deals=deals)
    match = Match(rules, seed, target=target)
    while not match.is_over:
        deal = match.new_deal()
        while not deal.is_over:
            seat = deal.to_act
            deal.apply(players[seat % len(players)].act(observe(deal, seat), rng))
        match.add(deal)
    return match


def result_of(job: MatchJob, match: Match) -> MatchResult:
    record = record_of_match(job.match_id, job.team0, job.team1, match, seats=job.seats)
    return MatchResult.of_record(job, record)


def play_job(job: MatchJob, kinds: dict[str, str], rng: random.Random) -> MatchResult:
    """Play ``job`` with the engine; ``kinds`` maps a bot name to 'random', 'heuristic' or 'pass' (a
    mixed job: each seat's bot plays its seat)."""
    bots = job.seat_bots if job.is_mixed else (job.team0, job.team1)
    players = tuple(PLAYERS[kinds[b]]() for b in bots)
    return result_of(job, play_match(job.ruleset, job.seed, job.deals, players, rng, job.target))


def synthetic(job: MatchJob, winner: int | None, totals: tuple[int, int] | None = None,
              reason: str = "finished") -> MatchResult:
    """A result without deals (its record holds none): only the match result counts."""
    if totals is None:
        totals = (1, 0) if winner == 0 else (0, 1) if winner == 1 else (0, 0)
    return result_of_job(job, totals, winner, reason=reason)


def run(
    tournament: Tournament, decide: Callable[[MatchJob], MatchResult], limit: int = 10_000,
) -> tuple[list[MatchResult], list[str]]:
    """Drive a tournament to its end as the nodes would; returns the results and the keys enqueued.
    It checks that no mirror pair's second leg is given before its first leg's result."""
    results: list[MatchResult] = []
    keys: list[str] = []
    done: set[str] = set()
    for _ in range(limit):
        if tournament.is_finished(results):
            return results, keys
        key, jobs = tournament.jobs_for(results)
        if key not in keys:
            keys.append(key)
        early = [j.match_id for j in jobs if j.tags.get("leg") == 1
                 and j.match_id.removesuffix("-leg1") + "-leg0" not in done]
        assert not early, f"{key} gives second legs before their first legs' results: {early}"
        todo = [j for j in jobs if j.match_id not in done]
        assert todo, f"stage {key} has nothing left to play but the tournament is not finished"
        for job in todo:
            results.append(decide(job))
            done.add(job.match_id)
    raise AssertionError("the tournament did not finish")


def scheduled(tournament: Tournament, results: Sequence[MatchResult] = ()) -> list[MatchJob]:
    """Every job of the current stage, both legs of each mirror pair (what :meth:`Tournament.jobs_for`
    enqueues of a mirror stage is one half at a time)."""
    return tournament.stages(results)[-1].jobs


def ids(jobs: Sequence[MatchJob]) -> list[str]:
    return [j.match_id for j in jobs]
