"""Preservation packages: when an invoice is sealed, what the package holds, the per-account chain."""

from __future__ import annotations

import hashlib
import json
import logging
import threading

import pytest
from sqlalchemy import select, text, update

from tests.factories import make_account
from tests.invoices.support import invoice_xml
from tests.search.factories import move, notify, premium, received, upload, zip_names
from varco.core.blobs import Blob
from varco.core.clock import current_clock
from varco.core.db import unit_of_work
from varco.invoices.states import InvoiceEvent as E
from varco.preservation import service
from varco.preservation.models import PreservationPackage
from varco.preservation.tasks import seal_unsealed


def seal(invoice_id: int) -> PreservationPackage | None:
    with unit_of_work() as session:
        return service.seal_invoice(session, invoice_id, current_clock())


def package_files(sealed: PreservationPackage) -> dict[str, bytes]:
    with unit_of_work() as session:
        return zip_names(session.get(Blob, sealed.blob_id).content)


def pdd_available(invoice_id: int) -> bool:
    from varco.invoices.models import Invoice

    with unit_of_work() as session:
        return session.get(Invoice, invoice_id).pdd_available


@pytest.fixture
def supplier(client):
    return premium(client)


def test_only_final_invoices_are_sealed(client, supplier):
    waiting = upload(client, supplier)
    assert seal(waiting.id) is None
    sent = move(upload(client, supplier).id, E.SENT)
    assert seal(sent.id) is None
    error = move(upload(client, supplier).id, E.CHECKS_FAILED)  # never transmitted
    discarded = move(upload(client, supplier).id, E.SENT, E.NS)  # the SDI discarded it: not issued
    assert seal(error.id) is None and seal(discarded.id) is None
    pa = move(upload(client, supplier, invoice_xml("FPA12")).id, E.SENT, E.RC)
    assert seal(pa.id) is None  # a PA invoice waits for its outcome (NE) or DT
    assert not any(pdd_available(i.id) for i in (waiting, sent, error, discarded, pa))
    move(pa.id, E.NE_EC01)
    assert seal(pa.id) is not None and pdd_available(pa.id)
    for events in ((E.SENT, E.RC), (E.SENT, E.MC), (E.SENT, E.AT)):
        final = move(upload(client, supplier).id, *events)
        assert seal(final.id) is not None
    assert seal(received(supplier.account).id) is not None


def test_the_package_holds_the_files_and_an_index_with_their_digests(client, supplier):
    sent = move(upload(client, supplier).id, E.SENT, E.RC, sdi_id="55501")
    rc = notify(sent, "RC")
    sealed = seal(sent.id)
    assert sealed.name == sent.filename.replace(".xml", ".conservazione.zip")
    files = package_files(sealed)
    assert list(files) == [sent.filename, rc.filename, "index.json"]
    index = json.loads(files["index.json"])
    assert index["format"] == "varco-pdd/1" and index["sequence"] == 1 and index["version"] == 1
    assert index["previousPackageSha256"] is None  # the first package of this account
    assert index["invoice"]["idSdi"] == "55501" and index["invoice"]["status"] == "Consegnata"
    assert index["account"]["username"] == supplier.account.username
    assert [(f["name"], f["role"], f["type"]) for f in index["files"]] == [
        (sent.filename, "invoice", None),
        (rc.filename, "notification", "RC"),
    ]
    for entry in index["files"]:
        assert entry["sha256"] == hashlib.sha256(files[entry["name"]]).hexdigest()
        assert entry["size"] == len(files[entry["name"]])


def test_packages_of_an_account_form_a_hash_chain(client, supplier):
    other = premium(client)
    first = seal(move(upload(client, supplier).id, E.SENT, E.RC).id)
    elsewhere = seal(move(upload(client, other).id, E.SENT, E.RC).id)
    second = seal(received(supplier.account).id)
    assert (first.sequence, second.sequence, elsewhere.sequence) == (1, 2, 1)
    assert second.previous_sha256 == first.sha256 and elsewhere.previous_sha256 is None
    assert json.loads(package_files(second)["index.json"])["previousPackageSha256"] == first.sha256
    with unit_of_work() as session:
        assert first.sha256 == hashlib.sha256(session.get(Blob, first.blob_id).content).hexdigest()
        assert service.verify_chain(session, supplier.account.id) == []


def test_sealing_again_changes_nothing_until_a_notification_arrives(client, supplier):
    got = received(supplier.account)
    first = seal(got.id)
    assert seal(got.id).id == first.id
    ec = notify(got, "EC", result="EC01")
    second = seal(got.id)
    assert (second.version, second.sequence, second.previous_sha256) == (2, 2, first.sha256)
    assert ec.filename in package_files(second)
    response = client.get("/api/v2/invoices-in/pdd", params={"id": got.id}, headers=supplier.headers)
    assert ec.filename in zip_names(response.content)  # the newest version is served


