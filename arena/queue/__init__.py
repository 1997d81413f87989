"""Match jobs and results shared by referee nodes: Redis and embedded backends.

``open_broker(url, data_dir)`` picks the backend: a ``redis://`` (``rediss://``,
``unix://``) URL opens :class:`~arena.queue.redis_broker.RedisBroker`, and so do sentinels
(:class:`~arena.queue.sentinel.SentinelSet`) naming its primary; neither
opens :class:`~arena.queue.embedded.EmbeddedBroker` on ``data_dir/arena.sqlite3``
(in memory when there is no data directory either). redis-py is imported only
when a Redis URL is given, so the embedded backend needs nothing beyond Python.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from arena.datadir import private_dir
from arena.queue.broker import (
    ANY_BOT,
    BOT_NOTICE,
    CANCEL_NOTICE,
    FORGOTTEN_NOTICE,
    JOBS_NOTICE,
    LADDER_NOTICE,
    SCHEDULE_NOTICE,
    Broker,
    BrokerDataLost,
    BrokerError,
    BrokerUnavailable,
    Claim,
    ClaimBatch,
    Finished,
    LeaseLost,
    Notice,
    NoticeBatch,
    NotReplicated,
    TournamentCancelled,
    Write,
)
from arena.queue.embedded import EmbeddedBroker
from arena.queue.keys import DEFAULT_PREFIX

if TYPE_CHECKING:  # redis-py is imported only when Redis is used
    from arena.queue.sentinel import SentinelSet

__all__ = [
    "ANY_BOT",
    "BOT_NOTICE",
    "CANCEL_NOTICE",
    "DATABASE_NAME",
    "FORGOTTEN_NOTICE",
    "JOBS_NOTICE",
    "LADDER_NOTICE",
    "SCHEDULE_NOTICE",
    "Broker",
    "BrokerDataLost",
    "BrokerError",
    "BrokerUnavailable",
    "Claim",
    "ClaimBatch",
    "EmbeddedBroker",
    "Finished",
    "LeaseLost",
    "NotReplicated",
    "Notice",
    "NoticeBatch",
    "TournamentCancelled",
    "Write",
    "open_broker",
]

#: the embedded backend's file inside the data directory
DATABASE_NAME = "arena.sqlite3"

REDIS_SCHEMES = ("redis://", "rediss://", "unix://")


def open_broker(
    url: str | None,
    data_dir: Path | None,
    *,
    prefix: str = DEFAULT_PREFIX,
    max_deliveries: int = 5,
    elo_k: float = 16.0,
    sentinel: SentinelSet | None = None,
    wait_replicas: int = 0,
    wait_timeout_s: float = 1.0,
) -> Broker:
    """The broker for ``url`` (Redis), or for the Redis primary ``sentinel`` names (with a replica:
    ``wait_replicas``, see :class:`~arena.queue.redis_broker.RedisBroker`), or with neither, the
    embedded one under ``data_dir``."""
    if sentinel is not None:
        from arena.queue.redis_broker import RedisBroker

        return RedisBroker(prefix=prefix, max_deliveries=max_deliveries, elo_k=elo_k, sentinel=sentinel,
                           wait_replicas=wait_replicas, wait_timeout_s=wait_timeout_s)
    if url:
        if not url.startswith(REDIS_SCHEMES):
            scheme = url.partition("://")[0] if "://" in url else url
            expected = ", ".join(REDIS_SCHEMES)
            raise BrokerError(f"unsupported broker URL scheme {scheme!r}: expected one of {expected}")
        from arena.queue.redis_broker import RedisBroker

        return RedisBroker(url, prefix=prefix, max_deliveries=max_deliveries, elo_k=elo_k,
                           wait_replicas=wait_replicas, wait_timeout_s=wait_timeout_s)
    path = None
    if data_dir is not None:
        try:
            private_dir(data_dir)
        except OSError as e:
            raise BrokerUnavailable(f"cannot create the data directory {data_dir}: {e}") from e
        path = data_dir / DATABASE_NAME
    return EmbeddedBroker(path, max_deliveries=max_deliveries, elo_k=elo_k)
