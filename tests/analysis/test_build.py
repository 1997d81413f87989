"""Which build of the analysis is loaded: compiled with the engine's mypyc build when that one is,
else the pure one, with the reason why (as tests/engine/test_build.py checks for the engine).

CI's second run of the tests, with ``BELOTE_ENGINE=compiled`` after ``scripts/build_engine.py``,
fails on the first test here if the pure analysis was loaded."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import arena.analysis
import arena.engine
from arena.engine import _build

ROOT = Path(__file__).resolve().parents[2]


def test_the_analysis_build_loaded_is_the_one_asked_for() -> None:
    wanted = os.environ.get(_build.ENV, "").strip().lower()
    if wanted in ("pure", "compiled"):
        assert wanted == arena.analysis.BUILD, f"{_build.ENV}={wanted}, but: {arena.analysis.BUILD_NOTE}"
    assert arena.analysis.BUILD == arena.engine.BUILD or arena.engine.BUILD == "compiled"
    for name in _build.ANALYSIS_MODULES:
        module = importlib.import_module(f"arena.analysis.{name}")
        suffix = _build.SUFFIX if arena.analysis.BUILD == "compiled" else ".py"
        assert str(module.__file__).endswith(suffix), (name, module.__file__, arena.analysis.BUILD)
    assert str(arena.analysis.__file__).endswith(".py")


def test_the_analysis_sources_are_part_of_the_build_hash() -> None:
    sources = _build.compiled_sources()
    assert [p for p in sources if p.parent == _build.ANALYSIS_DIR] == [
        _build.ANALYSIS_DIR / f"{m}.py" for m in _build.ANALYSIS_MODULES]


def values(seeds: int) -> str:
    """The solver's values and principal variations over seeded deals of every preset."""
    from arena.analysis import card_values, principal_actions, solve
    from arena.engine import PRESETS
    from tests.analysis.deals import contract_position, played_on

    out = []
    for preset in sorted(PRESETS):
        for seed in range(seeds):
            pos = played_on(contract_position(preset, seed), 12 + seed % 9, seed)
            out.append(repr((solve(pos), sorted(card_values(pos).items()), principal_actions(pos))))
    return "\n".join(out)


def test_the_compiled_analysis_finds_the_values_of_the_pure_one() -> None:
    if arena.analysis.BUILD != "compiled":
        pytest.skip("the pure analysis is loaded: no other build to compare it with")
    code = "from tests.analysis.test_build import values; print(values(6))"
    env = {**os.environ, _build.ENV: "pure"}
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                          check=False, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert values(6) == proc.stdout.strip()


def choose_with(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, wanted: str,
                engine: str = "compiled") -> tuple[str, str, list[str]]:
    monkeypatch.setattr(_build, "ANALYSIS_COMPILED_DIR", tmp_path)
    monkeypatch.setattr(arena.engine, "BUILD", engine)
    monkeypatch.setenv(_build.ENV, wanted)
    path: list[str] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        build, why = _build.choose_analysis(path)
    assert path == []
    return build, why, [str(w.message) for w in caught]


def test_with_the_pure_engine_the_analysis_is_pure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert choose_with(tmp_path, monkeypatch, "pure", engine="pure") == (
        "pure", "the pure engine is loaded", [])


def test_without_a_compiled_analysis_the_pure_one_loads_quietly_unless_the_compiled_was_asked_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    build, why, warned = choose_with(tmp_path, monkeypatch, "auto")
    assert (build, warned) == ("pure", []) and "not built" in why
    build, why, warned = choose_with(tmp_path, monkeypatch, "compiled")
    assert build == "pure" and len(warned) == 1 and "BELOTE_ENGINE=compiled" in warned[0] and why in warned[0]


def test_a_compiled_analysis_older_than_the_sources_is_not_loaded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in _build.ANALYSIS_MODULES:
        (tmp_path / (name + _build.SUFFIX)).write_bytes(b"")
    (tmp_path / "SOURCES").write_text("0" * 64 + "\n")
    build, why, _ = choose_with(tmp_path, monkeypatch, "auto")
    assert build == "pure" and "older than the sources" in why
