"""Delivery to a live receiver: signature, envelope, retries with back-off, at-least-once, ordering."""

from __future__ import annotations

import json
from datetime import timedelta

from tests.callbacks.support import (
    SignedIn,
    advance,
    deliveries,
    feed,
    register,
    resume,
    run,
    status_event,
    usage_event,
    user,
)
from tests.factories import bearer, make_basic
from tests.invoices.support import SUPPLIER_VAT, b64, invoice_xml
from varco.audit.service import SYSTEM
from varco.callbacks import fanout
from varco.core.clock import current_clock
from varco.core.db import unit_of_work


def test_an_upload_reaches_the_receiver_signed_with_everything_needed(client, receiver, queue):
    account, token = user(client, vat_code=SUPPLIER_VAT)
    register(client, token, receiver.url, receiver)
    response = client.post(
        "/services/invoice/upload", json={"dataFile": b64(invoice_xml())}, headers=bearer(token)
    )
    filename = response.json()["uploadFileName"]
    queue.drain()  # deliveries, processing (state 3), the simulated SDI's RC (state 7), deliveries

    got = receiver.accepted()
    assert [r.event_type for r in got] == ["updateUsage", "updateInvoiceStatus", "updateInvoiceStatus"]
    assert all(r.signature_ok and r.path == "/hooks/varco" for r in got)
    usage, sent, delivered = (r.json for r in got)
    assert usage["data"] == {"username": account.username, "year": 2026, "usedTransmissions": 1}
    assert sent["data"]["filename"] == delivered["data"]["filename"] == filename
    assert (sent["data"]["status"], sent["data"]["statusDescription"]) == (3, "Inviata")
    assert delivered["data"]["idSdi"] == sent["data"]["idSdi"] is not None
    assert (delivered["data"]["status"], delivered["data"]["statusDescription"]) == (7, "Consegnata")
    assert delivered["data"]["notificationType"] == "RC"
    assert delivered["data"]["notificationFilename"] == filename.replace(".xml", "_RC_001.xml")
    assert delivered["account"]["username"] == account.username
    assert delivered["account"]["vatCode"] == SUPPLIER_VAT
    assert usage["occurredAt"] == "2026-11-23T09:00:00.000+01:00"  # Italian offset, milliseconds
    for r in got:
        assert r.event_id == r.json["eventId"] and r.event_type == r.json["type"]
        assert r.timestamp == int(current_clock().now().timestamp())
    # the feed holds the same events, item for item the bodies the receiver got
    assert feed(client, token)["events"] == [r.json for r in got]


def test_a_failed_delivery_is_retried_with_exponential_back_off(client, receiver, queue, clock):
    account, token = user(client)
    callback = register(client, token, receiver.url, receiver)
    receiver.fail(times=3)
    event_id = status_event(account, "IT05555550028_R0001.xml")
    run(queue)
    [pending] = deliveries(client, token, callback["id"])
    assert (pending["status"], pending["attempts"], pending["lastStatusCode"]) == ("PENDING", 1, 503)
    assert pending["lastError"] == "HTTP 503: receiver busy"
    assert pending["nextAttemptAt"] == "2026-11-23T09:01:00.000+01:00"

    waits = []
    for expected in (timedelta(minutes=1), timedelta(minutes=2), timedelta(minutes=4)):
        advance(clock, queue, expected - timedelta(seconds=1))
        waits.append(len(receiver.received))  # not yet: the back-off is clock time
        advance(clock, queue, timedelta(seconds=1))
    assert waits == [1, 2, 3]
    assert [r.answered for r in receiver.received] == [503, 503, 503, 200]
    assert {r.event_id for r in receiver.received} == {event_id}
    assert len({r.body for r in receiver.received}) == 1  # the same bytes every time
    assert len({r.signature for r in receiver.received}) == 4  # signed afresh at each send time
    [done] = deliveries(client, token, callback["id"])
    assert (done["status"], done["attempts"], done["lastError"]) == ("DELIVERED", 4, None)


