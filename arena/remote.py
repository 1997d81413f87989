"""Client side of ArenaService for the command line: bots, matches, watching.

Every call takes ``credentials``: None dials plaintext, and
:func:`channel_credentials` makes them for a node on TLS.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any, TextIO

import grpc
from belote.arena.v1 import arena_service_pb2 as apb
from belote.arena.v1 import arena_service_pb2_grpc as agrpc
from belote.arena.v1 import game_pb2 as pb

from arena.engine.actions import format_action
from arena.engine.cards import CARDS
from arena.records import side_name


class RemoteError(Exception):
    """A gRPC call failed: printed as one line by the CLI. ``code``: its status's name
    (``NOT_FOUND``), "" when no node answered the call."""

    def __init__(self, message: str, code: str = "") -> None:
        super().__init__(message)
        self.code = code


Credentials = grpc.ChannelCredentials | None


def channel_credentials(ca: str | None = None, tls: bool = False) -> Credentials:
    """TLS trusting the CA certificates in the PEM file ``ca``; with ``tls`` and no ``ca``, TLS
    trusting the system's roots (gRPC's own, or ``$GRPC_DEFAULT_SSL_ROOTS_FILE_PATH``); else None
    (plaintext). The same files and checks as a bot's (:mod:`belote_bot.tls`)."""
    from belote_bot.errors import TlsConfigError
    from belote_bot.tls import credentials_for

    try:
        return credentials_for(None, ca or None, tls)
    except TlsConfigError as e:
        raise RemoteError(str(e)) from None


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


def retry_after(e: grpc.RpcError) -> float | None:
    """The seconds a node asked a call it refused to wait before the next one (a RESOURCE_EXHAUSTED
    over its reads a second carries ``retry-after``), else None: any other failure is final."""
    if not hasattr(e, "code") or e.code() != grpc.StatusCode.RESOURCE_EXHAUSTED:
        return None
    trailers: Any = e.trailing_metadata() if hasattr(e, "trailing_metadata") else None
    for key, value in trailers or ():
        if key == "retry-after":
            try:
                return min(max(float(value), 0.0), 60.0)
            except ValueError:
                return None
    return None


def tell_once(out: TextIO | None = None) -> Callable[[float, str], None]:
    """An ``on_wait`` for the command line: says the first time that the node asked it to wait, and
    why, on ``out`` (stderr), so that a long read does not look like a hang."""
    told = False

    def on_wait(seconds: float, why: str) -> None:
        nonlocal told
        if not told:
            told = True
            print(f"the node asks to slow down ({why}): waiting as it says, and again whenever it asks",
                  file=out or sys.stderr, flush=True)

    return on_wait


