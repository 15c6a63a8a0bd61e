"""§4.3 upload / uploadSigned, synchronous stage (§7.2), over HTTP on both databases."""

from __future__ import annotations

import re
import sqlite3
import threading
import time
from contextlib import contextmanager

import pytest
from sqlalchemy import func, select

from tests.factories import bearer, make_account, make_basic, sign_in
from tests.invoices.support import CLIENT_VAT, SUPPLIER_VAT, b64, invoice_xml, set_text
from varco.accounts import service as accounts
from varco.accounts.models import DelegationStatus
from varco.core.blobs import Blob
from varco.core.clock import current_clock
from varco.core.db import unit_of_work
from varco.core.models import JobRow
from varco.invoices.models import Invoice, UsageCounter
from varco.invoices.states import InvoiceState

NAME = re.compile(r"^IT05555550028_[0-9A-Z]{5}\.xml$")


def upload(client, token, data: bytes | str | None = None, path="upload", **fields):
    body = {"dataFile": b64(data) if isinstance(data, bytes) else data, **fields}
    return client.post(f"/services/invoice/{path}", json=body, headers=bearer(token))


@pytest.fixture
def supplier(client):
    account = make_account(vat_code=SUPPLIER_VAT)
    return account, sign_in(client, account.username)


def invoices_of(account_id: int) -> list[Invoice]:
    with unit_of_work() as session:
        return list(session.scalars(select(Invoice).where(Invoice.account_id == account_id)))


def usage_of(account_id: int) -> int:
    with unit_of_work() as session:
        query = select(UsageCounter.count).where(UsageCounter.account_id == account_id)
        return session.scalar(query) or 0


def assert_refused(response, code: str, fragment: str = "", status: int = 200):
    assert response.status_code == status, response.text
    body = response.json()
    assert body["errorCode"] == code, body
    assert body["uploadFileName"] is None
    assert fragment in body["errorDescription"], body
    assert f"[request {response.headers['x-request-id']}]" in body["errorDescription"]


def test_valid_upload_is_stored_in_state_1_and_counted(client, supplier, queue):
    account, token = supplier
    response = upload(client, token, invoice_xml())
    assert response.status_code == 200
    body = response.json()
    assert body["errorCode"] == "0000"
    assert NAME.match(body["uploadFileName"])
    assert response.headers["x-request-id"] in body["errorDescription"]
    [invoice] = invoices_of(account.id)
    assert invoice.filename == body["uploadFileName"]
    assert invoice.state == InvoiceState.PRESA_IN_CARICO
    assert (invoice.sender_vat, invoice.receiver_vat, invoice.format) == (SUPPLIER_VAT, CLIENT_VAT, "FPR12")
    assert invoice.bodies[0].document_type == "TD01"
    assert usage_of(account.id) == 1
    with unit_of_work() as session:
        assert session.get(Blob, invoice.blob_id).content == invoice_xml(number=invoice.bodies[0].number)
        job = session.scalar(select(JobRow).where(JobRow.key == f"process:{invoice.id}"))
        assert job is not None and job.status == "pending"
    assert queue.huey.pending_count() == 1  # sent after the commit


@pytest.mark.parametrize("dry_run", [True, "true", "True"])
def test_dry_run_checks_but_stores_sends_and_counts_nothing(client, supplier, queue, dry_run):
    account, token = supplier
    response = upload(client, token, invoice_xml(), dryRun=dry_run)
    assert response.json()["errorCode"] == "0000"
    assert NAME.match(response.json()["uploadFileName"])
    assert "Dry run" in response.json()["errorDescription"]
    assert invoices_of(account.id) == []
    assert usage_of(account.id) == 0
    assert queue.huey.pending_count() == 0


def test_what_real_clients_send_is_tolerated(client, supplier):
    _, token = supplier
    response = upload(
        client,
        token,
        invoice_xml(),
        credential="",
        domain="",
        senderPIVA="",
        skipExtraSchema="False",
        dryRun="",
        signed=False,
    )
    assert response.json()["errorCode"] == "0000"


@pytest.mark.parametrize("data", [None, "", "   "])
def test_missing_data_file_is_0002(client, supplier, data):
    assert_refused(upload(client, supplier[1], data), "0002", "dataFile")


