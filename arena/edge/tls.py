"""The node's TLS certificate and key, read and checked before the port is bound.

gRPC itself only says "Failed to bind" when a key does not match its
certificate or a file is not PEM; :func:`server_credentials` checks both
files first (the standard library's ``ssl`` parses the pair) and raises
:class:`TlsError` naming the file and what is wrong with it.
"""

from __future__ import annotations

import ssl
from pathlib import Path

import grpc

__all__ = ["TlsError", "server_context", "server_credentials"]


class TlsError(ValueError):
    """A certificate or key the node cannot serve TLS with: printed as one line, exit 1."""


def _read(path: Path, what: str) -> bytes:
    try:
        return path.read_bytes()
    except OSError as e:
        raise TlsError(f"cannot read the TLS {what} {path}: {e.strerror or e}") from None


def server_credentials(cert: Path | str, key: Path | str) -> grpc.ServerCredentials:
    """The credentials of a TLS port: ``cert`` (PEM, the server's certificate first, then any
    intermediates) and its unencrypted private ``key`` (PEM)."""
    _, cert_pem, key_pem = _loaded(Path(cert), Path(key))
    return grpc.ssl_server_credentials([(key_pem, cert_pem)])


def server_context(cert: Path | str, key: Path | str) -> ssl.SSLContext:
    """A server's TLS context (TLS 1.2 or later) for ``cert`` and ``key``, as
    :func:`server_credentials` takes them: what the HTTP server serves with."""
    return _loaded(Path(cert), Path(key))[0]


def _loaded(cert: Path, key: Path) -> tuple[ssl.SSLContext, bytes, bytes]:
    """The pair checked and loaded: its context, and the PEM of each."""
    cert_pem, key_pem = _read(cert, "certificate"), _read(key, "key")
    if b"-----BEGIN CERTIFICATE-----" not in cert_pem:
        raise TlsError(f"the TLS certificate {cert} is not a PEM certificate (no BEGIN CERTIFICATE line)")
    if b"ENCRYPTED PRIVATE KEY-----" in key_pem or b"Proc-Type: 4,ENCRYPTED" in key_pem:
        raise TlsError(f"the TLS key {key} is encrypted: the node needs it without a passphrase")
    if b"PRIVATE KEY-----" not in key_pem:
        raise TlsError(f"the TLS key {key} is not a PEM private key (no BEGIN ... PRIVATE KEY line)")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        context.load_cert_chain(cert, key, password=_no_passphrase)
    except ssl.SSLError as e:
        if e.reason == "KEY_VALUES_MISMATCH":
            raise TlsError(f"the TLS key {key} does not belong to the certificate {cert}") from None
        raise TlsError(f"the TLS certificate {cert} or key {key} cannot be loaded: {e.reason or e}") from None
    return context, cert_pem, key_pem


def _no_passphrase() -> str:
    raise TlsError("the TLS key is encrypted: the node needs it without a passphrase")