def test_an_answer_lost_on_the_way_means_a_second_delivery_with_the_same_event_id(
    client, receiver, queue, clock
):
    account, token = user(client)
    register(client, token, receiver.url, receiver)
    receiver.fail(times=1, status=500)  # processed, but the 2xx never reached varco
    event_id = status_event(account, "IT05555550028_R0002.xml")
    run(queue)
    receiver.seen_ids.add(event_id)  # the receiver had stored it before failing
    advance(clock, queue, timedelta(minutes=1))
    assert [r.event_id for r in receiver.received] == [event_id, event_id]
    assert receiver.received[0].body == receiver.received[1].body
    assert receiver.seen_ids == {event_id}  # de-duplicated by Varco-Event-Id


def test_duplicate_wake_ups_and_reconciler_runs_send_once(client, receiver, queue, clock):
    account, token = user(client)
    callback = register(client, token, receiver.url, receiver)
    status_event(account, "IT05555550028_R0003.xml")
    [row] = deliveries(client, token, callback["id"])
    with unit_of_work() as session:
        for _ in range(3):
            fanout.wake(session, int(row["id"]), clock)
    run(queue)
    clock.advance(timedelta(minutes=5))
    resume()
    run(queue)
    assert len(receiver.received) == 1


def test_a_lost_wake_up_is_recovered_by_the_reconciler(client, receiver, queue, clock):
    account, token = user(client)
    register(client, token, receiver.url, receiver)
    status_event(account, "IT05555550028_R0004.xml")
    queue.flush()  # the broker lost the message
    assert resume() == []  # not stale yet
    clock.advance(timedelta(minutes=3))
    assert len(resume()) == 1
    queue.drain()
    assert len(receiver.accepted()) == 1


def test_events_of_one_invoice_arrive_in_order_others_do_not_wait(client, receiver, queue, clock):
    account, token = user(client)
    register(client, token, receiver.url, receiver)
    first = status_event(account, "IT05555550028_A0001.xml", status=3)
    second = status_event(account, "IT05555550028_A0001.xml", status=7)
    other = status_event(account, "IT05555550028_B0001.xml", status=3)
    receiver.fail(first, times=2)
    run(queue)
    assert receiver.accepted_ids() == [other]  # the second of A waits behind the failing first
    assert second not in [r.event_id for r in receiver.received]
    advance(clock, queue, timedelta(minutes=1))
    assert receiver.accepted_ids() == [other]
    advance(clock, queue, timedelta(minutes=2))
    assert receiver.accepted_ids() == [other, first, second]
    assert [r.event_id for r in receiver.received] == [first, other, first, first, second]


def test_usage_events_keep_their_order_too(client, receiver, queue, clock):
    account, token = user(client)
    register(client, token, receiver.url, receiver)
    ids = [usage_event(account, n) for n in (1, 2, 3)]
    receiver.fail(ids[0], times=1)
    run(queue)
    assert receiver.accepted_ids() == []
    advance(clock, queue, timedelta(minutes=1))
    assert receiver.accepted_ids() == ids
    assert [r.json["data"]["usedTransmissions"] for r in receiver.accepted()] == [1, 2, 3]


def test_one_accounts_stuck_counter_does_not_hold_another_accounts(client, receiver, queue, clock):
    premium, token = user(client)
    register(client, token, receiver.url, receiver)
    assignor = make_basic(delegate_to=premium)  # a multiseller endpoint gets both accounts' counters
    stuck = usage_event(premium, 1)
    receiver.fail(stuck, times=1)
    others = [usage_event(assignor, n) for n in (1, 2)]
    later = usage_event(premium, 2)
    run(queue)
    assert receiver.accepted_ids() == others  # the premium account's lane waits behind its first
    advance(clock, queue, timedelta(minutes=1))
    assert receiver.accepted_ids() == [*others, stuck, later]


