"""The specs in docs/ say what the code does: their examples are checked against it.

- every JSON example of docs/records.md is read the way the code reads it: a
  deal or match record replays, an arena match record parses as a
  MatchRecord and replays, and a replay output shown after a record is what
  the replay prints;
- every row of docs/protocol.md's worked examples gives the code the engine
  gives that text;
- every link between the docs points at a heading that exists.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from arena.engine import parse_action, replay_deal, replay_match
from arena.engine.actions import NO_ACTION
from arena.engine.record import match_outcome_json
from arena.records import MatchRecord

DOCS = Path(__file__).resolve().parent.parent / "docs"
FENCE = re.compile(r"```json\n(.*?)```", re.S)


def json_examples(name: str) -> list[Any]:
    out = []
    for block in FENCE.findall((DOCS / name).read_text()):
        try:
            out.append(json.loads(block))
        except ValueError:
            continue  # a schema sketch with "...", not an example
    return out


def test_every_record_example_of_records_md_replays() -> None:
    examples = json_examples("records.md")
    replayed = 0
    for example in examples:
        if not isinstance(example, dict):
            continue
        if "match_id" in example:
            record = MatchRecord.from_dict(example)
            assert MatchRecord.from_json(record.to_json()) == record
            record.replay()
            replayed += 1
        elif "deals" in example and isinstance(example["deals"], list) and "ruleset" in example:
            replay_match(example)
            replayed += 1
        elif "dealer" in example and "hands" in example and "ruleset" in example:
            replay_deal(example)
            replayed += 1
    assert replayed >= 3, f"only {replayed} record examples found in docs/records.md"


def test_the_replay_output_shown_after_the_arena_record_is_what_replay_prints() -> None:
    examples = [e for e in json_examples("records.md") if isinstance(e, dict)]
    arena = [i for i, e in enumerate(examples) if "match_id" in e]
    assert arena, "docs/records.md shows no arena match record"
    i = arena[-1]
    shown = examples[i + 1]
    match, _ = replay_match(examples[i])
    assert match_outcome_json(match) == shown


def worked_examples() -> list[tuple[str, int]]:
    text = (DOCS / "protocol.md").read_text()
    section = text.split("### Worked examples", 1)[1].split("\n#", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and re.fullmatch(r"\**\d+\**( \(0x[0-9A-F]+\))?", cells[2]):
            text = cells[0].replace(" (round two)", "").strip("`")
            rows.append((text, int(cells[2].split()[0].strip("*"))))
    return rows


@pytest.mark.parametrize(("text", "code"), worked_examples())
def test_a_worked_example_of_protocol_md_is_the_engines_code(text: str, code: int) -> None:
    if text == "no action":
        assert code == NO_ACTION
    else:
        assert parse_action(text) == code


def test_protocol_md_has_the_worked_examples_the_issue_names() -> None:
    texts = {t for t, _ in worked_examples()}
    assert {"80H", "KH belote", "no action"} <= texts


def _anchor(heading: str) -> str:
    return re.sub(r"[^a-z0-9 -]", "", heading.lower()).replace(" ", "-")


@pytest.mark.parametrize("name", sorted(p.name for p in DOCS.glob("*.md")))
def test_every_link_between_the_docs_reaches_a_heading(name: str) -> None:
    text = (DOCS / name).read_text()
    broken = []
    for target, anchor in re.findall(r"\]\(((?:[a-z]+\.md)?)#([a-z0-9-]+)\)", text):
        doc = DOCS / (target or name)
        headings = {_anchor(h) for h in re.findall(r"^#+ (.+)$", doc.read_text(), re.M)}
        if anchor not in headings:
            broken.append(f"{target or name}#{anchor}")
    assert not broken, f"{name} links to missing headings: {broken}"
