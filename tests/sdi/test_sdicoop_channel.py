"""varco as a real intermediary over SDICoop: invoices go out with RiceviFile to an SDI over HTTPS
with mutual TLS, the SDI's notifications come back to varco's own TLS listener (zeep as the SDI's
client, inline base64 and MTOM), and every failure the SDI can answer or the network can cause."""

from __future__ import annotations

import base64
import ssl
import threading
import time
import uuid
from datetime import timedelta

import httpx
import pytest
import requests
import zeep
import zeep.transports
from fastapi.testclient import TestClient
from lxml import etree
from sqlalchemy import func, select, text, update

from tests.factories import bearer, make_account, sign_in
from tests.sdi.factories import (
    invoice_file,
    notifications,
    received_by,
    state,
    supplier_account,
    types,
    valid_vat,
)
from tests.sdi.sdicoop_world import accepting_as, fake_sdi, new_sdi_id, varco_listener
from varco.core import blobs
from varco.core.db import unit_of_work
from varco.core.dialects import dialect_of
from varco.core.jobs import reconcile
from varco.core.models import JobRow
from varco.invoices.models import Invoice
from varco.invoices.states import InvoiceState as S
from varco.sdi import messages, sdicoop_channel, transmissions
from varco.sdi.models import SdiExchange, SdiTransmission, UnmatchedMessage
from varco.sdi.sdicoop import server
from varco.sdi.sdicoop.contracts import Service
from varco.sdi.sdicoop.outbound import build_request
from varco.sdi.sdicoop.payloads import (
    EsitoNotifica,
    FileSdI,
    FileSdIBase,
    FileSdIConMetadati,
    RispostaNotificaEsito,
)
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


@pytest.fixture
def listener(pki, configure, db):
    with varco_listener(pki, configure) as running:
        yield running


def upload(client, account, content: bytes) -> int:
    token = sign_in(client, account.username)
    body = {"dataFile": base64.b64encode(content).decode()}
    answer = client.post("/services/invoice/upload", json=body, headers=bearer(token))
    assert answer.status_code == 200 and answer.json()["errorCode"] == "0000", answer.text
    with unit_of_work() as session:
        return session.scalar(select(Invoice.id).where(Invoice.filename == answer.json()["uploadFileName"]))


def sent_invoice(client, queue) -> Invoice:
    account = supplier_account()
    invoice_id = upload(client, account, invoice_file(supplier_vat=account.vat_code))
    queue.drain()
    with unit_of_work() as session:
        return session.get_one(Invoice, invoice_id)


def transmission(invoice_id: int) -> SdiTransmission:
    with unit_of_work() as session:
        return session.scalars(
            select(SdiTransmission).where(
                SdiTransmission.kind == "invoice", SdiTransmission.ref_id == invoice_id
            )
        ).one()


def rc_for(sdi_id: str, filename: str, clock) -> FileSdI:
    """The SDI's RicevutaConsegna on a file, signed as the SDI signs it."""
    element = messages.ricevuta_consegna(sdi_id, filename, clock.now(), clock.now(), ("ABC1234", "x"), "1")
    with unit_of_work() as session:
        xml = messages.serialize(signing.sign(session, element, clock))
    name = messages.message_name(filename, "RC", 1)
    return FileSdI(int(sdi_id), name, xml)


# TLS 1.3: the server checks the client certificate after the client has sent its request
REFUSED_BY_TLS = (httpx.ConnectError, httpx.ReadError, httpx.RemoteProtocolError, ssl.SSLError)


def zeep_as_the_sdi(listener, service: Service) -> zeep.Client:
    """zeep, a client we did not write, as the SDI calls varco: the WSDL from ?wsdl, mutual TLS."""
    session = requests.Session()
    session.cert = (str(listener.pki.sdi_client.cert), str(listener.pki.sdi_client.key))
    session.verify = str(listener.pki.ca.cert)
    session.trust_env = False
    transport = zeep.transports.Transport(session=session, timeout=10, operation_timeout=10)
    return zeep.Client(f"{listener.url}/{service.value}?wsdl", transport=transport)


