"""Search decisions: tenancy, paging rules, lookups by id / file name / SDI id, files and packages."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from varco.accounts import service as accounts
from varco.accounts.models import Account
from varco.core.errors import Forbidden, NotFound
from varco.core.uow import UnitOfWork
from varco.invoices import filenames
from varco.invoices.models import Invoice
from varco.preservation import service as preservation
from varco.rendering import service as rendering
from varco.search import archives, records
from varco.search.params import Filters, SearchInputError
from varco.search.repository import SearchRepository
from varco.search.schemas import InvoicePage, InvoiceRecord, NotificationRecord, UnsignedInvoiceRecord

WHAT = {"out": "sent invoice", "in": "received invoice"}


class InvoiceNotFound(NotFound):
    """No such invoice among those the caller may see."""


class PackageNotAvailable(NotFound):
    """§4.2: the preservation package is not available (yet)."""


@dataclass(frozen=True)
class Paging:
    page: int
    size: int


@dataclass(frozen=True)
class Ref:
    """Exactly one way of naming an invoice."""

    invoice_id: int | None = None
    filename: str | None = None
    sdi_id: str | None = None

    def describe(self) -> str:
        if self.invoice_id is not None:
            return f"id {self.invoice_id}"
        if self.filename is not None:
            return f"file name {self.filename!r}"
        return f"SDI id {self.sdi_id!r}"


def exactly_one(invoice_id: int | None, filename: str | None, sdi_id: str | None, names: str) -> Ref:
    given = [v for v in (invoice_id, filename, sdi_id) if v is not None]
    if len(given) != 1:
        raise SearchInputError(f"give exactly one of {names} ({len(given)} given)")
    return Ref(invoice_id, filename, sdi_id)


def scope(session: UnitOfWork, caller: Account, username: str | None) -> list[int]:
    """Tenancy: own taxpayer and ACTIVE delegators; `username` narrows to one of them (Premium only)."""
    visible = accounts.visible_account_ids(session, caller)
    if username is None:
        return visible
    if username == caller.username:
        return [caller.id]
    if not caller.is_premium:
        raise Forbidden(f"a basic user can only search its own invoices, not those of {username!r}")
    target = accounts.find(session, username)
    if target is None or target.id not in visible:
        raise Forbidden(
            f"{username!r} has not delegated you (no ACTIVE delegation): its invoices are not yours to see"
        )
    return [target.id]


def search(
    session: UnitOfWork,
    caller: Account,
    direction: str,
    filters: Filters,
    paging: Paging,
    username: str | None,
) -> InvoicePage:
    """One page of files, newest first; `totalElements` counts files (a batch is one)."""
    account_ids = scope(session, caller, username)
    offset = (paging.page - 1) * paging.size
    total, rows = SearchRepository(session).page(account_ids, direction, filters, offset, paging.size)
    total_pages = -(-total // paging.size)
    if paging.page > max(total_pages, 1):
        raise SearchInputError(
            f"page {paging.page} is past the last page ({total_pages} of {paging.size} files each); "
            f"ask for a page between 1 and {max(total_pages, 1)}"
        )
    return InvoicePage.model_validate(
        {
            "content": [records.invoice_fields(r.invoice, r.invoice.username, bodies=r.bodies) for r in rows],
            "first": paging.page == 1,
            "last": total_pages == 0 or paging.page == total_pages,
            "number": paging.page,
            "numberOfElements": len(rows),
            "size": paging.size,
            "totalElements": total,
            "totalPages": total_pages,
        }
    )


def find(session: UnitOfWork, caller: Account, direction: str, ref: Ref) -> Invoice:
    """The invoice the reference names, if the caller may see it; 404 otherwise (never another tenant's)."""
    invoice = SearchRepository(session).one(
        accounts.visible_account_ids(session, caller),
        direction,
        invoice_id=ref.invoice_id,
        filename=ref.filename,
        sdi_id=ref.sdi_id,
    )
    if invoice is None:
        raise InvoiceNotFound(f"no {WHAT[direction]} with {ref.describe()} among yours")
    return invoice


def detail(
    session: UnitOfWork, invoice: Invoice, include_file: bool, include_pdf: bool = False
) -> InvoiceRecord:
    """One record; the stored file and its PDF rendering in base64 only when asked."""
    content = _content(session, invoice) if include_file or include_pdf else None
    record = records.invoice_record(
        invoice, usernames(session, [invoice]).get(invoice.account_id), content if include_file else None
    )
    if include_pdf and content is not None:
        record.pdfFile = records.b64(rendering.pdf_of(invoice.filename, content))
    return record


def unsigned_detail(
    session: UnitOfWork,
    invoice: Invoice,
    include_file: bool,
    include_unsigned: bool = True,
    include_pdf: bool = False,
) -> UnsignedInvoiceRecord:
    """A record plus `unsignedFile` (the XML without its signature) and `signed`."""
    content = _content(session, invoice)
    record = records.invoice_record(
        invoice,
        usernames(session, [invoice]).get(invoice.account_id),
        content if include_file else None,
        record=UnsignedInvoiceRecord,
        unsignedFile=records.b64(archives.unsigned_xml(content)) if include_unsigned else None,
        signed=invoice.is_signed,
    )
    if include_pdf:
        record.pdfFile = records.b64(rendering.pdf_of(invoice.filename, content))
    return record


def invoice_zip(session: UnitOfWork, invoice: Invoice) -> tuple[str, bytes]:
    """The invoice file and every notification file, names as stored."""
    repo = SearchRepository(session)
    notifications = repo.notifications([invoice.id])
    contents = repo.contents([invoice.blob_id, *(n.blob_id for n in notifications)])
    entries = [(invoice.filename, contents[invoice.blob_id])]
    entries += [(n.filename, contents[n.blob_id]) for n in notifications]
    return f"{filenames.stem(invoice.filename)}.zip", archives.zip_files(entries)


def package(session: UnitOfWork, invoice: Invoice) -> tuple[str, bytes]:
    """The newest preservation package; 404 while `pddAvailable` is false."""
    found = preservation.latest_package(session, invoice) if invoice.pdd_available else None
    if found is None:
        raise PackageNotAvailable(
            f"the preservation package of {invoice.filename} is not available yet: it is made once the "
            "invoice reaches a final state"
        )
    return found


def notifications(session: UnitOfWork, invoice: Invoice) -> list[NotificationRecord]:
    """Every SDI message about the file, oldest first."""
    repo = SearchRepository(session)
    found = repo.notifications([invoice.id])
    contents = repo.contents([n.blob_id for n in found])
    return [records.notification_record(n, contents[n.blob_id]) for n in found]


def notification(session: UnitOfWork, caller: Account, direction: str, filename: str) -> NotificationRecord:
    """One notification by its file name, if it concerns an invoice the caller may see."""
    repo = SearchRepository(session)
    found = repo.notification(accounts.visible_account_ids(session, caller), direction, filename)
    if found is None:
        raise InvoiceNotFound(f"no notification {filename!r} about your {WHAT[direction]}s")
    note, _ = found
    return records.notification_record(note, repo.contents([note.blob_id])[note.blob_id])


def usernames(session: UnitOfWork, invoices: Sequence[Invoice]) -> dict[int, str]:
    """Owner usernames of the invoices on a page, in one query."""
    return SearchRepository(session).usernames(sorted({i.account_id for i in invoices}))


def _content(session: UnitOfWork, invoice: Invoice) -> bytes:
    return SearchRepository(session).contents([invoice.blob_id])[invoice.blob_id]
