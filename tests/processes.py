"""No process a test starts outlives its owner: the run fails if one does, and the process is ended.

Every process a test starts (a node, a bot, a command a person types, a build process, a browser)
inherits the environment, and in it :data:`OWNER`: which test, and which of its phases, was running
when it started. A loaded run once left two bots of ``test_hints`` reconnecting to a dead node for
70 minutes, their working folder deleted; nothing noticed. Now, after a test's teardown, any process
still alive that carries its token is a leak:

- started while the test ran or tore down: its test owns it, so it must be gone once the test is;
- started while the test was set up: a fixture owns it, which may be the module's, so it must be
  gone once the module's fixtures are torn down (the last test of the module on this worker);
- started while tests were collected, or by the session's own code: gone when the session ends.

A leak is ended (SIGKILL to it) and the test fails at teardown, naming the process and the test
that started it. A process reading ``/proc`` is Linux only: elsewhere nothing is checked.

A process given an environment of its own (``env={...}`` built from nothing) carries no token and
is not seen: the tests build theirs from ``os.environ``. The interpreter's own helpers
(multiprocessing's resource tracker and fork server, one per worker, which end with it) are not
the test's.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
import uuid
from collections.abc import Generator, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

#: the environment variable every process started during a test inherits: ``RUN:WORKER:INDEX:PHASE``
OWNER = "BELOTE_TEST_OWNER"
#: the run's id, set once by the process that starts the run (xdist's workers inherit it)
RUN = "BELOTE_TEST_RUN"
#: how long a process may take to end after its owner stopped it (a loaded machine's signal delivery
#: and exit), before it counts as a leak (tests/test_processes.py shortens it for its own runs)
GRACE_S = float(os.environ.get("BELOTE_TEST_PROCESS_GRACE_S", "5"))
#: helpers of the test process itself, not of any test (they end when it does)
OWN_HELPERS = ("multiprocessing.resource_tracker", "multiprocessing.forkserver")
PROC = Path("/proc")


@dataclass(frozen=True)
class Proc:
    pid: int
    owner: str
    cmdline: str


#: a kernel thread's flag in ``/proc/PID/stat``
PF_KTHREAD = 0x00200000
#: how long processes whose environment reads empty are read again (below)
EXEC_WAIT_S = 1.0


def _stat(entry: Path) -> list[str]:
    """``/proc/PID/stat``'s fields after the command's name: state, ppid, ..., flags at 6, start at 19."""
    return (entry / "stat").read_text().rpartition(")")[2].split()


#: when this process started, in the kernel's ticks since boot
STARTED = int(_stat(Path(f"/proc/{os.getpid()}"))[19]) if PROC.is_dir() else 0


def _being_execd(entry: Path) -> bool:
    """Whether ``entry``, whose environment read empty, may be a process in the middle of an
    ``execve`` rather than one with no environment (a zombie, a kernel thread, ``env -i``): a live
    user process started since this one. Its new memory's environment is laid out a moment after
    the swap, and reads empty until then: a loaded run once missed both processes of ``bash -c
    "sleep 110 & exec sleep 111"``, the scan falling as each was exec'd."""
    fields = _stat(entry)
    return fields[0] not in "ZX" and not int(fields[6]) & PF_KTHREAD and int(fields[19]) >= STARTED


def carrying(tokens: Iterable[str]) -> list[Proc]:
    """The live processes (not zombies, not this one) whose environment carries one of ``tokens``."""
    wanted = {f"{OWNER}={t}".encode() for t in tokens}
    if not wanted or not PROC.is_dir():
        return []
    found = []
    me = os.getpid()
    entries = [e for e in PROC.iterdir() if e.name.isdigit() and int(e.name) != me]
    deadline = time.monotonic() + EXEC_WAIT_S
    while entries:
        again = []
        for entry in entries:
            try:
                env = (entry / "environ").read_bytes()
                if not env:
                    if _being_execd(entry) and time.monotonic() < deadline:
                        again.append(entry)  # read again in a moment
                    continue
                owner = next((v for v in env.split(b"\0") if v in wanted), None)
                if owner is None:
                    continue
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ")
            except (OSError, ValueError, IndexError):
                continue
            command = cmdline.decode(errors="replace").strip()
            if any(helper in command for helper in OWN_HELPERS):
                continue
            found.append(Proc(int(entry.name), owner.decode().partition("=")[2], command))
        entries = again
        if entries:
            time.sleep(0.005)
    return found


def ended(tokens: Iterable[str], grace_s: float = GRACE_S) -> list[Proc]:
    """The processes carrying ``tokens`` still alive after ``grace_s``; each is killed."""
    tokens = list(tokens)
    deadline = time.monotonic() + grace_s
    left = carrying(tokens)
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = carrying(tokens)
    for proc in left:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(proc.pid, signal.SIGKILL)
    return left


def describe(leaks: list[Proc], started: dict[str, str]) -> str:
    return "\n".join(f"  pid {p.pid}, started during {started.get(p.owner, p.owner)}: {p.cmdline[:300]}"
                     for p in leaks)


@dataclass
class Owners:
    """The tokens of this test process, and which are still to be checked."""

    run: str
    worker: str
    index: int = 0
    #: token -> "the setup of tests/x.py::test_y" (for the message)
    started: dict[str, str] = field(default_factory=dict)
    #: setup tokens of the current module's tests, checked when its fixtures are torn down
    module_setups: list[str] = field(default_factory=list)

    def token(self, phase: str) -> str:
        return f"{self.run}:{self.worker}:{self.index}:{phase}"

    def enter(self, item: pytest.Item, phase: str) -> str:
        token = self.token(phase)
        self.started[token] = f"the {phase} of {item.nodeid}"
        os.environ[OWNER] = token
        return token


owners: Owners | None = None


def pytest_configure(config: pytest.Config) -> None:
    global owners
    run = os.environ.setdefault(RUN, uuid.uuid4().hex[:12])
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    owners = Owners(run, worker)
    os.environ[OWNER] = f"{run}:{worker}:session"


def module_of(item: pytest.Item | None) -> object:
    return None if item is None else getattr(item, "module", None) or item.path


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, None, None]:
    if owners is not None:
        owners.index += 1
        owners.module_setups.append(owners.enter(item, "setup"))
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    if owners is not None:
        owners.enter(item, "call")
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, None, None]:
    if owners is None:
        return (yield)
    owners.enter(item, "teardown")
    try:
        return (yield)
    finally:
        # checked (and ended) even when a fixture's teardown failed: a leak is ended either way
        os.environ[OWNER] = owners.token("between")
        tokens = [owners.token("call"), owners.token("teardown")]
        if module_of(nextitem) != module_of(item):  # the module's fixtures were torn down
            tokens += owners.module_setups
            owners.module_setups = []
        leaks = ended(tokens)
        if leaks:
            raise AssertionError(f"{len(leaks)} process(es) outlived their owner (now killed):\n"
                                 f"{describe(leaks, owners.started)}")


def pytest_sessionfinish(session: pytest.Session) -> None:
    """What is left of the session's own tokens (collection, between tests) is ended; the run fails."""
    if owners is None:
        return
    tokens = [f"{owners.run}:{owners.worker}:session", *owners.module_setups]
    tokens += [f"{owners.run}:{owners.worker}:{i}:between" for i in range(owners.index + 1)]
    leaks = ended(tokens, grace_s=1.0)
    if leaks:
        print(f"\n{len(leaks)} process(es) outlived the test session (now killed):\n"
              f"{describe(leaks, owners.started)}")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
