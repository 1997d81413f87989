"""A finished match's public views, as the node serves them, built from its record.

A finished match no longer changes, so what anyone may read of it is built
once and kept (:mod:`arena.referee.replays`): these functions build each view
from the record's JSON text, in the build process (:mod:`arena.referee.builds`),
never on the node's event loop. Each returns the view and ``""``, or the view
as far as the record replays and why it stops there (a damaged record), for
the node to log.

* :func:`watch_view`: ``WatchMatch``'s messages, each public event serialized
  (:class:`WatchReplay`), then the result;
* :func:`events_view`: the web's server-sent events (``/api/v1/matches/ID/events``):
  each public event as JSON (:func:`event_json`), the result, the end;
* :func:`match_view`: the JSON of ``GET /api/v1/matches/ID`` once the match is
  over: its status, its record, each deal's outcome, and the tricks of a deal a
  forfeit stopped (the replay page steps through them);
* :func:`record_view`: the record's JSON (``GetMatchRecord``, and the web's
  download, ``/api/v1/matches/ID/record``);
* :func:`facts_view`: what its summary shows (``GetMatch``), without its deals.

The web's formats are written here, beside the referee's, so that the build
process loads the engine and the wire messages and nothing of the servers.
"""

from __future__ import annotations

import array
import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, overload

from belote.arena.v1 import game_pb2 as pb
from google.protobuf.json_format import MessageToDict

from arena.engine.cards import CARDS
from arena.records import MatchEnd, MatchRecord, ResultReason, RulesetSpec
from arena.referee.convert import result_to_proto
from arena.referee.replay_events import public_events

__all__ = [
    "Body", "RecordFacts", "RecordSource", "WatchReplay", "event_json", "events_view", "facts_view",
    "match_view", "record_view", "result_json", "sse_frame", "watch_view",
]

#: what a kept event costs beyond its bytes (a bytes object's header and its place in a list)
EVENT_OVERHEAD = 41


@dataclass(frozen=True, slots=True)
class RecordSource:
    """A finished match's record as it is stored: its JSON text, and how to read the record from it
    (the store keeps the record itself; the queue a result that holds it). ``parse`` is a
    module-level function, so that the source goes to the build process as it is."""

    text: str
    parse: Callable[[str], MatchRecord]

    def record(self) -> MatchRecord:
        return self.parse(self.text)


class Packed(Sequence[bytes]):
    """Serialized events in one buffer (``ends[i]`` where event ``i`` ends): what the build process
    hands back costs one copy, not one object an event."""

    __slots__ = ("_data", "_ends")

    def __init__(self, events: Sequence[bytes]) -> None:
        self._data = b"".join(events)
        ends = array.array("I")
        at = 0
        for e in events:
            at += len(e)
            ends.append(at)
        self._ends = ends

    def __len__(self) -> int:
        return len(self._ends)

    @overload
    def __getitem__(self, i: int) -> bytes: ...

    @overload
    def __getitem__(self, i: slice) -> Sequence[bytes]: ...

    def __getitem__(self, i: int | slice) -> bytes | Sequence[bytes]:
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self._ends)
        return self._data[self._ends[i - 1] if i > 0 else 0:self._ends[i]]

    def __iter__(self) -> Iterator[bytes]:
        data, start = self._data, 0
        for end in self._ends:
            yield data[start:end]
            start = end

    @property
    def nbytes(self) -> int:
        return len(self._data) + self._ends.itemsize * len(self._ends)


@dataclass(frozen=True, slots=True)
class WatchReplay:
    """``WatchMatch``'s view of a finished match: its public events, serialized, then its result
    (a serialized ``MatchResult``; empty when there is none to send)."""

    events: Sequence[bytes]
    result: bytes

    @property
    def nbytes(self) -> int:
        if isinstance(self.events, Packed):
            return self.events.nbytes + len(self.result)
        return sum(len(e) + EVENT_OVERHEAD for e in self.events) + len(self.result)


@dataclass(frozen=True, slots=True)
class Body:
    """A view serialized once: the bytes to send."""

    data: bytes

    @property
    def nbytes(self) -> int:
        return len(self.data)


class _Replay:
    """The record's public events, as they are rebuilt, one at a time; then ``error``: "" or why they
    stopped early (a record that does not replay)."""

    def __init__(self, record: MatchRecord) -> None:
        self.record = record
        self.error = ""

    def __iter__(self) -> Iterator[pb.PublicEvent]:
        try:
            yield from public_events(self.record)
        except (ValueError, TypeError) as e:  # RecordError and the engine's errors are ValueErrors
            self.error = f"its public events cannot be rebuilt from its record: {e}"