def test_an_invoice_goes_out_with_riceviFile_and_comes_back_delivered(client, queue, clock, sdi, listener):
    invoice = sent_invoice(client, queue)
    [call] = sdi.calls
    assert call.name == "RiceviFile"
    assert call.payload.nome_file == invoice.filename
    with unit_of_work() as session:
        stored = session.get_one(Invoice, invoice.id)
        assert call.payload.file == blobs.content(session, stored.blob_id)  # the file as stored
    assert invoice.state == S.INVIATA and invoice.sdi_id is not None
    row = transmission(invoice.id)
    assert (row.status, row.answer_id, row.attempts) == ("DONE", invoice.sdi_id, 1)
    with unit_of_work() as session:  # the exchange is kept as it went over the wire
        exchange = session.scalars(select(SdiExchange).where(SdiExchange.transmission_id == row.id)).one()
        assert (exchange.direction, exchange.operation, exchange.status) == ("out", "RiceviFile", 200)
        assert exchange.request_blob_id is not None and exchange.response_blob_id is not None

    # The SDI's RicevutaConsegna, by zeep on the official WSDL served by varco, delivered twice.
    rc = rc_for(invoice.sdi_id, invoice.filename, clock)
    service = zeep_as_the_sdi(listener, Service.TRASMISSIONE_FATTURE)
    for _ in range(2):
        assert (
            service.service.RicevutaConsegna(
                IdentificativoSdI=rc.identificativo_sdi, NomeFile=rc.nome_file, File=rc.file
            )
            is None
        )
    service.transport.session.close()  # a kept-alive connection would hold the listener's shutdown
    assert state(invoice.id) == S.CONSEGNATA
    assert types(invoice.id) == ["RC"]
    [(notification, content)] = notifications(invoice.id)
    assert (notification.filename, content) == (rc.nome_file, rc.file)
    assert len(sdi.calls) == 1


@pytest.mark.parametrize("as_mtom", [False, True], ids=["inline", "mtom"])
def test_notifications_inline_and_mtom_each_delivered_twice(client, queue, clock, sdi, listener, as_mtom):
    invoice = sent_invoice(client, queue)
    rc = rc_for(invoice.sdi_id, invoice.filename, clock)
    for _ in range(2):
        answer = listener.call(Service.TRASMISSIONE_FATTURE, "RicevutaConsegna", rc, as_mtom=as_mtom)
        assert (answer.status_code, answer.content) == (202, b"")
    assert state(invoice.id) == S.CONSEGNATA
    assert [content for _, content in notifications(invoice.id)] == [rc.file]


def test_ei02_is_tried_again_later_and_then_goes_through(client, queue, clock, sdi):
    sdi.plan = ["EI02"]
    invoice = sent_invoice(client, queue)
    assert invoice.state == S.PRESA_IN_CARICO and invoice.sdi_id is None
    row = transmission(invoice.id)
    assert (row.status, row.attempts) == ("PENDING", 1)
    assert "EI02" in row.last_error
    reconcile(clock)  # not due yet: nothing is called
    queue.drain()
    assert sdi.names() == ["RiceviFile"]
    clock.advance(get_settings().sdicoop_retry_base + timedelta(seconds=1))
    reconcile(clock)
    queue.drain()
    assert sdi.names() == ["RiceviFile", "RiceviFile"]
    assert state(invoice.id) == S.INVIATA
    assert transmission(invoice.id).status == "DONE"


def test_a_refused_connection_is_not_a_refusal(client, queue, clock, sdi, configure):
    configure(sdicoop_ricevi_file_url="https://127.0.0.1:9/SdIRiceviFile")  # nothing listens there
    invoice = sent_invoice(client, queue)
    assert transmission(invoice.id).status == "PENDING"
    configure(sdicoop_ricevi_file_url=f"{sdi.url}/SdIRiceviFile")
    clock.advance(get_settings().sdicoop_retry_base + timedelta(seconds=1))
    reconcile(clock)
    queue.drain()
    assert state(invoice.id) == S.INVIATA


