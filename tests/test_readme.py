"""The walkthroughs of the README and the docs site work when pasted, in order, on a fresh machine.

Each shell block of README.md or a page of docs/ marked ``<!-- tested by tests/test_readme.py: NAME -->``
runs here,
command by command, in a fresh folder, by ``bash`` (:mod:`tests.shell`), against real nodes, the
commands as printed. A command whose comment says it "runs until Ctrl-C" is one a person starts in
a terminal of its own: it runs in the background, the next command waits until it says it is
listening, and it gets Ctrl-C at the end. Only what a person would change is changed: a port that
is taken here becomes a free one (and ``$BELOTE_ADDRESS``, which the README documents, names node
1's, for the commands that dial the default); the Redis URL becomes a database of the test's own;
``MATCH_ID`` is the id ``match start`` printed.
"""

from __future__ import annotations

import os
import re
import socket
import sys
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from arena.hints import DEFAULT_ADDRESS
from tests.shell import Background, Done, Shell, port_free

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
#: the README, then the site's pages: where marked blocks may be
SOURCES = (README, *sorted((ROOT / "docs").rglob("*.md")))
MARK = re.compile(r"<!-- tested by tests/test_readme\.py: ([a-z-]+) -->\n```sh\n(.*?)```", re.S)
PYTHON_MARK = re.compile(r"<!-- tested by tests/test_readme\.py: ([a-z-]+) -->\n```python\n(.*?)```", re.S)
#: every marked block there is, by name: a block moved between the README and a page keeps its run
SHELL_WALKTHROUGHS = {"run-a-referee", "many-nodes", "ladder"}
#: each program a walkthrough runs, by name: the file a reader saves it as
PYTHON_PROGRAMS = {"first-bot": "my_bot.py", "play-on-a-node": "play.py"}
#: a node's address on loopback (not Redis's)
LOOPBACK = re.compile(r"(?<!redis://)127\.0\.0\.1:(\d+)")
README_REDIS = "redis://127.0.0.1:6379/0"
UNTIL_CTRL_C = "runs until Ctrl-C"


def marked(pattern: re.Pattern[str]) -> dict[str, list[tuple[Path, str]]]:
    """The blocks ``pattern`` marks, by name: where each copy is, and its text."""
    found: dict[str, list[tuple[Path, str]]] = {}
    for source in SOURCES:
        for name, text in pattern.findall(source.read_text(encoding="utf-8")):
            found.setdefault(name, []).append((source, text))
    return found


def blocks() -> dict[str, list[str]]:
    """The marked shell blocks by name: each a list of commands (a line ending in ``\\`` goes on)."""
    found = {}
    for name, copies in marked(MARK).items():
        where = [str(p) for p, _ in copies]
        assert len(copies) == 1, f"the walkthrough {name} is marked in {where}: once only"
        [(_, text)] = copies
        commands: list[str] = []
        pending = ""
        for line in text.splitlines():
            pending += line + "\n"
            if not line.endswith("\\"):
                if pending.strip() and not pending.lstrip().startswith("#"):
                    commands.append(pending.rstrip("\n"))
                pending = ""
        found[name] = commands
    return found



def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Walkthrough:
    """A block's commands run in order; what each printed, and the nodes started."""

    shell: Shell
    substitutions: dict[str, str] = field(default_factory=dict)
    done: list[Done] = field(default_factory=list)
    nodes: list[Background] = field(default_factory=list)

    def line(self, command: str) -> str:
        for old, new in self.substitutions.items():
            command = command.replace(old, new)
        if "MATCH_ID" in command:
            started = [d for d in self.done if " match start " in f" {d.line}"]
            assert started, f"`{command}` needs a match id, and no match was started before it"
            command = command.replace("MATCH_ID", started[-1].out.splitlines()[0])
        return command

    def run(self, commands: list[str]) -> None:
        for command in commands:
            line = self.line(command)
            if UNTIL_CTRL_C in command:
                assert " serve " in f" {line} ", f"only a node runs until Ctrl-C here: {command}"
                node = self.shell.start(line)
                node.wait_for(r"listening on port \d+")
                self.nodes.append(node)
            else:
                self.done.append(self.shell.run(line).ok())

    def output(self, command_start: str) -> str:
        """What the command starting with ``command_start`` printed (the last one, if several)."""
        found = [d for d in self.done if d.line.startswith(command_start)]
        assert found, f"no command starts with {command_start!r}"
        return found[-1].out

    def stop_nodes(self) -> list[str]:
        """Ctrl-C to each node: each exits 0; their logs."""
        logs = []
        for node in self.nodes:
            assert node.stop() == 0, node.output()[-3000:]
            logs.append(node.output())
            assert "Traceback" not in logs[-1], logs[-1]
        return logs


