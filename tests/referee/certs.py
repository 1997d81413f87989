"""Certificates a TLS test makes for itself: a CA, a server certificate it signed, a stranger CA.

The server certificate names ``localhost`` and ``127.0.0.1`` (subject
alternative names) and lasts a day. Made with the ``cryptography`` package
(the ``test`` extra), else with the ``openssl`` binary; :func:`make_pki`
returns None when neither is there.
"""

from __future__ import annotations

import datetime
import ipaddress
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Pki:
    ca: Path  #: the CA certificate that signed ``cert``
    cert: Path  #: the server's certificate, for localhost and 127.0.0.1
    key: Path  #: its private key
    other_ca: Path  #: a CA that signed nothing here
    other_key: Path  #: a key that is not ``cert``'s


def make_pki(where: Path) -> Pki | None:
    where.mkdir(parents=True, exist_ok=True)
    try:
        _with_cryptography(where)
    except ImportError:
        if shutil.which("openssl") is None:
            return None
        _with_openssl(where)
    return Pki(where / "ca.pem", where / "cert.pem", where / "key.pem", where / "other-ca.pem",
               where / "other-ca.key")


def _with_cryptography(where: Path) -> None:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.UTC)

    def name(text: str) -> x509.Name:
        return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, text)])

    def builder(subject: str, issuer: x509.Name, key: ec.EllipticCurvePrivateKey) -> x509.CertificateBuilder:
        return (x509.CertificateBuilder().subject_name(name(subject)).issuer_name(issuer)
                .public_key(key.public_key()).serial_number(x509.random_serial_number())
                .not_valid_before(now - datetime.timedelta(minutes=5))
                .not_valid_after(now + datetime.timedelta(days=1)))

    def write(path: Path, data: bytes) -> None:
        path.write_bytes(data)

    def key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
        return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                 serialization.NoEncryption())

    def make_ca(label: str) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
        key = ec.generate_private_key(ec.SECP256R1())
        cert = (builder(label, name(label), key)
                .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
                .sign(key, hashes.SHA256()))
        return key, cert

    ca_key, ca = make_ca("belote arena test CA")
    other_key, other = make_ca("a stranger CA")
    server_key = ec.generate_private_key(ec.SECP256R1())
    server = (builder("localhost", ca.subject, server_key)
              .add_extension(x509.SubjectAlternativeName(
                  [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                  critical=False)
              .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
              .sign(ca_key, hashes.SHA256()))
    pem = serialization.Encoding.PEM
    write(where / "ca.pem", ca.public_bytes(pem))
    write(where / "other-ca.pem", other.public_bytes(pem))
    write(where / "other-ca.key", key_pem(other_key))
    write(where / "cert.pem", server.public_bytes(pem))
    write(where / "key.pem", key_pem(server_key))


def _with_openssl(where: Path) -> None:
    def openssl(*args: str) -> None:
        subprocess.run(["openssl", *args], cwd=where, check=True, capture_output=True, timeout=60)

    ec_key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
    ca_ext = ["-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign"]
    openssl("req", "-x509", *ec_key, *ca_ext, "-keyout", "ca.key", "-out", "ca.pem", "-days", "1",
            "-subj", "/CN=belote arena test CA")
    openssl("req", "-x509", *ec_key, *ca_ext, "-keyout", "other-ca.key", "-out", "other-ca.pem",
            "-days", "1", "-subj", "/CN=a stranger CA")
    openssl("req", *ec_key, "-keyout", "key.pem", "-out", "server.csr", "-subj", "/CN=localhost")
    (where / "server.ext").write_text("subjectAltName=DNS:localhost,IP:127.0.0.1\n"
                                      "basicConstraints=critical,CA:FALSE\n")
    openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
            "-out", "cert.pem", "-days", "1", "-extfile", "server.ext")
