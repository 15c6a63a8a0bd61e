"""Panel invoices: list, detail, downloads, attachments, upload with dry run, customer outcome."""

from __future__ import annotations

import io
import zipfile

from pypdf import PdfReader

from tests.factories import make_account
from tests.invoices.support import invoice_xml
from tests.panel.support import csrf_of, panel_login
from tests.rendering.test_pdf import with_attachment
from tests.search.factories import premium, received, upload


def test_list_and_detail_of_sent_invoices(client):
    supplier = premium(client)
    sent = upload(client, supplier)
    panel_login(client, supplier.account.username)
    listing = client.get("/panel/invoices/out")
    assert listing.status_code == 200 and sent.filename in listing.text
    assert "Presa in carico" in listing.text
    detail = client.get(f"/panel/invoices/out/{sent.id}")
    assert detail.status_code == 200
    for text in (sent.filename, "DITTA BETA", "Storico degli stati", "Riepilogo IVA"):
        assert text in detail.text
    pdf = client.get(f"/panel/invoices/out/{sent.id}/download/pdf")
    assert pdf.headers["content-type"] == "application/pdf"
    assert sent.filename in PdfReader(io.BytesIO(pdf.content)).pages[0].extract_text()
    archive = zipfile.ZipFile(io.BytesIO(client.get(f"/panel/invoices/out/{sent.id}/download/zip").content))
    assert sent.filename in archive.namelist()
    assert client.get(f"/panel/invoices/out/{sent.id}/download/file").content.startswith(b"<?xml")
    assert client.get(f"/panel/invoices/out/{sent.id}/download/pdd").status_code == 404  # not sealed yet


def test_filters_and_bad_filter(client):
    supplier = premium(client)
    sent = upload(client, supplier)
    panel_login(client, supplier.account.username)
    assert sent.filename not in client.get("/panel/invoices/out", params={"vat": "IT99999999999"}).text
    assert sent.filename in client.get("/panel/invoices/out", params={"start": "2026-11-23"}).text
    bad = client.get("/panel/invoices/out", params={"start": "23/11/2026"})
    assert bad.status_code == 400 and "use YYYY-MM-DD" in bad.text


def test_other_tenants_invoices_are_not_found(client):
    supplier = premium(client)
    sent = upload(client, supplier)
    panel_login(client, make_account().username)
    assert client.get(f"/panel/invoices/out/{sent.id}").status_code == 404
    assert client.get(f"/panel/invoices/out/{sent.id}/download/pdf").status_code == 404


def test_attachment_is_downloadable(client):
    owner = premium(client)
    got = received(owner.account, data=None)
    xml = with_attachment(invoice_xml(), "ddt.txt", b"note 1")
    got = received(owner.account, data=_to(owner.account, xml))
    panel_login(client, owner.account.username)
    detail = client.get(f"/panel/invoices/in/{got.id}")
    assert "ddt.txt" in detail.text
    file = client.get(f"/panel/invoices/in/{got.id}/attachments/1/1")
    assert file.content == b"note 1" and "ddt.txt" in file.headers["content-disposition"]
    assert client.get(f"/panel/invoices/in/{got.id}/attachments/1/2").status_code == 404


def _to(account, xml: bytes) -> bytes:  # noqa: ANN001
    from lxml import etree

    from tests.invoices.support import set_text
    from tests.search.factories import CLIENT_PATH

    root = etree.fromstring(xml)
    set_text(CLIENT_PATH, account.vat_code)(root)
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8")


def test_upload_dry_run_shows_the_report_and_stores_nothing(client):
    supplier = premium(client)
    page = panel_login(client, supplier.account.username)
    token = csrf_of(page.text)
    files = {"file": ("fattura.xml", invoice_xml(), "text/xml")}
    dry = client.post("/panel/upload", data={"csrf_token": token, "action": "dry-run"}, files=files)
    assert dry.status_code == 200 and "verrebbe chiamato" in dry.text and "Nessuna segnalazione" in dry.text
    assert "Nessuna fattura" in client.get("/panel/invoices/out").text
    broken = invoice_xml().replace(b"<IdCodice>09876540015</IdCodice>", b"<IdCodice>09876540016</IdCodice>")
    report = client.post(
        "/panel/upload",
        data={"csrf_token": token, "action": "dry-run"},
        files={"file": ("bad.xml", broken, "text/xml")},
    )
    # passes the upload checks, but the report already shows the asynchronous §7.3 finding
    assert report.status_code == 200 and "00305" in report.text  # receiver VAT check digit
    sent = client.post(
        "/panel/upload",
        data={"csrf_token": token, "action": "send"},
        files={"file": ("f.xml", invoice_xml())},
    )
    assert sent.status_code == 200 and "registrato come" in sent.text
    assert "Presa in carico" in client.get("/panel/invoices/out").text
    forged = client.post("/panel/upload", data={"csrf_token": "x", "action": "send"}, files=files)
    assert forged.status_code == 400


def test_customer_outcome_on_a_received_invoice(client, queue):
    owner = premium(client)
    got = received(owner.account, sdi_id="8800001")
    page = panel_login(client, owner.account.username)
    detail = client.get(f"/panel/invoices/in/{got.id}")
    assert "Invia esito" in detail.text
    refused = client.post(
        f"/panel/invoices/in/{got.id}/esito", data={"csrf_token": csrf_of(page.text), "esito": "EC02"}
    )
    assert "error=" in str(refused.url) and 'role="alert"' in refused.text  # EC02 needs a reason
    done = client.post(
        f"/panel/invoices/in/{got.id}/esito", data={"csrf_token": csrf_of(page.text), "esito": "EC01"}
    )
    assert "Esito inviato" in done.text and "EC01" in done.text and "SENT" in done.text
