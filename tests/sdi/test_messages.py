"""SDI message files: every type valid against MessaggiTypes v1.1, signed where required, parsed back."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from lxml import etree
from signxml import XMLVerifier

from varco.core.db import unit_of_work
from varco.sdi import messages
from varco.sdi.simulator import signing
from varco.sdi.simulator.clock import InvalidDuration, format_duration, parse_duration

AT = datetime(2026, 7, 1, 10, 30, tzinfo=UTC)
REF = messages.InvoiceRef("2026/7", 2026, 2)


def build_all() -> dict[str, etree._Element]:
    name = "IT05555550028_0000A.xml"
    return {
        "RC": messages.ricevuta_consegna("123", name, AT, AT, ("ABC1234", "BETA"), "1", dual_role=True),
        "NS": messages.notifica_scarto("123", name, AT, [{"code": "00400", "description": "x" * 300}], "2"),
        "MC": messages.mancata_consegna("123", name, AT, "unreachable", "3"),
        "AT": messages.attestazione("123", name, AT, ("UF1234", "PA"), "4", "ab" * 32),
        "NE": messages.notifica_esito("123", name, "EC02", REF, "wrong price", "m-1", "5"),
        "DT": messages.decorrenza_termini("123", name, "15 days", "6"),
        "MT": messages.metadati("123", name, "VARCO00", "FPR12", "7"),
        "EC": messages.esito_committente("123", "EC01", REF, None, "m-2"),
        "SE": messages.scarto_esito("123", REF, "EN01", "8", "m-2", "late"),
    }


def test_every_type_validates_and_parses(db, clock):
    built = build_all()
    assert set(built) == set(messages.ROOTS)
    for type_, element in built.items():
        with unit_of_work() as session:
            signed = signing.sign(session, element, clock) if type_ in messages.SIGNED else element
        xml = messages.serialize(signed)
        assert messages.validation_errors(xml) == [], type_
        parsed = messages.parse(xml)
        assert (parsed.type, parsed.sdi_id) == (type_, "123")
    ne = messages.parse(messages.serialize(_signed(built["NE"], clock)))
    assert (ne.esito, ne.ref, ne.description, ne.filename) == (
        "EC02",
        REF,
        "wrong price",
        "IT05555550028_0000A.xml",
    )
    ns = messages.parse(messages.serialize(_signed(built["NS"], clock)))
    assert ns.errors == [{"code": "00400", "description": "x" * 255}]  # Descrizione max 255
    rc = messages.parse(messages.serialize(_signed(built["RC"], clock)))
    assert rc.delivered_at == AT


def _signed(element, clock):
    with unit_of_work() as session:
        return signing.sign(session, element, clock)


def test_a_message_without_its_mandatory_signature_is_invalid():
    xml = messages.serialize(build_all()["RC"])
    assert any("Signature" in e for e in messages.validation_errors(xml))
    with pytest.raises(messages.MessageError):
        messages.parse(xml)


def test_signature_verifies_with_the_simulator_certificate(db, clock):
    with unit_of_work() as session:
        signed = messages.serialize(signing.sign(session, build_all()["DT"], clock))
        certificate = signing.certificate_pem(session, clock)
        again = signing.certificate_pem(session, clock)
    assert certificate == again  # generated once per database
    XMLVerifier().verify(signed, x509_cert=certificate)
    tampered = signed.replace(b"15 days", b"16 days")
    with pytest.raises(Exception, match="(?i)digest"):
        XMLVerifier().verify(tampered, x509_cert=certificate)


def test_every_signed_message_and_a_foreign_document_verify_and_stay_unsigned_in_the_input(db, clock):
    # The signature is built by varco (sdi/simulator/signing.py), checked here by signxml.
    foreign = etree.fromstring(b'<FileEsito xmlns="urn:example:comfin" v="1"><Esito>ES01</Esito></FileEsito>')
    documents = [(e, b">123<") for type_, e in build_all().items() if type_ in messages.SIGNED]
    documents.append((foreign, b">ES01<"))
    assert len(documents) > 5
    with unit_of_work() as session:
        certificate = signing.certificate_pem(session, clock)
        for element, value in documents:
            before = etree.tostring(element)
            signed = etree.tostring(
                signing.sign(session, element, clock), xml_declaration=True, encoding="UTF-8"
            )
            assert etree.tostring(element) == before  # a signed copy; the input may be signed again
            XMLVerifier().verify(signed, x509_cert=certificate)
            assert value in signed
            with pytest.raises(Exception, match="(?i)digest"):
                XMLVerifier().verify(signed.replace(value, value.replace(b"1", b"7")), x509_cert=certificate)


def test_times_are_italian_local_with_milliseconds():
    assert messages.sdi_datetime(AT) == "2026-07-01T12:30:00.000+02:00"
    assert messages.sdi_datetime(AT - timedelta(days=180)) == "2026-01-02T11:30:00.000+01:00"


@pytest.mark.parametrize(
    ("invoice", "expected"),
    [
        ("IT05555550028_00001.xml", "IT05555550028_00001_RC_001.xml"),
        ("IT05555550028_00001.xml.p7m", "IT05555550028_00001_RC_001.xml"),
        ("IT05555550028_00001.XML.P7M", "IT05555550028_00001_RC_001.xml"),
    ],
)
def test_message_names(invoice, expected):
    assert messages.message_name(invoice, "RC", 1) == expected


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("15d", 15 * 86400), ("2h", 7200), ("30s", 30), ("10m", 600), ("1d12h", 129600), ("90", 90)],
)
def test_durations(text, seconds):
    assert parse_duration(text) == timedelta(seconds=seconds)
    assert parse_duration(format_duration(timedelta(seconds=seconds))) == timedelta(seconds=seconds)


@pytest.mark.parametrize("text", ["", "soon", "-1d", "1w", "d15", "15 d"])
def test_bad_durations(text):
    with pytest.raises(InvalidDuration):
        parse_duration(text)
