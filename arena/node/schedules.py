"""Every node's schedule loop: a thread that sleeps until the next occurrence of any schedule, makes
the tournaments due (once across the cluster: :mod:`arena.tournament.schedule`) and enqueues their
first stage.

It sleeps until the earliest next occurrence, or :data:`RESCAN_S` at most: a
schedule made or cancelled through any node wakes it at once by its notice
(:data:`~arena.queue.SCHEDULE_NOTICE`), and the rescan catches a notice lost.
Its broker calls run in its own thread, never on the node's event loop. A
tournament made here whose first stage this node did not enqueue (it died
right after) is enqueued by any node's advance sweep, which advances every
tournament still ``created``.
"""

from __future__ import annotations

import logging
import threading
import time

from arena.edge.quietlog import QuietLog
from arena.queue import Broker, BrokerError
from arena.tournament import Tournaments
from arena.tournament.schedule import Schedules

log = logging.getLogger("arena.node")

#: the longest the loop sleeps with no occurrence due (a notice lost: a schedule made elsewhere)
RESCAN_S = 60.0
#: how long it waits before trying again after the broker failed
RETRY_S = 5.0
#: a little past the occurrence (the sleep's clock is not the wall clock the occurrences follow)
SLACK_S = 0.01


class ScheduleLoop:
    """The node's schedule thread (:meth:`start`, :meth:`wake` after a change, :meth:`stop`)."""

    def __init__(self, broker: Broker, tournaments: Tournaments, *, rescan_s: float = RESCAN_S,
                 name: str = "schedules") -> None:
        self.schedules = Schedules(broker)
        self.tournaments = tournaments
        self.rescan_s = rescan_s
        self.name = name
        #: the tournaments this node made (the others' occurrences are made elsewhere)
        self.made: list[str] = []
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._quiet = QuietLog(log)  # this thread's own

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
        self._thread.start()

    def wake(self, *_: object) -> None:
        """Read the schedules again now (one was made or cancelled, or notices were missed)."""
        self._wake.set()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the thread (blocking: from a thread, not the event loop)."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def run_once(self) -> float:
        """Make what is due; how long to sleep before the next look."""
        try:
            made, next_at = self.schedules.run_due()
        except BrokerError as e:
            self._quiet.warning("schedules", "reading the schedules failed: %s", e)
            return RETRY_S
        for tid in made:
            self.made.append(tid)
            log.info("scheduled tournament %s made", tid, extra={"event": "scheduled_tournament",
                                                                   "tournament": tid})
            try:
                self.tournaments.advance(tid)  # its first stage (else any node's advance sweep does)
            except BrokerError as e:
                self._quiet.warning("schedules advance", "enqueueing %s failed (the advance sweep "
                                    "retries): %s", tid, e)
        if next_at is None:
            return self.rescan_s
        return min(self.rescan_s, max(0.0, next_at - time.time()) + SLACK_S)

    def _run(self) -> None:
        while not self._stop.is_set():
            self._wake.clear()  # before the read: a change after it wakes the wait below
            wait = self.run_once()
            self._wake.wait(wait)
