"""Bulk downloads: POST .../download gives a jobId; a job builds the ZIP; GET /api/v2/download/{jobId}."""

from __future__ import annotations

import io
import re
from datetime import timedelta

import pytest
from openpyxl import load_workbook
from pypdf import PdfReader
from sqlalchemy import update

from tests.invoices.support import invoice_xml
from tests.search.factories import (
    assert_bad_request,
    move,
    notify,
    premium,
    received,
    seal,
    unb64,
    upload,
    zip_names,
)
from varco.core.db import unit_of_work
from varco.core.models import JobRow
from varco.invoices.states import InvoiceEvent
from varco.search.downloads import delete_expired_downloads, parse_kinds
from varco.search.models import DownloadJob
from varco.settings import get_settings


def start(client, who, ids, kinds, direction="out"):
    return client.post(
        f"/api/v2/invoices-{direction}/download",
        json={"ids": ids, "downloadTypes": kinds},
        headers=who.headers,
    )


def status(client, who, job_id):
    response = client.get(f"/api/v2/download/{job_id}", headers=who.headers)
    assert response.status_code == 200, response.text
    return response.json()


@pytest.fixture
def small_steps(monkeypatch):
    monkeypatch.setattr(get_settings(), "download_chunk_size", 1)


def test_life_cycle_pending_processing_completed(client, supplier, queue, small_steps):
    sent = [upload(client, supplier) for _ in range(2)]
    queue.flush()  # leave the uploads' processing jobs aside: only the download runs here
    response = start(client, supplier, [str(sent[0].id), sent[1].id], ["XML"])
    assert response.status_code == 200
    job_id = response.json()["jobId"]
    assert status(client, supplier, job_id) == {
        "jobId": job_id,
        "status": "PENDING",
        "progress": 0,
        "file": None,
        "error": None,
    }
    queue.drain(limit=1)
    step = status(client, supplier, job_id)
    assert (step["status"], step["progress"], step["file"]) == ("PROCESSING", 50, None)
    queue.drain(limit=1)
    assert status(client, supplier, job_id)["progress"] == 99  # every invoice packed, not yet merged
    queue.drain()
    done = status(client, supplier, job_id)
    assert (done["status"], done["progress"], done["error"]) == ("COMPLETED", 100, None)
    assert set(zip_names(unb64(done["file"]))) == {i.filename for i in sent}


def test_the_zip_holds_the_kinds_asked_for(client, supplier, queue, sign):
    xml = invoice_xml()
    signed = received(supplier.account, data=xml, signed=sign(xml))
    plain = received(supplier.account, data=invoice_xml("FPR12_batch"))
    mt = notify(signed, "MT")
    ids = [signed.id, plain.id]
    cases = {
        ("XML",): {signed.filename[:-4], plain.filename},
        ("P7M",): {signed.filename},
        ("NOTIFICATIONS",): {mt.filename},
        ("PDF",): {signed.filename[:-8] + ".pdf", plain.filename[:-4] + ".pdf"},
        ("xml", "p7m", "notification", "xlsx"): {
            signed.filename[:-4],
            signed.filename,
            plain.filename,
            mt.filename,
            "report.xlsx",
        },
    }
    jobs = {kinds: start(client, supplier, ids, list(kinds), "in").json()["jobId"] for kinds in cases}
    queue.drain()
    for kinds, names in cases.items():
        done = status(client, supplier, jobs[kinds])
        assert done["status"] == "COMPLETED", done
        files = zip_names(unb64(done["file"]))
        assert set(files) == names, kinds
    files = zip_names(unb64(status(client, supplier, jobs[("xml", "p7m", "notification", "xlsx")])["file"]))
    assert files[signed.filename[:-4]] == xml  # the XML of a signed file is the unsigned invoice
    sheet = load_workbook(io.BytesIO(files["report.xlsx"])).active
    rows = list(sheet.iter_rows(values_only=True))
    assert rows[0][:3] == ("id", "filename", "idSdi")
    assert [r[1] for r in rows[1:]] == [
        signed.filename,
        plain.filename,
        plain.filename,
    ]  # one row per invoice
    header = rows[0]
    first = dict(zip(header, rows[1], strict=True))
    assert (first["status"], first["docType"], first["totalDocument"]) == ("Ricevuta", "in", 266.88)