def test_ei03_is_permanent_and_the_invoice_is_discarded(client, queue, clock, sdi):
    sdi.plan = ["EI03"]
    invoice = sent_invoice(client, queue)
    assert invoice.state == S.ERRORE_ELABORAZIONE
    assert [e["code"] for e in invoice.sdi_errors] == ["EI03"]
    assert transmission(invoice.id).status == "FAILED"
    clock.advance(timedelta(days=3))
    reconcile(clock)
    transmissions.settle_stalled(clock)
    queue.drain()
    assert sdi.names() == ["RiceviFile"]


def test_a_lost_answer_is_not_sent_again_and_the_notification_settles_it(client, queue, clock, sdi, listener):
    sdi.plan = ["close"]  # the SDI read the file, and the answer never came back
    invoice = sent_invoice(client, queue)
    assert invoice.state == S.PRESA_IN_CARICO
    assert transmission(invoice.id).status == "UNKNOWN"
    clock.advance(timedelta(hours=6))
    reconcile(clock)
    transmissions.settle_stalled(clock)
    queue.drain()
    assert sdi.names() == ["RiceviFile"]  # not sent again: the SDI may have it
    # The SDI did have it: its RicevutaConsegna names the file, with the id we never learnt.
    learnt = new_sdi_id()
    rc = rc_for(learnt, invoice.filename, clock)
    assert listener.call(Service.TRASMISSIONE_FATTURE, "RicevutaConsegna", rc).status_code == 202
    assert state(invoice.id) == S.CONSEGNATA
    row = transmission(invoice.id)
    assert (row.status, row.answer_id) == ("DONE", learnt)
    with unit_of_work() as session:
        assert session.get_one(Invoice, invoice.id).sdi_id == learnt


def test_a_worker_killed_after_the_sdi_answered_leaves_it_unknown_until_the_sdi_says(
    client, queue, clock, sdi, listener, monkeypatch
):
    def killed(*_args, **_kwargs):
        raise RuntimeError("the worker died before recording the answer")

    answered = new_sdi_id()
    sdi.plan = [accepting_as(answered)]
    monkeypatch.setattr(transmissions, "record", killed)  # the SDI answered; nothing was written
    invoice = sent_invoice(client, queue)
    monkeypatch.undo()
    assert transmission(invoice.id).status == "IN_FLIGHT"
    clock.advance(timedelta(seconds=get_settings().sdicoop_timeout_seconds) + timedelta(minutes=3))
    assert transmissions.settle_stalled(clock)["unknown"] == 1
    reconcile(clock)
    queue.drain()
    assert sdi.names() == ["RiceviFile"]
    assert transmission(invoice.id).status == "UNKNOWN"
    rc = rc_for(answered, invoice.filename, clock)  # the id the SDI had answered
    assert listener.call(Service.TRASMISSIONE_FATTURE, "RicevutaConsegna", rc).status_code == 202
    assert state(invoice.id) == S.CONSEGNATA
    assert transmission(invoice.id).status == "DONE"


def test_unknown_is_sent_again_after_the_long_wait_and_the_duplicate_refusal_of_the_copy_is_not_the_invoices(
    client, queue, clock, sdi, listener
):
    sdi.plan = ["close"]
    invoice = sent_invoice(client, queue)
    clock.advance(get_settings().sdicoop_unknown_resend_after + timedelta(minutes=1))
    assert transmissions.settle_stalled(clock)["again"] == 1
    queue.drain()
    assert sdi.names() == ["RiceviFile", "RiceviFile"]
    copy_id = transmission(invoice.id).answer_id
    assert state(invoice.id) == S.INVIATA
    # The SDI had the first one: it refuses the copy as a duplicate file name.
    errors = [{"code": "00002", "description": "Nome file duplicato"}]
    element = messages.notifica_scarto(copy_id, invoice.filename, clock.now(), errors, "1")
    with unit_of_work() as session:
        ns = FileSdI(
            int(copy_id),
            messages.message_name(invoice.filename, "NS", 1),
            messages.serialize(signing.sign(session, element, clock)),
        )
    assert listener.call(Service.TRASMISSIONE_FATTURE, "NotificaScarto", ns).status_code == 202
    assert state(invoice.id) == S.INVIATA  # not Scartata: the refusal is about the copy
    assert types(invoice.id) == []
    with unit_of_work() as session:
        kept = session.scalars(
            select(UnmatchedMessage).where(UnmatchedMessage.filename == ns.nome_file)
        ).one()
    assert "copy sent again" in kept.reason and "00002" in kept.reason


