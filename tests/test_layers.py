"""Imports point one way (docs/architecture.md#packages-and-their-imports).

Every ``import`` of every module under ``arena/`` and ``sdk/belote_bot/`` is
read with ``ast``, the ones inside functions too, and each package may import
only the packages below it:

    engine <- analysis (pure: the standard library and the engine only)
    engine <- records <- tournament <- queue <- node
    engine <- records <- referee <- node
    metrics <- edge <- referee, web, node
    engine <- the SDK (belote_bot), which also knows the generated code

The entry points (the command line, the demo, the harness, the remote client)
sit on top; the command line's modules each have their own entry, so that
none of them imports ``arena.cli`` (its ``main``). The commands that read
records (``replay``, ``selfplay``) load neither grpc, redis nor the referee.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

#: what each part may import, of the project's own code ("belote" is the generated wire code)
ALLOWED: dict[str, set[str]] = {
    "arena.engine": set(),
    "arena.records": {"arena.engine"},
    "arena.analysis": {"arena.engine"},
    "arena.datadir": set(),
    "arena.credentials": {"arena.datadir"},
    "arena.hints": set(),
    "arena.metrics": {"arena.engine", "arena.records"},
    "arena.logformat": set(),
    "arena.tournament": {"arena.engine", "arena.records"},
    "arena.ratings": {"arena.records"},
    "arena.queue": {"arena.engine", "arena.records", "arena.tournament", "arena.ratings", "arena.datadir"},
    "arena.edge": {"arena.metrics"},
    "arena.referee": {"arena.engine", "arena.records", "arena.metrics", "arena.datadir", "arena.edge",
                      "belote"},
    "arena.node": {"arena.engine", "arena.records", "arena.tournament", "arena.queue", "arena.referee",
                   "arena.ratings", "arena.metrics", "arena.datadir", "arena.edge",
                   "belote"},
    "arena.remote": {"arena.engine", "arena.records", "belote", "belote_bot"},
    "arena.harness": {"arena.engine", "arena.records", "arena.referee", "arena.edge", "belote_bot"},
    "arena.web": {"arena.engine", "arena.records", "arena.ratings", "arena.tournament", "arena.queue",
                  "arena.metrics", "arena.edge",
                  "arena.referee", "arena.node", "belote"},
    "arena.demo": {"arena.engine", "arena.records", "arena.tournament", "arena.queue", "arena.node",
                   "arena.referee", "arena.web", "arena.ratings", "arena.hints", "belote_bot"},
    "arena.demo_ladder": {"arena.engine", "arena.records", "arena.tournament", "arena.queue", "arena.node",
                          "arena.referee", "arena.web", "arena.ratings", "arena.hints", "arena.demo",
                          "belote_bot"},
    # the command line: each command group's module, on the two it shares (checks, dial); main on top
    "arena.cli.checks": {"arena.records"},
    "arena.cli.dial": {"arena.credentials", "arena.remote", "arena.hints", "arena.cli.checks", "belote"},
    "arena.cli.serve": {"arena.engine", "arena.records", "arena.tournament", "arena.queue", "arena.node",
                        "arena.referee", "arena.edge", "arena.web", "arena.demo", "arena.demo_ladder",
                        "arena.credentials",
                        "arena.logformat", "arena.hints", "arena.cli.checks", "arena.cli.dial"},
    "arena.cli.records": {"arena.engine", "arena.records", "arena.hints", "arena.cli.checks",
                          "arena.cli.serve"},
    "arena.cli.bots": {"arena.credentials", "arena.remote", "arena.hints", "arena.cli.checks",
                       "arena.cli.dial"},
    "arena.cli.matches": {"arena.records", "arena.remote", "arena.hints", "arena.cli.checks",
                          "arena.cli.dial", "arena.cli.records"},
    "arena.cli.tournament": {"arena.engine", "arena.records", "arena.tournament", "arena.remote",
                             "arena.hints", "arena.cli.checks", "arena.cli.dial", "belote"},
    "arena.cli.rankings": {"arena.cli.checks", "arena.cli.dial", "belote"},
    "arena.cli.ladder": {"arena.engine", "arena.records", "arena.hints", "arena.cli.checks", "arena.cli.dial",
                         "arena.cli.rankings", "belote"},
    "arena.cli": {"arena.engine", "arena.cli.checks", "arena.cli.records", "arena.cli.serve",
                  "arena.cli.bots", "arena.cli.matches", "arena.cli.tournament", "arena.cli.rankings",
                  "arena.cli.ladder"},
    "belote_bot": {"arena.engine", "belote"},
}
# the analysis of recorded matches (arena.analysis: pure, on the engine) is used by the node's build
# process, the web's API and the command lines that print it
ALLOWED.setdefault("arena.analysis", {"arena.engine"})
for _user in ("arena.referee", "arena.node", "arena.web", "arena.cli.records", "arena.cli.matches",
              "arena.cli"):
    ALLOWED[_user].add("arena.analysis")
ALLOWED.setdefault("arena.cli.analysis", {"arena.engine", "arena.analysis", "arena.records",
                                         "arena.cli.checks", "arena.cli.records"})
ALLOWED["arena.cli.matches"].add("arena.cli.analysis")
ALLOWED["arena.cli"].add("arena.cli.analysis")
#: third-party packages that a part must not load at all
FORBIDDEN_THIRD_PARTY: dict[str, set[str]] = {
    "arena.engine": {"grpc", "google", "redis", "rich", "uvloop", "grpc_health", "grpc_reflection"},
    "arena.records": {"grpc", "google", "redis", "rich", "uvloop"},
    "arena.tournament": {"grpc", "google", "redis", "rich", "uvloop"},
    "arena.ratings": {"grpc", "google", "redis", "rich", "uvloop", "aiohttp"},
    "arena.referee": {"redis", "rich"},
    "arena.edge": {"google", "redis", "rich", "uvloop", "aiohttp"},
    "arena.queue": {"grpc", "google", "rich", "uvloop"},
    "arena.cli.records": {"grpc", "google", "redis", "rich", "uvloop"},
    "belote_bot": {"redis", "rich", "uvloop", "grpc_health", "grpc_reflection"},
}
OWN = ("arena", "belote_bot", "belote")


def modules() -> Iterator[tuple[str, Path]]:
    for base, top in ((ROOT, "arena"), (ROOT / "sdk", "belote_bot")):
        for path in sorted((base / top).rglob("*.py")):
            parts = path.relative_to(base).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            yield ".".join(parts), path


def part_of(module: str) -> str:
    """The part of ``module``: the longest key of ALLOWED it falls under."""
    if module == "arena":
        return "arena.engine"  # the root package's own module imports nothing
    best = ""
    for part in ALLOWED:
        if (module == part or module.startswith(part + ".")) and len(part) > len(best):
            best = part
    assert best, f"{module} belongs to no part of the layering: add it to ALLOWED"
    return best


def imports_of(module: str, path: Path) -> Iterator[tuple[int, str]]:
    """Every module ``module`` imports, absolute, with its line (relative imports resolved)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                name = ".".join([*base, node.module] if node.module else base)
            else:
                name = node.module or ""
            yield node.lineno, name


