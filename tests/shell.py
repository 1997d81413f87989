"""Command lines run as a person pastes them into a terminal, and the commands a command's output
suggests (:func:`hints`). Each line is run by ``bash``, from a folder, with this
interpreter's ``bin`` (its ``python`` and the ``belote-arena`` script) first on ``PATH``.

Every line runs in a process group of its own; what it leaves running (a bot started with ``&``)
is noted when it ends, each process by its id and start time, and stopped when the :class:`Shell`
closes (never a process that merely got a reused id); so is each command started in the
background (what a person runs in a terminal of its own), by its group while its leader, ours,
lives. Output goes to files, never to pipes a child left in the background would hold open.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

#: a command line: the arena's, or one of its shipped bots'
COMMAND = r"(?:belote-arena|python -m belote_bot\.bots\.[a-z_]+) "
AT_END = re.compile(rf"(?:^|: )({COMMAND}[^`]*)$")
QUOTED = re.compile(rf"`({COMMAND}[^`]*)`")


def hints(text: str) -> list[str]:
    """The commands ``text`` suggests, in order: each a command line at the end of a line after ": "
    ("follow it: belote-arena tournament status ID --watch"), or between backticks in a sentence."""
    found = []
    for line in text.splitlines():
        found += QUOTED.findall(line)
        at_end = AT_END.search(line)
        if at_end:
            found.append(at_end.group(1))
    return found


BIN = Path(sys.executable).parent
#: what the caller's environment must not lend the commands: they get what the line gives them
UNSET = ("BELOTE_ADMIN_TOKEN", "BELOTE_TOKEN", "BELOTE_ADDRESS", "BELOTE_REDIS", "BELOTE_REDIS_SENTINEL",
         "BELOTE_REDIS_MASTER", "BELOTE_TLS_CA")


@dataclass
class Done:
    line: str
    code: int
    out: str
    err: str

    def ok(self) -> Done:
        assert self.code == 0, f"`{self.line}` exited {self.code}\n{self.out[-3000:]}\n{self.err[-3000:]}"
        assert "Traceback" not in self.err, f"`{self.line}`:\n{self.err[-3000:]}"
        return self


@dataclass
class Background:
    line: str
    popen: subprocess.Popen[bytes]
    out: Path
    err: Path

    def output(self) -> str:
        return self.out.read_text(errors="replace") + self.err.read_text(errors="replace")

    def alive(self) -> bool:
        return self.popen.poll() is None

    def wait_for(self, pattern: str, timeout: float = 30) -> re.Match[str]:
        """Until its output matches ``pattern`` (what a person waits for, such as "listening on port")."""
        deadline = time.monotonic() + timeout
        while True:
            found = re.search(pattern, self.output())
            if found:
                return found
            assert self.alive(), f"`{self.line}` exited {self.popen.poll()}:\n{self.output()[-3000:]}"
            late = time.monotonic() > deadline
            assert not late, f"`{self.line}`: no {pattern!r} in {timeout} s\n{self.output()[-3000:]}"
            time.sleep(0.05)

    def stop(self, timeout: float = 20) -> int:
        """Ctrl-C, as in its terminal; its exit code."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.popen.pid, signal.SIGINT)
        try:
            return self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"`{self.line}` did not stop within {timeout} s of Ctrl-C\n"
                                 f"{self.output()[-3000:]}") from None


@dataclass
class Shell:
    cwd: Path
    logs: Path
    env: dict[str, str] = field(default_factory=dict)
    #: what the lines left running: (pid, start time) of each process
    left: list[tuple[int, str]] = field(default_factory=list)
    started: list[Background] = field(default_factory=list)
    lines: int = 0

    @classmethod
    @contextlib.contextmanager
    def session(cls, cwd: Path, logs: Path, **env: str) -> Iterator[Shell]:
        """A shell in ``cwd`` (made if need be), its output kept in ``logs``; ``env`` added to a clean
        environment (the caller's but the arena's variables)."""
        cwd.mkdir(parents=True, exist_ok=True)
        logs.mkdir(parents=True, exist_ok=True)
        base = {k: v for k, v in os.environ.items() if k not in UNSET}
        base["PATH"] = f"{BIN}{os.pathsep}{base.get('PATH', '')}"
        base["PYTHONUNBUFFERED"] = "1"
        shell = cls(cwd, logs, {**base, **env})
        try:
            yield shell
        finally:
            shell.close()

    def _files(self, name: str) -> tuple[Path, Path]:
        self.lines += 1
        return self.logs / f"{self.lines:02d}-{name}.out", self.logs / f"{self.lines:02d}-{name}.err"

    def _popen(self, line: str, name: str) -> tuple[subprocess.Popen[bytes], Path, Path]:
        out, err = self._files(name)
        with out.open("wb") as o, err.open("wb") as e:
            popen = subprocess.Popen(["bash", "-c", line], cwd=self.cwd, env=self.env, stdout=o, stderr=e,
                                     stdin=subprocess.DEVNULL, start_new_session=True)
        return popen, out, err

    def run(self, line: str, timeout: float = 180) -> Done:
        """Run ``line`` to its end; what it printed. What it left in the background keeps running."""
        popen, out, err = self._popen(line, "run")
        try:
            code = popen.wait(timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"`{line}` did not end within {timeout} s\n{out.read_text()[-3000:]}\n"
                                 f"{err.read_text()[-3000:]}") from None
        finally:
            self.left += members(popen.pid)  # its session's: ours alone (setsid gave it its own)
        return Done(line, code, out.read_text(errors="replace"), err.read_text(errors="replace"))

    def start(self, line: str) -> Background:
        """Run ``line`` in the background (a terminal of its own), until :meth:`Background.stop`."""
        popen, out, err = self._popen(line, "bg")
        started = Background(line, popen, out, err)
        self.started.append(started)
        return started

    def until(self, what: str, check: Callable[[], bool], timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while not check():
            assert time.monotonic() < deadline, f"no {what} within {timeout} s"
            time.sleep(0.2)

    def close(self) -> None:
        """Stop whatever is left: Ctrl-C to what runs in the background (a terminal's), then SIGTERM
        to what the lines left running (a child of ``&`` ignores Ctrl-C, as in a script), then a kill."""
        for started in self.started:
            if started.alive():
                with contextlib.suppress(AssertionError):
                    started.stop(timeout=10)
            # what did not stop on Ctrl-C (a loaded machine, a bot deaf to it), and anything its line
            # left in its terminal's process group, is killed: nothing outlives the test
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(started.popen.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                started.popen.wait(5)
        for sig in (signal.SIGTERM, signal.SIGKILL):
            for pid, start in self.left:
                if start_time(pid) == start:  # still that process, not another given its id since
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, sig)
            time.sleep(0.5 if sig == signal.SIGTERM else 0)


def start_time(pid: int) -> str | None:
    """When process ``pid`` started (in clock ticks since boot), None if there is none."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rpartition(")")[2].split()[19]


def members(session: int) -> list[tuple[int, str]]:
    """(pid, start time) of each process of the session ``session``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rpartition(")")[2].split()
        except OSError:
            continue
        if int(fields[3]) == session:  # after the name: state, ppid, pgrp, session
            found.append((int(entry.name), fields[19]))
    return found


def port_free(port: int) -> bool:
    """Whether nothing listens on ``port`` of 127.0.0.1 (a README command dials its fixed port)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True
