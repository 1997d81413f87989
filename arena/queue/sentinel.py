"""Redis with a replica and Sentinel: where a node finds the primary, and when a result is safe.

A node given ``--redis-sentinel HOST:PORT,... --redis-master NAME`` asks the
sentinels where the primary is (redis-py's :class:`redis.sentinel.Sentinel`,
``master_for``) each time it opens a connection. When the primary dies, its
connections fail; the command is retried (redis-py's retries, then the node's
own: a claim loop, a renewal, the notices reader), and the new connection goes
to whichever replica the sentinels promoted. The blocking read of the notices
(XREAD BLOCK) is one of those commands: it follows the new primary the same way.

What a failover may lose. Replication is asynchronous, and in order: a
promoted replica holds every write up to some point of the old primary's
history and none after it, the state of a moment that really was. Each step of
the queue is one script (a result, its index, its ratings, its summary and its
job's removal in one), so that state is consistent: the writes after that point
are gone together. In particular a result lost with the old primary takes its
job's removal with it: the job is back in the queue, still held by the node
that claimed it (the claim and every renewal before the point are replicated),
and after its lease it waits again and a node claims it: the node that played
it writes the same result again from its data folder, another plays it again
from its seed (the same deals; the bots may decide otherwise). Nothing is
counted twice, no job is lost; but a result that was announced may be replaced
by another. :func:`replicated` closes that gap for results: the node does not
log, announce or build on a result until ``replicas`` replicas hold it.

The arena's epoch mark (:meth:`RedisBroker.check_data
<arena.queue.redis_broker.RedisBroker.check_data>`) is set once, at the first
start, so every synchronized replica holds it: a promoted replica is not taken
for a lost database. A primary that restarts empty before the sentinels notice
it is down is another matter: its replicas resynchronize from it and empty
themselves, and the nodes say the data is lost. Give every Redis of the set
append-only persistence, or do not let a primary restart faster than the
sentinels' ``down-after-milliseconds``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import redis
import redis.sentinel

from arena.queue.broker import NotReplicated

__all__ = ["NotReplicated", "SentinelSet", "connect", "replicated"]

#: the port a sentinel listens on when an address names none
SENTINEL_PORT = 26379
#: the most sentinels a node may be given (a set has 3 or 5)
MAX_SENTINELS = 16
#: the default of how long a result's write waits for its replicas (seconds)
WAIT_TIMEOUT_S = 1.0
#: a primary's name as the sentinels monitor it: what their configuration accepts, without spaces
_MASTER_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_HOST = re.compile(r"[A-Za-z0-9][A-Za-z0-9.-]{0,252}|\[[0-9A-Fa-f:.]+\]")


@dataclass(frozen=True)
class SentinelSet:
    """Where a node asks for the Redis primary: the sentinels, and the name they monitor it by."""

    sentinels: tuple[tuple[str, int], ...]
    master: str

    @classmethod
    def parse(cls, sentinels: str, master: str) -> SentinelSet:
        """``HOST:PORT,HOST:PORT,...`` (a port left out is 26379; an IPv6 host in brackets) and the
        primary's name; :class:`ValueError` saying what is wrong."""
        if not _MASTER_NAME.fullmatch(master):
            raise ValueError(f"the primary's name must be 1 to 64 letters, digits, '.', '_' or '-', "
                             f"not {master[:80]!r}")
        found: list[tuple[str, int]] = []
        for item in (s.strip() for s in sentinels.split(",")):
            if not item:
                continue
            host, port_text = item, ""
            if item.startswith("["):
                host, _, rest = item.partition("]")
                host += "]"
                port_text = rest.removeprefix(":")
                if rest and not rest.startswith(":"):
                    raise ValueError(f"a sentinel is HOST:PORT, not {item[:80]!r}")
            elif ":" in item:
                host, _, port_text = item.rpartition(":")
            if not _HOST.fullmatch(host):
                raise ValueError(f"a sentinel is HOST:PORT, not {item[:80]!r}")
            port = SENTINEL_PORT
            if port_text:
                if not port_text.isdigit() or not 1 <= int(port_text) <= 65535:
                    raise ValueError(f"a sentinel's port is 1-65535, not {port_text[:20]!r} "
                                     f"(in {item[:80]!r})")
                port = int(port_text)
            if (host.strip("[]"), port) not in found:
                found.append((host.strip("[]"), port))
        if not found:
            raise ValueError("no sentinel given: HOST:PORT,HOST:PORT,...")
        if len(found) > MAX_SENTINELS:
            raise ValueError(f"at most {MAX_SENTINELS} sentinels, not {len(found)}")
        return cls(tuple(found), master)

    def describe(self) -> str:
        """The set as one line for logs and messages: ``sentinel://HOST:PORT,.../NAME``."""
        hosts = ",".join(f"[{h}]:{p}" if ":" in h else f"{h}:{p}" for h, p in self.sentinels)
        return f"sentinel://{hosts}/{self.master}"

    def client(self, **options: Any) -> redis.Redis:
        """A client of the primary: each new connection asks the sentinels where it is now (and one
        that finds a replica where the primary was is closed and opened again). ``options`` are the
        connections' (timeouts, decoding); the sentinels are asked with the same timeouts."""
        timeouts = {k: v for k, v in options.items() if k.startswith("socket_")}
        manager = redis.sentinel.Sentinel(list(self.sentinels), sentinel_kwargs=timeouts, **options)
        client: redis.Redis = manager.master_for(self.master)
        return client


def connect(url: str, sentinel: SentinelSet | None, **options: Any) -> redis.Redis:
    """The broker's client: of the server at ``url``, or of the primary ``sentinel`` names."""
    if sentinel is None:
        return redis.Redis.from_url(url, **options)
    return sentinel.client(**options)


@contextmanager
def replicated(client: redis.Redis, replicas: int, timeout_s: float, what: str) -> Iterator[redis.Redis]:
    """A client for writes that count only once ``replicas`` replicas hold them.

    The block writes with the client it is given; after it, WAIT on the same connection (WAIT
    waits for the connection's own writes, so the block's must go on it) for at most
    ``timeout_s``. Fewer replicas than asked acknowledging them raises :class:`NotReplicated`
    (``what`` names the write). With ``replicas`` 0, the shared client, and no wait.
    """
    if replicas <= 0:
        yield client
        return
    pinned = redis.Redis(connection_pool=client.connection_pool, single_connection_client=True)
    try:
        yield pinned
        acked = int(pinned.wait(replicas, max(1, round(timeout_s * 1000))))
    finally:
        pinned.close()
    if acked < replicas:
        raise NotReplicated(
            f"{what} is on the Redis primary, but {acked} of the {replicas} replicas asked for had it after "
            f"{timeout_s:g} s: not counted yet (a failover now would roll it back)")
