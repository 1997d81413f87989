"""The ``belote-arena`` command.

Exit codes: 0 success; 1 bad input (a malformed or illegal record, an unknown
ruleset); 2 a usage error. Bad input prints one ``error:`` line, never a
traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arena.engine import EngineError, Match, Ruleset, observe
from arena.engine.bots import PLAYERS
from arena.engine.cards import CARDS, SUITS
from arena.engine.record import (
    match_outcome_json,
    match_record,
    replay_deal,
    replay_match,
)
from arena.engine.rules import spec_from_text
from arena.engine.scoring import DealOutcome
from arena.hints import DEFAULT_ADDRESS, DEFAULT_DATA_DIR, default_address, shell
from arena.rankings_cli import add_parser as add_rankings_parser
from arena.records import BOT_NAME_RULE, MAX_DEALS, side_name, valid_bot_name
from arena.tournament.spec import MAX_ROUNDS
from arena.tournament_cli import TournamentCliError, add_verify_parser
from arena.tournament_cli import add_parser as add_tournament_parser

# replay and selfplay need the engine alone: every other command imports what it needs itself
if TYPE_CHECKING:
    import grpc

    from arena.remote import Remote


class CliError(Exception):
    """Bad input to a command: printed as one line, exit 1."""


@contextlib.contextmanager
def _one_line(*errors: type[Exception]) -> Iterator[None]:
    """The errors of a command's layer (a refused RPC, an unreachable broker) are printed as one line."""
    try:
        yield
    except errors as e:
        raise CliError(str(e)) from None


# ------------------------------------------------------------------ replay
def _read_record(path: str) -> bytes:
    """The bytes of ``path`` (standard input for ``-``), read no further than the largest record
    there can be (:data:`MAX_RECORD_BYTES`): anything larger is refused, not read to its end."""
    try:
        if path == "-":
            data = sys.stdin.buffer.read(MAX_RECORD_BYTES + 1)
        else:
            with open(path, "rb") as f:
                # a file known too large is refused unread; /dev/zero or a pipe (size 0) is read so far
                if os.fstat(f.fileno()).st_size > MAX_RECORD_BYTES:
                    raise CliError(_too_large(path))
                data = f.read(MAX_RECORD_BYTES + 1)
    except OSError as e:
        raise CliError(f"cannot read {path}: {e.strerror or e}") from None
    if len(data) > MAX_RECORD_BYTES:
        raise CliError(_too_large(path))
    return data


def _too_large(path: str) -> str:
    return (f"{_named(path)} is larger than the largest record there can be ({MAX_RECORD_BYTES:,} "
            f"bytes, for {MAX_DEALS:,} deals): not a record")


def _named(path: str) -> str:
    return "the standard input" if path == "-" else path