def test_verify_chain_finds_tampering(client, supplier):
    first = seal(received(supplier.account).id)
    second = seal(received(supplier.account).id)
    with unit_of_work() as session:
        assert service.verify_chain(session, supplier.account.id) == []
        session.execute(update(Blob).where(Blob.id == first.blob_id).values(content=b"not the package"))
    with unit_of_work() as session:
        problems = service.verify_chain(session, supplier.account.id)
    assert any("package 1" in p and "SHA-256 of the ZIP differs" in p for p in problems)
    # the second package still names the original first package, so the chain exposes the change
    assert second.previous_sha256 == first.sha256


def test_reconciler_seals_final_invoices_without_a_package(client, supplier):
    delivered = move(upload(client, supplier).id, E.SENT, E.RC)
    got = received(supplier.account)
    waiting = upload(client, supplier)
    while not (pdd_available(delivered.id) and pdd_available(got.id)):
        assert seal_unsealed() != []  # earlier tests may have left other final invoices to seal
    assert not pdd_available(waiting.id)


def test_request_seal_runs_as_a_job_after_commit(client, supplier, queue):
    got = received(supplier.account)
    queue.flush()
    with unit_of_work() as session:
        service.request_seal(session, got.id, current_clock())
    queue.drain()
    assert pdd_available(got.id)


def test_racing_sealers_do_not_fork_the_chain(client, db, supplier, caplog):
    """PostgreSQL: a second sealer blocked on the unique (account, sequence) retries on the new head."""
    if not db.url.startswith("postgresql"):
        pytest.skip("SQLite serialises writers at BEGIN IMMEDIATE: no race to lose")
    caplog.set_level(logging.INFO, logger="varco.preservation")
    first, second = (move(upload(client, supplier).id, E.SENT, E.RC) for _ in range(2))
    outcome: dict[str, object] = {}
    with db.unit_of_work() as holder:
        sealed_first = service.seal_invoice(holder, first.id, current_clock())  # head 1, not committed

        def racer() -> None:
            with db.unit_of_work() as session:
                outcome["package"] = service.seal_invoice(session, second.id, current_clock())

        thread = threading.Thread(target=racer)
        thread.start()
        with db.engine.connect() as probe:  # wait until the racer is blocked on our uncommitted row
            while not probe.execute(text("select count(*) from pg_locks where not granted")).scalar():
                assert thread.is_alive()
                probe.rollback()
    thread.join()
    raced = outcome["package"]
    assert (raced.sequence, raced.previous_sha256) == (2, sealed_first.sha256)
    assert "moved while sealing; retrying" in caplog.text  # it lost the race once, then re-read the head


def test_packages_use_the_account_space(client, supplier):
    account = make_account()
    got = received(account)
    sealed = seal(got.id)
    with unit_of_work() as session:
        owner = session.scalar(select(Blob.account_id).where(Blob.id == sealed.blob_id))
    assert owner == account.id


def _lose_stored_file(db, invoice) -> None:  # noqa: ANN001
    """Delete an invoice's stored file behind the database's back (its foreign keys off for that)."""
    if db.url.startswith("sqlite"):
        raw = db.engine.raw_connection()
        try:
            raw.execute("PRAGMA foreign_keys=OFF")  # autocommit connection: no transaction open
            raw.execute("DELETE FROM blobs WHERE id = ?", (invoice.blob_id,))
            raw.execute("PRAGMA foreign_keys=ON")
        finally:
            raw.close()
        return
    with db.engine.begin() as conn:
        conn.execute(text("SET LOCAL session_replication_role = replica"))  # no foreign key triggers
        conn.execute(text("DELETE FROM blobs WHERE id = :id"), {"id": invoice.blob_id})


def test_one_broken_invoice_does_not_stop_those_sealed_with_it(client, db, supplier, caplog):
    """The periodic work seals several invoices per transaction; one that fails rolls the others
    back with it, and they are then sealed each on its own."""
    from varco.invoices.models import Invoice

    broken = received(supplier.account)  # first: SQLite gives a deleted last row's id to the next one
    good = [received(supplier.account) for _ in range(3)]
    _lose_stored_file(db, broken)
    with unit_of_work() as session:
        assert session.get(Blob, broken.blob_id) is None
    try:
        with caplog.at_level(logging.ERROR, logger="varco.preservation"):
            while not all(pdd_available(invoice.id) for invoice in good):
                assert seal_unsealed() != []
        assert not pdd_available(broken.id)
        assert f"sealing invoice {broken.id} failed" in caplog.text
        with unit_of_work() as session:
            assert service.verify_chain(session, supplier.account.id) == []
    finally:  # out of the later tests' way: no longer a final invoice
        with unit_of_work() as session:
            session.execute(update(Invoice).where(Invoice.id == broken.id).values(state=1))
