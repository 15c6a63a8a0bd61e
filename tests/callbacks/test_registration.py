"""POST/GET/DELETE /api/v2/callbacks, test events, secrets, and who sees what."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from tests.callbacks.support import deliveries, register, run, status_event, user
from tests.factories import bearer
from varco.callbacks import secret_store
from varco.callbacks.models import CallbackEndpoint
from varco.core.db import unit_of_work
from varco.settings import get_settings

ALL_KINDS = ["createInvoice", "updateInvoiceStatus", "updateUsage", "callbackDisabled"]


def assert_bad_request(response, fragment: str) -> None:
    assert response.status_code == 400, response.text
    body = response.json()
    assert body["errorCode"] == "0002", body
    assert fragment in body["errorDescription"], body
    assert f"[request {response.headers['x-request-id']}]" in body["errorDescription"]


def test_registration_shows_the_secret_once_and_stores_it_encrypted(client):
    _, token = user(client)
    created = register(client, token, "https://erp.example.com/hooks", description="ERP")
    assert created["secret"].startswith("vcs_") and len(created["secret"]) > 40
    assert created["secretHint"] == created["secret"][-4:]
    assert (created["url"], created["description"], created["status"]) == (
        "https://erp.example.com/hooks",
        "ERP",
        "ACTIVE",
    )
    assert created["events"] == ALL_KINDS  # none given: every kind
    assert created["createdAt"] == "2026-11-23T09:00:00.000+01:00"

    shown = client.get(f"/api/v2/callbacks/{created['id']}", headers=bearer(token)).json()
    listed = client.get("/api/v2/callbacks", headers=bearer(token)).json()
    assert "secret" not in shown and listed["count"] == 1 and "secret" not in listed["callbacks"][0]
    assert shown == {k: v for k, v in created.items() if k != "secret"}
    with unit_of_work() as session:
        row = session.scalar(select(CallbackEndpoint).where(CallbackEndpoint.id == int(created["id"])))
        assert created["secret"] not in row.secret_encrypted
        assert secret_store.decrypt(row.secret_encrypted, get_settings()) == created["secret"]


def test_rotating_the_secret_signs_later_deliveries_with_the_new_one(client, receiver, queue):
    account, token = user(client)
    created = register(client, token, receiver.url, receiver)
    rotated = client.post(f"/api/v2/callbacks/{created['id']}/secret", headers=bearer(token))
    assert rotated.status_code == 200
    new_secret = rotated.json()["secret"]
    assert new_secret != created["secret"] and rotated.json()["secretHint"] == new_secret[-4:]
    status_event(account, "IT05555550028_K0001.xml")
    run(queue)
    assert [r.signature_ok for r in receiver.received] == [False]  # the receiver still has the old one
    receiver.secret = new_secret
    status_event(account, "IT05555550028_K0002.xml")
    run(queue)
    assert receiver.received[-1].signature_ok


def test_chosen_event_kinds_without_duplicates(client):
    _, token = user(client)
    created = register(client, token, "http://localhost:8080/x", events=["updateUsage", "updateUsage"])
    assert created["events"] == ["updateUsage"]


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        ({}, "url: Field required"),
        ({"url": ""}, "url is required"),
        ({"url": "ftp://example.com/x"}, "absolute http or https URL"),
        ({"url": "example.com/hook"}, "absolute http or https URL"),
        ({"url": "https://user:pw@example.com/x"}, "must not carry credentials"),
        ({"url": "https://example.com:99999/x"}, "invalid port"),
        ({"url": "https://example.com/x#frag"}, "#fragment"),
        ({"url": "https://example.com/" + "a" * 2000}, "longer than 2000"),
        (
            {"url": "https://example.com/x", "events": ["invoiceCreated"]},
            "unknown event kind(s) 'invoiceCreated'",
        ),
        ({"url": "https://example.com/x", "events": "updateUsage"}, "events"),
        ({"url": "https://example.com/x", "description": "d" * 256}, "description is longer than 255"),
    ],
)
def test_bad_registrations_are_400_with_the_reason(client, body, fragment):
    _, token = user(client)
    assert_bad_request(client.post("/api/v2/callbacks", json=body, headers=bearer(token)), fragment)


def test_a_body_that_is_not_json_is_400(client):
    _, token = user(client)
    response = client.post(
        "/api/v2/callbacks", content=b"url=x", headers={**bearer(token), "Content-Type": "text/plain"}
    )
    assert response.status_code == 400 and response.json()["errorCode"] == "0002"


def test_endpoints_per_account_are_limited(client, configure):
    configure(callback_max_per_account=2)
    _, token = user(client)
    register(client, token, "https://example.com/1")
    register(client, token, "https://example.com/2")
    response = client.post("/api/v2/callbacks", json={"url": "https://example.com/3"}, headers=bearer(token))
    assert_bad_request(response, "at most 2 callback endpoints per account")


def test_delete_stops_deliveries_and_hides_the_endpoint(client, receiver, queue):
    account, token = user(client)
    created = register(client, token, receiver.url, receiver)
    receiver.fail(times=1)
    status_event(account, "IT05555550028_X0001.xml")
    run(queue)
    waiting = deliveries(client, token, created["id"])
    assert waiting[0]["status"] == "PENDING"
    assert client.delete(f"/api/v2/callbacks/{created['id']}", headers=bearer(token)).status_code == 204
    assert client.get(f"/api/v2/callbacks/{created['id']}", headers=bearer(token)).status_code == 404
    assert client.delete(f"/api/v2/callbacks/{created['id']}", headers=bearer(token)).status_code == 404
    assert client.get("/api/v2/callbacks", headers=bearer(token)).json() == {"count": 0, "callbacks": []}
    status_event(account, "IT05555550028_X0002.xml")
    run(queue)
    assert len(receiver.received) == 1
    with unit_of_work() as session:
        row = session.get(CallbackEndpoint, int(created["id"]))
        assert row.status == "DELETED"


def test_a_test_event_is_signed_sent_once_and_not_in_the_feed(client, receiver, queue, clock):
    account, token = user(client)
    created = register(client, token, receiver.url, receiver)
    queued = client.post(f"/api/v2/callbacks/{created['id']}/test", headers=bearer(token))
    assert queued.status_code == 202
    assert queued.json()["status"] == "PENDING"
    run(queue)
    [got] = receiver.accepted()
    assert got.signature_ok and got.event_id == queued.json()["eventId"]
    assert got.json["type"] == "test" and got.json["cursor"] is None
    assert got.json["data"]["callbackId"] == created["id"]
    assert got.json["account"]["username"] == account.username
    [row] = deliveries(client, token, created["id"])
    assert (row["type"], row["status"], row["attempts"], row["lastStatusCode"]) == (
        "test",
        "DELIVERED",
        1,
        200,
    )
    assert client.get("/api/v2/events", headers=bearer(token)).json()["events"] == []


def test_a_failing_test_event_is_not_retried_and_leaves_the_endpoint_active(client, receiver, queue, clock):
    from datetime import timedelta

    _, token = user(client)
    created = register(client, token, receiver.url, receiver)
    receiver.fail(times=5, status=500)
    client.post(f"/api/v2/callbacks/{created['id']}/test", headers=bearer(token))
    run(queue)
    clock.advance(timedelta(minutes=10))
    run(queue)
    [row] = deliveries(client, token, created["id"])
    assert (row["status"], row["attempts"], row["lastError"]) == ("FAILED", 1, "HTTP 500: receiver busy")
    shown = client.get(f"/api/v2/callbacks/{created['id']}", headers=bearer(token)).json()
    assert shown["status"] == "ACTIVE"


def test_another_accounts_endpoints_are_invisible(client):
    _, owner_token = user(client)
    _, other_token = user(client)
    created = register(client, owner_token, "https://example.com/mine")
    assert client.get("/api/v2/callbacks", headers=bearer(other_token)).json()["count"] == 0
    base = f"/api/v2/callbacks/{created['id']}"
    for method, path in [
        ("GET", base),
        ("DELETE", base),
        ("POST", f"{base}/test"),
        ("POST", f"{base}/enable"),
        ("POST", f"{base}/secret"),
        ("GET", f"{base}/deliveries"),
    ]:
        response = client.request(method, path, headers=bearer(other_token))
        assert response.status_code == 404, (method, path, response.text)
        assert response.json()["errorCode"] == "0002"
    assert client.get(base, headers=bearer(owner_token)).status_code == 200


@pytest.mark.parametrize("raw", ["abc", "1.5", "-1", "99999999999999999999"])
def test_ids_that_are_not_ids_are_404(client, raw):
    _, token = user(client)
    assert client.get(f"/api/v2/callbacks/{raw}", headers=bearer(token)).status_code == 404


def test_deliveries_limit_is_checked(client):
    _, token = user(client)
    created = register(client, token, "https://example.com/x")
    response = client.get(f"/api/v2/callbacks/{created['id']}/deliveries?limit=0", headers=bearer(token))
    assert_bad_request(response, "limit must be an integer between 1 and 100")


def test_everything_needs_the_bearer_token(client):
    for method, path in [
        ("GET", "/api/v2/callbacks"),
        ("POST", "/api/v2/callbacks"),
        ("GET", "/api/v2/events"),
        ("POST", "/api/v2/callbacks/1/test"),
    ]:
        response = client.request(method, path)
        assert response.status_code == 401, (method, path)


def test_a_changed_server_secret_key_asks_for_a_secret_rotation(client, receiver, queue, clock, configure):
    from datetime import timedelta

    account, token = user(client)
    created = register(client, token, receiver.url, receiver)
    configure(secret_key="another-server-secret-key-of-enough-length")
    status_event(account, "IT05555550028_Z0001.xml")
    run(queue)
    [row] = deliveries(client, token, created["id"])
    assert (
        row["status"] == "PENDING"
        and "cannot be decrypted" in row["lastError"]
        and "rotate" in row["lastError"]
    )
    assert receiver.received == []
    rotated = client.post(f"/api/v2/callbacks/{created['id']}/secret", headers=bearer(token)).json()
    receiver.secret = rotated["secret"]
    clock.advance(timedelta(minutes=1))
    run(queue)
    assert [r.signature_ok for r in receiver.accepted()] == [True]
