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
    command = [sys.executable, str(ROOT / "bench" / "attacks.py"), "--deals", "6", "--flood", "40",
               "--cancel-deals", "200", "--json"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    seeds, roles, queue, cancel = (json.loads(done.stdout)[k] for k in ("seeds", "roles", "queue", "cancel"))
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
    # a cancel shows no secret while a match of it could still be played, and rates nothing after it
    assert cancel["matches_running_at_cancel"] == 8 and cancel["reads_while_in_play"] > 0
    assert cancel["reads_showing_the_secret_while_in_play"] == 0
    assert cancel["deals_predicted_from_a_secret_shown_while_in_play"] == 0
    assert cancel["results_written_after_the_cancel"] == 0
    assert cancel["games_per_bot_after_the_cancel"] == cancel["games_per_bot_before_the_cancel"] != {}
    assert cancel["secret_shown_s_after_the_cancel"] is not None  # revealed once none can be played
