"""Invoice queries."""

from __future__ import annotations

import json
from datetime import datetime
from functools import cache
from typing import Any

from sqlalchemy import Select, bindparam, func, insert, select
from sqlalchemy.orm import lazyload

from varco import fatturapa
from varco.callbacks.repository import ANY_RECEIVER, CallbackRepository
from varco.core import blobs
from varco.core.db import append_row, detached_row, get_for_update, lock_many, locked_rows
from varco.core.dialects import per_dialect
from varco.core.uow import Fact, UnitOfWork
from varco.invoices.models import (
    Invoice,
    InvoiceBody,
    InvoiceTransition,
    Notification,
    document_types,
)
from varco.invoices.states import InvoiceState

# The history row unless its (invoice_id, key) exists. A Core statement on the table: no ORM
# bulk machinery, and no autoflush (the row needs nothing pending, which then goes in one UPDATE
# with the move). RETURNING, not rowcount (-1 with psycopg here): a row back means inserted.
_INSERT_TRANSITION = per_dialect(
    lambda insert: (
        insert(InvoiceTransition.__table__)
        .on_conflict_do_nothing(index_elements=["invoice_id", "key"])
        .returning(InvoiceTransition.__table__.c.id)
    )
)
_INSERT_BODIES = insert(InvoiceBody.__table__)
_INSERT_TRANSITIONS = insert(InvoiceTransition.__table__)
_KEYS_OF = select(InvoiceTransition.invoice_id, InvoiceTransition.key).where(
    InvoiceTransition.invoice_id.in_(bindparam("ids", expanding=True))
)
# invoice id -> keys of its transitions, read by `read_transition_keys` under the invoices' lock and
# kept current by `apply_event`; dropped with the transaction or a savepoint (UnitOfWork.fact).
_TRANSITION_KEYS: Fact[dict[int, set[str]]] = Fact("transition keys", dict)


def _insert_transitions(session: UnitOfWork, rows: list[dict[str, Any]]) -> None:
    session.connection().execute(_INSERT_TRANSITIONS, rows)


_NO_BODIES = lazyload(Invoice.bodies)  # a loader option, built once (building one costs more than using it)
# A notification's file name is its idempotency key: a message received twice is not stored twice.
_NEW_NOTIFICATION = per_dialect(
    lambda insert: (
        insert(Notification.__table__)
        .on_conflict_do_nothing(index_elements=["filename"])
        .returning(Notification.__table__.c.id)
    )
)

# Built once: every upload runs it, and building a five-term query costs more than running it.
# On the table's columns, not the mapped attributes: a Core select runs in half the time of an
# ORM-enabled one (docs/performance.md), and this one needs no entity.
_INVOICES = Invoice.__table__.c
# `+ 0` keeps SQLite's planner (no statistics) off the account's search index and the state index,
# which walk every invoice the account sent in the window or every one in processing (each upload
# cost more than the one before), onto the content hash; PostgreSQL picks the hash either way.
_SAME_CONTENT_IN_PROCESS = (
    select(_INVOICES.id)
    .where(
        _INVOICES.account_id + 0 == bindparam("account_id"),
        _INVOICES.content_sha256 == bindparam("sha256"),
        _INVOICES.direction == "out",
        _INVOICES.state + 0 == 1,
        _INVOICES.created_at >= bindparam("since"),
    )
    .limit(1)
)
# With the account's stored bytes (§7.2 0097, checked next) and whether its events have callback
# receivers (the upload records one): one round trip for all three.
_SAME_CONTENT_AND_STORED = select(
    _SAME_CONTENT_IN_PROCESS.scalar_subquery().label("same_content"),
    blobs.STORED_BYTES.label("stored_bytes"),
    ANY_RECEIVER.label("any_receiver"),
)


def party_columns(summary: fatturapa.InvoiceSummary) -> dict[str, str | None]:
    """The search columns of the parties: sender from 1.2 CedentePrestatore, receiver from 1.4
    CessionarioCommittente (uploads and received files alike)."""
    columns: dict[str, str | None] = {}
    for prefix, party in (("sender", summary.supplier), ("receiver", summary.customer)):
        columns[f"{prefix}_description"] = party.description if party else None
        columns[f"{prefix}_country"] = party.country if party else None
        columns[f"{prefix}_vat"] = party.vat_code if party else None
        columns[f"{prefix}_fiscal_code"] = party.fiscal_code if party else None
    return columns


