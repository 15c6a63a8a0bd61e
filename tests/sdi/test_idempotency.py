"""Duplicate and out-of-order notifications, lost messages, crashes in the middle, repeated sends."""

from __future__ import annotations

import logging
from datetime import timedelta

import pytest
from sqlalchemy import func, select

from tests.sdi.factories import (
    invoice_file,
    notifications,
    send_invoice,
    state,
    supplier_account,
    types,
    unique_code,
)
from varco.core import blobs
from varco.core.blobs import Blob
from varco.core.db import unit_of_work
from varco.core.jobs import reconcile, run_job
from varco.core.models import JobRow
from varco.invoices import service as invoices
from varco.invoices.models import InvoiceTransition
from varco.invoices.states import InvoiceState as S
from varco.sdi import inbound, messages
from varco.sdi.channels import get_channel
from varco.sdi.models import SimFile, UnmatchedMessage
from varco.sdi.simulator import engine, signing
from varco.sdi.simulator.control import set_scenario
from varco.settings import get_settings


def sent(fixture: str = "FPR12.xml", **overrides):
    account = supplier_account()
    return send_invoice(account, invoice_file(fixture, supplier_vat=account.vat_code, **overrides))


def transitions(invoice_id: int) -> list[tuple[int | None, int]]:
    with unit_of_work() as session:
        rows = session.scalars(
            select(InvoiceTransition)
            .where(InvoiceTransition.invoice_id == invoice_id)
            .order_by(InvoiceTransition.id)
        )
        return [(t.from_state, t.to_state) for t in rows]


def deliver(name: str, xml: bytes, clock):
    with unit_of_work() as session:
        return inbound.receive_notification(session, name, xml, clock)


def signed(element, clock) -> bytes:
    with unit_of_work() as session:
        return messages.serialize(signing.sign(session, element, clock))


def test_duplicate_notification_is_a_no_op(db, clock, queue):
    invoice_ = sent()
    queue.drain()
    [(rc, content)] = notifications(invoice_.id)
    assert deliver(rc.filename, content, clock) is None
    assert types(invoice_.id) == ["RC"]
    assert transitions(invoice_.id) == [(None, 1), (1, 3), (3, 7)]


def test_a_notification_received_twice_leaves_no_file_and_no_space_behind(db, clock, queue):
    """The second copy's file is stored before its name is found taken, then taken back."""
    invoice_ = sent()
    queue.drain()
    [(rc, content)] = notifications(invoice_.id)

    def stored() -> tuple[int, int]:
        with unit_of_work() as session:
            found = invoices.find_invoice(session, filename=invoice_.filename, direction="out")
            return session.scalar(select(func.count(Blob.id))), blobs.used_bytes(session, found.account_id)

    before = stored()
    assert deliver(rc.filename, content, clock) is None
    assert stored() == before


def test_out_of_order_notification_is_refused_and_logged(db, clock, queue, caplog):
    code = unique_code()[:6]
    with unit_of_work() as session:
        set_scenario(session, clock, recipient_code=code, outcome="DT")
    invoice_ = sent(
        "FPA12.xml",
        codice_destinatario=code,
    )
    # An NE before the RC (the simulator holds the RC until it is drained).
    ne = messages.notifica_esito(invoice_.sdi_id, invoice_.filename, "EC01", None, None, None, "77")
    with caplog.at_level(logging.WARNING, logger="varco.invoices"):
        stored = deliver(messages.message_name(invoice_.filename, "NE", 9), signed(ne, clock), clock)
    assert stored is not None and stored.type == "NE"  # kept, for the record
    assert state(invoice_.id) == S.INVIATA
    assert any("refused NE-EC01" in r.getMessage() for r in caplog.records)
    queue.drain()
    assert state(invoice_.id) == S.CONSEGNATA  # the real sequence still works


def test_notification_on_a_final_state_is_refused(db, clock, queue, caplog):
    invoice_ = sent()
    queue.drain()
    mc = messages.mancata_consegna(invoice_.sdi_id, invoice_.filename, clock.now(), "late", "88")
    with caplog.at_level(logging.WARNING, logger="varco.invoices"):
        deliver(messages.message_name(invoice_.filename, "MC", 1), signed(mc, clock), clock)
    assert state(invoice_.id) == S.CONSEGNATA
    assert "refused MC" in caplog.text


