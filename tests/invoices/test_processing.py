"""§3.1 asynchronous stage: state 1 → 2 (FATRSM codes) or → 3 (sent), idempotent, resumed when stuck."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import or_, select, update

from tests.factories import make_account, make_basic, sign_in
from tests.invoices.support import SUPPLIER_VAT, invoice_xml
from tests.invoices.test_upload import invoices_of, upload
from varco.accounts import service as accounts
from varco.accounts.models import Delegation, DelegationStatus
from varco.audit.service import SYSTEM
from varco.core import jobs
from varco.core.clock import current_clock
from varco.core.db import unit_of_work
from varco.core.jobs import run_job
from varco.core.models import JobRow
from varco.invoices.models import Invoice, InvoiceTransition
from varco.invoices.states import InvoiceState
from varco.invoices.tasks import resume_stuck_invoices

VARIANTS = Path(__file__).resolve().parents[1] / "fatturapa" / "cases" / "variants"


def only_invoice(account_id: int) -> Invoice:
    [invoice] = invoices_of(account_id)
    return invoice


def history(invoice_id: int) -> list[int]:
    """The states the invoice went through, in order."""
    with unit_of_work() as session:
        return list(
            session.scalars(
                select(InvoiceTransition.to_state)
                .where(InvoiceTransition.invoice_id == invoice_id)
                .order_by(InvoiceTransition.id)
            )
        )


def test_extra_schema_failure_ends_in_processing_error_with_fatrsm212(client, queue):
    account = make_account(vat_code=SUPPLIER_VAT)
    data = (VARIANTS / "00400_line_without_natura.xml").read_bytes()
    assert upload(client, sign_in(client, account.username), data).json()["errorCode"] == "0000"
    queue.drain()
    invoice = only_invoice(account.id)
    assert invoice.state == InvoiceState.ERRORE_ELABORAZIONE
    assert invoice.sdi_id is None
    assert [e["code"] for e in invoice.sdi_errors] == ["FATRSM212"]
    assert invoice.sdi_errors[0]["description"].startswith("00400 - ")


def test_checked_ahead_of_the_lock_a_batch_ends_as_checked_inside_it(client, queue):
    # `varco worker` on SQLite checks a batch's files before it takes the write lock (core/jobs.py,
    # invoices/tasks.py check_ahead): the outcome is the same as checked under it.
    account = make_account(vat_code=SUPPLIER_VAT)
    token = sign_in(client, account.username)
    refused = (VARIANTS / "00400_line_without_natura.xml").read_bytes()
    good = invoice_xml()
    assert upload(client, token, refused).json()["errorCode"] == "0000"
    assert upload(client, token, good).json()["errorCode"] == "0000"
    jobs.work_ahead_of_the_lock()
    try:
        queue.drain()
    finally:
        jobs.work_ahead_of_the_lock(False)
    first, second = sorted(invoices_of(account.id), key=lambda invoice: invoice.id)
    assert first.state == InvoiceState.ERRORE_ELABORAZIONE
    assert [e["code"] for e in first.sdi_errors] == ["FATRSM212"]
    assert first.sdi_errors[0]["description"].startswith("00400 - ")
    assert second.state == InvoiceState.CONSEGNATA, history(second.id)


def test_the_upload_s_check_handed_to_its_stage_ends_as_a_check_of_the_stage(client, queue):
    # `varco serve` with its worker threads: the upload's synchronous check of the file serves its
    # asynchronous stage and the SDI simulator (core/jobs.py, invoices/check_cache.py).
    account = make_account(vat_code=SUPPLIER_VAT)
    token = sign_in(client, account.username)
    jobs.hand_over_to_workers_here()
    try:
        refused = (VARIANTS / "00400_line_without_natura.xml").read_bytes()
        assert upload(client, token, refused).json()["errorCode"] == "0000"
        assert upload(client, token, invoice_xml()).json()["errorCode"] == "0000"
        assert upload(client, token, invoice_xml(), skipExtraSchema=True).json()["errorCode"] == "0000"
        queue.drain()
    finally:
        jobs.hand_over_to_workers_here(False)
    first, second, third = sorted(invoices_of(account.id), key=lambda invoice: invoice.id)
    assert first.state == InvoiceState.ERRORE_ELABORAZIONE
    assert [e["code"] for e in first.sdi_errors] == ["FATRSM212"]
    assert first.sdi_errors[0]["description"].startswith("00400 - ")
    assert second.state == third.state == InvoiceState.CONSEGNATA, history(second.id)


def test_several_findings_are_all_reported(client, queue):
    account = make_account(vat_code=SUPPLIER_VAT)
    data = (VARIANTS / "00411_00415_line_and_pension_fund.xml").read_bytes()
    upload(client, sign_in(client, account.username), data)
    queue.drain()
    descriptions = [e["description"][:5] for e in only_invoice(account.id).sdi_errors]
    assert sorted(descriptions) == ["00411", "00415"]


def test_disabled_uploader_is_fatrsm403(client, queue):
    account = make_account(vat_code=SUPPLIER_VAT)
    upload(client, sign_in(client, account.username), invoice_xml())
    with unit_of_work() as session:
        accounts.disable_account(session, account.username, current_clock(), SYSTEM)
    queue.drain()
    invoice = only_invoice(account.id)
    assert invoice.state == InvoiceState.ERRORE_ELABORAZIONE
    assert invoice.sdi_errors[0]["code"] == "FATRSM403"


def test_delegation_revoked_before_processing_is_fatrsm218(client, queue):
    premium = make_account(vat_code="12345670017")
    assignor = make_basic(delegate_to=premium, vat_code=SUPPLIER_VAT)
    upload(client, sign_in(client, premium.username), invoice_xml())
    with unit_of_work() as session:
        session.execute(
            update(Delegation)
            .where(Delegation.delegator_id == assignor.id)
            .values(status=DelegationStatus.INACTIVE)
        )
    queue.drain()
    invoice = only_invoice(assignor.id)
    assert invoice.state == InvoiceState.ERRORE_ELABORAZIONE
    assert invoice.sdi_errors[0]["code"] == "FATRSM218"


def test_processing_twice_changes_nothing(client, queue):
    account = make_account(vat_code=SUPPLIER_VAT)
    upload(
        client, sign_in(client, account.username), (VARIANTS / "00400_line_without_natura.xml").read_bytes()
    )
    queue.drain()
    invoice = only_invoice(account.id)
    with unit_of_work() as session:
        job = session.scalar(select(JobRow).where(JobRow.key == f"process:{invoice.id}"))
        session.execute(
            update(JobRow).where(JobRow.id == job.id).values(status="pending")
        )  # a re-delivered job
    assert run_job(job.id) == "done"
    assert history(invoice.id) == [1, 2]


def test_invoice_stuck_in_state_1_is_resumed(client, queue, clock):
    from datetime import timedelta

    account = make_account(vat_code=SUPPLIER_VAT)
    upload(
        client, sign_in(client, account.username), (VARIANTS / "00400_line_without_natura.xml").read_bytes()
    )
    invoice = only_invoice(account.id)
    with unit_of_work() as session:  # its job gave up (e.g. the database was down for every attempt)
        session.execute(update(JobRow).where(JobRow.key == f"process:{invoice.id}").values(status="failed"))
    queue.flush()
    assert resume_stuck_invoices() == []  # not stale yet
    clock.advance(timedelta(minutes=5))
    assert resume_stuck_invoices() == [invoice.id]
    assert resume_stuck_invoices() == []  # a pending job exists now
    queue.drain()
    assert only_invoice(account.id).state == InvoiceState.ERRORE_ELABORAZIONE


# hand-off to the SDI channel ------------------------------------------------------------------------


def _sim_files(invoice_id: int) -> int:
    from sqlalchemy import func

    from varco.sdi.models import SimFile

    with unit_of_work() as session:
        return session.scalar(select(func.count(SimFile.id)).where(SimFile.invoice_id == invoice_id))


def test_valid_invoice_is_sent_then_delivered(client, queue):
    account = make_account(vat_code=SUPPLIER_VAT)
    upload(client, sign_in(client, account.username), invoice_xml())
    queue.drain()
    invoice = only_invoice(account.id)
    assert invoice.sdi_id and invoice.sdi_errors == []
    assert invoice.state in (InvoiceState.INVIATA, InvoiceState.CONSEGNATA)
    assert history(invoice.id)[:2] == [1, 3]
    assert _sim_files(invoice.id) == 1


def test_a_worker_runs_the_simulated_sdi_in_the_same_job(client, queue):
    """The SDI's check and an immediate outcome follow the hand-off in the stage's transaction:
    one job, one commit, and still both moves in the history and in the event feed."""
    from varco.events.models import Event
    from varco.sdi.models import SimFile

    account = make_account(vat_code=SUPPLIER_VAT)
    upload(client, sign_in(client, account.username), invoice_xml())
    queue.drain()
    invoice = only_invoice(account.id)
    assert invoice.state == InvoiceState.CONSEGNATA and invoice.delivered_at is not None
    with unit_of_work() as session:
        statuses = [
            e.payload["status"]
            for e in session.scalars(
                select(Event).where(Event.subject == invoice.filename).order_by(Event.id)
            )
            if e.type == "updateInvoiceStatus"
        ]
        file_id = session.scalar(select(SimFile.id).where(SimFile.invoice_id == invoice.id))
        simulator_jobs = session.scalars(
            select(JobRow.key).where(JobRow.key.like(f"sdi.sim:{file_id}:%"))
        ).all()
        # Counted in the database, not as queue messages: a wake-up left over from an earlier test
        # of this process may land in the queue too (it finds nothing to do).
        mine = or_(JobRow.key == f"process:{invoice.id}", JobRow.key.like(f"process:{invoice.id}:%"))
        ran = session.scalars(select(JobRow.key).where(mine)).all()
    assert history(invoice.id) == [1, 3, 7]
    assert statuses == [3, 7]
    assert simulator_jobs == []  # no job row: the follow-on ran in the stage's job
    assert ran == [f"process:{invoice.id}"]  # one job, one commit


def test_skip_extra_schema_sends_a_file_the_service_would_refuse(client, queue):
    account = make_account(vat_code=SUPPLIER_VAT)
    data = (VARIANTS / "00400_line_without_natura.xml").read_bytes()
    upload(client, sign_in(client, account.username), data, skipExtraSchema=True)
    queue.drain()
    invoice = only_invoice(account.id)
    # the service skipped its extra-schema rules; the Exchange System still runs them: NS, state 4
    assert invoice.sdi_id is not None
    assert invoice.state == InvoiceState.SCARTATA


def test_worker_killed_mid_job_sends_exactly_once(client, queue, clock, monkeypatch):
    """A crash inside the job (after the channel call, before commit) rolls everything back;
    the reconciler runs it again and the file reaches the SDI once."""
    from datetime import timedelta

    import varco.sdi.channels as channel_module

    account = make_account(vat_code=SUPPLIER_VAT)
    upload(client, sign_in(client, account.username), invoice_xml())
    real = channel_module.get_channel

    class CrashAfterSend:
        def send_invoice(self, session, invoice, content, clock):
            real().send_invoice(session, invoice, content, clock)
            raise SystemExit("worker killed")  # not an Exception: like a kill, nothing handles it

    monkeypatch.setattr(channel_module, "get_channel", lambda: CrashAfterSend())
    invoice = only_invoice(account.id)
    try:
        run_job_for(invoice.id)
    except SystemExit:
        pass
    assert only_invoice(account.id).state == InvoiceState.PRESA_IN_CARICO
    assert _sim_files(invoice.id) == 0  # the submission rolled back with the job
    monkeypatch.setattr(channel_module, "get_channel", real)
    queue.flush()  # the crashed worker's message is gone too
    clock.advance(timedelta(minutes=5))
    from varco.core.jobs import reconcile

    reconcile()
    queue.drain()
    final = only_invoice(account.id)
    assert final.state in (InvoiceState.INVIATA, InvoiceState.CONSEGNATA)
    assert _sim_files(invoice.id) == 1


def run_job_for(invoice_id: int) -> str:
    with unit_of_work() as session:
        job_id = session.scalar(select(JobRow.id).where(JobRow.key == f"process:{invoice_id}"))
    return run_job(job_id)
