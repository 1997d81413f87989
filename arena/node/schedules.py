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

An occurrence due that cannot be made (a ladder with too few bots opted in
for its format) is logged once per cause, a WARNING naming the schedule and
why, and again only when the cause changes; an occurrence that drew its bots
from more opted-in ones says so in the line of the tournament made.
"""

from __future__ import annotations

import logging
import time

from arena.edge.quietlog import QuietLog
from arena.node.waking import WakingThread
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


class ScheduleLoop(WakingThread):
    """The node's schedule thread (:meth:`start`, :meth:`wake` after a change, :meth:`stop`)."""

    def __init__(self, broker: Broker, tournaments: Tournaments, *, rescan_s: float = RESCAN_S,
                 name: str = "schedules") -> None:
        self.schedules = Schedules(broker)
        self.tournaments = tournaments
        self.rescan_s = rescan_s
        super().__init__(name)
        #: the tournaments this node made (the others' occurrences are made elsewhere)
        self.made: list[str] = []
        self._quiet = QuietLog(log)  # this thread's own
        #: schedule id -> why its occurrence due waits, as last logged (one entry a schedule waiting)
        self._waiting: dict[str, str] = {}

    def run_once(self) -> float:
        """Make what is due; how long to sleep before the next look."""
        try:
            made, next_at, waiting, drawn = self.schedules.run_due()
        except BrokerError as e:
            self._quiet.warning("schedules", "reading the schedules failed: %s", e)
            return RETRY_S
        self._tell_waiting(waiting)
        for tid in made:
            self.made.append(tid)
            note = f": {drawn[tid]}" if tid in drawn else ""
            log.info("scheduled tournament %s made%s", tid, note, extra={"event": "scheduled_tournament",
                                                                          "tournament": tid})
            try:
                self.tournaments.advance(tid)  # its first stage (else any node's advance sweep does)
            except BrokerError as e:
                self._quiet.warning("schedules advance", "enqueueing %s failed (the advance sweep "
                                    "retries): %s", tid, e)
        if next_at is None:
            return self.rescan_s
        return min(self.rescan_s, max(0.0, next_at - time.time()) + SLACK_S)

    def _tell_waiting(self, waiting: dict[str, str]) -> None:
        """Log why each schedule waits, once per cause: a schedule logged already is logged again only
        when its cause changes (a schedule made since, or cancelled, is forgotten)."""
        for schedule_id, why in waiting.items():
            if self._waiting.get(schedule_id) != why:
                log.warning("schedule %s: %s", schedule_id, why, extra={
                    "event": "schedule_waiting", "schedule": schedule_id})
        self._waiting = dict(waiting)
