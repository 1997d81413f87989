"""The docs site builds with warnings as errors, and its generated reference says what the code has.

``mkdocs build --strict`` (mkdocs.yml: every internal link and anchor checked, every page in the
navigation) into a temporary folder, never the tree; then the built pages are read: every command
of ``belote-arena``'s parser, every RPC of the protos, every metric of a node and every preset's
options are in them, as the hook (``scripts/docs_site.py``) generated them at build time. And the
README fits a few screens; the rest is in the site.
"""

from __future__ import annotations

import html
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _hook() -> Any:
    """scripts/docs_site.py, the site's hook, loaded as MkDocs loads it: from its file."""
    spec = importlib.util.spec_from_file_location("docs_site", ROOT / "scripts" / "docs_site.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


hook = _hook()
actions, anchor, commands, fill, metric_families = (
    hook.actions, hook.anchor, hook.commands, hook.fill, hook.metric_families)
README_MOST_LINES = 250


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}  # Material's notice of its successor, not ours
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(ROOT / "mkdocs.yml"),
               "-d", str(out)]
    built = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stdout[-5000:] + built.stderr[-5000:]
    assert "WARNING" not in built.stderr, built.stderr[-5000:]
    return out


def text_of(site: Path, page: str) -> str:
    """A built page's text, tags and entities undone (what a reader sees, roughly)."""
    return html.unescape(re.sub(r"<[^>]+>", "", (site / page / "index.html").read_text(encoding="utf-8")))


def ids_of(site: Path, page: str) -> set[str]:
    return set(re.findall(r'\bid="([^"]+)"', (site / page / "index.html").read_text(encoding="utf-8")))


def test_the_site_builds_strict_into_a_temporary_folder_and_leaves_the_tree_alone(site: Path) -> None:
    assert (site / "index.html").is_file() and (site / "search" / "search_index.json").is_file()
    assert not (ROOT / "site").exists()
    for part in ("tutorial/write-a-bot", "how-to/run-a-referee", "reference/cli", "explanation/security"):
        assert (site / part / "index.html").is_file(), part


def test_every_command_of_the_parser_has_its_section_in_the_cli_reference(site: Path) -> None:
    found = list(commands())
    assert len(found) > 20  # every subcommand, nested ones too, not only the first level
    shown = text_of(site, "reference/cli")
    ids = ids_of(site, "reference/cli")
    missing = []
    for words, _, parser in found:
        name = "belote-arena " + " ".join(words)
        if anchor(name) not in ids or parser.format_usage().split()[1] not in shown:
            missing.append(name)
        # a command whose first word is an action (bot register, match start) names each
        missing += [f"{name} {w}" for w in actions(parser) if f"{name} {w}" not in shown]
    assert missing == []
    assert {"belote-arena bot register", "belote-arena match start", "belote-arena ladder add"} <= set(
        re.findall(r"belote-arena [a-z]+ [a-z]+", shown))
    # each option of a command is there, as --help prints it
    assert "--max-replays-per-address" in shown and "--ladder-share" in shown and "--records" in shown


def test_every_rpc_and_message_of_the_protos_is_in_the_grpc_reference(site: Path) -> None:
    shown = text_of(site, "reference/grpc")
    protos = "".join(p.read_text() for p in (ROOT / "proto" / "belote" / "arena" / "v1").glob("*.proto"))
    rpcs = re.findall(r"^\s*rpc (\w+)\(", protos, re.M)
    messages = re.findall(r"^\s*message (\w+) \{", protos, re.M)
    assert len(rpcs) > 20 and len(messages) > 40
    ids = ids_of(site, "reference/grpc")
    assert [r for r in rpcs if r not in shown] == []
    assert [m for m in messages if m.lower() not in ids] == []
    # the comments come with them
    assert "its token is returned once and never shown again" in shown


def test_every_metric_of_a_node_is_in_the_metrics_reference(site: Path) -> None:
    shown = text_of(site, "reference/metrics")
    families = metric_families()
    assert any(name == "belote_arena_decisions" for name, *_ in families)
    assert [name for name, *_ in families if name not in shown] == []


def test_the_ruleset_reference_shows_each_preset_s_values_from_the_engine(site: Path) -> None:
    from arena.engine.rules import PRESETS

    shown = text_of(site, "reference/rulesets")
    for name, preset in PRESETS.items():
        assert name in shown
        assert str(preset.target) in shown and preset.rounding in shown


def test_an_unknown_generated_part_is_an_error_not_an_empty_page() -> None:
    with pytest.raises(ValueError, match="no generated part named 'nope'"):
        fill("<!-- generated: nope -->")


def test_the_readme_fits_a_few_screens_and_links_into_the_site() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= README_MOST_LINES
    for target in re.findall(r"\]\((docs/[^)#]+)", readme):
        assert (ROOT / target).exists(), target


def _shown(route: str) -> str:
    """A route as docs/web.md writes it: ``{id}`` as ``ID``, ``{name}`` as ``NAME``."""
    return re.sub(r"\{(\w+)\}", lambda m: m.group(1).upper(), route)


def test_the_http_reference_lists_every_api_route_and_every_page() -> None:
    from arena.web.server import PAGES

    web = (ROOT / "docs" / "web.md").read_text(encoding="utf-8")
    api = (ROOT / "arena" / "web" / "api.py").read_text(encoding="utf-8")
    routes = re.findall(r'add_(?:get|post|delete)\("/api/v1/([^"]+)"', api)
    assert "ladders" in routes and "schedules" in routes
    missing = [r for r in routes if not re.search(rf"`{re.escape(_shown(r))}[`?]", web)]
    missing += [p for p in PAGES if f"`{_shown(p)}`" not in web]
    assert missing == [], f"docs/web.md does not list {missing}"


def test_the_readme_keeps_the_two_set_up_commands_ci_runs() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    install = "pip install -e . && belote-arena demo"
    test = ("""pip install -e '.[test]' && python -m pytest -n auto -m "not timing" """
            """&& python -m pytest -m timing""")
    assert f"\n{install}\n" in readme and f"\n{test}\n" in readme
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    # as run, without the lines' continuations and each phase's timer (`timed NAME`)
    ci = re.sub(r'timed "[^"]*" ', "", re.sub(r" \\\n\s*", " ", ci))
    # the same install and the same two selections, quieter
    assert ("""python -m pip install -q -e '.[test]' && python -m pytest -q -n auto -m "not timing" """
            """&& python -m pytest -q -m timing""") in ci