def test_every_import_points_down_the_layers() -> None:
    wrong = []
    for module, path in modules():
        part = part_of(module)
        for line, name in imports_of(module, path):
            top = name.split(".")[0]
            where = f"{path.relative_to(ROOT)}:{line} imports {name}"
            if top in OWN:
                target = top if top in ("belote", "belote_bot") else part_of(name)
                if target != part and target not in ALLOWED[part]:
                    wrong.append(f"{where} ({part} may import {sorted(ALLOWED[part]) or 'nothing of ours'})")
            elif top in FORBIDDEN_THIRD_PARTY.get(part, ()):
                wrong.append(f"{where} ({part} must not load {top})")
    assert not wrong, "imports against the layering:\n" + "\n".join(wrong)


#: the pure parts: the standard library and these parts of ours, nothing else
PURE: dict[str, set[str]] = {"arena.engine": set(), "arena.analysis": {"arena.engine"}}


@pytest.mark.parametrize("pure", sorted(PURE))
def test_the_pure_parts_import_the_standard_library_and_the_engine_only(pure: str) -> None:
    wrong = []
    for module, path in modules():
        if part_of(module) != pure:
            continue
        for line, name in imports_of(module, path):
            top = name.split(".")[0]
            if top in OWN:
                ok = part_of(name) in PURE[pure] | {pure} if top == "arena" else False
            else:
                ok = top in sys.stdlib_module_names or top == "__future__"
            if not ok:
                wrong.append(f"{path.relative_to(ROOT)}:{line} imports {name}")
    assert not wrong, f"{pure} must stay pure:\n" + "\n".join(wrong)


def test_the_layering_has_no_cycle() -> None:
    """The allowed arrows themselves form no cycle, so no change to ALLOWED can sneak one in."""
    seen: dict[str, int] = {}

    def visit(part: str, path: tuple[str, ...]) -> None:
        assert part not in path, f"a cycle: {' -> '.join((*path, part))}"
        if seen.get(part) == 2:
            return
        for below in ALLOWED.get(part, ()):
            visit(below, (*path, part))
        seen[part] = 2

    for part in ALLOWED:
        visit(part, ())


def test_the_checker_catches_an_arrow_that_points_up(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    from arena.queue import open_broker\n")
    [(line, name)] = list(imports_of("arena.tournament.bad", bad))
    assert (line, name) == (2, "arena.queue")
    assert part_of(name) not in ALLOWED[part_of("arena.tournament.bad")]
    assert part_of("arena.records") not in ALLOWED[part_of("arena.analysis.values")]
    rel = tmp_path / "rel.py"
    rel.write_text("from ..referee import node\nfrom . import sessions\n")
    assert [n for _, n in imports_of("arena.node.rel", rel)] == ["arena.referee", "arena.node"]


def _loaded_after(*code: str) -> set[str]:
    """The modules a fresh interpreter has loaded after running ``code``."""
    script = "\n".join([*code, "import json, sys", "print(json.dumps(sorted(sys.modules)))"])
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                         cwd=ROOT, timeout=60)
    loaded: set[str] = set(json.loads(out.stdout.strip().splitlines()[-1]))
    return loaded


HEAVY = ("grpc", "redis", "rich", "uvloop", "arena.referee", "arena.edge", "arena.queue", "arena.node",
         "belote_bot")


@pytest.mark.parametrize("command", ["replay", "selfplay"])
def test_replay_and_selfplay_load_neither_grpc_nor_redis_nor_the_referee(
    command: str, tmp_path: Path,
) -> None:
    record = tmp_path / "match.json"
    setup = ["import contextlib, io", "from arena.cli import main",
             "with contextlib.redirect_stdout(io.StringIO()):",
             f"    assert main(['selfplay', '--deals', '2', '--record', {str(record)!r}]) == 0"]
    if command == "replay":
        setup += ["with contextlib.redirect_stdout(io.StringIO()):",
                  f"    assert main(['replay', {str(record)!r}, '--json']) == 0"]
    loaded = _loaded_after(*setup)
    assert record.is_file()
    heavy = sorted(m for m in loaded if m.split(".")[0] in HEAVY or m.startswith(HEAVY))
    assert heavy == [], f"belote-arena {command} loaded {heavy[:8]}"