@pytest.mark.parametrize(
    ("xml", "fragment"),
    [
        (b"<not-xml", "not well-formed"),
        (b"<x xmlns='urn:other'/>", "is not an SDI message"),
        (f"<t:RicevutaConsegna xmlns:t='{messages.NS}' versione='1.0'/>".encode(), "MessaggiTypes"),
    ],
)
def test_malformed_notifications_are_refused(db, clock, xml, fragment):
    with pytest.raises(inbound.NotificationRefused, match=fragment):
        deliver("IT05555550028_00001_RC_001.xml", xml, clock)


def test_notification_for_an_unknown_or_mismatched_file_is_kept_aside(db, clock, queue):
    invoice_ = sent()
    rc = messages.ricevuta_consegna(
        "999999999999", invoice_.filename, clock.now(), clock.now(), ("ABC1234", "x"), "1"
    )
    assert deliver("X_RC_001.xml", signed(rc, clock), clock) is None
    rc = messages.ricevuta_consegna(
        invoice_.sdi_id, "IT0_OTHER.xml", clock.now(), clock.now(), ("ABC1234", "x"), "1"
    )
    assert deliver("X_RC_002.xml", signed(rc, clock), clock) is None
    assert deliver("X_RC_002.xml", signed(rc, clock), clock) is None  # once per file name
    assert state(invoice_.id) == S.INVIATA and types(invoice_.id) == []
    with unit_of_work() as session:
        kept = session.scalars(
            select(UnmatchedMessage).where(UnmatchedMessage.filename.in_(["X_RC_001.xml", "X_RC_002.xml"]))
        ).all()
        reasons = {row.filename: row.reason for row in kept}
    assert "another transmission" in reasons["X_RC_001.xml"]  # the copy of a re-send
    assert "NomeFile IT0_OTHER.xml" in reasons["X_RC_002.xml"]


def test_send_invoice_twice_submits_once(db, clock, queue):
    invoice_ = sent()
    with unit_of_work() as session:
        found = invoices.find_invoice(session, filename=invoice_.filename, direction="out")
        assert get_channel().send_invoice(session, found, b"ignored", clock) == invoice_.sdi_id
        found.sdi_id = None  # even without the id on the invoice, the SDI knows the file
        assert get_channel().send_invoice(session, found, b"ignored", clock) == invoice_.sdi_id
        count = session.scalar(select(func.count(SimFile.id)).where(SimFile.invoice_id == invoice_.id))
    assert count == 1


def test_lost_wake_up_is_recovered_by_the_reconciler_once(db, clock, queue):
    invoice_ = sent()
    queue.flush()  # the broker lost the message
    assert queue.drain() == 0
    assert state(invoice_.id) == S.INVIATA
    clock.advance(get_settings().stale_job_after + timedelta(seconds=1))
    reconcile()
    reconcile(clock, stale_after=timedelta())  # a second, eager re-send: a duplicate wake-up
    queue.drain()
    assert state(invoice_.id) == S.CONSEGNATA
    assert types(invoice_.id) == ["RC"]
    assert transitions(invoice_.id) == [(None, 1), (1, 3), (3, 7)]


def test_crash_in_the_middle_of_a_step_leaves_nothing_behind(db, clock, queue):
    invoice_ = sent("FPA12.xml")
    with unit_of_work() as session:
        file_id = session.scalar(select(SimFile.id).where(SimFile.invoice_id == invoice_.id))
    # The worker runs the steps (RC and NE written) and dies before its commit.
    with pytest.raises(RuntimeError, match="worker killed"), unit_of_work() as session:
        assert engine.process(session, file_id, clock) == 3
        raise RuntimeError("worker killed")
    assert types(invoice_.id) == [] and state(invoice_.id) == S.INVIATA
    queue.drain()  # the job, still pending, runs again from the start
    assert types(invoice_.id) == ["RC", "NE"]
    assert state(invoice_.id) == S.ACCETTATA
    with unit_of_work() as session:
        job_ids = session.scalars(select(JobRow.id).where(JobRow.key.like(f"sdi.sim:{file_id}:%"))).all()
    for job_id in job_ids:  # duplicate wake-ups after success
        assert run_job(job_id) == "done"
    assert types(invoice_.id) == ["RC", "NE"]
    assert transitions(invoice_.id) == [(None, 1), (1, 3), (3, 7), (7, 8)]