ALIASES = {
    "DownloadXml": "XML",
    "DownloadPdf": "PDF",
    "DownloadP7m": "P7M",
    "DownloadNotifications": "NOTIFICATIONS",
    "ReportExcel": "REPORT",
    "DownloadArchiving": "PDD",
}


@pytest.mark.parametrize(("alias", "kind"), ALIASES.items())
def test_the_second_clients_type_names_are_aliases(alias, kind):
    snake = "_".join(word.upper() for word in re.findall(r"[A-Z][a-z0-9]*", alias))  # DOWNLOAD_XML
    for spelling in (alias, alias.lower(), alias.upper(), snake, f" {alias} ", kind, kind.lower()):
        assert parse_kinds([spelling]) == [kind], spelling
    assert parse_kinds([alias, kind, snake]) == [kind]  # one kind, however many names


@pytest.mark.parametrize(("alias", "kind"), ALIASES.items())
def test_an_alias_builds_the_same_download_as_its_kind(client, supplier, queue, sign, alias, kind):
    xml = invoice_xml()
    signed = received(supplier.account, data=xml, signed=sign(xml))
    notify(signed, "MT")
    seal(signed.id)
    queue.flush()
    by_alias = start(client, supplier, [signed.id], [alias], "in").json()["jobId"]
    by_kind = start(client, supplier, [signed.id], [kind], "in").json()["jobId"]
    with unit_of_work() as session:
        assert session.get(DownloadJob, by_alias).kinds == [kind]  # recorded by its canonical name
    queue.drain()
    done = [status(client, supplier, job_id) for job_id in (by_alias, by_kind)]
    assert [(d["status"], d["progress"], d["error"]) for d in done] == [("COMPLETED", 100, None)] * 2
    names = [set(zip_names(unb64(d["file"]))) for d in done]
    assert names[0] == names[1] and len(names[0]) == 1, names


def test_download_archiving_packs_each_available_preservation_package(client, supplier, queue):
    sealed = upload(client, supplier)
    move(sealed.id, InvoiceEvent.SENT, InvoiceEvent.RC)
    notify(sealed, "RC")
    seal(sealed.id)
    pending = upload(client, supplier)  # not in a final state: no package yet
    queue.flush()
    kinds = ["DownloadArchiving", "DownloadXml", "ReportExcel"]
    job_id = start(client, supplier, [sealed.id, pending.id], kinds).json()["jobId"]
    queue.drain()
    done = status(client, supplier, job_id)
    assert (done["status"], done["error"]) == ("COMPLETED", None)
    files = zip_names(unb64(done["file"]))
    package = f"{sealed.filename.removesuffix('.xml')}.conservazione.zip"
    assert set(files) == {package, sealed.filename, pending.filename, "report.xlsx"}
    pdd = client.get("/api/v2/invoices-out/pdd", params={"id": sealed.id}, headers=supplier.headers)
    assert pdd.status_code == 200 and files[package] == pdd.content  # the package as /pdd gives it
    only = start(client, supplier, [pending.id], ["DownloadArchiving"]).json()["jobId"]
    queue.drain()
    empty = status(client, supplier, only)
    assert empty["status"] == "COMPLETED" and zip_names(unb64(empty["file"])) == {}


def pdf_text(content: bytes) -> str:
    return "\n".join(page.extract_text() for page in PdfReader(io.BytesIO(content)).pages)


