"""Client side of ArenaService for the command line: bots, matches, watching."""

from __future__ import annotations

import json
import sys
from typing import Any, TextIO

import grpc
from belote.arena.v1 import arena_service_pb2 as apb
from belote.arena.v1 import arena_service_pb2_grpc as agrpc
from belote.arena.v1 import game_pb2 as pb

from arena.engine.actions import format_action
from arena.engine.cards import CARDS


class RemoteError(Exception):
    """A gRPC call failed: printed as one line by the CLI."""


def _stub(address: str) -> tuple[grpc.Channel, agrpc.ArenaServiceStub]:
    channel = grpc.insecure_channel(address)
    return channel, agrpc.ArenaServiceStub(channel)


def _call(fn: Any, request: Any, address: str, timeout: float = 10.0) -> Any:
    try:
        return fn(request, timeout=timeout)
    except grpc.RpcError as e:
        code = e.code().name if hasattr(e, "code") else "UNKNOWN"
        detail = e.details() if hasattr(e, "details") else str(e)
        if code == "UNAVAILABLE":
            detail = f"no referee answers at {address}"
        raise RemoteError(f"{code}: {detail}") from None


def register_bot(address: str, name: str) -> tuple[str, str]:
    channel, stub = _stub(address)
    with channel:
        r = _call(stub.RegisterBot, apb.RegisterBotRequest(name=name), address)
        return r.bot_id, r.token


def list_bots(address: str) -> list[apb.BotInfo]:
    channel, stub = _stub(address)
    with channel:
        return list(_call(stub.ListBots, apb.ListBotsRequest(), address).bots)


def start_match(address: str, team0: str, team1: str, ruleset: str, seed: str = "",
                deals: int = 0, target: int = 0) -> str:
    channel, stub = _stub(address)
    with channel:
        r = _call(stub.StartMatch, apb.StartMatchRequest(
            team0_bot=team0, team1_bot=team1, ruleset=ruleset, seed=seed, deals=deals,
            target=target,
        ), address)
        return str(r.match_id)


def get_record(address: str, match_id: str) -> dict[str, Any]:
    channel, stub = _stub(address)
    with channel:
        r = _call(stub.GetMatchRecord, apb.GetMatchRecordRequest(match_id=match_id), address)
        data: dict[str, Any] = json.loads(r.record_json)
        return data


def describe_event(ev: pb.PublicEvent) -> str:
    kind = ev.WhichOneof("event")
    if kind == "deal_started":
        d = ev.deal_started
        extra = f", retourne {CARDS[d.retourne]}" if d.HasField("retourne") else ""
        return f"deal {ev.deal_index + 1}: dealer seat {d.dealer}{extra}"
    if kind == "action_played":
        return f"  seat {ev.action_played.seat}: {ev.action_played.text}"
    if kind == "trick_completed":
        t = ev.trick_completed
        return f"  trick to seat {t.winner} ({' '.join(str(CARDS[c]) for c in t.cards)})"
    if kind == "declarations_shown":
        shown = ev.declarations_shown
        who = f"team {shown.team}" if shown.HasField("team") else "nobody"
        return f"  declarations: {who} scores {shown.points}"
    if kind == "deal_ended":
        ended = ev.deal_ended
        return f"  deal score {list(ended.score)}, match {list(ended.match_score)}"
    if kind == "strike_given":
        s = ev.strike_given
        return f"  STRIKE seat {s.seat} ({s.strikes}): {s.reason}; played {format_action(s.fallback_action)}"
    return f"  {kind}"


def watch(address: str, match_id: str, out: TextIO = sys.stdout) -> pb.MatchResult | None:
    channel, stub = _stub(address)
    result = None
    with channel:
        try:
            for msg in stub.WatchMatch(apb.WatchMatchRequest(match_id=match_id)):
                if msg.HasField("event"):
                    print(describe_event(msg.event), file=out, flush=True)
                if msg.HasField("result"):
                    result = msg.result
        except grpc.RpcError as e:
            raise RemoteError(f"{e.code().name}: {e.details()}") from None
    return result