class Remote:
    """One node's ArenaService, called with ``token`` (the admin credential or a bot's) if any,
    over TLS with ``credentials`` (:func:`channel_credentials`), else plaintext.

    A node limits each address's reads a second (anonymous callers: a tournament's records read
    one after the other go past it). A call it refuses saying when to retry is retried then, for up
    to ``patience`` seconds in all per call; ``on_wait(seconds, why)`` hears of each wait.
    ``no_token_note`` is added to an ``UNAUTHENTICATED`` of a call made without a token: where the
    caller looked for one, and how to make one."""

    def __init__(self, address: str, token: str = "", *, credentials: Credentials = None,
                 timeout: float = 10.0, patience: float = 300.0,
                 on_wait: Callable[[float, str], None] | None = None, no_token_note: str = "") -> None:
        self.address = address
        self.no_token_note = no_token_note
        self.timeout = timeout
        self.patience = patience
        self.on_wait = on_wait
        self.tls = credentials is not None
        self._metadata = (("authorization", f"Bearer {token}"),) if token else ()
        self._channel = (grpc.insecure_channel(address) if credentials is None
                         else grpc.secure_channel(address, credentials))
        self.stub = agrpc.ArenaServiceStub(self._channel)

    def __enter__(self) -> Remote:
        return self

    def __exit__(self, *exc: object) -> None:
        self._channel.close()

    def call(self, method: str, request: Any) -> Any:
        """``method`` of ArenaService with ``request``; a failure is a :class:`RemoteError`, except
        a refusal saying when to retry, which is retried then (within ``patience``)."""
        give_up = time.monotonic() + self.patience
        while True:
            try:
                return getattr(self.stub, method)(request, timeout=self.timeout, metadata=self._metadata)
            except grpc.RpcError as e:
                wait = retry_after(e)
                if wait is None or time.monotonic() + wait > give_up:
                    raise self._error(e) from None
                if self.on_wait is not None:
                    self.on_wait(wait, (e.details() if hasattr(e, "details") else "") or "")
                time.sleep(wait)

    def _error(self, e: grpc.RpcError, answered: bool = False) -> RemoteError:
        code = e.code() if hasattr(e, "code") else grpc.StatusCode.UNKNOWN
        detail = (e.details() if hasattr(e, "details") else "") or ""
        # the node's own words (it answered, or its queue is down), else why nobody answered
        ours = answered or detail.startswith("the tournament queue")
        if code == grpc.StatusCode.UNAVAILABLE and not ours:
            detail = unreachable(self.address, detail, self.tls)
        if code == grpc.StatusCode.UNAUTHENTICATED and not self._metadata and self.no_token_note:
            detail = f"{detail}: {self.no_token_note}"
        return RemoteError(f"{code.name}: {detail}", code.name)

    # bots
    def register_bot(self, name: str, invite: str = "", ladder: bool = False,
                     owner: str = "") -> tuple[str, str]:
        r = self.call("RegisterBot", apb.RegisterBotRequest(name=name, invite=invite, ladder=ladder,
                                                            owner=owner))
        return r.bot_id, r.token

    def list_bots(self) -> list[apb.BotInfo]:
        """Every registered bot, by name: a page at a time (a node answers at most 1,000 a call)."""
        bots: list[apb.BotInfo] = []
        while True:
            page = self.call("ListBots", apb.ListBotsRequest(offset=len(bots)))
            bots.extend(page.bots)
            if not page.bots or len(bots) >= page.total:
                return bots

    # matches
    def start_match(self, team0: str, team1: str, ruleset: str, seed: str = "", deals: int = 0,
                    target: int = 0, seats: list[str] | None = None) -> str:
        """Start a match of ``team0`` against ``team1``; or, with both empty, of the bots of
        ``seats`` (seat 0..3)."""
        r = self.call("StartMatch", apb.StartMatchRequest(
            team0_bot=team0, team1_bot=team1, ruleset=ruleset, seed=seed, deals=deals, target=target,
            seat_bots=seats or []))
        return str(r.match_id)

    def get_record(self, match_id: str) -> dict[str, Any]:
        r = self.call("GetMatchRecord", apb.GetMatchRecordRequest(match_id=match_id))
        data: dict[str, Any] = json.loads(r.record_json)
        return data

    def watch(self, match_id: str, players: Sequence[str] = (),
              out: TextIO | None = None) -> pb.MatchResult | None:
        """Print the match's public events as they come on ``out`` (standard output), each seat
        named after its bot of ``players``, if given; its result."""
        out = out or sys.stdout
        result = None
        answered = False
        try:
            request = apb.WatchMatchRequest(match_id=match_id)
            for msg in self.stub.WatchMatch(request, metadata=self._metadata):
                answered = True
                if msg.HasField("event"):
                    print(describe_event(msg.event, players), file=out, flush=True)
                if msg.HasField("result"):
                    result = msg.result
        except grpc.RpcError as e:
            raise self._error(e, answered) from None
        return result


def describe_event(ev: pb.PublicEvent, players: Sequence[str] = ()) -> str:
    """One line for a public event; with ``players`` (the bots at seats 0..3), each seat named."""
    def seat(s: int) -> str:
        return f"seat {s} ({players[s]})" if 0 <= s < len(players) == 4 else f"seat {s}"

    kind = ev.WhichOneof("event")
    if kind == "deal_started":
        d = ev.deal_started
        extra = f", retourne {CARDS[d.retourne]}" if d.HasField("retourne") else ""
        return f"deal {ev.deal_index + 1}: dealer {seat(d.dealer)}{extra}"
    if kind == "action_played":
        return f"  {seat(ev.action_played.seat)}: {ev.action_played.text}"
    if kind == "trick_completed":
        t = ev.trick_completed
        return f"  trick to {seat(t.winner)} ({' '.join(str(CARDS[c]) for c in t.cards)})"
    if kind == "declarations_shown":
        shown = ev.declarations_shown
        named = f" ({side_name(players[shown.team], players[shown.team + 2])})" if len(players) == 4 else ""
        who = f"team {shown.team}{named}" if shown.HasField("team") else "nobody"
        return f"  declarations: {who} scores {shown.points}"
    if kind == "deal_ended":
        ended = ev.deal_ended
        return f"  deal score {list(ended.score)}, match {list(ended.match_score)}"
    if kind == "strike_given":
        s = ev.strike_given
        return (f"  STRIKE {seat(s.seat)} ({s.strikes}): {s.reason}; "
                f"played {format_action(s.fallback_action)}")
    return f"  {kind}"
