"""A NUL character anywhere a text reaches the database (issue 19, the attacker's pass): a 400 on
both databases, never PostgreSQL's DataError (a 500 and a dropped connection)."""

from __future__ import annotations

import pytest

from tests.search.factories import premium

NUL = "a\x00b"


def _clear_refusal(response) -> None:  # noqa: ANN001
    assert 400 <= response.status_code < 500, (
        response.request.url,
        response.status_code,
        response.text[:300],
    )


def test_sign_in_with_a_nul_in_the_user_name(client):
    response = client.post("/auth/signin", data={"grant_type": "password", "username": NUL, "password": "x"})
    assert response.status_code == 400 and response.json()["error"] in ("invalid_request", "invalid_grant")


def test_version_1_credentials_with_a_nul(client):
    body = {"userName": NUL, "password": "x", "requestID": "1"}
    _clear_refusal(client.post("/services/ClientRequest/GetTransmissionInfoRequest", json=body))


@pytest.mark.parametrize(
    "path",
    [
        "/services/invoice/out/getByFilename?filename=a%00b.xml",
        "/services/invoice/in/getByIdSdi?idSdi=1%002",
        "/services/invoice/out/findByUsername?vatcodeReceiver=a%00b",
        "/api/v2/invoices-out/detail?filename=a%00b",
        "/api/v2/download/a%00b",
        "/api/v2/comfin/a%00b",
        "/services/notification/out/getByFilename?filename=a%00b",
        "/services/invoice/in/sendEsitoCommittente/a%00b",
    ],
)
def test_a_nul_in_a_query_or_path_is_a_clear_refusal(client, path):
    _clear_refusal(client.get(path, headers=premium(client).headers))


def test_a_nul_in_a_json_text_field_is_a_clear_refusal(client):
    headers = premium(client).headers
    _clear_refusal(
        client.post(
            "/api/v2/callbacks", json={"url": "http://127.0.0.1:9/x", "description": NUL}, headers=headers
        )
    )
    _clear_refusal(
        client.post(
            "/services/invoice/in/sendEsitoCommittente",
            json={"filename": NUL, "sdiId": "1", "esito": "EC01"},
            headers=headers,
        )
    )
