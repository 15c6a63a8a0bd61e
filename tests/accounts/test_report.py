"""POST /api/v2/report and /api/v2/multicedenti/report (§2.6, §4.1): 202 while the worker prepares it,
then 200; counts from invoices, notifications and stored files; served for `report_ttl`."""

from __future__ import annotations

import re
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import func, select, update

from tests.accounts.delegation_support import delegate
from tests.factories import bearer, make_account, make_basic, sign_in
from tests.invoices.support import SUPPLIER_VAT, b64, invoice_xml
from varco.accounts import delegations
from varco.accounts import service as accounts
from varco.accounts.models import DelegationStatus
from varco.accounts.multisellers import service as multisellers
from varco.accounts.multisellers.models import MultisellerReport
from varco.core import blobs
from varco.core.clock import current_clock
from varco.core.db import unit_of_work
from varco.core.models import JobRow
from varco.invoices import service as invoices
from varco.invoices.models import Invoice, Notification
from varco.invoices.states import InvoiceState
from varco.settings import get_settings

DATE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d\d:\d\d$")


def ask(client, token, path: str = "/api/v2/report"):
    return client.post(path, headers=bearer(token))


def report_jobs(premium) -> list[JobRow]:
    """The report jobs started for one Premium user (the test database is shared by many tests)."""
    with unit_of_work() as session:
        query = (
            select(JobRow)
            .join(MultisellerReport, MultisellerReport.job_id == JobRow.id)
            .where(MultisellerReport.account_id == premium.id, JobRow.name == multisellers.REPORT.name)
            .order_by(JobRow.id)
        )
        return list(session.scalars(query))


def add_invoice(account_id: int, direction: str, created_at: datetime) -> Invoice:
    """A stored invoice file through the invoices service (received ones arrive from the SDI)."""
    with unit_of_work() as session:
        name = f"IT01234567890_{uuid.uuid4().hex[:5].upper()}.xml"
        blob = blobs.store(session, name, b"<FatturaElettronica/>", account_id, created_at)
        state = InvoiceState.RICEVUTA if direction == "in" else InvoiceState.INVIATA
        invoice = Invoice(
            direction=direction,
            filename=name,
            account_id=account_id,
            format="FPR12",
            state=state.value,
            blob_id=blob.id,
            content_sha256=blob.sha256,
            sdi_errors=[],
            created_at=created_at,
            updated_at=created_at,
        )
        return invoices.add_invoice(session, invoice, created_at)


def add_notification(invoice: Invoice, kind: str) -> None:
    with unit_of_work() as session:
        stored = session.get(Invoice, invoice.id)
        name = f"{invoice.filename[:-4]}_{kind}_{uuid.uuid4().hex[:3]}.xml"
        invoices.add_notification(session, stored, kind, name, b"<Notifica/>", current_clock())