def ns_for(sdi_id: str, filename: str, codes: list[str], clock) -> FileSdI:
    errors = [{"code": code, "description": "Duplicato"} for code in codes]
    element = messages.notifica_scarto(sdi_id, filename, clock.now(), errors, "1")
    with unit_of_work() as session:
        xml = messages.serialize(signing.sign(session, element, clock))
    return FileSdI(int(sdi_id), messages.message_name(filename, "NS", 2), xml)


@pytest.mark.parametrize("refusal_first", [True, False], ids=["refusal-first", "rc-first"])
def test_after_a_re_send_the_first_transmissions_notifications_still_reach_the_invoice(
    client, queue, clock, sdi, listener, refusal_first
):
    sdi.plan = ["close"]  # the SDI took the file as `first`; its answer was lost
    invoice = sent_invoice(client, queue)
    first = new_sdi_id()
    clock.advance(get_settings().sdicoop_unknown_resend_after + timedelta(minutes=1))
    transmissions.settle_stalled(clock)
    queue.drain()
    copy_id = transmission(invoice.id).answer_id
    assert state(invoice.id) == S.INVIATA
    refusal = ns_for(copy_id, invoice.filename, ["00002"], clock)  # about the copy
    rc = rc_for(first, invoice.filename, clock)  # about the file the SDI had all along
    calls = [("NotificaScarto", refusal), ("RicevutaConsegna", rc)]
    for name, payload in calls if refusal_first else calls[::-1]:
        assert listener.call(Service.TRASMISSIONE_FATTURE, name, payload).status_code == 202
    assert state(invoice.id) == S.CONSEGNATA
    assert types(invoice.id) == ["RC"]
    with unit_of_work() as session:
        assert session.get_one(Invoice, invoice.id).sdi_id == first
        kept = session.scalars(select(UnmatchedMessage).where(UnmatchedMessage.filename == refusal.nome_file))
        assert len(kept.all()) == 1


def test_a_due_transmission_whose_job_is_gone_gets_one_again(client, queue, clock, sdi):
    sdi.plan = ["EI02"]
    invoice = sent_invoice(client, queue)
    row = transmission(invoice.id)
    with unit_of_work() as session:  # its job gave up (e.g. storage unreadable ten times)
        job = JobRow.key == f"sdicoop:{row.id}:{row.attempts}"
        session.execute(update(JobRow).where(job).values(status="failed"))
    clock.advance(get_settings().sdicoop_retry_base + timedelta(minutes=5))
    reconcile(clock)
    queue.drain()
    assert sdi.names() == ["RiceviFile"]  # nothing would ever send it
    assert transmissions.settle_stalled(clock)["woken"] == 1
    assert transmissions.settle_stalled(clock)["woken"] == 0  # its new job is waiting: not twice
    queue.drain()
    assert sdi.names() == ["RiceviFile", "RiceviFile"]
    assert state(invoice.id) == S.INVIATA


def test_a_transmission_owed_again_is_the_one_there_is(client, queue, clock, sdi):
    """Owed twice (the invoice handed over again, a communication re-sent), it is one row and one call."""
    sdi.plan = ["EI02"]  # the first call is refused for now: the row stays owed
    invoice = sent_invoice(client, queue)
    with unit_of_work() as session:
        sdicoop_channel.owe(session, "invoice", invoice.id, invoice.filename, clock)
        sdicoop_channel.owe(session, "invoice", invoice.id, invoice.filename, clock, follow_on=True)
        assert queue.huey.pending_count() == 0 and not session.follow_ons  # nothing more to call
    with unit_of_work() as session:
        rows = session.scalar(select(func.count()).where(SdiTransmission.ref_id == invoice.id))
    assert rows == 1 and transmission(invoice.id).attempts == 1
    clock.advance(get_settings().sdicoop_retry_base + timedelta(seconds=1))
    reconcile(clock)
    queue.drain()
    assert sdi.names() == ["RiceviFile", "RiceviFile"]  # the retry, once
    assert state(invoice.id) == S.INVIATA


