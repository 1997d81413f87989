"""A node of a queue implements every unary method that its reflection advertises."""

from __future__ import annotations

from pathlib import Path

import grpc

from tests.node.test_tournament_trust import ADMIN, node
from tests.referee.arena_helpers import arun
from tests.referee.test_health import QUEUE_ONLY, advertised_unary_codes


def test_a_node_of_a_queue_implements_every_advertised_unary_method(tmp_path: Path) -> None:
    async def main() -> dict[str, grpc.StatusCode]:
        async with node(tmp_path) as running:
            return await advertised_unary_codes(running.address, ADMIN)

    codes = arun(main())
    assert QUEUE_ONLY | {"/grpc.health.v1.Health/List"} <= set(codes)
    assert not {path for path, code in codes.items() if code == grpc.StatusCode.UNIMPLEMENTED}