def test_202_while_the_worker_prepares_it_then_200_with_the_report(client, queue):
    premium = make_account(vat_code="12345670017")
    assignor = make_basic(delegate_to=premium, vat_code=SUPPLIER_VAT, description="Rossi S.r.l.")
    idle = make_basic(delegate_to=premium, status=DelegationStatus.SUSPEND, description="Idle S.p.A.")
    token = sign_in(client, premium.username)
    for _ in range(2):  # sent this year, through the real upload
        sent = client.post(
            "/services/invoice/upload", json={"dataFile": b64(invoice_xml())}, headers=bearer(token)
        )
        assert sent.json()["errorCode"] == "0000"
    queue.drain()  # the uploads' processing runs first, so the files the report counts are all there
    # The year is Italy's: 23:30 UTC on 31 December is already the new year in Rome.
    add_invoice(assignor.id, "out", datetime(2025, 12, 31, 22, 30, tzinfo=UTC))  # 23:30 in Rome: 2025
    received = add_invoice(assignor.id, "in", datetime(2025, 12, 31, 23, 30, tzinfo=UTC))  # 2026 in Rome
    add_invoice(assignor.id, "in", datetime(2024, 5, 1, tzinfo=UTC))
    add_notification(received, "EC")
    add_notification(received, "SE")

    first = ask(client, token)
    assert first.status_code == 202
    assert first.headers["content-type"].startswith("text/plain")
    assert first.headers["retry-after"] == "60"
    assert "wait 60 seconds" in first.text
    [job] = report_jobs(premium)
    assert job.status == "pending"
    again = ask(client, token, "/api/v2/multicedenti/report")
    assert again.status_code == 202 and len(report_jobs(premium)) == 1  # still the same job

    queue.drain()  # the worker runs the report job

    ready = ask(client, token)
    assert ready.status_code == 200, ready.text
    [run] = ready.json()["report"]
    assert DATE.match(run["processingDate"])
    assert [entry["description"] for entry in run["list"]] == ["Rossi S.r.l.", "Idle S.p.A."]
    entry, other = run["list"]
    with unit_of_work() as session:
        stored = blobs.used_bytes(session, assignor.id)
        # ours plus what the SDI side sent about the uploads while they were processed
        notes = session.scalar(
            select(func.count(Notification.id))
            .join(Invoice, Invoice.id == Notification.invoice_id)
            .where(Invoice.account_id == assignor.id)
        )
        delegation_id = delegations.listing(session, assignor)[0][0].id
    assert notes >= 2
    assert entry == {
        "id": str(delegation_id),
        "username": assignor.username,
        "parentUsername": premium.username,
        "description": "Rossi S.r.l.",
        "countryCode": "IT",
        "vatCode": SUPPLIER_VAT,
        "creationDate": "2026-11-23T09:00:00.000+01:00",
        "status": "ACTIVE",
        "notifications": notes,
        "occupiedSpace": -(-stored // 1024),
        "sentInvoices": {"currentYear": 2, "total": 3},
        "receivedInvoices": {"currentYear": 1, "total": 2},
    }
    assert (other["username"], other["status"], other["notifications"], other["occupiedSpace"]) == (
        idle.username,
        "SUSPEND",
        0,
        0,
    )
    assert other["sentInvoices"] == other["receivedInvoices"] == {"currentYear": 0, "total": 0}
    assert ask(client, token, "/api/v2/multicedenti/report").json() == ready.json()  # both paths


def test_a_finished_report_is_served_for_report_ttl_then_a_new_one_starts(client, queue, clock):
    premium = make_account()
    make_basic(delegate_to=premium)
    token = sign_in(client, premium.username)
    assert ask(client, token).status_code == 202
    clock.advance(timedelta(seconds=30))
    queue.drain()
    served = ask(client, token).json()
    ttl = get_settings().report_ttl
    clock.advance(ttl - timedelta(seconds=1))
    assert ask(client, token).json() == served
    clock.advance(timedelta(seconds=1))
    token = sign_in(client, premium.username)  # whatever report_ttl is, the old token may have expired
    assert ask(client, token).status_code == 202
    assert [job.status for job in report_jobs(premium)] == ["done", "pending"]
    queue.drain()
    fresh = ask(client, token).json()
    assert fresh["report"][0]["processingDate"] != served["report"][0]["processingDate"]


def test_a_report_whose_job_failed_is_started_again(client, queue):
    premium = make_account()
    token = sign_in(client, premium.username)
    assert ask(client, token).status_code == 202
    [job] = report_jobs(premium)
    with unit_of_work() as session:  # what the worker records after its last attempt
        session.execute(update(JobRow).where(JobRow.id == job.id).values(status="failed"))
    queue.flush()
    assert ask(client, token).status_code == 202
    queue.drain()
    response = ask(client, token)
    assert response.status_code == 200
    assert response.json()["report"][0]["list"] == []
    assert [job.status for job in report_jobs(premium)] == ["failed", "done"]


def test_each_premium_user_gets_only_its_own_report(client, queue):
    first, second = make_account(), make_account()
    mine = make_basic(delegate_to=first)
    theirs = make_basic(delegate_to=second)
    first_token, second_token = sign_in(client, first.username), sign_in(client, second.username)
    assert ask(client, first_token).status_code == 202
    queue.drain()
    assert ask(client, first_token).status_code == 200
    assert ask(client, second_token).status_code == 202  # the first user's report is not the second's
    queue.drain()
    for token, assignor, parent in ((first_token, mine, first), (second_token, theirs, second)):
        [run] = ask(client, token).json()["report"]
        assert [(e["username"], e["parentUsername"]) for e in run["list"]] == [
            (assignor.username, parent.username)
        ]


def test_sub_delegated_taxpayers_report_under_their_direct_premium(client, queue):
    top, middle = make_account(), make_account()
    delegate(middle, top)
    make_basic(delegate_to=middle)
    token = sign_in(client, top.username)
    ask(client, token)
    queue.drain()
    [run] = ask(client, token).json()["report"]
    assert [e["username"] for e in run["list"]] == [middle.username]


def test_the_job_running_twice_changes_nothing(client, queue):
    premium = make_account()
    make_basic(delegate_to=premium)
    token = sign_in(client, premium.username)
    ask(client, token)
    queue.drain()
    served = ask(client, token).json()
    [job] = report_jobs(premium)
    job_id, report_id = job.id, job.args["report_id"]
    make_basic(delegate_to=premium)  # a duplicate message must not rebuild a finished report
    with unit_of_work() as session:
        multisellers.build_report(session, report_id, current_clock())
    queue.send(job_id)
    queue.drain()
    assert ask(client, token).json() == served


@pytest.mark.parametrize("callers", [4])
def test_simultaneous_first_calls_start_one_job(db, clock, queue, callers):
    premium = make_account()

    def call(_: int) -> bool:
        with unit_of_work() as session:
            caller = accounts.get(session, premium.id)
            return multisellers.request_report(session, caller, get_settings(), clock).content is None

    with ThreadPoolExecutor(callers) as pool:
        assert all(pool.map(call, range(callers)))
    assert len(report_jobs(premium)) == 1
