"""Which build of the engine ``import arena.engine`` loads: pure Python, or compiled with mypyc.

The compiled build is optional (``python scripts/build_engine.py``): the same modules compiled
with mypyc into ``arena/engine/_compiled/``. The pure modules are the reference, and what a plain
``pip install`` gives. This module is the only part of the engine that looks outside itself: once,
at import, it reads ``BELOTE_ENGINE`` and the compiled build's files (never the rules' state).

``BELOTE_ENGINE``:

- unset, or ``auto``: the compiled build if it is built, from the current sources, and imports;
  otherwise the pure one, quietly (:data:`arena.engine.BUILD_NOTE` says why);
- ``pure``: the pure build;
- ``compiled``: the compiled build; when it cannot be loaded, a ``RuntimeWarning`` says why and the
  pure build is loaded.

How: ``_compiled/`` holds only extension modules (one per module below, and mypyc's shared library
:data:`GROUP`), and is put first on the package's ``__path__``, so ``arena.engine.deal`` is found
there; with the pure build it is not on the path, so the ``.py`` files next to this one load.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import sys
import sysconfig
import warnings
from pathlib import Path

ENGINE_DIR = Path(__file__).resolve().parent
COMPILED_DIR = ENGINE_DIR / "_compiled"
#: mypyc's shared library of the build is the module ``arena.engine.native__mypyc``
GROUP = "arena.engine.native"
SUFFIX = str(sysconfig.get_config_var("EXT_SUFFIX") or ".so")
#: the modules compiled, in an order in which they import. Python in both builds: this module, the
#: package's ``__init__``, ``errors`` (exceptions, on no hot path), ``rules`` (a compiled dataclass
#: checks its fields' types before ``__post_init__`` can say what is wrong with them) and ``match``
#: (one call a deal; a compiled class takes no attributes of its own and copies differently), and
#: ``bots`` (the in-process players: their class attributes, and mypyc 2.4 fails on them as
#: Python classes) and ``greedy`` (the rollouts' card rule, Python in the SDK before it moved here)
MODULES: tuple[str, ...] = (
    "cards", "actions", "declarations", "deal", "dealing", "scoring", "observation", "record",
)
#: the double-dummy solver's modules (arena/analysis, which imports the engine), compiled in the same
#: build and group: the engine's calls from them are then native. Their extension modules go to
#: ``arena/analysis/_compiled/``, which :func:`choose_analysis` puts on that package's path when the
#: compiled engine is loaded. (Python in both builds: the package's ``__init__``.)
ANALYSIS_DIR = ENGINE_DIR.parent / "analysis"
ANALYSIS_COMPILED_DIR = ANALYSIS_DIR / "_compiled"
ANALYSIS_MODULES: tuple[str, ...] = ("search", "position", "values")
ENV = "BELOTE_ENGINE"
CHOICES = ("auto", "pure", "compiled")


def compiled_sources() -> list[Path]:
    """The sources of one build: the engine's modules, then the analysis's."""
    return [ENGINE_DIR / f"{m}.py" for m in MODULES] + [ANALYSIS_DIR / f"{m}.py" for m in ANALYSIS_MODULES]


def sources_hash() -> str:
    """SHA-256 over the compiled modules' sources (and this Python's extension suffix): the engine's
    and the analysis's, one build (a change to either makes the whole build out of date)."""
    h = hashlib.sha256(SUFFIX.encode())
    for path in compiled_sources():
        h.update(path.parent.name.encode() + b"/" + path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def _unusable() -> str | None:
    """Why the compiled build cannot be used as it is on disk (None: it looks usable)."""
    if not (COMPILED_DIR / "SOURCES").is_file():
        return "the compiled engine is not built (python scripts/build_engine.py)"
    missing = [m for m in MODULES if not (COMPILED_DIR / (m + SUFFIX)).is_file()]
    if missing:
        return (f"the compiled engine has no {', '.join(missing)} for this Python ({SUFFIX}): "
                "python scripts/build_engine.py")
    if (COMPILED_DIR / "SOURCES").read_text().strip() != sources_hash():
        return "the compiled engine is older than the sources: python scripts/build_engine.py"
    return None


def _forget_engine_modules() -> None:
    for name in [n for n in sys.modules if n.startswith("arena.engine.") and n != __name__]:
        del sys.modules[name]


def choose(package_path: list[str]) -> tuple[str, str]:
    """Pick the build, put it on ``package_path`` (the package's ``__path__``): (build, why).

    With the compiled build, its modules are imported here, so that one that fails to import
    leaves the pure build in place instead of half of each.
    """
    wanted = os.environ.get(ENV, "").strip().lower() or "auto"
    if wanted not in CHOICES:
        warnings.warn(f"{ENV}={wanted!r} is not one of {', '.join(CHOICES)}: taken as auto",
                      RuntimeWarning, stacklevel=3)
        wanted = "auto"
    if wanted == "pure":
        return "pure", f"{ENV}=pure"
    why = _unusable()
    if why is None:
        package_path.insert(0, str(COMPILED_DIR))
        try:
            for m in MODULES:
                module = importlib.import_module(f"arena.engine.{m}")
                if not str(module.__file__).endswith(SUFFIX):
                    raise ImportError(f"arena.engine.{m} loaded from {module.__file__}")
        except Exception as exc:
            package_path.remove(str(COMPILED_DIR))
            _forget_engine_modules()
            why = f"the compiled engine does not import: {exc!r}"
        else:
            return "compiled", f"mypyc build in {COMPILED_DIR}"
    if wanted == "compiled":
        warnings.warn(f"{ENV}=compiled, but {why}; using the pure engine", RuntimeWarning, stacklevel=3)
    return "pure", why


def choose_analysis(package_path: list[str]) -> tuple[str, str]:
    """Pick the build of ``arena.analysis`` and put it on ``package_path`` (that package's
    ``__path__``): its compiled modules when the compiled engine is loaded and they were built with
    it from the current sources; else the pure ones (a ``RuntimeWarning`` when ``BELOTE_ENGINE``
    asked for the compiled build and the engine was loaded compiled but the analysis cannot be)."""
    engine = sys.modules["arena.engine"]
    if getattr(engine, "BUILD", "pure") != "compiled":
        return "pure", "the pure engine is loaded"
    wanted = os.environ.get(ENV, "").strip().lower()
    why = None
    hash_file = ANALYSIS_COMPILED_DIR / "SOURCES"
    missing = [m for m in ANALYSIS_MODULES if not (ANALYSIS_COMPILED_DIR / (m + SUFFIX)).is_file()]
    if not hash_file.is_file() or missing:
        why = "the compiled analysis is not built (python scripts/build_engine.py)"
    elif hash_file.read_text().strip() != sources_hash():
        why = "the compiled analysis is older than the sources: python scripts/build_engine.py"
    if why is None:
        package_path.insert(0, str(ANALYSIS_COMPILED_DIR))
        try:
            for m in ANALYSIS_MODULES:
                module = importlib.import_module(f"arena.analysis.{m}")
                if not str(module.__file__).endswith(SUFFIX):
                    raise ImportError(f"arena.analysis.{m} loaded from {module.__file__}")
        except Exception as exc:
            package_path.remove(str(ANALYSIS_COMPILED_DIR))
            for name in [n for n in sys.modules if n.startswith("arena.analysis.")]:
                del sys.modules[name]
            why = f"the compiled analysis does not import: {exc!r}"
        else:
            return "compiled", f"mypyc build in {ANALYSIS_COMPILED_DIR}"
    if wanted == "compiled":
        warnings.warn(f"{ENV}=compiled, but {why}; using the pure analysis", RuntimeWarning, stacklevel=3)
    return "pure", why
