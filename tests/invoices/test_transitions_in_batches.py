"""A batch of the drain reads its invoices' transition keys once, under their lock, and writes its
moves just before the commit: a key seen before is still a no-op, and every move is stored once."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from tests.sdi.factories import invoice_file, send_invoice, state, supplier_account
from varco.core.clock import current_clock
from varco.core.db import unit_of_work
from varco.invoices import service as invoices
from varco.invoices.models import InvoiceTransition
from varco.invoices.states import IllegalTransition, InvoiceEvent, InvoiceState
from varco.invoices.tasks import lock_invoices


def _history(invoice_id: int) -> list[tuple[str, int]]:
    with unit_of_work() as session:
        query = select(InvoiceTransition).where(InvoiceTransition.invoice_id == invoice_id)
        return [(t.key, t.to_state) for t in session.scalars(query.order_by(InvoiceTransition.id))]


def test_a_batch_moves_each_invoice_once_per_key(db):
    clock = current_clock()
    account = supplier_account()
    sent = [send_invoice(account, invoice_file()) for _ in range(3)]  # each in 3 Inviata
    with unit_of_work() as session:
        lock_invoices(session, [{"invoice_id": invoice.id} for invoice in sent])
        for invoice in sent:
            rc = f"RC:{invoice.filename}"
            assert invoices.apply_event(session, invoice.id, InvoiceEvent.RC, key=rc, clock=clock)[1]
            # The same notification again in the batch: a no-op, decided without a statement.
            assert not invoices.apply_event(session, invoice.id, InvoiceEvent.RC, key=rc, clock=clock)[1]
            # A move made before the batch, repeated (illegal from 7, but a duplicate): a no-op.
            again = invoices.apply_event(session, invoice.id, InvoiceEvent.SENT, key="process", clock=clock)
            assert not again[1]
    for invoice in sent:
        assert state(invoice.id) is InvoiceState.CONSEGNATA
        assert [key for key, _ in _history(invoice.id)][-2:] == ["process", f"RC:{invoice.filename}"]
        assert _history(invoice.id)[-1][1] == InvoiceState.CONSEGNATA.value
    # A move the lifecycle does not allow, under a new key, is still refused in a batch.
    with pytest.raises(IllegalTransition), unit_of_work() as session:
        lock_invoices(session, [{"invoice_id": sent[0].id}])
        invoices.apply_event(session, sent[0].id, InvoiceEvent.NS, key="NS:late", clock=clock)
    assert len(_history(sent[0].id)) == 3
