"""TLS for a bot's channels: the credentials, and what a failed handshake means in words.

A node reachable from outside its machine serves TLS; the bot then checks the
node's certificate, against the CA certificate the node's operator hands out
(``tls_ca="ca.pem"``) or, for a certificate from a public CA, against the
system's roots (``tls=True``: gRPC's own roots, or the PEM file named by
``$GRPC_DEFAULT_SSL_ROOTS_FILE_PATH``).
"""

from __future__ import annotations

import os

import grpc

from belote_bot.errors import TlsConfigError

__all__ = ["channel_credentials", "credentials_for", "unreachable_hint"]

#: the environment variable the built-in bots' command line reads for ``--tls-ca``
TLS_CA_ENV = "BELOTE_TLS_CA"


def channel_credentials(tls_ca: str | os.PathLike[str] | None = None) -> grpc.ChannelCredentials:
    """TLS credentials that verify the node: against the CA certificates in the PEM file ``tls_ca``,
    or, without it, against the system's roots."""
    if tls_ca is None:
        return grpc.ssl_channel_credentials()
    try:
        with open(tls_ca, "rb") as f:
            pem = f.read()
    except OSError as e:
        raise TlsConfigError(f"cannot read the TLS CA file {os.fspath(tls_ca)}: {e.strerror or e}") from None
    if b"-----BEGIN CERTIFICATE-----" not in pem:
        raise TlsConfigError(
            f"the TLS CA file {os.fspath(tls_ca)} holds no PEM certificate (no BEGIN CERTIFICATE line)")
    return grpc.ssl_channel_credentials(root_certificates=pem)


def credentials_for(
    credentials: grpc.ChannelCredentials | None, tls_ca: str | os.PathLike[str] | None, tls: bool,
) -> grpc.ChannelCredentials | None:
    """The channel credentials that :func:`belote_bot.run`'s arguments ask for (None: plaintext)."""
    if credentials is not None:
        if tls_ca is not None or tls:
            raise ValueError("pass either credentials= or tls_ca=/tls=True, not both")
        return credentials
    if tls_ca is not None or tls:
        return channel_credentials(tls_ca)
    return None


def unreachable_hint(address: str, details: str, tls: bool) -> str:
    """What a failed connection's details say about TLS, in words ("" when they say nothing of it)."""
    if "CERTIFICATE_VERIFY_FAILED" in details:
        return ("its certificate is not signed by a CA this bot trusts "
                "(pass the CA that signed it: tls_ca= or --tls-ca)")
    if "Hostname Verification" in details or "Peer name" in details:
        return f"its certificate does not name {address.rsplit(':', 1)[0]}"
    if "WRONG_VERSION_NUMBER" in details:
        return "it does not speak TLS (connect without tls_ca/tls)"
    if not tls and "Socket closed" in details:
        return "it closed the connection: if it serves TLS, pass tls_ca= or tls=True (--tls-ca, --tls)"
    return ""
