"""Build the optional compiled engine: arena/engine (and arena/analysis) compiled with mypyc.

Usage (from the repository root, after ``pip install -e '.[test]'``, which brings mypy and
with it mypyc; a C compiler and the Python headers are needed)::

    python scripts/build_engine.py            # build into arena/engine/_compiled/ (about a minute)
    python scripts/build_engine.py --check    # say which build ``import arena.engine`` loads
    python scripts/build_engine.py --clean    # remove the compiled build

Why a script and not the install: the README's ``pip install -e .`` must keep working on a
machine without a C compiler, and a setuptools build that compiles on demand would need a
``setup.py``, mypy among the build requirements of every install, and would rebuild on every
editable install. The script compiles the same ``.py`` files, which stay the reference, and puts
the extension modules in ``arena/engine/_compiled/`` (git-ignored), a directory that only
``arena/engine/_build.py`` puts on the package's search path, when that build is chosen: so the
pure engine can always be forced (``BELOTE_ENGINE=pure``), and a build older than the sources is
never loaded (``_compiled/SOURCES`` holds the hash of the sources it was built from).
"""

from __future__ import annotations

import argparse
import importlib
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run from a checkout

from arena.engine import _build  # noqa: E402  (after the path: the build rules, sources and hash)


def build(verbose: bool) -> float:
    """Compile the engine's modules into ``_compiled``; returns the seconds it took."""
    try:
        from mypyc.build import mypycify

        # (setuptools has no type stubs here; mypyc itself builds on it)
        distribution: Any = importlib.import_module("setuptools").Distribution
    except ImportError as exc:  # pragma: no cover (mypy comes with the test extra)
        raise SystemExit(f"build_engine: {exc}: pip install -e '.[test]' brings mypy (mypyc)") from None
    t0 = time.perf_counter()
    sources = [str(p.relative_to(ROOT)) for p in _build.compiled_sources()]
    with tempfile.TemporaryDirectory(prefix="belote-engine-build-") as tmp:
        cwd = os.getcwd()
        os.chdir(ROOT)  # mypyc reads pyproject.toml's [tool.mypy] and names modules from here
        try:
            extensions = mypycify(
                sources, opt_level="3", group_name=_build.GROUP, target_dir=os.path.join(tmp, "c"),
                verbose=verbose,
            )
            dist = distribution({"name": "belote-engine-compiled", "ext_modules": extensions})
            cmd = dist.get_command_obj("build_ext")
            cmd.build_lib = os.path.join(tmp, "lib")
            cmd.build_temp = os.path.join(tmp, "tmp")
            cmd.parallel = os.cpu_count() or 1
            try:
                dist.run_command("build_ext")
            except Exception as exc:  # setuptools' CompileError, LinkError, ...: say what is missing
                raise SystemExit(
                    f"build_engine: the C build failed ({exc}): it needs a C compiler (gcc or clang) and "
                    "the Python headers (python3-dev). The pure engine is unaffected."
                ) from None
        finally:
            os.chdir(cwd)
        for package, target in (("engine", _build.COMPILED_DIR), ("analysis", _build.ANALYSIS_COMPILED_DIR)):
            built = sorted((Path(tmp) / "lib" / "arena" / package).glob("*" + _build.SUFFIX))
            if not built:
                raise SystemExit(f"build_engine: mypyc built no extension module of arena/{package}")
            staging = target.with_name(target.name + ".new")
            shutil.rmtree(staging, ignore_errors=True)
            staging.mkdir()
            for so in built:
                shutil.copy2(so, staging / so.name)
            (staging / "SOURCES").write_text(_build.sources_hash() + "\n")
            shutil.rmtree(target, ignore_errors=True)
            staging.rename(target)
    return time.perf_counter() - t0


def check() -> int:
    """Which build a fresh interpreter loads (with this environment), and why."""
    code = ("import arena.engine as e, arena.analysis as a; print(e.BUILD, '-', e.BUILD_NOTE); "
            "print('analysis:', a.BUILD, '-', a.BUILD_NOTE)")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=False, capture_output=True, text=True)
    sys.stdout.write(proc.stdout)
    sys.stderr.write(proc.stderr)
    return proc.returncode


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--check", action="store_true", help="only say which build `import arena.engine` loads")
    p.add_argument("--clean", action="store_true", help="remove the compiled build")
    p.add_argument("--verbose", action="store_true", help="mypyc's own output")
    args = p.parse_args(argv)
    if args.clean:
        for target in (_build.COMPILED_DIR, _build.ANALYSIS_COMPILED_DIR):
            shutil.rmtree(target, ignore_errors=True)
            print(f"removed {target.relative_to(ROOT)}")
        return 0
    if not args.check:
        seconds = build(args.verbose)
        n = len(_build.compiled_sources())
        print(f"compiled {n} modules of arena/engine and arena/analysis with mypyc in {seconds:.1f} s "
              f"({sysconfig.get_platform()}, Python {sys.version.split()[0]})")
    return check()


if __name__ == "__main__":
    sys.exit(main())