@pytest.fixture
def walkthrough(tmp_path: Path) -> Iterator[Walkthrough]:
    with Shell.session(tmp_path / "fresh", tmp_path / "logs") as shell:
        yield Walkthrough(shell)


def use_free_ports(walk: Walkthrough, commands: list[str]) -> None:
    """Keep each loopback port the block uses if it is free here, else a free one instead (and
    ``$BELOTE_ADDRESS`` names node 1's, where the commands and the bots dial by default)."""
    for port in dict.fromkeys(int(p) for c in commands for p in LOOPBACK.findall(c)):
        if not port_free(port):
            walk.substitutions[f"127.0.0.1:{port}"] = f"127.0.0.1:{free_port()}"
    if DEFAULT_ADDRESS in walk.substitutions:
        walk.shell.env["BELOTE_ADDRESS"] = walk.substitutions[DEFAULT_ADDRESS]


def test_the_readme_and_the_site_mark_their_walkthroughs_and_dial_the_default_address() -> None:
    found = blocks()
    assert set(found) == SHELL_WALKTHROUGHS, found
    assert set(marked(PYTHON_MARK)) == set(PYTHON_PROGRAMS)
    for commands in found.values():
        # the commands given no --address reach node 1 because it listens where they dial by default
        assert f"--listen {DEFAULT_ADDRESS}" in commands[0] and UNTIL_CTRL_C in commands[0]


@pytest.mark.xdist_group("default-port")  # serves on, or dials, 127.0.0.1:50051: one worker runs these
@pytest.mark.slow
def test_run_a_referee_as_printed(walkthrough: Walkthrough) -> None:
    commands = blocks()["run-a-referee"]
    use_free_ports(walkthrough, commands)
    walkthrough.run(commands)

    fresh = walkthrough.shell.cwd
    tokens = [(fresh / f"{bot}.token").read_text().strip() for bot in ("random", "heuristic")]
    said = "".join(d.out + d.err for d in walkthrough.done)
    assert all(token and token not in said for token in tokens)  # the tokens are in files only
    listed = walkthrough.output("belote-arena bot list")
    assert re.search(r"^random +\S+ +(connected|offline)", listed, re.M), listed

    watched = walkthrough.output("belote-arena match start").splitlines()
    assert re.fullmatch(r"m-[0-9a-f]+", watched[0]), watched
    assert watched[1] == ("seats: 0 random, 1 heuristic, 2 random, 3 heuristic "
                          "(team 0: random, team 1: heuristic)")
    assert any(re.match(r"  seat [0-3] \((random|heuristic)\): \S", line) for line in watched), watched
    assert re.fullmatch(r"match finished: \[-?\d+, -?\d+\], (team 0 \(random\)|team 1 \(heuristic\)) wins"
                        r"|match finished: \[-?\d+, -?\d+\], no winner", watched[-1]), watched[-1]
    replayed = walkthrough.output("belote-arena match record").splitlines()
    assert replayed[0] == watched[1]
    assert replayed[-1].startswith("match: ")
    assert (fresh / "match.json").is_file()

    [log] = walkthrough.stop_nodes()
    assert "queue: embedded, in arena-data/arena.sqlite3" in log
    assert log.rstrip().endswith("stopped (1 match completed here; 0 results written to the queue)"), log


@pytest.mark.xdist_group("default-port")  # serves on, or dials, 127.0.0.1:50051: one worker runs these
@pytest.mark.slow
def test_many_nodes_as_printed(walkthrough: Walkthrough) -> None:
    from tests.cluster.conftest import claim_db, release_db

    client, db = claim_db()  # skips, saying why, when no Redis answers
    try:
        commands = blocks()["many-nodes"]
        assert all(README_REDIS in c for c in commands if " serve " in c)
        use_free_ports(walkthrough, commands)
        walkthrough.substitutions[README_REDIS] = f"redis://127.0.0.1:6379/{db}"
        walkthrough.run(commands)

        standings = walkthrough.output("belote-arena tournament status league")
        assert "league (round-robin, finished)" in standings, standings
        for bot in ("alpha", "beta", "gamma", "delta"):
            assert re.search(rf"\b{bot}\b", standings), standings
        matches = int(re.search(r"(\d+)/\1 matches", standings).group(1))  # type: ignore[union-attr]
        verified = walkthrough.output("belote-arena verify")
        assert f"deals of its {matches} matches are the ones it dealt" in verified, verified
        # the exports: the standings a row a bot, every match's record a file of the zip
        fresh = walkthrough.shell.cwd
        rows = (fresh / "league.csv").read_text().splitlines()
        assert rows[0].startswith("rank,bot,played") and len(rows) == 5, rows
        # bots of three strengths: not every game drawn, as four copies of one bot holding the same cards were
        scores = {row.split(",")[7] for row in rows[1:]}
        assert len(scores) > 1, rows
        with zipfile.ZipFile(fresh / "league.zip") as z:
            assert len(z.namelist()) == matches and all(n.startswith("league-r") for n in z.namelist())

        report = walkthrough.output("belote-arena bot report alpha")
        assert report.startswith("bot alpha: 6 matches ("), report  # 3 opponents, 2 legs each
        for bot in ("beta", "gamma", "delta"):
            assert re.search(rf"^  {bot} +2 ", report, re.M), report  # its head-to-head row

        logs = walkthrough.stop_nodes()
        assert len(logs) == 2
        written = 0
        for log in logs:
            assert f"queue: Redis at redis://127.0.0.1:6379/{db}, its keys under belote-arena:" in log, log
            written += int(re.search(r"; (\d+) results? written to the queue\)", log).group(1))  # type: ignore[union-attr]
        assert written == matches  # each result once, by whichever node played it
    finally:
        release_db(client)


