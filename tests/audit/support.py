"""The Done-when scenario of the audit trail, over HTTP from two client addresses, and reading it."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from fastapi.testclient import TestClient

from tests.factories import bearer, make_account, sign_in
from tests.panel.support import NEW_PASSWORD, PASSWORD, csrf_of, panel_login
from varco.audit import service as audit
from varco.core.clock import ManualClock
from varco.core.db import unit_of_work

USER_IP = "203.0.113.7"  # documentation addresses (RFC 5737)
ADMIN_IP = "198.51.100.9"
WRONG_PASSWORD = "not-the-s3cret-pw"


@dataclass
class Scenario:
    username: str
    admin: str
    start: datetime  # after the set-up (account, its first sign-in, the callback endpoint)
    request_ids: list[str] = field(default_factory=list)  # of the four calls, in order
    secrets: list[str] = field(default_factory=list)  # every password, token and secret used


def clients(app) -> tuple[TestClient, TestClient]:
    """A client program and an operator's browser, each from its own address (no lifespan: the
    test's `client` fixture runs it)."""
    user = TestClient(app, client=(USER_IP, 40000), raise_server_exceptions=False)
    operator = TestClient(app, client=(ADMIN_IP, 40001), raise_server_exceptions=False)
    return user, operator


def run_scenario(user: TestClient, operator: TestClient, clock: ManualClock) -> Scenario:
    """Sign in wrongly and rightly, have an operator change the tier, rotate a callback secret."""
    account, admin = make_account(), make_account(is_admin=True)
    first = sign_in(user, account.username)
    created = user.post(
        "/api/v2/callbacks", json={"url": "https://erp.example.com/hooks"}, headers=bearer(first)
    )
    assert created.status_code == 201, created.text
    page = panel_login(operator, admin.username)  # the operator's sign-in and registration
    clock.advance(timedelta(minutes=1))
    scenario = Scenario(account.username, admin.username, clock.now())
    scenario.secrets += [PASSWORD, NEW_PASSWORD, WRONG_PASSWORD, created.json()["secret"]]
    scenario.secrets += [first["access_token"], first["refresh_token"], operator.cookies["varco_panel"]]

    wrong = user.post(
        "/auth/signin",
        data={"grant_type": "password", "username": account.username, "password": WRONG_PASSWORD},
    )
    assert wrong.status_code == 400 and wrong.json()["error"] == "invalid_grant"
    clock.advance(timedelta(seconds=1))
    right = user.post(
        "/auth/signin", data={"grant_type": "password", "username": account.username, "password": PASSWORD}
    )
    assert right.status_code == 200
    token = right.json()
    clock.advance(timedelta(seconds=1))
    tier = operator.post(
        "/panel/admin/tier",
        data={"csrf_token": csrf_of(page.text), "username": account.username, "tier": "3"},
        follow_redirects=False,
    )
    assert tier.status_code == 303 and "error" not in tier.headers["location"]
    clock.advance(timedelta(seconds=1))
    rotated = user.post(f"/api/v2/callbacks/{created.json()['id']}/secret", headers=bearer(token))
    assert rotated.status_code == 200
    scenario.request_ids = [r.headers["x-request-id"] for r in (wrong, right, tier, rotated)]
    scenario.secrets += [token["access_token"], token["refresh_token"], rotated.json()["secret"]]
    return scenario


def read(client: TestClient, token: dict, **params: str):
    return client.get("/api/v2/admin/audit", params=params, headers=bearer(token))


def events_of(username: str, kind: str | None = None) -> list:
    """The events of an account (actor or subject), oldest first, read through the service."""
    with unit_of_work() as session:
        page = audit.listing(session, audit.filters(username=username, kind=kind), 1, 100)
    return list(reversed(page.events))
