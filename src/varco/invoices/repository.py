"""Invoice queries."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import bindparam, event, func, select
from sqlalchemy.orm import Session, SessionTransaction, lazyload

from varco.core.db import conflict_insert
from varco.invoices.models import Invoice, InvoiceTransition, Notification

_LOCKED = "varco_locked_invoices"  # session.info: ids locked in the current transaction

# Built once: every upload runs it, and building a five-term query costs more than running it.
_SAME_CONTENT_IN_PROCESS = (
    select(Invoice.id)
    .where(
        Invoice.account_id == bindparam("account_id"),
        Invoice.content_sha256 == bindparam("sha256"),
        Invoice.direction == "out",
        Invoice.state == 1,
        Invoice.created_at >= bindparam("since"),
    )
    .limit(1)
)


@event.listens_for(Session, "after_transaction_end")
def _forget_locks(session: Session, transaction: SessionTransaction) -> None:
    # End of the transaction or of a savepoint (a rollback to it may release its locks): lock
    # again next time. Not the internal subtransactions of flush().
    if transaction.parent is None or transaction.nested:
        session.info.pop(_LOCKED, None)


class InvoiceRepository:
    def __init__(self, session: Session) -> None:
        self.session = session

    def add(self, invoice: Invoice) -> Invoice:
        self.session.add(invoice)
        self.session.flush()
        return invoice

    def get(self, invoice_id: int) -> Invoice | None:
        return self.session.get(Invoice, invoice_id)

    def get_for_update(self, invoice_id: int) -> Invoice | None:
        # FOR UPDATE on PostgreSQL; on SQLite the transaction already holds the write lock. Once
        # per transaction: locked before, the instance in the session is current (no query).
        # Bodies are not reloaded (a transition never reads them; they load on access).
        locked = self.session.info.setdefault(_LOCKED, set())
        if invoice_id in locked and (invoice := self.session.get(Invoice, invoice_id)) is not None:
            return invoice
        self.session.flush()  # the reload below must not drop unflushed changes (no_autoflush)
        invoice = self.session.get(
            Invoice,
            invoice_id,
            with_for_update=True,
            populate_existing=True,
            options=[lazyload(Invoice.bodies)],
        )
        if invoice is not None:
            self.session.info.setdefault(_LOCKED, set()).add(invoice.id)
        return invoice

    def has_transition(self, invoice_id: int, key: str) -> bool:
        query = select(InvoiceTransition.id).where(
            InvoiceTransition.invoice_id == invoice_id, InvoiceTransition.key == key
        )
        return self.session.scalar(query) is not None

    def insert_transition(self, **values: object) -> bool:
        """The history row, unless its (invoice_id, key) exists: True if inserted (one statement)."""
        statement = conflict_insert(self.session)(InvoiceTransition.__table__).values(**values)
        statement = statement.on_conflict_do_nothing(index_elements=["invoice_id", "key"]).returning(
            InvoiceTransition.__table__.c.id
        )
        # A Core statement on the table: no ORM bulk machinery, and no autoflush (the row needs
        # nothing pending, which then goes in one UPDATE with the move). RETURNING, not rowcount
        # (-1 with psycopg here): a row back means inserted.
        return self.session.execute(statement).first() is not None

    def has_notification(self, filename: str) -> bool:
        query = select(Notification.id).where(Notification.filename == filename)
        return self.session.scalar(query) is not None

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

    def ids_in_state(
        self, state: int, *, before: datetime, direction: str = "out", limit: int = 1000
    ) -> list[int]:
        query = (
            select(Invoice.id)
            .where(Invoice.state == state, Invoice.direction == direction, Invoice.updated_at <= before)
            .order_by(Invoice.id)
            .limit(limit)
        )
        return list(self.session.scalars(query))

    def in_process_with_content(self, account_id: int, sha256: str, since: datetime) -> int | None:
        """§7.2 0034: the same content sent recently and still awaiting processing (its id)."""
        params = {"account_id": account_id, "sha256": sha256, "since": since}
        return self.session.scalar(_SAME_CONTENT_IN_PROCESS, params)

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
        query = select(Invoice).options(lazyload(Invoice.bodies))  # bodies on access only
        if lock:  # the caller goes on to change it: get_for_update will not query it again
            self.session.flush()  # the reload below must not drop unflushed changes (no_autoflush)
            query = query.with_for_update().execution_options(populate_existing=True)
        if sdi_id is not None:
            query = query.where(Invoice.sdi_id == sdi_id)
        if filename is not None:
            query = query.where(Invoice.filename == filename)
        if direction is not None:
            query = query.where(Invoice.direction == direction)
        invoice = self.session.scalar(query.order_by(Invoice.id).limit(1))
        if lock and invoice is not None:
            self.session.info.setdefault(_LOCKED, set()).add(invoice.id)
        return invoice