def test_the_first_bot_runs_as_pasted_and_shows_a_result(tmp_path: Path) -> None:
    """The first bot of the README and of the tutorial, the same code, saved as a file and run: it plays
    the built-in heuristic in-process and prints how it did, with no node, token or argument."""
    copies = marked(PYTHON_MARK)["first-bot"]
    assert {p.name for p, _ in copies} <= {"README.md", "write-a-bot.md"}, copies
    assert len({text for _, text in copies}) == 1, "the README's first bot and the tutorial's differ"
    with Shell.session(tmp_path / "fresh", tmp_path / "logs") as shell:
        (shell.cwd / "my_bot.py").write_text(copies[0][1], encoding="utf-8")
        done = shell.run("python my_bot.py", timeout=120).ok()
    result = r"4 matches: \d won, \d lost, \d drawn; points \d+-\d+; (no strike|\d+ strikes?.*)\n"
    assert re.fullmatch(result, done.out), done.out


def in_a_fresh_venv(walk: Walkthrough) -> None:
    """The walkthrough's shell in a virtual environment of its own, made as a newcomer makes one
    (``python -m venv``, then the README's ``pip install -e .`` from the checkout), and activated:
    its ``bin`` alone on ``PATH`` before the system's, not this interpreter's. What the tutorial runs
    (``belote-arena``, ``python``, the SDK's bots) then comes from what the project's own files
    install, not from what this test run has."""
    venv = walk.shell.cwd.parent / "venv"
    walk.shell.run(f"python -m venv {venv}").ok()
    walk.shell.run(f"{venv}/bin/python -m pip install -q -e {ROOT}", timeout=600).ok()
    path = [p for p in walk.shell.env["PATH"].split(os.pathsep) if p != str(Path(sys.executable).parent)]
    walk.shell.env["PATH"] = os.pathsep.join([str(venv / "bin"), *path])
    walk.shell.env["VIRTUAL_ENV"] = str(venv)
    for name in ("PYTHONPATH", "PYTHONHOME"):
        walk.shell.env.pop(name, None)
    where = walk.shell.run("command -v belote-arena python").ok().out.split()
    assert where == [str(venv / "bin" / "belote-arena"), str(venv / "bin" / "python")], where


def save_programs(walk: Walkthrough) -> None:
    """Each program of the tutorial, saved in the walkthrough's folder under the name the page gives it."""
    for name, copies in marked(PYTHON_MARK).items():
        (walk.shell.cwd / PYTHON_PROGRAMS[name]).write_text(copies[-1][1], encoding="utf-8")


@pytest.mark.xdist_group("default-port")  # serves on, or dials, 127.0.0.1:50051: one worker runs these
@pytest.mark.slow
def test_the_tutorial_puts_a_bot_on_the_ladder_and_promotes_its_second_version(
        walkthrough: Walkthrough) -> None:
    """The tutorial's walkthrough from a fresh folder and a fresh venv: the reader's bot (the first
    page's ``MyBot``, released as version 1 by ``play.py``) on the coinche ladder of a node of its
    own, then a second version of it tested against the first and promoted."""
    commands = blocks()["ladder"]
    use_free_ports(walkthrough, commands)
    in_a_fresh_venv(walkthrough)
    save_programs(walkthrough)
    walkthrough.run(commands)

    status = walkthrough.output("sleep 10 && belote-arena ladder status")
    assert "ladder coinche: on, matches of 2 deals" in status, status
    assert "2 bots: heuristic, my-bot" in status, status
    versions = walkthrough.output("belote-arena bot versions my-bot")
    assert versions.startswith("bot my-bot: promoted version 2"), versions
    assert re.search(r"^2 +promoted +sprt .*against 1: H1", versions, re.M), versions
    assert re.search(r"^1 +retired +first", versions, re.M), versions
    report = walkthrough.output("belote-arena bot report my-bot")
    assert report.startswith("bot my-bot: "), report
    assert re.search(r"^  heuristic +\d+ ", report, re.M), report  # its head-to-head row
    walkthrough.stop_nodes()
