"""The throw-away PKI: documented names, private keys 0600, certificates fit for mutual TLS."""

from __future__ import annotations

import ipaddress
import ssl
import stat
from pathlib import Path

from cryptography import x509
from cryptography.x509.oid import ExtendedKeyUsageOID

from varco.sdi.sdicoop.pki import TestPki, make_test_pki


def _cert(path: Path) -> x509.Certificate:
    return x509.load_pem_x509_certificate(path.read_bytes())


def test_files_names_and_modes(tmp_path: Path) -> None:
    pki = make_test_pki(tmp_path / "pki", intermediaries=("varco", "acme"))
    names = {p.name for p in (tmp_path / "pki").iterdir()}
    stems = ["ca", "other-ca", "other-client", "sdi-server", "sdi-client"]
    stems += [f"{n}-{role}" for n in ("varco", "acme") for role in ("server", "client")]
    assert names == {f"{stem}.{kind}.pem" for stem in stems for kind in ("crt", "key")}
    for path in (tmp_path / "pki").iterdir():
        mode = stat.S_IMODE(path.stat().st_mode)
        assert mode == (0o600 if path.name.endswith(".key.pem") else 0o644), path.name
    assert pki.intermediaries_client["acme"].cert.name == "acme-client.crt.pem"


def test_server_certificates_name_localhost(pki: TestPki) -> None:
    for pair in (pki.sdi_server, *pki.intermediaries_server.values()):
        cert = _cert(pair.cert)
        san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        assert "localhost" in san.get_values_for_type(x509.DNSName)
        assert ipaddress.ip_address("127.0.0.1") in san.get_values_for_type(x509.IPAddress)
        eku = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
        assert list(eku) == [ExtendedKeyUsageOID.SERVER_AUTH]


def test_chains(pki: TestPki) -> None:
    ca, other = _cert(pki.ca.cert), _cert(pki.other_ca.cert)
    for pair in (pki.sdi_server, pki.sdi_client, *pki.intermediaries_client.values()):
        _cert(pair.cert).verify_directly_issued_by(ca)
    _cert(pki.other_client.cert).verify_directly_issued_by(other)
    assert _cert(pki.other_client.cert).issuer != ca.subject


def test_loadable_by_ssl(pki: TestPki) -> None:
    context = ssl.create_default_context(cafile=str(pki.ca.cert))
    context.load_cert_chain(pki.intermediaries_client["varco"].cert, pki.intermediaries_client["varco"].key)
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(pki.sdi_server.cert, pki.sdi_server.key)


def test_rewriting_keeps_keys_private(tmp_path: Path) -> None:
    key = tmp_path / "ca.key.pem"
    key.write_text("old")
    key.chmod(0o644)
    make_test_pki(tmp_path)
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