def signature_column(report: fatturapa.Report) -> dict[str, Any] | None:
    """The signature report of a signed file, as JSON (dates as text)."""
    if report.signature is None:
        return None
    return json.loads(json.dumps(report.signature.as_dict(), default=str))


def body_values(summary: fatturapa.InvoiceSummary) -> list[dict[str, Any]]:
    """The rows of the invoices inside the file (FatturaElettronicaBody), numbered from 1."""
    return [
        {
            "position": i,
            "document_type": b.document_type,
            "number": b.number,
            "invoice_date": b.date,
            "currency": b.currency,
            "total_document": b.total_document,
            "total_vat": b.total_vat,
            "net_payable": b.net_payable,
        }
        for i, b in enumerate(summary.bodies, start=1)
    ]


@cache
def _find_statement(by_sdi_id: bool, by_filename: bool, by_direction: bool, what: str) -> Select:
    """`find`'s query for one combination of criteria, built once. `what`: "invoice" (lazy bodies)
    or "locked" (FOR UPDATE, reloaded)."""
    query = select(Invoice).options(_NO_BODIES)
    if what == "locked":
        query = query.with_for_update().execution_options(populate_existing=True)
    if by_sdi_id:
        query = query.where(Invoice.sdi_id == bindparam("sdi_id"))
    if by_filename:
        query = query.where(Invoice.filename == bindparam("filename"))
    if by_direction:
        query = query.where(Invoice.direction == bindparam("direction"))
    return query.order_by(Invoice.id).limit(1)


