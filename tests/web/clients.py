"""Raw HTTP clients for the web tests: from a chosen loopback address, slow, or rude on purpose.

Linux routes all of 127.0.0.0/8 to the loopback interface, so a client that
binds its socket to 127.0.0.2 before connecting is, to the server, a second
address on the same machine.
"""

from __future__ import annotations

import json
import socket
import time
from typing import Any

#: a second address of this machine (any of 127.0.0.0/8 is loopback on Linux)
OTHER = "127.0.0.2"


def host_port(url: str) -> tuple[str, int]:
    host, _, port = url.split("://", 1)[1].rstrip("/").rpartition(":")
    return host, int(port)


def connect(url: str, source: str = "127.0.0.1", timeout: float = 10.0) -> socket.socket:
    """A TCP connection to the site at ``url`` from the loopback address ``source``."""
    return socket.create_connection(host_port(url), timeout=timeout, source_address=(source, 0))


def request(url: str, path: str, source: str = "127.0.0.1", *, method: str = "GET",
            headers: dict[str, str] | None = None, body: bytes = b"",
            timeout: float = 30.0) -> tuple[int, dict[str, str], bytes]:
    """One whole request on a fresh connection from ``source``: (status, headers, body); status 0
    when the server closed the connection without an answer."""
    host, port = host_port(url)
    head = {"Host": f"{host}:{port}", "Connection": "close", **(headers or {})}
    if body or method in ("POST", "PUT"):
        head["Content-Length"] = str(len(body))
    raw = f"{method} {path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in head.items()) + "\r\n"
    with connect(url, source, timeout) as s:
        try:
            s.sendall(raw.encode("latin-1") + body)
            reply = read_all(s)
        except ConnectionError:
            return 0, {}, b""
    if not reply:
        return 0, {}, b""
    top, _, rest = reply.partition(b"\r\n\r\n")
    lines = top.decode("latin-1").split("\r\n")
    fields: dict[str, str] = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        fields.setdefault(name.strip().lower(), value.strip())
    return int(lines[0].split()[1]), fields, rest


def read_all(s: socket.socket) -> bytes:
    out = b""
    while chunk := s.recv(65536):
        out += chunk
    return out


def json_of(body: bytes) -> Any:
    return json.loads(body)


def closed_by_peer(s: socket.socket, wait: float = 0.0) -> bool:
    """Whether the server has closed ``s`` (an end of stream or a reset), waiting up to ``wait`` s."""
    s.settimeout(wait if wait > 0 else 0.001)
    try:
        return s.recv(4096) == b""
    except (TimeoutError, BlockingIOError):
        return False
    except ConnectionError:
        return True


def closed_within(s: socket.socket, seconds: float) -> float | None:
    """Seconds until the server closed ``s`` (whatever it sent first), or None if it did not."""
    start = time.monotonic()
    s.settimeout(seconds)
    try:
        while s.recv(4096):
            pass
    except TimeoutError:
        return None
    except ConnectionError:
        pass
    return time.monotonic() - start
