"""A bot's versions in its registry entry: the first is promoted, later ones wait as candidates, a test
decides each once, a promotion by hand makes a test under way moot, and an entry stays bounded."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena.referee.registry import BotEntry, BotRegistry
from arena.referee.versions import (
    MAX_VERSIONS,
    SEEN_EVERY_S,
    Version,
    VersionError,
    add_games,
    decide,
    find,
    next_candidate,
    player_key,
    promote,
    promoted,
    seen,
    split_key,
    start_test,
    valid_version,
)


def connected(*labels: str, start: int = 1000) -> tuple[Version, ...]:
    versions: tuple[Version, ...] = ()
    for i, label in enumerate(labels):
        versions = seen(versions, label, start + i) or versions
    return versions


def test_the_first_version_is_promoted_and_the_next_ones_are_candidates() -> None:
    versions = connected("1", "2", "3")
    first = find(versions, "1")
    assert first is not None and first.state == "promoted" and first.how == "first"
    assert [v.state for v in versions[1:]] == ["candidate", "candidate"]
    assert next_candidate(versions) == find(versions, "2")  # the first seen is tested first


def test_a_version_seen_again_writes_only_when_its_last_seen_moved_enough() -> None:
    versions = connected("1")
    assert seen(versions, "1", 1000 + SEEN_EVERY_S - 1) is None
    again = seen(versions, "1", 1000 + SEEN_EVERY_S)
    assert again is not None and again[0].last_seen == 1000 + SEEN_EVERY_S and again[0].first_seen == 1000


def test_an_accepted_test_promotes_the_candidate_and_retires_the_old_one_once() -> None:
    versions = start_test(connected("1", "2"), "2", "vt:x", "1", 2000)
    assert find(versions, "2").state == "testing"  # type: ignore[union-attr]
    done = decide(versions, "2", "vt:x", "H1", 3.1, 12, 80.0, 3000)
    assert (find(done, "2").state, find(done, "2").how, find(done, "1").state) == (  # type: ignore[union-attr]
        "promoted", "sprt", "retired")
    with pytest.raises(VersionError):  # the same decision applied again by another node: no change
        decide(done, "2", "vt:x", "H1", 3.1, 12, 80.0, 3001)


def test_a_refused_test_keeps_the_evidence_and_the_promoted_version() -> None:
    versions = start_test(connected("1", "2"), "2", "vt:x", "1", 2000)
    done = decide(versions, "2", "vt:x", "H0", -3.0, 9, -120.0, 3000)
    v = find(done, "2")
    assert v is not None
    assert (v.state, v.decision, v.llr, v.pairs, v.elo) == ("rejected", "H0", -3.0, 9, -120.0)
    assert promoted(done) == find(done, "1")


def test_a_promotion_by_hand_makes_a_test_under_way_moot() -> None:
    versions = start_test(connected("1", "2", "3"), "2", "vt:x", "1", 2000)
    by_hand = promote(versions, "3", "hand", 2500)
    assert find(by_hand, "3").how == "hand" and find(by_hand, "1").state == "retired"  # type: ignore[union-attr]
    waiting = find(by_hand, "2")
    assert waiting is not None and (waiting.state, waiting.test) == ("candidate", "")
    with pytest.raises(VersionError, match="already the promoted"):
        promote(by_hand, "3", "hand", 2600)
    with pytest.raises(VersionError, match="no version"):
        promote(by_hand, "9", "hand", 2600)


def test_a_test_starts_only_for_a_candidate_against_the_promoted_version() -> None:
    versions = connected("1", "2")
    with pytest.raises(VersionError):
        start_test(versions, "1", "vt:x", "1", 2000)
    with pytest.raises(VersionError):
        start_test(versions, "2", "vt:x", "9", 2000)


@given(st.lists(st.from_regex(r"[a-z0-9]{1,4}", fullmatch=True), min_size=1, max_size=60))
def test_whatever_versions_a_bot_sends_one_is_promoted_and_the_entry_stays_bounded(labels: list[str]) -> None:
    versions: tuple[Version, ...] = ()
    now = 0
    for label in labels:
        now += SEEN_EVERY_S
        versions = seen(versions, label, now) or versions
        cand = next_candidate(versions)
        if cand is not None and len(labels) % 2:  # reject some, so that some can go
            base = promoted(versions)
            assert base is not None
            versions = decide(start_test(versions, cand.version, "t", base.version, now), cand.version, "t",
                              "H0", -3.0, 4, None, now)
    assert sum(v.state == "promoted" for v in versions) == 1
    assert len({v.version for v in versions}) == len(versions)
    assert len(versions) <= max(MAX_VERSIONS, sum(v.state in ("promoted", "candidate") for v in versions))


def test_games_add_up_by_version() -> None:
    versions = add_games(connected("1", "2"), {"1": 3, "9": 4})
    assert [v.games for v in versions] == [3, 0]


def test_labels_and_player_keys() -> None:
    assert valid_version("1.2.0-rc1") and not valid_version("") and not valid_version("a b")
    assert not valid_version("x" * 33) and not valid_version("-1") and not valid_version("1@2")
    assert player_key("alpha", "2") == "alpha@2" and split_key("alpha@2") == ("alpha", "2")
    assert player_key("alpha", "") == "alpha" and split_key("alpha") == ("alpha", "")


def test_an_entry_without_versions_is_stored_as_before_and_read_back(tmp_path: object) -> None:
    plain = BotEntry("bot-1", "alpha", "d" * 64)
    assert "versions" not in json.loads(plain.to_json())  # older nodes read it
    assert BotEntry.from_json(plain.to_json()) == plain
    with_versions = BotEntry("bot-1", "alpha", "d" * 64, versions=connected("1", "2"))
    assert BotEntry.from_json(with_versions.to_json()) == with_versions
    assert with_versions.promoted_version == "1" and plain.promoted_version == ""


def test_the_registry_applies_a_change_of_versions_once_and_keeps_it(tmp_path: object) -> None:
    from pathlib import Path

    path = Path(str(tmp_path)) / "bots.json"
    registry = BotRegistry(path)
    registry.register("alpha")
    assert registry.update_versions("alpha", lambda vs: seen(vs, "1", 1000)) is not None
    assert registry.update_versions("alpha", lambda vs: seen(vs, "1", 1001)) is None  # nothing to write
    assert registry.update_versions("alpha", lambda vs: promote(vs, "1", "hand", 1002)) is None  # refused
    with pytest.raises(VersionError):
        registry.update_versions("alpha", lambda vs: promote(vs, "1", "hand", 1002), strict=True)
    reread = BotRegistry(path).by_name("alpha")
    assert reread is not None and reread.promoted_version == "1"
