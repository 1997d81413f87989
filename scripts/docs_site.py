"""The docs site's generated pages, made at build time from the code itself (a MkDocs hook).

    mkdocs build --strict          # mkdocs.yml names this file under `hooks:`
    python scripts/docs_site.py cli|grpc|metrics|rulesets   # print one generated part

A page of docs/ holds ``<!-- generated: NAME -->`` where a part goes, and the hook puts it there:

- ``cli``: every command of ``belote-arena``, from the parser the command runs
  (``arena.cli.build_parser``): each subcommand's help, as ``--help`` prints it;
- ``grpc``: every service, method, message and enum of ``proto/belote/arena/v1``, with the
  comments the ``.proto`` files give them (read by ``protoc`` itself, not by a regex);
- ``metrics``: every metric a node exposes at ``/metrics``, from a fresh ``NodeMetrics``;
- ``rulesets``: each preset's value of every ruleset option, from ``arena.engine``'s presets.

So the reference cannot drift from the code: a command, an RPC or a metric added is in the next
build, and ``tests/test_site.py`` checks that each one is.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import os
import re
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PROTO = ROOT / "proto"
PROTO_PACKAGE = "belote/arena/v1"
MARK = re.compile(r"<!-- generated: ([a-z]+) -->")
#: the width ``--help`` is printed at on the page
HELP_WIDTH = 100


# ------------------------------------------------------------------ the command line


def commands(parser: argparse.ArgumentParser | None = None,
             path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], str, argparse.ArgumentParser]]:
    """Every command under ``parser`` (``belote-arena``'s by default), depth first, in the parser's
    order: its words after ``belote-arena``, the one-line help it was added with, and its parser."""
    if parser is None:
        from arena.cli import build_parser

        parser = build_parser()
    for action in parser._actions:
        if not isinstance(action, argparse._SubParsersAction):
            continue
        helps = {a.dest: a.help or "" for a in action._choices_actions}
        seen: set[int] = set()
        for name, sub in action.choices.items():
            if id(sub) in seen:  # an alias
                continue
            seen.add(id(sub))
            words = (*path, name)
            yield words, str(helps.get(name, "")).replace("%%", "%"), sub
            yield from commands(sub, words)


def actions(parser: argparse.ArgumentParser) -> list[str]:
    """The choices of a command's positional ``action`` (``bot register``, ``match start``...): the
    subcommands of a command that takes them as its first word rather than as subparsers."""
    for action in parser._actions:
        if action.dest == "action" and not action.option_strings and action.choices:
            return [str(c) for c in action.choices]
    return []


@contextlib.contextmanager
def _columns(width: int) -> Iterator[None]:
    """argparse wraps help to ``$COLUMNS``: the page's width, whatever the terminal building it."""
    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(width)
    try:
        yield
    finally:
        if old is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = old


def cli_markdown() -> str:
    with _columns(HELP_WIDTH):
        found = list(commands())
        out = ["Every command, as `belote-arena COMMAND --help` prints it. A command with subcommands "
               "lists them; each has a section of its own below.", ""]
        out += ["| command | what it does |", "| --- | --- |"]
        for words, summary, parser in found:
            name = " ".join(words)
            out.append(f"| [`{name}`](#{anchor('belote-arena ' + name)}) | {_cell(summary)} |")
            for word in actions(parser):
                out.append(f"| [`{name} {word}`](#{anchor('belote-arena ' + name)}) | "
                           f"an action of `belote-arena {name}` (its help says what it takes) |")
        out.append("")
        for words, summary, parser in found:
            level = "#" * min(2 + len(words) - 1, 4)
            out += [f"{level} belote-arena {' '.join(words)}", ""]
            if summary:
                out += [_escape(summary), ""]
            out += ["```text", parser.format_help().rstrip(), "```", ""]
            if actions(parser):
                shown = ", ".join(f"`belote-arena {' '.join(words)} {w}`" for w in actions(parser))
                out += [f"Its actions: {shown}. What each does with the arguments and options is said in "
                        "their help above, after the action's name.", ""]
    return "\n".join(out)


def anchor(heading: str) -> str:
    """The id MkDocs gives a heading (Python-Markdown's toc slugify)."""
    text = re.sub(r"[^\w\s-]", "", heading).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def _cell(text: str) -> str:
    return _escape(" ".join(text.split())).replace("|", "\\|")


def _escape(text: str) -> str:
    """Help text as Markdown shows it as written (its ``<`` and ``*`` are not markup)."""
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return re.sub(r"([*_\[\]])", r"\\\1", text)


# ------------------------------------------------------------------ the gRPC API


def _descriptors() -> Any:
    """The package's files, with their comments, as protoc reads them (grpc_tools, the test extra)."""
    from google.protobuf import descriptor_pb2
    from grpc_tools import protoc  # type: ignore[import-untyped]  # no stubs

    files = sorted(str(p.relative_to(PROTO)) for p in (PROTO / PROTO_PACKAGE).glob("*.proto"))
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "set.pb"
        code = protoc.main(["protoc", f"-I{PROTO}", "--include_source_info",
                            f"--descriptor_set_out={out}", *files])
        if code != 0:
            raise RuntimeError(f"protoc failed on {files} ({code})")
        fds = descriptor_pb2.FileDescriptorSet()
        fds.ParseFromString(out.read_bytes())
    return fds


def _comments(file: Any) -> dict[tuple[int, ...], str]:
    found = {}
    for loc in file.source_code_info.location:
        text = (loc.leading_comments or loc.trailing_comments).strip()
        if text:
            found[tuple(loc.path)] = "\n".join(line.strip() for line in text.splitlines())
    return found


_SCALARS = {1: "double", 2: "float", 3: "int64", 4: "uint64", 5: "int32", 6: "fixed64", 7: "fixed32",
            8: "bool", 9: "string", 12: "bytes", 13: "uint32", 15: "sfixed32", 16: "sfixed64",
            17: "sint32", 18: "sint64"}


def _type(field: Any) -> str:
    name = field.type_name.rsplit(".", 1)[-1] if field.type_name else _SCALARS.get(field.type, "?")
    if field.label == 3:
        return f"repeated {name}"
    if field.proto3_optional:
        return f"optional {name}"
    return name


def _link(name: str, known: set[str]) -> str:
    return f"[`{name}`](#{anchor(name)})" if name in known else f"`{name}`"


def grpc_markdown() -> str:
    fds = _descriptors()
    known: set[str] = set()
    for f in fds.file:
        stack = list(f.message_type)
        while stack:
            m = stack.pop()
            known.add(m.name)
            stack += list(m.nested_type)
            known.update(e.name for e in m.enum_type)
        known.update(e.name for e in f.enum_type)
    out: list[str] = []
    # the services' files first (a bot's, then the arena's), then the messages they share
    for f in sorted(fds.file, key=lambda f: (not f.service, f.name != f"{PROTO_PACKAGE}/bot_service.proto")):
        notes = _comments(f)
        out += [f"## {Path(f.name).name}", ""]
        for si, service in enumerate(f.service):
            out += [f"### {service.name}", "", _prose(notes.get((6, si), "")), ""]
            out += ["| method | request | response | what it does |", "| --- | --- | --- | --- |"]
            for mi, method in enumerate(service.method):
                streams = ("stream " if method.client_streaming else "", "stream " if method.server_streaming
                           else "")
                req, resp = method.input_type.rsplit(".", 1)[-1], method.output_type.rsplit(".", 1)[-1]
                out.append(f"| `{method.name}` | {streams[0]}{_link(req, known)} | "
                           f"{streams[1]}{_link(resp, known)} | {_cell(notes.get((6, si, 2, mi), ''))} |")
            out.append("")
        for mi, message in enumerate(f.message_type):
            out += _message(message, (4, mi), notes, known, 3)
        for ei, enum in enumerate(f.enum_type):
            out += _enum(enum, (5, ei), notes, 3)
    return "\n".join(out)


def _prose(text: str) -> str:
    return _escape(" ".join(text.split()))


def _message(message: Any, path: tuple[int, ...], notes: dict[tuple[int, ...], str], known: set[str],
             level: int) -> list[str]:
    out = [f"{'#' * min(level, 6)} {message.name}", ""]
    if notes.get(path):
        out += [_prose(notes[path]), ""]
    if message.field:
        out += ["| field | type | number | meaning |", "| --- | --- | --- | --- |"]
        for fi, field in enumerate(message.field):
            kind = _type(field)
            base = kind.split()[-1]
            shown = kind.replace(base, _link(base, known)) if base in known else f"`{kind}`"
            oneof = ""
            if field.HasField("oneof_index") and not field.proto3_optional:
                oneof = f" (one of `{message.oneof_decl[field.oneof_index].name}`)"
            out.append(f"| `{field.name}` | {shown} | {field.number} | "
                       f"{_cell(notes.get((*path, 2, fi), ''))}{oneof} |")
        out.append("")
    for ni, nested in enumerate(message.nested_type):
        if nested.options.map_entry:
            continue
        out += _message(nested, (*path, 3, ni), notes, known, level + 1)
    for ei, enum in enumerate(message.enum_type):
        out += _enum(enum, (*path, 4, ei), notes, level + 1)
    return out


def _enum(enum: Any, path: tuple[int, ...], notes: dict[tuple[int, ...], str], level: int) -> list[str]:
    out = [f"{'#' * min(level, 6)} {enum.name}", ""]
    if notes.get(path):
        out += [_prose(notes[path]), ""]
    out += ["| value | number | meaning |", "| --- | --- | --- |"]
    for vi, value in enumerate(enum.value):
        out.append(f"| `{value.name}` | {value.number} | {_cell(notes.get((*path, 2, vi), ''))} |")
    return [*out, ""]


# ------------------------------------------------------------------ the metrics


def metric_families() -> list[tuple[str, str, str, list[str]]]:
    """Each metric of a fresh node's registry: name, type, help, and the labels of the samples it has
    yet (a labelled metric with no sample yet shows none)."""
    from arena.metrics import NodeMetrics

    registry = NodeMetrics().registry
    #: the label names each metric was declared with (prometheus_client keeps them, privately)
    declared: dict[str, tuple[str, ...]] = {}
    for collector, names in registry._collector_to_names.items():
        for name in names:
            declared[name] = tuple(getattr(collector, "_labelnames", ()))
    found = []
    for family in registry.collect():
        labels = {k for s in family.samples for k in s.labels}
        labels |= set(getattr(family, "_labelnames", ())) | set(declared.get(family.name, ()))
        shown = sorted(labels - {"le", "quantile"})
        found.append((family.name, family.type, family.documentation, shown))
    return sorted(found, key=lambda f: (not f[0].startswith("belote_arena_"), f[0]))


def metrics_markdown() -> str:
    out = ["| metric | type | labels | what it counts |", "| --- | --- | --- | --- |"]
    for name, kind, help_text, labels in metric_families():
        shown = ", ".join(f"`{label}`" for label in labels)
        suffix = "_total" if kind == "counter" and not name.endswith("_total") else ""
        out.append(f"| `{name}{suffix}` | {kind} | {shown} | {_cell(help_text)} |")
    return "\n".join(out)


# ------------------------------------------------------------------ the ruleset presets


def rulesets_markdown() -> str:
    from arena.engine.rules import PRESETS

    names = list(PRESETS)
    fields = [f.name for f in dataclasses.fields(next(iter(PRESETS.values()))) if f.name != "preset"]
    out = ["| option | " + " | ".join(f"`{n}`" for n in names) + " |", "| --- |" + " --- |" * len(names)]
    for field in fields:
        values = [getattr(PRESETS[n], field) for n in names]
        out.append(f"| `{field}` | " + " | ".join(_value(v) for v in values) + " |")
    return "\n".join(out)


def _value(v: object) -> str:
    if isinstance(v, bool):
        return "`true`" if v else "`false`"
    if v is None:
        return "`null`"
    return f"`{v}`"


GENERATORS: dict[str, Callable[[], str]] = {
    "cli": cli_markdown, "grpc": grpc_markdown, "metrics": metrics_markdown, "rulesets": rulesets_markdown,
}


def fill(markdown: str) -> str:
    """``markdown`` with each ``<!-- generated: NAME -->`` replaced by its part."""
    def part(m: re.Match[str]) -> str:
        if m.group(1) not in GENERATORS:
            raise ValueError(f"no generated part named {m.group(1)!r}; known: {', '.join(GENERATORS)}")
        return GENERATORS[m.group(1)]()
    return MARK.sub(part, markdown)


# ------------------------------------------------------------------ the MkDocs hook


def on_page_markdown(markdown: str, **_: Any) -> str:
    return fill(markdown)


if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in GENERATORS:
        sys.exit(f"usage: python scripts/docs_site.py {'|'.join(GENERATORS)}")
    sys.path.insert(0, str(ROOT))
    print(GENERATORS[sys.argv[1]]())