def test_an_answer_recorded_after_the_reconciler_gave_the_claim_up_still_counts(
    client, queue, clock, sdi, monkeypatch
):
    answered = new_sdi_id()
    sdi.plan = [accepting_as(answered)]
    account = supplier_account()
    invoice_id = upload(client, account, invoice_file(supplier_vat=account.vat_code))
    late = []
    real_record = transmissions.record

    def slow_record(session, transmission_id, answer, settings, clock_):
        late.append((transmission_id, answer))  # the answer is held until the claim is given up

    monkeypatch.setattr(transmissions, "record", slow_record)
    queue.drain()
    monkeypatch.setattr(transmissions, "record", real_record)
    clock.advance(timedelta(seconds=get_settings().sdicoop_timeout_seconds) + timedelta(minutes=3))
    assert transmissions.settle_stalled(clock)["unknown"] == 1
    [(transmission_id, answer)] = late
    with unit_of_work() as session:
        transmissions.record(session, transmission_id, answer, get_settings(), clock)
    assert state(invoice_id) == S.INVIATA
    assert (transmission(invoice_id).status, transmission(invoice_id).answer_id) == ("DONE", answered)


def test_recording_an_answer_locks_the_invoice_before_its_transmission(
    client, queue, clock, sdi, monkeypatch
):
    """As a notification adopting the invoice does (the invoice, then its transmission): in the
    other order, an RC arriving while the call's answer is recorded deadlocks with it (PostgreSQL)."""
    answered = new_sdi_id()
    sdi.plan = [accepting_as(answered)]
    account = supplier_account()
    invoice_id = upload(client, account, invoice_file(supplier_vat=account.vat_code))
    late = []
    monkeypatch.setattr(transmissions, "record", lambda _s, tid, answer, *_a: late.append((tid, answer)))
    queue.drain()
    monkeypatch.undo()
    [(transmission_id, answer)] = late
    with unit_of_work() as notification:  # an RC's transaction holds the invoice
        if dialect_of(notification).one_writer:
            pytest.skip("SQLite: one writer at a time, no row locks to order")
        notification.execute(select(Invoice.id).where(Invoice.id == invoice_id).with_for_update())
        recorder = threading.Thread(target=_record, args=(transmission_id, answer, clock))
        recorder.start()
        _until_waiting_for_a_lock(notification)
        # The recorder waits for the invoice and holds nothing of the transmission yet.
        query = select(SdiTransmission.id).where(SdiTransmission.id == transmission_id)
        assert notification.execute(query.with_for_update(nowait=True)).scalar() == transmission_id
    recorder.join(timeout=30)
    assert not recorder.is_alive()
    assert state(invoice_id) == S.INVIATA
    assert (transmission(invoice_id).status, transmission(invoice_id).answer_id) == ("DONE", answered)


def _record(transmission_id: int, answer, clock) -> None:
    with unit_of_work() as session:
        transmissions.record(session, transmission_id, answer, get_settings(), clock)


def _until_waiting_for_a_lock(session) -> None:
    """Until another session of this database waits for a row lock (the statistics are read once per
    transaction unless cleared)."""
    waiting = text(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
        "AND pid <> pg_backend_pid() AND wait_event_type = 'Lock'"
    )
    deadline = time.monotonic() + 30
    while True:
        session.execute(text("SELECT pg_stat_clear_snapshot()"))
        if session.execute(waiting).scalar():
            return
        assert time.monotonic() < deadline, "nothing waits for a lock"
        time.sleep(0.01)


def test_a_missing_endpoint_url_is_waited_for_not_a_refusal(client, queue, clock, sdi, configure):
    configure(sdicoop_ricevi_file_url="")  # unset
    invoice = sent_invoice(client, queue)
    assert invoice.state == S.PRESA_IN_CARICO
    row = transmission(invoice.id)
    assert row.status == "PENDING" and "no endpoint" in row.last_error
    configure(sdicoop_ricevi_file_url=f"{sdi.url}/SdIRiceviFile")
    clock.advance(get_settings().sdicoop_retry_base + timedelta(seconds=1))
    reconcile(clock)
    queue.drain()
    assert state(invoice.id) == S.INVIATA