def test_bad_base64_is_0098(client, supplier):
    assert_refused(upload(client, supplier[1], "this is not base64!!"), "0098")


def test_base64_of_a_file_that_is_not_xml_is_0092_not_xml(client, supplier):
    # dataFile decodes: the file it holds is the problem, not its base64
    response = upload(client, supplier[1], b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj")
    assert_refused(response, "0092", "The file is not XML: it looks like a PDF document")


def test_file_over_5_mb_is_413_with_0033(client, supplier):
    response = upload(client, supplier[1], b"<" * (5 * 1024 * 1024 + 1))
    assert_refused(response, "0033", "maximum", status=413)


def test_xsd_error_is_0092_naming_element_and_line(client, supplier):
    broken = invoice_xml(
        edit=set_text("FatturaElettronicaBody/DatiGenerali/DatiGeneraliDocumento/TipoDocumento", "TD99")
    )
    response = upload(client, supplier[1], broken)
    assert_refused(response, "0092", "TipoDocumento")
    assert re.search(r"line \d+", response.json()["errorDescription"])


def test_malformed_xml_is_0092(client, supplier):
    assert_refused(upload(client, supplier[1], b"<FatturaElettronica><oops></FatturaElettronica>"), "0092")


def test_wrong_transmitter_is_0094(client, supplier):
    other = invoice_xml(
        edit=set_text("FatturaElettronicaHeader/DatiTrasmissione/IdTrasmittente/IdCodice", "12345670017")
    )
    assert_refused(upload(client, supplier[1], other), "0094", "12345670017")


def test_invoice_of_another_supplier_is_0093(client):
    account = make_account(vat_code="12345670017")
    response = upload(client, sign_in(client, account.username), invoice_xml())
    assert_refused(response, "0093", SUPPLIER_VAT)
    assert invoices_of(account.id) == []


def test_third_party_issuer_tz_is_refused(client, supplier):
    def tz(root):
        from lxml import etree

        header = root.find("FatturaElettronicaHeader")
        etree.SubElement(header, "SoggettoEmittente").text = "TZ"

    assert_refused(upload(client, supplier[1], invoice_xml(edit=tz)), "0093", "TZ")


def test_recipient_code_xxxxxxx_for_italian_client_is_0096_00313(client, supplier):
    data = invoice_xml(
        edit=set_text("FatturaElettronicaHeader/DatiTrasmissione/CodiceDestinatario", "XXXXXXX")
    )
    response = upload(client, supplier[1], data)
    assert_refused(response, "0096", "00313 - ")


def test_skip_extra_schema_skips_00313(client, supplier):
    data = invoice_xml(
        edit=set_text("FatturaElettronicaHeader/DatiTrasmissione/CodiceDestinatario", "XXXXXXX")
    )
    assert upload(client, supplier[1], data, skipExtraSchema=True).json()["errorCode"] == "0000"


def test_same_content_in_processing_is_0034(client, supplier):
    data = invoice_xml()
    assert upload(client, supplier[1], data).json()["errorCode"] == "0000"
    assert_refused(upload(client, supplier[1], data), "0034")
    assert len(invoices_of(supplier[0].id)) == 1


def test_storage_space_exhausted_is_0097(client):
    account = make_account(vat_code=SUPPLIER_VAT, max_space_kb=1)
    response = upload(client, sign_in(client, account.username), invoice_xml())
    assert_refused(response, "0097", "increase the space")
    assert usage_of(account.id) == 0


def test_sender_piva_only_for_td26(client, supplier):
    response = upload(client, supplier[1], invoice_xml(), senderPIVA=f"IT{SUPPLIER_VAT}")
    assert_refused(response, "0002", "TD26")


def test_sender_piva_decides_the_issuer_for_td26(client):
    client_account = make_account(vat_code=CLIENT_VAT)
    data = invoice_xml(
        edit=set_text("FatturaElettronicaBody/DatiGenerali/DatiGeneraliDocumento/TipoDocumento", "TD26")
    )
    token = sign_in(client, client_account.username)
    response = upload(client, token, data, senderPIVA=f"IT{CLIENT_VAT}")
    assert response.json()["errorCode"] == "0000", response.json()
    assert len(invoices_of(client_account.id)) == 1


def test_upload_refuses_a_signed_file_and_upload_signed_an_unsigned_one(client, supplier, signed_invoice):
    assert_refused(upload(client, supplier[1], signed_invoice), "0002", "unsigned")
    assert_refused(upload(client, supplier[1], invoice_xml(), path="uploadSigned"), "0002", "signed")


def test_upload_signed_accepts_a_cades_file(client, supplier, signed_invoice):
    response = upload(client, supplier[1], signed_invoice, path="uploadSigned")
    assert response.json()["errorCode"] == "0000", response.json()
    assert response.json()["uploadFileName"].endswith(".xml.p7m")
    [invoice] = invoices_of(supplier[0].id)
    assert invoice.is_signed and invoice.signature["kind"] == "CAdES"


def test_token_is_required(client):
    response = client.post("/services/invoice/upload", json={"dataFile": b64(invoice_xml())})
    assert response.status_code == 401


# §8.5 attribution -------------------------------------------------------------------------------------------


def test_premium_sends_for_an_assignor_with_an_active_delegation(client):
    premium = make_account(vat_code="12345670017")
    assignor = make_basic(delegate_to=premium, vat_code=SUPPLIER_VAT)
    response = upload(client, sign_in(client, premium.username), invoice_xml())
    assert response.json()["errorCode"] == "0000"
    [invoice] = invoices_of(assignor.id)
    assert (invoice.uploaded_by_id, invoice.charged_account_id) == (premium.id, premium.id)
    assert usage_of(premium.id) == 1 and usage_of(assignor.id) == 0


def test_premium_without_an_active_delegation_is_0093(client):
    premium = make_account(vat_code="12345670017")
    make_basic(delegate_to=premium, status=DelegationStatus.SUSPEND, vat_code=SUPPLIER_VAT)
    response = upload(client, sign_in(client, premium.username), invoice_xml())
    assert_refused(response, "0093", "SUSPEND")


def test_basic_user_token_counts_against_its_premium(client):
    premium = make_account(vat_code="12345670017")
    basic = make_basic(delegate_to=premium, vat_code=SUPPLIER_VAT)
    response = upload(client, sign_in(client, basic.username), invoice_xml())
    assert response.json()["errorCode"] == "0000"
    assert usage_of(premium.id) == 1 and usage_of(basic.id) == 0


def test_premium_delegating_a_premium_counts_against_the_final_premium(client):
    final = make_account(vat_code="12345670017")
    first = make_account(vat_code=SUPPLIER_VAT)
    with unit_of_work() as session:
        accounts.create_delegation(
            session,
            accounts.get(session, first.id),
            accounts.get(session, final.id),
            DelegationStatus.ACTIVE,
            current_clock(),
        )
    response = upload(client, sign_in(client, first.username), invoice_xml())
    assert response.json()["errorCode"] == "0000"
    assert usage_of(final.id) == 1 and usage_of(first.id) == 0
    [invoice] = invoices_of(first.id)
    assert invoice.charged_account_id == final.id


def test_concurrent_uploads_get_distinct_names(db, clock, queue):
    from concurrent.futures import ThreadPoolExecutor

    from varco.invoices.service import Upload, accept_upload
    from varco.settings import get_settings

    account = make_account(vat_code=SUPPLIER_VAT)

    def one(_: int) -> str:
        with unit_of_work() as session:
            caller = accounts.get(session, account.id)
            return accept_upload(
                session, caller, Upload(b64(invoice_xml()), False), get_settings(), clock
            ).filename

    with ThreadPoolExecutor(max_workers=6) as pool:
        names = list(pool.map(one, range(24)))
    assert len(set(names)) == 24
    with unit_of_work() as session:
        assert session.scalar(select(func.count(Invoice.id)).where(Invoice.account_id == account.id)) == 24


# automatic signature ----------------------------------------------------------------------------------------


def test_auto_signature_with_credential_and_domain(client, supplier, demo_pkcs12, tmp_path):
    from typer.testing import CliRunner

    from varco import fatturapa
    from varco.cli import app

    account, token = supplier
    p12 = tmp_path / "id.p12"
    p12.write_bytes(demo_pkcs12)
    result = CliRunner().invoke(
        app,
        [
            "users",
            "set-signer",
            account.username,
            "--credential",
            "s3cret",
            "--domain",
            "acme",
            "--pkcs12",
            str(p12),
            "--pkcs12-password",
            "p12-pw",
        ],
    )
    assert result.exit_code == 0, result.output
    wrong = upload(client, token, invoice_xml(), credential="nope", domain="acme")
    assert_refused(wrong, "0012", "credential")
    unknown = upload(client, token, invoice_xml(), credential="s3cret", domain="other")
    assert_refused(unknown, "0012", "other")
    response = upload(client, token, invoice_xml(), credential="s3cret", domain="acme")
    assert response.json()["errorCode"] == "0000", response.json()
    assert response.json()["uploadFileName"].endswith(".xml.p7m")
    [invoice] = invoices_of(account.id)
    with unit_of_work() as session:
        stored = session.get(Blob, invoice.blob_id).content
    report = fatturapa.check_sync(stored, fatturapa.CheckOptions(require_signed=True))
    assert report.accepted, report.errors
    assert report.signature.kind == "CAdES" and report.signature.is_intact
    assert report.signature.signer == "Test Signer"


def test_set_signer_refuses_a_bad_pkcs12(db, clock, tmp_path):
    from typer.testing import CliRunner

    from varco.cli import app

    account = make_account()
    bad = tmp_path / "bad.p12"
    bad.write_bytes(b"not a pkcs12")
    result = CliRunner().invoke(
        app,
        ["users", "set-signer", account.username, "--credential", "c", "--domain", "d", "--pkcs12", str(bad)],
    )
    assert result.exit_code == 2 and "PKCS#12" in result.output


def test_stored_file_counts_in_user_info_used_space(client, supplier):
    account, token = supplier
    data = invoice_xml()
    assert upload(client, token, data).json()["errorCode"] == "0000"
    info = client.get("/auth/userInfo", headers=bearer(token)).json()
    assert info["usageStatus"]["usedSpaceKB"] == -(-len(data) // 1024)


def test_a_body_that_is_not_json_is_refused_after_the_bearer_check(client, supplier):
    _, token = supplier
    url = "/services/invoice/upload"
    for raw in (b"", b"{not json", b"[1, 2]"):
        answer = client.post(url, content=raw, headers={**bearer(token), "Content-Type": "application/json"})
        assert answer.status_code == 400, raw
        assert answer.json()["errorCode"] == "0002"
        assert answer.json()["errorDescription"].startswith("Invalid request: ")
    # The caller is checked first, as on every other endpoint: no token, no word about the body.
    for headers in ({}, bearer("not-a-token")):
        answer = client.post(url, content=b"{not json", headers=headers)
        assert answer.status_code == 401
        assert answer.json()["error"] == "unauthorized"


def test_a_json_object_with_a_missing_or_mistyped_field_is_the_sync_check_0002(client, supplier):
    # §7.2 lists "dataFile wrong format or missing" among the synchronous checks: answered 200 with
    # the upload result, whether the field is absent, null or not a string, naming the field.
    account, token = supplier
    cases = {
        b"{}": "dataFile wrong format or missing",
        b'{"dataFile": null}': "dataFile wrong format or missing",
        b'{"dataFile": 5}': "dataFile: Input should be a valid string",
        b'{"dataFile": ["PD94"]}': "dataFile: Input should be a valid string",
        b'{"dataFile": "PD94", "skipExtraSchema": "perhaps"}': "skipExtraSchema",
    }
    for raw, named in cases.items():
        answer = client.post(
            "/services/invoice/upload",
            content=raw,
            headers={**bearer(token), "Content-Type": "application/json"},
        )
        assert_refused(answer, "0002", named)
    assert invoices_of(account.id) == [] and usage_of(account.id) == 0


def test_the_duplicate_check_looks_the_content_hash_up(database):
    # 0034 runs on every upload: SQLite's planner (no statistics) must not walk the account's
    # invoices of the whole window, or every upload costs more than the one before.
    if database.engine.dialect.name != "sqlite":
        pytest.skip("PostgreSQL plans with statistics")
    from varco.invoices.repository import _SAME_CONTENT_IN_PROCESS

    with database.engine.connect() as conn:
        compiled = _SAME_CONTENT_IN_PROCESS.compile(dialect=conn.dialect)
        given = {"account_id": 1, "sha256": "0" * 64, "since": "2026-01-01 00:00:00.000000"}
        params = compiled.construct_params(given)
        args = tuple(params[name] for name in compiled.positiontup)
        plan = conn.exec_driver_sql(f"EXPLAIN QUERY PLAN {compiled}", args).all()
    assert [row[-1] for row in plan] == [
        "SEARCH invoices USING INDEX ix_invoices_content_sha256 (content_sha256=?)"
    ]


# the write lock on SQLite --------------------------------------------------------------------------------


def _sqlite_only(db) -> None:
    if db.engine.dialect.name != "sqlite":
        pytest.skip("SQLite's single write lock")


@contextmanager
def _write_lock_held_in_this_process():
    with unit_of_work() as session:
        session.connection()  # BEGIN IMMEDIATE: the write lock, until the block ends
        yield


@contextmanager
def _write_lock_held_by_another_process(db):
    other = sqlite3.connect(db.engine.url.database, isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")
        yield
        other.execute("COMMIT")
    finally:
        other.close()


@pytest.mark.parametrize("holder", ["this process", "another process"])
def test_an_upload_waits_for_the_write_lock_without_stopping_other_requests(client, supplier, db, holder):
    # A small upload runs on the event loop when the database is free (core/turns.py). When someone
    # else writes, it must wait in a thread: the loop keeps answering, and the upload lands after.
    _sqlite_only(db)
    account, token = supplier
    answers: dict[str, object] = {}
    held = (
        _write_lock_held_in_this_process()
        if holder == "this process"
        else _write_lock_held_by_another_process(db)
    )
    with held:
        sending = threading.Thread(target=lambda: answers.update(upload=upload(client, token, invoice_xml())))
        sending.start()
        time.sleep(0.3)  # the upload reaches the lock
        asking = threading.Thread(target=lambda: answers.update(health=client.get("/health")))
        asking.start()
        asking.join(timeout=20)
        assert not asking.is_alive(), "the event loop stopped while the upload waited for the lock"
        assert answers["health"].status_code == 200
        assert "upload" not in answers  # still waiting for the lock
    sending.join(timeout=60)
    assert answers["upload"].json()["errorCode"] == "0000", answers["upload"].text
    assert len(invoices_of(account.id)) == 1


def test_an_upload_never_waits_for_a_database_connection(client, supplier, db):
    # Connections given back only when the loop runs a request's cleanup must not make work on the
    # loop wait for one (the pool would wait 30 s, the loop with it).
    _sqlite_only(db)
    account, token = supplier
    held = [db.engine.connect() for _ in range(db.engine.pool.size() + 10)]
    try:
        assert upload(client, token, invoice_xml()).json()["errorCode"] == "0000"
    finally:
        for connection in held:
            connection.close()
    assert len(invoices_of(account.id)) == 1


def test_an_upload_answers_while_the_job_queue_is_busy_and_its_job_runs_after(client, supplier, db, queue):
    # The wake-up of the asynchronous stage goes to huey's SQLite storage, which serialises its
    # users on one lock (the embedded workers poll through it): when it is taken, the wake-up is
    # sent from a thread of its own, so neither the answer nor other requests wait for it.
    _sqlite_only(db)
    account, token = supplier
    answers: dict[str, object] = {}
    with queue.huey.storage.lock:  # a worker polling the queue, for as long as it takes
        sending = threading.Thread(target=lambda: answers.update(upload=upload(client, token, invoice_xml())))
        sending.start()
        sending.join(timeout=20)
        assert not sending.is_alive(), "the upload waited for the job queue"
        assert answers["upload"].json()["errorCode"] == "0000", answers["upload"].text
        assert client.get("/health").status_code == 200
    assert queue.drain() >= 1  # the wake-up arrived once the storage was free
    [invoice] = invoices_of(account.id)
    assert invoice.state != InvoiceState.PRESA_IN_CARICO
