"""A Redis primary, a replica and three sentinels of one test's own, on loopback.

Started from the Redis install itself (``redis-server``, and ``redis-server --sentinel`` for the
sentinels: the same binary), each on a free port, keeping nothing on disk but the sentinels'
configuration files (which they rewrite) in the test's folder, stopped by their pids. The
sentinels declare the primary down after :data:`DOWN_AFTER_MS` and fail over at once, so a test
that kills the primary sees a replica promoted within a few seconds.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.cluster.procs import free_port, wait_for

MASTER = "arena"
#: how long the sentinels wait before they call a silent primary down (milliseconds)
DOWN_AFTER_MS = 1000
#: how long a failover may take before the sentinels try another (milliseconds)
FAILOVER_TIMEOUT_MS = 3000


def _answers(port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2) as s:
        s.sendall(b"PING\r\n")
        return s.recv(16).startswith(b"+PONG")
    return False


@dataclass
class RedisSet:
    """The servers and sentinels of one test; every process by its port."""

    root: Path
    servers: list[int] = field(default_factory=list)
    sentinel_ports: list[int] = field(default_factory=list)
    procs: dict[int, subprocess.Popen[bytes]] = field(default_factory=dict)

    @property
    def sentinels(self) -> str:
        """``--redis-sentinel``'s value."""
        return ",".join(f"127.0.0.1:{p}" for p in self.sentinel_ports)

    def client(self, port: int) -> Any:
        import redis

        return redis.Redis(host="127.0.0.1", port=port, decode_responses=True, socket_timeout=5)

    def primary_port(self) -> int:
        """The port of the primary as the first sentinel that answers names it."""
        for port in self.sentinel_ports:
            with contextlib.suppress(Exception), self.client(port) as s:
                addr = s.execute_command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", MASTER)
                if addr:
                    return int(addr[1])
        raise AssertionError("no sentinel names a primary")

    def start_server(self, port: int, replica_of: int | None = None) -> None:
        # a replica's first sync at once (Redis waits 5 s by default for more replicas to share it)
        argv = ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                "--appendonly", "no",
                "--dir", str(self.root), "--repl-diskless-sync-delay", "0"]
        if replica_of is not None:
            argv += ["--replicaof", "127.0.0.1", str(replica_of)]
        self._spawn(port, argv)

    def start_sentinel(self, port: int, primary: int) -> None:
        conf = self.root / f"sentinel-{port}.conf"
        conf.write_text(
            f"port {port}\nbind 127.0.0.1\ndir {self.root}\n"
            f"sentinel monitor {MASTER} 127.0.0.1 {primary} 2\n"
            f"sentinel down-after-milliseconds {MASTER} {DOWN_AFTER_MS}\n"
            f"sentinel failover-timeout {MASTER} {FAILOVER_TIMEOUT_MS}\n"
            f"sentinel parallel-syncs {MASTER} 1\n", encoding="utf-8")
        self._spawn(port, ["redis-server", str(conf), "--sentinel"])

    def _spawn(self, port: int, argv: list[str]) -> None:
        log = (self.root / f"redis-{port}.log").open("ab")
        with log:
            proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        self.procs[port] = proc
        deadline = time.monotonic() + 10
        while not _answers(port):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{' '.join(argv)} did not start: {self.log(port)[-2000:]}")
            time.sleep(0.05)

    def log(self, port: int) -> str:
        path = self.root / f"redis-{port}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def kill(self, port: int) -> None:
        """SIGKILL, and reap it: a primary dying with what it did not replicate yet."""
        proc = self.procs.pop(port)
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)

    def pause(self, port: int) -> None:
        """SIGSTOP: the server holds its connections and answers nothing (SIGCONT: :meth:`resume`)."""
        os.kill(self.procs[port].pid, signal.SIGSTOP)

    def resume(self, port: int) -> None:
        os.kill(self.procs[port].pid, signal.SIGCONT)

    def stop(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                os.kill(proc.pid, signal.SIGCONT)
                os.kill(proc.pid, signal.SIGTERM)
        for proc in self.procs.values():
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait(10)
        self.procs.clear()


def synced(replica: Any) -> bool:
    info = replica.info("replication")
    return bool(info.get("role") == "slave" and info.get("master_link_status") == "up")


@contextlib.contextmanager
def primary_and_replica(root: Path) -> Iterator[RedisSet]:
    """A primary (``servers[0]``) and its replica (``servers[1]``), in sync; no sentinel."""
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not on PATH")
    root.mkdir(parents=True, exist_ok=True)
    rs = RedisSet(root)
    try:
        rs.servers = [free_port(), free_port()]
        rs.start_server(rs.servers[0])
        rs.start_server(rs.servers[1], replica_of=rs.servers[0])
        with rs.client(rs.servers[1]) as replica:
            wait_for("the replica to sync", lambda: synced(replica), 15)
        yield rs
    finally:
        rs.stop()


@contextlib.contextmanager
def sentinel_set(root: Path) -> Iterator[RedisSet]:
    """A primary and a replica in sync, and three sentinels that agree on them (quorum 2)."""
    with primary_and_replica(root) as rs:
        rs.sentinel_ports = [free_port() for _ in range(3)]
        for port in rs.sentinel_ports:
            rs.start_sentinel(port, rs.servers[0])

        def agreed() -> bool:  # each knows the replica and the two other sentinels
            for port in rs.sentinel_ports:
                with rs.client(port) as s:
                    state = s.execute_command("SENTINEL", "MASTER", MASTER)
                    if isinstance(state, list):
                        state = dict(zip(state[::2], state[1::2], strict=True))
                    fields = state
                    if int(fields["num-slaves"]) != 1 or int(fields["num-other-sentinels"]) != 2:
                        return False
            return True

        wait_for("the sentinels to know the replica and each other", agreed, 20, every=0.2)
        yield rs
