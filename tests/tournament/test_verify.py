"""`verify`: a tournament's deals follow from the secret it committed to, or the check says where not."""

from __future__ import annotations

import dataclasses
import random

import pytest

from arena.engine import Match, Ruleset, observe
from arena.engine.bots import RandomPlayer
from arena.engine.dealing import commitment
from arena.records import MatchRecord
from arena.tournament import Tournament, TournamentSpec
from arena.tournament.spec import Duplicate
from arena.tournament.verify import verify_tournament
from tests.factories import record_of_match

pytestmark = pytest.mark.security
SECRET = "the-tournament-secret"


def played_tournament(ruleset: str = "coinche", duplicate: Duplicate = "mirror") -> list[MatchRecord]:
    bots = ("a", "b", "c") if duplicate == "mirror" else ("a", "b", "c", "d")
    spec = TournamentSpec(tournament_id="v", format="round-robin", bots=bots,
                          ruleset=Ruleset.from_spec(ruleset), deals=2, duplicate=duplicate, seed=SECRET)
    _, jobs = Tournament(spec).jobs_for([])
    records = []
    rng = random.Random(4)
    for job in jobs:
        match = Match(Ruleset.from_spec(job.ruleset).with_options(deals=job.deals), job.seed)
        while not match.is_over:
            deal = match.new_deal()
            while not deal.is_over:
                deal.apply(RandomPlayer().act(observe(deal, deal.to_act), rng))
            match.add(deal)
        records.append(record_of_match(job.match_id, job.team0, job.team1, match))
    return records


def test_the_deals_of_a_field_duplicate_tournament_verify_table_by_table() -> None:
    records = played_tournament(duplicate="field")
    result = verify_tournament("v", SECRET, commitment(SECRET), records)
    assert result.ok and result.matches == 12 and result.deals == 24
    swapped = [dataclasses.replace(records[0], seed=records[2].seed), *records[1:]]  # board set 1's seed
    assert verify_tournament("v", SECRET, commitment(SECRET), swapped).problems == [
        f"{records[0].match_id}: its seed is not the one the secret gives"]


@pytest.mark.parametrize("ruleset", ["classic", "coinche"])
def test_the_deals_of_a_fair_tournament_verify(ruleset: str) -> None:
    result = verify_tournament("v", SECRET, commitment(SECRET), played_tournament(ruleset))
    assert result.ok and result.matches == 6 and result.deals == 12


def test_a_secret_that_is_not_the_committed_one_is_caught() -> None:
    result = verify_tournament("v", "another-secret", commitment(SECRET), played_tournament())
    assert result.problems[0] == "the revealed secret does not hash to the commitment"
    assert all("its seed is not the one the secret gives" in p for p in result.problems[1:])


def test_a_match_dealt_from_another_seed_is_caught() -> None:
    records = played_tournament()
    records[2] = dataclasses.replace(records[2], seed="chosen-by-the-operator")
    result = verify_tournament("v", SECRET, commitment(SECRET), records)
    assert result.problems == [f"{records[2].match_id}: its seed is not the one the secret gives"]


def test_a_deck_swapped_under_the_right_seed_is_caught() -> None:
    records = played_tournament()
    other = played_tournament()[3]
    deals = (other.deals[0], *records[0].deals[1:])  # another pairing's first deal, seed kept
    records[0] = dataclasses.replace(records[0], deals=deals)
    result = verify_tournament("v", SECRET, commitment(SECRET), records)
    [problem] = result.problems
    assert problem.startswith(f"{records[0].match_id}: deal 0: ")  # its dealer or its deck
