"""Match records as a client reads them: ``ArenaService.GetMatchRecord`` over gRPC."""

from __future__ import annotations

import json
from typing import Any

import grpc.aio
from belote.arena.v1 import arena_service_pb2 as apb
from belote.arena.v1 import arena_service_pb2_grpc as agrpc


async def fetch_records(address: str, match_ids: list[str]) -> dict[str, dict[str, Any]]:
    """The records of finished matches, by match id."""
    async with grpc.aio.insecure_channel(address) as channel:
        stub = agrpc.ArenaServiceStub(channel)
        out: dict[str, dict[str, Any]] = {}
        for match_id in match_ids:
            reply = await stub.GetMatchRecord(apb.GetMatchRecordRequest(match_id=match_id))
            out[match_id] = json.loads(reply.record_json)
        return out


def latencies_us(record: dict[str, Any]) -> list[int]:
    """Every decision's round trip as the referee measured it, in order (-1: a fallback)."""
    return [x for deal in record["latencies_us"] for x in deal]