def test_pdf_type_is_a_zip_of_renderings(client, supplier, queue, sign, small_steps):
    xml = invoice_xml(number="PDF-SIGNED-1")
    signed = received(supplier.account, data=xml, signed=sign(xml))
    plain = received(supplier.account, number="PDF-PLAIN-2")
    batch = received(supplier.account, data=invoice_xml("FPR12_batch"))
    job_id = start(client, supplier, [signed.id, plain.id, batch.id], ["pdf"], "in").json()["jobId"]
    queue.drain()
    done = status(client, supplier, job_id)
    assert done["status"] == "COMPLETED", done
    files = zip_names(unb64(done["file"]))
    stems = [signed.filename.removesuffix(".xml.p7m")]
    stems += [i.filename.removesuffix(".xml") for i in (plain, batch)]
    assert sorted(files) == sorted(f"{stem}.pdf" for stem in stems)
    assert "PDF-SIGNED-1" in pdf_text(files[f"{stems[0]}.pdf"])  # the signed file's invoice, unwrapped
    assert "PDF-PLAIN-2" in pdf_text(files[f"{stems[1]}.pdf"])
    numbers = [b.number for b in batch.bodies]
    assert len(numbers) > 1 and all(n in pdf_text(files[f"{stems[2]}.pdf"]) for n in numbers)  # every body


def test_bad_requests_say_what_to_change(client, supplier, monkeypatch):
    sent = upload(client, supplier)
    assert_bad_request(start(client, supplier, [], ["XML"]), "at least one invoice id")
    assert_bad_request(start(client, supplier, ["abc"], ["XML"]), "each of ids must be an integer", "'abc'")
    assert_bad_request(start(client, supplier, [sent.id], ["DOCX"]), "'DOCX' is unknown", "XML, P7M")
    assert_bad_request(start(client, supplier, [sent.id], []), "at least one of")
    monkeypatch.setattr(get_settings(), "download_max_ids", 1)
    assert_bad_request(start(client, supplier, [sent.id, sent.id + 1], ["XML"]), "at most 1 per download")
    response = client.post("/api/v2/invoices-out/download", content=b"{not json", headers=supplier.headers)
    assert response.status_code == 400
    missing = start(client, supplier, [sent.id], ["XML"], "in")  # a sent invoice is not a received one
    assert missing.status_code == 404 and str(sent.id) in missing.json()["errorDescription"]


def test_only_the_requester_sees_the_download(client, supplier, queue):
    sent = upload(client, supplier)
    job_id = start(client, supplier, [sent.id], ["XML"]).json()["jobId"]
    other = premium(client, vat="12345670017")
    assert client.get(f"/api/v2/download/{job_id}", headers=other.headers).status_code == 404
    assert client.get("/api/v2/download/unknown", headers=supplier.headers).status_code == 404
    assert start(client, other, [sent.id], ["XML"]).status_code == 404  # not its invoice


def test_a_too_large_download_fails_with_a_reason(client, supplier, queue, monkeypatch):
    sent = upload(client, supplier)
    queue.flush()
    monkeypatch.setattr(get_settings(), "download_max_bytes", 100)
    job_id = start(client, supplier, [sent.id], ["XML"]).json()["jobId"]
    queue.drain()
    failed = status(client, supplier, job_id)
    assert (failed["status"], failed["file"]) == ("FAILED", None)
    assert "ask for fewer invoices" in failed["error"]


def test_a_step_the_job_table_gave_up_on_is_failed(client, supplier, queue):
    sent = upload(client, supplier)
    queue.flush()
    job_id = start(client, supplier, [sent.id], ["XML"]).json()["jobId"]
    queue.flush()
    with unit_of_work() as session:  # what run_job records after the last failed attempt
        session.execute(
            update(JobRow)
            .where(JobRow.key == f"download:{job_id}:0")
            .values(status="failed", last_error="OperationalError: database is gone")
        )
    failed = status(client, supplier, job_id)
    assert failed["status"] == "FAILED" and "database is gone" in failed["error"]


def test_downloads_expire_after_the_retention(client, clock, supplier, queue):
    sent = upload(client, supplier)
    queue.flush()
    job_id = start(client, supplier, [sent.id], ["XML"]).json()["jobId"]
    queue.drain()
    assert status(client, supplier, job_id)["status"] == "COMPLETED"
    clock.advance(timedelta(hours=23))
    delete_expired_downloads()
    assert status(client, supplier, job_id)["status"] == "COMPLETED"
    clock.advance(timedelta(hours=2))
    assert delete_expired_downloads() >= 1
    assert client.get(f"/api/v2/download/{job_id}", headers=supplier.headers).status_code == 404
