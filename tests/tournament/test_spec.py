"""TournamentSpec: JSON round trip, defaults, and one clear error per mistake."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena.engine import Ruleset
from arena.tournament import FORMATS, SprtOptions, TournamentError, TournamentSpec


def spec(**fields: Any) -> TournamentSpec:
    data: dict[str, Any] = {"tournament_id": "t1", "format": "round-robin", "bots": ["a", "b", "c"]}
    data.update(fields)
    return TournamentSpec.from_dict(data)


def error(**fields: Any) -> str:
    with pytest.raises(TournamentError) as e:
        spec(**fields)
    return str(e.value)


# ------------------------------------------------------------------ round trip
@st.composite
def specs(draw: st.DrawFn) -> TournamentSpec:
    fmt = draw(st.sampled_from(FORMATS))
    n = 2 if fmt == "sprt" else draw(st.integers(4 if fmt == "partners" else 2, 9))
    bots = [f"bot{i}" for i in range(n)]
    data: dict[str, Any] = {
        "tournament_id": draw(st.from_regex(r"[a-z0-9][a-z0-9_.:-]{0,12}", fullmatch=True)),
        "format": fmt, "bots": draw(st.permutations(bots)),
        "ruleset": draw(st.sampled_from(
            ["classic", "coinche", "club", {"preset": "coinche", "must_undertrump": True}]
        )),
        "seed": draw(st.text(max_size=10)),
    }
    if fmt == "gauntlet":
        data["candidate"] = draw(st.sampled_from(bots))
    field = (fmt in ("round-robin", "swiss") and n >= 4) or (fmt == "partners" and n >= 8)
    duplicate = "mirror" if fmt == "sprt" else draw(st.sampled_from(
        ["", "mirror", True, False, *(["field"] if field else [])]))
    data["duplicate"] = duplicate
    if duplicate or draw(st.booleans()):
        data["deals"] = draw(st.integers(1, 32))
    elif draw(st.booleans()):
        data["target"] = draw(st.integers(1, 2000))
    if fmt in ("round-robin", "gauntlet", "swiss", "partners") and draw(st.booleans()):
        data["rounds"] = draw(st.integers(1, 6))
    if fmt == "sprt" and draw(st.booleans()):
        data["sprt"] = {"elo0": draw(st.integers(-10, 0)), "elo1": draw(st.integers(1, 20)),
                        "batch_pairs": draw(st.integers(1, 50))}
    return TournamentSpec.from_dict(data)


@given(specs())
def test_a_spec_survives_its_json_round_trip(s: TournamentSpec) -> None:
    text = json.dumps(s.to_dict())
    assert TournamentSpec.from_dict(json.loads(text)) == s


def test_the_seed_defaults_to_the_tournament_id() -> None:
    assert spec().seed == "t1"
    assert spec(seed="abc").seed == "abc"


def test_defaults_rounds_target_and_sprt() -> None:
    assert spec().round_count == 1
    assert spec(format="swiss", bots=list("abcde")).round_count == 3  # ceil(log2 5)
    assert spec(format="swiss", bots=list("abcd")).round_count == 2
    assert spec(format="swiss", bots=list("ab")).round_count == 1
    assert spec(format="swiss", rounds=5).round_count == 5
    assert spec(format="knockout", bots=list("abcde")).round_count == 3
    assert spec().match_target == 501
    assert spec(ruleset="coinche").match_target == 1000
    assert spec(target=301).match_target == 301
    assert spec(deals=8).match_target is None
    s = spec(format="sprt", bots=["new", "old"], deals=8)
    assert s.duplicate == "mirror" and s.sprt == SprtOptions(elo0=0, elo1=5, alpha=0.05, beta=0.05)


def test_a_stored_true_is_mirror_duplicate_and_each_mode_reads_back() -> None:
    assert spec(duplicate=True, deals=2).duplicate == "mirror"  # what every duplicate spec was before modes
    assert spec(duplicate=False).duplicate == ""
    assert spec(duplicate="field", deals=2, bots=list("abcd")).duplicate == "field"
    note = spec(duplicate="mirror", deals=2).duplicate_note
    assert note.startswith("mirror duplicate: both legs seen by both bots")
    assert spec(duplicate="field", deals=2, bots=list("abcd")).duplicate_note == ""


def test_a_ruleset_object_is_validated_by_the_engine() -> None:
    s = spec(ruleset={"preset": "coinche", "must_undertrump": True})
    assert s.ruleset == Ruleset.from_spec("coinche").with_options(must_undertrump=True)
    assert s.to_dict()["ruleset"] == {"preset": "coinche", "must_undertrump": True}
    assert "unknown preset 'belotte'" in error(ruleset="belotte")
    assert "unknown ruleset option 'trumps'" in error(ruleset={"preset": "classic", "trumps": 1})
    assert "not as a ruleset option" in error(ruleset={"preset": "classic", "deals": 4})


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"tournament_id": "a b"}, "tournament_id must be"),
        ({"tournament_id": "x/y"}, "tournament_id must be"),
        ({"format": "ladder"},
         "format must be one of round-robin, gauntlet, swiss, knockout, sprt, partners"),
        ({"bots": ["a"]}, "needs 2 to 256 bots, not 1"),
        ({"bots": [f"b{i}" for i in range(257)]}, "needs 2 to 256 bots, not 257"),
        ({"bots": ["a", "b", "a"]}, "named more than once: a"),
        ({"bots": ["a", ""]}, "bots must be a list of bot names"),
        ({"bots": "ab"}, "bots must be a list"),
        ({"format": "gauntlet"}, "a gauntlet needs a candidate"),
        ({"format": "gauntlet", "candidate": "z"}, "candidate 'z' is not one of the bots"),
        ({"candidate": "a"}, "candidate is for gauntlet and sprt"),
        ({"format": "sprt", "deals": 4}, "sprt compares exactly 2 bots"),
        ({"format": "sprt", "bots": ["a", "b"], "deals": 4, "candidate": "b"},
         "sprt's candidate is the first bot, 'a'"),
        ({"format": "sprt", "bots": ["a", "b"]}, "duplicate play needs a fixed number of deals"),
        ({"format": "sprt", "bots": ["a", "b"], "deals": 4, "duplicate": False},
         "sprt plays mirror duplicate pairs"),
        ({"format": "sprt", "bots": ["a", "b"], "deals": 4, "duplicate": "field"},
         "a sprt needs the same two bots on both sides; ask for duplicate 'mirror'"),
        ({"duplicate": True}, "duplicate play needs a fixed number of deals"),
        ({"duplicate": "yes", "deals": 4}, "duplicate must be '' (none), 'field' or 'mirror'"),
        ({"duplicate": "field", "deals": 4},
         "field duplicate needs at least 4 bots, not 3; ask for duplicate 'mirror' "
         "(both legs seen by both bots)"),
        ({"format": "gauntlet", "candidate": "a", "duplicate": "field", "deals": 4},
         "field duplicate is for round-robin, swiss, partners: a gauntlet needs the same two bots"),
        ({"format": "knockout", "duplicate": "field", "deals": 4}, "a knockout needs the same two bots"),
        ({"format": "partners", "bots": [f"b{i}" for i in range(7)], "duplicate": "field", "deals": 4},
         "field duplicate needs at least 8 bots (two tables of four different bots on one board set)"),
        ({"deals": 0}, "deals must be a whole number from 1 to 1000"),
        ({"deals": True}, "deals must be a whole number from 1 to 1000"),
        ({"deals": 1001}, "deals must be a whole number from 1 to 1000"),
        ({"target": 2.5}, "target must be a whole number from 1 to 10000"),
        ({"target": 10_001}, "target must be a whole number from 1 to 10000"),
        ({"ruleset": {"preset": "classic", "target": 20_000}}, "the ruleset's target must be at most 10000"),
        ({"deals": 8, "target": 501}, "either deals"),
        ({"rounds": 0}, "rounds must be a whole number from 1 to 100"),
        ({"rounds": 101}, "rounds must be a whole number from 1 to 100"),
        ({"format": "knockout", "rounds": 2}, "rounds is not an option of knockout"),
        ({"seed": 7}, "seed must be a string"),
        ({"sprt": {"elo0": 0}}, "sprt options are only for the sprt format"),
        ({"colour": "red"}, "unknown tournament field 'colour'"),
    ],
)
def test_each_mistake_says_what_is_wrong(fields: dict[str, Any], message: str) -> None:
    assert message in error(**fields)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"elo0": 5, "elo1": 5}, "must be below sprt.elo1"),
        ({"alpha": 0}, "sprt.alpha must be between 0 and 0.5"),
        ({"beta": 0.7}, "sprt.beta must be between 0 and 0.5"),
        ({"elo1": "ten"}, "sprt.elo1 must be a finite number"),
        ({"elo1": float("inf")}, "sprt.elo1 must be a finite number"),
        ({"batch_pairs": 0}, "sprt.batch_pairs must be a whole number >= 1"),
        ({"max_pairs": 1}, "sprt.max_pairs must be a whole number from 2 to 100000"),
        ({"max_pairs": 100_001}, "sprt.max_pairs must be a whole number from 2 to 100000"),
        ({"batch_pairs": 20, "max_pairs": 10}, "sprt.batch_pairs (20) must not exceed sprt.max_pairs (10)"),
        ({"pairs": 3}, "unknown sprt option 'pairs'"),
    ],
)
def test_sprt_options_are_checked(options: dict[str, Any], message: str) -> None:
    assert message in error(format="sprt", bots=["a", "b"], deals=4, sprt=options)


def test_missing_fields_and_non_objects() -> None:
    with pytest.raises(TournamentError, match="needs 'bots'"):
        TournamentSpec.from_dict({"tournament_id": "t", "format": "swiss"})
    with pytest.raises(TournamentError, match="is a JSON object"):
        TournamentSpec.from_dict(["t"])
    assert issubclass(TournamentError, ValueError)
