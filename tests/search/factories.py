"""Invoices for search tests: sent ones through the real upload endpoint, received ones and
notifications through the invoice lifecycle functions the SDI side uses."""

from __future__ import annotations

import base64
import hashlib
import io
import itertools
import uuid
import zipfile
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from fastapi.testclient import TestClient
from lxml import etree
from sqlalchemy import select

from tests.factories import bearer, make_account, sign_in
from tests.invoices.support import SUPPLIER_VAT, b64, invoice_xml, set_text
from varco import fatturapa
from varco.accounts.models import Account
from varco.core import blobs
from varco.core.clock import current_clock
from varco.core.db import unit_of_work
from varco.invoices import service as invoices
from varco.invoices.models import Invoice, InvoiceBody, Notification
from varco.invoices.states import InvoiceEvent, InvoiceState
from varco.preservation import service as preservation

_serial = itertools.count(1)
CLIENT_PATH = "FatturaElettronicaHeader/CessionarioCommittente/DatiAnagrafici/IdFiscaleIVA/IdCodice"
CLIENT_CODE = "FatturaElettronicaHeader/CessionarioCommittente/DatiAnagrafici/CodiceFiscale"
SUPPLIER_PATH = "FatturaElettronicaHeader/CedentePrestatore/DatiAnagrafici/IdFiscaleIVA/IdCodice"


@dataclass
class User:
    """A signed-in account; signs in again when the manual clock has moved past the token's life."""

    client: TestClient
    account: Account
    token: dict = field(default_factory=dict)
    signed_at: datetime | None = None

    @property
    def headers(self) -> dict[str, str]:
        now = current_clock().now()
        if self.signed_at is None or now - self.signed_at >= timedelta(minutes=25):
            self.token, self.signed_at = sign_in(self.client, self.account.username), now
        return bearer(self.token)


def user(client: TestClient, account: Account) -> User:
    return User(client, account)


def premium(client: TestClient, vat: str = SUPPLIER_VAT, **overrides: object) -> User:
    return user(client, make_account(vat_code=vat, **overrides))


def upload(client: TestClient, who: User, data: bytes | None = None, **edits: str) -> Invoice:
    """A sent invoice through POST /services/invoice/upload; `edits` maps XML paths to values."""
    xml = data or invoice_xml()
    if edits:
        root = etree.fromstring(xml)
        for path, value in edits.items():
            set_text(path, value)(root)
        xml = etree.tostring(root, xml_declaration=True, encoding="UTF-8")
    response = client.post("/services/invoice/upload", json={"dataFile": b64(xml)}, headers=who.headers)
    body = response.json()
    assert body["errorCode"] == "0000", body
    return invoice(filename=body["uploadFileName"])


def invoice(*, filename: str | None = None, invoice_id: int | None = None) -> Invoice:
    with unit_of_work() as session:
        query = select(Invoice)
        query = (
            query.where(Invoice.filename == filename) if filename else query.where(Invoice.id == invoice_id)
        )
        found = session.scalar(query)
        assert found is not None
        found.bodies  # noqa: B018 - loaded before the session closes
        return found


def move(invoice_id: int, *events: InvoiceEvent, sdi_id: str | None = None) -> Invoice:
    """Drive a sent invoice through the lifecycle (the SDI simulator does this in production)."""
    with unit_of_work() as session:
        for event in events:
            invoices.apply_event(session, invoice_id, event, key=f"test:{event.value}", clock=current_clock())
        if sdi_id is not None:
            session.get(Invoice, invoice_id).sdi_id = sdi_id
    return invoice(invoice_id=invoice_id)


