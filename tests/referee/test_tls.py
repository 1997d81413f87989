"""A node on TLS: bots that trust its CA play; strangers, plaintext clients and wrong CAs do not.

Every test makes its own CA and a server certificate for localhost and
127.0.0.1 (:mod:`tests.referee.certs`). The bots use the SDK's public surface
(``run_async(..., tls_ca=...)``), the operator the command line
(``belote-arena serve --tls-cert --tls-key``, ``bot list --tls-ca``).
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
import pytest
from belote_bot import HeuristicBot, RandomBot, run_async
from belote_bot.bots.random import main as random_bot_main
from belote_bot.client import Client
from belote_bot.errors import TlsConfigError
from belote_bot.tls import channel_credentials
from grpc_health.v1 import health_pb2, health_pb2_grpc

from arena import remote
from arena.cli import main as arena_main
from arena.edge.tls import TlsError
from arena.harness import local_arena
from arena.node.run import NodeSettings
from arena.referee.node import Node, NodeConfig
from arena.referee.registry import BotRegistry
from arena.referee.service import start_server, stop_server
from tests.scripts import script

from .arena_helpers import FAST, arun, link_of, until
from .certs import Pki, make_pki

pytestmark = pytest.mark.security


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    made = make_pki(tmp_path_factory.mktemp("pki"))
    if made is None:
        pytest.skip("no way to make a test certificate: neither the cryptography package nor openssl")
    return made


class Lines(logging.Handler):
    """The SDK's log lines, as a test waits for them."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())

    def __enter__(self) -> Lines:
        logging.getLogger("belote_bot").addHandler(self)
        return self

    def __exit__(self, *exc: object) -> None:
        logging.getLogger("belote_bot").removeHandler(self)


async def health(address: str, credentials: grpc.ChannelCredentials | None) -> int:
    """The node's health status over a TLS channel (plaintext without ``credentials``)."""
    channel = (grpc.aio.insecure_channel(address) if credentials is None
               else grpc.aio.secure_channel(address, credentials))
    async with channel:
        stub: Any = health_pb2_grpc.HealthStub(channel)  # its type stubs list no methods
        reply = await stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=5)
        status: int = reply.status
        return status


# ------------------------------------------------------------- the SDK
def test_a_bot_with_the_nodes_ca_plays_a_whole_match_over_tls(pki: Pki) -> None:
    async def main() -> str:
        async with local_arena(time=FAST, tls=(pki.cert, pki.key, pki.ca)) as arena:
            await arena.connect("alpha", HeuristicBot(1))
            await arena.connect("beta", RandomBot(2))
            record = await arena.play("alpha", "beta", "coinche", seed=3)
            return str(record.result.reason)

    assert arun(main(), timeout=60) == "finished"


@pytest.mark.parametrize("trust", ["another CA", "the system's roots"])
def test_a_bot_that_does_not_trust_the_nodes_ca_is_refused_and_says_why_in_one_line(
    pki: Pki, trust: str,
) -> None:
    tls_ca = pki.other_ca if trust == "another CA" else None

    async def main() -> str:
        async with local_arena(time=FAST, tls=(pki.cert, pki.key, pki.ca)) as arena:
            _, token = arena.node.register_bot("stranger")
            stop = asyncio.Event()
            with Lines() as lines:
                task = asyncio.create_task(run_async(RandomBot(1), arena.address, token, stop=stop,
                                                     tls_ca=tls_ca, tls=True))
                await until(lambda: any("cannot reach" in m for m in lines.messages), 15, "the SDK's warning")
                stop.set()
                await asyncio.wait_for(task, 5)
            assert not link_of(arena.node, "stranger").connected
            return next(m for m in lines.messages if "cannot reach" in m)

    line = arun(main())
    assert "\n" not in line
    assert "UNAVAILABLE" in line and "certificate is not signed by a CA this bot trusts" in line


