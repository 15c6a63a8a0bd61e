"""Preservation packages (PDD): seal an invoice that reached a final state, chain packages per account.

See docs/preservation.md for when a package is made and what it holds.
"""

from __future__ import annotations

import logging
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy.exc import IntegrityError

from varco.core import blobs, jobs
from varco.core.clock import Clock
from varco.core.db import append_row
from varco.core.errors import VarcoError
from varco.core.uow import UnitOfWork
from varco.invoices import filenames
from varco.invoices.models import Invoice
from varco.invoices.states import InvoiceState
from varco.preservation import package
from varco.preservation.models import PreservationPackage
from varco.preservation.repository import InvoiceFacts, PreservationRepository

log = logging.getLogger("varco.preservation")

S = InvoiceState
# Invoices that exist for the tax authority and will not change any more. Not 2 (never transmitted)
# nor 4 (an invoice the SDI discarded counts as never issued and must be issued again).
FINAL_FOR_PRESERVATION: frozenset[int] = frozenset(
    s.value
    for s in (
        S.NON_CONSEGNATA,
        S.RECAPITO_IMPOSSIBILE,
        S.ACCETTATA,
        S.RIFIUTATA,
        S.DECORRENZA_TERMINI,
        S.RICEVUTA,
    )
)
_RACE_RETRIES = 5


class ChainContention(VarcoError):
    """Another sealer kept extending the same chain; the job is retried."""

    status, code = 503, "0095"


def is_sealable(invoice: Invoice | InvoiceFacts) -> bool:
    """Final for preservation: the states above, or delivered (RC) when no PA outcome can follow."""
    if invoice.state in FINAL_FOR_PRESERVATION:
        return True
    return invoice.state == S.CONSEGNATA and invoice.format != "FPA12"  # NE/DT exist only for PA


def seal_invoice(session: UnitOfWork, invoice_id: int, clock: Clock) -> PreservationPackage | None:
    """Seal the invoice's package (a new version if notifications arrived since); None if not final."""
    repo = PreservationRepository(session)
    invoice = repo.invoice(invoice_id)
    if invoice is None or not is_sealable(invoice):
        return None

    def files() -> list[package.PackedFile]:  # read again on each try: notifications may arrive
        return [
            package.PackedFile(invoice.filename, repo.content(invoice.blob_id), "invoice"),
            *(
                package.PackedFile(n.filename, repo.content(n.blob_id), "notification", n.type)
                for n in repo.notifications(invoice.id)
            ),
        ]

    sealed = seal(
        session,
        Sealable(
            invoice.account_id,
            f"{filenames.stem(invoice.filename)}.conservazione.zip",
            _subject(invoice),
            files,
            invoice_id=invoice.id,
        ),
        clock,
    )
    repo.mark_sealed(invoice.id)
    return sealed


@dataclass(frozen=True)
class Sealable:
    """What a package holds: a document (an invoice, a communication) and its notifications."""

    account_id: int  # whose chain the package extends
    name: str
    subject: dict[str, Any]
    files: Callable[[], list[package.PackedFile]]  # the document first, then its notifications
    invoice_id: int | None = None
    comfin_request_id: int | None = None

    def __str__(self) -> str:
        return f"invoice {self.invoice_id}" if self.invoice_id else f"communication {self.comfin_request_id}"


def seal(session: UnitOfWork, item: Sealable, clock: Clock) -> PreservationPackage:
    """Seal `item` as the next link of its account's chain: a new version when notifications came
    since its last package, else that package (idempotent)."""
    repo = PreservationRepository(session)
    for _ in range(_RACE_RETRIES):
        files = item.files()
        if item.invoice_id is not None:
            latest = repo.latest_for_invoice(item.invoice_id)
        else:
            latest = repo.latest_for_communication(item.comfin_request_id)
        if latest is not None and latest.notification_count == len(files) - 1:
            return latest  # nothing new since the last seal
        head = repo.chain_head(item.account_id)
        spec = package.PackageSpec(
            sequence=head.sequence + 1 if head else 1,
            version=latest.version + 1 if latest else 1,
            sealed_at=clock.now(),
            previous_sha256=head.sha256 if head else None,
            subject=item.subject,
            files=files,
        )
        content = package.build(spec)
        try:
            # A savepoint: losing a race on (account, sequence) or (document, version) retries
            # with the new chain head instead of forking the chain.
            with session.begin_nested():
                blob = blobs.store(session, item.name, content, item.account_id, spec.sealed_at)
                values = {
                    "account_id": item.account_id,
                    "sequence": spec.sequence,
                    "invoice_id": item.invoice_id,
                    "comfin_request_id": item.comfin_request_id,
                    "version": spec.version,
                    "notification_count": len(files) - 1,
                    "blob_id": blob.id,
                    "name": item.name,
                    "sha256": package.sha256(content),
                    "previous_sha256": spec.previous_sha256,
                    "sealed_at": spec.sealed_at,
                }
                # Append-only (a Core INSERT): the package returned is read, never changed.
                sealed = append_row(session, PreservationPackage, values)
        except IntegrityError:
            log.info("%s: the chain of account %s moved while sealing; retrying", item, item.account_id)
            continue
        log.info("%s sealed as package %s of account %s", item, spec.sequence, item.account_id)
        return sealed
    raise ChainContention(f"could not seal {item}: the package chain kept changing")


