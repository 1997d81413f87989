"""Every command a command suggests runs as printed, in the same folder, with nothing added.

A hint is a command line at the end of a line after ": " ("follow it: belote-arena tournament
status ID --watch"), or between backticks in a sentence. The commands here reach their node by a
non-default address with the admin credential in a file given on their command line, so a hint
that dropped either (as ``tournament create --address`` once did: its ``status`` dialled
127.0.0.1:50051) fails here. Every hint found is run, with a person's shell (:mod:`tests.shell`);
one that runs until stopped (a bot) must connect.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_node import ADMIN, node_with_bots
from tests.shell import Shell, hints


def test_hints_are_found_at_the_end_of_a_line_and_between_backticks() -> None:
    text = ("follow it: belote-arena tournament status rr --watch --address 127.0.0.1:9\n"
            "error: too weak; make one with `belote-arena admin token --file admin.token`, and give "
            "`--admin-token-file admin.token`\nthe ratings: none yet")
    assert hints(text) == ["belote-arena tournament status rr --watch --address 127.0.0.1:9",
                           "belote-arena admin token --file admin.token"]


@pytest.mark.xdist_group("default-port")  # serves on, or dials, 127.0.0.1:50051: one worker runs these
@pytest.mark.slow
def test_every_hint_a_command_prints_runs_as_printed(tmp_path: Path) -> None:
    work = tmp_path / "work"
    with node_with_bots(tmp_path, bots=()) as node, Shell.session(work, tmp_path / "logs") as sh:
        (work / "admin.token").write_text(ADMIN + "\n")
        (work / "admin.token").chmod(0o600)
        given = f"--address {node.address} --admin-token-file admin.token"
        ran: list[str] = []

        def connected() -> set[str]:
            listed = json.loads(sh.run(f"belote-arena bot list --json {given}").ok().out)
            return {b["name"] for b in listed if b["connected"]}

        # a bot named as a shipped one is run as that one; its token from the file register made
        bots = {}
        for name, module in (("heuristic", "heuristic"), ("random-b", "random")):
            [run_it] = hints(sh.run(f"belote-arena bot register {name} {given}").ok().out)
            assert run_it.startswith(f"python -m belote_bot.bots.{module} --token-file {name}.token "), run_it
            bots[name] = sh.start(run_it)
            ran.append(run_it)
        sh.until("the bots connected", lambda: connected() >= {"heuristic", "random-b"})

        created = sh.run(f"belote-arena tournament create --format round-robin --bots heuristic,random-b "
                         f"--deals 1 --id rr {given}").ok().out
        verify_commitment, follow = hints(created)
        assert follow == f"belote-arena tournament status rr --watch {given}", created
        watched = sh.run(follow).ok().out  # waits until it is over; its standings suggest verify
        ran.append(follow)
        [verify] = hints(watched)
        for line in (verify, verify_commitment):
            assert "deals of its 2 matches are the ones it dealt" in sh.run(line).ok().out
            ran.append(line)

        sh.run(f"belote-arena tournament create --format round-robin --bots heuristic,random-b --deals 50 "
               f"--id stopped {given}").ok()
        [status] = hints(sh.run(f"belote-arena tournament cancel stopped {given}").ok().out)
        assert "cancelled" in sh.run(status).ok().out
        ran.append(status)

        # a ladder: add suggests start (it is off), start suggests status, stop suggests starting again
        [start] = hints(sh.run(f"belote-arena ladder add --pool coinche heuristic random-b {given}").ok().out)
        assert start == f"belote-arena ladder start --pool coinche {given}", start
        [follow_ladder] = hints(sh.run(start).ok().out)
        assert "ladder coinche: on" in sh.run(follow_ladder).ok().out
        [again] = hints(sh.run(f"belote-arena ladder stop --pool coinche {given}").ok().out)
        assert "ladder coinche: on, matches of 8 deals" in sh.run(again).ok().out
        ran += [start, follow_ladder, again]

        [replay] = hints(sh.run("belote-arena selfplay --deals 1 --record 'a match.json'").ok().out)
        assert replay == "belote-arena replay 'a match.json'"
        assert "match: " in sh.run(replay).ok().out
        ran.append(replay)

        # how to make an admin credential, when the one given is too weak, or none is found
        weak = sh.run(f"BELOTE_ADMIN_TOKEN=x belote-arena bot list --address {node.address}")
        missing = sh.run(f"belote-arena bot register nobody --address {node.address}")
        assert "too weak" in weak.err and "UNAUTHENTICATED" in missing.err
        for i, done in enumerate((weak, missing)):
            [make] = hints(done.err)
            with Shell.session(work / f"fresh-{i}", tmp_path / f"logs-{i}") as fresh:
                fresh.run(make).ok()
            assert (work / f"fresh-{i}" / "admin.token").stat().st_mode & 0o077 == 0
            ran.append(make)

        for name, bot in bots.items():
            assert bot.alive(), f"{name}: {bot.output()}"
    assert len(ran) == 12 and len(set(ran)) == 11  # the two admin-token hints are the same line
