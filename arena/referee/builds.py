"""The build process: heavy, pure work (a finished match's views) done away from the node's event loop.

Rebuilding a 1,000-deal match's public events and turning them to JSON takes
seconds of CPU. On the event loop it stalls every match of the node; in a
thread it still holds the GIL, which the loop then waits for (a read of such a
match in a thread slowed an honest match 14.8x). So it runs in a child process
of its own, at the lowest CPU priority (``SCHED_IDLE`` on Linux: the node, or
anything else that wakes on its core, takes the CPU from it at once; it still
gets a sliver on a busy machine, so a build always ends): the node's loop only
waits for the answer, and an honest match's bots and referee get the CPU first.

:class:`Builder` runs at most ``at_once`` builds at a time, so that a reader
cycling through many different finished matches costs the node that many
cores' worth of its idle time, and no more; the others wait, holding nothing
but a coroutine. A build process is started (a new interpreter, never a fork:
the node runs grpc's threads) when a build needs one, is stopped when nobody wants its
build any more, after ``idle_s`` without one, and with the node, and ends by
itself if the node dies. A build function, what it takes and what it gives
must pickle (module-level functions, plain data).

Why not :class:`concurrent.futures.ProcessPoolExecutor` (or a bare
:mod:`multiprocessing` process): it cannot stop a build under way (no public
way before Python 3.14), so a build nobody waits for any more, or one running
when the node stops, would hold its process and its CPU to the end; and a
spawned child first imports the parent's main module again, which runs the
top of any script that embeds a node without a ``__main__`` guard. Here the
child is ``python -c`` with the node's import path, a socket pair carries
pickled builds and answers (:class:`multiprocessing.connection.Connection`),
and a build nobody wants is stopped by killing its process.

A build process starts *warm* when it may: it imports what builds need (:data:`WARM_MODULES`)
before it lowers its priority. A small record's first read is mostly those imports; at
``SCHED_IDLE`` on a machine whose cores were all busy, they took more than a command's 10 s
deadline. At most one start in :data:`WARM_EVERY_S` is warm: a reader who starts builds and leaves
(each leaving kills a process) gets the others started at the lowest priority from their first
import, as before.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import math
import os
import pickle
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any, TypeVar

__all__ = ["PRIORITIES", "PRIORITY_ENV", "WARM_EVERY_S", "WARM_MODULES", "BuildError", "BuildFailed",
           "Builder", "build_priority"]

#: the environment variable that sets the build processes' CPU priority (:data:`PRIORITIES`)
PRIORITY_ENV = "BELOTE_BUILD_PRIORITY"
#: ``idle``, the default: ``SCHED_IDLE`` (and nice 19), so that the node's matches and anything else
#: on the machine run first; ``normal``: the node's own priority, for a machine whose other work at
#: normal priority would leave the builds nothing for minutes (the test suite beside a compile or two
#: CPU-bound processes on a laptop: its analyses and replays waited there for the others to end)
PRIORITIES = ("idle", "normal")

#: what a warm build process imports before it lowers its priority: the views' builds, and the
#: results a cluster node reads records from (:func:`arena.tournament.jobs.record_of_result`)
WARM_MODULES = ("arena.referee.replay_views", "arena.tournament.jobs")
#: seconds between two warm starts at least
WARM_EVERY_S = 10.0

_T = TypeVar("_T")


def build_priority() -> str:
    """The build processes' priority from :data:`PRIORITY_ENV` (``idle`` when unset); ValueError naming
    the choices for any other value, so that a node started with one fails at once, saying why."""
    value = os.environ.get(PRIORITY_ENV, "").strip() or "idle"
    if value not in PRIORITIES:
        raise ValueError(f"{PRIORITY_ENV}={value[:40]!r}: the build processes' priority is one of "
                         f"{', '.join(PRIORITIES)}")
    return value


class BuildFailed(Exception):
    """The build process stopped before it answered (killed, out of memory): the next build starts
    another."""


class BuildError(Exception):
    """A build raised an error that could not be sent back as it was: its type and message."""


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(1.0)
    os._exit(0)  # the node is gone: nobody will read what this process builds


#: Linux's ``prctl`` option that has the kernel send a signal to this process when its parent ends
_PR_SET_PDEATHSIG = 1


def _die_with_parent(parent: int) -> None:
    """Have the kernel kill this process when the node's thread that started it ends (Linux). A
    watcher thread alone is not enough: at ``SCHED_IDLE`` on a machine whose cores are all busy it
    may not run for minutes, and the process outlives its node that long. No-op elsewhere; the
    watcher thread stays for them. The node starts build processes from its event loop's thread,
    which lives as long as the node's loop."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes
    import signal

    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # the node ended before the line above: nothing will signal
        os._exit(0)


#: the build process's program: Ctrl-C ignored (a terminal sends it to the node's whole process
#: group: the node stops, and this process with it, but printed a KeyboardInterrupt's traceback),
#: the node's import path first (a test's or a script's own), then :func:`serve` (the standard
#: library only until then)
_CHILD = ("import signal, sys; signal.signal(signal.SIGINT, signal.SIG_IGN); "
          "from multiprocessing.connection import Connection; "
          "conn = Connection(int(sys.argv[1])); sys.path[:] = conn.recv(); "
          "from arena.referee.builds import serve; serve(conn, int(sys.argv[2]))")