class InvoiceRepository:
    def __init__(self, session: UnitOfWork) -> None:
        self.session = session

    def add(self, invoice: Invoice) -> Invoice:
        self.session.add(invoice)
        self.session.flush()
        return invoice

    def append(self, values: dict[str, Any], bodies: list[dict[str, Any]]) -> Invoice:
        """Insert an invoice and its bodies with Core statements (every upload does: an ORM flush of
        the two costs several times more). The Invoice returned is NOT in the session (`append_row`)
        and has no `bodies` loaded: read its columns; load it to change it."""
        values["document_types"] = document_types(b["document_type"] for b in bodies)
        invoice = append_row(self.session, Invoice, values)
        if bodies:
            rows = [{**b, "invoice_id": invoice.id} for b in bodies]
            self.session.connection().execute(_INSERT_BODIES, rows[0] if len(rows) == 1 else rows)
        return invoice

    def get(self, invoice_id: int) -> Invoice | None:
        return self.session.get(Invoice, invoice_id)

    def get_for_update(self, invoice_id: int) -> Invoice | None:
        # Bodies are not reloaded (a transition never reads them; they load on access).
        return get_for_update(self.session, Invoice, invoice_id, _NO_BODIES)

    def lock(self, invoice_ids: list[int]) -> list[Invoice]:
        """Lock these invoices in one statement: `get_for_update` then reads them with no query."""
        lock_many(self.session, Invoice, invoice_ids, _NO_BODIES)
        locked = locked_rows(self.session, Invoice)
        return [locked[invoice_id] for invoice_id in invoice_ids if invoice_id in locked]

    def read_transition_keys(self, invoice_ids: list[int]) -> None:
        """Read the transition keys of these invoices, locked by this transaction, in one statement:
        `transition_keys` then answers from memory (a batch of the drain moves each invoice twice)."""
        known = self.session.fact(_TRANSITION_KEYS)
        wanted = [invoice_id for invoice_id in invoice_ids if invoice_id not in known]
        if not wanted:
            return
        for invoice_id in wanted:
            known[invoice_id] = set()
        for invoice_id, key in self.session.execute(_KEYS_OF, {"ids": wanted}):
            known[invoice_id].add(key)

    def transition_keys(self, invoice_id: int) -> set[str] | None:
        """The keys of the invoice's transitions, if this transaction read them (None otherwise)."""
        return self.session.fact(_TRANSITION_KEYS).get(invoice_id)

    def add_transition_at_commit(self, values: dict[str, Any]) -> None:
        """The history row of a move whose key `transition_keys` showed new: written with the
        transaction's others just before its commit, in one statement. A plain INSERT: a row
        there after all (written without the invoice's lock) fails the transaction."""
        self.session.written_at_commit(_insert_transitions).append(values)

    def has_transition(self, invoice_id: int, key: str) -> bool:
        query = select(InvoiceTransition.id).where(
            InvoiceTransition.invoice_id == invoice_id, InvoiceTransition.key == key
        )
        return self.session.scalar(query) is not None

    def insert_transition(self, **values: object) -> bool:
        """The history row, unless its (invoice_id, key) exists: True if inserted (one statement)."""
        return self.session.execute(_INSERT_TRANSITION(self.session), values).first() is not None

    def add_notification(self, values: dict[str, Any]) -> Notification | None:
        """The notification's row, unless its file name is taken (None): one statement."""
        row_id = self.session.connection().execute(_NEW_NOTIFICATION(self.session), values).scalar()
        return None if row_id is None else detached_row(Notification, values, row_id)

    def transitions(self, invoice_id: int) -> list[InvoiceTransition]:
        query = select(InvoiceTransition).where(InvoiceTransition.invoice_id == invoice_id)
        return list(self.session.scalars(query.order_by(InvoiceTransition.id)))

    def notifications(self, invoice_id: int) -> list[Notification]:
        query = select(Notification).where(Notification.invoice_id == invoice_id).order_by(Notification.id)
        return list(self.session.scalars(query))

    def latest_notification(self, invoice_id: int, type_: str) -> Notification | None:
        query = (
            select(Notification)
            .where(Notification.invoice_id == invoice_id, Notification.type == type_)
            .order_by(Notification.id.desc())
            .limit(1)
        )
        return self.session.scalar(query)

    def count_notifications(self, invoice_id: int, type_: str) -> int:
        query = select(func.count(Notification.id)).where(
            Notification.invoice_id == invoice_id, Notification.type == type_
        )
        return self.session.scalar(query) or 0

    def unprocessed_ids(self, *, before: datetime, limit: int = 1000) -> list[int]:
        """Sent invoices still in 1 that no channel has taken (its answer may keep them in 1)."""
        query = (
            select(Invoice.id)
            .where(
                Invoice.state == InvoiceState.PRESA_IN_CARICO.value,
                Invoice.direction == "out",
                Invoice.updated_at <= before,
                Invoice.handed_over_at.is_(None),
            )
            .order_by(Invoice.id)
            .limit(limit)
        )
        return list(self.session.scalars(query))

    def same_content_and_used_bytes(
        self, account_id: int, sha256: str, since: datetime
    ) -> tuple[int | None, int]:
        """§7.2 0034: the same content sent recently and still awaiting processing (its id), and
        the bytes the account uses (`core.blobs.used_bytes`, read in the same statement). An
        account whose events have no callback receiver is remembered as such for the transaction."""
        params = {"account_id": account_id, "sha256": sha256, "since": since}
        self.session.flush()  # a Core select: no autoflush of its own
        same, stored, any_receiver = self.session.connection().execute(_SAME_CONTENT_AND_STORED, params).one()
        if not any_receiver:
            CallbackRepository(self.session).no_receivers(account_id)
        return same, blobs.used_bytes_with(self.session, account_id, stored)

    def find(
        self,
        *,
        sdi_id: str | None = None,
        filename: str | None = None,
        direction: str | None = None,
        lock: bool = False,
    ) -> Invoice | None:
        """One invoice by IdentificativoSdI and/or file name, optionally of one direction.

        Both are shared by the sent and the received copy of a file sent between varco clients,
        so a file name needs its direction.
        """
        if filename is not None and direction is None:
            raise ValueError("a file name identifies an invoice only with its direction")
        criteria = (sdi_id is not None, filename is not None, direction is not None)
        params = {"sdi_id": sdi_id, "filename": filename, "direction": direction}
        if not lock:
            return self.session.scalar(_find_statement(*criteria, "invoice"), params)
        # The caller goes on to change it: get_for_update will not query it again.
        locked = locked_rows(self.session, Invoice)
        if direction is not None:  # unique with the sdi id or the name: one locked before is current
            for invoice in locked.values():
                if (
                    invoice.direction == direction
                    and sdi_id in (None, invoice.sdi_id)
                    and filename in (None, invoice.filename)
                ):
                    return invoice
        self.session.flush()  # the reload below must not drop unflushed changes (no_autoflush)
        invoice = self.session.scalar(_find_statement(*criteria, "locked"), params)
        if invoice is not None:
            locked[invoice.id] = invoice
        return invoice
