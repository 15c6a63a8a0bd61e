"""Communication request queries, and the declarant lookup among the caller's delegators."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import func, or_, select

from varco.accounts.models import Account, Delegation
from varco.comfin.models import ComfinRequest
from varco.core.blobs import Blob
from varco.core.uow import UnitOfWork


class ComfinRepository:
    def __init__(self, session: UnitOfWork) -> None:
        self.session = session

    def add(self, request: ComfinRequest) -> ComfinRequest:
        self.session.add(request)
        self.session.flush()
        return request

    def by_request_id(self, request_id: str) -> ComfinRequest | None:
        return self.session.scalar(select(ComfinRequest).where(ComfinRequest.request_id == request_id))

    def get_for_update(self, pk: int) -> ComfinRequest | None:
        return self.session.get(ComfinRequest, pk, with_for_update=True, populate_existing=True)

    def by_file_id(self, file_id: str) -> ComfinRequest | None:
        return self.session.scalar(select(ComfinRequest).where(ComfinRequest.file_id == file_id))

    def content(self, blob_id: int) -> bytes:
        blob = self.session.get(Blob, blob_id)
        if blob is None:
            raise LookupError(f"stored file {blob_id} is missing")
        return blob.content

    def delegator_by_tax_code(self, delegate_id: int, tax_code: str) -> tuple[Account, str] | None:
        """An account that delegated `delegate_id` (any status) whose tax code or VAT number is `tax_code`."""
        query = (
            select(Account, Delegation.status)
            .join(Delegation, Delegation.delegator_id == Account.id)
            .where(
                Delegation.delegate_id == delegate_id,
                or_(func.upper(Account.fiscal_code) == tax_code, Account.vat_code == tax_code),
            )
            .order_by(Delegation.status == "ACTIVE")  # an ACTIVE match wins (sorted last, taken last)
        )
        rows = self.session.execute(query).all()
        return (rows[-1][0], rows[-1][1]) if rows else None

    def delegator_by_username(self, delegate_id: int, username: str) -> tuple[Account, str] | None:
        query = (
            select(Account, Delegation.status)
            .join(Delegation, Delegation.delegator_id == Account.id)
            .where(Delegation.delegate_id == delegate_id, func.lower(Account.username) == username.lower())
        )
        row = self.session.execute(query).first()
        return (row[0], row[1]) if row else None

    def stuck(self, result: str, *, sent: bool, before: datetime, limit: int = 500) -> list[int]:
        """Requests still in `result`, sent to the SDI (or not), last moved before `before`."""
        query = select(ComfinRequest.id).where(
            ComfinRequest.result == result,
            ComfinRequest.file_id.is_not(None) if sent else ComfinRequest.file_id.is_(None),
            ComfinRequest.updated_at < before,
        )
        return list(self.session.scalars(query.order_by(ComfinRequest.id).limit(limit)))

    def unsealed(self, limit: int) -> list[int]:
        query = select(ComfinRequest.id).where(
            ComfinRequest.pdd_available.is_(False), ComfinRequest.notify_blob_id.is_not(None)
        )
        return list(self.session.scalars(query.order_by(ComfinRequest.id).limit(limit)))
