"""ConnectResponse bytes assembled from parts serialized once.

A protobuf message on the wire is the concatenation of its fields, in any
order, and a repeated or sub-message field is one ``tag, length, bytes`` entry
per element; parsing a concatenation is merging its parts. So a public event
is serialized once and the same bytes ride on the messages of every bot of its
match, an observation is serialized once and framed into its request, and a
batch of requests is the requests' own bytes framed one after the other; no
message is copied into another. A bot parses exactly what it would have got
from ``ConnectResponse(events=..., action_requests=[...]).SerializeToString()``.
"""

from __future__ import annotations

from belote.arena.v1 import bot_service_pb2 as bpb
from google.protobuf.descriptor import Descriptor

from arena.referee.encode import varint

_LENGTH_DELIMITED = 2


def _tag(message: Descriptor, name: str) -> int:
    number: int = message.fields_by_name[name].number
    tag = number << 3 | _LENGTH_DELIMITED
    assert tag < 0x80, f"{message.name}.{name}: a one-byte tag"
    return tag


#: ConnectResponse.events, .action_request, .action_requests, .flush and ActionRequest.observation
EVENT_TAG = _tag(bpb.ConnectResponse.DESCRIPTOR, "events")
REQUEST_TAG = _tag(bpb.ConnectResponse.DESCRIPTOR, "action_request")
REQUESTS_TAG = _tag(bpb.ConnectResponse.DESCRIPTOR, "action_requests")
OBSERVATION_TAG = _tag(bpb.ActionRequest.DESCRIPTOR, "observation")
#: a whole ConnectResponse that is only an (empty) Flush: events go in front of it
FLUSH = bytes((_tag(bpb.ConnectResponse.DESCRIPTOR, "flush"), 0))


def head(tag: int, size: int) -> bytes:
    """The tag and length (a varint) of a length-delimited field of ``size`` bytes."""
    if size < 0x80:
        return bytes((tag, size))
    return bytes((tag,)) + varint(size)


def field(tag: int, data: bytes) -> bytes:
    """A length-delimited field: ``data`` (a serialized message) framed with its tag and length."""
    return head(tag, len(data)) + data


def event_field(data: bytes) -> bytes:
    """A serialized PublicEvent as a ``ConnectResponse.events`` entry."""
    return field(EVENT_TAG, data)


def observation_field(data: bytes) -> bytes:
    """A serialized Observation as the ``observation`` field of an ActionRequest."""
    return field(OBSERVATION_TAG, data)


def requests_fields(requests: list[bytes]) -> list[bytes]:
    """Serialized ActionRequests as the fields of one ConnectResponse: a lone one in
    ``action_request``, several in ``action_requests``."""
    if len(requests) == 1:
        data = requests[0]
        return [head(REQUEST_TAG, len(data)), data]
    parts: list[bytes] = []
    for data in requests:
        parts.append(head(REQUESTS_TAG, len(data)))
        parts.append(data)
    return parts


class RequestBytes(bytes):
    """A serialized ActionRequest in an outbox (its type tells it from a framed event)."""


class FlushMark:
    """The outbox mark of a flush: the events queued before it go out even if nothing follows."""


FLUSH_MARK = FlushMark()
#: what an outbox holds, in order: framed events (``bytes``), requests, other messages, flush marks
OutboxItem = bytes | RequestBytes | bpb.ConnectResponse | FlushMark


def encode_outbox(items: list[OutboxItem]) -> tuple[list[bytes], list[OutboxItem]]:
    """The serialized messages that carry ``items`` (an outbox, in order), and the events left.

    Consecutive action requests share one message (``action_requests``; a lone
    one goes in ``action_request``); the public events queued among them ride in
    front of it. Any other message ends the batch and is sent as it is, in its
    place, with the events queued before it. The events queued after the last of
    those other messages go in front of the requests queued after it, if any, or
    alone in a ``Flush`` if a flush mark was queued after it; else they are left
    for the next message. So every event comes before every message queued after
    it, and no message is moved across another kind of message.
    """
    out: list[bytes] = []
    parts: list[bytes] = []  # the next message: its events first
    batch: list[bytes] = []
    flush = False
    for item in items:
        kind = type(item)
        if kind is bytes:
            parts.append(item)  # type: ignore[arg-type]
        elif kind is RequestBytes:
            batch.append(item)  # type: ignore[arg-type]
        elif kind is FlushMark:
            flush = True
        else:
            if batch:
                parts += requests_fields(batch)
                out.append(b"".join(parts))
                parts, batch = [], []
            parts.append(item.SerializeToString())  # type: ignore[union-attr]
            out.append(b"".join(parts))
            parts = []
            flush = False
    if batch:
        parts += requests_fields(batch)
    elif parts and flush:
        parts.append(FLUSH)
    else:
        return out, list(parts)
    out.append(b"".join(parts))
    return out, []
