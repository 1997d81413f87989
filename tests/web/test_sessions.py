"""Signing a browser in: a random session id in the cookie, never the credential; from the node's
own pages only; over TLS, a Secure cookie.

Against a real node with private reads, over real HTTP (and real gRPC, to show
that a cookie's value opens nothing there), and a real ``belote-arena serve
--http-tls-cert`` process for TLS.
"""

from __future__ import annotations

import json
import re
import ssl
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from belote.arena.v1 import arena_service_pb2 as apb
from belote.arena.v1 import arena_service_pb2_grpc as agrpc

from arena.web import WebConfig
from arena.web.sessions import Sessions
from tests.referee.certs import Pki, make_pki
from tests.scripts import script
from tests.web.clients import json_of, request
from tests.web.site import ADMIN, Site

pytestmark = pytest.mark.security

COOKIE = "belote_read"


@pytest.fixture(scope="module")
def site() -> Iterator[Site]:
    with tempfile.TemporaryDirectory() as tmp:
        s = Site(Path(tmp), private_reads=True, tournament=False)
        try:
            yield s
        finally:
            s.close()


def sign_in(site: Site, token: str, *, origin: str | None = None, content_type: str = "application/json",
            body: bytes | None = None) -> tuple[int, str, str]:
    """POST /api/v1/session: (status, the cookie's value or "", the whole Set-Cookie header)."""
    status, headers, _ = request(
        site.url, "/api/v1/session", method="POST",
        body=json.dumps({"token": token}).encode() if body is None else body,
        headers={"Origin": site.url if origin is None else origin, "Content-Type": content_type})
    set_cookie = headers.get("set-cookie", "")
    found = re.match(rf"{COOKIE}=([^;]*)", set_cookie)
    return status, found.group(1) if found else "", set_cookie


def read_with(site: Site, cookie: str = "", bearer: str = "") -> int:
    headers = {"Cookie": f"{COOKIE}={cookie}"} if cookie else {}
    if bearer:
        headers["Authorization"] = f"Bearer {bearer}"
    return request(site.url, "/api/v1/bots", headers=headers)[0]


def register_over_grpc(site: Site, credential: str, name: str) -> grpc.StatusCode:
    """An admin call (RegisterBot) over real gRPC with ``credential``: OK or why it was refused."""
    assert site.running is not None
    with grpc.insecure_channel(site.running.address) as channel:
        try:
            agrpc.ArenaServiceStub(channel).RegisterBot(
                apb.RegisterBotRequest(name=name), metadata=(("authorization", f"Bearer {credential}"),),
                timeout=10)
        except grpc.RpcError as e:
            return e.code()
    return grpc.StatusCode.OK


def test_the_cookie_holds_a_random_session_id_never_the_credential(site: Site) -> None:
    status, first, set_cookie = sign_in(site, ADMIN)
    assert status == 200 and first
    assert ADMIN not in set_cookie and first != ADMIN
    _, second, _ = sign_in(site, ADMIN)
    assert second != first  # a fresh random id each time
    assert read_with(site, cookie=first) == 200 and read_with(site, cookie=second) == 200


def test_an_admin_credential_signs_in_to_reads_and_nothing_more(site: Site) -> None:
    _, session, _ = sign_in(site, ADMIN)
    assert read_with(site, cookie=session) == 200
    # the session id is no credential: not as a bearer token, not over gRPC for an admin call
    assert read_with(site, bearer=session) == 401
    assert register_over_grpc(site, session, "from-a-cookie") is grpc.StatusCode.UNAUTHENTICATED
    assert register_over_grpc(site, ADMIN, "from-the-admin") is grpc.StatusCode.OK


def test_signing_out_ends_the_session_on_the_node(site: Site) -> None:
    _, session, _ = sign_in(site, ADMIN)
    status, headers, _ = request(site.url, "/api/v1/session", method="DELETE",
                                 headers={"Origin": site.url, "Cookie": f"{COOKIE}={session}"})
    assert status == 200 and "max-age=0" in headers["set-cookie"].lower()
    assert read_with(site, cookie=session) == 401  # a copy of the cookie kept elsewhere reads nothing


def register_bot(site: Site, name: str) -> str:
    """A new bot, registered over real gRPC by the admin: its token."""
    assert site.running is not None
    with grpc.insecure_channel(site.running.address) as channel:
        reply = agrpc.ArenaServiceStub(channel).RegisterBot(
            apb.RegisterBotRequest(name=name), metadata=(("authorization", f"Bearer {ADMIN}"),), timeout=10)
    return str(reply.token)


def test_a_rotated_or_revoked_token_s_sessions_read_nothing_from_then_on(site: Site) -> None:
    """A session is worth no more than its credential: once a bot's token is rotated (its owner's
    answer to a theft) or the bot revoked, every session it opened reads nothing, at once. Before,
    they read on for their 12 hours. (On every node of a cluster: tests/cluster/test_token_cut.py.)"""
    assert site.running is not None
    stolen, banned = register_bot(site, "session-rotated"), register_bot(site, "session-revoked")
    rotated_sessions = [sign_in(site, stolen)[1] for _ in range(2)]  # the owner's, and a thief's
    revoked_session = sign_in(site, banned)[1]
    admin_session = sign_in(site, ADMIN)[1]
    assert [read_with(site, cookie=s) for s in [*rotated_sessions, revoked_session]] == [200] * 3
    with grpc.insecure_channel(site.running.address) as channel:
        stub = agrpc.ArenaServiceStub(channel)
        new = stub.RotateBotToken(apb.RotateBotTokenRequest(),
                                  metadata=(("authorization", f"Bearer {stolen}"),), timeout=10).token
        assert [read_with(site, cookie=s) for s in rotated_sessions] == [401, 401]
        stub.RevokeBot(apb.RevokeBotRequest(name="session-revoked"),
                       metadata=(("authorization", f"Bearer {ADMIN}"),), timeout=10)
    assert read_with(site, cookie=revoked_session) == 401
    # the old token signs in no more; the new one does; the admin's session is untouched
    assert sign_in(site, stolen)[0] == 401 and sign_in(site, banned)[0] == 401
    status, fresh, _ = sign_in(site, new)
    assert status == 200 and read_with(site, cookie=fresh) == 200
    assert read_with(site, cookie=admin_session) == 200


