"""``bench/attacks.py`` reruns the issue-8 and issue-16 attacks against a real node: each one fails."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.security
def test_the_attacks_the_bench_reruns_all_fail() -> None:
    command = [sys.executable, str(ROOT / "bench" / "attacks.py"), "--quick",
               "--only", "seeds,roles,queue", "--json"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stderr
    seeds, roles, queue = (json.loads(done.stdout)[k] for k in ("seeds", "roles", "queue"))
    assert seeds["seeds_seen_while_running"] == 0 and seeds["deals_predicted_while_running"] == 0
    assert seeds["deals_predicted_from_the_revealed_seed"] == seeds["deals"] == 6  # the predictor works
    assert roles["register_flood_statuses"] == {"UNAUTHENTICATED": 40}
    assert roles["bots_registered_by_the_flood"] == 0
    for call in ("start_match", "create_tournament", "cancel_tournament"):
        assert (roles[f"{call}_anonymous"], roles[f"{call}_bot_token"]) == (
            "UNAUTHENTICATED", "PERMISSION_DENIED")
    assert roles["open_register_flood_statuses"] == {"OK": 5, "RESOURCE_EXHAUSTED": 35}
    assert queue["unknown_bot_tournament"].startswith("INVALID_ARGUMENT: no bot named ghost")
    assert queue["first_tournament_waiting_for"] == ["absent1", "absent2"]


@pytest.mark.security
def test_a_bot_that_remembers_hands_never_holds_a_deal_it_saw_before_in_field_duplicate() -> None:
    """The issue's attack: in mirror duplicate a bot knows its opponents' hands at most decisions (it
    held them in the other leg); in field duplicate, the default, it never does."""
    command = [sys.executable, str(ROOT / "bench" / "attacks.py"), "--quick", "--only", "duplicate",
               "--json"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stderr
    field, mirror = (json.loads(done.stdout)["duplicate"][mode] for mode in ("field", "mirror"))
    assert field["matches"] == mirror["matches"] == 12 and field["decisions"] > 0
    assert field["known_opponent_hands_decisions"] == field["deals_with_known_opponent_hands"] == 0
    assert field["duplicate_note"] == ""
    # the attack works: in mirror play the remembered hands are the opponents', exactly, in every deal
    # of each pair's second leg (the legs run one after the other: at nearly half the decisions)
    assert mirror["known_opponent_hands_decisions"] > mirror["decisions"] // 3
    assert mirror["deals_with_known_opponent_hands"] == mirror["deals"] // 2
    assert mirror["claims_exact"] > 0 and mirror["claims_wrong"] == 0
    assert mirror["duplicate_note"].startswith("mirror duplicate: both legs seen by both bots")


@pytest.mark.security
def test_a_cancel_shows_no_secret_while_a_match_of_it_can_be_played_and_rates_nothing_after_it() -> None:
    """The issue's attack: after a cancel the secret showed at once while its 8 matches played on,
    every deck predicted, and all 8 were rated; now they stop and the secret waits for them."""
    command = [sys.executable, str(ROOT / "bench" / "attacks.py"), "--quick", "--only", "cancel",
               "--json"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stderr
    cancel = json.loads(done.stdout)["cancel"]
    assert cancel["matches_running_at_cancel"] == 8 and cancel["reads_while_in_play"] > 0
    assert cancel["reads_showing_the_secret_while_in_play"] == 0
    assert cancel["deals_predicted_from_a_secret_shown_while_in_play"] == 0
    assert cancel["results_written_after_the_cancel"] == 0
    assert cancel["games_per_bot_after_the_cancel"] == cancel["games_per_bot_before_the_cancel"] != {}
    assert cancel["secret_shown_s_after_the_cancel"] is not None  # revealed once none can be played
