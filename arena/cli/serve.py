"""``belote-arena serve`` and ``demo``: a node, and a node with the built-in bots playing on it.

Each command checks all it is given before it starts anything (a bad value is one ``error:`` line,
exit 1), then imports the node, the queue and the web server it runs.
"""

from __future__ import annotations

import argparse
import contextlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arena.cli.checks import CliError, check_address, check_seconds, check_whole, one_line
from arena.cli.dial import credential_flags
from arena.engine import Ruleset
from arena.hints import DEFAULT_ADDRESS, DEFAULT_DATA_DIR
from arena.records import MAX_DEALS
from arena.tournament.spec import MAX_ROUNDS

if TYPE_CHECKING:
    from arena.queue.sentinel import SentinelSet

# What serve may be given: the number of matches and strikes, the node's limits and its durations.
MAX_CAPACITY = 1000
MAX_STRIKES = 1000
#: the most any of the node's limits (streams, watchers, seats of a stream) may be set to
MAX_LIMIT = 1_000_000
#: seconds: the most a decision's deadline may be, and every other duration
MAX_DEADLINE = 600.0
MAX_SECONDS = 3600.0
#: the most replicas a result's write may wait for
MAX_WAIT_REPLICAS = 16
#: arena.node.versions' bounds of VersionTestLimits (not imported: see --capacity)
MAX_TESTS_A_DAY = 1000
MAX_TESTS_AT_ONCE = 10_000


def check_serve(args: argparse.Namespace) -> None:
    check_address("--listen", args.listen, any_port=True)
    if args.http:
        check_address("--http", args.http, any_port=True)
    if args.advertise:
        check_address("--advertise", args.advertise, any_port=False)
    check_whole("--capacity", args.capacity, 1, MAX_CAPACITY)
    if not 0 <= args.ladder_share <= 1:  # NaN fails too
        raise CliError(f"--ladder-share must be from 0 to 1, not {args.ladder_share:g}")
    budget = args.analysis_budget
    if budget is not None and not 0 < budget <= 1:  # NaN fails too
        raise CliError(f"--analysis-budget is a share of one core, above 0 and at most 1, not {budget:g}")
    if budget is not None and args.no_analyses:
        raise CliError("--analysis-budget analyses every match, --no-analyses none: give one or the other")
    check_whole("--version-tests-a-day", args.version_tests_a_day, 1, MAX_TESTS_A_DAY)
    check_whole("--version-tests-per-owner", args.version_tests_per_owner, 1, MAX_TESTS_AT_ONCE)
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
    redis_target(args)


def redis_target(args: argparse.Namespace) -> tuple[str | None, SentinelSet | None]:
    """The Redis a node uses: a URL (``--redis``, else ``$BELOTE_REDIS``), or the sentinels that
    name its primary (``--redis-sentinel`` and ``--redis-master``, else ``$BELOTE_REDIS_SENTINEL`` and
    ``$BELOTE_REDIS_MASTER``); (None, None) for the embedded queue. A flag given wins over the
    environment; two ways given at the same level are an error, not a guess."""
    import os

    check_whole("--redis-wait-replicas", args.redis_wait_replicas, 0, MAX_WAIT_REPLICAS)
    check_seconds("--redis-wait-timeout", args.redis_wait_timeout, MAX_DEADLINE, zero=False)
    url, sentinels = args.redis or None, args.redis_sentinel or None
    if url and sentinels:
        raise CliError("--redis and --redis-sentinel: give one (a Redis URL, or the sentinels that name "
                       "the primary)")
    if not url and not sentinels:
        url = os.environ.get("BELOTE_REDIS") or None
        sentinels = os.environ.get("BELOTE_REDIS_SENTINEL") or None
        if url and sentinels:
            raise CliError("$BELOTE_REDIS and $BELOTE_REDIS_SENTINEL are both set: unset one (or give "
                           "--redis or --redis-sentinel)")
    master = args.redis_master or os.environ.get("BELOTE_REDIS_MASTER") or ""
    if not sentinels:
        if args.redis_master:
            raise CliError("--redis-master names the primary the sentinels know: give --redis-sentinel too")
        if args.redis_wait_replicas and not url:
            raise CliError("--redis-wait-replicas is for Redis with replicas (--redis or --redis-sentinel), "
                           "not the embedded queue")
        return url, None
    if not master:
        raise CliError("--redis-sentinel needs --redis-master NAME (or $BELOTE_REDIS_MASTER): the name "
                       "the sentinels monitor the primary by")
    from arena.queue.sentinel import SentinelSet

    try:
        return None, SentinelSet.parse(sentinels, master)
    except ValueError as e:
        raise CliError(f"--redis-sentinel/--redis-master: {e}") from None


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