def test_a_notification_about_no_invoice_of_ours_is_kept_aside(queue, clock, listener):
    rc = rc_for(new_sdi_id(), "IT01234567890_zzzzz.xml", clock)
    for _ in range(2):
        assert listener.call(Service.TRASMISSIONE_FATTURE, "RicevutaConsegna", rc).status_code == 202
    with unit_of_work() as session:
        [row] = session.scalars(
            select(UnmatchedMessage).where(UnmatchedMessage.filename == rc.nome_file)
        ).all()
        assert (row.type, row.sdi_id, row.nome_file) == (
            "RC",
            str(rc.identificativo_sdi),
            "IT01234567890_zzzzz.xml",
        )
        assert "no invoice" in row.reason


def test_a_malformed_notification_is_kept_aside_and_answered(listener):
    payload = FileSdI(int(new_sdi_id()), "IT01234567890_abcde_RC_001.xml", b"<not-xml")
    assert listener.call(Service.TRASMISSIONE_FATTURE, "RicevutaConsegna", payload).status_code == 202
    with unit_of_work() as session:
        row = session.scalars(
            select(UnmatchedMessage).where(UnmatchedMessage.filename == payload.nome_file)
        ).one()
        assert "not well-formed" in row.reason


def test_soap_faults_and_descriptions(listener):
    with listener.client() as client:
        url = f"{listener.url}/TrasmissioneFatture"
        wsdl = client.get(f"{url}?wsdl")
        assert wsdl.status_code == 200 and f'location="{url}"'.encode() in wsdl.content
        assert client.get(f"{listener.url}/TrasmissioneTypes_v1.1.xsd").status_code == 200
        assert client.get(f"{listener.url}/other.xsd").status_code == 404
        assert client.get(url).status_code == 405
        assert client.post(f"{listener.url}/Nothing", content=b"x").status_code == 404
        not_soap = client.post(url, content=b"hello", headers={"Content-Type": "text/xml"})
        assert not_soap.status_code == 400
        wrong = client.post(
            url,
            content=b'<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body><x/></s:Body></s:Envelope>',
            headers={"Content-Type": "text/xml"},
        )
        assert wrong.status_code == 500 and b"Client" in wrong.content and b"faultstring" in wrong.content


def test_a_body_over_the_limit_is_413_before_it_is_read(listener, configure):
    configure(max_file_body_bytes=10_000)
    with listener.client() as client:
        answer = client.post(f"{listener.url}/TrasmissioneFatture", content=b"x" * 20_000)
    assert answer.status_code == 413


def test_a_certificate_of_another_ca_or_none_is_refused_by_tls(listener, pki):
    with (
        pytest.raises(REFUSED_BY_TLS),
        listener.client(pki.other_client.cert, pki.other_client.key) as client,
    ):
        client.get(f"{listener.url}/TrasmissioneFatture?wsdl")
    with (
        pytest.raises(REFUSED_BY_TLS),
        httpx.Client(verify=ssl.create_default_context(cafile=str(pki.ca.cert)), trust_env=False) as client,
    ):
        client.get(f"{listener.url}/TrasmissioneFatture?wsdl")


def test_on_the_main_listener_the_services_answer_only_a_trusted_proxy_that_checked_the_certificate(
    app, configure, clock
):
    rc = rc_for(new_sdi_id(), "IT01234567890_qqqqq.xml", clock)
    message = build_request(Service.TRASMISSIONE_FATTURE, "RicevutaConsegna", rc)
    url, checked = "/sdicoop/TrasmissioneFatture", {**message.headers(), "X-SSL-Client-Verify": "SUCCESS"}

    def post(peer: str, headers: dict[str, str]) -> int:
        with TestClient(app, client=(peer, 40000)) as client:
            return client.post(url, content=message.body, headers=headers).status_code

    assert post("10.1.2.3", message.headers()) == 403
    configure(sdicoop_client_verify_header="X-SSL-Client-Verify", trusted_proxies='["10.1.2.3"]')
    assert post("10.9.9.9", checked) == 403  # the header, from anyone but the proxy, means nothing
    assert post("10.1.2.3", {**checked, "X-SSL-Client-Verify": "FAILED:unknown CA"}) == 403
    assert post("10.1.2.3", message.headers()) == 403
    assert kept(rc.nome_file) == 0
    assert post("10.1.2.3", checked) == 202
    assert kept(rc.nome_file) == 1


