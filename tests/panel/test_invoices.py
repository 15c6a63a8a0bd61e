"""Panel invoices: list, detail, downloads, attachments, upload with dry run, customer outcome."""

from __future__ import annotations

import io
import re
import zipfile
from datetime import UTC, datetime

import pytest
from pyhanko.sign import signers
from pypdf import PdfReader

from tests.factories import make_account
from tests.invoices.support import invoice_xml
from tests.panel.support import csrf_of, panel_login
from tests.rendering.test_pdf import with_attachment
from tests.search.factories import premium, received, upload
from varco.core.clock import current_clock
from varco.core.coroutines import run_sync
from varco.core.db import unit_of_work
from varco.invoices.demo_signer import make_demo_pkcs12
from varco.preservation import service as preservation


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


def test_amounts_have_two_decimals_and_states_a_badge(client, queue):
    supplier = premium(client)
    declared = b"<ImportoTotaleDocumento>1266.10</ImportoTotaleDocumento><Causale>"
    sent = upload(client, supplier, invoice_xml().replace(b"<Causale>", declared, 1))
    wrong_vat = invoice_xml().replace(
        b"<IdCodice>09876540015</IdCodice>", b"<IdCodice>09876540016</IdCodice>"
    )
    refused = upload(client, supplier, wrong_vat)
    panel_login(client, supplier.account.username)  # a new password: the API token above is revoked
    row = _row(client.get("/panel/invoices/out").text, sent.filename)  # the API says 1266.1
    assert '<td class="amount">1.266,10</td>' in row
    assert '<span class="badge pending">Presa in carico</span>' in row
    english = _row(client.get("/panel/invoices/out", headers={"Accept-Language": "en"}).text, sent.filename)
    assert '<td class="amount">1,266.10</td>' in english
    queue.drain()  # the simulated SDI delivers the first; the asynchronous checks refuse the second
    listing = client.get("/panel/invoices/out").text
    assert '<span class="badge done">Consegnata</span>' in _row(listing, sent.filename)
    assert '<span class="badge failed">Errore elaborazione</span>' in _row(listing, refused.filename)
    page = client.get(f"/panel/invoices/out/{sent.id}").text
    assert '<span class="badge done">Consegnata</span>' in page


def test_amounts_are_grouped_by_thousands_in_the_readers_language():
    from varco.panel.formats import amount

    assert (amount(1234567.5, "it"), amount(1234567.5, "en")) == ("1.234.567,50", "1,234,567.50")
    assert (amount(6.1, "it"), amount("-0.005", "en"), amount(None, "it")) == ("6,10", "-0.01", "")


def _row(page: str, filename: str) -> str:
    return re.search(rf"<tr><td><a [^>]*>{re.escape(filename)}</a>.*?</tr>", page, re.S).group(0)


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


def test_an_attachment_name_with_line_breaks_keeps_the_header_valid(client):
    owner = premium(client)
    name = 'ddt\r\nSet-Cookie: x=1; "è".txt'
    got = received(owner.account, data=_to(owner.account, with_attachment(invoice_xml(), name, b"note 2")))
    panel_login(client, owner.account.username)
    file = client.get(f"/panel/invoices/in/{got.id}/attachments/1/1")
    assert file.status_code == 200 and file.content == b"note 2"
    header = file.headers["content-disposition"]
    assert "\r" not in header and "\n" not in header and "set-cookie" not in file.headers
    assert header == (
        'attachment; filename="ddt__Set-Cookie_ x_1_ ___.txt"; '
        "filename*=UTF-8''ddt%0D%0ASet-Cookie%3A%20x%3D1%3B%20%22%C3%A8%22.txt"
    )


def _to(account, xml: bytes) -> bytes:
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


def test_sdi_errors_are_shown_with_the_validators_hints(client, queue):
    supplier = premium(client)
    token = csrf_of(panel_login(client, supplier.account.username).text)
    broken = invoice_xml().replace(b"<IdCodice>09876540015</IdCodice>", b"<IdCodice>09876540016</IdCodice>")
    dry = client.post(
        "/panel/upload", data={"csrf_token": token, "action": "dry-run"}, files={"file": ("b.xml", broken)}
    )
    [hint] = [h for code, h in _findings(dry.text) if code == "00305"]
    assert hint  # the validator explains how to fix it
    sent = client.post(
        "/panel/upload", data={"csrf_token": token, "action": "send"}, files={"file": ("b.xml", broken)}
    )
    invoice_id = re.search(r'href="/panel/invoices/out/(\d+)"', sent.text).group(1)
    queue.drain()  # the asynchronous checks (§7.3a) find the check digit: FATRSM212
    detail = client.get(f"/panel/invoices/out/{invoice_id}").text
    table = re.search(r'<table id="sdi-errors">.*?</table>', detail, re.S).group(0)
    assert '<th scope="col">Suggerimento</th>' in table
    [(code, description, shown)] = re.findall(r"<tr><td>(\w+)</td><td>(.*?)</td><td>(.*?)</td></tr>", table)
    assert code == "FATRSM212" and description.startswith("00305 - ") and shown == hint
    english = client.get(f"/panel/invoices/out/{invoice_id}", headers={"Accept-Language": "en"}).text
    assert '<th scope="col">Hint</th>' in english and hint in english