def cmd_serve(args: argparse.Namespace) -> int:
    import asyncio
    import logging

    from arena.credentials import CredentialError, given_admin_token, node_admin_token
    from arena.edge.tls import TlsError, server_context, server_credentials
    from arena.logformat import configure as configure_logging
    from arena.node.run import NodeSettings, RunningNode, serve_forever
    from arena.queue import BrokerError, open_broker
    from arena.records import TimeControl
    from arena.referee.access import AccessPolicy, Registration
    from arena.referee.node import Limits
    from arena.referee.registry import digest
    from arena.referee.serve import install_uvloop

    check_serve(args)
    if (args.tls_cert is None) != (args.tls_key is None):
        raise CliError("--tls-cert and --tls-key go together: the node serves TLS with both, plaintext "
                       "with neither")
    if args.tls_cert is not None:
        with one_line(TlsError):  # checked before anything starts: a bad pair is one line, exit 1
            server_credentials(args.tls_cert, args.tls_key)
    with one_line(CredentialError):  # a weak credential given stops the node before anything starts
        given_admin_token(args.admin_token_file)
    configure_logging(args.log_format)
    install_uvloop()
    tc = TimeControl(deadline=args.deadline, time_bank=args.time_bank, max_strikes=args.max_strikes,
                     grace=args.grace)
    data = None if args.data_dir == "" else Path(args.data_dir)
    with one_line(CredentialError, OSError):
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
        ladder_share=args.ladder_share, version_tests_a_day=args.version_tests_a_day,
        version_tests_per_owner=args.version_tests_per_owner,
        lease_s=args.lease, drain_s=args.drain, replace_streams=args.replace_streams, access=access,
        limits=limits,
        absent_timeout_s=args.absent_timeout,
        tls_cert=None if args.tls_cert is None else Path(args.tls_cert),
        tls_key=None if args.tls_key is None else Path(args.tls_key),
        analysis_budget=args.analysis_budget, analyses=not args.no_analyses,
    )
    url, sentinel = redis_target(args)
    log = logging.getLogger("arena.node")
    queue_at = sentinel.describe() if sentinel else url
    log.info("queue: %s", _queue_named(queue_at, data), extra={"event": "queue",
                                                              "queue": "redis" if queue_at else "embedded"})
    if queue_at and args.redis_wait_replicas:
        log.info("a result counts once %d replica(s) hold it (waiting %g s at most)",
                 args.redis_wait_replicas, args.redis_wait_timeout)
    with one_line(BrokerError):
        broker = open_broker(url, data, sentinel=sentinel, wait_replicas=args.redis_wait_replicas,
                             wait_timeout_s=args.redis_wait_timeout)
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
            with one_line(TlsError):
                server_context(web.tls_cert, web.tls_key)

        def beside(running: RunningNode) -> contextlib.AbstractAsyncContextManager[object]:
            return web_for(running, args.http, web)
    try:
        with one_line(TlsError, OSError, BrokerError):  # OSError: the HTTP port is taken
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


def cmd_demo(args: argparse.Namespace) -> int:
    from arena.demo import main as demo_main

    check_demo(args)
    if args.ladder:
        from arena.demo_ladder import main as ladder_main

        return ladder_main(args.data_dir, http=args.http)
    rulesets = [r.strip() for r in args.rulesets.split(",") if r.strip()]
    for r in rulesets:
        Ruleset.from_spec(r)
    return demo_main(args.data_dir, args.deals or None, args.rounds, args.seed, rulesets, http=args.http,
                     fmt=args.format)


def add_serve(sub: Any) -> None:
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
    v.add_argument("--redis-sentinel", metavar="HOST:PORT,...",
                   help="or through the Redis primary these sentinels name, following it when they fail "
                        "over to a replica (default: $BELOTE_REDIS_SENTINEL); needs --redis-master")
    v.add_argument("--redis-master", metavar="NAME",
                   help="the name the sentinels monitor the primary by (default: $BELOTE_REDIS_MASTER)")
    v.add_argument("--redis-wait-replicas", type=int, default=0, metavar="N",
                   help="a result counts (its match reported, its tournament moved on) once N replicas "
                        "hold it, so that a failover cannot roll it back; 0: at once, for a Redis without "
                        "replicas (default: %(default)s)")
    v.add_argument("--redis-wait-timeout", type=float, default=1.0, metavar="SECONDS",
                   help="how long a result's write waits for those replicas; then it stays written but "
                        "is not reported, and its tournament moves on at the next sweep "
                        "(default: %(default)s)")
    v.add_argument("--advertise", default="", help="the address bots use for this node (host:port)")
    # arena.node.DEFAULT_CAPACITY, why 16 (not imported: replay and selfplay must not load arena.node)
    v.add_argument("--capacity", type=int, default=16,
                   help="matches this node plays at once (default: %(default)s; docs/how-to/capacity.md: "
                        "slots x the bots' round trip bound a node, not its CPU)")
    v.add_argument("--analysis-budget", type=float, default=None, metavar="SHARE",
                   help="analyse every match that ends on this node, spending at most this share of one "
                        "core on it, at the lowest priority (e.g. 0.2); without it a match is analysed when "
                        "someone asks (docs/analysis.md#cost-and-secrecy)")
    v.add_argument("--no-analyses", action="store_true",
                   help="analyse no match, even when asked: the API answers 404 and the pages say this node "
                        "does not analyse (its CPU kept for its matches)")
    v.add_argument("--ladder-share", type=float, default=0.5,
                   help="the share of the match slots the pools' ladders may fill, from 0 (none) to 1 "
                        "(default: %(default)s: the rest is kept free for tournaments, whose matches then "
                        "start at once)")
    # arena.node.versions' TESTS_A_DAY and TESTS_PER_OWNER (not imported, as --capacity's)
    v.add_argument("--version-tests-a-day", type=int, default=12,
                   help="version tests a bot's new versions get in 24 hours at most; a candidate past them "
                        "waits, and its versions page says until when (default: %(default)s)")
    v.add_argument("--version-tests-per-owner", type=int, default=1,
                   help="version tests under way at once among one owner's bots (an owner: what the admin "
                        "said at bot register --owner or bot invite --owner; else each bot its own) "
                        "(default: %(default)s)")
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
    credential_flags(v, bot=False)
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


def add_demo(sub: Any) -> None:
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
    d.add_argument("--ladder", action="store_true",
                   help="instead of tournaments: the coinche ladder placing the built-in bots, and an "
                        "SPRT deciding between two versions of one (about a minute)")
    d.set_defaults(func=cmd_demo)