def watch_view(source: RecordSource) -> tuple[WatchReplay, str]:
    record = source.record()
    replay = _Replay(record)
    events = Packed([e.SerializeToString() for e in replay])
    result = result_to_proto(record.result, record.deals_played).SerializeToString()
    return WatchReplay(events, result), replay.error


def event_json(event: pb.PublicEvent) -> dict[str, Any]:
    """A public event as JSON (the proto's field names), with ``kind`` naming it and card names added."""
    out = MessageToDict(event, preserving_proto_field_name=True, always_print_fields_with_no_presence=True)
    kind = event.WhichOneof("event")
    out["kind"] = kind
    body = out.get(kind or "", {})
    if kind == "trick_completed":
        body["card_names"] = [str(CARDS[c]) for c in event.trick_completed.cards]
    elif kind == "deal_started" and event.deal_started.HasField("retourne"):
        body["retourne_card"] = str(CARDS[event.deal_started.retourne])
    elif kind == "deal_ended":
        body["outcome"] = json.loads(event.deal_ended.outcome_json)
    return out


def result_json(result: pb.MatchResult) -> dict[str, Any]:
    """The server-sent event of a match's result."""
    return {"kind": "result", "result": MessageToDict(
        result, preserving_proto_field_name=True, always_print_fields_with_no_presence=True)}


def sse_frame(kind: str, data: dict[str, Any]) -> bytes:
    """One server-sent event: ``event: <kind>`` and its data as one line of JSON."""
    return f"event: {kind}\ndata: {json.dumps(data)}\n\n".encode()


#: the last server-sent event of every stream
SSE_END = sse_frame("end", {})


def events_view(source: RecordSource) -> tuple[Body, str]:
    record = source.record()
    replay = _Replay(record)
    frames = [sse_frame("public", event_json(e)) for e in replay]
    frames.append(sse_frame("result", result_json(result_to_proto(record.result, record.deals_played))))
    frames.append(SSE_END)
    return Body(b"".join(frames)), replay.error


def match_view(source: RecordSource) -> tuple[Body, str]:
    """What ``arena.web.reads.MatchView.to_json`` gives for the finished match, serialized."""
    record = source.record()
    finished = record.result.reason is not ResultReason.ABORTED
    replay = _Replay(record)
    outcomes: list[dict[str, Any]] | None = None
    unfinished: dict[str, Any] | None = None
    if finished:  # a record that does not replay: the deals it could show
        outcomes, stopped = [], len(record.deals)
        tricks: list[dict[str, Any]] = []
        for e in replay:
            if e.HasField("deal_ended"):
                outcomes.append(json.loads(e.deal_ended.outcome_json))
            elif e.HasField("trick_completed") and e.deal_index == stopped:
                t = e.trick_completed
                tricks.append({"leader": t.leader, "cards": [str(CARDS[c]) for c in t.cards],
                               "winner": t.winner})
        if record.unfinished_deal is not None and not replay.error:
            unfinished = {"deal": stopped, "tricks": tricks}
    view = {
        # MatchState's values: a stored record is over, played to its end (or forfeited) or aborted
        "match_id": record.match_id, "state": "finished" if finished else "aborted",
        "players": list(record.players), "ruleset": record.ruleset, "totals": list(record.totals),
        "deals_played": record.deals_played, "seed": str(record.seed), "result": record.result.to_dict(),
        "record": record.to_dict() if finished else None, "replay": outcomes, "unfinished": unfinished,
        "sealed": False,
    }
    return Body(json.dumps(view).encode()), replay.error


def record_view(source: RecordSource) -> tuple[Body, str]:
    return Body(source.record().to_json().encode()), ""


@dataclass(frozen=True, slots=True)
class RecordFacts:
    """What a finished match's summary shows of its record: everything but its deals."""

    match_id: str
    players: tuple[str, ...]
    ruleset: RulesetSpec
    deals_played: int
    seed: str
    result: MatchEnd

    @property
    def nbytes(self) -> int:
        return 1024  # a few short strings and numbers, and their objects


def facts_view(source: RecordSource) -> tuple[RecordFacts, str]:
    record = source.record()
    return RecordFacts(record.match_id, record.players, record.ruleset, record.deals_played,
                       str(record.seed), record.result), ""
