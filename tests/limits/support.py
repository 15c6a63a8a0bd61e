"""Helpers for limits tests."""

from __future__ import annotations

from datetime import timedelta

from fastapi.testclient import TestClient

from tests.factories import bearer, sign_in
from varco.accounts import service as accounts
from varco.core.clock import current_clock
from varco.core.db import unit_of_work
from varco.limits.decisions import TierDecision
from varco.limits.service import tier_status
from varco.settings import get_settings


class User:
    """A signed-in account whose token is renewed when the test clock has moved past its 30 minutes."""

    def __init__(self, client: TestClient, username: str) -> None:
        self.client, self.username = client, username
        self._token: dict | None = None
        self._issued = current_clock().now()

    @property
    def token(self) -> dict:
        now = current_clock().now()
        if self._token is None or now - self._issued >= timedelta(minutes=25):
            self._token, self._issued = sign_in(self.client, self.username), now
        return self._token


def call(client: TestClient, user: User, path: str = "/auth/userInfo"):
    return client.get(path, headers=bearer(user.token))


def burst(client: TestClient, user: User, n: int) -> list[int]:
    """n authenticated calls back to back; their status codes."""
    headers = bearer(user.token)
    return [client.get("/auth/userInfo", headers=headers).status_code for _ in range(n)]


def bucket(client: TestClient, username: str) -> TierDecision:
    """The paying account's hourly bucket now, read without counting a call."""
    with unit_of_work() as session:
        payer = accounts.paying_account(session, accounts.get_by_username(session, username))
        return tier_status(client.app, payer, get_settings(), current_clock())
