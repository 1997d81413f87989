"""The image's HEALTHCHECK: ask the node's gRPC health service whether it serves.

    python /opt/belote/healthcheck.py [HOST:PORT]

The address, first found of: the argument; $BELOTE_HEALTH_ADDRESS; the node's own ``--listen``,
read from its command line in /proc (the container's PID 1, ``belote-arena serve ...``, or else the
one such process there is), a wildcard host (0.0.0.0, ::) asked on loopback; serve's default,
127.0.0.1:50051. So a node given another ``--listen`` (docker run IMAGE --listen 0.0.0.0:6000) is
checked where it listens.

Exit 0 when the overall status ("" service) is SERVING (printing the address checked), 1 otherwise
(NOT_SERVING while the node drains, no answer within 3 s, a refused connection). It is what
grpc_health_probe does, with the grpc_health stub the image already has. Plaintext only: a node
serving TLS (--tls-cert) is checked at /healthz on its HTTP port, which says the same (Kubernetes'
grpc probe is plaintext too: deploy/k8s/external probes /healthz), or with grpc_health_probe -tls.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

#: serve's own default --listen
DEFAULT = "127.0.0.1:50051"
#: a wildcard host, and the loopback address a probe inside the container asks instead
LOOPBACK = {"": "127.0.0.1", "0.0.0.0": "127.0.0.1", "[::]": "[::1]", "::": "[::1]"}


def serve_flags(argv: Sequence[str]) -> list[str] | None:
    """The flags after ``serve`` when ``argv`` runs a node (``belote-arena serve``, ``python -m
    arena.cli serve``); None for any other command line."""
    for i, arg in enumerate(argv):
        if os.path.basename(arg) == "belote-arena" or (arg == "-m" and argv[i + 1: i + 2] == ["arena.cli"]):
            rest = argv[i + 1:] if arg != "-m" else argv[i + 2:]
            return list(rest[1:]) if rest[:1] == ["serve"] else None
    return None


def probe_address(flags: Sequence[str]) -> str | None:
    """Where a probe in the node's container reaches a node run with ``flags``: its --listen, a
    wildcard host on loopback; None when it cannot be known (an ephemeral port)."""
    listen = DEFAULT
    for i, flag in enumerate(flags):
        if flag == "--listen" and i + 1 < len(flags):
            listen = flags[i + 1]
        elif flag.startswith("--listen="):
            listen = flag.split("=", 1)[1]
    host, _, port = listen.rpartition(":")
    if not port.isdigit() or int(port) == 0:
        return None
    return f"{LOOPBACK.get(host, host)}:{port}"


def node_command_lines(proc: Path = Path("/proc")) -> Iterator[tuple[int, list[str]]]:
    """(pid, argv) of each process in ``proc`` that runs a node, PID 1 first."""
    pids = sorted(int(p.name) for p in proc.iterdir() if p.name.isdigit())
    for pid in pids:
        try:
            raw = (proc / str(pid) / "cmdline").read_bytes()
        except OSError:  # gone, or not ours to read
            continue
        argv = [a.decode(errors="replace") for a in raw.split(b"\0")[:-1]]
        if serve_flags(argv) is not None:
            yield pid, argv


def address(args: Sequence[str]) -> str:
    if args:
        return args[0]
    if os.environ.get("BELOTE_HEALTH_ADDRESS"):
        return os.environ["BELOTE_HEALTH_ADDRESS"]
    nodes = list(node_command_lines())
    if nodes and (nodes[0][0] == 1 or len(nodes) == 1):
        flags = serve_flags(nodes[0][1])
        found = probe_address(flags or [])
        if found is not None:
            return found
    return DEFAULT


def main() -> int:
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    where = address(sys.argv[1:])
    try:
        with grpc.insecure_channel(where) as channel:
            reply = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(service=""),
                                                              timeout=3)
    except grpc.RpcError as e:
        print(f"unhealthy: {where}: {e.code().name}", file=sys.stderr)
        return 1
    if reply.status != health_pb2.HealthCheckResponse.SERVING:
        print(f"unhealthy: {where}: {health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)}",
              file=sys.stderr)
        return 1
    print(f"serving: {where}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