SEAL = jobs.Task("preservation.seal", ("invoice_id",))  # run by preservation.tasks.seal


def request_seal(session: UnitOfWork, invoice_id: int, clock: Clock) -> None:
    """Seal after this transaction commits, in a job (for callers that move invoices to a final state)."""
    jobs.enqueue(session, SEAL, clock=clock, invoice_id=invoice_id)


def latest_package(session: UnitOfWork, invoice: Invoice) -> tuple[str, bytes] | None:
    """(file name, ZIP bytes) of the invoice's newest package, or None while there is none."""
    repo = PreservationRepository(session)
    latest = repo.latest_for_invoice(invoice.id)
    if latest is None:
        return None
    return latest.name, repo.content(latest.blob_id)


def latest_packages(session: UnitOfWork, invoice_ids: Sequence[int]) -> dict[int, tuple[str, int]]:
    """(file name, blob id) of the newest package of each of the invoices that has one, in one query
    (a bulk download reads the contents of a whole chunk at once)."""
    found = PreservationRepository(session).latest_for_invoices(invoice_ids)
    return {invoice_id: (p.name, p.blob_id) for invoice_id, p in found.items()}


def verify_chain(session: UnitOfWork, account_id: int) -> list[str]:
    """Walk an account's chain: every package's files match its index and it links to the previous one."""
    repo = PreservationRepository(session)
    problems: list[str] = []
    previous: PreservationPackage | None = None
    for sealed in repo.chain(account_id):
        content = repo.content(sealed.blob_id)
        label = f"package {sealed.sequence} ({sealed.name})"
        expected = previous.sha256 if previous else None
        previous = sealed
        if package.sha256(content) != sealed.sha256:
            problems.append(f"{label}: SHA-256 of the ZIP differs from the one recorded")
        try:
            index = package.read_index(content)
            problems.extend(f"{label}: {p}" for p in package.check_files(content))
        except (zipfile.BadZipFile, KeyError, ValueError) as exc:
            problems.append(f"{label}: unreadable ({exc})")
            continue
        if index.get("previousPackageSha256") != expected or sealed.previous_sha256 != expected:
            problems.append(f"{label}: does not link to the previous package")
    return problems


def chain_of(session: UnitOfWork, account_id: int) -> list[PreservationPackage]:
    """An account's packages in chain order."""
    return PreservationRepository(session).chain(account_id)


def unsealed_ids(session: UnitOfWork, limit: int) -> list[int]:
    return PreservationRepository(session).unsealed_ids(FINAL_FOR_PRESERVATION, S.CONSEGNATA.value, limit)


def _subject(invoice: InvoiceFacts) -> dict[str, Any]:
    username, country_code, vat_code = invoice.owner or (None, None, None)
    return {
        "account": {"username": username, "countryCode": country_code, "vatCode": vat_code},
        "invoice": {
            "id": str(invoice.id),
            "filename": invoice.filename,
            "idSdi": invoice.sdi_id,
            "direction": invoice.direction,
            "format": invoice.format,
            "status": InvoiceState(invoice.state).label,
            "sender": {"countryCode": invoice.sender_country, "vatCode": invoice.sender_vat},
            "receiver": {"countryCode": invoice.receiver_country, "vatCode": invoice.receiver_vat},
            "numbers": list(invoice.numbers),
        },
    }
