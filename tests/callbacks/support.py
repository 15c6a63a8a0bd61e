"""Helpers: register endpoints over HTTP, record events through the events service, run the queue."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from fastapi.testclient import TestClient

from tests.callbacks.receiver import Receiver
from tests.factories import bearer, make_account, sign_in
from tests.sdi.factories import valid_vat
from varco.accounts.models import Account
from varco.callbacks import tasks
from varco.core import jobs
from varco.core.clock import ManualClock, current_clock
from varco.core.db import unit_of_work
from varco.core.jobs import JobQueue
from varco.events import service as events


def user(client: TestClient, **overrides: object) -> tuple[Account, dict]:
    """A signed-in account with a VAT number of its own unless given one: an invoice another test
    left unroutable for one of the factories' shared VAT numbers would be redelivered to it, and
    its `createInvoice` reach this test's receiver."""
    account = make_account(**{"vat_code": valid_vat(), **overrides})
    return account, sign_in(client, account.username)


class SignedIn:
    """A signed-in user whose token is renewed when the test clock has moved past its 30 minutes."""

    def __init__(self, client: TestClient, account: Account) -> None:
        self.client, self.account = client, account
        self._token, self._at = sign_in(client, account.username), current_clock().now()

    @property
    def token(self) -> dict:
        if current_clock().now() - self._at > timedelta(minutes=20):
            self._token, self._at = sign_in(self.client, self.account.username), current_clock().now()
        return self._token


def register(
    client: TestClient, token: dict, url: str, receiver: Receiver | None = None, **fields: Any
) -> dict[str, Any]:
    response = client.post("/api/v2/callbacks", json={"url": url, **fields}, headers=bearer(token))
    assert response.status_code == 201, response.text
    created = response.json()
    if receiver is not None:
        receiver.secret = created["secret"]
    return created


def status_event(account: Account, filename: str, status: int = 3, **extra: Any) -> str:
    """An updateInvoiceStatus event as invoices.apply_event records it; returns its eventId."""
    payload = {"invoiceId": 1, "filename": filename, "idSdi": None, "status": status, **extra}
    with unit_of_work() as session:
        event = events.record(
            session, account.id, "updateInvoiceStatus", payload, current_clock().now(), subject=filename
        )
        return event.payload["eventId"]


def usage_event(account: Account, used: int) -> str:
    with unit_of_work() as session:
        payload = {"username": account.username, "year": 2026, "usedTransmissions": used}
        event = events.record(session, account.id, "updateUsage", payload, current_clock().now())
        return event.payload["eventId"]


def run(queue: JobQueue) -> None:
    """What workers and the minute reconciler do: due delayed jobs are sent, then run."""
    jobs.reconcile()
    queue.drain()


def advance(clock: ManualClock, queue: JobQueue, delta: timedelta) -> None:
    clock.advance(delta)
    run(queue)


def deliveries(client: TestClient, token: dict, callback_id: str) -> list[dict[str, Any]]:
    response = client.get(f"/api/v2/callbacks/{callback_id}/deliveries?limit=100", headers=bearer(token))
    assert response.status_code == 200, response.text
    return response.json()["deliveries"]


def feed(client: TestClient, token: dict, after: str | None = None, limit: int | None = None) -> dict:
    params = {k: v for k, v in {"after": after, "limit": limit}.items() if v is not None}
    response = client.get("/api/v2/events", params=params, headers=bearer(token))
    assert response.status_code == 200, response.text
    return response.json()


def resume() -> list[int]:
    return tasks.resume_deliveries()
