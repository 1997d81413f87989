"""Messages for fuzzing the node: well-formed protobuf from hypothesis, and bytes.

:func:`messages` builds a hypothesis strategy for any message type from its
descriptor (every field, repeated ones as short lists, sub-messages a few
levels deep, strings now and then longer than the node takes), so the fuzz
follows the ``.proto`` files as they change. :func:`sample` draws a fixed
number of examples outside a test (hypothesis's engine, generation only).
:func:`garbage` is bytes: random ones, and well-formed messages cut, flipped
or padded.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from google.protobuf import message_factory
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

T = TypeVar("T")
F = FieldDescriptor

_U32, _U64, _I32, _I64 = (0, 2**32 - 1), (0, 2**64 - 1), (-(2**31), 2**31 - 1), (-(2**63), 2**63 - 1)
_BOUNDS = {
    F.TYPE_UINT32: _U32, F.TYPE_FIXED32: _U32, F.TYPE_UINT64: _U64, F.TYPE_FIXED64: _U64,
    F.TYPE_INT32: _I32, F.TYPE_SINT32: _I32, F.TYPE_SFIXED32: _I32,
    F.TYPE_INT64: _I64, F.TYPE_SINT64: _I64, F.TYPE_SFIXED64: _I64,
    F.TYPE_ENUM: _I32,  # proto3 enums are open: any int32
}


def _field(field: FieldDescriptor, depth: int) -> st.SearchStrategy[Any]:
    kind = field.type
    if kind in _BOUNDS:
        return st.integers(*_BOUNDS[kind])
    if kind == F.TYPE_STRING:
        return st.text(max_size=40) | st.text(alphabet="ab-", min_size=250, max_size=300)
    if kind == F.TYPE_BYTES:
        return st.binary(max_size=40)
    if kind == F.TYPE_BOOL:
        return st.booleans()
    if kind in (F.TYPE_FLOAT, F.TYPE_DOUBLE):
        return st.floats(width=32 if kind == F.TYPE_FLOAT else 64)
    if kind == F.TYPE_MESSAGE and field.message_type is not None:
        return messages(field.message_type, depth + 1)
    raise TypeError(f"no strategy for {field.full_name}")


def messages(descriptor: Descriptor, depth: int = 0) -> st.SearchStrategy[Message]:
    """Well-formed messages of ``descriptor``'s type: any subset of its fields, any values."""
    cls = message_factory.GetMessageClass(descriptor)
    if depth > 2:
        return st.just(cls())
    fields = {}
    for field in descriptor.fields:
        value = _field(field, depth)
        fields[field.name] = st.lists(value, max_size=8) if field.is_repeated else value

    def build(values: dict[str, Any]) -> Message:
        msg = cls()
        for name, value in values.items():  # a second field of a oneof replaces the first
            field = descriptor.fields_by_name[name]
            if field.is_repeated and field.type == F.TYPE_MESSAGE:
                for item in value:
                    getattr(msg, name).add().CopyFrom(item)
            elif field.is_repeated:
                getattr(msg, name).extend(value)
            elif field.type == F.TYPE_MESSAGE:
                getattr(msg, name).CopyFrom(value)
            else:
                setattr(msg, name, value)
        return msg

    return st.fixed_dictionaries({}, optional=fields).map(build)


def sample(strategy: st.SearchStrategy[T], n: int) -> list[T]:
    """``n`` examples of ``strategy``, as hypothesis generates them (no shrinking, no database; the
    same ones every run, so that a failure can be run again)."""
    out: list[T] = []

    @settings(max_examples=n, database=None, deadline=None, phases=[Phase.generate], derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def collect(example: T) -> None:
        out.append(example)

    collect()
    return out[:n]


def garbage(rng: random.Random, valid: Sequence[bytes], n: int) -> list[bytes]:
    """``n`` byte strings: half random (0 to 300 bytes), half ``valid`` ones cut, flipped or padded."""
    mutations: list[Callable[[bytes], bytes]] = [
        lambda b: b[: rng.randrange(len(b) + 1)],
        lambda b: bytes(x ^ (1 << rng.randrange(8)) if rng.random() < 0.1 else x for x in b) + b"\x80",
        lambda b: b + rng.randbytes(rng.randrange(1, 20)),
        lambda b: rng.randbytes(rng.randrange(1, 4)) + b,
    ]
    out = []
    for i in range(n):
        if i % 2 or not valid:
            out.append(rng.randbytes(rng.randrange(0, 300)))
        else:
            out.append(rng.choice(mutations)(rng.choice(valid)))
    return out