@pytest.mark.parametrize("origin, content_type", [
    ("https://evil.example", "text/plain"),  # the login-CSRF form: a cross-site, simple POST
    ("https://evil.example", "application/json"),
    ("null", "application/json"),  # a sandboxed frame, a file
    ("", "application/json"),  # no Origin at all
    (None, "text/plain"),  # the node's own origin, but not JSON
    (None, "application/x-www-form-urlencoded"),
])
def test_a_sign_in_from_another_origin_or_not_json_is_refused(
    site: Site, origin: str | None, content_type: str,
) -> None:
    status, session, _ = sign_in(site, ADMIN, origin=origin, content_type=content_type)
    assert status == 403 and session == ""


def test_a_sign_out_from_another_origin_is_refused(site: Site) -> None:
    _, session, _ = sign_in(site, ADMIN)
    status, _, body = request(site.url, "/api/v1/session", method="DELETE",
                              headers={"Origin": "https://evil.example", "Cookie": f"{COOKIE}={session}"})
    assert status == 403 and "Origin" in json_of(body)["error"]
    assert read_with(site, cookie=session) == 200


def test_sessions_are_bounded_per_credential_and_in_all_and_expire() -> None:
    now = [0.0]
    sessions = Sessions(ttl=100.0, max_sessions=5, per_credential=3, clock=lambda: now[0])
    mine = [sessions.open("admin") for _ in range(4)]
    assert not sessions.valid(mine[0]) and all(sessions.valid(s) for s in mine[1:])  # its oldest went
    others = [sessions.open(f"bot-{i}") for i in range(3)]
    assert len(sessions) == 5 and not sessions.valid(mine[1])  # the oldest of all went
    now[0] = 101.0
    assert not any(sessions.valid(s) for s in [*mine, *others])  # they expire with their cookie
    sessions.open("admin")
    assert len(sessions) == 1


def test_behind_a_tls_proxy_sign_ins_come_from_the_public_origin_with_a_secure_cookie(tmp_path: Path) -> None:
    public = "https://arena.example.org"
    site = Site(tmp_path, private_reads=True, tournament=False, web=WebConfig(origin=public))
    try:
        status, _, set_cookie = sign_in(site, ADMIN, origin=public)
        assert status == 200 and "; secure" in set_cookie.lower()
        assert sign_in(site, ADMIN, origin=site.url)[0] == 403  # the proxy's backend address is not it
    finally:
        site.close()


# ------------------------------------------------------------------ TLS, a real serve process
BELOTE_ARENA = script("belote-arena")


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    made = make_pki(tmp_path_factory.mktemp("pki"))
    if made is None:
        pytest.skip("no way to make a test certificate: neither the cryptography package nor openssl")
    return made


def _https(url: str, ca: Path, *, data: bytes | None = None,
           headers: dict[str, str] | None = None) -> tuple[int, dict[str, str]]:
    context = ssl.create_default_context(cafile=str(ca))
    req = urllib.request.Request(url, data=data, headers=headers or {}, method="POST" if data else "GET")
    with urllib.request.urlopen(req, timeout=30, context=context) as reply:
        return reply.status, {k.lower(): v for k, v in reply.headers.items()}


def test_serve_http_tls_serves_the_pages_over_tls_with_a_secure_cookie(pki: Pki, tmp_path: Path) -> None:
    if BELOTE_ARENA is None:
        pytest.skip("the belote-arena script is not installed")
    log_path = tmp_path / "serve.log"
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            [BELOTE_ARENA, "serve", "--listen", "127.0.0.1:0", "--data-dir", str(tmp_path / "d"),
             "--private-reads", "--http", "127.0.0.1:0", "--http-tls-cert", str(pki.cert),
             "--http-tls-key", str(pki.key)], stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 60
            while not (found := re.search(r"on (https://\S+)", log_path.read_text(errors="replace"))):
                assert proc.poll() is None, log_path.read_text(errors="replace")
                assert time.monotonic() < deadline, "the node did not start within 60 s"
                time.sleep(0.05)
            url = found.group(1).replace("127.0.0.1", "localhost")  # the name the certificate has
            assert _https(url + "/", pki.ca)[0] == 200
            admin = (tmp_path / "d" / "admin.token").read_text().strip()
            body = json.dumps({"token": admin}).encode()
            status, headers = _https(url + "/api/v1/session", pki.ca, data=body,
                                     headers={"Origin": url, "Content-Type": "application/json"})
            assert status == 200 and "; secure" in headers["set-cookie"].lower()
            assert admin not in headers["set-cookie"]
            # plaintext to the TLS port gets no page
            assert request(url.replace("https://localhost", "http://127.0.0.1"), "/")[0] == 0
        finally:
            proc.terminate()
            proc.wait(30)
    said = log_path.read_text(errors="replace")
    assert "Traceback" not in said
