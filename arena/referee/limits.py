"""What a referee node is configured with: its :class:`Limits` (what one bot, address or match may
hold of it) and its :class:`NodeConfig`. :mod:`arena.referee.node` re-exports both."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from arena.records import TimeControl
from arena.referee.access import AccessPolicy

__all__ = ["RPC_MARGIN", "Limits", "NodeConfig"]


#: calls grpc's own bound (:attr:`Limits.concurrent_rpcs`) keeps beyond every kind's total: the
#: calls grpc answers itself (an unknown method) and those between their refusal's hold and its status
RPC_MARGIN = 64


@dataclass(frozen=True)
class Limits:
    """What one bot, one address or one match may hold of the node (docs/protocol.md#limits).

    Every call the gRPC edge serves is of one kind, and each kind is bounded per
    address (an IPv6 address by its /64) and in all: bot streams, spectators,
    health watches, other streams (server reflection), short calls, health
    checks, admin calls (no bound per address: the credential is the node's
    own), and refused calls held before their status. grpc's own bound on the
    calls open at once, :attr:`concurrent_rpcs`, is the sum of the totals and a
    margin, so that no kind, held by any number of addresses, can fill it: the
    node's probes, an admin's calls and new bot streams always have their room.

    A bound on calls open at once does nothing against a loop, one call at a
    time: what one address may *read* a second is bounded too
    (:mod:`arena.edge.rates`), its short calls over gRPC (but health checks
    and the admin's) and its requests to the web's API (but event streams)
    together, each charged a read and one more per 8 KiB of its answer. And a
    reader of a match who stops taking what it is sent is cut after
    :attr:`send_timeout`, so that it holds its place (a replay's, a
    spectator's) no longer.
    """

    #: seconds a new bot stream has to send its Hello before it is refused
    hello_timeout: float = 5.0
    #: seats one bot stream may play at once (a larger Hello.concurrency is read as this)
    max_concurrency: int = 256
    #: bot streams open at once from one address (a bot process opens one per node), and in all
    max_streams_per_peer: int = 16
    max_streams: int = 1024
    #: spectators (WatchMatch calls) of one match at once, from one address (of any matches), and in all
    max_watchers_per_match: int = 64
    max_watchers_per_peer: int = 16
    max_watchers: int = 1024
    #: grpc.health.v1.Health/Watch streams from one address, and in all (a client's channel holds one)
    max_health_watches_per_peer: int = 8
    max_health_watches: int = 256
    #: any other stream (server reflection, which grpcurl opens one at a time), per address and in all
    max_other_streams_per_peer: int = 4
    max_other_streams: int = 64
    #: short calls (every unary method but a health check, or a call with the admin credential)
    #: in progress at once from one address, and in all: slow ones from one address leave the rest room
    max_calls_per_peer: int = 32
    max_calls: int = 512
    #: health checks (grpc.health.v1.Health/Check) from one address, and in all: the probes' room
    max_checks_per_peer: int = 8
    max_checks: int = 128
    #: calls with the admin credential in progress at once, in all
    max_admin_calls: int = 64
    #: seconds a refused call is held before its status, so that a client retrying at once
    #: whenever it is refused slows down (at most max_streams_per_peer held per address, and
    #: max_held_refusals in all; past those, the status at once; 0: none)
    refusal_hold: float = 1.0
    max_held_refusals: int = 1024
    #: reads of a finished match (WatchMatch, the web's events and match pages) running at once
    #: from one address, and in all
    max_replays_per_address: int = 2
    max_replays: int = 16
    #: bytes of finished matches' views kept for their next readers (a 1,000-deal match's three
    #: views are about 14 MB; a 16-deal one's 0.2 MB)
    replay_cache_bytes: int = 64 << 20
    #: what those reads send a second, all together: bytes of the web's answers, and gRPC messages
    #: (one event each; a message costs the loop about 60-120 us, whatever its size): the share of
    #: the loop that readers of finished matches may take, however many they are
    replay_bytes_per_s: int = 4 << 20
    replay_messages_per_s: int = 1000
    #: reads one address may make a second on average, and at once (its burst): a short gRPC call
    #: (but a health check or an admin's) or a request to the web's API (but an event stream) is one,
    #: and each 8 KiB of its answer one more. A page loads with one to three; a dashboard polling
    #: every few seconds, or a script paging through 5,000 bots (20 reads), stays far inside
    read_rate_per_peer: int = 20
    read_burst_per_peer: int = 200
    #: seconds a write to a reader of a match (WatchMatch, the web's events and finished match
    #: pages) may wait for the reader to take what it was sent before the reader is cut
    send_timeout: float = 10.0

    @property
    def concurrent_rpcs(self) -> int:
        """grpc's bound on the calls open at once (``maximum_concurrent_rpcs``): every kind's total,
        the held refusals, and :data:`RPC_MARGIN` (4,160 with the defaults). No kind can reach it,
        so a call of one kind is never refused for what the others hold."""
        return (self.max_streams + self.max_watchers + self.max_health_watches + self.max_other_streams
                + self.max_calls + self.max_checks + self.max_admin_calls + self.max_held_refusals
                + RPC_MARGIN)


@dataclass(frozen=True)
class NodeConfig:
    data_dir: Path | None = None
    time: TimeControl = field(default_factory=TimeControl)
    #: one stream per token: a second one is refused, or with this set it takes
    #: over the bot's seats from the first (a bot restarted before the node noticed)
    replace_streams: bool = False
    node_id: str = ""
    #: who may call what (docs/protocol.md#arenaservice-for-bot-authors)
    access: AccessPolicy = field(default_factory=AccessPolicy)
    #: the secret the seeds of this node's own matches derive from ("": a fresh one per start)
    secret: str = ""
    #: what one bot, address or match may hold of the node (docs/protocol.md#limits)
    limits: Limits = field(default_factory=Limits)