def test_only_subscribed_event_kinds_are_sent(client, receiver, queue):
    account, token = user(client)
    register(client, token, receiver.url, receiver, events=["updateUsage"])
    status_event(account, "IT05555550028_S0001.xml")
    wanted = usage_event(account, 1)
    run(queue)
    assert receiver.accepted_ids() == [wanted]


def test_redirects_are_not_followed(client, receiver, queue):
    account, token = user(client)
    callback = register(client, token, receiver.url, receiver)
    receiver.answer = lambda _event_id: 302
    status_event(account, "IT05555550028_S0002.xml")
    run(queue)
    [row] = deliveries(client, token, callback["id"])
    assert (row["status"], row["lastStatusCode"]) == ("PENDING", 302)
    assert len(receiver.received) == 1


def test_a_receiver_that_does_not_answer_times_out(client, queue, configure, clock):
    import socket

    configure(callback_timeout_seconds="0.2")
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)  # accepts connections in the kernel, never reads or answers
    try:
        account, token = user(client)
        callback = register(client, token, f"http://127.0.0.1:{silent.getsockname()[1]}/")
        status_event(account, "IT05555550028_S0003.xml")
        run(queue)
        [row] = deliveries(client, token, callback["id"])
        assert row["status"] == "PENDING" and row["lastStatusCode"] is None
        assert row["lastError"] == "timeout: no answer within 0.2 s"
    finally:
        silent.close()


class _RawReceiver:
    """A receiver speaking raw HTTP as an attacker would: `respond(conn)` writes what it wants."""

    def __init__(self, respond) -> None:  # noqa: ANN001
        import socket
        import threading

        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.respond = respond
        threading.Thread(target=self._serve, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}/"

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            try:
                conn.recv(65536)
                self.respond(conn)
            except OSError:
                pass
            finally:
                conn.close()

    def close(self) -> None:
        self.sock.close()


def test_a_receiver_trickling_its_answer_is_cut_at_the_deadline(client, queue, configure, clock):
    import time

    def trickle(conn) -> None:  # noqa: ANN001 - a header byte every 0.1 s: each read is quick
        conn.sendall(b"HTTP/1.1 200 OK\r\n")
        for _ in range(100):
            conn.sendall(b"X")
            time.sleep(0.1)

    configure(callback_timeout_seconds="0.5")
    slow = _RawReceiver(trickle)
    try:
        account, token = user(client)
        callback = register(client, token, slow.url)
        status_event(account, "IT05555550028_S0004.xml")
        started = time.monotonic()
        run(queue)
        assert time.monotonic() - started < 5  # the worker thread is not held past the deadline
        [row] = deliveries(client, token, callback["id"])
        assert row["status"] == "PENDING" and row["lastError"].startswith("timeout")
    finally:
        slow.close()


def test_a_compressed_or_binary_error_answer_is_stored_as_sent_and_clean(client, queue):
    import gzip

    bomb = gzip.compress(b"\0" * 20_000_000)  # 20 MB of NUL in ~20 KB

    def answer(conn) -> None:  # noqa: ANN001
        head = f"HTTP/1.1 500 Oops\r\nContent-Encoding: gzip\r\nContent-Length: {len(bomb)}\r\n\r\n"
        conn.sendall(head.encode() + bomb)

    bad = _RawReceiver(answer)
    try:
        account, token = user(client)
        callback = register(client, token, bad.url)
        status_event(account, "IT05555550028_S0005.xml")
        run(queue)
        [row] = deliveries(client, token, callback["id"])
        assert row["status"] == "PENDING" and row["lastStatusCode"] == 500
        assert row["lastError"].startswith("HTTP 500") and len(row["lastError"]) <= 300
        assert "\x00" not in row["lastError"]
    finally:
        bad.close()


def test_the_body_is_compact_json(client, receiver, queue):
    account, token = user(client)
    register(client, token, receiver.url, receiver)
    status_event(account, "IT05555550028_S0004.xml")
    run(queue)
    [got] = receiver.accepted()
    assert got.body == json.dumps(got.json, ensure_ascii=False, separators=(",", ":")).encode()