def received(
    owner: Account,
    *,
    data: bytes | None = None,
    signed: bytes | None = None,
    sender_vat: str = "12345670017",
    number: str | None = None,
    fmt: str = "FPR12",
    created_at: datetime | None = None,
    sdi_id: str | None = None,
) -> Invoice:
    """A received invoice as the SDI side stores it: state Ricevuta, columns from the file."""
    xml = data or invoice_xml(fmt, number=number)
    if data is None:
        root = etree.fromstring(xml)
        set_text(SUPPLIER_PATH, sender_vat)(root)
        set_text(CLIENT_PATH, owner.vat_code or "")(root)
        xml = etree.tostring(root, xml_declaration=True, encoding="UTF-8")
    stored = signed or xml
    summary = fatturapa.check_sync(
        xml, fatturapa.CheckOptions(skip_extra_schema=True, max_bytes=len(xml) + 1)
    ).summary
    assert summary is not None
    now = created_at or current_clock().now()
    filename = f"IT{sender_vat}_{uuid.uuid4().hex[:5].upper()}.xml" + (".p7m" if signed else "")
    with unit_of_work() as session:
        blob = blobs.store(session, filename, stored, owner.id, now)
        row = Invoice(
            direction="in",
            filename=filename,
            sdi_id=sdi_id or str(900_000_000 + next(_serial)),
            account_id=owner.id,
            format=fmt,
            state=InvoiceState.RICEVUTA.value,
            blob_id=blob.id,
            content_sha256=hashlib.sha256(stored).hexdigest(),
            is_signed=signed is not None,
            sdi_errors=[],
            created_at=now,
            updated_at=now,
            sdi_received_at=now,
            **_party("sender", summary.supplier),
            **_party("receiver", summary.customer),
            bodies=[
                InvoiceBody(
                    position=i,
                    document_type=b.document_type,
                    number=b.number,
                    invoice_date=b.date,
                    currency=b.currency,
                    total_document=b.total_document,
                    total_vat=b.total_vat,
                    net_payable=b.net_payable,
                )
                for i, b in enumerate(summary.bodies, start=1)
            ],
        )
        invoices.add_invoice(session, row, now)
        invoice_id = row.id
    return invoice(invoice_id=invoice_id)


def _party(prefix: str, party: fatturapa.Party | None) -> dict[str, str | None]:
    return {
        f"{prefix}_description": party.description if party else None,
        f"{prefix}_country": party.country if party else None,
        f"{prefix}_vat": party.vat_code if party else None,
        f"{prefix}_fiscal_code": party.fiscal_code if party else None,
    }


def notify(
    target: Invoice, type_: str, *, result: str | None = None, number: str | None = None
) -> Notification:
    """Store an SDI message about `target` (file name as the SDI builds it: <stem>_<TYPE>_<nnn>.xml)."""
    with unit_of_work() as session:
        row = session.get(Invoice, target.id)
        progressive = invoices.count_notifications(session, row.id, type_) + 1
        stem = row.filename.split(".")[0]
        name = f"{stem}_{type_}_{progressive:03d}.xml"
        content = f'<?xml version="1.0"?><Notifica tipo="{type_}" file="{row.filename}"/>'.encode()
        note = invoices.add_notification(
            session, row, type_, name, content, current_clock(), result=result, number=number
        )
        assert note is not None
        return note


def seal(invoice_id: int) -> None:
    """Seal the invoice's preservation package now (the job after a final state does it in production)."""
    with unit_of_work() as session:
        assert preservation.seal_invoice(session, invoice_id, current_clock()) is not None


def zip_names(content: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(content)) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def unb64(value: str) -> bytes:
    return base64.b64decode(value)


WINDOW = {"creationStartDate": "2026-11-20", "creationEndDate": "2026-11-29"}  # the clock starts 2026-11-23


def search_v2(client: TestClient, who: User, direction: str = "out", **query: object):
    return client.get(f"/api/v2/invoices-{direction}", params={**WINDOW, **query}, headers=who.headers)


def find_v1(client: TestClient, who: User, direction: str = "out", **query: object):
    return client.get(f"/services/invoice/{direction}/findByUsername", params=query, headers=who.headers)


def filenames(response) -> list[str]:
    assert response.status_code == 200, response.text
    return [record["filename"] for record in response.json()["content"]]


def assert_bad_request(response, *fragments: str) -> None:
    assert response.status_code == 400, response.text
    body = response.json()
    assert body["errorCode"] == "0002", body
    for fragment in fragments:
        assert fragment in body["errorDescription"], body


def add_supplier_fiscal_code(code: str):
    """Insert 1.2.1.2 CodiceFiscale (after IdFiscaleIVA) into an ordinary invoice."""

    def edit(root: etree._Element) -> None:
        anagrafici = root.find("FatturaElettronicaHeader/CedentePrestatore/DatiAnagrafici")
        element = etree.Element("CodiceFiscale")
        element.text = code
        anagrafici.insert(1, element)

    return edit