def test_a_plaintext_bot_cannot_talk_to_a_tls_port_and_is_told_to_use_tls(pki: Pki) -> None:
    async def main() -> str:
        async with local_arena(time=FAST, tls=(pki.cert, pki.key, pki.ca)) as arena:
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await health(arena.address, None)
            assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
            _, token = arena.node.register_bot("plain")
            client = Client(RandomBot(1), arena.address, token)
            stop = asyncio.Event()
            with Lines() as lines:
                task = asyncio.create_task(client.run(stop))
                await until(lambda: any("cannot reach" in m for m in lines.messages), 15, "the SDK's warning")
                stop.set()
                await asyncio.wait_for(task, 5)
            assert client.welcome is None
            # the node is unharmed: a client that trusts its CA is served
            assert await health(arena.address, channel_credentials(pki.ca)) == 1
            return next(m for m in lines.messages if "cannot reach" in m)

    assert "if it serves TLS, pass tls_ca= or tls=True" in arun(main())


class Eavesdropper:
    """A relay on the path between bots and the node that keeps every byte it passes on."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.seen = bytearray()
        self.server: asyncio.Server | None = None

    async def start(self) -> str:
        self.server = await asyncio.start_server(self._relay, "127.0.0.1", 0)
        port = self.server.sockets[0].getsockname()[1]
        return f"127.0.0.1:{port}"

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target_port)

        async def pump(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            try:
                while data := await src.read(65536):
                    self.seen += data
                    dst.write(data)
                    await dst.drain()
            except ConnectionError:
                pass
            finally:
                dst.close()

        await asyncio.gather(pump(reader, up_writer), pump(up_reader, writer))

    def close(self) -> None:
        if self.server is not None:
            self.server.close()


@pytest.mark.parametrize("tls", [False, True], ids=["plaintext", "tls"])
def test_an_eavesdropper_on_the_path_reads_the_bots_tokens_only_without_tls(pki: Pki, tls: bool) -> None:
    async def main() -> list[bool]:
        async with local_arena(time=FAST, tls=(pki.cert, pki.key, pki.ca) if tls else None) as arena:
            spy = Eavesdropper(int(arena.address.rsplit(":", 1)[1]))
            through_spy = await spy.start()
            tokens = [arena.node.register_bot(name)[1] for name in ("alpha", "beta")]
            stop = asyncio.Event()
            bots = [asyncio.create_task(run_async(bot, through_spy, token, stop=stop, tls_ca=arena.tls_ca))
                    for bot, token in zip((HeuristicBot(1), RandomBot(2)), tokens, strict=True)]
            try:
                await until(lambda: all(link_of(arena.node, n).connected for n in ("alpha", "beta")), 15,
                            "both bots through the spy")
                record = await arena.play("alpha", "beta", "coinche", seed=5, deals=1)
                assert record.result.reason == "finished"
            finally:
                stop.set()
                await asyncio.gather(*bots, return_exceptions=True)
                spy.close()
            return [token.encode() in spy.seen for token in tokens]

    assert arun(main()) == [not tls, not tls]


def test_the_health_check_over_tls_answers_serving(pki: Pki) -> None:
    async def main() -> int:
        async with local_arena(time=FAST, tls=(pki.cert, pki.key, pki.ca)) as arena:
            host_named = arena.address.replace("127.0.0.1", "localhost")
            assert await health(host_named, channel_credentials(pki.ca)) == 1
            return await health(arena.address, channel_credentials(pki.ca))

    assert arun(main()) == health_pb2.HealthCheckResponse.SERVING


def test_the_fleet_dials_the_peers_a_node_names_with_the_same_ca(pki: Pki) -> None:
    async def main() -> None:
        shared = BotRegistry(None)  # the bots both nodes know, as a cluster's broker shares them
        nodes = [Node(NodeConfig(time=FAST), registry=shared) for _ in range(2)]
        credentials = grpc.ssl_server_credentials([(pki.key.read_bytes(), pki.cert.read_bytes())])
        servers = [await start_server(node, credentials=credentials) for node in nodes]
        first, second = (f"localhost:{port}" for _, port in servers)
        try:
            _, token = nodes[0].register_bot("roamer")
            await nodes[0].set_peers([second])
            stop = asyncio.Event()
            task = asyncio.create_task(run_async(RandomBot(1), first, token, stop=stop,
                                                 tls_ca=pki.ca))
            await until(lambda: all(link_of(n, "roamer").connected for n in nodes) or task.done(), 15,
                        "the bot on both nodes")
            stop.set()
            await asyncio.wait_for(task, 5)
        finally:
            for (server, _), node in zip(servers, nodes, strict=True):
                await stop_server(server, node, grace=0.2)

    arun(main())


def test_an_unreadable_ca_file_is_refused_before_connecting(tmp_path: Path) -> None:
    not_pem = tmp_path / "ca.txt"
    not_pem.write_text("not a certificate")
    with pytest.raises(TlsConfigError, match="cannot read the TLS CA file"):
        arun(run_async(RandomBot(1), "127.0.0.1:1", "t", tls_ca=tmp_path / "missing.pem"))
    with pytest.raises(TlsConfigError, match="holds no PEM certificate"):
        arun(run_async(RandomBot(1), "127.0.0.1:1", "t", tls_ca=not_pem))
    with pytest.raises(ValueError, match="not both"):
        arun(run_async(RandomBot(1), "127.0.0.1:1", "t", tls=True,
                       credentials=grpc.ssl_channel_credentials()))


def test_the_built_in_bots_take_the_ca_from_the_command_line_or_the_environment(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    missing = str(tmp_path / "missing.pem")
    monkeypatch.setenv("BELOTE_TOKEN", "bt_t")
    assert random_bot_main(["--address", "127.0.0.1:1", "--tls-ca", missing]) == 2
    monkeypatch.setenv("BELOTE_TLS_CA", missing)
    assert random_bot_main(["--address", "127.0.0.1:1"]) == 2
    errors = capsys.readouterr().err.strip().splitlines()
    assert len(errors) == 2 and all(f"cannot read the TLS CA file {missing}" in e for e in errors)


# ------------------------------------------------------------- the node
def test_a_node_needs_both_the_certificate_and_its_key(pki: Pki) -> None:
    with pytest.raises(TlsError, match="both"):
        NodeSettings(tls_cert=pki.cert)
    with pytest.raises(TlsError, match="both"):
        NodeSettings(tls_key=pki.key)


@pytest.mark.parametrize("args, says", [
    (["--tls-cert", "CERT"], "--tls-cert and --tls-key go together"),
    (["--tls-key", "KEY"], "--tls-cert and --tls-key go together"),
    (["--tls-cert", "CERT", "--tls-key", "OTHER_KEY"], "does not belong to the certificate"),
    (["--tls-cert", "KEY", "--tls-key", "KEY"], "is not a PEM certificate"),
    (["--tls-cert", "CERT", "--tls-key", "CERT"], "is not a PEM private key"),
    (["--tls-cert", "MISSING", "--tls-key", "KEY"], "cannot read the TLS certificate"),
])
def test_serve_refuses_a_certificate_and_key_it_cannot_use_in_one_line(
    pki: Pki, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
    args: list[str], says: str,
) -> None:
    monkeypatch.setenv("GRPC_VERBOSITY", "ERROR")  # what serve sets for itself, undone after the test
    files = {"CERT": pki.cert, "KEY": pki.key, "OTHER_KEY": pki.other_key, "MISSING": tmp_path / "no.pem"}
    argv = ["serve", "--data-dir", str(tmp_path / "data"), *(str(files.get(a, a)) for a in args)]
    assert arena_main(argv) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ") and says in err, err
    assert not (tmp_path / "data").exists()  # refused before anything started


def list_bots(address: str, credentials: remote.Credentials) -> list[Any]:
    with remote.Remote(address, credentials=credentials) as node:
        return node.list_bots()


def test_remote_commands_name_a_tls_failure(pki: Pki) -> None:
    async def main() -> list[str]:
        said = []
        async with local_arena(time=FAST, tls=(pki.cert, pki.key, pki.ca)) as arena:
            for creds in (remote.channel_credentials(str(pki.other_ca)), None):
                with pytest.raises(remote.RemoteError) as refused:
                    await asyncio.to_thread(list_bots, arena.address, creds)
                said.append(str(refused.value))
        async with local_arena(time=FAST) as plaintext:
            with pytest.raises(remote.RemoteError) as refused:
                await asyncio.to_thread(list_bots, plaintext.address, remote.channel_credentials(str(pki.ca)))
            said.append(str(refused.value))
        return said

    wrong_ca, plaintext_client, tls_client = arun(main())
    assert "no trusted CA signed" in wrong_ca and "--tls-ca" in wrong_ca
    assert "if it serves TLS, pass --tls-ca or --tls" in plaintext_client
    assert "does not speak TLS" in tls_client


# ------------------------------------------------ the whole node, as run
BELOTE_ARENA = script("belote-arena")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    assert BELOTE_ARENA is not None
    return subprocess.run([BELOTE_ARENA, *args], capture_output=True, text=True, timeout=60)


@pytest.fixture
def tls_node(pki: Pki, tmp_path: Path) -> Iterator[str]:
    """``belote-arena serve --tls-cert --tls-key`` on a free loopback port, until the test ends."""
    if BELOTE_ARENA is None:
        pytest.skip("the belote-arena script is not installed")
    address = f"127.0.0.1:{free_port()}"
    log = (tmp_path / "serve.log").open("wb")
    proc = subprocess.Popen([BELOTE_ARENA, "serve", "--listen", address, "--data-dir", str(tmp_path / "d"),
                             "--tls-cert", str(pki.cert), "--tls-key", str(pki.key)],
                            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while "listening on port" not in (tmp_path / "serve.log").read_text(errors="replace"):
            assert proc.poll() is None, (tmp_path / "serve.log").read_text(errors="replace")
            assert time.monotonic() < deadline, "the node did not start within 60 s"
            time.sleep(0.05)
        yield address
    finally:
        proc.terminate()
        proc.wait(30)
        log.close()
        said = (tmp_path / "serve.log").read_text(errors="replace")
        assert "Traceback" not in said
        assert "Handshake failed" not in said  # a stranger's failed handshakes do not fill the log


def test_serve_with_tls_answers_the_health_check_and_the_cli_over_tls(
    pki: Pki, tls_node: str, tmp_path: Path,
) -> None:
    assert arun(health(tls_node, channel_credentials(pki.ca))) == health_pb2.HealthCheckResponse.SERVING
    registered = cli("bot", "register", "alpha", "--address", tls_node, "--tls-ca", str(pki.ca), "--json",
                     "--data-dir", str(tmp_path / "d"))  # where the node keeps its admin credential
    assert registered.returncode == 0, registered.stderr
    listed = cli("bot", "list", "--address", tls_node, "--tls-ca", str(pki.ca), "--json")
    assert listed.returncode == 0, listed.stderr
    assert [b["name"] for b in json.loads(listed.stdout)] == ["alpha"]

    plaintext = cli("bot", "list", "--address", tls_node)
    assert plaintext.returncode == 1 and plaintext.stderr.count("\n") == 1, plaintext.stderr
    assert "UNAVAILABLE" in plaintext.stderr and "--tls-ca" in plaintext.stderr
    wrong_ca = cli("bot", "list", "--address", tls_node, "--tls-ca", str(pki.other_ca))
    assert wrong_ca.returncode == 1 and wrong_ca.stderr.count("\n") == 1, wrong_ca.stderr
    assert "no trusted CA signed" in wrong_ca.stderr