def test_a_received_invoice_reaches_the_receiver_as_create_invoice(client, receiver, queue, clock):
    import uuid

    from tests.sdi.factories import invoice_file, valid_vat
    from varco.sdi.simulator.inject import inject

    vat = valid_vat()
    account, token = user(client, vat_code=vat)
    register(client, token, receiver.url, receiver, events=["createInvoice"])
    content = invoice_file(client_vat=vat, transmitter=valid_vat(), progressivo=uuid.uuid4().hex[:5].upper())
    with unit_of_work() as session:
        result = inject(session, content, clock)
    queue.drain()
    [got] = receiver.accepted()
    body = got.json
    assert (body["type"], body["account"]["vatCode"]) == ("createInvoice", vat)
    assert body["data"]["filename"] == result.filename and body["data"]["idSdi"] == result.sdi_id
    assert (body["data"]["status"], body["data"]["statusDescription"], body["data"]["docType"]) == (
        11,
        "Ricevuta",
        "in",
    )
    assert body["data"]["sender"]["description"] == "SOCIETA' ALPHA SRL"


def test_concurrent_workers_keep_each_invoice_in_order_and_send_each_event_once(client, receiver, queue):
    import threading

    account, token = user(client)
    register(client, token, receiver.url, receiver)
    names = [f"IT05555550028_W{n:04d}.xml" for n in range(4)]
    ids = {name: [] for name in names}
    for status in range(3, 8):
        for name in names:
            ids[name].append(status_event(account, name, status=status))
    workers = [threading.Thread(target=queue.drain) for _ in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    run(queue)
    got = receiver.accepted_ids()
    assert sorted(got) == sorted(i for lane in ids.values() for i in lane)  # each once
    for lane in ids.values():
        assert [i for i in got if i in lane] == lane  # in order within the invoice


def test_endpoints_changed_in_a_transaction_decide_its_later_events(client):
    """Receivers are read once per transaction and account, but an endpoint registered or
    deleted in the same transaction counts for the events recorded after it."""
    from varco.callbacks import service as callbacks
    from varco.callbacks.models import CallbackDelivery
    from varco.events import service as events
    from varco.settings import get_settings

    account, _ = user(client)
    clock = current_clock()

    recorded = []

    def record(session, name: str) -> int:
        payload = {"invoiceId": 1, "filename": name, "idSdi": None, "status": 3}
        event = events.record(session, account.id, "updateInvoiceStatus", payload, clock.now(), subject=name)
        recorded.append(event)
        uid = event.payload["eventId"]
        return len(session.query(CallbackDelivery).filter_by(event_uid=uid).all())

    with unit_of_work() as session:
        assert record(session, "IT05555550028_C0001.xml") == 0  # no endpoint yet
        new = callbacks.NewCallback(url="https://example.com/hook")
        endpoint, _ = callbacks.register(session, account, new, get_settings(), clock)
        assert record(session, "IT05555550028_C0002.xml") == 1
        callbacks.delete(session, account, endpoint.id, clock, SYSTEM)
        assert record(session, "IT05555550028_C0003.xml") == 0
    # The first waited for the commit, the second was written at once: ids still in their order.
    ids = [event.id for event in recorded]
    assert None not in ids and ids == sorted(ids)
    with unit_of_work() as reader:
        feed = events.page(reader, [account.id], 0, 10)
        assert [e.subject for e in feed][-3:] == [f"IT05555550028_C000{n}.xml" for n in (1, 2, 3)]


def test_an_endpoint_whose_url_cannot_be_sent_fails_its_deliveries_and_blocks_nothing(
    client, receiver, queue, clock, caplog
):
    """An endpoint stored before the URL rules (its URL holds CR/LF, refused today): each attempt
    fails with the reason in lastError, under the usual back-off and give-up; the account's other
    endpoint and the endpoint's other lanes go on."""
    from sqlalchemy import select, update

    from varco.callbacks.models import CallbackEndpoint
    from varco.core.models import JobRow

    unsendable = "refused: url must not contain control characters or whitespace: U+000D"
    account, token = user(client)
    good = register(client, token, receiver.url, receiver)
    old = register(client, token, receiver.url + "?old=1")
    with unit_of_work() as session:  # what an older version let through
        session.execute(
            update(CallbackEndpoint)
            .where(CallbackEndpoint.id == int(old["id"]))
            .values(url=receiver.url + "\r\nX-Injected: 1")
        )
    first = status_event(account, "IT05555550028_U0001.xml", status=3)
    run(queue)
    [row] = deliveries(client, token, old["id"])
    assert (row["eventId"], row["status"], row["attempts"]) == (first, "PENDING", 1)
    assert row["lastStatusCode"] is None and row["lastError"].startswith(unsendable)
    assert row["nextAttemptAt"] == "2026-11-23T09:01:00.000+01:00"

    # the next event of the same invoice reaches the other endpoint; another lane is attempted too
    second = status_event(account, "IT05555550028_U0001.xml", status=7)
    other = status_event(account, "IT05555550028_U0002.xml", status=3)
    run(queue)
    assert receiver.accepted_ids() == [first, second, other]
    rows = {r["eventId"]: r for r in deliveries(client, token, old["id"])}
    assert (rows[second]["attempts"], rows[other]["attempts"]) == (0, 1)  # second waits behind first
    assert rows[other]["lastError"] == row["lastError"]

    advance(clock, queue, timedelta(minutes=1))
    rows = {r["eventId"]: r for r in deliveries(client, token, old["id"])}
    assert (rows[first]["status"], rows[first]["attempts"]) == ("PENDING", 2)

    # a day later the attempt fails for good: the endpoint is disabled, its waiting deliveries dropped
    me = SignedIn(client, account)
    advance(clock, queue, timedelta(days=1))
    token = me.token
    rows = {r["eventId"]: r for r in deliveries(client, token, old["id"])}
    assert {r["status"] for r in rows.values()} == {"FAILED", "CANCELLED"}
    assert rows[first]["lastError"].startswith(unsendable)
    endpoint = client.get(f"/api/v2/callbacks/{old['id']}", headers=bearer(token)).json()
    assert endpoint["status"] == "DISABLED" and "U+000D" in endpoint["disabledReason"]
    assert receiver.accepted()[-1].event_type == "callbackDisabled"  # told on the other endpoint
    assert [d["status"] for d in deliveries(client, token, good["id"])] == ["DELIVERED"] * 4

    # no job failed on the way (the attempt used to escape as httpx.InvalidURL after the commit)
    with unit_of_work() as session:
        errors = session.scalars(select(JobRow.last_error).where(JobRow.last_error.is_not(None))).all()
    assert not [e for e in errors if "committed" in e or "InvalidURL" in e]
    assert not [r for r in caplog.records if r.levelname == "ERROR"]


def test_a_receiver_on_a_private_ca_is_trusted_once_its_ca_is_configured(
    client, queue, clock, configure, tmp_path
):
    from tests.callbacks.receiver import Receiver
    from varco.sdi.sdicoop.pki import make_test_pki

    pki = make_test_pki(tmp_path / "pki", ["hooks"])
    pair = pki.intermediaries_server["hooks"]  # a server certificate for 127.0.0.1, issued by a private CA
    receiver = Receiver(clock, tls=(pair.cert, pair.key))
    try:
        account, token = user(client)
        callback = register(client, token, receiver.url, receiver)
        status_event(account, "IT05555550028_T0001.xml")
        run(queue)
        [refused] = deliveries(client, token, callback["id"])
        assert refused["status"] == "PENDING" and "CERTIFICATE_VERIFY_FAILED" in refused["lastError"]
        assert receiver.received == []
        configure(callback_ca_bundle=pki.ca.cert)
        advance(clock, queue, timedelta(minutes=1))
        [delivered] = deliveries(client, token, callback["id"])
        assert delivered["status"] == "DELIVERED" and receiver.accepted()[0].signature_ok
    finally:
        receiver.close()
