"""Password guessing is refused on every route that checks a password (issue 19, the attacker's
pass): after `credential_failures_limit` failures, 429 without checking, until the window passes."""

from __future__ import annotations

from datetime import timedelta

from tests.factories import make_account
from tests.panel.support import csrf_of


def _sign_in(client, username: str, password: str):  # noqa: ANN001, ANN202
    return client.post(
        "/auth/signin", data={"grant_type": "password", "username": username, "password": password}
    )


def test_the_eleventh_wrong_password_is_refused_without_checking(client, clock):
    account = make_account(password="right-pw")
    for _ in range(10):
        assert _sign_in(client, account.username, "guess").json()["error"] == "invalid_grant"
    refused = _sign_in(client, account.username, "right-pw")  # even the right one: nothing is checked
    assert refused.status_code == 429 and refused.json()["error"] == "too_many_requests"
    assert int(refused.headers["Retry-After"]) > 0
    clock.advance(timedelta(minutes=15, seconds=1))
    assert _sign_in(client, account.username, "right-pw").status_code == 200


def test_right_passwords_count_nothing(client):
    account = make_account(password="right-pw")
    for _ in range(15):
        assert _sign_in(client, account.username, "right-pw").status_code == 200


def test_version_1_credentials_are_guarded_too(client):
    account = make_account(password="right-pw")
    body = {"userName": account.username, "password": "guess", "requestID": "nope"}
    for _ in range(10):
        answer = client.post("/services/ClientRequest/GetTransmissionInfoRequest", json=body)
        assert answer.status_code == 200 and answer.json()["result"] == "AR02"
    answer = client.post(
        "/services/ClientRequest/GetTransmissionInfoRequest", json={**body, "password": "right-pw"}
    )
    assert answer.status_code == 429 and answer.json()["errorCode"] == "0429"


def test_the_panel_sign_in_is_guarded_too(client):
    account = make_account(password="right-pw")

    def attempt(password: str):  # noqa: ANN202
        form = client.get("/panel/login")
        data = {"username": account.username, "password": password, "csrf_token": csrf_of(form.text)}
        return client.post("/panel/login", data=data, follow_redirects=False)

    for _ in range(10):
        assert attempt("guess").status_code == 400
    assert attempt("right-pw").status_code == 429


def test_guesses_across_routes_add_up(client):
    account = make_account(password="right-pw")
    body = {"userName": account.username, "password": "guess", "requestID": "nope"}
    for _ in range(5):
        client.post("/services/ClientRequest/GetTransmissionInfoRequest", json=body)
        _sign_in(client, account.username, "guess")
    assert _sign_in(client, account.username, "right-pw").status_code == 429
