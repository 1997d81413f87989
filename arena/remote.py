"""Client side of ArenaService for the command line: bots, matches, watching.

Every call takes ``credentials``: None dials plaintext, and
:func:`channel_credentials` makes them for a node on TLS.
"""

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


Credentials = grpc.ChannelCredentials | None


def channel_credentials(ca: str | None = None, tls: bool = False) -> Credentials:
    """TLS trusting the CA certificates in the PEM file ``ca``; with ``tls`` and no ``ca``, TLS
    trusting the system's roots (gRPC's own, or ``$GRPC_DEFAULT_SSL_ROOTS_FILE_PATH``); else None
    (plaintext)."""
    if not ca:
        return grpc.ssl_channel_credentials() if tls else None
    try:
        with open(ca, "rb") as f:
            pem = f.read()
    except OSError as e:
        raise RemoteError(f"cannot read the TLS CA file {ca}: {e.strerror or e}") from None
    if b"-----BEGIN CERTIFICATE-----" not in pem:
        raise RemoteError(f"the TLS CA file {ca} holds no PEM certificate (no BEGIN CERTIFICATE line)")
    return grpc.ssl_channel_credentials(root_certificates=pem)


def _stub(address: str, credentials: Credentials) -> tuple[grpc.Channel, agrpc.ArenaServiceStub]:
    if credentials is None:
        channel = grpc.insecure_channel(address)
    else:
        channel = grpc.secure_channel(address, credentials)
    return channel, agrpc.ArenaServiceStub(channel)


def unreachable(address: str, detail: str, tls: bool) -> str:
    """Why no referee answered at ``address``, in words: a TLS failure is named as one."""
    if "CERTIFICATE_VERIFY_FAILED" in detail:
        return (f"the referee at {address} has a certificate that no trusted CA signed "
                f"(give the CA that signed it: --tls-ca)")
    if "Hostname Verification" in detail or "Peer name" in detail:
        return f"the referee's certificate does not name {address.rsplit(':', 1)[0]}"
    if "WRONG_VERSION_NUMBER" in detail:
        return f"the referee at {address} does not speak TLS (dial it without --tls-ca/--tls)"
    if not tls and "Socket closed" in detail:
        return f"the referee at {address} closed the connection: if it serves TLS, pass --tls-ca or --tls"
    return f"no referee answers at {address}"


def _call(fn: Any, request: Any, address: str, credentials: Credentials, timeout: float = 10.0) -> Any:
    try:
        return fn(request, timeout=timeout)
    except grpc.RpcError as e:
        raise _remote_error(e, address, credentials) from None


def _remote_error(e: grpc.RpcError, address: str, credentials: Credentials) -> RemoteError:
    code = e.code().name if hasattr(e, "code") else "UNKNOWN"
    detail = (e.details() if hasattr(e, "details") else "") or str(e)
    if code == "UNAVAILABLE":
        detail = unreachable(address, detail, credentials is not None)
    return RemoteError(f"{code}: {detail}")


def register_bot(address: str, name: str, *, credentials: Credentials = None) -> tuple[str, str]:
    channel, stub = _stub(address, credentials)
    with channel:
        r = _call(stub.RegisterBot, apb.RegisterBotRequest(name=name), address, credentials)
        return r.bot_id, r.token


def list_bots(address: str, *, credentials: Credentials = None) -> list[apb.BotInfo]:
    channel, stub = _stub(address, credentials)
    with channel:
        return list(_call(stub.ListBots, apb.ListBotsRequest(), address, credentials).bots)


def start_match(address: str, team0: str, team1: str, ruleset: str, seed: str = "",
                deals: int = 0, target: int = 0, *, credentials: Credentials = None) -> str:
    channel, stub = _stub(address, credentials)
    with channel:
        r = _call(stub.StartMatch, apb.StartMatchRequest(
            team0_bot=team0, team1_bot=team1, ruleset=ruleset, seed=seed, deals=deals,
            target=target,
        ), address, credentials)
        return str(r.match_id)


def get_record(address: str, match_id: str, *, credentials: Credentials = None) -> dict[str, Any]:
    channel, stub = _stub(address, credentials)
    with channel:
        r = _call(stub.GetMatchRecord, apb.GetMatchRecordRequest(match_id=match_id), address,
                  credentials)
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


def watch(address: str, match_id: str, out: TextIO = sys.stdout, *,
          credentials: Credentials = None) -> pb.MatchResult | None:
    channel, stub = _stub(address, credentials)
    result = None
    answered = False
    with channel:
        try:
            for msg in stub.WatchMatch(apb.WatchMatchRequest(match_id=match_id)):
                answered = True
                if msg.HasField("event"):
                    print(describe_event(msg.event), file=out, flush=True)
                if msg.HasField("result"):
                    result = msg.result
        except grpc.RpcError as e:
            if answered:  # the stream broke after the node had answered: its own words
                raise RemoteError(f"{e.code().name}: {e.details()}") from None
            raise _remote_error(e, address, credentials) from None
    return result