def serve(conn: Connection, parent: int) -> None:
    """The build process: the modules the node says to import first (none unless it starts warm),
    then the lowest priority (unless the node says ``normal``), an end of its own if the node dies
    (killed by the kernel on Linux, else by a watcher thread), then one build after another, each
    answered (True, its value) or (False, its error)."""
    _die_with_parent(parent)
    for name in conn.recv():
        with contextlib.suppress(Exception):  # a build that needs it says why, in its own answer
            importlib.import_module(name)
    if conn.recv() == "idle":
        with contextlib.suppress(OSError, AttributeError):
            os.nice(19)
        with contextlib.suppress(OSError, AttributeError):  # Linux: any other task that wakes runs first
            os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    threading.Thread(target=_watch_parent, args=(parent,), name="watch-node", daemon=True).start()
    while True:
        try:
            build, args = conn.recv()
        except (EOFError, OSError):
            return
        try:
            answer: tuple[bool, Any] = (True, build(*args))
        except Exception as e:
            answer = (False, e)
        try:
            conn.send(answer)
        except (pickle.PicklingError, TypeError, AttributeError) as e:
            conn.send((False, BuildError(f"{type(answer[1]).__name__}: {answer[1]} ({e})")))
        except (BrokenPipeError, OSError):
            return


class _Process:
    """One build process and its pipe; it takes one build at a time."""

    def __init__(self, warm: tuple[str, ...] = (), priority: str = "idle") -> None:
        ours, theirs = socket.socketpair()
        with theirs:
            self.proc = subprocess.Popen(
                [sys.executable, "-c", _CHILD, str(theirs.fileno()), str(os.getpid())],
                pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL, close_fds=True)
        self.conn = Connection(ours.detach())
        self.conn.send(list(sys.path))
        self.conn.send(list(warm))
        self.conn.send(priority)

    def call(self, build: Callable[..., Any], args: tuple[Any, ...]) -> Any:
        """Run one build (blocking: called in a thread). The pipe is closed here if the process
        stopped, never under a thread still reading it."""
        try:
            self.conn.send((build, args))
            ok, value = self.conn.recv()
        except (EOFError, OSError):
            self.conn.close()
            raise BuildFailed("the build process stopped; the next read starts another") from None
        if not ok:
            raise value
        return value

    def stop(self, *, reading: bool = False) -> None:
        """Kill the process; its pipe too, unless a thread is ``reading`` it (it gets the end of the
        pipe at once, and closes it)."""
        if self.proc.poll() is None:
            self.proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(5)
        if not reading:
            self.conn.close()


class Builder:
    """Runs build functions in build processes, at most ``at_once`` at a time."""

    def __init__(self, at_once: int = 1, idle_s: float = 60.0, *, warm: tuple[str, ...] = WARM_MODULES,
                 warm_every_s: float = WARM_EVERY_S, priority: str | None = None) -> None:
        #: the build processes' CPU priority (:data:`PRIORITIES`): ``priority``, else :data:`PRIORITY_ENV`'s
        self.priority = build_priority() if priority is None else priority
        if self.priority not in PRIORITIES:
            raise ValueError(f"the build processes' priority is one of {', '.join(PRIORITIES)}, "
                             f"not {self.priority!r}")
        self.at_once = at_once
        self.idle_s = idle_s
        self.warm = warm
        self.warm_every_s = warm_every_s
        self._warmed_at = -math.inf
        self._slots: asyncio.Semaphore | None = None
        self._idle: list[_Process] = []
        self._busy: set[_Process] = set()
        self._idle_timer: asyncio.TimerHandle | None = None
        #: builds started since the node started
        self.builds = 0

    async def run(self, build: Callable[..., _T], *args: Any) -> _T:
        """``build(*args)`` in a build process, once a place is free. Cancelled while it waits, it
        never runs; cancelled while it runs, its process is stopped. :class:`BuildFailed` if the
        process stops before it answers; the build's own error as it raised it."""
        if self._slots is None:
            self._slots = asyncio.Semaphore(self.at_once)
        async with self._slots:
            if self._idle_timer is not None:
                self._idle_timer.cancel()
                self._idle_timer = None
            proc = self._idle.pop() if self._idle else _Process(self._warm_start(), self.priority)
            self._busy.add(proc)
            self.builds += 1
            answered = False
            try:
                value: _T = await asyncio.to_thread(proc.call, build, args)
                answered = True
                return value
            except BuildFailed:
                raise
            except Exception:
                answered = True  # the build's own error: its process is fine
                raise
            finally:
                self._busy.discard(proc)
                if answered:
                    self._idle.append(proc)
                    if not self._busy:
                        self._idle_timer = asyncio.get_running_loop().call_later(self.idle_s, self._stop_idle)
                else:  # cancelled, or the process died: nobody will read what it builds
                    proc.stop(reading=True)

    def _warm_start(self) -> tuple[str, ...]:
        """What a new build process imports before it lowers its priority: :attr:`warm`, unless
        another started warm less than :attr:`warm_every_s` ago."""
        now = time.monotonic()
        if now - self._warmed_at < self.warm_every_s:
            return ()
        self._warmed_at = now
        return self.warm

    @property
    def pids(self) -> list[int]:
        """The build processes' ids (idle or busy)."""
        return [p.proc.pid for p in (*self._idle, *self._busy)]

    def _stop_idle(self) -> None:
        self._idle_timer = None
        idle, self._idle = self._idle, []
        for proc in idle:
            proc.stop()

    def close(self) -> None:
        """Stop every build process (a build under way is abandoned)."""
        if self._idle_timer is not None:
            self._idle_timer.cancel()
        self._stop_idle()
        busy, self._busy = self._busy, set()
        for proc in busy:
            proc.stop(reading=True)
