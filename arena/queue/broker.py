"""The Broker: how match jobs and their results move between referee nodes.

One interface, two backends: Redis (many machines) and embedded (one process,
sqlite on disk). A node *claims* a job with a lease, *renews* the lease while
the match runs, writes the result and *acks*. A node that dies leaves its jobs
claimed; once the lease expires another node *reclaims* them and replays the
match from its seed. The result is written with the match id as the
idempotency key, in one atomic step with the rating update, so a replayed job
is never counted twice. A job delivered ``max_deliveries`` times without an
ack goes to the dead-letter list.
"""

from __future__ import annotations

import abc
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Self


class BrokerError(Exception):
    """Base of the queue layer's errors (mapped to gRPC statuses at the edge)."""


class LeaseLost(BrokerError):
    """The claim's lease expired and another node took the job."""


class BrokerUnavailable(BrokerError):
    """The backend cannot be reached (no Redis at the URL, an unreadable sqlite file)."""


#: the states of a tournament, in the order it usually goes through them
TOURNAMENT_STATES = ("created", "running", "finished", "cancelled")


def check_tournament_state(state: str) -> str:
    """``state`` if it is one of :data:`TOURNAMENT_STATES`; ValueError otherwise."""
    if state not in TOURNAMENT_STATES:
        raise ValueError(f"unknown tournament state {state!r}: one of {', '.join(TOURNAMENT_STATES)}")
    return state


@dataclass(frozen=True)
class MatchJob:
    """One match to play. ``match_id`` is the idempotency key of its result."""

    match_id: str
    tournament_id: str
    team0: str  # bot name at seats 0 and 2
    team1: str  # bot name at seats 1 and 3
    ruleset: Any  # a ruleset spec: preset name or {"preset": ..., options}
    seed: str
    deals: int | None = None
    target: int | None = None
    round: int = 0
    #: free-form facts the tournament needs back with the result (e.g. duplicate pair id)
    tags: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str | bytes) -> MatchJob:
        return cls(**json.loads(text))


@dataclass(frozen=True)
class Claim:
    """A job held by one node until ``lease_until`` (unix seconds)."""

    job: MatchJob
    node_id: str
    delivery: int  # 1 on the first claim, 2 after one reclaim, ...
    lease_until: float
    #: backend-specific handle (Redis stream entry id, sqlite row id)
    handle: str


@dataclass(frozen=True)
class MatchResult:
    """What a finished match writes once: totals, winner and the record."""

    match_id: str
    tournament_id: str
    team0: str
    team1: str
    totals: tuple[int, int]
    winner: int | None  # 0, 1, or None for a draw
    reason: str  # finished / forfeit
    record: dict[str, Any]
    node_id: str = ""

    def score0(self) -> float:
        """Team 0's match score: 1 win, 0.5 draw, 0 loss."""
        return 0.5 if self.winner is None else 1.0 if self.winner == 0 else 0.0

    def to_json(self) -> str:
        # fields by hand: asdict() would deep-copy the whole record first
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        return json.dumps(data, sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str | bytes) -> MatchResult:
        data = json.loads(text)
        data["totals"] = tuple(data["totals"])
        return cls(**data)


class Broker(abc.ABC):
    """The contract both backends keep; tests/queue runs one suite against both."""

    max_deliveries: int = 5

    # jobs
    @abc.abstractmethod
    def enqueue(self, jobs: Sequence[MatchJob]) -> None: ...

    @abc.abstractmethod
    def claim(self, node_id: str, count: int, lease_s: float) -> list[Claim]:
        """Up to ``count`` jobs: expired ones reclaimed from dead nodes first, then new ones."""

    @abc.abstractmethod
    def renew(self, claim: Claim, lease_s: float) -> Claim:
        """Extend the lease; raises :class:`LeaseLost` if another node took the job."""

    @abc.abstractmethod
    def ack(self, claim: Claim) -> None:
        """The job is done (its result is written): remove it for good."""

    @abc.abstractmethod
    def release(self, claim: Claim) -> None:
        """Give a job back unplayed (a draining node): it is claimable again at once."""

    @abc.abstractmethod
    def dead_letters(self) -> list[MatchJob]: ...

    # results and ratings
    @abc.abstractmethod
    def write_result(self, result: MatchResult) -> bool:
        """Write the result and update ratings atomically; False if it was already written."""

    @abc.abstractmethod
    def get_result(self, match_id: str) -> MatchResult | None: ...

    @abc.abstractmethod
    def results(self, tournament_id: str) -> list[MatchResult]: ...

    @abc.abstractmethod
    def ratings(self) -> dict[str, tuple[float, int]]:
        """Online Elo per bot name: (rating, games)."""

    # tournaments (their spec and state live with the jobs, so any node can see them)
    @abc.abstractmethod
    def put_tournament(self, tournament_id: str, spec: dict[str, Any]) -> bool:
        """Create it in state ``created``; False if it exists."""

    @abc.abstractmethod
    def get_tournament(self, tournament_id: str) -> tuple[dict[str, Any], str] | None:
        """(spec, state) with state one of created, running, finished, cancelled."""

    @abc.abstractmethod
    def set_tournament_state(self, tournament_id: str, state: str, *, expect: str | None = None) -> bool:
        """Move to ``state``; with ``expect``, only from that state (compare-and-set)."""

    @abc.abstractmethod
    def list_tournaments(self) -> list[str]: ...

    @abc.abstractmethod
    def enqueue_once(self, key: str, jobs: Sequence[MatchJob]) -> bool:
        """Enqueue ``jobs`` only if ``key`` was never used (e.g. "t1/round/3"); True if enqueued.

        Lets any node advance a tournament (the next Swiss round) without two
        nodes enqueueing it twice.
        """

    @abc.abstractmethod
    def pending_count(self, tournament_id: str | None = None) -> int:
        """Jobs enqueued or claimed and not yet acked (all tournaments if None)."""

    # the cluster: live nodes (for the bots' discovery) and the shared bot registry
    @abc.abstractmethod
    def heartbeat(self, node_id: str, address: str, ttl_s: float) -> None:
        """This node is alive at ``address`` for ``ttl_s`` seconds more."""

    @abc.abstractmethod
    def live_nodes(self) -> dict[str, str]:
        """node id -> address of the nodes whose heartbeat has not expired."""

    @abc.abstractmethod
    def add_bot(self, name: str, entry_json: str) -> bool:
        """Store a bot registry entry under its name; False if the name is taken."""

    @abc.abstractmethod
    def bot_entries(self) -> list[str]:
        """Every stored bot registry entry (JSON)."""

    @abc.abstractmethod
    def close(self) -> None: ...

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