def _load_json(path: str) -> Any:
    data = _read_record(path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise CliError(f"{_named(path)} is not UTF-8 text (byte {e.start:,} is not): not a record") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise CliError(f"{_named(path)} is not valid JSON: {e.msg} at line {e.lineno} column "
                       f"{e.colno}") from None
    except RecursionError:
        raise CliError(f"{_named(path)} is not a record: its JSON is nested too deeply") from None


def _describe_deal(o: DealOutcome, players: Sequence[str] = ()) -> list[str]:
    """The deal's lines; with ``players`` (the bots at seats 0..3), each seat and team named."""
    def seat(s: int) -> str:
        return f"seat {s} ({players[s]})" if players else f"seat {s}"

    def team(t: int) -> str:
        return f"team {t} ({team_name(players, t)})" if players else f"team {t}"

    if o.thrown_in:
        return ["  thrown in: no score"]
    lines = []
    contract = SUITS[o.trump]
    if o.value:
        contract = (f"capot{contract}" if o.value == 250 else f"{o.value}{contract}") + (
            {1: "", 2: " coinched", 4: " surcoinched"}[o.multiplier]
        )
    lines.append(f"  takers: {team(o.takers)}  trump/contract: {contract}")
    for i, (leader, cards, winner) in enumerate(o.tricks, 1):
        shown = " ".join(str(CARDS[c]) for c in cards)
        lines.append(f"  trick {i}: {seat(leader)} leads  {shown}  -> {seat(winner)}")
    made = {True: "made", False: "failed (dedans)", None: "litige"}[o.made]
    lines.append(f"  card points {o.card_points[0]}-{o.card_points[1]}  belote: "
                 f"{team(o.belote) if o.belote is not None else 'none'}  "
                 f"declarations {o.declarations[0]}-{o.declarations[1]}")
    lines.append(f"  {made}; score {o.score[0]}-{o.score[1]}"
                 + (f"; {o.held_for_next_deal} held for the next deal" if o.held_for_next_deal else ""))
    return lines


def seat_names(rec: dict[str, Any]) -> list[str]:
    """The names at seats 0..3 a record's free-form ``players`` gives: one a seat (the arena's), or
    one a team (``selfplay``'s, each ending in " (team N)", left out here); else none."""
    players = rec.get("players")
    if not isinstance(players, list) or not all(isinstance(p, str) and p for p in players):
        return []
    if len(players) == 2:
        teams = [p.removesuffix(f" (team {t})") for t, p in enumerate(players)]
        return [teams[s & 1] for s in range(4)]
    return list(players) if len(players) == 4 else []


def team_name(players: Sequence[str], team: int) -> str:
    """A side's name, from the bots at seats 0..3 (:func:`arena.records.side_name`)."""
    return side_name(players[team], players[team + 2])


def seats_line(players: Sequence[str]) -> str:
    """Who sits where: ``seats: 0 alpha, 1 beta, 2 alpha, 3 beta (team 0: alpha, team 1: beta)``."""
    return (f"seats: {', '.join(f'{seat} {name}' for seat, name in enumerate(players))} "
            f"(team 0: {team_name(players, 0)}, team 1: {team_name(players, 1)})")


def cmd_replay(args: argparse.Namespace) -> int:
    rec = _load_json(args.file)
    if not isinstance(rec, dict):
        raise CliError(f"{args.file}: a record is a JSON object, not {type(rec).__name__}")
    if "deals" in rec:
        match, outcomes = replay_match(rec)
        if args.json:
            print(json.dumps(match_outcome_json(match)))
            return 0
        players = seat_names(rec)
        if players:
            print(seats_line(players))
        for i, o in enumerate(outcomes):
            dealer = match.deals[i].dealer
            print(f"deal {i + 1} (dealer seat {dealer}{', ' + players[dealer] if players else ''}):")
            print("\n".join(_describe_deal(o, players)))
        named = f" ({team_name(players, match.winner)})" if players and match.winner is not None else ""
        w = "not decided" if match.winner is None else f"team {match.winner}{named} wins"
        print(f"match: {match.totals[0]}-{match.totals[1]}, {w}")
        return 0
    _, outcome = replay_deal(rec)
    if args.json:
        print(json.dumps(outcome.as_json()))
    else:
        print("\n".join(_describe_deal(outcome)))
    return 0


# ---------------------------------------------------------------- selfplay
def cmd_selfplay(args: argparse.Namespace) -> int:
    rules = Ruleset.from_spec(spec_from_text(args.ruleset, "--ruleset"))
    if args.deals < 1:
        raise CliError("--deals must be at least 1")
    names = args.players.split(",")
    if len(names) != 2 or any(n not in PLAYERS for n in names):
        raise CliError(
            f"--players takes two of {', '.join(PLAYERS)} separated by a comma, not {args.players!r}"
        )
    players = [PLAYERS[n]() for n in names]
    rng = random.Random(f"selfplay/{args.seed}")
    match = Match(rules.with_options(deals=args.deals), args.seed)
    stats = {k: [0, 0] for k in ("taken", "made", "failed", "capots", "belotes", "coinched")}
    litiges = thrown_in = decisions = 0
    start = time.perf_counter()
    while not match.is_over:
        deal = match.new_deal()
        while not deal.is_over:
            seat = deal.to_act
            obs = observe(deal, seat, (match.totals[0], match.totals[1]), match.held)
            deal.apply(players[seat & 1].act(obs, rng))
            decisions += 1
        o = match.add(deal)
        if o.thrown_in:
            thrown_in += 1
            continue
        stats["taken"][o.takers] += 1
        if o.made is None:
            litiges += 1
        else:
            stats["made" if o.made else "failed"][o.takers] += 1
        if o.capot is not None:
            stats["capots"][o.capot] += 1
        if o.belote is not None:
            stats["belotes"][o.belote] += 1
        if o.multiplier > 1:
            stats["coinched"][o.takers] += 1
    elapsed = time.perf_counter() - start
    summary: dict[str, Any] = {
        "ruleset": rules.to_spec(), "deals": args.deals, "seed": args.seed,
        "players": names, "points": list(match.totals), "winner": match.winner,
        **stats, "litiges": litiges, "thrown_in": thrown_in, "decisions": decisions,
        "seconds": round(elapsed, 3), "deals_per_second": round(args.deals / elapsed, 1),
    }
    if args.record:
        try:
            with open(args.record, "w", encoding="utf-8") as f:
                json.dump(match_record(match, [f"{names[0]} (team 0)", f"{names[1]} (team 1)"]), f)
        except OSError as e:
            raise CliError(f"cannot write {args.record}: {e.strerror or e}") from None
        summary["record"] = args.record
    if args.json:
        print(json.dumps(summary))
        return 0
    print(f"selfplay: {args.deals} deals of {rules.preset}, seed {args.seed}, "
          f"team 0 {names[0]} (seats 0, 2) vs team 1 {names[1]} (seats 1, 3)")
    print(f"{'':14}{'team 0':>10}{'team 1':>10}")
    print(f"{'points':14}{match.totals[0]:>10}{match.totals[1]:>10}")
    for k in ("taken", "made", "failed", "coinched", "capots", "belotes"):
        print(f"{k:14}{stats[k][0]:>10}{stats[k][1]:>10}")
    print(f"litiges {litiges}, thrown in {thrown_in}, {decisions} decisions")
    print(f"time {elapsed:.2f} s ({args.deals / elapsed:.0f} deals/s)")
    if args.record:
        check = shell("belote-arena", "replay", args.record)
        print(f"match record written to {args.record}; check it: {check}")
    return 0


# --------------------------------------------------------- argument checks
# What a command is given is checked before it does anything: a bad value is one ``error:``
# line and exit 1. The limits of a match and of a bot's name are the node's own (the node checks
# them again: these only save a round trip); the others keep a value from being absurd (an
# infinite deadline, a drain of a year) rather than from being unusual.
MAX_CAPACITY = 1000
MAX_STRIKES = 1000

# The largest record there can be, in bytes: what ``replay`` reads at most (a larger input, such as
# /dev/zero, is refused, not read to its end). A match record (docs/records.md) has at most
# MAX_DEALS deals and an unfinished one; each deal, as the engine writes it, is under 2,000 bytes:
# its hands and deck (64 cards of 6 bytes written: 384), its bids (coinche: at most 10 rising bids
# with 2 passes between them, a coinche, a surcoinche and the last 3 passes: under 40 actions of 12
# bytes: 480), its 32 plays (14 bytes each with a belote word, and declaration words on the first
# cards: 608) and its dealer, retourne, packets and keys (150); the largest of 1,000 coinche deals
# measured 767. An arena record adds each deal's latencies and the times its decisions were asked
# (``latencies_us`` and ``asked_ms``: at most 72 decisions of 12 bytes each, twice: 1,800), at most
# 2 x MAX_STRIKES strikes (serve's limit on --max-strikes) of under 1,000 bytes (the answer, the
# legal actions, the fallback and the reason: about 600) and a few kilobytes of players, bots, time
# control and result: 5.8 MB written compactly. A record pretty-printed takes more room (2.5x with
# an indent of 2), hence the margin of 4: 23.2 MB.
DEAL_BYTES = 2_000
DEAL_TIMES_BYTES = 1_800
STRIKE_BYTES = 1_000
RECORD_FIXED_BYTES = 8_192
MAX_RECORD_BYTES = 4 * ((MAX_DEALS + 1) * (DEAL_BYTES + DEAL_TIMES_BYTES)
                        + 2 * MAX_STRIKES * STRIKE_BYTES + RECORD_FIXED_BYTES)
#: the most any of the node's limits (streams, watchers, seats of a stream) may be set to
MAX_LIMIT = 1_000_000
#: seconds: the most a decision's deadline may be, and every other duration
MAX_DEADLINE = 600.0
MAX_SECONDS = 3600.0


def check_whole(flag: str, value: int, low: int, high: int, note: str = "") -> None:
    if not low <= value <= high:
        raise CliError(f"{flag} must be a whole number from {low} to {high}{note}, not {value}")


def check_seconds(flag: str, value: float, high: float, *, zero: bool) -> None:
    """A duration: finite, at most ``high``; more than 0, or at least 0 when ``zero``."""
    if not (0 <= value <= high and (zero or value > 0)):  # NaN fails every comparison
        low = "from 0" if zero else "more than 0 and"
        raise CliError(f"{flag} must be {low} up to {high:g} seconds, not {value:g}")


def check_address(flag: str, address: str, *, any_port: bool) -> None:
    """HOST:PORT, the port from 1 to 65535 (or 0, a free port, when ``any_port``)."""
    host, _, port = address.rpartition(":")
    low = 0 if any_port else 1
    if not host or any(c.isspace() for c in host) or not port.isdigit() or not low <= int(port) <= 65535:
        raise CliError(f"{flag} must be HOST:PORT with a port from {low} to 65535, not {address!r}")


def check_bot_name(what: str, name: str) -> None:
    if not valid_bot_name(name):
        raise CliError(f"bad bot name {name!r} in {what}: {BOT_NAME_RULE}")


def check_serve(args: argparse.Namespace) -> None:
    check_address("--listen", args.listen, any_port=True)
    if args.http:
        check_address("--http", args.http, any_port=True)
    if args.advertise:
        check_address("--advertise", args.advertise, any_port=False)
    check_whole("--capacity", args.capacity, 1, MAX_CAPACITY)
    check_whole("--max-strikes", args.max_strikes, 1, MAX_STRIKES)
    check_seconds("--deadline", args.deadline, MAX_DEADLINE, zero=False)
    check_seconds("--time-bank", args.time_bank, MAX_SECONDS, zero=True)
    check_seconds("--grace", args.grace, MAX_SECONDS, zero=True)
    check_seconds("--lease", args.lease, MAX_SECONDS, zero=False)
    check_seconds("--drain", args.drain, MAX_SECONDS, zero=True)
    check_seconds("--absent-timeout", args.absent_timeout, 7 * 24 * MAX_SECONDS, zero=False)
    check_seconds("--hello-timeout", args.hello_timeout, MAX_DEADLINE, zero=False)
    check_seconds("--refusal-hold", args.refusal_hold, MAX_DEADLINE, zero=True)
    check_seconds("--send-timeout", args.send_timeout, MAX_DEADLINE, zero=False)
    for flag, value in (("--max-concurrency", args.max_concurrency),
                        ("--max-streams-per-address", args.max_streams_per_address),
                        ("--max-streams", args.max_streams),
                        ("--max-watchers-per-match", args.max_watchers_per_match),
                        ("--max-watchers-per-address", args.max_watchers_per_address),
                        ("--max-watchers", args.max_watchers),
                        ("--max-calls-per-address", args.max_calls_per_address),
                        ("--read-rate-per-address", args.read_rate_per_address),
                        ("--read-burst-per-address", args.read_burst_per_address),
                        ("--http-max-connections-per-address", args.http_max_connections_per_address),
                        ("--http-max-connections", args.http_max_connections),
                        ("--http-max-watchers-per-address", args.http_max_watchers_per_address),
                        ("--max-replays-per-address", args.max_replays_per_address),
                        ("--max-replays", args.max_replays),
                        ("--replay-cache-mb", args.replay_cache_mb),
                        ("--replay-mb-per-s", args.replay_mb_per_s),
                        ("--replay-events-per-s", args.replay_events_per_s)):
        check_whole(flag, value, 1, MAX_LIMIT)
    check_seconds("--http-head-timeout", args.http_head_timeout, MAX_DEADLINE, zero=False)
    check_http(args)


def check_http(args: argparse.Namespace) -> None:
    """The web server's TLS pair and public origin (the pair's files are checked when loaded)."""
    if (args.http_tls_cert is None) != (args.http_tls_key is None):
        raise CliError("--http-tls-cert and --http-tls-key go together: the pages are served over TLS with "
                       "both, plaintext with neither")
    if args.http_origin:
        scheme, _, rest = args.http_origin.partition("://")
        if scheme not in ("http", "https") or not rest or "/" in rest.rstrip("/") or any(
                c.isspace() for c in rest):
            raise CliError(f"--http-origin must be http(s)://HOST[:PORT], the address browsers use, not "
                           f"{args.http_origin!r}")
    for flag, value in (("--http-tls-cert", args.http_tls_cert), ("--http-origin", args.http_origin)):
        if value and not args.http:
            raise CliError(f"{flag} is for the web pages: give --http HOST:PORT too")


def check_demo(args: argparse.Namespace) -> None:
    if args.http:
        check_address("--http", args.http, any_port=True)
    check_whole("--rounds", args.rounds, 1, MAX_ROUNDS)
    check_whole("--deals", args.deals, 0, MAX_DEALS, " (0: play to the target)")


def check_match(args: argparse.Namespace) -> None:
    check_whole("--deals", args.deals, 0, MAX_DEALS, " (0: play to the target)")
    if args.action == "start":
        for bot in args.ids:
            check_bot_name("match start", bot)


# ------------------------------------------------------------ node, remote
def _quiet_grpc() -> None:
    """Keep gRPC core's INFO lines off (unless ``$GRPC_VERBOSITY`` says otherwise); its errors show.

    It logs a line for every failed TLS handshake: on a node any stranger could fill the log with
    them, and a command would print two lines for one refusal. gRPC reads the variable once, when
    it loads, so this runs before a command imports it.
    """
    import os

    os.environ.setdefault("GRPC_VERBOSITY", "ERROR")


def cmd_serve(args: argparse.Namespace) -> int:
    import asyncio
    import logging
    from pathlib import Path

    from arena.credentials import CredentialError, given_admin_token, node_admin_token
    from arena.logformat import configure as configure_logging
    from arena.node.run import NodeSettings, RunningNode, serve_forever
    from arena.queue import BrokerError, open_broker
    from arena.records import TimeControl
    from arena.referee.access import AccessPolicy, Registration
    from arena.referee.node import Limits
    from arena.referee.registry import digest
    from arena.referee.serve import install_uvloop
    from arena.referee.tls import TlsError, server_context, server_credentials

    check_serve(args)
    if (args.tls_cert is None) != (args.tls_key is None):
        raise CliError("--tls-cert and --tls-key go together: the node serves TLS with both, plaintext "
                       "with neither")
    if args.tls_cert is not None:
        with _one_line(TlsError):  # checked before anything starts: a bad pair is one line, exit 1
            server_credentials(args.tls_cert, args.tls_key)
    with _one_line(CredentialError):  # a weak credential given stops the node before anything starts
        given_admin_token(args.admin_token_file)
    configure_logging(args.log_format)
    install_uvloop()
    tc = TimeControl(deadline=args.deadline, time_bank=args.time_bank, max_strikes=args.max_strikes,
                     grace=args.grace)
    data = None if args.data_dir == "" else Path(args.data_dir)
    with _one_line(CredentialError, OSError):
        admin, where = node_admin_token(args.admin_token_file, data)
    access = AccessPolicy(admin_sha256=digest(admin), registration=Registration(args.registration),
                          private_reads=args.private_reads)
    limits = Limits(hello_timeout=args.hello_timeout, max_concurrency=args.max_concurrency,
                    max_streams_per_peer=args.max_streams_per_address, max_streams=args.max_streams,
                    max_watchers_per_match=args.max_watchers_per_match,
                    max_watchers_per_peer=args.max_watchers_per_address, max_watchers=args.max_watchers,
                    max_calls_per_peer=args.max_calls_per_address, refusal_hold=args.refusal_hold,
                    max_replays_per_address=args.max_replays_per_address, max_replays=args.max_replays,
                    replay_cache_bytes=args.replay_cache_mb << 20,
                    replay_bytes_per_s=args.replay_mb_per_s << 20,
                    replay_messages_per_s=args.replay_events_per_s,
                    read_rate_per_peer=args.read_rate_per_address,
                    read_burst_per_peer=args.read_burst_per_address, send_timeout=args.send_timeout)
    settings = NodeSettings(
        listen=args.listen, advertise=args.advertise, data_dir=data, time=tc, capacity=args.capacity,
        lease_s=args.lease, drain_s=args.drain, replace_streams=args.replace_streams, access=access,
        limits=limits,
        absent_timeout_s=args.absent_timeout,
        tls_cert=None if args.tls_cert is None else Path(args.tls_cert),
        tls_key=None if args.tls_key is None else Path(args.tls_key),
    )
    url = _redis_url(args)
    log = logging.getLogger("arena.node")
    log.info("queue: %s", _queue_named(url, data), extra={"event": "queue",
                                                         "queue": "redis" if url else "embedded"})
    with _one_line(BrokerError):
        broker = open_broker(url, data)
    log.info("admin credential in %s; bot registration: %s; reads: %s", where, args.registration,
             "need a credential" if args.private_reads else "public")
    beside = None
    if args.http:
        from arena.web import WebConfig, WebLimits, web_for

        web = WebConfig(
            limits=WebLimits(head_timeout=args.http_head_timeout,
                             connections_per_address=args.http_max_connections_per_address,
                             connections=args.http_max_connections,
                             watchers_per_address=args.http_max_watchers_per_address),
            tls_cert=None if args.http_tls_cert is None else Path(args.http_tls_cert),
            tls_key=None if args.http_tls_key is None else Path(args.http_tls_key),
            origin=args.http_origin)
        if web.tls_cert is not None and web.tls_key is not None:
            with _one_line(TlsError):
                server_context(web.tls_cert, web.tls_key)

        def beside(running: RunningNode) -> contextlib.AbstractAsyncContextManager[object]:
            return web_for(running, args.http, web)
    try:
        with _one_line(TlsError, OSError, BrokerError):  # OSError: the HTTP port is taken
            asyncio.run(serve_forever(broker, settings, beside))
    finally:
        broker.close()
    return 0


def _queue_named(url: str | None, data: Path | None) -> str:
    """The queue a node uses, for its log: Redis at its URL (never its password), or the embedded one."""
    from arena.queue import DATABASE_NAME
    from arena.queue.keys import DEFAULT_PREFIX

    if url:
        from arena.queue.redis_broker import redact

        return f"Redis at {redact(url)}, its keys under {DEFAULT_PREFIX}:"
    return f"embedded, in {data / DATABASE_NAME}" if data else "embedded, in memory (no --data-dir)"


def _redis_url(args: argparse.Namespace) -> str | None:
    import os

    url: str | None = getattr(args, "redis", None) or os.environ.get("BELOTE_REDIS") or None
    return url


def cmd_demo(args: argparse.Namespace) -> int:
    from arena.demo import main as demo_main

    check_demo(args)
    rulesets = [r.strip() for r in args.rulesets.split(",") if r.strip()]
    for r in rulesets:
        Ruleset.from_spec(r)
    return demo_main(args.data_dir, args.deals or None, args.rounds, args.seed, rulesets, http=args.http,
                     fmt=args.format)


def _admin(args: argparse.Namespace) -> str:
    from arena.credentials import CredentialError, admin_token

    with _one_line(CredentialError):
        return admin_token(getattr(args, "admin_token_file", None), getattr(args, "data_dir", None))


def _remote(args: argparse.Namespace, token: str) -> Remote:
    """The node ``args`` names, called with ``token`` (a command with none is told, when refused,
    where it looked for the admin credential)."""
    from arena.credentials import where_admin_looked
    from arena.remote import Remote, tell_once

    return Remote(args.address, token, credentials=_dial(args), on_wait=tell_once(),
                  no_token_note=where_admin_looked(getattr(args, "data_dir", None)))


def cmd_admin(args: argparse.Namespace) -> int:
    """``admin token``: a fresh admin credential, printed, or written to a new private file."""
    from arena.credentials import CredentialError, new_admin_token, save_secret

    token = new_admin_token()
    if not args.file:
        print(token)
        return 0
    with _one_line(CredentialError):
        save_secret(Path(args.file), token, "the admin credential")
    print(f"a new admin credential in {args.file} (readable by you only; 256 random bits): start every node "
          f"with {shell('--admin-token-file', args.file)}, and give the commands the same option")
    return 0


def _bot_token(args: argparse.Namespace) -> str:
    """A bot's own token: ``$BELOTE_TOKEN`` or ``--token-file`` (never the command line)."""
    import os
    from pathlib import Path

    from arena.credentials import CredentialError, read_secret

    if args.token_file:
        with _one_line(CredentialError):
            return read_secret(Path(args.token_file))
    token = os.environ.get("BELOTE_TOKEN", "").strip()
    if not token:
        raise CliError("give the bot's token in $BELOTE_TOKEN or with --token-file")
    return token


def _dial(args: argparse.Namespace) -> grpc.ChannelCredentials | None:
    """The remote commands' channel credentials: TLS with ``--tls-ca`` or ``--tls``, else plaintext."""
    from arena.remote import channel_credentials

    return channel_credentials(args.tls_ca or None, args.tls)


def cmd_bot(args: argparse.Namespace) -> int:
    from arena.credentials import CredentialError, check_new_file
    from arena.remote import RemoteError

    action = args.action
    if action == "register":
        if not args.name:
            raise CliError("bot register needs a NAME")
        check_bot_name("bot register", args.name)
        if args.token_file or not args.json:  # checked before the node makes a token only it will hold
            with _one_line(CredentialError):
                check_new_file(Path(_new_token_file(args)), f"the token of {args.name}")
    elif action == "revoke" and args.name:
        check_bot_name("bot revoke", args.name)
    elif action == "rotate" and args.token_file and not os.access(Path(args.token_file).parent, os.W_OK):
        # the new token replaces the old in its file: a folder it cannot be written in loses it
        raise CliError(f"cannot write the bot's new token to {args.token_file}: its folder is not writable")
    mine = action == "rotate" or (action == "revoke" and not args.name)
    token = _bot_token(args) if mine else _admin(args)
    with _one_line(RemoteError, CredentialError), _remote(args, token) as remote:
        if action == "register":
            bot_id, new = remote.register_bot(args.name, args.invite)
            _registered(args, bot_id, new)
        elif action == "rotate":
            reply = remote.call("RotateBotToken", apb_request("RotateBotTokenRequest"))
            _rotated(args, reply.token)
        elif action == "revoke":
            remote.call("RevokeBot", apb_request("RevokeBotRequest", name=args.name or ""))
            print(f"revoked {args.name or 'the bot'}: its token no longer works")
        elif action == "invite":
            code = remote.call("CreateInvite", apb_request("CreateInviteRequest")).invite
            print(json.dumps({"invite": code}) if args.json else
                  f"invite code (good for one registration, shown once): {code}")
        else:
            bots = remote.list_bots()
            if args.json:
                print(json.dumps([{"bot_id": b.bot_id, "name": b.name, "connected": b.connected,
                                   "concurrency": b.concurrency, "seats_in_use": b.seats_in_use,
                                   "revoked": b.revoked} for b in bots]))
                return 0
            for b in bots:
                state = ("revoked" if b.revoked else
                         f"connected, {b.seats_in_use}/{b.concurrency} seats" if b.connected else "offline")
                print(f"{b.name:20} {b.bot_id:14} {state}")
    return 0


def _new_token_file(args: argparse.Namespace) -> str:
    """Where ``bot register`` keeps the new token: ``--token-file``, else NAME.token here."""
    return str(args.token_file or f"{args.name}.token")


def _registered(args: argparse.Namespace, bot_id: str, token: str) -> None:
    """Keep a new bot's token in its file (``--json`` without ``--token-file``: print it), and say
    how to run a bot with it."""
    from arena.credentials import CredentialError, save_secret
    from arena.hints import run_bot, shipped_bot

    reply: dict[str, str] = {"bot_id": bot_id, "name": args.name}
    if args.json and not args.token_file:
        print(json.dumps({**reply, "token": token}))
        return
    path = _new_token_file(args)
    try:
        save_secret(Path(path), token, f"the token of {args.name}")
    except CredentialError as e:
        # the bot is registered now, and this is its token's only copy: shown rather than lost
        raise CliError(f"{e}; {args.name} is registered as {bot_id}, and its token, shown this once, is "
                       f"{token}") from None
    if args.json:
        print(json.dumps({**reply, "token_file": path}))
        return
    print(f"registered {args.name} as {bot_id}; its token is in {path} (readable by you only, shown nowhere "
          f"else: a token never goes on a command line)")
    module = shipped_bot(args.name)
    if module is None:
        print(f"your bot reads it from there: run(MyBot(), {args.address!r}, "
              f"token=open({path!r}).read().strip()); or the random bot plays under this name")
    print(f"run it: {run_bot(args, module or 'random', path)}")


def _rotated(args: argparse.Namespace, token: str) -> None:
    """The new token of a rotation: in the bot's ``--token-file``, replacing the old one; else printed
    once (the old one came from ``$BELOTE_TOKEN``)."""
    from arena.credentials import replace_secret

    if args.token_file:
        replace_secret(Path(args.token_file), token, "the bot's new token")
        print(json.dumps({"token_file": args.token_file}) if args.json else
              f"the bot's new token is in {args.token_file}, in place of the old one, which no longer works: "
              f"restart the bot's processes, which read it when they start")
    elif args.json:
        print(json.dumps({"token": token}))
    else:
        print(f"the bot's new token (shown once; the old one no longer works): {token}\n"
              f"give it to the bot's processes as $BELOTE_TOKEN (or in a file: --token-file), and restart "
              f"them")


def apb_request(message: str, **fields: Any) -> Any:
    """An ArenaService request message (the proto modules load only when a remote command runs)."""
    from belote.arena.v1 import arena_service_pb2 as apb

    return getattr(apb, message)(**fields)


#: seconds ``match start`` waits for bots the node says are not connected yet (just started ones)
CONNECT_WAIT = 10.0


def cmd_match(args: argparse.Namespace) -> int:
    from arena.remote import RemoteError

    check_match(args)
    with _one_line(RemoteError), _remote(args, _admin(args)) as remote:
        if args.action == "start":
            if len(args.ids) not in (2, 4):
                raise CliError("match start takes two bots, TEAM0 TEAM1, or four, one a seat: "
                               "SEAT0 SEAT1 SEAT2 SEAT3 (team 0 is seats 0 and 2)")
            match_id = _start_match(args, remote)
            print(match_id, flush=True)
            players = _seated(remote, match_id)
            if args.watch:
                _print_result(remote.watch(match_id, players), players)
            return 0
        if len(args.ids) != 1:
            raise CliError(f"match {args.action} takes one MATCH_ID")
        if args.action == "watch":
            players = _seated(remote, args.ids[0])
            _print_result(remote.watch(args.ids[0], players), players)
        elif args.action == "cancel":
            remote.call("CancelMatch", apb_request("CancelMatchRequest", match_id=args.ids[0]))
            print(f"match {args.ids[0]} cancelled: it is not recorded")
        else:
            print(json.dumps(remote.get_record(args.ids[0])))
        return 0


def _start_match(args: argparse.Namespace, remote: Remote) -> str:
    """Start the match; while the node says one of its bots is not connected, try again for up to
    :data:`CONNECT_WAIT` seconds (a bot started a moment ago is still connecting), saying so once."""
    from arena.remote import RemoteError

    teams, seats = (args.ids, None) if len(args.ids) == 2 else (["", ""], args.ids)
    give_up = time.monotonic() + CONNECT_WAIT
    told = False
    while True:
        try:
            return str(remote.start_match(teams[0], teams[1], args.ruleset, seed=str(args.seed or ""),
                                          deals=args.deals or 0, seats=seats))
        except RemoteError as e:
            waiting = str(e).startswith("FAILED_PRECONDITION") and "is not connected" in str(e)
            if not waiting or time.monotonic() > give_up:
                raise
            if not told:
                told = True
                print(f"{str(e).partition(': ')[2]}: waiting up to {CONNECT_WAIT:g} s for it to connect",
                      file=sys.stderr, flush=True)
            time.sleep(0.25)


def _seated(remote: Remote, match_id: str) -> list[str]:
    """The bots at seats 0..3 of a match, printed as one line (empty if the node does not say)."""
    from arena.remote import RemoteError

    try:
        reply = remote.call("GetMatch", apb_request("GetMatchRequest", match_id=match_id))
        players = list(reply.match.players)
    except RemoteError:
        return []  # watching says what is wrong with the match, if anything
    if len(players) != 4:
        return []
    print(seats_line(players), flush=True)
    return players


def _print_result(result: Any, players: Sequence[str] = ()) -> None:
    if result is None:
        return
    named = f" ({team_name(players, result.winner)})" if players and result.HasField("winner") else ""
    winner = f"team {result.winner}{named} wins" if result.HasField("winner") else "no winner"
    detail = f" ({result.detail})" if result.detail else ""
    print(f"match {result.reason}: {list(result.totals)}, {winner}{detail}")


# -------------------------------------------------------------------- main
def credentials(p: argparse.ArgumentParser, *, bot: bool) -> None:
    """The flags that say where credentials are: files and variables, never their values."""
    p.add_argument("--admin-token-file", metavar="FILE",
                   help="the admin credential (default: $BELOTE_ADMIN_TOKEN, else DATA_DIR/admin.token)")
    if not any(a.dest == "data_dir" for a in p._actions):
        p.add_argument("--data-dir", default=DEFAULT_DATA_DIR,
                       help="the node's data directory on this machine, where admin.token is")
    if bot:
        p.add_argument("--token-file", metavar="FILE",
                       help="register: where the new bot's token is kept (a new file, readable by you only; "
                            "default: NAME.token here, or printed with --json); rotate and revoke: the bot's "
                            "own token (default: $BELOTE_TOKEN), replaced by the new one on rotate")


def _add_tls_arguments(p: argparse.ArgumentParser) -> None:
    """How a remote command dials a node on TLS (the same choice as the bots' ``--tls-ca``)."""
    import os

    p.add_argument("--tls-ca", metavar="PEM", default=os.environ.get("BELOTE_TLS_CA", ""),
                   help="dial the node over TLS, trusting the CA certificates in PEM "
                        "(default: $BELOTE_TLS_CA; neither this nor --tls: plaintext)")
    p.add_argument("--tls", action="store_true",
                   help="dial the node over TLS, trusting the system's CA certificates")


ADDRESS_HELP = f"the node, HOST:PORT (default: $BELOTE_ADDRESS, else {DEFAULT_ADDRESS})"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="belote-arena", description="Belote Arena: referee, tournaments, ratings"
    )
    sub = p.add_subparsers(dest="command", required=True)

    r = sub.add_parser("replay", help="check every action of a deal or match record and print the outcome")
    r.add_argument("file", help="a JSON deal or match record (docs/records.md); - for standard input")
    r.add_argument("--json", action="store_true", help="print the outcome as JSON")
    r.set_defaults(func=cmd_replay)

    s = sub.add_parser("selfplay", help="play deals in-process between built-in players")
    s.add_argument("--ruleset", default="coinche", help="a preset name or a JSON ruleset object")
    s.add_argument("--deals", type=int, default=100)
    s.add_argument("--seed", default="0")
    s.add_argument("--players", default="heuristic,random", help="team 0 and team 1 players")
    s.add_argument("--record", metavar="FILE", help="write the match record to FILE")
    s.add_argument("--json", action="store_true", help="print the summary as JSON")
    s.set_defaults(func=cmd_selfplay)

    v = sub.add_parser("serve", help="run a referee node")
    v.add_argument("--listen", default=DEFAULT_ADDRESS,
                   help="address:port to listen on (default: %(default)s)")
    v.add_argument("--data-dir", default=DEFAULT_DATA_DIR, help="where bots and match records are kept")
    v.add_argument("--deadline", type=float, default=1.0, help="seconds per decision")
    v.add_argument("--time-bank", type=float, default=10.0, help="extra seconds per seat per match")
    v.add_argument("--max-strikes", type=int, default=3, help="strikes that forfeit a match")
    v.add_argument("--grace", type=float, default=10.0, help="seconds a disconnected bot keeps its seats")
    v.add_argument("--redis", metavar="URL", help="share jobs and results through Redis "
                   "(default: $BELOTE_REDIS, else an embedded queue in --data-dir)")
    v.add_argument("--advertise", default="", help="the address bots use for this node (host:port)")
    v.add_argument("--capacity", type=int, default=4, help="matches this node plays at once")
    v.add_argument("--lease", type=float, default=30.0, help="seconds a claimed job is held between renewals")
    v.add_argument("--drain", type=float, default=60.0,
                   help="on SIGTERM, seconds running matches may take to finish before being requeued")
    v.add_argument("--hello-timeout", type=float, default=5.0,
                   help="seconds a bot stream has to send its Hello")
    v.add_argument("--max-concurrency", type=int, default=256, help="seats one bot stream may play at once")
    v.add_argument("--max-streams-per-address", type=int, default=16,
                   help="bot streams open at once from one address (an IPv6 /64)")
    v.add_argument("--max-streams", type=int, default=1024, help="bot streams open at once in all")
    v.add_argument("--max-watchers-per-match", type=int, default=64, help="spectators of one match at once")
    v.add_argument("--max-watchers-per-address", type=int, default=16,
                   help="spectators at once from one address (an IPv6 /64)")
    v.add_argument("--max-watchers", type=int, default=1024, help="spectators at once in all")
    v.add_argument("--max-calls-per-address", type=int, default=32,
                   help="short calls in progress at once from one address (an IPv6 /64)")
    v.add_argument("--read-rate-per-address", type=int, default=20,
                   help="reads a second one address may make on average, gRPC short calls (but health "
                        "checks and the admin's) and web API requests (but event streams) together: a "
                        "call is one, and each 8 KiB of its answer one more (default: %(default)s)")
    v.add_argument("--read-burst-per-address", type=int, default=200,
                   help="reads one address may make at once, above its rate (default: %(default)s)")
    v.add_argument("--max-replays-per-address", type=int, default=2,
                   help="reads of finished matches (WatchMatch, the web's events and match pages) at once "
                        "from one address")
    v.add_argument("--max-replays", type=int, default=16, help="reads of finished matches at once in all")
    v.add_argument("--replay-cache-mb", type=int, default=64,
                   help="MiB of finished matches' prepared views kept for their next readers")
    v.add_argument("--replay-mb-per-s", type=int, default=4,
                   help="MiB a second the web's reads of finished matches send, all together")
    v.add_argument("--replay-events-per-s", type=int, default=1000,
                   help="events a second WatchMatch sends of finished matches, all together")
    v.add_argument("--send-timeout", type=float, default=10.0,
                   help="seconds a reader of a match (WatchMatch, the web's events and finished match "
                        "pages) may take nothing of what it is sent before it is cut (default: %(default)s)")
    v.add_argument("--refusal-hold", type=float, default=1.0,
                   help="seconds a refused call waits for its status, so that clients retrying at once "
                        "slow down (0: none)")
    v.add_argument("--replace-streams", action="store_true",
                   help="a new stream with a connected token takes over (default: refused)")
    v.add_argument("--registration", choices=["admin", "invite", "open"], default="admin",
                   help="who may register a bot: an admin (default), anyone with an invite code, anyone")
    v.add_argument("--private-reads", action="store_true",
                   help="reading bots, matches and tournaments needs a credential (default: public)")
    v.add_argument("--absent-timeout", type=float, default=600.0,
                   help="seconds a tournament's bot may be connected to no node before it forfeits its "
                        "matches (default: %(default)s)")
    credentials(v, bot=False)
    v.add_argument("--tls-cert", metavar="PEM", help="serve TLS with this certificate (the server's "
                   "first, then any intermediates); needs --tls-key. Without both: plaintext, for loopback")
    v.add_argument("--tls-key", metavar="PEM", help="the certificate's private key (unencrypted)")
    v.add_argument("--http", metavar="HOST:PORT", default="",
                   help="also serve the web pages, the read-only JSON API (/api/v1/) and the Prometheus "
                        "metrics (/metrics) there")
    v.add_argument("--http-tls-cert", metavar="PEM",
                   help="serve the pages over TLS with this certificate (as --tls-cert; the same files "
                        "may serve both); needs --http-tls-key. Without both: plaintext")
    v.add_argument("--http-tls-key", metavar="PEM", help="the HTTP certificate's private key (unencrypted)")
    v.add_argument("--http-origin", metavar="URL", default="",
                   help="the origin browsers reach the pages at, when a proxy in front of --http terminates "
                        "TLS (https://arena.example.org): sign-ins must come from it, and the session "
                        "cookie is Secure (default: each request's own scheme and Host)")
    v.add_argument("--http-head-timeout", type=float, default=5.0,
                   help="seconds a new HTTP connection has to send its request head (and finish its TLS "
                        "handshake), and that an idle one is kept (default: %(default)s)")
    v.add_argument("--http-max-connections-per-address", type=int, default=64,
                   help="HTTP connections open at once from one address (an IPv6 /64); behind a proxy, "
                        "all of its clients' (default: %(default)s)")
    v.add_argument("--http-max-connections", type=int, default=512,
                   help="HTTP connections open at once in all (default: %(default)s)")
    v.add_argument("--http-max-watchers-per-address", type=int, default=16,
                   help="live event streams (server-sent events) open at once from one address "
                        "(default: %(default)s)")
    v.add_argument("--log-format", choices=["text", "json"], default="text",
                   help="log lines as text, or as JSON objects one a line (default: %(default)s)")
    v.set_defaults(func=cmd_serve)

    d = sub.add_parser("demo", help="a node, the built-in bots over gRPC, a round-robin, a leaderboard")
    d.add_argument("--data-dir", default="arena-data", help="where the demo's records go")
    d.add_argument("--deals", type=int, default=0, help="deals per match (default: play to the target)")
    d.add_argument("--rounds", type=int, default=10,
                   help="matches per pairing, seating and ruleset (partners: rounds of one table)")
    d.add_argument("--format", choices=["round-robin", "partners"], default="round-robin",
                   help="partners: the four bots at one table, the partnerships rotating each round")
    d.add_argument("--seed", type=int, default=1)
    d.add_argument("--rulesets", default="classic,coinche")
    d.add_argument("--http", metavar="HOST:PORT", default="",
                   help="serve the web pages and JSON API there, and keep serving after the "
                        "tournaments until Ctrl-C")
    d.set_defaults(func=cmd_demo)

    add_tournament_parser(sub)

    b = sub.add_parser("bot", help="register, list, rotate or revoke bots, or make an invite")
    b.add_argument("action", choices=["register", "list", "rotate", "revoke", "invite"])
    b.add_argument("name", nargs="?", help="register: the new bot's name; revoke: a bot (admin)")
    b.add_argument("--invite", default="", help="register: an invite code (a node whose policy is invite)")
    b.add_argument("--address", default=default_address(), help=ADDRESS_HELP)
    _add_tls_arguments(b)
    b.add_argument("--json", action="store_true")
    credentials(b, bot=True)
    b.set_defaults(func=cmd_bot)

    m = sub.add_parser("match", help="start, cancel, watch or fetch the record of a match on a node")
    m.add_argument("action", choices=["start", "cancel", "watch", "record"])
    m.add_argument("ids", nargs="*", help="start: TEAM0 TEAM1, or SEAT0 SEAT1 SEAT2 SEAT3 for partners "
                   "that are different bots (bot names or ids); the others: MATCH_ID")
    m.add_argument("--address", default=default_address(), help=ADDRESS_HELP)
    _add_tls_arguments(m)
    m.add_argument("--ruleset", default="classic")
    m.add_argument("--deals", type=int, default=0, help="a fixed number of deals (default: to the target)")
    m.add_argument("--seed", default="", help="for tests and reproductions (default: the node's secret)")
    m.add_argument("--watch", action="store_true", help="follow the match once started")
    credentials(m, bot=False)
    m.set_defaults(func=cmd_match)

    a = sub.add_parser("admin", help="make an admin credential")
    a.add_argument("action", choices=["token"])
    a.add_argument("--file", metavar="FILE",
                   help="write it to FILE, a new file readable by you only (default: print it)")
    a.set_defaults(func=cmd_admin)

    add_verify_parser(sub)
    add_rankings_parser(sub)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command not in ("replay", "selfplay"):
        _quiet_grpc()  # before any command loads gRPC
    if (hasattr(args, "seed") and isinstance(args.seed, str) and args.seed.lstrip("-").isdigit()
            and args.command != "tournament"):  # a tournament's seed is a string, kept as typed
        args.seed = int(args.seed)
    try:
        return int(args.func(args))
    except (CliError, EngineError, TournamentCliError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # e.g. piped into head
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    sys.exit(main())
