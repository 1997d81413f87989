"""Bot names: 1 to 64 ASCII letters, digits, ``_``, ``.`` or ``-``, starting with a letter or digit.

The whole name must match (README, docs/protocol.md#string-fields-and-their-values):
a name is shown in tables and logs, used as a key in the shared registry and
on the command line, so nothing else gets in, not even a trailing newline.
"""

from __future__ import annotations

import grpc
import grpc.aio
import pytest
from belote.arena.v1 import arena_service_pb2 as apb

from arena.harness import local_arena
from arena.referee.registry import BotRegistry, RegistryError

from .arena_helpers import FAST, arena_stub, arun

pytestmark = pytest.mark.security

GOOD = ["a", "7", "alpha", "Alpha-2.0_rc1", "x" * 64, "bot-1a2b3c4d"]
BAD = ["", "alpha\n", "alpha ", " alpha", "two words", "-dash", "_under", ".dot", "x" * 65, "caf\u00e9",
       "a/b", "a\\b", "a:b", "\x00", "alpha\x00", "a\tb"]


@pytest.mark.parametrize("name", GOOD)
def test_a_name_of_the_documented_pattern_is_registered(name: str) -> None:
    entry, _ = BotRegistry().register(name)
    assert entry.name == name


@pytest.mark.parametrize("name", BAD, ids=repr)
def test_a_name_outside_the_pattern_is_refused(name: str) -> None:
    registry = BotRegistry()
    with pytest.raises(RegistryError, match="bad bot name"):
        registry.register(name)
    assert registry.all() == []


def test_a_name_with_a_trailing_newline_is_invalid_argument_over_grpc() -> None:
    async def main() -> None:
        async with local_arena(time=FAST) as arena, arena_stub(arena.address) as stub:
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await stub.RegisterBot(apb.RegisterBotRequest(name="alpha\n"))
            assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert "1 to 64 letters" in (info.value.details() or "")
            assert arena.node.bots() == []

    arun(main())
