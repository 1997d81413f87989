"""A node's background thread that sleeps until woken or until its next look is due.

The schedule loop and the ladder loop are both this: a thread of their own (their broker calls
never run on the event loop), one pass of work at a time (:meth:`WakingThread.run_once`, which says
how long to sleep after it), and a wake-up (:meth:`WakingThread.wake`) that cuts the sleep short
when something they look at changed. A wake-up that comes during a pass is not lost: the event is
cleared before the pass, so the sleep after it returns at once.
"""

from __future__ import annotations

import abc
import threading


class WakingThread(abc.ABC):
    """:meth:`start`, :meth:`wake` on a change, :meth:`stop`; subclasses give :meth:`run_once`."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @abc.abstractmethod
    def run_once(self) -> float:
        """One pass of the work; how long to sleep before the next (a wake-up may come first)."""

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
        self._thread.start()

    def wake(self, *_: object) -> None:
        """Look again now: something this thread looks at changed."""
        self._wake.set()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the thread (blocking: from a thread, not the event loop)."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def _run(self) -> None:
        while not self._stop.is_set():
            self._wake.clear()  # before the pass: a change during it wakes the wait below
            wait = self.run_once()
            self._wake.wait(wait)
