"""Which build of the engine is loaded: the one asked for, or the pure one with the reason why.

CI runs the engine's tests twice, the second time with ``BELOTE_ENGINE=compiled`` after
``scripts/build_engine.py``: the first test here fails that run if the pure engine was loaded,
so the second run cannot silently test the pure engine twice.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import arena.engine
from arena.engine import _build

ROOT = Path(__file__).resolve().parents[2]


def test_the_build_loaded_is_the_one_asked_for() -> None:
    wanted = os.environ.get(_build.ENV, "").strip().lower()
    if wanted in ("pure", "compiled"):
        assert wanted == arena.engine.BUILD, f"{_build.ENV}={wanted}, but: {arena.engine.BUILD_NOTE}"
    assert arena.engine.BUILD in ("pure", "compiled")
    for name in _build.MODULES:
        module = importlib.import_module(f"arena.engine.{name}")
        suffix = _build.SUFFIX if arena.engine.BUILD == "compiled" else ".py"
        assert str(module.__file__).endswith(suffix), (name, module.__file__, arena.engine.BUILD)


def test_the_modules_that_stay_python_are_python_in_both_builds() -> None:
    for name in ("errors", "rules", "match", "bots", "_build"):
        assert str(importlib.import_module(f"arena.engine.{name}").__file__).endswith(".py")


def test_the_compiled_build_is_the_same_source_as_the_pure_one() -> None:
    # what it was built from is what the package holds now (else it is not loaded at all)
    if arena.engine.BUILD == "compiled":
        assert (_build.COMPILED_DIR / "SOURCES").read_text().strip() == _build.sources_hash()


def transcript(deals: int) -> str:
    """A digest of everything the engine answers over random deals of every preset: legal actions
    in order, observations, copies, illegal-action messages, outcomes, records and their replays."""
    import hashlib
    import json
    import random

    from arena.engine import (
        PRESETS,
        IllegalActionError,
        Match,
        Ruleset,
        deal_record,
        observe,
        replay_deal,
        score_deal,
    )

    h = hashlib.sha256()
    for preset in PRESETS:
        rules = Ruleset.from_spec({"preset": preset, "deals": deals})
        match = Match(rules, seed=f"transcript/{preset}")
        rng = random.Random(preset)
        while not match.is_over:
            deal = match.new_deal()
            while not deal.is_over:
                legal = deal.legal_actions()
                h.update(repr((legal, deal.legal_cards(), observe(deal, rng.randrange(4)))).encode())
                if rng.random() < 0.1:
                    copy = deal.copy()
                    while not copy.is_over:
                        copy.apply_unchecked(rng.choice(copy.legal_actions()))
                    h.update(repr(score_deal(copy)).encode())
                    illegal = [a for a in [*(a ^ 1 for a in legal), 1 << 16 | 5] if a not in legal]
                    with pytest.raises(IllegalActionError) as err:
                        deal.apply(rng.choice(illegal))
                    h.update(str(err.value).encode())
                deal.apply(rng.choice(legal))
            outcome = match.add(deal)
            record = deal_record(deal)
            h.update(json.dumps([outcome.as_json(), record], sort_keys=True).encode())
            h.update(repr(score_deal(replay_deal(record)[0])).encode())
    return h.hexdigest()


def test_the_compiled_build_plays_every_deal_as_the_pure_one() -> None:
    if arena.engine.BUILD != "compiled":
        pytest.skip("the pure build is loaded: no other build to compare it with")
    code = "from tests.engine.test_build import transcript; print(transcript(100))"
    env = {**os.environ, _build.ENV: "pure"}
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                          check=False, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert transcript(100) == proc.stdout.strip()


def choose_with(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, wanted: str) -> tuple[str, str, list[str]]:
    """``_build.choose`` on a compiled build in ``tmp_path`` (modules already imported stay)."""
    monkeypatch.setattr(_build, "COMPILED_DIR", tmp_path)
    monkeypatch.setenv(_build.ENV, wanted)
    path: list[str] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        build, why = _build.choose(path)
    assert path == []
    return build, why, [str(w.message) for w in caught]


def test_without_a_compiled_build_the_pure_one_loads_quietly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    build, why, warned = choose_with(tmp_path, monkeypatch, "")
    assert (build, warned) == ("pure", [])
    assert "not built" in why and "scripts/build_engine.py" in why


def test_asking_for_the_compiled_build_when_there_is_none_warns_and_loads_the_pure_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    build, why, warned = choose_with(tmp_path, monkeypatch, "compiled")
    assert build == "pure"
    assert len(warned) == 1 and "BELOTE_ENGINE=compiled" in warned[0] and why in warned[0]


def test_a_compiled_build_older_than_the_sources_is_not_loaded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in _build.MODULES:
        (tmp_path / (name + _build.SUFFIX)).write_bytes(b"")
    (tmp_path / "SOURCES").write_text("0" * 64 + "\n")
    build, why, warned = choose_with(tmp_path, monkeypatch, "auto")
    assert (build, warned) == ("pure", [])
    assert "older than the sources" in why


def test_pure_is_forced_by_the_environment_and_a_bad_value_is_taken_as_auto(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert choose_with(tmp_path, monkeypatch, "pure")[:3] == ("pure", "BELOTE_ENGINE=pure", [])
    build, _, warned = choose_with(tmp_path, monkeypatch, "fast")
    assert build == "pure" and len(warned) == 1 and "taken as auto" in warned[0]


def test_a_compiled_build_that_does_not_import_leaves_the_pure_one_loaded(tmp_path: Path) -> None:
    # in a child: the failed attempt forgets the engine's modules, which this process holds
    for name in _build.MODULES:
        (tmp_path / (name + _build.SUFFIX)).write_bytes(b"not an extension module")
    (tmp_path / "SOURCES").write_text(_build.sources_hash() + "\n")
    code = (
        "import os, sys, warnings\n"
        "import arena.engine\n"  # the pure build (BELOTE_ENGINE=pure below)
        "from arena.engine import _build\n"
        f"_build.COMPILED_DIR = __import__('pathlib').Path({str(tmp_path)!r})\n"
        "for name in [n for n in sys.modules if n.startswith('arena.engine.') and n != _build.__name__]:\n"
        "    del sys.modules[name]\n"
        "os.environ['BELOTE_ENGINE'] = 'compiled'\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n"
        "    build, why = _build.choose(arena.engine.__path__)\n"
        "import arena.engine.deal\n"
        "print(build, arena.engine.__path__ == [str(_build.ENGINE_DIR)],\n"
        "      arena.engine.deal.__file__.endswith('.py'))\n"
        "print(why)\n"
        "print(len(caught), caught[0].message if caught else '')\n"
    )
    env = {**os.environ, _build.ENV: "pure"}
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                          check=False, timeout=60)
    assert proc.returncode == 0, proc.stderr
    first, why, warned = proc.stdout.splitlines()
    assert first == "pure True True"
    assert "does not import" in why
    assert warned.startswith("1 ") and "does not import" in warned


def test_deals_outcomes_observations_and_matches_pickle_and_copy_in_either_build() -> None:
    import copy
    import pickle
    import random

    from arena.engine import Match, Ruleset, observe
    from arena.engine.deal import FIELDS

    match = Match(Ruleset.from_spec({"preset": "coinche", "deals": 2}), seed=4)
    rng = random.Random(4)
    deal = match.new_deal()
    while len(deal.plays) < 6 and not deal.is_over:
        deal.apply(rng.choice(deal.legal_actions()))
    clones = [pickle.loads(pickle.dumps(deal)), copy.deepcopy(deal), copy.copy(deal)]
    for clone in clones:
        assert [getattr(clone, f) for f in FIELDS] == [getattr(deal, f) for f in FIELDS]
    assert clones[1].hands is not deal.hands and clones[2].hands is deal.hands  # deep, shallow
    obs = observe(deal, deal.to_act)
    while not deal.is_over:
        deal.apply(rng.choice(deal.legal_actions()))
    outcome = match.add(deal)
    for value in (outcome, obs):
        for clone in (pickle.loads(pickle.dumps(value)), copy.deepcopy(value), copy.copy(value)):
            assert type(clone) is type(value) and clone == value
    for m in (pickle.loads(pickle.dumps(match)), copy.deepcopy(match), copy.copy(match)):
        assert (m.totals, m.outcomes, m.first_dealer) == (match.totals, match.outcomes, match.first_dealer)


def test_the_engine_classes_other_than_deal_behave_as_python_classes_in_either_build() -> None:
    from arena.engine import RecordError, replay_deal
    from arena.engine.bots import PLAYERS, HeuristicPlayer, RandomPlayer

    assert (HeuristicPlayer.name, RandomPlayer.name) == ("heuristic", "random")
    assert {name: cls.name for name, cls in PLAYERS.items()} == {"heuristic": "heuristic", "random": "random"}
    player = HeuristicPlayer()
    player.name = "mine"  # an attribute of its own, as any Python object
    assert (player.name, HeuristicPlayer.name) == ("mine", "heuristic")
    hands = [[f"{r}{s}" for r in "789TJQKA"] for s in "SHDC"]
    with pytest.raises(RecordError) as err:
        replay_deal({"ruleset": "coinche", "dealer": 0, "hands": hands, "bids": ["take"], "plays": []})
    err.value.add_note("noted")
    assert type(err.value).__name__ == "IllegalRecordedAction" and err.value.__notes__ == ["noted"]
