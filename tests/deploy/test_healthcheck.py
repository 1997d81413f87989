"""The image's HEALTHCHECK (deploy/healthcheck.py) asks the node where the node listens: its own
--listen, read from its command line, or $BELOTE_HEALTH_ADDRESS; not always 127.0.0.1:50051."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.deploy.deployfiles import DEPLOY, ROOT, load_yaml
from tests.deploy.test_k8s import node_container

SCRIPT = DEPLOY / "healthcheck.py"


def healthcheck() -> ModuleType:
    spec = importlib.util.spec_from_file_location("healthcheck", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def image_command() -> list[str]:
    """The image's default command line, as the kernel shows it: the entrypoint's script run by
    python, then CMD."""
    text = (DEPLOY / "Dockerfile").read_text(encoding="utf-8")
    entrypoint, cmd = (json.loads(re.search(rf"^{word} (\[.*\])$", text, re.M).group(1))  # type: ignore[union-attr]
                       for word in ("ENTRYPOINT", "CMD"))
    return ["/usr/local/bin/python", f"/usr/local/bin/{entrypoint[0]}", *entrypoint[1:], *cmd]


def probe(argv: list[str]) -> str | None:
    h = healthcheck()
    flags = h.serve_flags(argv)
    return None if flags is None else h.probe_address(flags)


def test_the_shipped_command_lines_are_probed_where_their_node_listens() -> None:
    assert probe(image_command()) == "127.0.0.1:50051"
    for name in ("node-1", "node-2"):
        command = load_yaml(DEPLOY / "compose.yaml")["services"][name]["command"]
        assert probe(["python", "/usr/local/bin/belote-arena", "serve", *command]) == "127.0.0.1:50051"
    assert probe(["belote-arena", "serve", *node_container()["args"]]) == "127.0.0.1:50051"


@pytest.mark.parametrize(("argv", "address"), [
    (["belote-arena", "serve", "--listen", "0.0.0.0:6000", "--http", "0.0.0.0:8080"], "127.0.0.1:6000"),
    (["belote-arena", "serve", "--listen=[::]:6000"], "[::1]:6000"),
    (["python", "-m", "arena.cli", "serve", "--listen", "127.0.0.2:7000"], "127.0.0.2:7000"),
    (["belote-arena", "serve", "--http", "0.0.0.0:8080"], "127.0.0.1:50051"),  # serve's default --listen
    (["belote-arena", "serve", "--listen", "localhost:0"], None),  # an ephemeral port: unknown
    (["belote-arena", "bot", "list", "--listen", "0.0.0.0:6000"], None),  # not a node
    (["/usr/bin/tini", "--", "sleep", "1"], None),
])
def test_a_node_command_line_gives_its_probe_address(argv: list[str], address: str | None) -> None:
    assert probe(argv) == address


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def test_the_healthcheck_finds_a_real_node_by_its_flags_alone_in_a_pid_namespace(tmp_path: Path) -> None:
    """A node on a port of its own, alone in a PID namespace as in its container: the healthcheck,
    given no address, checks that port and passes; $BELOTE_HEALTH_ADDRESS still overrides it."""
    unshare = shutil.which("unshare")
    if unshare is None or subprocess.run([unshare, "--pid", "--fork", "--mount-proc", "true"],
                                         capture_output=True, timeout=30, check=False).returncode != 0:
        pytest.skip("unshare --pid --mount-proc is not available here (it needs root): the healthcheck's "
                    "search for its node was not run")
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "BELOTE_HEALTH_ADDRESS"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(ROOT / "sdk"), env.get("PYTHONPATH", "")])
    data, log_file = tmp_path / "data", tmp_path / "node.log"
    script = f"""
{sys.executable} -m arena.cli serve --listen 127.0.0.1:{port} --data-dir {data} >{log_file} 2>&1 &
for i in $(seq 120); do
  if {sys.executable} {SCRIPT}; then
    BELOTE_HEALTH_ADDRESS=127.0.0.1:1 {sys.executable} {SCRIPT}; echo "override: $?"
    exit 0
  fi
  sleep 0.25
done
exit 1
"""
    done = subprocess.run([unshare, "--pid", "--fork", "--mount-proc", "sh", "-c", script], env=env,
                          capture_output=True, text=True, timeout=90, check=False)
    log = log_file.read_text(encoding="utf-8") if log_file.exists() else ""
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}\n{log}"
    assert f"serving: 127.0.0.1:{port}" in done.stdout
    assert "override: 1" in done.stdout and "unhealthy: 127.0.0.1:1:" in done.stderr
