"""Bulk downloads: a ZIP of many invoices built by a durable job in chunks, so that progress is visible.

Each step packs `download_chunk_size` invoices into a part ZIP in its own transaction and enqueues the
next step; the last step merges the parts, adds the report and marks the download COMPLETED.
"""

from __future__ import annotations

import io
import logging
import secrets
import zipfile

from sqlalchemy import delete, func, select

from varco.accounts import service as accounts
from varco.accounts.models import Account
from varco.core import blobs, jobs
from varco.core.blobs import Blob
from varco.core.clock import Clock, current_clock
from varco.core.db import unit_of_work
from varco.core.errors import NotFound
from varco.core.models import JobRow
from varco.core.numbers import whole_number
from varco.core.uow import UnitOfWork
from varco.invoices.models import Invoice
from varco.preservation import service as preservation
from varco.rendering import service as rendering
from varco.search import archives, report, service
from varco.search.models import DownloadJob
from varco.search.params import SearchInputError
from varco.search.records import b64
from varco.search.repository import SearchRepository
from varco.search.schemas import DownloadStatus
from varco.settings import Settings, get_settings

log = logging.getLogger("varco.search.downloads")

KINDS = ("XML", "P7M", "NOTIFICATIONS", "PDF", "REPORT", "PDD")
# Other names clients send, compared in upper case without `_`, `-` and spaces (so `DownloadXml`,
# `DOWNLOAD_XML` and `download-xml` are one name); the second client's names are `Download...`.
_ALIASES = {
    "NOTIFICATION": "NOTIFICATIONS",
    "XLSX": "REPORT",
    "EXCEL": "REPORT",
    "XLS": "REPORT",
    "DOWNLOADXML": "XML",
    "DOWNLOADP7M": "P7M",
    "DOWNLOADPDF": "PDF",
    "DOWNLOADNOTIFICATIONS": "NOTIFICATIONS",
    "DOWNLOADNOTIFICATION": "NOTIFICATIONS",
    "REPORTEXCEL": "REPORT",
    "DOWNLOADARCHIVING": "PDD",
    "ARCHIVING": "PDD",
}
_SEPARATORS = str.maketrans("", "", "_-")
REPORT_NAME = "report.xlsx"


class DownloadTooLarge(Exception):
    """The ZIP would exceed the configured size."""


def parse_kinds(values: list[str] | None) -> list[str]:
    kinds: list[str] = []
    for value in values or []:
        kind = "".join(str(value).upper().split()).translate(_SEPARATORS)
        kind = _ALIASES.get(kind, kind)
        if kind not in KINDS:
            raise SearchInputError(f"downloadTypes: {value!r} is unknown; use any of {', '.join(KINDS)}")
        if kind not in kinds:
            kinds.append(kind)
    if not kinds:
        raise SearchInputError(f"downloadTypes must name at least one of {', '.join(KINDS)}")
    return kinds


def parse_ids(values: list[str | int] | None, limit: int) -> list[int]:
    ids: list[int] = []
    for value in values or []:
        number = whole_number(value, "each of ids")
        if number not in ids:
            ids.append(number)
    if not ids:
        raise SearchInputError("ids must list at least one invoice id")
    if len(ids) > limit:
        raise SearchInputError(f"ids lists {len(ids)} invoices; ask for at most {limit} per download")
    return ids


def request_download(
    session: UnitOfWork,
    caller: Account,
    direction: str,
    ids: list[str | int] | None,
    kinds: list[str] | None,
    settings: Settings,
    clock: Clock,
) -> DownloadJob:
    """Check the request, record it and enqueue its first step (sent after commit)."""
    wanted_kinds = parse_kinds(kinds)
    wanted = parse_ids(ids, settings.download_max_ids)
    found = {
        i.id
        for i in SearchRepository(session).many(
            accounts.visible_account_ids(session, caller), direction, wanted
        )
    }
    missing = [i for i in wanted if i not in found]
    if missing:
        shown = ", ".join(str(i) for i in missing[:20]) + (" ..." if len(missing) > 20 else "")
        raise service.InvoiceNotFound(f"no {service.WHAT[direction]}s with ids {shown} among yours")
    now = clock.now()
    job = DownloadJob(
        id=secrets.token_hex(16),
        account_id=caller.id,
        direction=direction,
        invoice_ids=wanted,
        kinds=wanted_kinds,
        status="PENDING",
        done=0,
        part_blob_ids=[],
        created_at=now,
        updated_at=now,
        expires_at=now + settings.download_retention,
    )
    session.add(job)
    session.flush()
    _enqueue_step(session, job, clock)
    return job