def kept(filename: str) -> int:
    with unit_of_work() as session:
        return session.scalar(
            select(func.count(UnmatchedMessage.id)).where(UnmatchedMessage.filename == filename)
        )


# -- invoices for varco's clients: RicezioneFatture, and the outcome back with NotificaEsito -----


def arriving(clock, vat: str) -> FileSdIConMetadati:
    """An invoice from another intermediary for the client with VAT `vat`, as the SDI delivers it."""
    transmitter = valid_vat()
    content = invoice_file(client_vat=vat, transmitter=transmitter, progressivo=uuid.uuid4().hex[:5].upper())
    root = etree.fromstring(content)
    filename = f"IT{transmitter}_{root.findtext('.//ProgressivoInvio')}.xml"
    sdi_id = new_sdi_id()
    element = messages.metadati(sdi_id, filename, get_settings().recipient_code, "FPR12", "1")
    mt = messages.serialize(element)  # the one message the SDI does not sign
    return FileSdIConMetadati(int(sdi_id), filename, content, messages.message_name(filename, "MT", 1), mt)


@pytest.mark.parametrize("as_mtom", [False, True], ids=["inline", "mtom"])
def test_an_invoice_arrives_with_riceviFatture_and_the_outcome_goes_back(
    client, queue, clock, sdi, listener, as_mtom
):
    vat = valid_vat()
    account = make_account(vat_code=vat)
    delivered = arriving(clock, vat)
    for _ in range(2):  # a re-delivery is the same invoice
        answer = listener.call(Service.RICEZIONE_FATTURE, "RiceviFatture", delivered, as_mtom=as_mtom)
        assert answer.status_code == 200 and b"<Esito>ER01</Esito>" in answer.content
    [invoice] = received_by(account.id)
    assert (invoice.state, invoice.sdi_id, invoice.filename) == (
        S.RICEVUTA,
        str(delivered.identificativo_sdi),
        delivered.nome_file,
    )
    [(mt, content)] = notifications(invoice.id)
    assert (mt.type, content) == ("MT", delivered.metadati)

    token = sign_in(client, account.username)
    body = {"filename": invoice.filename, "sdiId": invoice.sdi_id, "esito": "EC01"}
    sent = client.post("/services/invoice/in/sendEsitoCommittente", json=body, headers=bearer(token))
    assert sent.status_code == 200, sent.text
    queue.drain()
    [call] = sdi.calls
    assert call.name == "NotificaEsito"
    assert (call.payload.identificativo_sdi, call.payload.nome_file) == (
        delivered.identificativo_sdi,
        sent.json()["esitoFileName"],
    )
    assert messages.parse(call.payload.file).esito == "EC01"
    status = client.get(
        f"/services/invoice/in/sendEsitoCommittente/{sent.json()['esitoFileName']}", headers=bearer(token)
    )
    assert status.json()["status"] == "ACCEPTED"


def test_an_outcome_refused_by_the_sdi_and_one_tried_again(client, queue, clock, sdi, listener):
    vat = valid_vat()
    account = make_account(vat_code=vat)
    delivered = arriving(clock, vat)
    assert listener.call(Service.RICEZIONE_FATTURE, "RiceviFatture", delivered).status_code == 200
    [invoice] = received_by(account.id)
    scarto = messages.scarto_esito(
        invoice.sdi_id, None, "EN01", "1", None, "Notifica non ammissibile: termini scaduti"
    )
    with unit_of_work() as session:
        scarto_xml = messages.serialize(signing.sign(session, scarto, clock))
    scarto_name = messages.message_name(invoice.filename, "SE", 1)
    sdi.plan = [
        "ES02",
        lambda _: server.notifica_esito_reply(
            RispostaNotificaEsito(EsitoNotifica.ES00, FileSdIBase(scarto_name, scarto_xml))
        ),
    ]
    token = sign_in(client, account.username)
    body = {"filename": invoice.filename, "sdiId": invoice.sdi_id, "esito": "EC01"}
    name = client.post("/services/invoice/in/sendEsitoCommittente", json=body, headers=bearer(token)).json()[
        "esitoFileName"
    ]
    queue.drain()
    path = f"/services/invoice/in/sendEsitoCommittente/{name}"
    assert client.get(path, headers=bearer(token)).json()["status"] == "SENT"  # ES02: later
    clock.advance(get_settings().sdicoop_retry_base + timedelta(seconds=1))
    reconcile(clock)
    queue.drain()
    assert sdi.names() == ["NotificaEsito", "NotificaEsito"]
    assert client.get(path, headers=bearer(token)).json()["status"] == "REJECTED"
    assert types(invoice.id) == ["MT", "EC", "SE"]