def _findings(text: str) -> list[tuple[str, str]]:
    table = re.search(r'<table id="findings">.*?</table>', text, re.S).group(0)
    return re.findall(r"<tr><td>(\w+)</td><td>.*?</td><td>.*?</td><td>(.*?)</td></tr>", table, re.S)


def test_the_list_is_paginated_and_keeps_the_filters(client):
    owner = premium(client)
    names = {received(owner.account, number=f"PG-{i}").filename for i in range(21)}
    received(owner.account, sender_vat="09876540015", number="OTHER")
    panel_login(client, owner.account.username)
    assert "OTHER" not in client.get("/panel/invoices/in", params={"vat": "12345670017"}).text
    assert "PG-" not in client.get("/panel/invoices/in", params={"vat": "FR12345670017"}).text
    first = client.get("/panel/invoices/in", params={"vat": "it 12345670017"}).text
    assert "21 · Pagina 1 di 2" in first and "Precedente" not in first
    shown = set(re.findall(r'<a href="/panel/invoices/in/\d+">([^<]+)</a>', first))
    assert len(shown) == 20 and shown < names
    following = re.search(r'<a href="(\?page_number=2[^"]*)">Successiva</a>', first).group(1)
    assert "vat=it+12345670017" in following
    second = client.get("/panel/invoices/in" + following.replace("&amp;", "&")).text
    rest = set(re.findall(r'<a href="/panel/invoices/in/\d+">([^<]+)</a>', second))
    assert "Pagina 2 di 2" in second and "Successiva" not in second and "Precedente" in second
    assert shown | rest == names


@pytest.fixture(scope="module")
def sign():
    """CAdES-BES (attached, DER) of some bytes, as a signed invoice arrives."""
    pkcs12 = make_demo_pkcs12("Panel Signer", datetime.now(UTC), password="p12-pw")  # noqa: TID251 - cert validity
    signer = signers.SimpleSigner.load_pkcs12_data(pkcs12, other_certs=[], passphrase=b"p12-pw")

    def signed(xml: bytes) -> bytes:
        return run_sync(signer.async_sign_general_data(xml, "sha256", detached=False, use_cades=True)).dump()

    return signed


def test_a_signed_invoice_downloads_as_p7m_xml_pdf_zip_and_pdd(client, sign):
    owner = premium(client)
    xml = _to(owner.account, invoice_xml(number="P7M-1"))
    signed = sign(xml)
    got = received(owner.account, data=xml, signed=signed)
    with unit_of_work() as session:  # the preservation package (PDD) exists once sealed
        assert preservation.seal_invoice(session, got.id, current_clock()) is not None
    panel_login(client, owner.account.username)
    base = f"/panel/invoices/in/{got.id}"
    detail = client.get(base).text
    for kind in ("file", "xml", "pdf", "zip", "pdd"):
        assert f'href="{base}/download/{kind}"' in detail, kind
    stem = got.filename.removesuffix(".xml.p7m")

    def download(kind: str) -> tuple[bytes, str]:
        answer = client.get(f"{base}/download/{kind}")
        assert answer.status_code == 200, kind
        return answer.content, answer.headers["content-disposition"]

    p7m, named = download("file")
    assert p7m == signed and f"filename={got.filename}" in named
    unsigned, named = download("xml")
    assert unsigned == xml and f"filename={stem}.xml" in named
    pdf, named = download("pdf")
    assert "P7M-1" in PdfReader(io.BytesIO(pdf)).pages[0].extract_text() and f"filename={stem}.pdf" in named
    archive, _ = download("zip")
    assert got.filename in zipfile.ZipFile(io.BytesIO(archive)).namelist()
    package, _ = download("pdd")
    assert got.filename in zipfile.ZipFile(io.BytesIO(package)).namelist()
