"""Communications (LI, DF) over SDICoop: Trasmetti to the SDI with mutual TLS, then the outcome
polled with Esito until the SDI has one (SF01 → SF02), and the SDI's refusals."""

from __future__ import annotations

import base64
from datetime import timedelta

import pytest
from lxml import etree
from sqlalchemy import select

from tests.comfin.support import SUPPLIER_VAT, b64, li_xml, sign
from tests.factories import bearer, make_account, sign_in
from tests.sdi.sdicoop_world import fake_sdi
from varco.comfin import xsd
from varco.comfin.models import ComfinRequest
from varco.comfin.tasks import resolve_stuck
from varco.core.db import unit_of_work
from varco.core.jobs import reconcile
from varco.sdi.sdicoop.payloads import FileSdIBase, StatoFile
from varco.sdi.sdicoop.pki import TestPki, make_test_pki
from varco.sdi.simulator import signing
from varco.settings import get_settings


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> TestPki:
    return make_test_pki(tmp_path_factory.mktemp("pki"))


@pytest.fixture
def sdi(pki, configure, db):
    with fake_sdi(pki, configure) as running:
        yield running


def esito_file(clock, file_id: str, name: str, esito: str = "ES01") -> bytes:
    """The SDI's EsitoFile (DatiFatturaMessaggi v2.0), signed."""
    root = etree.Element(f"{{{xsd.NS_ESITO}}}EsitoFile", nsmap={"ns": xsd.NS_ESITO}, versione="2.0")
    for tag, text in (
        ("TipoFile", "LI"),
        ("IDFile", file_id),
        ("NomeFile", name),
        ("DataOraRicezione", "2026-11-23T09:00:00.000+01:00"),
        ("Esito", esito),
        ("MessageID", f"{file_id}01"),
    ):
        etree.SubElement(root, tag).text = text
    with unit_of_work() as session:
        return etree.tostring(signing.sign(session, root, clock), xml_declaration=True, encoding="UTF-8")


def create(client, pkcs12) -> tuple[str, str]:
    account = make_account(vat_code=SUPPLIER_VAT)
    token = sign_in(client, account.username)
    body = {"comunicationType": "LI", "dataFile": b64(sign(pkcs12, li_xml()))}
    created = client.post("/api/v2/comfin", json=body, headers=bearer(token))
    assert created.status_code == 200, created.text
    return token, created.json()["requestId"]


def poll_time(clock, queue) -> None:
    clock.advance(get_settings().sdicoop_poll_interval + timedelta(seconds=1))
    reconcile(clock)
    queue.drain()


def test_a_communication_goes_out_with_trasmetti_and_its_outcome_is_polled(client, queue, clock, sdi, pkcs12):
    token, request_id = create(client, pkcs12)
    sdi.esito = StatoFile.SF01
    queue.drain()
    [trasmetti] = sdi.calls
    info = client.get(f"/api/v2/comfin/{request_id}", headers=bearer(token)).json()
    assert trasmetti.name == "Trasmetti"
    assert (trasmetti.payload.nome_file, trasmetti.payload.tipo_file) == (info["fileName"], "LI")
    assert trasmetti.payload.file.startswith(b"\x30")  # the signed file as sent (CAdES)
    assert info["result"] == "SF01" and info["fileId"] and info["status"] == "SENT"
    poll_time(clock, queue)  # SF01: still processing
    assert sdi.names() == ["Trasmetti", "Esito"]
    assert sdi.calls[1].payload.id_file == int(info["fileId"])
    outcome_name = info["fileName"].removesuffix(".xml") + "_ES_001.xml"
    sdi.esito = StatoFile.SF02
    sdi.outcome = FileSdIBase(outcome_name, esito_file(clock, info["fileId"], info["fileName"]))
    poll_time(clock, queue)
    assert sdi.names() == ["Trasmetti", "Esito", "Esito"]
    info = client.get(f"/api/v2/comfin/{request_id}", headers=bearer(token)).json()
    assert (info["result"], info["elaboratedResult"], info["status"]) == ("SF02", "ES01", "PROCESSED")
    assert base64.b64decode(info["notifyResult"]) == sdi.outcome.file
    assert info["pddAvailable"] is True
    poll_time(clock, queue)  # answered: no more polling
    assert len(sdi.calls) == 3


def test_ei04_is_permanent(client, queue, clock, sdi, pkcs12):
    token, request_id = create(client, pkcs12)
    sdi.plan = ["EI04"]
    queue.drain()
    info = client.get(f"/api/v2/comfin/{request_id}", headers=bearer(token)).json()
    assert info["result"] == "AR06"
    with unit_of_work() as session:
        request = session.scalars(select(ComfinRequest).where(ComfinRequest.request_id == request_id)).one()
    assert "EI04" in request.error  # what v1's info says in `error`
    poll_time(clock, queue)
    assert sdi.names() == ["Trasmetti"]


def test_ee01_on_the_poll_is_asked_again(client, queue, clock, sdi, pkcs12):
    token, request_id = create(client, pkcs12)
    queue.drain()
    info = client.get(f"/api/v2/comfin/{request_id}", headers=bearer(token)).json()
    sdi.plan = ["EE01"]
    sdi.outcome = FileSdIBase("IT_ES_001.xml", esito_file(clock, info["fileId"], info["fileName"], "ES03"))
    poll_time(clock, queue)  # EE01: the service is unavailable
    assert client.get(f"/api/v2/comfin/{request_id}", headers=bearer(token)).json()["result"] == "SF01"
    clock.advance(get_settings().sdicoop_retry_base + timedelta(seconds=1))
    reconcile(clock)
    queue.drain()
    assert sdi.names() == ["Trasmetti", "Esito", "Esito"]
    info = client.get(f"/api/v2/comfin/{request_id}", headers=bearer(token)).json()
    assert (info["result"], info["elaboratedResult"]) == ("SF02", "ES03")


def test_sf03_is_a_final_error_with_the_sdis_file(client, queue, clock, sdi, pkcs12):
    token, request_id = create(client, pkcs12)
    queue.drain()
    info = client.get(f"/api/v2/comfin/{request_id}", headers=bearer(token)).json()
    sdi.esito = StatoFile.SF03
    sdi.outcome = FileSdIBase("IT_ES_001.xml", esito_file(clock, info["fileId"], info["fileName"], "ES03"))
    poll_time(clock, queue)
    info = client.get(f"/api/v2/comfin/{request_id}", headers=bearer(token)).json()
    assert (info["result"], info["elaboratedResult"], info["status"]) == ("SF03", "ES03", "ERROR")
    assert base64.b64decode(info["notifyResult"]) == sdi.outcome.file
    poll_time(clock, queue)  # final: no more polling
    assert sdi.names() == ["Trasmetti", "Esito"]


def test_a_communication_the_sdi_may_have_is_not_given_up_as_never_transmitted(
    client, queue, clock, sdi, pkcs12
):
    _, request_id = create(client, pkcs12)
    sdi.plan = ["close"]  # the SDI read it; the answer (its IDFile) never came
    queue.drain()
    clock.advance(get_settings().comfin_send_deadline + timedelta(minutes=5))
    reconcile(clock)
    resolve_stuck(clock)
    with unit_of_work() as session:  # (the token has expired meanwhile)
        request = session.scalars(select(ComfinRequest).where(ComfinRequest.request_id == request_id)).one()
    assert request.result == "SF01"  # not AR06: it may well have arrived
    assert sdi.names() == ["Trasmetti"]