def status(session: UnitOfWork, caller: Account, job_id: str) -> DownloadStatus:
    """Where a download stands; the ZIP in base64 once COMPLETED. Only its requester sees it."""
    job = session.get(DownloadJob, job_id)
    if job is None or job.account_id != caller.id:
        raise NotFound(f"no download {job_id!r} of yours (unknown, or expired and deleted)")
    state, error = job.status, job.error
    if state in ("PENDING", "PROCESSING"):
        step = session.scalar(select(JobRow).where(JobRow.key == _step_key(job)))
        if step is not None and step.status == "failed":  # retried until the job table gave up
            state, error = "FAILED", f"the download could not be built: {step.last_error}"
    file = None
    if state == "COMPLETED" and job.blob_id is not None:
        file = SearchRepository(session).contents([job.blob_id])[job.blob_id]
    total = len(job.invoice_ids)
    progress = 100 if state == "COMPLETED" else min(99, job.done * 100 // total) if total else 0
    return DownloadStatus(jobId=job.id, status=state, progress=progress, file=b64(file), error=error)


STEP = jobs.Task("search.download", ("job_id", "step"))  # run by search.tasks.build_step


def build_step(session: UnitOfWork, job_id: str, step: int, clock: Clock) -> None:
    """One step of a download: pack the next chunk, or merge the parts when all are packed."""
    job = session.get(DownloadJob, job_id, with_for_update=True)
    if job is None or job.status in ("COMPLETED", "FAILED") or step != len(job.part_blob_ids):
        return  # finished, expired, or a stale wake-up
    settings = get_settings()
    chunk = _next_chunk(session, job, settings)
    try:
        if chunk:
            _pack(session, job, chunk, settings, clock)
        else:
            _finish(session, job, settings, clock)
    except (DownloadTooLarge, LookupError, rendering.RenderingFailed) as exc:  # deterministic: no retry
        log.warning("download %s failed: %s", job.id, exc)
        _drop_parts(session, job)
        job.status, job.error, job.updated_at = "FAILED", str(exc), clock.now()


def _next_chunk(session: UnitOfWork, job: DownloadJob, settings: Settings) -> list[int]:
    """The invoices of the next step: at most `download_chunk_size` (fewer with PDFs) and
    `download_chunk_bytes` of stored files (at least one), so that a step's memory is bounded."""
    size = settings.download_pdf_chunk_size if "PDF" in job.kinds else settings.download_chunk_size
    candidates = job.invoice_ids[job.done : job.done + size]
    if not candidates:
        return []
    query = select(Invoice.id, Blob.size).join(Blob, Blob.id == Invoice.blob_id)
    sizes = dict(session.execute(query.where(Invoice.id.in_(candidates))).all())
    copies = 2 if "PDD" in job.kinds else 1  # a package holds the file again (+ its small notifications)
    chunk: list[int] = []
    total = 0
    for invoice_id in candidates:
        total += sizes.get(invoice_id, 0) * copies
        if chunk and total > settings.download_chunk_bytes:
            break
        chunk.append(invoice_id)
    return chunk


def _pack(session: UnitOfWork, job: DownloadJob, chunk: list[int], settings: Settings, clock: Clock) -> None:
    repo = SearchRepository(session)
    invoices = repo.by_ids(chunk)
    if len(invoices) != len(chunk):
        raise LookupError("some invoices of the download no longer exist")
    notes = repo.notifications(chunk) if "NOTIFICATIONS" in job.kinds else []
    packages = preservation.latest_packages(session, chunk) if "PDD" in job.kinds else {}
    contents = repo.contents(
        [*(i.blob_id for i in invoices), *(n.blob_id for n in notes), *(b for _, b in packages.values())]
    )
    entries: list[tuple[str, bytes]] = []
    for invoice in invoices:
        stored = contents[invoice.blob_id]
        if "XML" in job.kinds:
            entries.append((archives.unsigned_name(invoice.filename), archives.unsigned_xml(stored)))
        if "P7M" in job.kinds and invoice.filename.lower().endswith(".p7m"):
            entries.append((invoice.filename, stored))
        entries.extend((n.filename, contents[n.blob_id]) for n in notes if n.invoice_id == invoice.id)
        if "PDF" in job.kinds:  # the same rendering as the detail's pdfFile and the panel's download
            entries.append((rendering.pdf_name(invoice.filename), rendering.pdf_of(invoice.filename, stored)))
        if invoice.id in packages:  # PDD: the newest package as /pdd gives it; none yet: nothing
            name, blob_id = packages[invoice.id]
            entries.append((name, contents[blob_id]))
    part = archives.zip_files(entries)
    used = _stored_size(session, job.part_blob_ids) + len(part)
    if used > settings.download_max_bytes:
        raise DownloadTooLarge(
            f"the ZIP would exceed {settings.download_max_bytes // (1024 * 1024)} MB; ask for fewer invoices"
        )
    blob = blobs.store(session, f"{job.id}.part{len(job.part_blob_ids)}.zip", part, None, clock.now())
    job.part_blob_ids = [*job.part_blob_ids, blob.id]
    job.done += len(chunk)
    job.status, job.updated_at = "PROCESSING", clock.now()
    _enqueue_step(session, job, clock)


def _finish(session: UnitOfWork, job: DownloadJob, settings: Settings, clock: Clock) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for part_id in job.part_blob_ids:  # one part in memory at a time
            content = session.scalar(select(Blob.content).where(Blob.id == part_id))  # not kept: no cache
            with zipfile.ZipFile(io.BytesIO(content or b"")) as source:
                for name in source.namelist():
                    archive.writestr(name, source.read(name))
        if "REPORT" in job.kinds:
            invoices = SearchRepository(session).by_ids(job.invoice_ids)
            archive.writestr(REPORT_NAME, report.build_report(invoices, service.usernames(session, invoices)))
    content = buffer.getvalue()
    blob = blobs.store(session, f"download-{job.id}.zip", content, None, clock.now())
    _drop_parts(session, job)
    job.blob_id, job.status, job.updated_at = blob.id, "COMPLETED", clock.now()


def _stored_size(session: UnitOfWork, ids: list[int]) -> int:
    if not ids:
        return 0
    return session.scalar(select(func.sum(Blob.size)).where(Blob.id.in_(ids))) or 0


def _drop_parts(session: UnitOfWork, job: DownloadJob) -> None:
    ids = job.part_blob_ids
    job.part_blob_ids = []
    if ids:
        session.flush()
        session.execute(delete(Blob).where(Blob.id.in_(ids)))


def _step_key(job: DownloadJob) -> str:
    return f"download:{job.id}:{len(job.part_blob_ids)}"


def _enqueue_step(session: UnitOfWork, job: DownloadJob, clock: Clock) -> None:
    jobs.enqueue(
        session,
        STEP,
        key=_step_key(job),
        clock=clock,
        job_id=job.id,
        step=len(job.part_blob_ids),
    )


def delete_expired_downloads(clock: Clock | None = None) -> int:
    """Downloads are kept `download_retention` (24 h by default), then deleted with their files."""
    now = (clock or current_clock()).now()
    with unit_of_work() as session:
        expired = list(session.scalars(select(DownloadJob).where(DownloadJob.expires_at <= now).limit(500)))
        blob_ids = [i for j in expired for i in [*j.part_blob_ids, j.blob_id] if i is not None]
        if expired:
            session.execute(delete(DownloadJob).where(DownloadJob.id.in_([j.id for j in expired])))
            if blob_ids:
                session.execute(delete(Blob).where(Blob.id.in_(blob_ids)))
    return len(expired)
