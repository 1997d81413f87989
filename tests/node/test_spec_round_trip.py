"""What GetTournament, CreateSchedule and ListSchedules show of a tournament is what CreateTournament and
CreateSchedule take: sent back as it came, it is accepted and means the same tournament.

A real node on the embedded queue, over real gRPC (the command line's node of :mod:`tests.cli_node`).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from belote.arena.v1 import arena_service_pb2 as apb

from arena.engine import PRESETS, Ruleset
from arena.engine.rules import spec_from_text, spec_to_text
from arena.node.service import spec_to_proto
from arena.referee.arena_service import summary_to_proto
from arena.referee.live import MatchState, MatchSummary
from arena.remote import Remote
from arena.tournament.spec import TournamentSpec
from tests.cli_node import ADMIN, node_with_bots

#: a ruleset that is no preset: coinche without announcements, its points not rounded
CUSTOM = {"preset": "coinche", "annonces": False, "rounding": "none"}
RULESETS = {"a preset": "coinche", "the default preset": "classic", "a custom ruleset": json.dumps(CUSTOM)}


def same_tournament(a: apb.TournamentSpec, b: apb.TournamentSpec) -> bool:
    """Two specs as shown, alike but for their ids (the seed is never shown)."""
    a, b = apb.TournamentSpec.FromString(a.SerializeToString()), apb.TournamentSpec.FromString(
        b.SerializeToString())
    a.tournament_id = b.tournament_id = ""
    return a == b


def shown_spec(remote: Remote, tournament_id: str) -> apb.TournamentSpec:
    """The tournament's spec as GetTournament shows it."""
    reply = remote.call("GetTournament", apb.GetTournamentRequest(tournament_id=tournament_id))
    return reply.tournament.spec  # type: ignore[no-any-return]


def rules_of(text: str) -> Ruleset:
    return Ruleset.from_spec(spec_from_text(text))


def test_a_ruleset_is_shown_as_it_is_given() -> None:
    assert spec_to_text("coinche") == "coinche"
    assert json.loads(spec_to_text(CUSTOM)) == CUSTOM
    for name, rules in PRESETS.items():
        assert spec_to_text(rules.to_spec()) == name
    custom = Ruleset.from_spec(CUSTOM)
    assert rules_of(spec_to_text(custom.to_spec())) == custom
    spec = TournamentSpec.from_dict({"tournament_id": "t", "format": "round-robin", "bots": ["a", "b"],
                                     "ruleset": "coinche"})
    assert spec_to_proto(spec).ruleset == "coinche"
    summary = MatchSummary(match_id="m", state=MatchState.RUNNING, players=("a", "b", "a", "b"),
                           ruleset="coinche", totals=(0, 0), deals_played=0, seed="", result=None)
    assert summary_to_proto(summary).ruleset == "coinche"


@pytest.mark.parametrize("ruleset", RULESETS.values(), ids=RULESETS.keys())
def test_a_tournament_as_get_shows_it_is_made_again_the_same(tmp_path: Path, ruleset: str) -> None:
    with node_with_bots(tmp_path, bots=("a", "b", "c", "d")) as node, Remote(node.address, ADMIN) as remote:
        asked = apb.TournamentSpec(tournament_id="first", format="swiss", bots=["a", "b", "c", "d"],
                                   ruleset=ruleset, deals=2, duplicate_mode="field", rounds=2)
        remote.call("CreateTournament", apb.CreateTournamentRequest(spec=asked))
        shown = shown_spec(remote, "first")
        assert rules_of(shown.ruleset) == rules_of(ruleset)
        again = apb.TournamentSpec.FromString(shown.SerializeToString())
        again.tournament_id = "second"
        remote.call("CreateTournament", apb.CreateTournamentRequest(spec=again))
        second = shown_spec(remote, "second")
    assert same_tournament(second, shown)
    assert spec_from_text(shown.ruleset) == spec_from_text(ruleset)


def test_an_sprt_as_get_shows_it_is_made_again_the_same(tmp_path: Path) -> None:
    with node_with_bots(tmp_path) as node, Remote(node.address, ADMIN) as remote:
        asked = apb.TournamentSpec(tournament_id="first", format="sprt", bots=["a", "b"],
                                   ruleset="classic-annonces", deals=2, duplicate=True, sprt=apb.SprtOptions(
                                       elo0=0, elo1=20, alpha=0.1, beta=0.1, batch_pairs=4, max_pairs=40))
        remote.call("CreateTournament", apb.CreateTournamentRequest(spec=asked))
        shown = shown_spec(remote, "first")
        again = apb.TournamentSpec.FromString(shown.SerializeToString())
        again.tournament_id = "second"
        remote.call("CreateTournament", apb.CreateTournamentRequest(spec=again))
        second = shown_spec(remote, "second")
    assert shown.ruleset == "classic-annonces" and same_tournament(second, shown)


@pytest.mark.parametrize("ruleset", RULESETS.values(), ids=RULESETS.keys())
def test_a_schedule_as_listed_is_made_again_the_same(tmp_path: Path, ruleset: str) -> None:
    with node_with_bots(tmp_path) as node, Remote(node.address, ADMIN) as remote:
        asked = apb.TournamentSpec(format="round-robin", bots=["a", "b", "c"], ruleset=ruleset, deals=1)
        made = remote.call("CreateSchedule", apb.CreateScheduleRequest(
            schedule_id="nightly", spec=asked, every_s=86_400, at="02:00")).schedule
        assert rules_of(made.spec.ruleset) == rules_of(ruleset)
        [listed] = remote.call("ListSchedules", apb.ListSchedulesRequest()).schedules
        assert same_tournament(listed.spec, made.spec)
        again = remote.call("CreateSchedule", apb.CreateScheduleRequest(
            schedule_id="again", spec=listed.spec, every_s=listed.every_s, at=listed.at)).schedule
        # the same schedule's tournament made now as a tournament: the same spec too
        remote.call("CreateTournament", apb.CreateTournamentRequest(spec=apb.TournamentSpec(
            tournament_id="once", format=listed.spec.format, bots=listed.spec.bots,
            ruleset=listed.spec.ruleset, deals=listed.spec.deals)))
        once = shown_spec(remote, "once")
    assert same_tournament(again.spec, made.spec)
    assert same_tournament(once, made.spec)


def test_a_ladder_schedule_as_listed_is_made_again_the_same(tmp_path: Path) -> None:
    with node_with_bots(tmp_path) as node, Remote(node.address, ADMIN) as remote:
        asked = apb.TournamentSpec(format="swiss", ruleset="coinche", deals=2, duplicate_mode="field")
        made = remote.call("CreateSchedule", apb.CreateScheduleRequest(
            schedule_id="weekly", spec=asked, every_s=7 * 86_400, ladder="coinche")).schedule
        again = remote.call("CreateSchedule", apb.CreateScheduleRequest(
            schedule_id="again", spec=made.spec, every_s=made.every_s, ladder=made.ladder)).schedule
    assert made.spec.ruleset == "coinche" and same_tournament(again.spec, made.spec)
