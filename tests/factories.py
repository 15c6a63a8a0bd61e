"""Plain factory functions with valid defaults and unique names."""

from __future__ import annotations

import itertools
import uuid
from dataclasses import replace

from fastapi.testclient import TestClient

from varco.accounts import service
from varco.accounts.models import Account, AccountKind, DelegationStatus
from varco.core.clock import current_clock
from varco.core.db import unit_of_work
from varco.settings import get_settings

_counter = itertools.count(1)
# Valid Italian VAT numbers (check digit computed), so accounts pass validation.
_VATS = ["01234560017", "09876540015", "12345670017", "05555550028", "07111110032"]


def unique_name(prefix: str = "user") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def make_account(*, password: str = "s3cret-pw", **overrides: object) -> Account:
    new = service.NewAccount(
        username=unique_name(),
        password=password,
        vat_code=_VATS[next(_counter) % len(_VATS)],
        pec="user@pec.example.it",
    )
    new = replace(new, **overrides)  # type: ignore[arg-type]
    with unit_of_work() as session:
        return service.create_account(session, new, get_settings(), current_clock())


def make_basic(
    delegate_to: Account | None = None,
    status: DelegationStatus = DelegationStatus.ACTIVE,
    **overrides: object,
) -> Account:
    basic = make_account(kind=AccountKind.BASIC, **overrides)
    if delegate_to is not None:
        with unit_of_work() as session:
            service.create_delegation(
                session,
                service.get(session, basic.id),
                service.get(session, delegate_to.id),
                status,
                current_clock(),
            )
    return basic


def sign_in(client: TestClient, username: str, password: str = "s3cret-pw") -> dict:
    response = client.post(
        "/auth/signin", data={"grant_type": "password", "username": username, "password": password}
    )
    assert response.status_code == 200, response.text
    return response.json()


def bearer(token: str | dict) -> dict[str, str]:
    value = token["access_token"] if isinstance(token, dict) else token
    return {"Authorization": f"Bearer {value}"}
