"""Renderings of a stored invoice file: PDF, HTML fragment, and its attachments (`Allegati`) as files."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup

from varco.core.blobs import Blob
from varco.core.errors import NotFound, VarcoError
from varco.core.uow import UnitOfWork
from varco.fatturapa.errors import FatturaPAError
from varco.invoices.filenames import stem
from varco.invoices.models import Invoice
from varco.rendering.document import AttachmentView, InvoiceDocument, read_document
from varco.rendering.pdf import render_pdf
from varco.search.archives import unsigned_xml

_TEMPLATES = Environment(
    loader=FileSystemLoader(Path(__file__).parent / "templates"),
    autoescape=select_autoescape(["html"]),
    trim_blocks=True,
    lstrip_blocks=True,
)


class RenderingFailed(VarcoError):
    """The stored file cannot be read as an invoice, so it cannot be rendered."""

    status, code = 500, "0001"


class AttachmentNotFound(NotFound):
    """No such attachment in the invoice."""


def document_of(filename: str, content: bytes) -> InvoiceDocument:
    """The neutral document of a stored file (signed files are unwrapped first)."""
    try:
        return read_document(unsigned_xml(content))
    except (FatturaPAError, ValueError) as exc:
        raise RenderingFailed(f"{filename} cannot be rendered: {exc}") from exc


def pdf_name(filename: str) -> str:
    """IT..._0000A.xml(.p7m) -> IT..._0000A.pdf: the name of a rendering wherever it is sent."""
    return f"{stem(filename)}.pdf"


def pdf_of(filename: str, content: bytes) -> bytes:
    """PDF rendering of a stored file's content."""
    return render_pdf(document_of(filename, content), filename)


def _content(session: UnitOfWork, invoice: Invoice) -> bytes:
    blob = session.get(Blob, invoice.blob_id)
    assert blob is not None  # the foreign key guarantees it
    return blob.content


def invoice_pdf(session: UnitOfWork, invoice: Invoice) -> bytes:
    """PDF of an invoice the caller was already allowed to see (tenancy is the finder's job)."""
    return pdf_of(invoice.filename, _content(session, invoice))


def invoice_html(
    session: UnitOfWork,
    invoice: Invoice,
    translate: Callable[[str], str],
    attachment_url: Callable[[int, int], str],
) -> Markup:
    """HTML fragment of an invoice for the panel: every body, parties, lines, VAT, payments, attachments."""
    document = document_of(invoice.filename, _content(session, invoice))
    html = _TEMPLATES.get_template("invoice.html").render(
        doc=document, t=translate, attachment_url=attachment_url
    )
    return Markup(html)  # rendered by an autoescaping environment


def attachment(session: UnitOfWork, invoice: Invoice, body: int, index: int) -> AttachmentView:
    """Attachment `index` (1-based) of body `body` (1-based), decoded from base64."""
    document = document_of(invoice.filename, _content(session, invoice))
    for view in document.bodies:
        if view.position == body:
            for found in view.attachments:
                if found.index == index:
                    return found
    raise AttachmentNotFound(f"{invoice.filename} has no attachment {index} in body {body}")