def test_decorrenza_termini_reaches_the_recipient(queue, clock, listener):
    vat = valid_vat()
    account = make_account(vat_code=vat)
    delivered = arriving(clock, vat)
    assert listener.call(Service.RICEZIONE_FATTURE, "RiceviFatture", delivered).status_code == 200
    [invoice] = received_by(account.id)
    element = messages.decorrenza_termini(invoice.sdi_id, invoice.filename, "Decorsi i termini", "2")
    with unit_of_work() as session:
        dt = messages.serialize(signing.sign(session, element, clock))
    payload = FileSdI(int(invoice.sdi_id), messages.message_name(invoice.filename, "DT", 1), dt)
    answer = listener.call(Service.RICEZIONE_FATTURE, "NotificaDecorrenzaTermini", payload, as_mtom=True)
    assert answer.status_code == 202
    assert types(invoice.id) == ["MT", "DT"]


def _signed(element, clock) -> bytes:
    with unit_of_work() as session:
        return messages.serialize(signing.sign(session, element, clock))


# Each TrasmissioneFatture operation, the message it carries, and where it leaves the invoice;
# NE and DT come after an RC (7), as the SDI sends them.
OPERATIONS = [
    ("NotificaScarto", "NS", False, S.SCARTATA),
    ("NotificaMancataConsegna", "MC", False, S.NON_CONSEGNATA),
    ("AttestazioneTrasmissioneFattura", "AT", False, S.RECAPITO_IMPOSSIBILE),
    ("NotificaEsito", "NE", True, S.RIFIUTATA),
    ("NotificaDecorrenzaTermini", "DT", True, S.DECORRENZA_TERMINI),
]


@pytest.mark.parametrize(
    ("operation", "type_", "after_rc", "final"), OPERATIONS, ids=[o[1] for o in OPERATIONS]
)
def test_every_notification_operation_moves_the_invoice_as_the_simulator_does(
    client, queue, clock, sdi, listener, operation, type_, after_rc, final
):
    invoice = sent_invoice(client, queue)
    sid, name, at = invoice.sdi_id, invoice.filename, clock.now()
    zeep_client = zeep_as_the_sdi(listener, Service.TRASMISSIONE_FATTURE)
    service = zeep_client.service
    if after_rc:
        rc = rc_for(sid, name, clock)
        service.RicevutaConsegna(IdentificativoSdI=rc.identificativo_sdi, NomeFile=rc.nome_file, File=rc.file)
    element = {
        "NS": lambda: messages.notifica_scarto(sid, name, at, [{"code": "00404", "description": "x"}], "NS1"),
        "MC": lambda: messages.mancata_consegna(sid, name, at, "casella piena", "MC1"),
        "AT": lambda: messages.attestazione(sid, name, at, ("UFABCD", "PA"), "AT1", "0" * 64),
        "NE": lambda: messages.notifica_esito(sid, name, "EC02", None, "no", "EC1", "NE1"),
        "DT": lambda: messages.decorrenza_termini(sid, name, "15 giorni", "DT1"),
    }[type_]()
    message_name = messages.message_name(name, type_, 1)
    content = _signed(element, clock)
    for _ in range(2):  # the SDI delivers again when an answer is late: nothing changes
        getattr(service, operation)(IdentificativoSdI=int(sid), NomeFile=message_name, File=content)
    zeep_client.transport.session.close()  # a kept-alive connection would hold the listener's shutdown
    assert state(invoice.id) == final
    assert types(invoice.id) == (["RC", type_] if after_rc else [type_])
