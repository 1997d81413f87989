"""What one address may read of a node a second, whichever door it comes through.

The bounds on calls open at once (:class:`arena.edge.guard.CallBounds`,
:mod:`arena.web.bounds`) do nothing against a loop: a reader that makes one
call at a time, each as soon as the last is answered, holds one place and yet
takes as much of the node's one process as it answers, and two such readers on
a call that costs ~0.3 ms took most of it from an honest match (its p99 3.3x a
quiet run's). So each address (an IPv6 one by its /64) has a token bucket of
**reads**: the short gRPC calls of anonymous callers and bot tokens (but a
health check, or a call with the admin credential) and the HTTP API's requests
(but event streams) draw on the same bucket, ``rate`` reads a second on average
and ``burst`` at once.

A call is charged by what it cost, not counted: one read to be let in, then
one more for each whole :data:`READ_BYTES` of its answer (built, serialized and sent,
the part of a call's work that grows with what it shows). Measured on a node
(one core, loaded): a ``GetMatch`` or ``/api/v1/pools`` of 0.1 kB takes
0.35-0.75 ms of its CPU, a ``ListMatches`` of 100 matches (10 kB) 1.5 ms, a
``ListBots`` page of 1,000 bots (25 kB) 0.9 ms, ``/api/v1/bots`` of 200 (20 kB)
0.7 ms: the fixed part of a call is most of it, and the answer's size is the
one measure of the rest known for every call, deterministic, and cheap (the
bytes are made anyway). Charging by the clock instead would charge an honest
reader for the node's load, and more the busier it is. Answers that are paced
by the replays' own budget (a finished match's record or page) count as one
read: their bytes are bounded there.

Charged after the answer, a bucket may go into debt (down to ``-burst``): an
address whose last answer cost more than it had waits until it has paid. Past
its bound an address is refused (``RESOURCE_EXHAUSTED``, HTTP 429) with the
seconds until it may read again. The table keeps one bucket per address seen,
at most ``max_addresses``: when full, the buckets that have refilled (which a
new one equals) are dropped, then the least recently used.
"""

from __future__ import annotations

import collections
import math
import time
from collections.abc import Callable

#: the bytes of an answer that count as one more read
READ_BYTES = 8192
#: the addresses whose buckets are kept at most
MAX_ADDRESSES = 10_000


class ReadRates:
    """A token bucket of reads per address: ``rate`` a second on average, ``burst`` at once."""

    def __init__(self, rate: float, burst: float, *, read_bytes: int = READ_BYTES,
                 max_addresses: int = MAX_ADDRESSES, clock: Callable[[], float] = time.monotonic) -> None:
        if rate <= 0 or burst < 1:
            raise ValueError(f"a read rate needs rate > 0 and burst >= 1, not {rate}, {burst}")
        self.rate = rate
        self.burst = burst
        self.read_bytes = read_bytes
        self.max_addresses = max_addresses
        self._clock = clock
        #: address -> [reads left, when they were counted], the least recently used first
        self._buckets: collections.OrderedDict[str, list[float]] = collections.OrderedDict()

    def __len__(self) -> int:
        return len(self._buckets)

    def _refilled(self, key: str) -> list[float]:
        """``key``'s bucket, refilled to now (a new, full one for an address not seen lately)."""
        now = self._clock()
        bucket = self._buckets.get(key)
        if bucket is None:
            if len(self._buckets) >= self.max_addresses:
                self._make_room(now)
            bucket = self._buckets[key] = [self.burst, now]
            return bucket
        self._buckets.move_to_end(key)
        bucket[0] = min(self.burst, bucket[0] + (now - bucket[1]) * self.rate)
        bucket[1] = now
        return bucket

    def _make_room(self, now: float) -> None:
        """Drop the buckets full by now (a new one is the same), then the least recently used, down
        to three quarters of the table: a table full of addresses in debt is cleared a quarter at a
        time, not scanned again for each new address."""
        for key in [k for k, (left, at) in self._buckets.items()
                    if left + (now - at) * self.rate >= self.burst]:
            del self._buckets[key]
        while len(self._buckets) > self.max_addresses * 3 // 4:
            self._buckets.popitem(last=False)

    def admit(self, key: str) -> float:
        """Take one read for a call from ``key``: 0.0, or (taking nothing) the seconds until it may."""
        bucket = self._refilled(key)
        if bucket[0] < 1.0:
            return (1.0 - bucket[0]) / self.rate
        bucket[0] -= 1.0
        return 0.0

    def charge(self, key: str, answer_bytes: int) -> None:
        """What an answer of ``answer_bytes`` to ``key`` cost beyond its call: a read for each whole
        :attr:`read_bytes` (the bucket may go into debt, down to ``-burst``)."""
        extra = answer_bytes // self.read_bytes
        if extra > 0:
            bucket = self._refilled(key)
            bucket[0] = max(-self.burst, bucket[0] - extra)

    def refusal(self, key: str, wait: float) -> str:
        """Why a call from ``key`` is refused, ``wait`` seconds before it may read again."""
        return (f"{key} reads more than {self.rate:g} a second, the limit per address (a call is one "
                f"read, and each {self.read_bytes // 1024} KiB of its answer one more); retry in "
                f"{retry_after(wait)} s")


def retry_after(wait: float) -> int:
    """``wait`` in whole seconds for a Retry-After: rounded up, at least 1."""
    return max(1, math.ceil(wait))
